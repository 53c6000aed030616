/** load_plan and list_plans (seed 004 "Persistence Tools"): a saved plan by id or name, and the plans' metadata. */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { nameField, planIdParam, tagsField } from "../document/params";
import { PLAN_STATUSES, planSchema } from "../document/schema";
import { findPlan, findPlanByName, listPlans, planMetaSchema, planNotFound, readVersion } from "./model";
import { keysetPage } from "../../core/cursor";
import { cursorField, limitField } from "../../work/shared";

export const loadPlanTool = defineTool({
  name: "load_plan",
  title: "Load a plan",
  toolset: "plans",
  description: "Load a saved plan, current version, by plan_id or by name (case-insensitive; a name several plans share means the one changed last).",
  input: z.object({
    plan_id: planIdParam.optional(),
    name: nameField.optional().describe("The plan's name (alternative to plan_id)."),
  }),
  output: z.object({ plan: planSchema, meta: planMetaSchema.describe("The plan's metadata: name, status, tags, versions.") }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    if (input.plan_id === undefined && input.name === undefined) {
      throw invalidInput("Either plan_id or name is required", "Pass plan_id, or the plan's name; list_plans shows both.");
    }
    if (input.plan_id !== undefined && input.name !== undefined) throw invalidInput("Pass plan_id or name, not both.", "Name the plan one way.");
    const meta = input.plan_id !== undefined ? await findPlan(ctx, input.plan_id) : await findPlanByName(ctx, input.name!);
    if (!meta) throw input.plan_id !== undefined ? planNotFound(input.plan_id) : planNotFound(`named '${input.name}'`);
    return { plan: await readVersion(ctx, meta.id, meta.version), meta };
  },
  summarize: (r) => `Plan ${r.meta.id} (${r.meta.name}) v${r.meta.version}, ${r.meta.step_count} step(s), ${r.meta.status}.`,
});

export const listPlansTool = defineTool({
  name: "list_plans",
  title: "List plans",
  toolset: "plans",
  description: "Saved plans' metadata, most recently changed first, optionally by status and tags (a plan matches when it has any of the tags).",
  input: z.object({
    status: z.enum(PLAN_STATUSES).optional().describe("Only plans in this status."),
    tags: tagsField.optional().describe("Only plans with at least one of these tags."),
    limit: limitField(20, 100),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(planMetaSchema).describe("Plans, most recently changed first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const rows = await listPlans(ctx, { status: input.status, tags: input.tags, limit: input.limit + 1, cursor: input.cursor });
    const { page, cursor } = keysetPage(rows, input.limit, (p) => [p.updated_at, p.id]);
    return { items: page, ...cursor };
  },
  summarize: (r) => `${r.items.length} plan(s)${r.next_cursor ? ", more with next_cursor" : ""}.`,
});
