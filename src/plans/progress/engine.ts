/**
 * Where a plan's steps stand: the stored moves (plan_steps), the tasks plan_to_tasks linked to
 * steps, and what both imply through depends_on. Stored: in_progress, completed, failed, skipped
 * (and pending after a retry). Derived on every read, so readiness is always recomputed from the
 * current version's depends_on: ready (every dependency completed or skipped), blocked (a
 * dependency failed or is blocked), pending (waiting on a dependency). A linked step's state is
 * its task's: the task is where agents claim and finish the work.
 */
import { z } from "zod";
import { and, eq, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { compiled, dbOf, statementOf } from "../../db/client";
import { planStepTasks, planSteps, projects, tasks } from "../../db/schema";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import type { Plan, PlanStatus } from "../document/schema";
import { appendVersion, findPlan, readVersion, setPlanStatus, type PlanMeta } from "../store/model";
import { TaskStatus } from "../../work/tasks/summary";
import { jsonArray } from "../../work/shared";

export const STEP_STATUSES = ["pending", "ready", "in_progress", "completed", "failed", "skipped", "blocked"] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];
/** What a step row may hold; the rest is derived. */
export type StoredStepStatus = "pending" | "in_progress" | "completed" | "failed" | "skipped";

/** A step's stored state (absent: never moved) and its linked task (absent: not linked). */
export interface StepRow {
  step_number: number;
  state: {
    status: StoredStepStatus;
    retries: number;
    rev: number;
    started_at: string | null;
    started_by: string | null;
    finished_at: string | null;
    finished_by: string | null;
    notes: string;
    error: string;
    files_modified: string;
    repo: string | null;
    branch: string | null;
    commit_sha: string | null;
    updated_at: string;
  } | null;
  task: { id: string; ref: string; status: TaskStatus; assignee_actor_id: string | null; lease_expires_at: string | null; updated_at: string } | null;
}

export const linkedTaskSchema = z.object({
  id: z.string().describe("Task id."),
  ref: z.string().describe("KEY-number."),
  status: z.string().describe("The task's status (todo, in_progress, in_review, done, cancelled)."),
  assignee_actor_id: z.string().nullable().describe("Who holds or is assigned the task, or null."),
  lease_expires_at: z.string().nullable().describe("When the holder's lease runs out, or null."),
});

export const stepStateSchema = z.object({
  step_number: z.number().int().describe("The step."),
  id: z.string().describe("The step's id."),
  title: z.string().describe("The step's title."),
  status: z.enum(STEP_STATUSES).describe("pending (waiting on dependencies), ready, in_progress, completed, failed, skipped or blocked (a dependency failed)."),
  depends_on: z.array(z.number().int()).describe("Steps it waits on."),
  retries: z.number().int().describe("Failures retried so far."),
  started_at: z.string().nullable().describe("When it was started, or null."),
  started_by: z.string().nullable().describe("Actor id of who started it, or null."),
  finished_at: z.string().nullable().describe("When it completed, failed or was skipped, or null."),
  finished_by: z.string().nullable().describe("Actor id of who finished it, or null."),
  notes: z.string().describe("Completion or skip notes."),
  error: z.string().describe("The last failure's error, or ''."),
  files_modified: z.array(z.string()).describe("Files reported modified."),
  commit: z
    .object({
      repo: z.string().describe("owner/name."),
      branch: z.string().describe("Branch the commit is on."),
      sha: z.string().describe("Commit SHA."),
    })
    .nullable()
    .describe("What execute_plan committed for the step, or null."),
  task: linkedTaskSchema.nullable().describe("The work-ledger task that tracks the step (plan_to_tasks), or null."),
});
export type StepState = z.infer<typeof stepStateSchema>;

export const progressSchema = z.object({
  total_steps: z.number().int().describe("Steps in the current version."),
  completed_steps: z.number().int().describe("Completed."),
  failed_steps: z.number().int().describe("Failed."),
  skipped_steps: z.number().int().describe("Skipped."),
  in_progress_steps: z.number().int().describe("In progress."),
  blocked_steps: z.number().int().describe("Blocked by a failed dependency."),
  ready_steps: z.number().int().describe("Ready to start."),
  pending_steps: z.number().int().describe("Waiting on dependencies."),
  percentage: z.number().int().describe("Completed and skipped steps as a whole percentage of all steps."),
});
export type Progress = z.infer<typeof progressSchema>;

export async function readStepRows(ctx: Ctx, planId: string): Promise<Map<number, StepRow>> {
  const db = dbOf(ctx);
  const s = planSteps;
  const l = alias(planStepTasks, "l");
  const t = alias(tasks, "t");
  const p = alias(projects, "p");
  const [states, links] = await ctx.d1.batch<Record<string, unknown>>([
    statementOf(
      ctx.d1,
      db
        .select({
          step_number: s.stepNumber,
          status: s.status,
          retries: s.retries,
          rev: s.rev,
          started_at: s.startedAt,
          started_by: s.startedBy,
          finished_at: s.finishedAt,
          finished_by: s.finishedBy,
          notes: s.notes,
          error: s.error,
          files_modified: s.filesModified,
          repo: s.repo,
          branch: s.branch,
          commit_sha: s.commitSha,
          updated_at: s.updatedAt,
        })
        .from(s)
        .where(and(eq(s.tenantId, ctx.tenantId), eq(s.planId, planId))),
    ),
    statementOf(
      ctx.d1,
      db
        .select({
          step_number: l.stepNumber,
          id: t.id,
          ref: sql<string>`${p.key} || '-' || ${t.seq}`.as("ref"),
          status: t.status,
          assignee_actor_id: t.assigneeActorId,
          lease_expires_at: t.leaseExpiresAt,
          updated_at: t.updatedAt,
        })
        .from(l)
        .innerJoin(t, and(eq(t.tenantId, l.tenantId), eq(t.id, l.taskId)))
        .innerJoin(p, and(eq(p.tenantId, t.tenantId), eq(p.id, t.projectId)))
        .where(and(eq(l.tenantId, ctx.tenantId), eq(l.planId, planId))),
    ),
  ]);
  const rows = new Map<number, StepRow>();
  const at = (n: number) => rows.get(n) ?? rows.set(n, { step_number: n, state: null, task: null }).get(n)!;
  for (const r of states!.results) {
    const { step_number, ...state } = r as { step_number: number } & NonNullable<StepRow["state"]>;
    at(step_number).state = state;
  }
  for (const r of links!.results) {
    const { step_number, ...task } = r as { step_number: number } & NonNullable<StepRow["task"]>;
    at(step_number).task = task;
  }
  return rows;
}

/** A linked task's status as a step status; a todo task is pending unless the step failed since the task last moved. */
function fromTask(task: NonNullable<StepRow["task"]>, state: StepRow["state"]): StoredStepStatus {
  switch (task.status) {
    case "done":
      return "completed";
    case "cancelled":
      return "skipped";
    case "in_progress":
    case "in_review":
      return "in_progress";
    default:
      return state?.status === "failed" && state.updated_at >= task.updated_at ? "failed" : "pending";
  }
}

export function stepStates(plan: Plan, rows: ReadonlyMap<number, StepRow>): StepState[] {
  const own = new Map<number, StoredStepStatus>();
  for (const s of plan.steps) {
    const row = rows.get(s.step_number);
    own.set(s.step_number, row?.task ? fromTask(row.task, row.state) : (row?.state?.status ?? "pending"));
  }
  // Dependencies come first in execution order, so each step sees its dependencies' final status.
  const status = new Map<number, StepStatus>();
  for (const n of plan.dependency_graph.execution_order) {
    const step = plan.steps.find((s) => s.step_number === n)!;
    const mine = own.get(n)!;
    if (mine !== "pending") {
      status.set(n, mine);
      continue;
    }
    const deps = step.depends_on.map((d) => status.get(d)!);
    status.set(n, deps.some((d) => d === "failed" || d === "blocked") ? "blocked" : deps.every((d) => d === "completed" || d === "skipped") ? "ready" : "pending");
  }
  return plan.steps.map((s) => {
    const row = rows.get(s.step_number);
    const st = row?.state;
    const task = row?.task;
    return {
      step_number: s.step_number,
      id: s.id,
      title: s.title,
      status: status.get(s.step_number)!,
      depends_on: s.depends_on,
      retries: st?.retries ?? 0,
      started_at: st?.started_at ?? null,
      started_by: st?.started_by ?? null,
      finished_at: st?.finished_at ?? null,
      finished_by: st?.finished_by ?? null,
      notes: st?.notes ?? "",
      error: st?.error ?? "",
      files_modified: st ? jsonArray<string>(st.files_modified) : [],
      commit: st?.repo && st.branch && st.commit_sha ? { repo: st.repo, branch: st.branch, sha: st.commit_sha } : null,
      task: task ? { id: task.id, ref: task.ref, status: task.status, assignee_actor_id: task.assignee_actor_id, lease_expires_at: task.lease_expires_at } : null,
    };
  });
}

export function summarize(states: readonly StepState[]): Progress {
  const n = (s: StepStatus) => states.filter((x) => x.status === s).length;
  const total = states.length;
  return {
    total_steps: total,
    completed_steps: n("completed"),
    failed_steps: n("failed"),
    skipped_steps: n("skipped"),
    in_progress_steps: n("in_progress"),
    blocked_steps: n("blocked"),
    ready_steps: n("ready"),
    pending_steps: n("pending"),
    percentage: total > 0 ? Math.round(((n("completed") + n("skipped")) / total) * 100) : 0,
  };
}

/**
 * The plan's status its steps imply: completed or failed once every step is finished (the
 * reference's rule: failed when any step failed), executing once any step moved, else unchanged
 * (ready, approved, …).
 */
export function impliedStatus(current: PlanStatus, states: readonly StepState[]): PlanStatus {
  if (states.length === 0) return current;
  const finished = states.every((s) => s.status === "completed" || s.status === "skipped" || s.status === "failed");
  if (finished) return states.some((s) => s.status === "failed") ? "failed" : "completed";
  const moved = states.some((s) => s.status !== "pending" && s.status !== "ready" && s.status !== "blocked");
  return moved ? "executing" : current;
}

/**
 * A new version of a plan (save_plan with overwrite, refine_plan, rollback_plan). Step progress is
 * kept by step number across versions, so the stored status is what the new version's steps imply,
 * from ready (a changed plan needs approving again): ready when no step has moved, executing while
 * one has, completed or failed once all are finished. The stored status and the steps never disagree.
 */
export async function appendFollowingSteps(ctx: Ctx, from: PlanMeta, plan: Plan, change: Omit<Parameters<typeof appendVersion>[3], "status">): Promise<PlanMeta> {
  const status = impliedStatus("ready", stepStates(plan, await readStepRows(ctx, from.id)));
  return appendVersion(ctx, from, plan, { ...change, status });
}

/** Stores the status the steps imply, when it differs; the plan as it stands after. */
export async function followSteps(ctx: Ctx, meta: PlanMeta, states: readonly StepState[]): Promise<PlanMeta> {
  const implied = impliedStatus(meta.status, states);
  if (implied === meta.status) return meta;
  return (await setPlanStatus(ctx, meta, implied)) ?? meta;
}

// Compiled once: every task status change asks whether a plan follows it.
const stepLinkOf = compiled(["tenant", "task"], (db, v) =>
  db
    .select({ plan_id: planStepTasks.planId })
    .from(planStepTasks)
    .where(and(eq(planStepTasks.tenantId, v.tenant), eq(planStepTasks.taskId, v.task))),
);

/**
 * After a task linked to a plan step changed status: the plan's stored status follows (executing,
 * completed, failed), so list_plans sees plans whose work is done through tasks. The task's own
 * write has landed by then; a failure here is logged, never the task's failure.
 */
export async function followTask(ctx: Ctx, taskId: string): Promise<void> {
  try {
    const link = await stepLinkOf(ctx.d1, { tenant: ctx.tenantId, task: taskId }).first<{ plan_id: string }>();
    const meta = link ? await findPlan(ctx, link.plan_id) : null;
    if (!meta) return;
    const [plan, rows] = await Promise.all([readVersion(ctx, meta.id, meta.version), readStepRows(ctx, meta.id)]);
    await followSteps(ctx, meta, stepStates(plan, rows));
  } catch (err) {
    console.error("plan status did not follow task", taskId, err);
  }
}

/** execute_plan's record of what it committed for a step: the step is completed with its commit. */
export function recordCommitStatement(ctx: Ctx, planId: string, stepNumber: number, c: { repo: string; branch: string; sha: string; files: string[]; notes: string }): D1PreparedStatement {
  const now = iso(ctx.clock.now());
  // Hand SQL: the UPSERT keeps the stored start (COALESCE of the row with excluded.*) and leaves retries to the migration's default.
  return ctx.d1
    .prepare(
      `INSERT INTO plan_steps (tenant_id, plan_id, step_number, status, started_at, started_by, finished_at, finished_by, notes, files_modified, repo, branch, commit_sha, updated_at)
              VALUES (?, ?, ?, 'completed', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
              ON CONFLICT (tenant_id, plan_id, step_number) DO UPDATE SET status = 'completed', started_at = COALESCE(plan_steps.started_at, excluded.started_at),
                started_by = COALESCE(plan_steps.started_by, excluded.started_by), finished_at = excluded.finished_at, finished_by = excluded.finished_by,
                notes = excluded.notes, error = '', files_modified = excluded.files_modified, repo = excluded.repo, branch = excluded.branch,
                commit_sha = excluded.commit_sha, rev = plan_steps.rev + 1, updated_at = excluded.updated_at`,
    )
    .bind(ctx.tenantId, planId, stepNumber, now, ctx.actorId, now, ctx.actorId, c.notes, JSON.stringify(c.files), c.repo, c.branch, c.sha, now);
}
