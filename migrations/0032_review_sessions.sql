-- Reactive pull-request review sessions (reactive_review_pr; src/review/reactive.ts). The live plan,
-- step telemetry and alarm are in the session's Durable Object (ReviewSessionDO); this row is the
-- record that outlives it: who started what, where it stands, and the result once it is done.
CREATE TABLE review_sessions (
  tenant_id TEXT NOT NULL,
  -- UUIDv7: the session_id the tools take.
  id TEXT NOT NULL,
  -- owner/name lowercased, the key review_settings uses.
  repo TEXT NOT NULL,
  -- NULL when the session reviews a commit range without a pull request.
  pull_number INTEGER,
  commit_hash TEXT NOT NULL,
  base_ref TEXT NOT NULL,
  -- 'tool' (reactive_review_pr) or 'webhook' (a pull_request delivery).
  source TEXT NOT NULL,
  -- executing, paused, completed, failed or cancelled.
  status TEXT NOT NULL,
  total_steps INTEGER NOT NULL,
  completed_steps INTEGER NOT NULL DEFAULT 0,
  findings_count INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  -- JSON: the merged review, once the merge step has run.
  result TEXT,
  -- JSON: the session as the Durable Object last held it, written when it ends (its storage is dropped later).
  state TEXT,
  review_id INTEGER,
  review_url TEXT,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finished_at TEXT,
  PRIMARY KEY (tenant_id, id)
);
-- A pull request's sessions (newest first), and the active one a new head replaces.
CREATE INDEX review_sessions_pull ON review_sessions (tenant_id, repo, pull_number, created_at);
