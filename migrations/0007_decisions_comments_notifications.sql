-- Seed 001, second rooms: decisions (append-only), comments, notifications, and the content hash
-- that de-duplicates activity_log entries.

CREATE TABLE decisions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  project_id TEXT,
  title TEXT NOT NULL,
  choice TEXT NOT NULL,
  context TEXT NOT NULL DEFAULT '',
  rationale TEXT NOT NULL DEFAULT '',
  options TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL DEFAULT 'accepted',   -- proposed | accepted | rejected
  supersedes_decision_id TEXT,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  status_changed_at TEXT NOT NULL
);
CREATE INDEX decisions_tenant_seq_idx ON decisions (tenant_id, seq);
CREATE INDEX decisions_tenant_project_idx ON decisions (tenant_id, project_id, seq);
CREATE INDEX decisions_tenant_supersedes_idx ON decisions (tenant_id, supersedes_decision_id);

-- Content is append-only: no tool updates these columns, and the triggers refuse it outright.
CREATE TRIGGER decisions_append_only BEFORE UPDATE OF title, choice, context, rationale, options, supersedes_decision_id, created_by, created_at, project_id ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions are append-only: log a new decision that supersedes this one'); END;
CREATE TRIGGER decisions_no_delete BEFORE DELETE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions are append-only'); END;

CREATE VIRTUAL TABLE decisions_fts USING fts5 (
  title, choice, context, rationale,
  content = 'decisions', content_rowid = 'seq', tokenize = 'porter unicode61'
);
CREATE TRIGGER decisions_fts_ai AFTER INSERT ON decisions BEGIN
  INSERT INTO decisions_fts (rowid, title, choice, context, rationale) VALUES (new.seq, new.title, new.choice, new.context, new.rationale);
END;

CREATE TABLE comments (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL,
  body TEXT NOT NULL,
  author_actor_id TEXT NOT NULL,
  parent_comment_id TEXT,
  mentions TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL
);
CREATE INDEX comments_object_idx ON comments (tenant_id, object_type, object_id, seq);

CREATE TABLE notifications (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  actor_id TEXT NOT NULL,                 -- the recipient
  kind TEXT NOT NULL,                     -- mention | handoff | review | ...
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL,
  summary TEXT NOT NULL,
  from_actor_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  read_at TEXT
);
CREATE INDEX notifications_actor_idx ON notifications (tenant_id, actor_id, seq);

ALTER TABLE activity ADD COLUMN content_hash TEXT;
CREATE UNIQUE INDEX activity_content_hash_idx ON activity (tenant_id, content_hash) WHERE content_hash IS NOT NULL;
