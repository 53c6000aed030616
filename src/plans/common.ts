/**
 * What the plan tools share: the plan as they take it (a JSON string, the seed's form, or an
 * object, bounded before parsing), and what to say when a tool that needs a model has none.
 */
import { z } from "zod";
import { boundedJson, jsonBytes } from "../mcp/bounds";
import { invalidInput } from "../mcp/errors";
import { parseArgs } from "../mcp/inputs";
import { MAX_PLAN_BYTES, planInputSchema, type PlanInput } from "./schema";

/**
 * The plan as the seed sends it (a JSON string) or as an object. Both are bounded here, before any
 * parsing; the document itself is validated against planInputSchema in the handler, so its errors
 * can name the step at fault.
 */
export const planParam = z.union([
  z.string().min(1).max(MAX_PLAN_BYTES),
  boundedJson(z.record(z.string().max(200), z.unknown()), { maxBytes: MAX_PLAN_BYTES, maxDepth: 10 }),
]).describe("The plan (EnhancedPlanOutput): a JSON string, as the reference takes it, or the object itself. Up to 256 KB and 200 steps.");

export function parsePlan(raw: string | Record<string, unknown>, tool: string): PlanInput {
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw invalidInput("plan must be valid JSON", "Pass the plan as a JSON object, or as a string holding one.");
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) throw invalidInput("plan must be a JSON object", "Pass the plan (EnhancedPlanOutput) as one JSON object.");
    // A string plan is bounded in characters by the schema; its parsed form is bounded the same way an object plan is.
    if (jsonBytes(value) > MAX_PLAN_BYTES) throw invalidInput(`plan is larger than ${MAX_PLAN_BYTES / 1024}KB as JSON.`, "Split the work into several plans.");
  }
  return parseArgs(z.object({ plan: planInputSchema }), { plan: value }, tool).plan;
}

/** The plan tools that need no language model, named where one that needs it refuses. */
export const WITHOUT_A_MODEL =
  "Without a model: save_plan stores a plan written by hand, start_step, complete_step and fail_step track its steps as they are done, and plan_to_tasks turns it into tasks.";
