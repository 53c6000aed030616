-- MCP tasks (the tasks extension, src/server/tasks): the handle a client that declares the
-- extension polls for a long call instead of waiting on it. A row is written before its
-- CreateTaskResult is returned, so a tasks/get sent at once finds it. `driver` names what settles
-- it on each read (an index job, a review session, a conformance fixture) and `link` is that
-- driver's JSON (the job it follows). A task belongs to the actor that created it and is kept
-- until expires_at (created_at + its ttlMs); the cron sweeps the expired ones.
CREATE TABLE mcp_tasks (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  actor_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  driver TEXT NOT NULL,
  link TEXT NOT NULL,
  status TEXT NOT NULL,
  status_message TEXT NOT NULL DEFAULT '',
  input_requests TEXT NOT NULL DEFAULT '{}',
  result TEXT,
  error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  ttl_ms INTEGER NOT NULL,
  poll_ms INTEGER NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX mcp_tasks_expiry_idx ON mcp_tasks (expires_at);
