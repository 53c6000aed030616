/**
 * The plan store's tools (seed 004 "Persistence Tools"): save, load, list, delete, history, compare, rollback;
 * and planTools, every tool of the toolset (the planning tools are in generate-tools.ts).
 */
import { z } from "zod";
import { iso } from "../db/time";
import { defineTool } from "../core/define-tool";
import { invalidInput } from "../core/errors";
import { afterTimeAndId, cursorField, keysetPage, limitField } from "../work/shared";
import { approvalTools } from "./approval-tools";
import { diffPlans, planDiffSchema } from "./diff";
import { executePlanTool } from "./execute-tool";
import { createPlanTool, refinePlanTool } from "./generate-tools";
import { nameField, parsePlan, planIdParam, planParam, tagsField, versionField } from "./params";
import { appendFollowingSteps } from "./progress";
import { savedSchema, savePlan } from "./save";
import { PLAN_STATUSES, planSchema, type Plan } from "./schema";
import { stepTools } from "./steps";
import { planToTasksTool } from "./to-tasks";
import {
  CHANGE_TYPES, deletePlan, findPlan, findPlanByName, getPlan, listPlans, listVersions, MAX_VERSIONS, parseStored,
  planMetaSchema, planNotFound, readVersion,
} from "./store";
import { visualizePlanTool } from "./visualize-tool";


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
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
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
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const rows = await listPlans(ctx, { status: input.status, tags: input.tags, limit: input.limit + 1, after: afterTimeAndId(input.cursor, "updated_at", "id") });
    const { page, cursor } = keysetPage(rows, input.limit, (p) => [p.updated_at, p.id]);
    return { items: page, ...cursor };
  },
  summarize: (r) => `${r.items.length} plan(s)${r.next_cursor ? ", more with next_cursor" : ""}.`,
});

export const deletePlanTool = defineTool({
  name: "delete_plan",
  title: "Delete a plan",
  toolset: "plans",
  description: "Delete a saved plan and its whole version history.",
  input: z.object({ plan_id: planIdParam }),
  output: z.object({
    plan_id: z.string().describe("The deleted plan's id."),
    deleted: z.literal(true).describe("Always true: a missing plan is not_found."),
    versions_deleted: z.number().int().describe("Versions removed with it."),
  }),
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const versions = await deletePlan(ctx, input.plan_id);
    if (versions === null) throw planNotFound(input.plan_id);
    return { plan_id: input.plan_id, deleted: true as const, versions_deleted: versions };
  },
  summarize: (r) => `Deleted plan ${r.plan_id} and ${r.versions_deleted} version(s).`,
});

const versionSchema = z.object({
  version: z.number().int().describe("Version number."),
  change_type: z.enum(CHANGE_TYPES).describe("created, modified (saved with overwrite) or rolled_back."),
  change_summary: z.string().describe("What the change was."),
  created_at: z.string().describe("When the version was saved."),
  created_by: z.string().describe("Actor id of who saved it."),
  step_count: z.number().int().describe("Steps in this version."),
  plan: planSchema.optional().describe("The plan at this version (include_plans)."),
});

export const viewHistoryTool = defineTool({
  name: "view_history",
  title: "A plan's version history",
  toolset: "plans",
  description: "A plan's versions, newest first: who saved each, when, and why (created, modified, rolled_back). include_plans adds each version's plan.",
  input: z.object({
    plan_id: planIdParam,
    limit: z.number().int().min(1).max(MAX_VERSIONS).default(20).describe("Versions to return, newest first."),
    include_plans: z.boolean().default(false).describe("Include the whole plan in each version."),
  }),
  output: z.object({
    plan_id: z.string().describe("The plan's id."),
    current_version: z.number().int().describe("The current version."),
    created_at: z.string().describe("When the plan was first saved."),
    last_modified_at: z.string().describe("When it last changed."),
    versions: z.array(versionSchema).describe("Versions, newest first."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const meta = await getPlan(ctx, input.plan_id);
    const rows = await listVersions(ctx, meta.id, input.limit);
    const versions = rows.map((r) => {
      const plan = parseStored(r.plan);
      const { plan: _json, ...rest } = r;
      return { ...rest, step_count: plan.steps.length, ...(input.include_plans ? { plan } : {}) };
    });
    return { plan_id: meta.id, current_version: meta.version, created_at: meta.created_at, last_modified_at: meta.updated_at, versions };
  },
  summarize: (r) => `Plan ${r.plan_id}: ${r.versions.length} version(s) shown, current v${r.current_version}.`,
});

export const comparePlanVersionsTool = defineTool({
  name: "compare_plan_versions",
  title: "Compare two versions of a plan",
  toolset: "plans",
  description: "What changed from one version of a plan to another: steps added, removed and modified (with each changed field's old and new value), files, scope, risks and other fields.",
  input: z.object({
    plan_id: planIdParam,
    from_version: versionField("The earlier version."),
    to_version: versionField("The later version."),
  }),
  output: z.object({ plan_id: z.string().describe("The plan's id."), diff: planDiffSchema.describe("The differences.") }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const meta = await getPlan(ctx, input.plan_id);
    const [from, to] = await Promise.all([readVersion(ctx, meta.id, input.from_version), readVersion(ctx, meta.id, input.to_version)]);
    return { plan_id: meta.id, diff: diffPlans(from, to) };
  },
  summarize: (r) => `Plan ${r.plan_id} v${r.diff.from_version} → v${r.diff.to_version}: ${r.diff.summary}.`,
});

export const rollbackPlanTool = defineTool({
  name: "rollback_plan",
  title: "Roll a plan back to an earlier version",
  toolset: "plans",
  description: "Make an earlier version of a plan current again, as a NEW version with the same content (history is never rewritten, so the rollback itself can be undone). Step progress carries over by step number; the status becomes what the steps imply (ready if none has moved).",
  input: z.object({
    plan_id: planIdParam,
    target_version: versionField("The version to restore."),
    reason: z.string().trim().min(1).max(500).optional().describe("Why, for the history."),
  }),
  output: z.object({
    plan_id: z.string().describe("The plan's id."),
    restored_version: z.number().int().describe("The version whose content was restored."),
    new_version: z.number().int().describe("The version the rollback created."),
    plan: planMetaSchema.describe("The plan's metadata after the rollback."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const meta = await getPlan(ctx, input.plan_id);
    const old: Plan = await readVersion(ctx, meta.id, input.target_version);
    const current = await readVersion(ctx, meta.id, meta.version);
    const restored: Plan = { ...old, version: meta.version + 1, created_at: current.created_at, updated_at: iso(ctx.clock.now()) };
    const summary = `Rolled back to version ${input.target_version}${input.reason ? `: ${input.reason}` : ""}`;
    const after = await appendFollowingSteps(ctx, meta, restored, { type: "rolled_back", summary });
    return { plan_id: meta.id, restored_version: input.target_version, new_version: after.version, plan: after };
  },
  summarize: (r) => `Plan ${r.plan_id}: version ${r.restored_version} restored as v${r.new_version}.`,
});

export const planTools = [
  savePlanTool, loadPlanTool, listPlansTool, deletePlanTool, viewHistoryTool, comparePlanVersionsTool, rollbackPlanTool,
  createPlanTool, refinePlanTool, visualizePlanTool, executePlanTool, ...approvalTools, ...stepTools, planToTasksTool,
];
