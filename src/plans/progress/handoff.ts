/**
 * get_context_for_prompt's handoff_mode "active_plan" (the reference's active-plan handoff): what an
 * agent picking up a saved plan needs beside the code: the goal and scope, where the steps stand,
 * the step to work on next, and the files the ready and in-progress steps touch, which the context
 * puts first. Every list is capped, so a 200-step plan still makes a small handoff.
 */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { readStepRows, STEP_STATUSES, stepStates, type StepStatus } from "./engine";
import { PLAN_STATUSES, type Plan, type PlanStep } from "../document/schema";
import { getPlan, readVersion } from "../store/model";

/** Each step's status in the plan's current version, as view_progress shows it. */
async function stepStatuses(ctx: Ctx, plan: Plan): Promise<Map<number, StepStatus>> {
  const states = stepStates(plan, await readStepRows(ctx, plan.id));
  return new Map(states.map((s) => [s.step_number, s.status]));
}

const MAX_TEXT = 400;
const MAX_LIST = 10;
const MAX_COMPLETED = 5;
const MAX_ACTIVE_FILES = 20;
const MAX_LINKED_FILES = 50;

const cut = (text: string, max = MAX_TEXT) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const capped = (items: readonly string[], max = MAX_LIST) => items.slice(0, max).map((t) => cut(t));

const stepSummarySchema = z.object({
  step_number: z.number().int().describe("The step's number."),
  title: z.string().describe("Its title."),
  status: z.enum(STEP_STATUSES).describe("Where it stands."),
  description: z.string().describe("What to do (first 800 characters)."),
  acceptance_criteria: z.array(z.string()).describe("How to tell it is done (first 5)."),
  files: z.array(z.string()).describe("Files it modifies, creates or deletes."),
});

export const handoffSchema = z
  .object({
    mode: z.literal("active_plan").describe("The handoff asked for."),
    plan_id: z.string().describe("The plan's id."),
    plan_name: z.string().describe("Its name."),
    plan_version: z.number().int().describe("The version read (the current one)."),
    plan_status: z.enum(PLAN_STATUSES).describe("The plan's status."),
    objective: z.string().describe("The plan's goal."),
    scope_in: z.array(z.string()).describe("What the plan covers (first 10)."),
    scope_out: z.array(z.string()).describe("What it leaves out (first 10)."),
    constraints: z.array(z.string()).describe("Constraints (first 10)."),
    unresolved_risks: z.array(z.string()).describe("Its risks (first 10)."),
    steps: z
      .object({
        total: z.number().int().describe("Steps in the plan."),
        ...(Object.fromEntries(
          STEP_STATUSES.map((s) => [
            s,
            z
              .number()
              .int()
              .describe(`Steps ${s.replace("_", " ")}.`),
          ]),
        ) as Record<StepStatus, z.ZodNumber>),
      })
      .describe("Steps by status."),
    current_step: stepSummarySchema
      .nullable()
      .describe("The step to work on: the first in progress, else the first ready, else the next not completed in execution order; null when all are completed."),
    completed_steps: z.array(z.object({ step_number: z.number().int().describe("Number."), title: z.string().describe("Title.") })).describe("Completed steps (first 5)."),
    active_files: z.array(z.string()).describe("Files the ready and in-progress steps touch; those the index has come first in the context (reason: pinned)."),
    linked_files: z.array(z.string()).describe("Every file the plan names (its context_files and its steps'), sorted (first 50)."),
    next_actions: z.array(z.string()).describe("What to do next (up to 3)."),
  })
  .describe("The active plan (handoff_mode active_plan).");
export type Handoff = z.infer<typeof handoffSchema>;

const filesOf = (s: PlanStep) => [...s.files_to_modify.map((f) => f.path), ...s.files_to_create.map((f) => f.path), ...s.files_to_delete];

/** The handoff for a saved plan of the caller's tenant (not_found otherwise). */
export async function activePlanHandoff(ctx: Ctx, planId: string): Promise<Handoff> {
  const meta = await getPlan(ctx, planId);
  const plan = await readVersion(ctx, meta.id, meta.version);
  const status = await stepStatuses(ctx, plan);
  const statusOf = (s: PlanStep): StepStatus => status.get(s.step_number) ?? "pending";
  const byNumber = new Map(plan.steps.map((s) => [s.step_number, s]));
  const inOrder = plan.dependency_graph.execution_order.map((n) => byNumber.get(n)!);
  const inProgress = inOrder.filter((s) => statusOf(s) === "in_progress");
  const ready = inOrder.filter((s) => statusOf(s) === "ready");
  const current = inProgress[0] ?? ready[0] ?? inOrder.find((s) => statusOf(s) !== "completed" && statusOf(s) !== "skipped") ?? null;

  const counts = Object.fromEntries(STEP_STATUSES.map((s) => [s, 0])) as Record<StepStatus, number>;
  for (const s of plan.steps) counts[statusOf(s)]++;

  const next: string[] = [];
  if (current) next.push(`${statusOf(current) === "in_progress" ? "Continue" : "Start"} step ${current.step_number}: ${cut(current.title, 200)}`);
  for (const s of [...inProgress, ...ready]) {
    if (next.length >= 3) break;
    if (s !== current) next.push(`${statusOf(s) === "in_progress" ? "Continue" : "Queue"} step ${s.step_number}: ${cut(s.title, 200)}`);
  }
  if (!current) next.push("Every step is completed or skipped: review the plan's acceptance criteria.");

  const active = [...new Set([...inProgress, ...ready].flatMap(filesOf))];
  const linked = [...new Set([...plan.context_files, ...plan.steps.flatMap(filesOf)])].sort();
  return {
    mode: "active_plan",
    plan_id: meta.id,
    plan_name: meta.name,
    plan_version: meta.version,
    plan_status: meta.status,
    objective: cut(plan.goal, 2000),
    scope_in: capped(plan.scope.included),
    scope_out: capped(plan.scope.excluded),
    constraints: capped(plan.scope.constraints),
    unresolved_risks: capped(plan.risks.map((r) => r.issue)),
    steps: { total: plan.steps.length, ...counts },
    current_step: current && {
      step_number: current.step_number,
      title: current.title,
      status: statusOf(current),
      description: cut(current.description, 800),
      acceptance_criteria: capped(current.acceptance_criteria, 5),
      files: filesOf(current).slice(0, MAX_ACTIVE_FILES),
    },
    completed_steps: inOrder
      .filter((s) => statusOf(s) === "completed")
      .slice(0, MAX_COMPLETED)
      .map((s) => ({ step_number: s.step_number, title: s.title })),
    active_files: active.slice(0, MAX_ACTIVE_FILES),
    linked_files: linked.slice(0, MAX_LINKED_FILES),
    next_actions: next,
  };
}

/** The handoff as Markdown, for the tool's text. */
export function handoffMarkdown(h: Handoff): string {
  const parts = [`## Active plan: ${h.plan_name} (${h.plan_id} v${h.plan_version}, ${h.plan_status})`, `### Objective\n${h.objective}`];
  const counts = STEP_STATUSES.filter((s) => h.steps[s] > 0).map((s) => `${h.steps[s]} ${s.replace("_", " ")}`);
  parts.push(`### Steps\n${h.steps.total} step(s): ${counts.join(", ") || "none"}.`);
  if (h.current_step) {
    const c = h.current_step;
    parts.push(
      [
        `### Current step`,
        `- Step ${c.step_number}: ${c.title} (${c.status.replace("_", " ")})`,
        ...(c.description ? [`- ${c.description}`] : []),
        ...(c.files.length ? [`- Files: ${c.files.join(", ")}`] : []),
      ].join("\n"),
    );
  }
  if (h.completed_steps.length) parts.push(["### Completed steps", ...h.completed_steps.map((s) => `- Step ${s.step_number}: ${s.title}`)].join("\n"));
  if (h.unresolved_risks.length) parts.push(["### Risks", ...h.unresolved_risks.map((r) => `- ${r}`)].join("\n"));
  if (h.next_actions.length) parts.push(["### Next actions", ...h.next_actions.map((a) => `- ${a}`)].join("\n"));
  if (h.active_files.length) parts.push(`### Files in play\n${h.active_files.join(", ")}`);
  return parts.join("\n\n");
}
