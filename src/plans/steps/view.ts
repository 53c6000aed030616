/** view_progress (seed 004 "Execution tracking"): where a saved plan's steps stand. */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { impliedStatus, progressSchema, stepStateSchema, summarize } from "../progress/engine";
import { planIdParam } from "../document/params";
import { PLAN_STATUSES } from "../document/schema";
import { load } from "./model";

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
    implied_status: z
      .enum(PLAN_STATUSES)
      .describe("The status the steps imply (completed once every step is completed or skipped, …); differs from plan_status when tasks moved the steps since the last step tool call."),
    progress: progressSchema.describe("Counts and percentage."),
    ready_steps: z.array(z.number().int()).describe("Steps ready to start."),
    current_steps: z.array(z.number().int()).describe("Steps in progress."),
    steps: z.array(stepStateSchema).describe("Every step, in plan order."),
  }),
  annotations: READ_ONLY,
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
  summarize: (r) =>
    `Plan ${r.plan_id} v${r.plan_version}: ${r.progress.percentage}% (${r.progress.completed_steps}/${r.progress.total_steps} completed, ${r.progress.in_progress_steps} in progress, ${r.progress.ready_steps} ready).`,
});
