-- Document store (seed 003, YAMS): content-addressed bytes in R2, split into content-defined
-- chunks; metadata here. Every reference to a chunk is a row that can be found by query, never a
-- counter: the orphan collector asks "does any live document or snapshot reach this chunk?" and a
-- lost update cannot make the answer wrong.

-- One row per chunk object stored at R2 key <tenant_id>/docs/chunks/<hash>. A row exists only
-- after its object was written, and is deleted only after its object was.
CREATE TABLE doc_chunks (
  tenant_id TEXT NOT NULL,
  hash TEXT NOT NULL,                     -- sha256 hex of the chunk's bytes
  size INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  touched_at TEXT NOT NULL,               -- last time a put relied on this chunk; the collector's grace period runs from it
  gc_claimed_at TEXT,                     -- set by the collector while it deletes the object; a put never relies on a claimed chunk
  PRIMARY KEY (tenant_id, hash)
);
CREATE INDEX doc_chunks_gc ON doc_chunks (tenant_id, touched_at);

-- Document content (by sha256 of the whole bytes) -> its chunks in order.
CREATE TABLE document_chunks (
  tenant_id TEXT NOT NULL,
  doc_hash TEXT NOT NULL,
  seq INTEGER NOT NULL,
  chunk_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, doc_hash, seq)
);
CREATE INDEX document_chunks_chunk ON document_chunks (tenant_id, chunk_hash);

-- Document versions. The live version of a path has deleted_at NULL; re-adding a path closes the
-- previous version (deleted_at set) and inserts a new one, so the history keeps its hashes.
CREATE TABLE documents (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,                       -- UUIDv7
  path TEXT NOT NULL,                     -- normalized: forward slashes, no '.', '..' or empty segments
  name TEXT NOT NULL,                     -- last path segment
  hash TEXT NOT NULL,                     -- sha256 hex of the whole bytes
  size INTEGER NOT NULL,
  mime_type TEXT NOT NULL,
  collection TEXT,
  tags TEXT NOT NULL DEFAULT '[]',        -- JSON array of strings
  metadata TEXT NOT NULL DEFAULT '{}',    -- JSON object
  created_at TEXT NOT NULL,               -- first version of this path
  modified_at TEXT NOT NULL,              -- this version
  indexed_at TEXT,                        -- set when text indexing lands
  deleted_at TEXT,
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX documents_live_path ON documents (tenant_id, path) WHERE deleted_at IS NULL;
CREATE INDEX documents_hash ON documents (tenant_id, hash);
CREATE INDEX documents_collection ON documents (tenant_id, collection) WHERE collection IS NOT NULL;

CREATE TABLE doc_collections (
  tenant_id TEXT NOT NULL,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, name)
);

-- A snapshot is immutable once written: entries are inserted in the batch that creates it and
-- never updated.
CREATE TABLE doc_snapshots (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,                       -- UUIDv7
  label TEXT,
  collection TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX doc_snapshots_label ON doc_snapshots (tenant_id, label);

CREATE TABLE doc_snapshot_entries (
  tenant_id TEXT NOT NULL,
  snapshot_id TEXT NOT NULL,
  path TEXT NOT NULL,
  doc_hash TEXT NOT NULL,
  size INTEGER NOT NULL,
  mime_type TEXT NOT NULL,
  PRIMARY KEY (tenant_id, snapshot_id, path)
);
CREATE INDEX doc_snapshot_entries_hash ON doc_snapshot_entries (tenant_id, doc_hash);
