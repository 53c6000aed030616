/**
 * request_approval (seed 004 "Other plan management tools"): a request reaches its approvers' inbox
 * as a handoff of kind approval. What it says to them, in the handoff's title and body: what is to be
 * approved (the reference's wording), the plan or the steps in enough detail to decide, and how
 * to answer. Bounded, so a 200-step plan still makes a handoff the inbox can carry.
 */
import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { MAX_STEPS, planIdField, type Plan, type PlanStep } from "../document/schema";
import { getPlan, readVersion, type PlanMeta } from "../store/model";
import { approvalExists, approvalFingerprint, approvalSchema, findApproval, findPending, insertApprovalStatement } from "./model";
import { actorRefField, resolveActor } from "../../work/shared";
import { dueAtField, handoffStatements, parseDueAt } from "../../work/handoffs/model";
import { announceNotices } from "../../work/collab/inbox";

const MAX_APPROVERS = 10;
const NOTE_MAX = 5_000;

const OPTIONS = [
  { label: "approve", summary: "Approve as written." },
  { label: "reject", summary: "Reject; say why in comment." },
  { label: "request_modification", summary: "Ask for changes; say which in modifications." },
];

const stepNumbersOf = (requested: readonly number[]) => [...new Set(requested)].sort((a, b) => a - b);

/** Who may answer: the approvers named, or else the plan's creator; never the requester. */
async function approversFor(ctx: Ctx, refs: readonly string[] | undefined, plan: PlanMeta): Promise<string[]> {
  if (refs === undefined) {
    if (plan.created_by === ctx.actorId) {
      throw invalidInput(
        `No approver: you created plan ${plan.id}, and nobody approves their own request.`,
        "Name who should approve in approver_actor_ids (actor ids or external_refs; actor_query lists them).",
      );
    }
    return [plan.created_by];
  }
  const ids = [...new Set(await Promise.all(refs.map((r) => resolveActor(ctx, r))))];
  if (ids.includes(ctx.actorId)) {
    throw invalidInput("You cannot be an approver of your own request.", 'Leave yourself (and "me") out of approver_actor_ids; nobody approves their own request.');
  }
  return ids;
}

/** The handoff tools' bounds on a title and a body. */
const TITLE_MAX = 300;
const BODY_MAX = 20_000;
const FIELD_MAX = 500;
const LIST_MAX = 20;

const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
};

const list = (items: readonly string[]) => (items.length <= LIST_MAX ? items.join(", ") : `${items.slice(0, LIST_MAX).join(", ")} and ${items.length - LIST_MAX} more`);

const filesOf = (steps: readonly PlanStep[]) => [...new Set(steps.flatMap((s) => [...s.files_to_modify.map((f) => f.path), ...s.files_to_create.map((f) => f.path), ...s.files_to_delete]))].sort();

/** "Approve plan: <goal>", "Approve step <n>: <title>" or "Approve steps <n, m>: <titles>", as the reference words it. */
export function approvalSummary(plan: Plan, steps: readonly PlanStep[]): string {
  const text =
    steps.length === 0
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

export const requestApprovalTool = defineTool({
  name: "request_approval",
  title: "Request approval of a plan",
  toolset: "plans",
  description:
    "Create an approval request for a plan or specific steps of its current version. It reaches the approvers' inbox as a handoff of kind approval; they answer with respond_approval. Asking again while the same plan version and steps are pending returns the pending request (deduplicated).",
  input: z.object({
    plan_id: planIdField.describe("Plan ID to request approval for."),
    step_numbers: z
      .array(z.number().int().min(1).max(100_000))
      .max(MAX_STEPS)
      .optional()
      .describe("Optional specific step numbers to approve (steps of the current version); omitted or [] asks about the whole plan."),
    approver_actor_ids: z.array(actorRefField("An approver.")).min(1).max(MAX_APPROVERS).optional().describe("Who may answer (any one of them). Defaults to the plan's creator, unless that is you."),
    note: z.string().trim().max(NOTE_MAX).optional().describe("A note to the approvers, put first in the request."),
    due_at: dueAtField.optional().describe("When an answer is needed (ISO-8601): a date or an instant."),
  }),
  output: z.object({
    request: approvalSchema.describe("The request."),
    deduplicated: z.boolean().describe("True when a pending request for the same plan version and steps was returned instead of a new one."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const meta = await getPlan(ctx, input.plan_id);
    const plan = await readVersion(ctx, meta.id, meta.version);
    const numbers = stepNumbersOf(input.step_numbers ?? []);
    const missing = numbers.filter((n) => !plan.steps.some((s) => s.step_number === n));
    if (missing.length > 0) {
      const known = plan.steps.map((s) => s.step_number);
      throw invalidInput(
        `Step${missing.length > 1 ? "s" : ""} ${missing.join(", ")} not found in plan ${meta.id}`,
        `Version ${meta.version} has steps ${known.length > 30 ? `${known.slice(0, 30).join(", ")}, …` : known.join(", ") || "(none)"}; load_plan shows them. Omit step_numbers to ask about the whole plan.`,
      );
    }
    const approvers = await approversFor(ctx, input.approver_actor_ids, meta);
    const dueAt = parseDueAt(input.due_at);
    const fingerprint = approvalFingerprint(meta.id, meta.version, numbers);
    const pending = await findPending(ctx, fingerprint);
    if (pending) return { request: pending, deduplicated: true };

    const steps = numbers.map((n) => plan.steps.find((s) => s.step_number === n)!);
    const id = uuidv7();
    const summary = approvalSummary(plan, steps);
    const note = input.note ?? "";
    const handoff = handoffStatements(
      ctx,
      {
        kind: "approval",
        title: summary,
        body: approvalBody({ requestId: id, planName: meta.name, plan, steps, note }),
        recipients: approvers,
        options: OPTIONS,
        allowFreeText: false,
        dueAt,
      },
      approvalExists(ctx, id),
    );
    // One batch: the request's row first, then its handoff only if the row was written.
    const [inserted] = await ctx.d1.batch<Record<string, unknown>>([
      insertApprovalStatement(ctx, {
        id,
        planId: meta.id,
        planVersion: meta.version,
        steps: numbers,
        approvers,
        summary,
        note,
        dueAt: dueAt ? iso(dueAt) : null,
        handoffId: handoff.id,
        createdAt: iso(ctx.clock.now()),
      }),
      ...handoff.statements,
    ]);
    if (inserted!.results.length > 0) {
      await announceNotices(ctx, approvers);
      return { request: (await findApproval(ctx, id))!, deduplicated: false };
    }
    // Not written: a racing request for the same steps won, or the plan moved on meanwhile.
    const raced = await findPending(ctx, fingerprint);
    if (raced) return { request: raced, deduplicated: true };
    throw new ToolError("conflict", `Plan ${meta.id} changed while this call ran (it was at version ${meta.version}); no request was made.`, {
      hint: "Load the plan again and request approval of its current version.",
      retryable: true,
    });
  },
  summarize: (r) => `${r.deduplicated ? "Already pending" : "Requested"}: ${r.request.summary} (request ${r.request.id}, plan ${r.request.plan_id} v${r.request.plan_version}).`,
});
