-- Seed 001 (work ledger), first rooms: actors' directory fields, projects, tasks, the
-- dependency graph, and the activity log every write appends to.

ALTER TABLE actors ADD COLUMN group_name TEXT NOT NULL DEFAULT '';
ALTER TABLE actors ADD COLUMN role TEXT NOT NULL DEFAULT '';
ALTER TABLE actors ADD COLUMN capabilities TEXT NOT NULL DEFAULT '[]';
ALTER TABLE actors ADD COLUMN updated_at TEXT;
-- `name` is the actor's external_ref (unique per tenant; the key command's --actor).

CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  key TEXT NOT NULL,
  title TEXT NOT NULL,
  summary TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'active',
  parent_project_id TEXT,
  owner_actor_id TEXT,
  start_on TEXT,
  target_on TEXT,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT,
  task_seq INTEGER NOT NULL DEFAULT 0    -- last task number handed out in this project
);
-- A key is unique per tenant, case-insensitively, among live projects.
CREATE UNIQUE INDEX projects_tenant_key_live_idx ON projects (tenant_id, key COLLATE NOCASE) WHERE deleted_at IS NULL;
CREATE INDEX projects_tenant_status_idx ON projects (tenant_id, status);

CREATE TABLE tasks (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  seq INTEGER NOT NULL,                 -- per-project number: KEY-seq
  title TEXT NOT NULL,
  body TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'todo',
  priority INTEGER NOT NULL DEFAULT 2,  -- 0 (highest) … 4
  assignee_actor_id TEXT,
  reviewer_actor_id TEXT,
  due_on TEXT,
  parent_task_id TEXT,
  labels TEXT NOT NULL DEFAULT '[]',
  acceptance_criteria TEXT NOT NULL DEFAULT '[]',
  requires_evidence INTEGER NOT NULL DEFAULT 0,
  lease_expires_at TEXT,
  claimed_at TEXT,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  done_at TEXT
);
CREATE UNIQUE INDEX tasks_project_seq_idx ON tasks (tenant_id, project_id, seq);
CREATE INDEX tasks_tenant_project_status_idx ON tasks (tenant_id, project_id, status, priority);
CREATE INDEX tasks_tenant_assignee_idx ON tasks (tenant_id, assignee_actor_id, status);
CREATE INDEX tasks_tenant_parent_idx ON tasks (tenant_id, parent_task_id);
CREATE INDEX tasks_lease_idx ON tasks (lease_expires_at) WHERE lease_expires_at IS NOT NULL;

CREATE TABLE task_deps (
  tenant_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  depends_on_task_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, task_id, depends_on_task_id)
);
CREATE INDEX task_deps_reverse_idx ON task_deps (tenant_id, depends_on_task_id);

-- Append-only building logbook; every write adds its row in the same D1 batch.
CREATE TABLE activity (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  at TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  verb TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL,
  project_id TEXT,
  summary TEXT NOT NULL DEFAULT '',
  severity TEXT NOT NULL DEFAULT 'info',
  session_id TEXT NOT NULL DEFAULT '',
  metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX activity_tenant_seq_idx ON activity (tenant_id, seq);
CREATE INDEX activity_tenant_project_idx ON activity (tenant_id, project_id, seq);
CREATE INDEX activity_tenant_object_idx ON activity (tenant_id, object_type, object_id, seq);
CREATE INDEX activity_tenant_actor_idx ON activity (tenant_id, actor_id, seq);
