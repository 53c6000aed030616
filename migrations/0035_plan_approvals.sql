-- Approval requests for plans (toolset plans; seed 004's request_approval and respond_approval).
-- A request is for one version of a plan, whole or some of its steps; it reaches its approvers as a
-- handoff of kind approval (handoff_id), and its answer closes that handoff. Every query filters
-- by tenant_id.
CREATE TABLE plan_approvals (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  plan_id TEXT NOT NULL,
  -- The plan version the request is for: an approval of an older version does not approve the plan.
  plan_version INTEGER NOT NULL,
  -- JSON array of step numbers, ascending; [] is the whole plan.
  step_numbers TEXT NOT NULL DEFAULT '[]',
  -- JSON array of the actor ids that may answer.
  approver_ids TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'modification_requested')),
  summary TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  requested_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  due_at TEXT,
  responded_by TEXT,
  responded_at TEXT,
  comment TEXT,
  modifications TEXT,
  handoff_id TEXT NOT NULL,
  -- plan id, version and steps: one pending request per fingerprint (a repeated request returns it).
  fingerprint TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX plan_approvals_pending_idx ON plan_approvals (tenant_id, fingerprint) WHERE status = 'pending';
CREATE INDEX plan_approvals_by_plan ON plan_approvals (tenant_id, plan_id, created_at, id);
CREATE INDEX plan_approvals_by_created ON plan_approvals (tenant_id, created_at, id);
