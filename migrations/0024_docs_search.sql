-- Document store search (seed 003 `search`): a keyword index over the live documents, and a
-- vocabulary for fuzzy matching.
--
-- doc_search holds one row per LIVE document version: its path, a title (the first markdown
-- heading, else the file name) and its extracted text (doc_texts, capped at 1 MiB), so a search
-- finds documents by content and by path or name. Binary documents get a row with an empty body:
-- they are found by path and name only. The row is written by indexText after the document's own
-- batch commits, and removed by the trigger below in the same statement that closes the version
-- (replaced or deleted), so a closed version can never be a search result.
CREATE TABLE doc_search (
  seq INTEGER PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  tenant_key TEXT NOT NULL,               -- the tenant id as one FTS token ('t' + its letters and digits)
  doc_id TEXT NOT NULL,                   -- documents.id of the live version
  hash TEXT NOT NULL,                     -- documents.hash
  path TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX doc_search_doc ON doc_search (tenant_id, doc_id);
CREATE INDEX doc_search_hash ON doc_search (tenant_id, hash);

-- Words, porter-stemmed, for bm25 ranking; external content, so the text is stored once more
-- (not twice) and the triggers keep the index in step with doc_search. The tenant is a token
-- of its own column, so a query's MATCH selects one tenant's rows inside the index instead of
-- ranking every tenant's matches and joining each to doc_search to drop the others.
CREATE VIRTUAL TABLE doc_search_fts USING fts5 (
  tenant_key, path, title, body,
  content = 'doc_search', content_rowid = 'seq', tokenize = 'porter unicode61'
);
CREATE TRIGGER doc_search_ai AFTER INSERT ON doc_search BEGIN
  INSERT INTO doc_search_fts (rowid, tenant_key, path, title, body) VALUES (new.seq, new.tenant_key, new.path, new.title, new.body);
END;
CREATE TRIGGER doc_search_ad AFTER DELETE ON doc_search BEGIN
  INSERT INTO doc_search_fts (doc_search_fts, rowid, tenant_key, path, title, body) VALUES ('delete', old.seq, old.tenant_key, old.path, old.title, old.body);
END;
CREATE TRIGGER doc_search_au AFTER UPDATE OF path, title, body ON doc_search BEGIN
  INSERT INTO doc_search_fts (doc_search_fts, rowid, tenant_key, path, title, body) VALUES ('delete', old.seq, old.tenant_key, old.path, old.title, old.body);
  INSERT INTO doc_search_fts (rowid, tenant_key, path, title, body) VALUES (new.seq, new.tenant_key, new.path, new.title, new.body);
END;

-- A version leaves the index the moment it is closed or removed, whichever code closes it.
CREATE TRIGGER documents_search_closed AFTER UPDATE OF deleted_at ON documents
WHEN new.deleted_at IS NOT NULL BEGIN
  DELETE FROM doc_search WHERE tenant_id = new.tenant_id AND doc_id = new.id;
END;
CREATE TRIGGER documents_search_removed AFTER DELETE ON documents BEGIN
  DELETE FROM doc_search WHERE tenant_id = old.tenant_id AND doc_id = old.id;
END;
CREATE TRIGGER documents_search_moved AFTER UPDATE OF path ON documents
WHEN new.deleted_at IS NULL BEGIN
  UPDATE doc_search SET path = new.path WHERE tenant_id = new.tenant_id AND doc_id = new.id AND path IS NOT new.path;
END;

-- The tenant's vocabulary: lower-cased words (3 to 40 characters) of indexed text, paths and
-- titles. Fuzzy search looks up words sharing trigrams with a misspelt query word here, then
-- searches doc_search_fts for the close ones. Words are only added: a word no live document
-- holds any more just matches nothing.
CREATE TABLE doc_terms (
  seq INTEGER PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  term TEXT NOT NULL
);
CREATE UNIQUE INDEX doc_terms_term ON doc_terms (tenant_id, term);
CREATE VIRTUAL TABLE doc_terms_fts USING fts5 (
  term,
  content = 'doc_terms', content_rowid = 'seq', tokenize = 'trigram'
);
CREATE TRIGGER doc_terms_ai AFTER INSERT ON doc_terms BEGIN
  INSERT INTO doc_terms_fts (rowid, term) VALUES (new.seq, new.term);
END;
CREATE TRIGGER doc_terms_ad AFTER DELETE ON doc_terms BEGIN
  INSERT INTO doc_terms_fts (doc_terms_fts, rowid, term) VALUES ('delete', old.seq, old.term);
END;
