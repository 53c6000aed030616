/**
 * What an approval request says to its approvers, in the handoff's title and body: what is to be
 * approved (the reference's wording), the plan or the steps in enough detail to decide, and how
 * to answer. Bounded, so a 200-step plan still makes a handoff the inbox can carry.
 */
import type { Plan, PlanStep } from "../document/schema";

/** The handoff tools' bounds on a title and a body. */
const TITLE_MAX = 300;
const BODY_MAX = 20_000;
const FIELD_MAX = 500;
const LIST_MAX = 20;

const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
};

const list = (items: readonly string[]) =>
  items.length <= LIST_MAX ? items.join(", ") : `${items.slice(0, LIST_MAX).join(", ")} and ${items.length - LIST_MAX} more`;

const filesOf = (steps: readonly PlanStep[]) =>
  [...new Set(steps.flatMap((s) => [...s.files_to_modify.map((f) => f.path), ...s.files_to_create.map((f) => f.path), ...s.files_to_delete]))].sort();

/** "Approve plan: <goal>", "Approve step <n>: <title>" or "Approve steps <n, m>: <titles>", as the reference words it. */
export function approvalSummary(plan: Plan, steps: readonly PlanStep[]): string {
  const text = steps.length === 0
    ? `Approve plan: ${plan.goal}`
    : steps.length === 1
      ? `Approve step ${steps[0]!.step_number}: ${steps[0]!.title}`
      : `Approve steps ${steps.map((s) => s.step_number).join(", ")}: ${steps.map((s) => s.title).join(", ")}`;
  return oneLine(text, TITLE_MAX);
}

function stepDetail(s: PlanStep): string[] {
  const lines = [`${s.step_number}. ${oneLine(s.title, FIELD_MAX)} (${s.priority} priority${s.estimated_effort ? `, ${oneLine(s.estimated_effort, 100)}` : ""})`];
  if (s.description) lines.push(`   ${oneLine(s.description, FIELD_MAX)}`);
  const files = filesOf([s]);
  if (files.length > 0) lines.push(`   Files: ${list(files)}`);
  if (s.depends_on.length > 0) lines.push(`   After steps: ${s.depends_on.join(", ")}`);
  if (s.acceptance_criteria.length > 0) lines.push(`   Done when: ${oneLine(s.acceptance_criteria.join("; "), FIELD_MAX)}`);
  if (s.rollback_strategy) lines.push(`   Rollback: ${oneLine(s.rollback_strategy, FIELD_MAX)}`);
  return lines;
}

export interface ApprovalText {
  requestId: string;
  planName: string;
  plan: Plan;
  /** The steps asked about; empty for the whole plan. */
  steps: readonly PlanStep[];
  note: string;
}

/**
 * The body: the note, the plan, the steps (an overview of all for a whole-plan request, details of
 * each asked about otherwise), affected files and risks, and the call that answers. Past the
 * bound the middle is cut, never the answer line.
 */
export function approvalBody(t: ApprovalText): string {
  const { plan } = t;
  const whole = t.steps.length === 0;
  const head = [
    ...(t.note ? [t.note, ""] : []),
    `Plan: ${oneLine(t.planName, FIELD_MAX)} (${plan.id}), version ${plan.version}`,
    `Goal: ${oneLine(plan.goal, FIELD_MAX * 2)}`,
    `Asked: ${whole ? `the whole plan (${plan.steps.length} steps)` : `step${t.steps.length > 1 ? "s" : ""} ${t.steps.map((s) => s.step_number).join(", ")}`}`,
  ];
  const covered = whole ? plan.steps : t.steps;
  const middle = [
    "",
    "Steps:",
    ...(whole
      ? plan.steps.map((s) => `${s.step_number}. ${oneLine(s.title, FIELD_MAX)} (${s.priority} priority${s.estimated_effort ? `, ${oneLine(s.estimated_effort, 100)}` : ""})`)
      : t.steps.flatMap(stepDetail)),
  ];
  const files = filesOf(covered);
  if (files.length > 0) middle.push("", `Affected files (${files.length}): ${list(files)}`);
  if (whole && plan.risks.length > 0) {
    middle.push("", "Risks:", ...plan.risks.slice(0, LIST_MAX).map((r) => `- ${oneLine(r.issue, FIELD_MAX)} (${r.likelihood})${r.mitigation ? `: ${oneLine(r.mitigation, FIELD_MAX)}` : ""}`));
  }
  const tail = [
    "",
    `Answer with respond_approval {"request_id": "${t.requestId}", "action": "approve"}, or action "reject", or "request_modification" with modifications saying what to change; comment is optional.`,
  ];
  const budget = BODY_MAX - [...head, ...tail].join("\n").length - 200;
  const kept: string[] = [];
  let used = 0;
  for (const [i, line] of middle.entries()) {
    if (used + line.length + 1 > budget) {
      kept.push(`… ${middle.length - i} more lines: load_plan shows the whole plan.`);
      break;
    }
    kept.push(line);
    used += line.length + 1;
  }
  return [...head, ...kept, ...tail].join("\n");
}
