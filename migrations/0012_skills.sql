-- Skills (seed 001): versioned markdown playbooks by slug, tenant-wide or project-scoped.
CREATE TABLE skills (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  project_id TEXT NOT NULL DEFAULT '',     -- '' for a tenant-wide skill
  slug TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  body TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL DEFAULT 'active',   -- active | archived
  version INTEGER NOT NULL DEFAULT 1,
  content_hash TEXT NOT NULL,              -- sha256 of body
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX skills_scope_slug_idx ON skills (tenant_id, project_id, slug);
