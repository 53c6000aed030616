-- Seed 000: the change ledger. `seq` is the append order (and the FTS rowid);
-- `id` is the public UUIDv7.
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  entity_type TEXT NOT NULL DEFAULT 'other',
  entity_path TEXT NOT NULL,
  change_type TEXT NOT NULL,
  diff TEXT NOT NULL DEFAULT '',
  reasoning TEXT NOT NULL DEFAULT '',
  agent TEXT NOT NULL DEFAULT '',
  actor_id TEXT NOT NULL DEFAULT '',
  session_id TEXT NOT NULL DEFAULT '',
  git_commit TEXT NOT NULL DEFAULT '',
  project TEXT NOT NULL DEFAULT '',
  changeset_id TEXT NOT NULL DEFAULT '',
  metadata TEXT NOT NULL DEFAULT '{}',
  revisit_after TEXT NOT NULL DEFAULT '',
  revisit_due TEXT NOT NULL DEFAULT '',   -- revisit_after resolved to an instant ('' when none)
  expires_when TEXT NOT NULL DEFAULT '',
  stale_when TEXT NOT NULL DEFAULT '',
  supersedes TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_tenant_seq_idx ON events (tenant_id, seq);
CREATE INDEX events_tenant_path_idx ON events (tenant_id, entity_path);
-- Backs the case-insensitive dotted-prefix half of entity matching.
CREATE INDEX events_tenant_path_nocase_idx ON events (tenant_id, entity_path COLLATE NOCASE);
CREATE INDEX events_tenant_time_idx ON events (tenant_id, timestamp);
CREATE INDEX events_tenant_changeset_idx ON events (tenant_id, changeset_id);
CREATE INDEX events_tenant_project_idx ON events (tenant_id, project);
CREATE INDEX events_tenant_due_idx ON events (tenant_id, revisit_due) WHERE revisit_due <> '';
CREATE INDEX events_tenant_supersedes_idx ON events (tenant_id, supersedes) WHERE supersedes <> '';

-- Trigram FTS makes substring search index-backed: a quoted phrase of three or more
-- characters matches exactly the rows containing that substring (ASCII case folded).
CREATE VIRTUAL TABLE events_fts USING fts5 (
  entity_path, diff, reasoning, agent,
  content = 'events', content_rowid = 'seq', tokenize = 'trigram'
);
CREATE TRIGGER events_fts_ai AFTER INSERT ON events BEGIN
  INSERT INTO events_fts (rowid, entity_path, diff, reasoning, agent)
  VALUES (new.seq, new.entity_path, new.diff, new.reasoning, new.agent);
END;
CREATE TRIGGER events_fts_ad AFTER DELETE ON events BEGIN
  INSERT INTO events_fts (events_fts, rowid, entity_path, diff, reasoning, agent)
  VALUES ('delete', old.seq, old.entity_path, old.diff, old.reasoning, old.agent);
END;
CREATE TRIGGER events_fts_au AFTER UPDATE ON events BEGIN
  INSERT INTO events_fts (events_fts, rowid, entity_path, diff, reasoning, agent)
  VALUES ('delete', old.seq, old.entity_path, old.diff, old.reasoning, old.agent);
  INSERT INTO events_fts (rowid, entity_path, diff, reasoning, agent)
  VALUES (new.seq, new.entity_path, new.diff, new.reasoning, new.agent);
END;

-- Every change-ledger tool call records a row: the "queried since the decision" signal
-- of stale_decisions reads it.
CREATE TABLE tool_calls (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  entity_path TEXT NOT NULL DEFAULT '',
  success INTEGER NOT NULL DEFAULT 1,
  error_msg TEXT NOT NULL DEFAULT '',
  actor_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX tool_calls_tenant_path_idx ON tool_calls (tenant_id, entity_path, timestamp);
