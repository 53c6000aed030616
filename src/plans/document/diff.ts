/**
 * What changed between two versions of a plan: steps matched by step_number (added, removed, and
 * per changed step the fields that differ), files, scope, risks, and the other top-level fields.
 */
import { z } from "zod";
import { canonicalJson, type Plan, type PlanStep } from "./schema";

const valueField = (d: string) => z.unknown().optional().describe(d);

export const planDiffSchema = z.object({
  from_version: z.number().int().describe("The earlier version compared."),
  to_version: z.number().int().describe("The later version compared."),
  summary: z.string().describe("One line: counts of what changed."),
  steps_added: z.array(z.number().int()).describe("Step numbers only in to_version."),
  steps_removed: z.array(z.number().int()).describe("Step numbers only in from_version."),
  steps_modified: z
    .array(
      z.object({
        step_number: z.number().int().describe("The step."),
        title: z.string().describe("Its title in to_version."),
        changes: z
          .array(
            z.object({
              field: z.string().describe("The step's field that differs."),
              old_value: valueField("Its value in from_version (absent when the field was added)."),
              new_value: valueField("Its value in to_version (absent when the field was removed)."),
            }),
          )
          .describe("The fields that differ."),
      }),
    )
    .describe("Steps in both versions whose content differs."),
  files_added: z.array(z.string()).describe("Files the plan touches in to_version only."),
  files_removed: z.array(z.string()).describe("Files the plan touches in from_version only."),
  scope_changes: z
    .object({
      included_added: z.array(z.string()).describe("Scope items added to included."),
      included_removed: z.array(z.string()).describe("Scope items removed from included."),
      excluded_added: z.array(z.string()).describe("Scope items added to excluded."),
      excluded_removed: z.array(z.string()).describe("Scope items removed from excluded."),
    })
    .describe("Scope list changes."),
  risks_added: z.array(z.string()).describe("Risks (by issue) in to_version only."),
  risks_removed: z.array(z.string()).describe("Risks (by issue) in from_version only."),
  field_changes: z
    .array(
      z.object({
        path: z.string().describe("Top-level plan field."),
        type: z.enum(["added", "removed", "modified"]).describe("How it changed."),
        old_value: valueField("Value in from_version."),
        new_value: valueField("Value in to_version."),
      }),
    )
    .describe("Other top-level fields that differ (steps and the computed graph are reported above)."),
});
export type PlanDiff = z.infer<typeof planDiffSchema>;

/** Fields every version differs in, or that the step and graph parts of the diff already cover. */
const NOT_FIELDS = new Set(["version", "created_at", "updated_at", "steps", "dependency_graph"]);

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);
const minus = (a: readonly string[], b: readonly string[]) => {
  const s = new Set(b);
  return [...new Set(a)].filter((x) => !s.has(x));
};

function filesOf(plan: Plan): string[] {
  return [...new Set(plan.steps.flatMap((s) => [...s.files_to_modify.map((f) => f.path), ...s.files_to_create.map((f) => f.path), ...s.files_to_delete]))];
}

interface FieldChange {
  key: string;
  type: "added" | "removed" | "modified";
  old_value?: unknown;
  new_value?: unknown;
}

function fieldChanges(from: object, to: object, skip: ReadonlySet<string>): FieldChange[] {
  const a = from as Record<string, unknown>;
  const b = to as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !skip.has(k)).sort();
  return keys.flatMap((k): FieldChange[] => {
    if (b[k] === undefined) return a[k] === undefined ? [] : [{ key: k, type: "removed", old_value: a[k] }];
    if (a[k] === undefined) return [{ key: k, type: "added", new_value: b[k] }];
    return same(a[k], b[k]) ? [] : [{ key: k, type: "modified", old_value: a[k], new_value: b[k] }];
  });
}

export function diffPlans(from: Plan, to: Plan): PlanDiff {
  const fromSteps = new Map<number, PlanStep>(from.steps.map((s) => [s.step_number, s]));
  const toSteps = new Map<number, PlanStep>(to.steps.map((s) => [s.step_number, s]));
  const stepsAdded = [...toSteps.keys()].filter((n) => !fromSteps.has(n)).sort((x, y) => x - y);
  const stepsRemoved = [...fromSteps.keys()].filter((n) => !toSteps.has(n)).sort((x, y) => x - y);
  const stepsModified = [...toSteps.values()]
    .filter((s) => fromSteps.has(s.step_number))
    .sort((x, y) => x.step_number - y.step_number)
    .map((s) => ({
      step_number: s.step_number,
      title: s.title,
      changes: fieldChanges(fromSteps.get(s.step_number)!, s, new Set()).map(({ key, type: _type, ...values }) => ({ field: key, ...values })),
    }))
    .filter((s) => s.changes.length > 0);
  const filesFrom = filesOf(from);
  const filesTo = filesOf(to);
  const risksFrom = from.risks.map((r) => r.issue);
  const risksTo = to.risks.map((r) => r.issue);
  const fields = fieldChanges(from, to, NOT_FIELDS).map(({ key, ...rest }) => ({ path: key, ...rest }));
  const counts: Array<[number, string]> = [
    [stepsAdded.length, "step(s) added"],
    [stepsRemoved.length, "step(s) removed"],
    [stepsModified.length, "step(s) modified"],
    [minus(filesTo, filesFrom).length, "file(s) added"],
    [minus(filesFrom, filesTo).length, "file(s) removed"],
    [fields.length, "other field(s) changed"],
  ];
  const said = counts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  return {
    from_version: from.version,
    to_version: to.version,
    summary: said.length > 0 ? said.join(", ") : "No changes",
    steps_added: stepsAdded,
    steps_removed: stepsRemoved,
    steps_modified: stepsModified,
    files_added: minus(filesTo, filesFrom),
    files_removed: minus(filesFrom, filesTo),
    scope_changes: {
      included_added: minus(to.scope.included, from.scope.included),
      included_removed: minus(from.scope.included, to.scope.included),
      excluded_added: minus(to.scope.excluded, from.scope.excluded),
      excluded_removed: minus(from.scope.excluded, to.scope.excluded),
    },
    risks_added: minus(risksTo, risksFrom),
    risks_removed: minus(risksFrom, risksTo),
    field_changes: fields,
  };
}
