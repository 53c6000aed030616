-- Seed 001 knowledge room, and the semantic layer's bookkeeping shared by every embedded object.

CREATE TABLE knowledge_notes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  project_id TEXT,
  kind TEXT NOT NULL DEFAULT 'note',       -- note | runbook | finding | snippet
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',          -- JSON array of lower-case tags
  version INTEGER NOT NULL DEFAULT 1,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX knowledge_tenant_seq_idx ON knowledge_notes (tenant_id, seq);
CREATE INDEX knowledge_tenant_project_idx ON knowledge_notes (tenant_id, project_id, seq);

-- Words (porter-stemmed) for ranked search; the tag list is indexed as text so a tag is a word.
CREATE VIRTUAL TABLE knowledge_fts USING fts5 (
  title, body, tags,
  content = 'knowledge_notes', content_rowid = 'seq', tokenize = 'porter unicode61'
);
-- Trigrams over title and body: the substring fallback when words match nothing.
CREATE VIRTUAL TABLE knowledge_fts_trgm USING fts5 (
  title, body,
  content = 'knowledge_notes', content_rowid = 'seq', tokenize = 'trigram'
);
CREATE TRIGGER knowledge_fts_ai AFTER INSERT ON knowledge_notes BEGIN
  INSERT INTO knowledge_fts (rowid, title, body, tags) VALUES (new.seq, new.title, new.body, new.tags);
  INSERT INTO knowledge_fts_trgm (rowid, title, body) VALUES (new.seq, new.title, new.body);
END;
CREATE TRIGGER knowledge_fts_au AFTER UPDATE OF title, body, tags ON knowledge_notes BEGIN
  INSERT INTO knowledge_fts (knowledge_fts, rowid, title, body, tags) VALUES ('delete', old.seq, old.title, old.body, old.tags);
  INSERT INTO knowledge_fts (rowid, title, body, tags) VALUES (new.seq, new.title, new.body, new.tags);
  INSERT INTO knowledge_fts_trgm (knowledge_fts_trgm, rowid, title, body) VALUES ('delete', old.seq, old.title, old.body);
  INSERT INTO knowledge_fts_trgm (rowid, title, body) VALUES (new.seq, new.title, new.body);
END;

-- One row per embedded object: what text (by hash) it should have a vector for, and whether it
-- has one. Writes insert 'pending' in the same batch as the object, so an embedding outage
-- never loses work: the scheduled backfill picks up whatever is still pending.
CREATE TABLE embeddings (
  tenant_id TEXT NOT NULL,
  object_type TEXT NOT NULL,               -- note | decision
  object_id TEXT NOT NULL,
  content_hash TEXT NOT NULL,              -- sha256 of the text to embed
  status TEXT NOT NULL DEFAULT 'pending',  -- pending | ready
  model TEXT NOT NULL DEFAULT '',          -- the embedder that produced the current vector
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, object_type, object_id)
);
CREATE INDEX embeddings_pending_idx ON embeddings (status, attempts, updated_at) WHERE status = 'pending';

-- The local vector index (used when no Vectorize binding is configured): one namespace per
-- tenant, vectors as base64 text of an int8-quantized vector (see vector-index.ts), metadata as
-- JSON for filtering.
CREATE TABLE local_vectors (
  namespace TEXT NOT NULL,
  id TEXT NOT NULL,
  vector TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (namespace, id)
) WITHOUT ROWID;
