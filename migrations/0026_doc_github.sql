-- Document store (seed 003) and GitHub: where imported documents came from, and the repository
-- paths a tenant watches so pushes re-import them.

-- One row per store path last written by a GitHub import. It lets a re-import skip a file whose
-- blob is unchanged without fetching it, and lets a watch delete the documents of files a push
-- removed. A row only speaks for the live document while that document's hash is still doc_hash:
-- a later inline add at the same path makes the row stale, and stale rows are never acted on.
CREATE TABLE doc_github_sources (
  tenant_id TEXT NOT NULL,
  path TEXT NOT NULL,                     -- the document's store path (normalized)
  repo_key TEXT NOT NULL,                 -- owner/name, lowercased: GitHub names are case-insensitive
  repo_path TEXT NOT NULL,                -- the file's path in the repository
  ref TEXT NOT NULL,                      -- the ref the import was asked for (branch, tag or sha)
  commit_sha TEXT NOT NULL,
  blob_sha TEXT NOT NULL,                 -- git blob id of the imported content
  doc_hash TEXT NOT NULL,                 -- sha256 of the stored bytes (documents.hash)
  imported_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, path)
);
CREATE INDEX doc_github_sources_repo ON doc_github_sources (tenant_id, repo_key, repo_path);

-- A watch: pushes to `ref` of the repository re-import the files under repo_path into the store
-- under prefix, and delete the documents of files the push removed.
CREATE TABLE doc_watches (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,                       -- UUIDv7
  session TEXT NOT NULL,                  -- the docs session it belongs to; '' for none
  repo TEXT NOT NULL,                     -- owner/name as resolved, for display and requests
  repo_key TEXT NOT NULL,                 -- lowercased owner/name, matched against push payloads
  repo_path TEXT NOT NULL,                -- '' for the repository root
  ref TEXT NOT NULL,                      -- a branch; '' follows the repository's default branch
  prefix TEXT NOT NULL,                   -- store folder the files land in; '' for the store root
  created_by TEXT NOT NULL,               -- actor id
  created_at TEXT NOT NULL,
  last_commit TEXT,                       -- the commit the last push sync read
  last_synced_at TEXT,
  last_note TEXT,                         -- what the last sync did, or why it stopped
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX doc_watches_target ON doc_watches (tenant_id, session, repo_key, repo_path, ref, prefix);
CREATE INDEX doc_watches_repo ON doc_watches (tenant_id, repo_key);
