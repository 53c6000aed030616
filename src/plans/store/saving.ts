/**
 * The one way a plan document is saved: save_plan, and create_plan's auto_save, go through savePlan.
 * Apart from model.ts because a new version carries the steps' progress over (progress/engine.ts),
 * and the progress engine reads the model: in one file they would import each other.
 */
import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import { completePlan, nameFromGoal, planContent, type Plan, type PlanInput } from "../document/schema";
import { appendFollowingSteps } from "../progress/engine";
import { findPlan, insertPlan, planExists, planMetaSchema, readVersion, relabel } from "./model";

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
  const meta = await appendFollowingSteps(ctx, existing, plan, { type: "modified", summary: "Plan saved with overwrite", ...labels });
  return { plan_id: id, version: meta.version, created: false, changed: true, plan: meta, stored: plan };
}
