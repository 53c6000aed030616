-- Execution state of plan steps (toolset plans; seed 004's execution tracking). A row exists once a
-- step was moved (started, completed, failed, skipped, executed) or linked to a work-ledger task by
-- plan_to_tasks; a step without a row is pending. pending/ready/blocked are derived from depends_on
-- when read, never stored. A linked step's state follows its task (src/plans/progress.ts).
CREATE TABLE plan_steps (
  tenant_id TEXT NOT NULL,
  plan_id TEXT NOT NULL,
  step_number INTEGER NOT NULL,
  -- pending, in_progress, completed, failed or skipped.
  status TEXT NOT NULL DEFAULT 'pending',
  -- Failures retried so far (fail_step with retry).
  retries INTEGER NOT NULL DEFAULT 0,
  started_at TEXT,
  started_by TEXT,
  finished_at TEXT,
  finished_by TEXT,
  notes TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  -- JSON array of paths.
  files_modified TEXT NOT NULL DEFAULT '[]',
  -- What execute_plan committed for the step (repository owner/name, branch, commit SHA).
  repo TEXT,
  branch TEXT,
  commit_sha TEXT,
  -- The work-ledger task plan_to_tasks made for the step.
  task_id TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, plan_id, step_number)
);
CREATE UNIQUE INDEX plan_steps_by_task ON plan_steps (tenant_id, task_id) WHERE task_id IS NOT NULL;
