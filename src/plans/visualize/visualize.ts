/** visualize_plan (seed 004 "Planning Tools"): a Mermaid diagram of a plan passed in or of a saved one. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { planParam, parsePlan, versionField } from "../document/params";
import { completePlan, planIdField, type Plan } from "../document/schema";
import { findPlan, planNotFound, readVersion } from "../store/model";
import { DEFAULT_EFFORT_HOURS, DIAGRAM_KINDS, drawPlan, MAX_DIAGRAM_CHARS, MAX_EDGES, MAX_FILES } from "../diagrams/draw";

interface Source {
  plan?: string | Record<string, unknown>;
  plan_id?: string;
  version?: number;
}

/**
 * The plan to draw. One passed in is validated as save_plan validates it and drawn as it would be
 * stored; its id and version are its own (the reference answers plan.id and plan.version), "" and 0
 * when it has none.
 */
async function planToDraw(ctx: Ctx, input: Source): Promise<Plan> {
  if (input.plan !== undefined && input.plan_id !== undefined) {
    throw invalidInput("Pass plan or plan_id, not both.", "Pass the plan itself, or the id of a saved one (list_plans shows them).");
  }
  if (input.plan !== undefined) {
    if (input.version !== undefined) throw invalidInput("version goes with plan_id.", "Drop version, or pass plan_id instead of plan to draw a saved version.");
    const doc = parsePlan(input.plan, "visualize_plan");
    return completePlan(doc, { id: doc.id ?? "", version: doc.version ?? 0, created_at: doc.created_at ?? "", updated_at: doc.updated_at ?? "" });
  }
  if (input.plan_id === undefined) {
    throw invalidInput("Either plan or plan_id is required", "Pass plan (the EnhancedPlanOutput, as JSON), or plan_id of a saved plan (list_plans shows them).");
  }
  const meta = await findPlan(ctx, input.plan_id);
  if (!meta) throw planNotFound(input.plan_id);
  return readVersion(ctx, meta.id, input.version ?? meta.version);
}

const TITLES = { dependencies: "Dependencies", architecture: "Files by directory", gantt: "Gantt chart" } as const;

export const visualizePlanTool = defineTool({
  name: "visualize_plan",
  title: "Draw a plan as a Mermaid diagram",
  toolset: "plans",
  description:
    "A Mermaid diagram of a plan. dependencies: a flowchart with a node per step (grouped by milestone) and an arrow per depends_on, the critical path bold and coloured. " +
    "architecture: the files the steps create, modify, rename or delete, grouped by directory and marked by what happens to each, with an arrow from each step to the files it changes. " +
    `gantt: a task per step after the steps it depends on, a section per milestone, durations from estimated_effort (a range counts as its upper end; a day is 8 hours, a week 40; ${DEFAULT_EFFORT_HOURS} hours when unreadable), the axis in hours from the start. ` +
    `Pass the plan, or plan_id (and version) of a saved one. The same plan always gives the same text. Every diagram fits Mermaid's default limits (${MAX_DIAGRAM_CHARS} characters, ${MAX_EDGES} edges; architecture shows at most ${MAX_FILES} files); notes say what was left out or assumed.`,
  input: z.object({
    plan: planParam.optional().describe("The plan (EnhancedPlanOutput) to draw: a JSON string, as the reference takes it, or the object itself; up to 256 KB and 200 steps. Or pass plan_id."),
    plan_id: planIdField.optional().describe("A saved plan to draw, instead of plan."),
    version: versionField("With plan_id: the version to draw; the current one by default.").optional(),
    diagram_type: z.enum(DIAGRAM_KINDS).default("dependencies").describe("dependencies (default), architecture or gantt."),
  }),
  output: z.object({
    diagram_type: z.enum(DIAGRAM_KINDS).describe("The diagram drawn."),
    mermaid: z.string().describe("The Mermaid source."),
    plan_id: z.string().describe("The plan's id; empty for a plan passed in without one."),
    plan_version: z.number().int().describe("The plan's version; 0 for a plan passed in without one."),
    truncated: z.boolean().describe("True when part of the plan is left out of the diagram."),
    notes: z.array(z.string()).describe("What was left out or assumed, if anything."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const plan = await planToDraw(ctx, input);
    const { mermaid, truncated, notes } = drawPlan(plan, input.diagram_type);
    return { diagram_type: input.diagram_type, mermaid, plan_id: plan.id, plan_version: plan.version, truncated, notes };
  },
  text: (r) => {
    const of = r.plan_id ? `plan ${r.plan_id}${r.plan_version > 0 ? ` v${r.plan_version}` : ""}` : "the plan";
    const notes = r.notes.length > 0 ? `\n\n${r.notes.map((n) => `- ${n}`).join("\n")}` : "";
    return `${TITLES[r.diagram_type]} of ${of}${r.truncated ? " (truncated)" : ""}:\n\n\`\`\`mermaid\n${r.mermaid}\n\`\`\`${notes}`;
  },
});
