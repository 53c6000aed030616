-- Repositories and their links to projects. The repo tools (repo_register, repo_link) fill these;
-- task_claim's repository scope and project_brief read them already.
CREATE TABLE repositories (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  host TEXT NOT NULL DEFAULT 'github.com',
  owner TEXT NOT NULL,
  name TEXT NOT NULL,
  slug TEXT NOT NULL,                     -- owner/name
  remote_url TEXT NOT NULL,               -- normalized, credentials stripped
  default_branch TEXT NOT NULL DEFAULT 'main',
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX repositories_tenant_url_idx ON repositories (tenant_id, remote_url);
CREATE INDEX repositories_tenant_slug_idx ON repositories (tenant_id, slug);

CREATE TABLE project_repositories (
  tenant_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  repository_id TEXT NOT NULL,
  role TEXT NOT NULL DEFAULT 'primary',   -- primary | dependency | docs
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, project_id, repository_id)
);
CREATE INDEX project_repositories_repo_idx ON project_repositories (tenant_id, repository_id);
