/**
 * Step tracking (seed 004 "Execution tracking"): start_step, complete_step and fail_step over the
 * plan's current version. A step's move is a compare-and-swap on its row (rev), so two agents cannot
 * both start one step. A step plan_to_tasks linked to a task moves
 * through that task's own tools (task_claim, task_update, task_release), so leases, fencing
 * tokens, acceptance criteria and review gates hold for plan steps as for any task.
 */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { defineTool, type AnyToolDef } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { toolNamed } from "../../core/catalog";
import { runTool } from "../../core/call";
import { followSteps, progressSchema, stepStateSchema, summarize, type StepState, type StepStatus, type StoredStepStatus } from "../progress/engine";
import { planIdParam } from "../document/params";
import { PLAN_STATUSES, type Plan } from "../document/schema";
import { applyMoves, load, stepOf } from "./model";

/** Failures fail_step re-queues with retry before the step stays failed (the reference's limit). */
export const MAX_RETRIES = 3;

const stepParam = z.number().int().min(1).max(100_000).describe("The step's step_number.");
const fencingField = z.number().int().min(0).optional().describe("For a step linked to a task: the fencing token task_claim (or start_step) gave you; passed on to the task's own tool.");

const notNow = (s: StepState, verb: string, allowed: readonly StepStatus[], hint: string) =>
  new ToolError("invalid_transition", `Step ${s.step_number} is ${s.status}; only ${allowed.join(" or ")} steps can be ${verb}.`, { hint });

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
  lease: z
    .object({
      task_ref: z.string().describe("The task claimed."),
      lease_expires_at: z.string().nullable().describe("When your lease runs out."),
      fencing_token: z.number().int().nullable().describe("Pass it to complete_step / fail_step (or the task tools) for this step."),
    })
    .optional()
    .describe("For a step linked to a task: the claim start_step took."),
  warnings: z.array(z.string()).describe("What to know: dependencies not done yet, the retry limit reached, …"),
});

const summarizeMove = (r: z.output<typeof moveOutput>) => `Step ${r.step.step_number} (${r.step.title}) is ${r.step.status}; plan ${r.plan_id} ${r.progress.percentage}% done, ${r.plan_status}.`;

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
      throw notNow(
        s,
        "started",
        STARTABLE,
        s.status === "failed"
          ? "fail_step with retry: true puts a failed step back to pending."
          : s.status === "blocked"
            ? "A dependency failed: retry it (fail_step retry: true) or skip it, then this step can start."
            : "view_progress lists the ready steps.",
      );
    }
    const open = s.depends_on.filter((d) => !["completed", "skipped"].includes(l.states.find((x) => x.step_number === d)!.status));
    const warnings = open.length > 0 ? [`Step ${s.step_number} depends on step(s) ${open.join(", ")}, not completed yet.`] : [];
    let lease: z.input<typeof moveOutput>["lease"];
    if (s.task) {
      const claim = await runTool<{ claimed: boolean; reason: string; holder_actor_id: string | null; lease_expires_at: string | null; fencing_token: number | null }>(task("task_claim"), ctx, {
        task_id: s.task.id,
        lease_seconds: input.lease_seconds,
      });
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
      throw notNow(
        s,
        "completed",
        COMPLETABLE,
        s.status === "pending" || s.status === "blocked"
          ? `Its dependencies (${s.depends_on.join(", ")}) are not all completed or skipped: finish them first.`
          : s.status === "failed"
            ? "fail_step with retry: true puts it back to pending; start it again, then complete it."
            : "view_progress shows every step's status.",
      );
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
    for (const m of next.get(queue.shift()!) ?? [])
      if (!seen.has(m) && m !== n) {
        seen.add(m);
        queue.push(m);
      }
  }
  return [...seen].sort((a, b) => a - b);
}

const UNFINISHED: readonly StepStatus[] = ["pending", "ready", "blocked"];
const FAILABLE: readonly StepStatus[] = ["pending", "ready", "in_progress", "blocked", "failed"];

export const failStepTool = defineTool({
  name: "fail_step",
  title: "Fail a plan step",
  toolset: "plans",
  description: `Record a step's failure with its error. retry: back to pending to try again (at most ${MAX_RETRIES} retries; then it stays failed); skip: skipped instead of failed, so dependents can go on; skip_dependents: every step that waits on it, not yet started, is skipped too. Steps depending on a failed step are blocked. A step linked to a task releases the task (retry, failure) or cancels it (skip), through the task's own tools.`,
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
    const dependents = input.skip_dependents ? dependentsOf(l.plan, s.step_number).filter((d) => UNFINISHED.includes(l.states.find((x) => x.step_number === d)!.status)) : [];
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
      {
        n: s.step_number,
        move: {
          status,
          retries: retried ? s.retries + 1 : s.retries,
          error: input.error,
          finished: status !== "pending",
          notes: status === "skipped" ? `Skipped after failure: ${input.error}`.slice(0, 10_000) : undefined,
        },
      },
      ...dependents.map((d) => ({ n: d, move: { status: "skipped" as const, finished: true, notes: `Skipped due to failure of step ${s.step_number}` } })),
    ]);
    return { ...(await answer(ctx, l.meta.id, s.step_number, warnings)), skipped_dependents: dependents };
  },
  summarize: (r) => `${summarizeMove(r)}${r.skipped_dependents.length > 0 ? ` Skipped with it: ${r.skipped_dependents.join(", ")}.` : ""}`,
});
