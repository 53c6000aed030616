/**
 * Step tracking (seed 004 "Execution tracking"): start_step, complete_step, fail_step and
 * view_progress over the plan's current version. A step's move is a compare-and-swap on its row
 * (rev), so two agents cannot both start one step. A step plan_to_tasks linked to a task moves
 * through that task's own tools (task_claim, task_update, task_release), so leases, fencing
 * tokens, acceptance criteria and review gates hold for plan steps as for any task.
 */
import { z } from "zod";
import { iso } from "../../db/time";
import type { Ctx } from "../../core/context";
import { defineTool, type AnyToolDef } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { toolNamed } from "../../core/catalog";
import { runTool } from "../../core/call";
import {
  followSteps, impliedStatus, progressSchema, readStepRows, stepStates, stepStateSchema, summarize,
  type StepRow, type StepState, type StepStatus, type StoredStepStatus,
} from "../progress/engine";
import { planIdParam } from "../document/params";
import { PLAN_STATUSES, type Plan } from "../document/schema";
import { getPlan, planActivity, readVersion, type PlanMeta } from "../store/model";

/** Failures fail_step re-queues with retry before the step stays failed (the reference's limit). */
export const MAX_RETRIES = 3;

const stepParam = z.number().int().min(1).max(100_000).describe("The step's step_number.");
const fencingField = z.number().int().min(0).optional()
  .describe("For a step linked to a task: the fencing token task_claim (or start_step) gave you; passed on to the task's own tool.");

interface Loaded {
  meta: PlanMeta;
  plan: Plan;
  rows: Map<number, StepRow>;
  states: StepState[];
}

async function load(ctx: Ctx, planId: string): Promise<Loaded> {
  const meta = await getPlan(ctx, planId);
  const [plan, rows] = await Promise.all([readVersion(ctx, meta.id, meta.version), readStepRows(ctx, meta.id)]);
  return { meta, plan, rows, states: stepStates(plan, rows) };
}

function stepOf(l: Loaded, n: number): StepState {
  const s = l.states.find((x) => x.step_number === n);
  if (!s) {
    const numbers = l.plan.steps.map((x) => x.step_number);
    throw new ToolError("not_found", `Step ${n} not found in plan ${l.meta.id}`, {
      hint: numbers.length > 0 ? `The plan's steps are ${numbers.slice(0, 30).join(", ")}${numbers.length > 30 ? ", …" : ""}.` : "The plan has no steps: save a version with steps first.",
    });
  }
  return s;
}

const notNow = (s: StepState, verb: string, allowed: readonly StepStatus[], hint: string) =>
  new ToolError("invalid_transition", `Step ${s.step_number} is ${s.status}; only ${allowed.join(" or ")} steps can be ${verb}.`, { hint });

const lostRace = (n: number) =>
  new ToolError("conflict", `Step ${n} changed while this call ran; no move of this call was stored.`, {
    hint: "view_progress shows where it stands now; decide again from there.",
    retryable: true,
  });

interface Move {
  status: StoredStepStatus;
  retries?: number;
  started?: boolean;
  finished?: boolean;
  notes?: string;
  error?: string;
  files_modified?: string[];
}

/**
 * One step's move as a statement: inserted when the step never moved, else updated only if its
 * row is still at the rev the caller read (a racing move makes this change nothing).
 */
function moveStatement(ctx: Ctx, planId: string, n: number, seen: StepRow["state"], m: Move): D1PreparedStatement {
  const now = iso(ctx.clock.now());
  const started = m.started ? now : (seen?.started_at ?? null);
  const startedBy = m.started ? ctx.actorId : (seen?.started_by ?? null);
  const finished = m.finished ? now : null;
  const finishedBy = m.finished ? ctx.actorId : null;
  const notes = m.notes ?? seen?.notes ?? "";
  const error = m.error ?? seen?.error ?? "";
  const files = JSON.stringify(m.files_modified ?? (seen ? JSON.parse(seen.files_modified) as string[] : []));
  const retries = m.retries ?? seen?.retries ?? 0;
  return ctx.d1
    .prepare(`INSERT INTO plan_steps (tenant_id, plan_id, step_number, status, retries, started_at, started_by, finished_at, finished_by, notes, error, files_modified, rev, updated_at)
              VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 1, ?13)
              ON CONFLICT (tenant_id, plan_id, step_number) DO UPDATE SET status = ?4, retries = ?5, started_at = ?6, started_by = ?7, finished_at = ?8,
                finished_by = ?9, notes = ?10, error = ?11, files_modified = ?12, rev = plan_steps.rev + 1, updated_at = ?13
              WHERE plan_steps.rev IS ?14
              RETURNING step_number`)
    .bind(ctx.tenantId, planId, n, m.status, retries, started, startedBy, finished, finishedBy, notes, error, files, now, seen?.rev ?? null);
}

/**
 * Fails the batch when the move before it changed nothing (its compare-and-swap lost), so a batch
 * of moves lands whole or not at all. SQLite has no RAISE outside triggers; json() of text that is
 * not JSON is an error, and D1 rolls back a batch on any error.
 */
const abortIfUnchanged = (ctx: Ctx, n: number) =>
  ctx.d1.prepare(`SELECT CASE WHEN changes() = 0 THEN json(?) END`).bind(`${LOST_MOVE} ${n}`);
const LOST_MOVE = "lost step move";

/** Applies moves atomically; a lost compare-and-swap on any of them stores none, reported as conflict. */
async function applyMoves(ctx: Ctx, l: Loaded, moves: ReadonlyArray<{ n: number; move: Move }>): Promise<void> {
  if (moves.length === 0) return;
  try {
    await ctx.d1.batch(moves.flatMap(({ n, move }) => [
      moveStatement(ctx, l.meta.id, n, l.rows.get(n)?.state ?? null, move),
      abortIfUnchanged(ctx, n),
      planActivity(ctx, l.meta.id, `plan.step_${move.status}`, `plan ${l.meta.name}: step ${n} ${move.status}${move.error ? `: ${move.error}` : ""}`),
    ]));
  } catch (err) {
    if (!/malformed JSON/i.test(String(err))) throw err;
    // Which move lost is not in the error; the first one that no longer matches what was read is.
    const now = await load(ctx, l.meta.id);
    const lost = moves.find(({ n }) => now.rows.get(n)?.state?.rev !== l.rows.get(n)?.state?.rev) ?? moves[0]!;
    throw lostRace(lost.n);
  }
}

const task = (name: string): AnyToolDef => toolNamed(name);

/** After the moves: the plan's status follows its steps (executing, completed, failed). */
async function answer(ctx: Ctx, planId: string, n: number, warnings: string[]) {
  const l = await load(ctx, planId);
  return {
    plan_id: l.meta.id,
    plan_version: l.meta.version,
    plan_status: (await followSteps(ctx, l.meta, l.states)).status,
    step: stepOf(l, n),
    progress: summarize(l.states),
    ready_steps: l.states.filter((s) => s.status === "ready").map((s) => s.step_number),
    current_steps: l.states.filter((s) => s.status === "in_progress").map((s) => s.step_number),
    warnings,
  };
}

const moveOutput = z.object({
  plan_id: z.string().describe("The plan."),
  plan_version: z.number().int().describe("The version whose steps were tracked."),
  plan_status: z.enum(PLAN_STATUSES).describe("The plan's status after the move (executing once a step moved; completed or failed once every step is finished)."),
  step: stepStateSchema.describe("The step after the move."),
  progress: progressSchema.describe("The plan's progress after the move."),
  ready_steps: z.array(z.number().int()).describe("Steps ready to start now."),
  current_steps: z.array(z.number().int()).describe("Steps in progress."),
  lease: z.object({
    task_ref: z.string().describe("The task claimed."),
    lease_expires_at: z.string().nullable().describe("When your lease runs out."),
    fencing_token: z.number().int().nullable().describe("Pass it to complete_step / fail_step (or the task tools) for this step."),
  }).optional().describe("For a step linked to a task: the claim start_step took."),
  warnings: z.array(z.string()).describe("What to know: dependencies not done yet, the retry limit reached, …"),
});

const summarizeMove = (r: z.output<typeof moveOutput>) =>
  `Step ${r.step.step_number} (${r.step.title}) is ${r.step.status}; plan ${r.plan_id} ${r.progress.percentage}% done, ${r.plan_status}.`;

const STARTABLE: readonly StepStatus[] = ["pending", "ready"];

export const startStepTool = defineTool({
  name: "start_step",
  title: "Start a plan step",
  toolset: "plans",
  description:
    "Mark a step of a saved plan in progress. Only pending or ready steps start (pending: its dependencies are not all done yet, which is allowed with a warning). A step plan_to_tasks linked to a task is started by claiming that task under a lease (as task_claim), and the answer carries the fencing token.",
  input: z.object({
    plan_id: planIdParam,
    step_number: stepParam,
    lease_seconds: z.number().int().min(60).max(86_400).optional().describe("For a step linked to a task: the claim's lease length (task_claim's default when absent)."),
  }),
  output: moveOutput,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const l = await load(ctx, input.plan_id);
    const s = stepOf(l, input.step_number);
    if (!STARTABLE.includes(s.status)) {
      throw notNow(s, "started", STARTABLE, s.status === "failed" ? "fail_step with retry: true puts a failed step back to pending."
        : s.status === "blocked" ? "A dependency failed: retry it (fail_step retry: true) or skip it, then this step can start."
          : "view_progress lists the ready steps.");
    }
    const open = s.depends_on.filter((d) => !["completed", "skipped"].includes(l.states.find((x) => x.step_number === d)!.status));
    const warnings = open.length > 0 ? [`Step ${s.step_number} depends on step(s) ${open.join(", ")}, not completed yet.`] : [];
    let lease: z.input<typeof moveOutput>["lease"];
    if (s.task) {
      const claim = await runTool<{ claimed: boolean; reason: string; holder_actor_id: string | null; lease_expires_at: string | null; fencing_token: number | null }>(
        task("task_claim"), ctx, { task_id: s.task.id, lease_seconds: input.lease_seconds });
      if (!claim.claimed) {
        throw new ToolError("conflict", `Step ${s.step_number} is tracked by task ${s.task.ref}, which could not be claimed (${claim.reason}).`, {
          hint: claim.reason === "held" ? "Another actor holds it under a live lease: pick another ready step (view_progress), or wait for the lease to end." : "task_get shows the task's state.",
        });
      }
      lease = { task_ref: s.task.ref, lease_expires_at: claim.lease_expires_at, fencing_token: claim.fencing_token };
    }
    await applyMoves(ctx, l, [{ n: s.step_number, move: { status: "in_progress", started: true, error: "" } }]);
    return { ...(await answer(ctx, l.meta.id, s.step_number, warnings)), ...(lease ? { lease } : {}) };
  },
  summarize: summarizeMove,
});

const COMPLETABLE: readonly StepStatus[] = ["in_progress", "ready"];

export const completeStepTool = defineTool({
  name: "complete_step",
  title: "Complete a plan step",
  toolset: "plans",
  description:
    "Mark a step completed, with notes and the files actually modified. Readiness of the other steps is recomputed from depends_on; when every step is finished the plan is completed. A step linked to a task is completed by moving that task to done (as task_update), so its lease, acceptance criteria and reviewer gate apply.",
  input: z.object({
    plan_id: planIdParam,
    step_number: stepParam,
    notes: z.string().max(10_000).optional().describe("What was done."),
    files_modified: z.array(z.string().min(1).max(1000)).max(200).optional().describe("Files actually modified."),
    fencing_token: fencingField,
  }),
  output: moveOutput,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const l = await load(ctx, input.plan_id);
    const s = stepOf(l, input.step_number);
    if (!COMPLETABLE.includes(s.status)) {
      throw notNow(s, "completed", COMPLETABLE, s.status === "pending" || s.status === "blocked"
        ? `Its dependencies (${s.depends_on.join(", ")}) are not all completed or skipped: finish them first.`
        : s.status === "failed" ? "fail_step with retry: true puts it back to pending; start it again, then complete it." : "view_progress shows every step's status.");
    }
    if (s.task) await runTool(task("task_update"), ctx, { task_id: s.task.id, patch: { status: "done" }, fencing_token: input.fencing_token });
    await applyMoves(ctx, l, [{ n: s.step_number, move: { status: "completed", started: s.status === "ready", finished: true, notes: input.notes, files_modified: input.files_modified } }]);
    return answer(ctx, l.meta.id, s.step_number, []);
  },
  summarize: summarizeMove,
});

/** Every step that waits on `n`, directly or through other steps (depends_on, and blocks read the other way). */
function dependentsOf(plan: Plan, n: number): number[] {
  const next = new Map<number, Set<number>>();
  const edge = (from: number, to: number) => (next.get(from) ?? next.set(from, new Set()).get(from)!).add(to);
  for (const s of plan.steps) {
    for (const d of s.depends_on) edge(d, s.step_number);
    for (const b of s.blocks) edge(s.step_number, b);
  }
  const seen = new Set<number>();
  const queue = [n];
  while (queue.length > 0) {
    for (const m of next.get(queue.shift()!) ?? []) if (!seen.has(m) && m !== n) { seen.add(m); queue.push(m); }
  }
  return [...seen].sort((a, b) => a - b);
}

const UNFINISHED: readonly StepStatus[] = ["pending", "ready", "blocked"];
const FAILABLE: readonly StepStatus[] = ["pending", "ready", "in_progress", "blocked", "failed"];

export const failStepTool = defineTool({
  name: "fail_step",
  title: "Fail a plan step",
  toolset: "plans",
  description:
    `Record a step's failure with its error. retry: back to pending to try again (at most ${MAX_RETRIES} retries; then it stays failed); skip: skipped instead of failed, so dependents can go on; skip_dependents: every step that waits on it, not yet started, is skipped too. Steps depending on a failed step are blocked. A step linked to a task releases the task (retry, failure) or cancels it (skip), through the task's own tools.`,
  input: z.object({
    plan_id: planIdParam,
    step_number: stepParam,
    error: z.string().trim().min(1).max(10_000).describe("What went wrong."),
    retry: z.boolean().default(false).describe("Put the step back to pending to try again."),
    skip: z.boolean().default(false).describe("Mark the step skipped instead of failed."),
    skip_dependents: z.boolean().default(false).describe("Also skip every not-yet-started step that depends on this one."),
    fencing_token: fencingField,
  }),
  output: moveOutput.extend({ skipped_dependents: z.array(z.number().int()).describe("Steps skipped with it (skip_dependents).") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    if (input.retry && input.skip) {
      throw new ToolError("invalid_input", "retry and skip cannot both be true.", { hint: "retry puts the step back to pending; skip gives it up. Choose one." });
    }
    const l = await load(ctx, input.plan_id);
    const s = stepOf(l, input.step_number);
    if (!FAILABLE.includes(s.status)) {
      throw notNow(s, "failed", FAILABLE, "A completed or skipped step is finished; record a new problem as a new step (save_plan with overwrite).");
    }
    const warnings: string[] = [];
    const retried = input.retry && s.retries < MAX_RETRIES;
    if (input.retry && !retried) warnings.push(`Step ${s.step_number} was retried ${s.retries} times, the most allowed: it stays failed.`);
    const status: StoredStepStatus = retried ? "pending" : input.skip ? "skipped" : "failed";
    const dependents = input.skip_dependents
      ? dependentsOf(l.plan, s.step_number).filter((d) => UNFINISHED.includes(l.states.find((x) => x.step_number === d)!.status))
      : [];
    // The tasks first: their tools enforce leases, so a refusal there leaves the steps untouched.
    if (s.task && s.task.status === "in_progress") {
      await runTool(task("task_release"), ctx, { task_id: s.task.id, note: `step ${s.step_number} failed: ${input.error}`.slice(0, 2000), fencing_token: input.fencing_token });
    }
    if (s.task && status === "skipped" && !["done", "cancelled"].includes(s.task.status)) {
      await runTool(task("task_update"), ctx, { task_id: s.task.id, patch: { status: "cancelled" } });
    }
    for (const d of dependents) {
      const t = l.states.find((x) => x.step_number === d)!.task;
      if (t && !["done", "cancelled"].includes(t.status)) await runTool(task("task_update"), ctx, { task_id: t.id, patch: { status: "cancelled" } });
    }
    await applyMoves(ctx, l, [
      { n: s.step_number, move: { status, retries: retried ? s.retries + 1 : s.retries, error: input.error, finished: status !== "pending", notes: status === "skipped" ? `Skipped after failure: ${input.error}`.slice(0, 10_000) : undefined } },
      ...dependents.map((d) => ({ n: d, move: { status: "skipped" as const, finished: true, notes: `Skipped due to failure of step ${s.step_number}` } })),
    ]);
    return { ...(await answer(ctx, l.meta.id, s.step_number, warnings)), skipped_dependents: dependents };
  },
  summarize: (r) => `${summarizeMove(r)}${r.skipped_dependents.length > 0 ? ` Skipped with it: ${r.skipped_dependents.join(", ")}.` : ""}`,
});

export const viewProgressTool = defineTool({
  name: "view_progress",
  title: "A plan's execution progress",
  toolset: "plans",
  description:
    "Where a saved plan's steps stand: counts and percentage, the ready and in-progress steps, and every step's status (recomputed from depends_on), who started and finished it, notes, errors, the commit execute_plan made, and the task that tracks it (plan_to_tasks). A linked step's status follows its task.",
  input: z.object({ plan_id: planIdParam }),
  output: z.object({
    plan_id: z.string().describe("The plan."),
    plan_version: z.number().int().describe("The current version, whose steps are shown."),
    plan_status: z.enum(PLAN_STATUSES).describe("The plan's stored status."),
    implied_status: z.enum(PLAN_STATUSES).describe("The status the steps imply (completed once every step is completed or skipped, …); differs from plan_status when tasks moved the steps since the last step tool call."),
    progress: progressSchema.describe("Counts and percentage."),
    ready_steps: z.array(z.number().int()).describe("Steps ready to start."),
    current_steps: z.array(z.number().int()).describe("Steps in progress."),
    steps: z.array(stepStateSchema).describe("Every step, in plan order."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const l = await load(ctx, input.plan_id);
    return {
      plan_id: l.meta.id,
      plan_version: l.meta.version,
      plan_status: l.meta.status,
      implied_status: impliedStatus(l.meta.status, l.states),
      progress: summarize(l.states),
      ready_steps: l.states.filter((s) => s.status === "ready").map((s) => s.step_number),
      current_steps: l.states.filter((s) => s.status === "in_progress").map((s) => s.step_number),
      steps: l.states,
    };
  },
  summarize: (r) => `Plan ${r.plan_id} v${r.plan_version}: ${r.progress.percentage}% (${r.progress.completed_steps}/${r.progress.total_steps} completed, ${r.progress.in_progress_steps} in progress, ${r.progress.ready_steps} ready).`,
});

export const stepTools = [startStepTool, completeStepTool, failStepTool, viewProgressTool];
