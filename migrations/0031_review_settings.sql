-- Per-repository review settings (review_settings tool; README: Code review). A repository with no
-- row takes the server's defaults: the reference's hotspot and config path lists, no reactive
-- review, nothing published. repo is owner/name lowercased (the same key as code_indexes.repo).
CREATE TABLE review_settings (
  tenant_id TEXT NOT NULL,
  repo TEXT NOT NULL,
  -- JSON arrays of path rules; NULL means the default list.
  hotspots TEXT,
  config_paths TEXT,
  -- 1: pull_request webhooks start a reactive review session for this repository.
  reactive INTEGER NOT NULL DEFAULT 0,
  -- 1: a finished reactive review is published as a pull-request review (needs write access).
  publish INTEGER NOT NULL DEFAULT 0,
  -- Where check_invariants and review_diff read invariants from at the head ref.
  invariants_path TEXT NOT NULL DEFAULT '.review-invariants.yml',
  updated_at TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  PRIMARY KEY (tenant_id, repo)
);
