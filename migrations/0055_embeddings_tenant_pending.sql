-- Every semantic and hybrid search counts the tenant's objects of one type still waiting for an
-- embedding. embeddings_pending_idx leads with status, so that count went through the primary key
-- instead and read the status of every one of the tenant's embeddings rows (10,000 documents:
-- about 14 ms of SQLite per search). This index holds only the pending rows, by tenant and type.
CREATE INDEX embeddings_tenant_pending_idx ON embeddings (tenant_id, object_type) WHERE status = 'pending';
