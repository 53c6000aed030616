-- grep (seed 003): a trigram index over extracted text, used only to narrow which documents a
-- pattern's regex must scan. It is external-content over doc_texts and kept in step by triggers,
-- so whoever writes doc_texts needs to know nothing about it. The trigram tokenizer folds case,
-- which keeps one index sound for both case-sensitive and case-insensitive patterns: the regex
-- still decides every match; the index only rules documents out.
CREATE VIRTUAL TABLE doc_texts_fts USING fts5(text, content = 'doc_texts', content_rowid = 'rowid', tokenize = 'trigram');

CREATE TRIGGER doc_texts_fts_insert AFTER INSERT ON doc_texts WHEN new.status = 'text' AND new.text IS NOT NULL BEGIN
  INSERT INTO doc_texts_fts (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER doc_texts_fts_delete AFTER DELETE ON doc_texts WHEN old.status = 'text' AND old.text IS NOT NULL BEGIN
  INSERT INTO doc_texts_fts (doc_texts_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER doc_texts_fts_update AFTER UPDATE OF status, text ON doc_texts BEGIN
  INSERT INTO doc_texts_fts (doc_texts_fts, rowid, text) SELECT 'delete', old.rowid, old.text WHERE old.status = 'text' AND old.text IS NOT NULL;
  INSERT INTO doc_texts_fts (rowid, text) SELECT new.rowid, new.text WHERE new.status = 'text' AND new.text IS NOT NULL;
END;

-- The knowledge graph (seed 003 `graph`): references extracted from a document's text when it is
-- added. One logical edge (src_path, src_hash, seq) may name several candidate paths (alt 0, 1,
-- …; e.g. a Python import is a module beside the file or under the root); reads resolve them, in
-- order and with the scheme's suffixes, against the documents live at that moment, falling back
-- to node_key. Rows count only while src_path is live with src_hash.
CREATE TABLE doc_graph_edges (
  tenant_id TEXT NOT NULL,
  src_path TEXT NOT NULL,
  src_hash TEXT NOT NULL,                 -- the content the edge was extracted from
  seq INTEGER NOT NULL,                   -- the reference's number within that content
  alt INTEGER NOT NULL,                   -- 0, 1, …: candidate targets in the order they are tried
  relation TEXT NOT NULL,                 -- LINKS_TO | IMPORTS | DEFINES
  target TEXT,                            -- a store path the reference may name, before the scheme's suffixes; NULL when it names none
  scheme TEXT,                            -- which suffixes target may omit (exact, md, js, py, rs, rb, jvm); NULL with target
  node_key TEXT NOT NULL,                 -- the node when no target is live: module:…, symbol:…, url:…, unresolved:…
  node_type TEXT NOT NULL,                -- module | symbol | url | unresolved
  label TEXT NOT NULL,
  kind TEXT,                              -- a symbol's kind: function, class, interface, type, const, …
  PRIMARY KEY (tenant_id, src_path, src_hash, seq, alt)
);
CREATE INDEX doc_graph_edges_target ON doc_graph_edges (tenant_id, target) WHERE target IS NOT NULL;
CREATE INDEX doc_graph_edges_node ON doc_graph_edges (tenant_id, node_key);
CREATE INDEX doc_graph_edges_type ON doc_graph_edges (tenant_id, node_type);
