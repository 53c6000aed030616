-- The pull request carries its own story (issue: coordination). A repository opts in with
-- review_settings pr_story; then opening, reopening or pushing to a pull request there makes the
-- server write one comment on it (the task it delivers, the decisions and change events on its
-- files, reverted prior attempts, reservations and claims, the ledger chain's check) and edit that
-- same comment on every later event. The comment's id is kept per (repository, pull request) so a
-- re-delivered webhook edits rather than posts; comment_id 0 is a claim by a delivery that is
-- posting right now (claimed_at), or an id that was lost (the body's marker finds it again).
ALTER TABLE review_settings ADD COLUMN pr_story INTEGER NOT NULL DEFAULT 0;

CREATE TABLE pr_story_comments (
  tenant_id TEXT NOT NULL,
  repository_id TEXT NOT NULL,
  pr_number INTEGER NOT NULL,
  comment_id INTEGER NOT NULL DEFAULT 0,
  comment_url TEXT NOT NULL DEFAULT '',
  -- sha256 of the body last written: an unchanged story is not written again.
  body_hash TEXT NOT NULL DEFAULT '',
  head_sha TEXT NOT NULL DEFAULT '',
  claimed_at TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, repository_id, pr_number)
);

-- provenance walks from commits to what they explain and what ran on them.
CREATE INDEX events_tenant_commit_idx ON events (tenant_id, git_commit) WHERE git_commit <> '';
CREATE INDEX git_commits_tenant_sha_idx ON git_commits (tenant_id, sha);
CREATE INDEX git_commits_tenant_ref_idx ON git_commits (tenant_id, repository_id, ref, committed_at);
CREATE INDEX code_refs_tenant_sha_idx ON code_refs (tenant_id, sha) WHERE sha IS NOT NULL;
CREATE INDEX review_sessions_commit_idx ON review_sessions (tenant_id, commit_hash);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (tenant_id, event, received_at);
