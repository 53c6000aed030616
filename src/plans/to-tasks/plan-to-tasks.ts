/**
 * plan_to_tasks (beyond the seed): a plan's steps become work-ledger tasks in one atomic batch
 * (task_create_many's own creation path), with the steps' dependencies, acceptance criteria and a
 * link back to the plan. From then on a step's state is its task's, so agents claim plan steps
 * with leases like any task. Steps already linked are left alone, so after a new version only the
 * new steps get tasks; two racing calls cannot both link a step (the batch fails as a whole).
 */
import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { readStepRows } from "../progress/engine";
import { planIdParam } from "../document/params";
import { type Plan, type PlanStep } from "../document/schema";
import { getPlan, planActivity, readVersion } from "../store/model";
import { linkStepStatement } from "./model";
import { findProject } from "../../work/projects/model";
import { actorRefField } from "../../work/shared";
import { LABEL, ManyItem, createTasks } from "../../work/tasks/model";

const PRIORITY: Record<PlanStep["priority"], number> = { critical: 0, high: 1, medium: 2, low: 3 };
const MAX_CRITERIA = 50;
const CRITERION_CHARS = 1000;
const TITLE_CHARS = 300;
const BODY_CHARS = 65_536;

/** The task's description: the step's, then what the plan says it touches, then where it comes from. */
function taskBody(plan: Plan, meta: { id: string; name: string; version: number }, step: PlanStep): string {
  const files = [
    ...step.files_to_create.map((f) => `- create \`${f.path}\``),
    ...step.files_to_modify.map((f) => `- ${f.change_type} \`${f.path}\``),
    ...step.files_to_delete.map((p) => `- delete \`${p}\``),
  ];
  const parts = [
    step.description,
    files.length > 0 ? `Files:\n${files.join("\n")}` : "",
    step.estimated_effort ? `Estimated effort: ${step.estimated_effort}` : "",
    step.rollback_strategy ? `Rollback: ${step.rollback_strategy}` : "",
    `Plan: ${meta.name} (plan_id ${meta.id}, version ${meta.version}), step ${step.step_number} (${step.id}). Goal: ${plan.goal}`,
  ].filter((p) => p.trim() !== "");
  const body = parts.join("\n\n");
  return body.length <= BODY_CHARS ? body : `${body.slice(0, BODY_CHARS - 20)}\n…[cut]`;
}

const refSchema = z.object({
  step_number: z.number().int().describe("The step."),
  task_id: z.string().describe("Its task's id."),
  ref: z.string().describe("Its task's KEY-number."),
});

export const planToTasksTool = defineTool({
  name: "plan_to_tasks",
  title: "Turn a plan into tasks",
  toolset: "plans",
  description:
    "Create a work-ledger task for every step of a saved plan (current version) in one atomic batch: title and description from the step (with its files and a link back to the plan), priority from the step's, acceptance criteria from the step's, and dependencies from depends_on. From then on each step's state follows its task (view_progress), so agents claim plan steps with task_claim under leases. Steps that already have a task, or were completed or skipped without one, are left alone (only new steps of a later version get tasks).",
  input: z.object({
    plan_id: planIdParam,
    project_id: z.string().min(1).max(100).describe("The project the tasks go in (id or key)."),
    assignee_actor_id: actorRefField("Assign every task to this actor (default: unassigned, for anyone to claim).").optional(),
    reviewer_actor_id: actorRefField("Reviewer whose approval each task's done waits for.").optional(),
    labels: z.array(LABEL).max(10).optional().describe("Labels for every task, beside `plan`."),
    requires_evidence: z.boolean().default(false).describe("Each task's done needs a code ref or attachment."),
  }),
  output: z.object({
    plan_id: z.string().describe("The plan."),
    plan_version: z.number().int().describe("The version whose steps were used."),
    project_key: z.string().describe("The project's key."),
    created: z.array(refSchema).describe("Tasks this call created, in execution order."),
    already_linked: z.array(refSchema).describe("Steps that already had a task."),
    not_needed: z.array(z.number().int()).describe("Steps already completed or skipped without a task: they get none."),
    warnings: z.array(z.string()).describe("What was shortened to fit a task (criteria past 50, long titles)."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  // An answer that created nothing is not replayed: it read the plan, and the next call must read
  // whatever version is there by then.
  idempotency: { keep: (output) => output.created.length > 0 },
  run: async (ctx, input) => {
    const meta = await getPlan(ctx, input.plan_id);
    const [plan, rows, project] = await Promise.all([readVersion(ctx, meta.id, meta.version), readStepRows(ctx, meta.id), findProject(ctx, input.project_id)]);
    if (plan.steps.length === 0) {
      throw new ToolError("invalid_input", `Plan ${meta.id} has no steps to turn into tasks.`, { hint: "Save a version of the plan with steps (save_plan with overwrite: true)." });
    }
    const byNumber = new Map(plan.steps.map((s) => [s.step_number, s]));
    const linked = new Map([...rows.values()].filter((r) => r.task).map((r) => [r.step_number, r.task!]));
    // A step finished outside tasks stays finished: a new todo task would send it back to pending.
    const finished = new Set([...rows.values()].filter((r) => !r.task && (r.state?.status === "completed" || r.state?.status === "skipped")).map((r) => r.step_number));
    const todo = plan.dependency_graph.execution_order.filter((n) => !linked.has(n) && !finished.has(n)).map((n) => byNumber.get(n)!);
    const warnings: string[] = [];
    for (const step of todo) {
      if (rows.get(step.step_number)?.state?.status === "in_progress")
        warnings.push(`Step ${step.step_number} was in progress outside tasks; its task starts in todo: claim it (start_step or task_claim) to go on.`);
    }
    const index = new Map(todo.map((s, i) => [s.step_number, i]));
    const items: ManyItem[] = todo.map((step) => {
      const criteria = step.acceptance_criteria.map((c) => c.trim()).filter((c) => c !== "");
      if (criteria.length > MAX_CRITERIA) warnings.push(`Step ${step.step_number} has ${criteria.length} acceptance criteria; its task keeps the first ${MAX_CRITERIA}.`);
      if (criteria.some((c) => c.length > CRITERION_CHARS)) warnings.push(`Step ${step.step_number}: acceptance criteria longer than ${CRITERION_CHARS} characters were cut.`);
      if (step.title.length > TITLE_CHARS) warnings.push(`Step ${step.step_number}'s title was cut to ${TITLE_CHARS} characters.`);
      return {
        title: step.title.slice(0, TITLE_CHARS),
        body: taskBody(plan, meta, step),
        priority: PRIORITY[step.priority],
        assignee_actor_id: input.assignee_actor_id,
        reviewer_actor_id: input.reviewer_actor_id,
        labels: [...new Set(["plan", ...(input.labels ?? [])])],
        acceptance_criteria: criteria.slice(0, MAX_CRITERIA).map((text) => ({ text: text.slice(0, CRITERION_CHARS), met: false })),
        requires_evidence: input.requires_evidence,
        // Execution order puts every dependency first: either earlier in this batch or already a task.
        depends_on: step.depends_on.filter((d) => !finished.has(d)).map((d) => (index.has(d) ? { batch_index: index.get(d)! } : linked.get(d)!.id)),
      };
    });
    const already = [...linked.entries()]
      .filter(([n]) => byNumber.has(n))
      .sort(([a], [b]) => a - b)
      .map(([n, t]) => ({ step_number: n, task_id: t.id, ref: t.ref }));
    const notNeeded = [...finished].filter((n) => byNumber.has(n)).sort((a, b) => a - b);
    if (items.length === 0) return { plan_id: meta.id, plan_version: meta.version, project_key: project.key, created: [], already_linked: already, not_needed: notNeeded, warnings };
    const now = iso(ctx.clock.now());
    let made: { ids: string[]; refs: string[] };
    try {
      made = await createTasks(ctx, project.id, items, (ids) => [
        ...todo.map((step, i) => linkStepStatement(ctx, meta.id, step.step_number, ids[i]!, now)),
        // On the plan's own timeline too: a later plan write (a new version) then makes the same
        // plan_to_tasks call a new one rather than a retry to replay.
        planActivity(ctx, meta.id, "plan.tasks_created", `Tasks for step(s) ${todo.map((s) => s.step_number).join(", ")} in ${project.key}`),
      ]);
    } catch (err) {
      if (!String(err).includes("UNIQUE constraint failed")) throw err;
      throw new ToolError("conflict", `Another call linked steps of plan ${meta.id} to tasks while this one ran; no task was created.`, {
        hint: "view_progress shows the tasks that exist now; call plan_to_tasks again to cover any step still without one.",
        retryable: true,
      });
    }
    return {
      plan_id: meta.id,
      plan_version: meta.version,
      project_key: project.key,
      warnings,
      already_linked: already,
      not_needed: notNeeded,
      created: todo.map((s, i) => ({ step_number: s.step_number, task_id: made.ids[i]!, ref: made.refs[i]! })),
    };
  },
  summarize: (r) =>
    `Plan ${r.plan_id}: ${r.created.length} task(s) created in ${r.project_key}${r.created.length > 0 ? ` (${r.created.map((c) => c.ref).join(", ")})` : ""}${r.already_linked.length > 0 ? `; ${r.already_linked.length} step(s) already had one` : ""}.`,
});
