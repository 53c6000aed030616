/**
 * create_plan and refine_plan (seed 004 "Planning Tools"): plans written by the language model,
 * grounded in the code index (create_plan gathers context the way get_context_for_prompt does),
 * validated as any saved plan is, and saved through the store (save_plan's path for a new plan, a
 * new version for a refinement). Answered as the seed's Markdown report with the whole plan in a
 * <details> block; structuredContent carries the plan and what was saved.
 */
import { z } from "zod";
import type { PackedFile } from "../../code/context";
import { promptContext, type PromptContext } from "../../code/prompt-context";
import { indexedOf, indexesField, optionalRepoField } from "../../code/tools/common";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { requireModel } from "../../llm";
import { boundedJson } from "../../core/bounds";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { excerpt, invalidInput, ToolError } from "../../core/errors";
import { diffPlans } from "../document/diff";
import { draftPlan, MAX_PROMPT_PLAN_CHARS, promptPlan, redraftPlan, type Drafted } from "../drafting/prompt";
import { planReport } from "../drafting/report";
import { nameField, parsePlan, planIdParam, planParam, tagsField } from "../document/params";
import { savedSchema, savePlan, type Saved } from "../store/saving";
import { completePlan, planContent, planSchema, type Plan } from "../document/schema";
import { appendFollowingSteps } from "../progress/engine";
import { findPlan, findPlanByName, getPlan, readVersion, type PlanMeta } from "../store/model";

const rangeError = (name: string, lo: number, hi: number) => `Invalid ${name} parameter: must be a number between ${lo} and ${hi}`;
const intIn = (name: string, lo: number, hi: number) =>
  z
    .number({ error: rangeError(name, lo, hi) })
    .int(rangeError(name, lo, hi))
    .min(lo, rangeError(name, lo, hi))
    .max(hi, rangeError(name, lo, hi));
const globs = (d: string) => z.array(z.string().min(1).max(300)).max(20).optional().describe(d);

/** What to do without a model, before how an operator adds one (the hint stays within the error's bound). */
const WRITE_IT_YOURSELF =
  'Or write the plan yourself (get_context_for_prompt gives the code) and store it with save_plan, e.g. save_plan {"plan": {"goal": "Add rate limiting", "steps": [{"step_number": 1, "title": "Add a limiter", "files_to_create": [{"path": "src/limit.ts"}]}, {"step_number": 2, "title": "Test it", "depends_on": [1]}]}}.';
const EDIT_IT_YOURSELF = 'Or edit the plan yourself (load_plan gives it) and store it, same id, as the next version with save_plan {"plan": "<plan>", "overwrite": true}.';

// ---------------------------------------------------------------------------------------------
// The answer both tools give

const contextOut = z
  .object({
    files: z
      .array(
        z.object({
          repo: z.string().describe("owner/name."),
          path: z.string().describe("File path."),
          reason: z.enum(["pinned", "match", "related"]).describe("match: found by the task; related: imported by a match."),
          relevance: z.number().describe("0–1 (0 for related files)."),
          whole: z.boolean().describe("The whole file, or excerpts."),
          tokens: z.number().int().describe("Estimated tokens shown to the model."),
        }),
      )
      .describe("The code the model was shown, most relevant first."),
    tokens_used: z.number().int().describe("Estimated tokens of code shown."),
    token_budget: z.number().int().describe("context_token_budget."),
    indexes: indexesField,
    warning: z.string().optional().describe("Why the plan had less context than asked for: no index, nothing matched, or an index behind its branch."),
  })
  .describe("The code context the plan was made from (create_plan).");

const draftedOutput = z.object({
  plan: planSchema,
  status: z.enum(["ready", "needs_clarification"]).describe("needs_clarification when the plan asks questions_for_clarification (answer them with refine_plan's clarifications)."),
  saved: savedSchema.optional().describe("What was saved, as save_plan answers; absent when nothing was (auto_save: false, or refining a plan that is not in the store)."),
  context: contextOut.optional(),
  changes: z
    .object({
      summary: z.string().describe("One line: what the refinement changed."),
      steps_added: z.array(z.number().int()).describe("New step numbers."),
      steps_removed: z.array(z.number().int()).describe("Step numbers gone."),
      steps_modified: z.array(z.number().int()).describe("Steps whose content changed."),
    })
    .optional()
    .describe("What refine_plan changed (compare_plan_versions gives the detail)."),
  model: z.string().describe("provider:model that wrote the plan."),
  warnings: z.array(z.string()).describe("Things to know: masked secrets, missing context, steps changed outside focus_steps."),
});
type DraftedOutput = z.input<typeof draftedOutput>;

function savedLine(r: z.output<typeof draftedOutput>, notSaved: string): string {
  if (!r.saved) return notSaved;
  const s = r.saved;
  return `${s.created ? "✅ Saved" : s.changed ? "✅ Saved as a new version" : "Unchanged"} as "${s.plan.name}" (plan_id ${s.plan_id}, v${s.version})`;
}

const statusOf = (plan: Plan) => (plan.questions_for_clarification.length > 0 ? ("needs_clarification" as const) : ("ready" as const));

// ---------------------------------------------------------------------------------------------
// create_plan

const planNameTaken = (name: string, meta: PlanMeta) =>
  new ToolError("conflict", `A plan named '${excerpt(name, 100)}' already exists (plan_id ${meta.id}, v${meta.version}).`, {
    hint: "Pass save_overwrite: true to store the new plan as its next version (view_history keeps the old ones), choose another save_name, or auto_save: false.",
  });

const NO_INDEX = "No repository of this tenant has a code index, so the plan was made from the task alone; index_workspace a repository for plans grounded in its code.";

/** The code for the task, or none (with why) when the tenant has no index and no repo was named. */
async function contextFor(
  ctx: Ctx,
  input: { task: string; repo?: string; max_context_files: number; context_token_budget: number; include_paths?: string[]; exclude_paths?: string[] },
): Promise<PromptContext | null> {
  try {
    return await promptContext(ctx, {
      query: input.task.slice(0, 1000),
      repo: input.repo,
      maxFiles: input.max_context_files,
      tokenBudget: input.context_token_budget,
      includeRelated: true,
      minRelevance: 0.3,
      includePaths: input.include_paths,
      excludePaths: input.exclude_paths,
      bypassCache: false,
    });
  } catch (err) {
    // A repository the caller named must be indexed; without one named, planning goes on without code.
    if (input.repo === undefined && err instanceof ToolError && err.code === "index_not_found") return null;
    throw err;
  }
}

export const createPlanTool = defineTool({
  name: "create_plan",
  title: "Create a plan",
  toolset: "plans",
  description:
    "Generate an implementation plan (EnhancedPlanOutput) for a task with the language model, from the most relevant code in the code index (as get_context_for_prompt finds it; without an index the plan is made from the task alone, with a warning). The plan is validated like save_plan's and saved by default (auto_save). Returns a Markdown report with the full plan JSON in a <details> block.",
  input: z.object({
    task: z
      .string({ error: "Task is required and must be a non-empty string" })
      .trim()
      .min(1, "Task is required and must be a non-empty string")
      .max(10_000)
      .describe("The task or goal to plan for: what to build or change, and any constraints."),
    max_context_files: intIn("max_context_files", 1, 20).default(10).describe("Most files of code context to plan from."),
    context_token_budget: intIn("context_token_budget", 500, 100_000).default(12_000).describe("Token budget for the code context."),
    generate_diagrams: z.boolean().default(true).describe("Add Mermaid diagrams of the plan to architecture.diagrams (made from the plan, not by the model)."),
    mvp_only: z.boolean().default(false).describe("Plan the minimum that delivers the task; no nice-to-have features."),
    include_paths: globs("Only code at paths matching these globs."),
    exclude_paths: globs("Leave out code at paths matching these globs."),
    repo: optionalRepoField,
    auto_save: z.boolean().default(true).describe("Save the plan (as save_plan does), so load_plan, refine_plan and the execution tools find it."),
    save_name: nameField.optional().describe("Name to save it under; defaults to the first words of the goal. A name a plan already has is refused unless save_overwrite."),
    save_tags: tagsField.optional().describe("Tags to save it with."),
    save_overwrite: z.boolean().default(false).describe("When save_name names a saved plan, store this plan as that plan's next version."),
  }),
  output: draftedOutput,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotency: "derived",
  run: async (ctx, input) => {
    const model = requireModel(ctx.env, "create_plan", WRITE_IT_YOURSELF);
    const target = input.auto_save && input.save_name ? await findPlanByName(ctx, input.save_name) : null;
    if (target && !input.save_overwrite) throw planNameTaken(input.save_name!, target);

    const found = await contextFor(ctx, input);
    const files: PackedFile[] = found?.packed.files ?? [];
    const warnings = [
      ...(found === null ? [NO_INDEX] : files.length === 0 ? ["Nothing in the code index matched the task, so the plan was made from the task alone."] : []),
      ...(found?.freshness.warning ? [found.freshness.warning] : []),
    ];
    const now = iso(ctx.clock.now());
    const drafted = await draftPlan(model, {
      task: input.task,
      mvpOnly: input.mvp_only,
      generateDiagrams: input.generate_diagrams,
      files,
      contextNote:
        found === null ? "no repository has a code index." : files.length === 0 ? "nothing in the code index matched the task." : found.freshness.warning ? "the index is behind its branch" : "",
      stamp: { id: target?.id ?? uuidv7(ctx.clock.now().getTime()), version: 1, created_at: now, updated_at: now },
    });
    let plan = drafted.plan;
    let saved: Saved | undefined;
    if (input.auto_save) {
      const { stored, ...rest } = await savePlan(ctx, plan, { name: input.save_name, tags: input.save_tags, overwrite: input.save_overwrite });
      plan = stored;
      saved = rest;
    }
    const context = {
      files: files.map((f) => ({ repo: f.repo, path: f.path, reason: f.reason, relevance: f.relevance, whole: f.whole, tokens: f.tokens })),
      tokens_used: found?.packed.tokens_used ?? 0,
      token_budget: input.context_token_budget,
      indexes: (found?.indexes ?? []).map(indexedOf),
      ...(warnings.length > 0 ? { warning: warnings.join(" ") } : {}),
    };
    return answer(drafted, plan, saved, { context, warnings: [...warnings, ...drafted.warnings] });
  },
  text: (r) =>
    planReport({
      plan: r.plan,
      status: r.status,
      model: r.model,
      warnings: r.warnings,
      saved: savedLine(r, "Not saved (auto_save: false); save_plan saves it."),
      context: r.context && [
        r.context.files.length > 0
          ? `${r.context.files.length} file(s) from ${r.context.indexes.map((i) => `${i.repo}@${i.ref}`).join(", ")}, about ${r.context.tokens_used} of ${r.context.token_budget} tokens: ${r.context.files.map((f) => f.path).join(", ")}`
          : "No code context.",
      ],
    }),
});

function answer(drafted: Drafted, plan: Plan, saved: Saved | undefined, extra: Pick<DraftedOutput, "context" | "changes"> & { warnings: string[] }): DraftedOutput {
  return {
    plan,
    status: statusOf(plan),
    ...(saved ? { saved } : {}),
    ...(extra.context ? { context: extra.context } : {}),
    ...(extra.changes ? { changes: extra.changes } : {}),
    model: drafted.model,
    warnings: extra.warnings,
  };
}

// ---------------------------------------------------------------------------------------------
// refine_plan

const MAX_CLARIFICATIONS_BYTES = 50_000;
const clarificationsSchema = z.record(z.string().min(1).max(1000), z.string().max(5000)).refine((o) => Object.keys(o).length <= 50, "at most 50 answers");

function parseClarifications(raw: string | Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (raw === undefined) return undefined;
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw invalidInput("clarifications must be valid JSON", 'Pass a JSON object of question → answer, e.g. {"Which database?": "D1"}.');
    }
  }
  const parsed = clarificationsSchema.safeParse(value);
  if (!parsed.success) {
    throw invalidInput(
      "clarifications must be a JSON object of question → answer strings (at most 50, questions up to 1000 characters, answers up to 5000).",
      'Pass e.g. {"Which database?": "D1"}; the plan\'s questions_for_clarification are the questions.',
    );
  }
  return parsed.data;
}

/** The plan refine_plan works on, and its store row when it is saved. */
async function planToRefine(ctx: Ctx, input: { current_plan?: string | Record<string, unknown>; plan_id?: string }): Promise<{ current: Plan; meta: PlanMeta | null }> {
  if ((input.current_plan === undefined) === (input.plan_id === undefined)) {
    throw invalidInput("Pass exactly one of current_plan and plan_id.", "plan_id refines a saved plan (its current version); current_plan refines the plan you pass.");
  }
  if (input.plan_id !== undefined) {
    const meta = await getPlan(ctx, input.plan_id);
    return { current: await readVersion(ctx, meta.id, meta.version), meta };
  }
  const doc = parsePlan(input.current_plan!, "refine_plan", "current_plan");
  const meta = doc.id ? await findPlan(ctx, doc.id) : null;
  if (meta && doc.version !== undefined && doc.version !== meta.version) {
    throw new ToolError("conflict", `current_plan is version ${doc.version} of plan ${meta.id}, whose current version is ${meta.version}.`, {
      hint: "Refine the current version (pass plan_id instead), or pass auto_save: false to refine this version without saving.",
    });
  }
  const now = iso(ctx.clock.now());
  const current = completePlan(doc, {
    id: doc.id ?? uuidv7(ctx.clock.now().getTime()),
    version: meta?.version ?? doc.version ?? 1,
    created_at: meta?.created_at ?? doc.created_at ?? now,
    updated_at: doc.updated_at ?? now,
  });
  return { current, meta };
}

function changeSummary(feedback: string | undefined, answered: number, focus: number[] | undefined): string {
  const what = [
    ...(feedback ? [excerpt(feedback.replace(/\s+/g, " "), 200)] : []),
    ...(answered > 0 ? [`${answered} clarification(s) answered`] : []),
    ...(focus?.length ? [`focus on step(s) ${focus.join(", ")}`] : []),
  ];
  return `Refined: ${what.length > 0 ? what.join("; ") : "detail added"}`;
}

export const refinePlanTool = defineTool({
  name: "refine_plan",
  title: "Refine a plan",
  toolset: "plans",
  description:
    "Refine a plan with the language model: add detail, take feedback, answer its clarifying questions, optionally only some steps. Pass the plan (current_plan) or a saved plan's plan_id. The refined plan keeps its id and is validated like save_plan's; a saved plan gets it as its next version (auto_save). Returns a Markdown report with the full plan JSON in a <details> block.",
  input: z.object({
    current_plan: planParam.optional().describe("The plan to refine (EnhancedPlanOutput): a JSON string or the object. Or plan_id."),
    plan_id: planIdParam.optional().describe("A saved plan to refine (its current version), instead of current_plan."),
    feedback: z.string().trim().min(1).max(10_000).optional().describe("What to change, add or reconsider."),
    clarifications: z
      .union([boundedJson(z.record(z.string().max(1000), z.unknown()), { maxBytes: MAX_CLARIFICATIONS_BYTES, maxDepth: 2 }), z.string().min(1).max(MAX_CLARIFICATIONS_BYTES)])
      .optional()
      .describe("Answers to the plan's questions_for_clarification: a JSON object of question → answer, or that object as a JSON string (the seed's form)."),
    focus_steps: z.array(z.number().int().min(1).max(100_000)).min(1).max(200).optional().describe("Step numbers to refine; the model is asked to keep the others as they are."),
    auto_save: z.boolean().default(true).describe("When the plan is saved (plan_id, or a current_plan whose id is saved), store the refinement as its next version."),
  }),
  output: draftedOutput,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotency: "derived",
  run: async (ctx, input) => {
    const clarifications = parseClarifications(input.clarifications);
    const { current, meta } = await planToRefine(ctx, input);
    const focus = input.focus_steps ? [...new Set(input.focus_steps)].sort((a, b) => a - b) : undefined;
    const missing = (focus ?? []).filter((n) => !current.steps.some((s) => s.step_number === n));
    if (missing.length > 0) {
      throw invalidInput(
        `focus_steps names step(s) ${missing.join(", ")}, not in the plan.`,
        `The plan's steps are ${current.steps
          .map((s) => s.step_number)
          .join(", ")
          .slice(0, 300)}.`,
      );
    }
    if (promptPlan(current).length > MAX_PROMPT_PLAN_CHARS) {
      throw invalidInput(
        `The plan is too large to refine in one call (over ${MAX_PROMPT_PLAN_CHARS} characters of JSON).`,
        "Split it into smaller plans, or edit it yourself and save it with save_plan (overwrite: true).",
      );
    }
    const model = requireModel(ctx.env, "refine_plan", EDIT_IT_YOURSELF);
    const drafted = await redraftPlan(model, {
      current,
      feedback: input.feedback,
      clarifications,
      focusSteps: focus,
      stamp: { id: current.id, version: (meta?.version ?? current.version) + 1, created_at: current.created_at, updated_at: iso(ctx.clock.now()) },
    });
    const diff = diffPlans(current, drafted.plan);
    const changes = {
      summary: diff.summary,
      steps_added: diff.steps_added,
      steps_removed: diff.steps_removed,
      steps_modified: diff.steps_modified.map((s) => s.step_number),
    };
    const warnings = [...drafted.warnings];
    if (focus) {
      const outside = [...diff.steps_added, ...diff.steps_removed, ...changes.steps_modified].filter((n) => !focus.includes(n)).sort((a, b) => a - b);
      if (outside.length > 0) warnings.push(`The model also changed step(s) outside focus_steps: ${outside.join(", ")}.`);
    }
    let plan = drafted.plan;
    let saved: Saved | undefined;
    if (meta && input.auto_save) {
      if (planContent(plan) === planContent(current)) {
        plan = current;
        saved = { plan_id: meta.id, version: meta.version, created: false, changed: false, plan: meta };
      } else {
        const after = await appendFollowingSteps(ctx, meta, plan, { type: "modified", summary: changeSummary(input.feedback, Object.keys(clarifications ?? {}).length, focus) });
        saved = { plan_id: after.id, version: after.version, created: false, changed: true, plan: after };
      }
    }
    return answer(drafted, plan, saved, { changes, warnings });
  },
  text: (r, input) =>
    planReport({
      plan: r.plan,
      status: r.status,
      model: r.model,
      warnings: r.warnings,
      saved: savedLine(r, input.auto_save ? "Not saved: the plan is not in the store; save_plan saves it." : "Not saved (auto_save: false)."),
      changes: r.changes && `${r.changes.summary}.`,
    }),
});
