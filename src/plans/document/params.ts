/** Parameters the plan tools share: a plan passed in, a saved plan's id, a version, a plan's labels. */
import { z } from "zod";
import { boundedJson, jsonBytes } from "../../core/bounds";
import { invalidInput } from "../../core/errors";
import { parseArgs } from "../../core/inputs";
import { advertisedAs } from "../../core/json-schema";
import { MAX_PLAN_BYTES, planIdField, planInputSchema, type PlanInput } from "./schema";
import { MAX_VERSIONS } from "../store/model";

export const planIdParam = planIdField.describe("The plan's id.");
export const versionField = (d: string) => z.number().int().min(1).max(MAX_VERSIONS).describe(d);
/** A plan's labels: its name (load_plan finds it case-insensitively) and tags (list_plans filters by them). */
export const nameField = z.string().trim().min(1).max(200);
export const tagsField = z.array(z.string().trim().min(1).max(50)).max(20);

/**
 * The plan as the seed sends it (a JSON string) or as an object. Both are bounded here, before any
 * parsing; the document itself is validated against planInputSchema by parsePlan, so its errors
 * can name the step at fault. The object is listed with the plan's whole schema.
 */
export const planParam = z
  .union([z.string().min(1).max(MAX_PLAN_BYTES), advertisedAs(boundedJson(z.record(z.string().max(200), z.unknown()), { maxBytes: MAX_PLAN_BYTES, maxDepth: 10 }), planInputSchema)])
  .describe("The plan (EnhancedPlanOutput): a JSON string, as the reference takes it, or the object itself. Up to 256 KB and 200 steps.");

/** A plan parameter (`param` names it in errors) as a validated plan document. */
export function parsePlan(raw: string | Record<string, unknown>, tool: string, param = "plan"): PlanInput {
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw invalidInput(`${param} must be valid JSON`, "Pass the plan as a JSON object, or as a string holding one.");
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) throw invalidInput(`${param} must be a JSON object`, "Pass the plan (EnhancedPlanOutput) as one JSON object.");
    // A string plan is bounded in characters by the schema; its parsed form is bounded the same way an object plan is.
    if (jsonBytes(value) > MAX_PLAN_BYTES) throw invalidInput(`${param} is larger than ${MAX_PLAN_BYTES / 1024}KB as JSON.`, "Split the work into several plans.");
  }
  return parseArgs(z.object({ [param]: planInputSchema }), { [param]: value }, tool)[param] as PlanInput;
}

/** The plan tools that need no language model, named where one that needs it refuses. */
export const WITHOUT_A_MODEL =
  "Without a model: save_plan stores a plan written by hand, start_step, complete_step and fail_step track its steps as they are done, and plan_to_tasks turns it into tasks.";
