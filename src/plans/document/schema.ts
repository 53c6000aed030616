/**
 * The plan document (seed 004's EnhancedPlanOutput, with the reference implementation's field names).
 * Lenient where a model or a person writing a plan leaves parts out: most fields default. Strict on
 * what the store and the execution tools rely on: step numbers unique, every step reference naming a
 * step of the plan, no dependency cycle. Unknown keys are kept (a plan is a document, and the whole
 * plan is bounded in bytes), so a plan round-trips through save_plan and load_plan unchanged.
 */
import { z } from "zod";

/** A whole plan as JSON: big enough for the reference's largest plans (200 steps), small enough for one D1 row. */
export const MAX_PLAN_BYTES = 256 * 1024;
export const MAX_STEPS = 200;
const MAX_ITEMS = 100;
const LINE = 300;
const TEXT = 10_000;
const STEP_NUMBER_MAX = 100_000;

const line = (d: string) => z.string().max(LINE).describe(d);
const text = (d: string) => z.string().max(TEXT).describe(d);
const lines = (d: string) => z.array(z.string().max(TEXT)).max(MAX_ITEMS).default([]).describe(d);
const stepNumber = z.number().int().min(1).max(STEP_NUMBER_MAX);
const stepRefs = (d: string) => z.array(stepNumber).max(MAX_STEPS).default([]).describe(d);

export const PRIORITIES = ["critical", "high", "medium", "low"] as const;
export const CHANGE_TYPES = ["create", "modify", "rename", "delete"] as const;
export const COMPLEXITIES = ["trivial", "simple", "moderate", "complex"] as const;
export const DIAGRAM_TYPES = ["architecture", "sequence", "flowchart", "er", "c4", "gantt"] as const;
export const PLAN_STATUSES = ["generating", "needs_clarification", "ready", "approved", "executing", "completed", "failed"] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

const fileChange = z
  .looseObject({
    path: z.string().min(1).max(1000).describe("File path relative to the repository root."),
    change_type: z.enum(CHANGE_TYPES).default("modify").describe("create, modify (default), rename or delete."),
    estimated_loc: z.number().int().min(0).max(1_000_000).optional().describe("Estimated lines of code affected."),
    complexity: z.enum(COMPLEXITIES).optional().describe("trivial, simple, moderate or complex."),
    reason: text("Why the file changes.").optional(),
  })
  .describe("A planned change to one file.");

const stepFields = {
  step_number: stepNumber.describe("The step's number: unique in the plan; depends_on, blocks and milestones name steps by it."),
  title: z.string().min(1).max(LINE).describe("Short title."),
  description: text("What to do.").default(""),
  files_to_modify: z.array(fileChange).max(MAX_ITEMS).default([]).describe("Files the step changes."),
  files_to_create: z.array(fileChange).max(MAX_ITEMS).default([]).describe("Files the step creates."),
  files_to_delete: z.array(z.string().min(1).max(1000)).max(MAX_ITEMS).default([]).describe("Files the step deletes."),
  depends_on: stepRefs("Step numbers that must complete before this one."),
  blocks: stepRefs("Step numbers this step blocks."),
  can_parallel_with: stepRefs("Step numbers that can run at the same time as this one."),
  priority: z.enum(PRIORITIES).default("medium").describe("critical, high, medium (default) or low."),
  estimated_effort: line('Estimated effort, e.g. "2-3 hours".').default(""),
  estimated_tokens: z.number().int().min(0).max(10_000_000).optional().describe("Estimated tokens of context the step needs."),
  acceptance_criteria: lines("How to tell the step is done."),
  rollback_strategy: text("How to undo the step if it fails.").optional(),
  outputs: z
    .array(z.looseObject({ name: line("Variable name."), description: text("What it holds.").default("") }))
    .max(MAX_ITEMS)
    .optional()
    .describe("Values the step produces for later steps."),
  input_refs: z.array(z.string().max(LINE)).max(MAX_ITEMS).optional().describe("Values of earlier steps this step uses."),
};

const stepInput = z.looseObject({
  ...stepFields,
  id: line("Identifier for references between steps; defaults to step_<step_number>.").min(1).optional(),
});
const step = z.looseObject({ ...stepFields, id: line("Identifier for references between steps (step_<step_number> unless the plan named it).").min(1) }).describe("One implementation step.");
export type PlanStep = z.output<typeof step>;

const feature = z.looseObject({
  name: z.string().min(1).max(LINE).describe("Feature name."),
  description: text("What it is.").default(""),
  steps: stepRefs("Step numbers that build it."),
});

/** Computed from the steps on every save: the graph always agrees with depends_on. */
export const dependencyGraphSchema = z
  .object({
    nodes: z.array(z.object({ id: z.string().describe("Step id."), step_number: z.number().int().describe("Step number.") })).describe("One node per step."),
    edges: z
      .array(
        z.object({
          from: z.string().describe("Id of the step depended on."),
          to: z.string().describe("Id of the dependent step."),
          type: z.enum(["blocks", "informs"]).describe("blocks: `to` cannot start before `from` completes."),
        }),
      )
      .describe("One edge per depends_on entry."),
    critical_path: z.array(z.number().int()).describe("The longest dependency chain, by number of steps, first step first."),
    parallel_groups: z.array(z.array(z.number().int())).describe("Steps by dependency depth: every step of a group can run once the groups before it are done."),
    execution_order: z.array(z.number().int()).describe("A topological order of the steps, lowest step number first among the ready ones."),
  })
  .describe("The steps' dependency graph (DAG), computed by the server from depends_on; a graph sent in is replaced.");
export type DependencyGraph = z.output<typeof dependencyGraphSchema>;

const planFields = {
  goal: z.string().min(1).max(TEXT).describe("The goal, restated with its scope boundaries."),
  scope: z
    .looseObject({
      included: lines("What the plan covers."),
      excluded: lines("What it explicitly leaves out."),
      assumptions: lines("Assumptions it rests on."),
      constraints: lines("Constraints it respects."),
    })
    .prefault({})
    .describe("Scope boundaries."),
  mvp_features: z.array(feature).max(MAX_ITEMS).default([]).describe("Must-have features."),
  nice_to_have_features: z.array(feature).max(MAX_ITEMS).default([]).describe("Optional enhancements."),
  architecture: z
    .looseObject({
      notes: text("Architecture notes and decisions.").default(""),
      patterns_used: z.array(z.string().max(LINE)).max(MAX_ITEMS).default([]).describe("Design patterns used."),
      diagrams: z
        .array(
          z.looseObject({
            type: z.enum(DIAGRAM_TYPES).describe("Diagram kind."),
            title: line("Title."),
            mermaid: z.string().max(50_000).describe("Mermaid source."),
          }),
        )
        .max(20)
        .default([])
        .describe("Diagrams."),
    })
    .prefault({})
    .describe("Architecture."),
  risks: z
    .array(
      z.looseObject({
        issue: z.string().min(1).max(TEXT).describe("The risk."),
        mitigation: text("How it is mitigated.").default(""),
        likelihood: z.enum(["low", "medium", "high"]).default("medium").describe("low, medium (default) or high."),
        impact: text("What happens if it materialises.").optional(),
      }),
    )
    .max(MAX_ITEMS)
    .default([])
    .describe("Risks and mitigations."),
  milestones: z
    .array(
      z.looseObject({
        name: z.string().min(1).max(LINE).describe("Milestone name."),
        steps_included: stepRefs("Step numbers in the milestone."),
        estimated_time: line("Estimated time.").default(""),
        deliverables: z.array(z.string().max(TEXT)).max(MAX_ITEMS).optional().describe("Deliverables."),
      }),
    )
    .max(MAX_ITEMS)
    .default([])
    .describe("Milestones grouping steps."),
  testing_strategy: z
    .looseObject({
      unit: text("Unit testing approach.").default(""),
      integration: text("Integration testing approach.").default(""),
      e2e: text("End-to-end testing approach.").optional(),
      coverage_target: line("Coverage target.").default(""),
      test_files: z.array(z.string().max(1000)).max(MAX_ITEMS).optional().describe("Test files to create or change."),
    })
    .prefault({})
    .describe("Testing strategy."),
  acceptance_criteria: z
    .array(
      z.looseObject({
        description: z.string().min(1).max(TEXT).describe("The criterion."),
        verification: text("How to verify it.").default(""),
      }),
    )
    .max(MAX_ITEMS)
    .default([])
    .describe("Acceptance criteria of the whole plan."),
  confidence_score: z.number().min(0).max(1).optional().describe("Confidence in the plan, 0 to 1."),
  questions_for_clarification: lines("Questions to answer before going on."),
  alternative_approaches: z
    .array(
      z.looseObject({
        name: line("Name."),
        description: text("The approach.").default(""),
        reason_not_chosen: text("Why not.").default(""),
        pros: lines("Advantages."),
        cons: lines("Disadvantages."),
      }),
    )
    .max(MAX_ITEMS)
    .optional()
    .describe("Approaches considered and not chosen."),
  context_files: z
    .array(z.string().max(1000))
    .max(MAX_ITEMS * 5)
    .default([])
    .describe("Files read to make the plan."),
  codebase_insights: lines("What was learned about the codebase."),
};

/** Plan ids name a plan in messages and lookups: one line, no spaces. */
export const planIdField = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, "is letters, digits, '.', '_', ':' and '-'");

/** A plan as it comes in: what the store fills (id, version, times, step ids, the graph) may be absent. */
const planInputObject = z.looseObject({
  ...planFields,
  id: planIdField.optional().describe("Plan id; a new one is assigned when absent."),
  version: z.number().int().min(1).optional().describe("Ignored on save: the store numbers versions."),
  created_at: z.string().max(40).optional().describe("Ignored on save: the store keeps the first save's time."),
  updated_at: z.string().max(40).optional().describe("Ignored on save: the store sets it."),
  steps: z.array(stepInput).max(MAX_STEPS).default([]).describe("Implementation steps."),
  dependency_graph: z.unknown().optional().describe("Ignored: computed from the steps."),
});
export const planInputSchema = planInputObject.superRefine((plan, ctx) => checkSteps(plan.steps, plan.milestones, ctx));
export type PlanInput = z.output<typeof planInputObject>;

/** A stored plan, as load_plan and the history answer it. */
export const planSchema = z
  .looseObject({
    id: z.string().describe("Plan id."),
    version: z.number().int().describe("The stored version this is."),
    created_at: z.string().describe("When the plan was first saved."),
    updated_at: z.string().describe("When this version was saved."),
    ...planFields,
    steps: z.array(step).describe("Implementation steps."),
    dependency_graph: dependencyGraphSchema,
  })
  .describe("The plan (EnhancedPlanOutput).");
export type Plan = z.output<typeof planSchema>;

type Issues = z.core.$RefinementCtx<unknown>;

/** Step numbers unique, references naming steps of the plan, and no cycle: what the execution tools rely on. */
function checkSteps(steps: PlanInput["steps"], milestones: PlanInput["milestones"], ctx: Issues): void {
  const index = new Map<number, number>();
  const ids = new Map<string, number>();
  steps.forEach((s, i) => {
    if (index.has(s.step_number)) {
      ctx.addIssue({ code: "custom", path: ["steps", i, "step_number"], message: `Step number ${s.step_number} is used by more than one step; step numbers must be unique.` });
    } else index.set(s.step_number, i);
    const id = s.id ?? `step_${s.step_number}`;
    const other = ids.get(id);
    if (other !== undefined) ctx.addIssue({ code: "custom", path: ["steps", i, "id"], message: `Step id '${id}' is used by steps ${other} and ${s.step_number}; step ids must be unique.` });
    else ids.set(id, s.step_number);
  });
  let dangling = false;
  steps.forEach((s, i) => {
    for (const field of ["depends_on", "blocks", "can_parallel_with"] as const) {
      for (const n of s[field]) {
        if (n === s.step_number) {
          dangling = true;
          ctx.addIssue({ code: "custom", path: ["steps", i, field], message: `Step ${n} names itself in ${field}.` });
        } else if (!index.has(n)) {
          dangling = true;
          ctx.addIssue({
            code: "custom",
            path: ["steps", i, field],
            message: field === "depends_on" ? `Step ${s.step_number} depends on step ${n}, which is not in the plan.` : `Step ${s.step_number} names step ${n} in ${field}, which is not in the plan.`,
          });
        }
      }
    }
  });
  milestones.forEach((m, i) => {
    for (const n of m.steps_included) {
      if (!index.has(n)) ctx.addIssue({ code: "custom", path: ["milestones", i, "steps_included"], message: `Milestone '${m.name.slice(0, 60)}' includes step ${n}, which is not in the plan.` });
    }
  });
  if (dangling || index.size !== steps.length) return;
  const cycle = findCycle(steps);
  if (cycle) {
    ctx.addIssue({ code: "custom", path: ["steps", index.get(cycle[0]!)!, "depends_on"], message: `Steps ${cycle.join(" → ")} form a dependency cycle; depends_on must not loop.` });
  }
}

/** A dependency cycle as step numbers (first repeated last), or null. Steps are valid references by now. */
export function findCycle(steps: ReadonlyArray<{ step_number: number; depends_on: readonly number[] }>): number[] | null {
  const deps = new Map(steps.map((s) => [s.step_number, s.depends_on]));
  const state = new Map<number, "open" | "done">();
  for (const start of [...deps.keys()].sort((a, b) => a - b)) {
    if (state.has(start)) continue;
    // Iterative depth-first search: the path on the stack is the chain a back edge closes into a cycle.
    const path: number[] = [start];
    const next: number[] = [0];
    state.set(start, "open");
    while (path.length > 0) {
      const node = path[path.length - 1]!;
      const list = deps.get(node)!;
      const i = next[next.length - 1]!;
      if (i >= list.length) {
        state.set(node, "done");
        path.pop();
        next.pop();
        continue;
      }
      next[next.length - 1] = i + 1;
      const dep = list[i]!;
      const seen = state.get(dep);
      if (seen === "open") return [...path.slice(path.indexOf(dep)), dep];
      if (seen === undefined) {
        state.set(dep, "open");
        path.push(dep);
        next.push(0);
      }
    }
  }
  return null;
}

/** The dependency graph of acyclic, valid steps. */
export function dependencyGraph(steps: readonly PlanStep[]): DependencyGraph {
  const byNumber = new Map(steps.map((s) => [s.step_number, s]));
  const depth = new Map<number, number>();
  const longest = new Map<number, number[]>();
  const order: number[] = [];
  const waiting = new Map(steps.map((s) => [s.step_number, new Set(s.depends_on)]));
  const dependents = new Map<number, number[]>();
  for (const s of steps) for (const d of s.depends_on) dependents.set(d, [...(dependents.get(d) ?? []), s.step_number]);
  let ready = steps
    .filter((s) => s.depends_on.length === 0)
    .map((s) => s.step_number)
    .sort((a, b) => a - b);
  while (ready.length > 0) {
    const n = ready.shift()!;
    order.push(n);
    const s = byNumber.get(n)!;
    depth.set(n, Math.max(0, ...s.depends_on.map((d) => depth.get(d)! + 1)));
    // Ties go to the lowest step number, so the same plan always gets the same path.
    const best = s.depends_on.map((d) => longest.get(d)!).reduce<number[]>((a, b) => (b.length > a.length || (b.length === a.length && compareChains(b, a) < 0) ? b : a), []);
    longest.set(n, [...best, n]);
    for (const m of dependents.get(n) ?? []) {
      const w = waiting.get(m)!;
      w.delete(n);
      if (w.size === 0) ready = [...ready, m].sort((a, b) => a - b);
    }
  }
  const groups: number[][] = [];
  for (const n of order) (groups[depth.get(n)!] ??= []).push(n);
  const critical = [...longest.values()].reduce<number[]>((a, b) => (b.length > a.length || (b.length === a.length && compareChains(b, a) < 0) ? b : a), []);
  return {
    nodes: steps.map((s) => ({ id: s.id, step_number: s.step_number })),
    edges: steps.flatMap((s) => s.depends_on.map((d) => ({ from: byNumber.get(d)!.id, to: s.id, type: "blocks" as const }))),
    critical_path: critical,
    parallel_groups: groups.map((g) => g.sort((a, b) => a - b)),
    execution_order: order,
  };
}

function compareChains(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** JSON with object keys sorted, so two plans compare equal whatever order their keys came in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v));
}

/** The plan without what the store stamps on it: what "the plan changed" compares. */
export const planContent = (plan: Plan): string => {
  const { version: _v, created_at: _c, updated_at: _u, ...rest } = plan;
  return canonicalJson(rest);
};

/** The stored form of a validated plan: its id, version and times stamped, step ids filled, the graph computed. */
export function completePlan(input: PlanInput, stamp: { id: string; version: number; created_at: string; updated_at: string }): Plan {
  const steps = input.steps.map((s) => ({ ...s, id: s.id ?? `step_${s.step_number}` }));
  const { dependency_graph: _ignored, ...rest } = input;
  return { ...rest, ...stamp, steps, dependency_graph: dependencyGraph(steps) };
}

/** A name from the goal, as the reference names an unnamed plan: its first words, title-cased. */
export function nameFromGoal(goal: string, today: string): string {
  const cleaned = goal
    .slice(0, 50)
    .replace(/[^\p{L}\p{N}\s]/gu, "")
    .trim()
    .replace(/\s+/g, " ");
  if (!cleaned) return `Plan ${today}`;
  return cleaned
    .split(" ")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())
    .join(" ");
}
