/**
 * A plan as the tools take it (a JSON string, as the seed sends it, or the object itself), and the
 * one way a plan document is saved: save_plan, and create_plan's auto_save, go through savePlan.
 */
import { z } from "zod";
import { uuidv7 } from "../db/ids";
import { iso } from "../db/time";
import { boundedJson, jsonBytes } from "../mcp/bounds";
import type { Ctx } from "../mcp/context";
import { invalidInput } from "../mcp/errors";
import { parseArgs } from "../mcp/inputs";
import { completePlan, MAX_PLAN_BYTES, nameFromGoal, planContent, planIdField, planInputSchema, type Plan, type PlanInput } from "./schema";
import { appendVersion, findPlan, insertPlan, planExists, planMetaSchema, readVersion, relabel } from "./store";

export const planIdParam = planIdField.describe("The plan's id.");
/** A plan's labels: its name (load_plan finds it case-insensitively) and tags (list_plans filters by them). */
export const nameField = z.string().trim().min(1).max(200);
export const tagsField = z.array(z.string().trim().min(1).max(50)).max(20);

/**
 * Both forms are bounded here, before any parsing; the document itself is validated against
 * planInputSchema by parsePlan, so its errors can name the step at fault.
 */
export const planParam = z.union([
  z.string().min(1).max(MAX_PLAN_BYTES),
  boundedJson(z.record(z.string().max(200), z.unknown()), { maxBytes: MAX_PLAN_BYTES, maxDepth: 10 }),
]).describe("The plan (EnhancedPlanOutput): a JSON string, as the reference takes it, or the object itself. Up to 256 KB and 200 steps.");

/** A plan parameter (`param` names it in errors) as a validated plan document. */
export function parsePlan(raw: string | Record<string, unknown>, tool: string, param = "plan"): PlanInput {
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw invalidInput(`${param} must be valid JSON`, `Pass the plan as a JSON object, or as a string holding one.`);
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) throw invalidInput(`${param} must be a JSON object`, "Pass the plan (EnhancedPlanOutput) as one JSON object.");
    // A string plan is bounded in characters by the schema; its parsed form is bounded the same way an object plan is.
    if (jsonBytes(value) > MAX_PLAN_BYTES) throw invalidInput(`${param} is larger than ${MAX_PLAN_BYTES / 1024}KB as JSON.`, "Split the work into several plans.");
  }
  return parseArgs(z.object({ [param]: planInputSchema }), { [param]: value }, tool)[param] as PlanInput;
}

export const savedSchema = z.object({
  plan_id: z.string().describe("The plan's id."),
  version: z.number().int().describe("The current version after the save."),
  created: z.boolean().describe("True when this call created the plan."),
  changed: z.boolean().describe("False when the plan, its name and its tags were already so."),
  plan: planMetaSchema.describe("The plan's metadata after the save."),
});
export type Saved = z.infer<typeof savedSchema>;

export interface SaveOptions {
  /** Defaults to the first words of the goal, or the current name on overwrite. */
  name?: string;
  tags?: string[];
  overwrite: boolean;
}

const today = (ctx: Ctx) => iso(ctx.clock.now()).slice(0, 10);

/**
 * Saves a plan document: new under its id (or a fresh one), or, with overwrite, as the next version
 * of the plan with that id (no version when nothing changed). `stored` is the plan as saved.
 */
export async function savePlan(ctx: Ctx, doc: PlanInput, opts: SaveOptions): Promise<Saved & { stored: Plan }> {
  const now = iso(ctx.clock.now());
  const id = doc.id ?? uuidv7(ctx.clock.now().getTime());
  const existing = await findPlan(ctx, id);
  if (!existing) {
    const plan = completePlan(doc, { id, version: 1, created_at: now, updated_at: now });
    const meta = await insertPlan(ctx, plan, { name: opts.name ?? nameFromGoal(plan.goal, today(ctx)), tags: [...new Set(opts.tags ?? [])] });
    return { plan_id: id, version: 1, created: true, changed: true, plan: meta, stored: plan };
  }
  if (!opts.overwrite) throw planExists(id);
  const current = await readVersion(ctx, id, existing.version);
  const plan = completePlan(doc, { id, version: existing.version + 1, created_at: current.created_at, updated_at: now });
  const labels = { name: opts.name ?? existing.name, tags: opts.tags ? [...new Set(opts.tags)] : existing.tags };
  const relabelled = labels.name !== existing.name || labels.tags.join("\u0000") !== existing.tags.join("\u0000");
  if (planContent(plan) === planContent(current)) {
    if (!relabelled) return { plan_id: id, version: existing.version, created: false, changed: false, plan: existing, stored: current };
    const meta = await relabel(ctx, existing, labels);
    return { plan_id: id, version: meta.version, created: false, changed: true, plan: meta, stored: current };
  }
  const meta = await appendVersion(ctx, existing, plan, { type: "modified", summary: "Plan saved with overwrite", ...labels });
  return { plan_id: id, version: meta.version, created: false, changed: true, plan: meta, stored: plan };
}
