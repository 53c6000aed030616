-- Indexing a stored document runs off the request (the DOC_INDEX queue) unless it is small text.
-- A document is pending while indexed_at is NULL. index_attempts counts the tries to index its
-- current version, so one that kills its worker every time (a CPU limit) is given up on and marked
-- failed instead of being retried by the queue and re-enqueued by the sweep for ever.
ALTER TABLE documents ADD COLUMN index_attempts INTEGER NOT NULL DEFAULT 0;
-- The sweep's search for documents left pending (a crash between storing and indexing).
CREATE INDEX documents_index_pending ON documents (modified_at) WHERE deleted_at IS NULL AND indexed_at IS NULL;
