-- Execution state of plan steps (toolset plans; seed 004's execution tracking). A row exists once a
-- step was moved (started, completed, failed, skipped, executed); a step without a row is pending.
-- pending/ready/blocked are derived from depends_on when read, never stored. A step linked to a
-- work-ledger task (plan_step_tasks) follows its task's state (src/plans/progress.ts).
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
  -- Bumped by every write: the compare-and-swap token of step moves.
  rev INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, plan_id, step_number)
);

-- The work-ledger task plan_to_tasks made for a step. A plain insert in the same batch as the
-- tasks: a step linked twice (two racing calls) fails the whole batch, so no task is made twice.
CREATE TABLE plan_step_tasks (
  tenant_id TEXT NOT NULL,
  plan_id TEXT NOT NULL,
  step_number INTEGER NOT NULL,
  task_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, plan_id, step_number)
);
CREATE UNIQUE INDEX plan_step_tasks_by_task ON plan_step_tasks (tenant_id, task_id);
