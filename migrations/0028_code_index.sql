-- Code context (seed 004, part 1): an index of a tenant's GitHub repository at a ref.
--
-- code_indexes holds one row per tenant, repository and ref. Its rows of files, chunks, symbols,
-- references and imports belong to a GENERATION: a full index builds a new generation beside the
-- live one and switches to it in one statement when it is complete, so a search never sees half
-- an index; the old generation is then deleted. A push updates the live generation in place,
-- path by path. job_id is the lock: a job takes it with a compare-and-swap and only one job runs
-- for a repository and ref at a time.
CREATE TABLE code_indexes (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  repo TEXT NOT NULL,                          -- owner/name, lower-case: the key
  owner TEXT NOT NULL,                         -- as GitHub spells it
  name TEXT NOT NULL,
  ref TEXT NOT NULL,                           -- the branch (or tag, or sha) indexed
  generation TEXT NOT NULL DEFAULT '',         -- the live generation ('' until a first index completes)
  commit_sha TEXT NOT NULL DEFAULT '',         -- the commit the live generation reflects
  phase TEXT NOT NULL DEFAULT 'idle',          -- idle | queued | fetching | parsing | embedding | switching | complete | failed | cleared
  job_id TEXT NOT NULL DEFAULT '',             -- the running (or last) job; the workflow instance id
  job_kind TEXT NOT NULL DEFAULT '',           -- full | incremental
  pending_generation TEXT NOT NULL DEFAULT '', -- the generation a full job is building
  target_commit TEXT NOT NULL DEFAULT '',      -- the commit the running job indexes
  fetched INTEGER NOT NULL DEFAULT 0,          -- 1 once the pending generation's files are all stored (a resumed job skips the fetch)
  files_total INTEGER NOT NULL DEFAULT 0,
  files_done INTEGER NOT NULL DEFAULT 0,
  chunks_total INTEGER NOT NULL DEFAULT 0,
  symbols_total INTEGER NOT NULL DEFAULT 0,
  bytes_total INTEGER NOT NULL DEFAULT 0,
  skipped TEXT NOT NULL DEFAULT '{}',          -- JSON: files skipped by reason
  truncated INTEGER NOT NULL DEFAULT 0,        -- a limit stopped the read early
  errors TEXT NOT NULL DEFAULT '[]',           -- JSON: the last errors, newest last
  head_sha TEXT NOT NULL DEFAULT '',           -- the branch head when last seen (freshness)
  head_checked_at TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL DEFAULT '',
  finished_at TEXT NOT NULL DEFAULT '',
  last_indexed_at TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX code_indexes_key ON code_indexes (tenant_id, repo, ref);

CREATE TABLE code_files (
  tenant_id TEXT NOT NULL,
  generation TEXT NOT NULL,
  path TEXT NOT NULL,
  language TEXT NOT NULL,
  size INTEGER NOT NULL,
  lines INTEGER NOT NULL,
  text TEXT NOT NULL,
  parsed INTEGER NOT NULL DEFAULT 0,           -- 1 once its chunks, symbols and imports are written
  syntax INTEGER NOT NULL DEFAULT 0,           -- 1 when a grammar parsed it
  PRIMARY KEY (tenant_id, generation, path)
);
CREATE INDEX code_files_unparsed ON code_files (tenant_id, generation, parsed, path);

-- Chunks carry a scope token for the keyword index: 'g' and the generation's hex, so a MATCH
-- selects one generation's rows inside the FTS index.
CREATE TABLE code_chunks (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,                            -- stable id for vectors (code_chunk:<id>)
  tenant_id TEXT NOT NULL,
  generation TEXT NOT NULL,
  scope TEXT NOT NULL,
  path TEXT NOT NULL,
  language TEXT NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  symbol TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL DEFAULT '',
  text TEXT NOT NULL,
  terms TEXT NOT NULL                          -- identifiers split on camelCase and snake_case, lower-case
);
CREATE UNIQUE INDEX code_chunks_id ON code_chunks (tenant_id, id);
CREATE INDEX code_chunks_path ON code_chunks (tenant_id, generation, path, start_line);

CREATE VIRTUAL TABLE code_chunks_fts USING fts5 (
  scope, path, symbol, terms,
  content = 'code_chunks', content_rowid = 'seq', tokenize = 'unicode61'
);
CREATE TRIGGER code_chunks_ai AFTER INSERT ON code_chunks BEGIN
  INSERT INTO code_chunks_fts (rowid, scope, path, symbol, terms) VALUES (new.seq, new.scope, new.path, new.symbol, new.terms);
END;
CREATE TRIGGER code_chunks_ad AFTER DELETE ON code_chunks BEGIN
  INSERT INTO code_chunks_fts (code_chunks_fts, rowid, scope, path, symbol, terms) VALUES ('delete', old.seq, old.scope, old.path, old.symbol, old.terms);
END;

CREATE TABLE code_symbols (
  tenant_id TEXT NOT NULL,
  generation TEXT NOT NULL,
  name TEXT NOT NULL,
  name_lower TEXT NOT NULL,
  qualified TEXT NOT NULL,
  kind TEXT NOT NULL,
  path TEXT NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  exported INTEGER NOT NULL,
  signature TEXT NOT NULL
);
CREATE INDEX code_symbols_name ON code_symbols (tenant_id, generation, name_lower);
CREATE INDEX code_symbols_path ON code_symbols (tenant_id, generation, path, start_line);

CREATE TABLE code_symbol_refs (
  tenant_id TEXT NOT NULL,
  generation TEXT NOT NULL,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  line INTEGER NOT NULL,
  enclosing TEXT NOT NULL,
  kind TEXT NOT NULL                           -- call | reference
);
CREATE INDEX code_symbol_refs_name ON code_symbol_refs (tenant_id, generation, name);
CREATE INDEX code_symbol_refs_enclosing ON code_symbol_refs (tenant_id, generation, path, enclosing);

CREATE TABLE code_imports (
  tenant_id TEXT NOT NULL,
  generation TEXT NOT NULL,
  path TEXT NOT NULL,
  specifier TEXT NOT NULL,
  target_path TEXT NOT NULL DEFAULT '',        -- the repository file it resolves to, or ''
  line INTEGER NOT NULL,
  names TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX code_imports_path ON code_imports (tenant_id, generation, path);
CREATE INDEX code_imports_target ON code_imports (tenant_id, generation, target_path);

-- Commits for git_commit_retrieval: from pushes the webhook receiver records, and a bounded
-- backfill through the commits API. One row per tenant, repository and sha.
CREATE TABLE code_commits (
  seq INTEGER PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  repo TEXT NOT NULL,
  scope TEXT NOT NULL,                         -- 't' + tenant hex, 'r' + repo hash: one FTS token each
  sha TEXT NOT NULL,
  message TEXT NOT NULL,
  author TEXT NOT NULL,
  date TEXT NOT NULL,
  files_changed TEXT NOT NULL DEFAULT '[]',
  source TEXT NOT NULL                         -- push | backfill
);
CREATE UNIQUE INDEX code_commits_sha ON code_commits (tenant_id, repo, sha);
CREATE INDEX code_commits_date ON code_commits (tenant_id, repo, date);

CREATE VIRTUAL TABLE code_commits_fts USING fts5 (
  scope, message, files_changed,
  content = 'code_commits', content_rowid = 'seq', tokenize = 'porter unicode61'
);
CREATE TRIGGER code_commits_ai AFTER INSERT ON code_commits BEGIN
  INSERT INTO code_commits_fts (rowid, scope, message, files_changed) VALUES (new.seq, new.scope, new.message, new.files_changed);
END;
CREATE TRIGGER code_commits_ad AFTER DELETE ON code_commits BEGIN
  INSERT INTO code_commits_fts (code_commits_fts, rowid, scope, message, files_changed) VALUES ('delete', old.seq, old.scope, old.message, old.files_changed);
END;
