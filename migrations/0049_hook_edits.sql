-- Files an agent edited, as its client's PostToolUse hook reported them (src/server/hooks): one row
-- per (tenant, actor, hook session, path), the latest edit's time. PreCompact and Stop remind the
-- agent of the ones with no change event logged since, so what it did is recorded before it forgets.
CREATE TABLE hook_edits (
  tenant_id TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  path TEXT NOT NULL,
  tool TEXT NOT NULL,
  edited_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, actor_id, session_id, path)
);
CREATE INDEX hook_edits_age_idx ON hook_edits (edited_at);
