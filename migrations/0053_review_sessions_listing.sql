-- list_review_sessions pages reactive review sessions newest first (created_at, then id): all of a
-- tenant's, or one repository's (a pull request's among them). Without these indexes a page would
-- sort every session the tenant or repository has.
CREATE INDEX review_sessions_created_idx ON review_sessions (tenant_id, created_at, id);
CREATE INDEX review_sessions_repo_created_idx ON review_sessions (tenant_id, repo, created_at, id);
