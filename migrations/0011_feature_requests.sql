-- Product feedback filed by agents about this server, for its operators (seed 001 "Feedback").
CREATE TABLE feature_requests (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL,                       -- bug | friction | capability | docs
  severity TEXT NOT NULL DEFAULT 'medium',  -- low | medium | high
  tool_name TEXT NOT NULL DEFAULT '',
  error_code TEXT NOT NULL DEFAULT '',
  context TEXT NOT NULL DEFAULT '',
  fingerprint TEXT,
  status TEXT NOT NULL DEFAULT 'open',      -- open | accepted | in_progress | shipped | declined
  resolution_note TEXT NOT NULL DEFAULT '',
  occurrences INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX feature_requests_tenant_idx ON feature_requests (tenant_id, seq);
CREATE UNIQUE INDEX feature_requests_live_fingerprint_idx ON feature_requests (tenant_id, fingerprint)
  WHERE fingerprint IS NOT NULL AND status IN ('open', 'accepted', 'in_progress');
