/**
 * view_history, compare_plan_versions and rollback_plan (seed 004 "Persistence Tools"): every
 * version a plan had, what changed between two, and an old one made current again as a new version.
 */
import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { diffPlans, planDiffSchema } from "../document/diff";
import { planIdParam, versionField } from "../document/params";
import { planSchema, type Plan } from "../document/schema";
import { appendFollowingSteps } from "../progress/engine";
import { CHANGE_TYPES, getPlan, listVersions, MAX_VERSIONS, parseStored, planMetaSchema, readVersion } from "./model";

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
  annotations: READ_ONLY,
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
  annotations: READ_ONLY,
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
  description:
    "Make an earlier version of a plan current again, as a NEW version with the same content (history is never rewritten, so the rollback itself can be undone). Step progress carries over by step number; the status becomes what the steps imply (ready if none has moved).",
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
