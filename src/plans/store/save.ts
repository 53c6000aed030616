/** save_plan (seed 004 "Persistence Tools"): a plan document stored as a new plan or its next version. */
import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { nameField, parsePlan, planParam, tagsField } from "../document/params";
import { savedSchema, savePlan } from "./saving";

export const savePlanTool = defineTool({
  name: "save_plan",
  title: "Save a plan",
  toolset: "plans",
  description:
    "Save a plan (EnhancedPlanOutput) for later loading, approval and execution tracking. The plan is validated: step numbers unique, depends_on/blocks/can_parallel_with naming steps of the plan, no dependency cycle; its dependency_graph is computed from the steps. A plan without an id gets one. Saving an id that exists is refused unless overwrite: true, which stores the plan as the next version (view_history keeps every version); step progress carries over by step number, and the status becomes what the steps imply (ready if none has moved, executing while one has, completed or failed once all are finished); an unchanged plan adds no version.",
  input: z.object({
    plan: planParam,
    name: nameField.optional().describe("Name to find it by (load_plan matches it case-insensitively); defaults to the first words of the goal, or the current name on overwrite."),
    tags: tagsField.optional().describe("Tags for list_plans (replace the current ones on overwrite)."),
    overwrite: z.boolean().default(false).describe("Replace a plan with the same id, as a new version."),
  }),
  output: savedSchema,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const { stored: _plan, ...saved } = await savePlan(ctx, parsePlan(input.plan, "save_plan"), input);
    return saved;
  },
  summarize: (r) => `${r.created ? "Saved" : r.changed ? "Updated" : "Unchanged:"} plan ${r.plan_id} (${r.plan.name}) v${r.version}.`,
});
