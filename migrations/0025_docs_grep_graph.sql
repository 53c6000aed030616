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
