/**
 * The approval tools (seed 004 "Other plan management tools"): request_approval, respond_approval,
 * and list_approvals to find requests. A request reaches its approvers' inbox as a handoff of kind
 * approval; the answer closes that handoff and tells the requester, and an approved whole-plan
 * request moves the plan to approved, if the plan is still the version that was asked about.
 */
import { z } from "zod";
import { uuidv7 } from "../db/ids";
import { iso } from "../db/time";
import type { Ctx } from "../core/context";
import { defineTool } from "../core/define-tool";
import { invalidInput, ToolError } from "../core/errors";
import { actorRefField, afterTimeAndId, cursorField, keysetPage, limitField, resolveActor } from "../work/shared";
import { answerStatements, dueAtField, handoffStatements, maybeHandoff, parseDueAt, type Verdict } from "../work/handoffs/model";
import { approvalBody, approvalSummary } from "./approval-body";
import {
  ACTION_STATUS, actorLabels, answerApprovalStatement, APPROVAL_ACTIONS, APPROVAL_STATUSES, approvalExists, approvalFingerprint, approvalNotFound, approvalSchema,
  findApproval, findPending, insertApprovalStatement, listApprovals, type Approval, type ApprovalAction,
} from "./approvals";
import { MAX_STEPS, PLAN_STATUSES, planIdField, type PlanStatus } from "./schema";
import { findPlan, getPlan, readVersion, setPlanStatus, type PlanMeta } from "./store";

const MAX_APPROVERS = 10;
const NOTE_MAX = 5_000;
const COMMENT_MAX = 5_000;
const MODIFICATIONS_MAX = 10_000;

/** The handoff's verdict for each answer: the inbox and handoff_query show it as a review's. */
const VERDICT: Record<ApprovalAction, Verdict> = { approve: "approved", reject: "rejected", request_modification: "changes_requested" };

/** Statuses an approval moves a plan from; a plan already executing or done keeps its status. */
const APPROVABLE: readonly PlanStatus[] = ["ready", "needs_clarification"];

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
      throw invalidInput(`No approver: you created plan ${plan.id}, and nobody approves their own request.`, "Name who should approve in approver_actor_ids (actor ids or external_refs; actor_query lists them).");
    }
    return [plan.created_by];
  }
  const ids = [...new Set(await Promise.all(refs.map((r) => resolveActor(ctx, r))))];
  if (ids.includes(ctx.actorId)) {
    throw invalidInput("You cannot be an approver of your own request.", "Leave yourself (and \"me\") out of approver_actor_ids; nobody approves their own request.");
  }
  return ids;
}

export const requestApprovalTool = defineTool({
  name: "request_approval",
  title: "Request approval of a plan",
  toolset: "plans",
  description:
    "Create an approval request for a plan or specific steps of its current version. It reaches the approvers' inbox as a handoff of kind approval; they answer with respond_approval. Asking again while the same plan version and steps are pending returns the pending request (deduplicated).",
  input: z.object({
    plan_id: planIdField.describe("Plan ID to request approval for."),
    step_numbers: z.array(z.number().int().min(1).max(100_000)).max(MAX_STEPS).optional()
      .describe("Optional specific step numbers to approve (steps of the current version); omitted or [] asks about the whole plan."),
    approver_actor_ids: z.array(actorRefField("An approver.")).min(1).max(MAX_APPROVERS).optional()
      .describe("Who may answer (any one of them). Defaults to the plan's creator, unless that is you."),
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
      throw invalidInput(`Step${missing.length > 1 ? "s" : ""} ${missing.join(", ")} not found in plan ${meta.id}`,
        `Version ${meta.version} has steps ${known.length > 30 ? `${known.slice(0, 30).join(", ")}, …` : known.join(", ") || "(none)"}; load_plan shows them. Omit step_numbers to ask about the whole plan.`);
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
    const handoff = handoffStatements(ctx, {
      kind: "approval", title: summary, body: approvalBody({ requestId: id, planName: meta.name, plan, steps, note }), recipients: approvers,
      options: OPTIONS, allowFreeText: false, dueAt,
    }, approvalExists(ctx, id));
    // One batch: the request's row first, then its handoff only if the row was written.
    const [inserted] = await ctx.d1.batch<Record<string, unknown>>([
      insertApprovalStatement(ctx, {
        id, planId: meta.id, planVersion: meta.version, steps: numbers, approvers, summary, note, dueAt: dueAt ? iso(dueAt) : null, handoffId: handoff.id, createdAt: iso(ctx.clock.now()),
      }),
      ...handoff.statements,
    ]);
    if (inserted!.results.length > 0) return { request: (await findApproval(ctx, id))!, deduplicated: false };
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

/** Why respond_approval may not be used by the caller, or null when it may. */
async function refusal(ctx: Ctx, request: Approval): Promise<ToolError | null> {
  if (request.requested_by === ctx.actorId) {
    return new ToolError("forbidden", `You requested approval request ${request.id}; nobody answers their own request.`, {
      hint: `One of its approvers answers it: ${await actorLabels(ctx, request.approver_actor_ids)}.`,
    });
  }
  if (!request.approver_actor_ids.includes(ctx.actorId)) {
    return new ToolError("forbidden", `You are not an approver of approval request ${request.id}.`, {
      hint: `Only its approvers may answer: ${await actorLabels(ctx, request.approver_actor_ids)}. To have it approved by someone else, its requester can request_approval naming them once it is answered.`,
    });
  }
  return null;
}

const alreadyAnswered = (request: Approval) =>
  new ToolError("conflict", `Approval request ${request.id} is already ${request.status}`, {
    hint: `${request.responded_by ? `It was answered by ${request.responded_by} at ${request.responded_at}. ` : ""}list_approvals shows it; a new request_approval asks again.`,
  });

/**
 * What an answer does to its plan: an approved whole-plan request approves the plan, if it is
 * still the version asked about and not already executing or done. Returns the plan's status
 * (null when it was deleted); what could not be done goes into `warnings`.
 */
async function planAfterAnswer(ctx: Ctx, request: Approval, warnings: string[]): Promise<PlanStatus | null> {
  const plan = await findPlan(ctx, request.plan_id);
  if (!plan) {
    warnings.push(`Plan ${request.plan_id} has been deleted since the request; the answer is recorded.`);
    return null;
  }
  if (request.status !== "approved") return plan.status;
  const whole = request.step_numbers.length === 0;
  if (plan.version !== request.plan_version) {
    const left = whole ? `its status was left ${plan.status}` : `the approval is of those steps as they were in version ${request.plan_version}`;
    warnings.push(`Plan ${plan.id} changed since the request (it was version ${request.plan_version}, it is now ${plan.version}), so ${left}; it needs approving again.`);
    return plan.status;
  }
  if (!whole || plan.status === "approved") return plan.status;
  if (!APPROVABLE.includes(plan.status)) {
    warnings.push(`Plan ${plan.id} is ${plan.status}, so its status was left as it is.`);
    return plan.status;
  }
  const moved = await setPlanStatus(ctx, plan, "approved", APPROVABLE);
  if (moved) return moved.status;
  const current = (await findPlan(ctx, request.plan_id)) ?? plan;
  warnings.push(`Plan ${plan.id} changed while this answer was recorded (it is now version ${current.version}, ${current.status}), so its status was not set to approved; it needs approving again.`);
  return current.status;
}

export const respondApprovalTool = defineTool({
  name: "respond_approval",
  title: "Answer an approval request",
  toolset: "plans",
  description:
    "Respond to a pending approval request (approve, reject, or request modifications); only one of its approvers may, and never its requester. The answer closes the approval handoff and notifies the requester. Approving a whole-plan request sets the plan's status to approved, if the plan is still the version asked about.",
  input: z.object({
    request_id: z.string().min(1).max(100).describe("Approval request ID."),
    action: z.enum(APPROVAL_ACTIONS).describe("Action to take: approve, reject or request_modification."),
    comment: z.string().trim().max(COMMENT_MAX).optional().describe("Optional comment."),
    modifications: z.string().trim().max(MODIFICATIONS_MAX).optional().describe("Requested modifications: required with request_modification, refused with the other actions."),
  }),
  output: z.object({
    request: approvalSchema.describe("The request with its answer."),
    plan_status: z.enum(PLAN_STATUSES).nullable().describe("The plan's status after the answer; null when the plan has been deleted."),
    warnings: z.array(z.string()).optional().describe("What the answer could not do, e.g. approve a plan that changed since the request."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const modifications = input.modifications || null;
    if (input.action === "request_modification" && !modifications) {
      throw invalidInput("modifications is required when action is request_modification", "Say in modifications what should change in the plan.");
    }
    if (input.action !== "request_modification" && modifications) {
      throw invalidInput(`modifications goes with action request_modification, not ${input.action}`, "Put remarks in comment, or use action request_modification.");
    }
    const request = await findApproval(ctx, input.request_id);
    if (!request) throw approvalNotFound(input.request_id);
    const refused = await refusal(ctx, request);
    if (refused) throw refused;
    if (request.status !== "pending") throw alreadyAnswered(request);

    const now = iso(ctx.clock.now());
    const answer = answerApprovalStatement(ctx, request.id, { status: ACTION_STATUS[input.action], comment: input.comment || null, modifications, at: now });
    const handoff = await maybeHandoff(ctx, request.handoff_id);
    const warnings: string[] = [];
    const statements = [answer.statement];
    // Responded too: an approver who answered the handoff itself did not answer the request, so this answer replaces theirs.
    const answerable = handoff !== null && ["open", "claimed", "responded"].includes(handoff.status);
    if (answerable) {
      const response = { chosen_option: input.action, ...(input.comment ? { text: input.comment } : {}), ...(modifications ? { modifications } : {}) };
      statements.push(...answerStatements(ctx, handoff, {
        response, verdict: VERDICT[input.action], resolve: true, from: ["open", "claimed", "responded"], notifyAsker: true, when: answer.landed,
      }, now).statements);
    }
    const [updated, handoffUpdated] = await ctx.d1.batch<Record<string, unknown>>(statements);
    if (updated!.results.length === 0) {
      // Another answer landed first.
      throw alreadyAnswered((await findApproval(ctx, request.id)) ?? request);
    }
    if (!answerable || handoffUpdated!.results.length === 0) {
      const status = (await maybeHandoff(ctx, request.handoff_id))?.status ?? "gone";
      warnings.push(`The request's handoff ${request.handoff_id} was already ${status}, so it was left as it was and the requester was not notified through it.`);
    }
    const answered = (await findApproval(ctx, request.id))!;

    const planStatus = await planAfterAnswer(ctx, answered, warnings);
    return { request: answered, plan_status: planStatus, ...(warnings.length > 0 ? { warnings } : {}) };
  },
  summarize: (r) => `Approval request ${r.request.id} ${r.request.status}; plan ${r.request.plan_id} is ${r.plan_status ?? "deleted"}${r.warnings ? ` (${r.warnings.length} warning(s))` : ""}.`,
});

export const listApprovalsTool = defineTool({
  name: "list_approvals",
  title: "List approval requests",
  toolset: "plans",
  description: "Approval requests, newest first, optionally of one plan and in one status. The ones waiting for you are also in your inbox.",
  input: z.object({
    plan_id: planIdField.optional().describe("Only requests for this plan."),
    status: z.enum(APPROVAL_STATUSES).optional().describe("Only requests in this status."),
    limit: limitField(20, 100),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(approvalSchema).describe("Approval requests, newest first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const rows = await listApprovals(ctx, { planId: input.plan_id, status: input.status, limit: input.limit + 1, after: afterTimeAndId(input.cursor, "created_at", "id") });
    const { page, cursor } = keysetPage(rows, input.limit, (a) => [a.created_at, a.id]);
    return { items: page, ...cursor };
  },
  summarize: (r) => `${r.items.length} approval request(s)${r.next_cursor ? ", more with next_cursor" : ""}.`,
});

export const approvalTools = [requestApprovalTool, respondApprovalTool, listApprovalsTool];
