-- Handoff fields for the handoff tools, and the index that keeps one live handoff per fingerprint.
ALTER TABLE handoffs ADD COLUMN options TEXT NOT NULL DEFAULT '[]';
ALTER TABLE handoffs ADD COLUMN allow_free_text INTEGER NOT NULL DEFAULT 1;
ALTER TABLE handoffs ADD COLUMN due_at TEXT;
ALTER TABLE handoffs ADD COLUMN resolved_at TEXT;
ALTER TABLE handoffs ADD COLUMN resolution_note TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX handoffs_live_fingerprint_idx ON handoffs (tenant_id, fingerprint)
  WHERE fingerprint IS NOT NULL AND status IN ('open', 'claimed');
CREATE INDEX handoffs_tenant_from_idx ON handoffs (tenant_id, from_actor_id, created_at);
