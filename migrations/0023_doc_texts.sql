-- Text extracted from a document's bytes for indexing (search, grep, graph), one row per content
-- hash: every path and version with the same bytes shares it. Written after the document's own
-- batch commits; a row that is missing means "not indexed yet", never "no text".
CREATE TABLE doc_texts (
  tenant_id TEXT NOT NULL,
  hash TEXT NOT NULL,                     -- sha256 hex of the document's bytes (documents.hash)
  status TEXT NOT NULL,                   -- 'text' | 'binary' (stored, not text-indexed) | 'failed' (extractor refused)
  extractor TEXT NOT NULL,                -- 'utf8' | 'html' | 'json' | 'pdf' | 'none'
  text TEXT,                              -- the extracted text when status = 'text', else NULL
  text_bytes INTEGER NOT NULL DEFAULT 0,  -- UTF-8 bytes of text
  truncated INTEGER NOT NULL DEFAULT 0,   -- 1 when text was cut at the indexing cap
  note TEXT,                              -- why status is not 'text', or what was cut
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, hash)
);
