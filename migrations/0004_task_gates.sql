-- The records behind task_update's done-gates. The tools that fill them (handoffs, code refs,
-- attachments) come with the next rooms; the gates read them from now on.

CREATE TABLE handoffs (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  kind TEXT NOT NULL,                      -- handoff | question | review | collab | approval
  title TEXT NOT NULL,
  body TEXT NOT NULL DEFAULT '',
  from_actor_id TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'open',     -- open | claimed | responded | resolved | cancelled
  claimed_by TEXT,
  response TEXT,                           -- JSON
  responded_by TEXT,
  responded_at TEXT,
  resolution TEXT,
  related_task_id TEXT,
  related_project_id TEXT,
  fingerprint TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX handoffs_tenant_task_idx ON handoffs (tenant_id, related_task_id, kind);
CREATE INDEX handoffs_tenant_status_idx ON handoffs (tenant_id, status);

CREATE TABLE handoff_recipients (
  tenant_id TEXT NOT NULL,
  handoff_id TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  acked_at TEXT,
  PRIMARY KEY (tenant_id, handoff_id, actor_id)
);
CREATE INDEX handoff_recipients_actor_idx ON handoff_recipients (tenant_id, actor_id, acked_at);

CREATE TABLE code_refs (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL,
  ref_type TEXT NOT NULL,                  -- commit | branch | pr | tag | compare
  repository_id TEXT,
  sha TEXT,
  branch TEXT,
  pr_number INTEGER,
  pr_url TEXT,
  pr_state TEXT,
  title TEXT NOT NULL DEFAULT '',
  url TEXT,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX code_refs_object_idx ON code_refs (tenant_id, object_type, object_id);

CREATE TABLE attachments (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  object_type TEXT NOT NULL,
  object_id TEXT NOT NULL,
  kind TEXT NOT NULL,                      -- file | link
  url TEXT,
  storage_path TEXT,
  title TEXT NOT NULL DEFAULT '',
  filename TEXT,
  mime_type TEXT,
  size_bytes INTEGER,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX attachments_object_idx ON attachments (tenant_id, object_type, object_id);
