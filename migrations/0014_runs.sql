-- Runs (seed 001): every burst of work is a node in a tree of runs. A session's run is minted
-- lazily on its first write, run_fork adds children under it, and the run reaper marks runs
-- that stopped heartbeating as abandoned. Every write's activity row names the run it came from.
CREATE TABLE runs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  run_key TEXT NOT NULL,                   -- short human handle, e.g. run-7k3m9q2x
  actor_id TEXT NOT NULL,
  parent_run_id TEXT,
  root_run_id TEXT NOT NULL,               -- its own id for a root run
  kind TEXT NOT NULL DEFAULT 'session',    -- session | subagent
  status TEXT NOT NULL DEFAULT 'running',  -- running | succeeded | failed | cancelled | abandoned
  label TEXT NOT NULL DEFAULT '',
  goal TEXT NOT NULL DEFAULT '',
  agent_role TEXT NOT NULL DEFAULT '',
  run_series_key TEXT,                     -- groups the runs of one recurring job
  session_id TEXT NOT NULL DEFAULT '',
  head_sha TEXT,
  branch TEXT,
  dirty INTEGER,                           -- 0 or 1; NULL until reported
  repository_id TEXT,
  counts TEXT NOT NULL DEFAULT '{}',       -- JSON object of reported counters
  started_at TEXT NOT NULL,
  last_heartbeat_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE UNIQUE INDEX runs_tenant_key_idx ON runs (tenant_id, run_key);
CREATE INDEX runs_tenant_seq_idx ON runs (tenant_id, seq);
CREATE INDEX runs_tenant_actor_idx ON runs (tenant_id, actor_id, seq);
CREATE INDEX runs_tenant_root_idx ON runs (tenant_id, root_run_id, seq);
CREATE INDEX runs_tenant_parent_idx ON runs (tenant_id, parent_run_id);
CREATE INDEX runs_tenant_series_idx ON runs (tenant_id, run_series_key, seq) WHERE run_series_key IS NOT NULL;
-- The reaper's scan: only live runs, oldest heartbeat first.
CREATE INDEX runs_running_heartbeat_idx ON runs (last_heartbeat_at) WHERE status = 'running';

ALTER TABLE activity ADD COLUMN run_id TEXT;
-- activity_log used to keep an explicit run_id in metadata; it moves to the column.
UPDATE activity SET run_id = json_extract(metadata, '$.run_id') WHERE json_valid(metadata) AND json_type(metadata, '$.run_id') = 'text';
CREATE INDEX activity_tenant_run_idx ON activity (tenant_id, run_id, seq);
