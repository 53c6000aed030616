-- Plans (toolset plans; seed 004's persistence tools). plans holds one row per plan with what lists
-- and lookups need; plan_versions holds every version of the plan document, append-only: an
-- overwrite or a rollback adds a version, nothing rewrites one. Every query filters by tenant_id.
CREATE TABLE plans (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  -- load_plan matches names case-insensitively.
  name_lower TEXT NOT NULL,
  goal TEXT NOT NULL,
  status TEXT NOT NULL,
  -- JSON array of strings.
  tags TEXT NOT NULL DEFAULT '[]',
  current_version INTEGER NOT NULL,
  step_count INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX plans_by_name ON plans (tenant_id, name_lower, updated_at);
CREATE INDEX plans_by_updated ON plans (tenant_id, updated_at, id);

CREATE TABLE plan_versions (
  tenant_id TEXT NOT NULL,
  plan_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  -- The plan document (JSON) as load_plan answers it at this version.
  plan TEXT NOT NULL,
  -- created, modified or rolled_back.
  change_type TEXT NOT NULL,
  change_summary TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  PRIMARY KEY (tenant_id, plan_id, version)
);
