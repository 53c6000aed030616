-- Code refs remember the run they were recorded in, for code_ref_query's run filter.
ALTER TABLE code_refs ADD COLUMN run_id TEXT;
CREATE INDEX code_refs_repo_idx ON code_refs (tenant_id, repository_id, created_at);
