/**
 * respond_approval (seed 004 "Other plan management tools"): the answer closes the request's
 * handoff and tells the requester, and an approved whole-plan request moves the plan to approved,
 * if the plan is still the version that was asked about.
 */
import { z } from "zod";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { PLAN_STATUSES, type PlanStatus } from "../document/schema";
import { findPlan, setPlanStatus } from "../store/model";
import { answerStatements, maybeHandoff, type Verdict } from "../../work/handoffs/model";
import { ACTION_STATUS, actorLabels, answerApprovalStatement, APPROVAL_ACTIONS, approvalNotFound, approvalSchema, findApproval, type Approval, type ApprovalAction } from "./model";
import { announceNotices } from "../../work/collab/inbox";

const COMMENT_MAX = 5_000;
const MODIFICATIONS_MAX = 10_000;

/** The handoff's verdict for each answer: the inbox and handoff_query show it as a review's. */
const VERDICT: Record<ApprovalAction, Verdict> = { approve: "approved", reject: "rejected", request_modification: "changes_requested" };

/** Statuses an approval moves a plan from; a plan already executing or done keeps its status. */
const APPROVABLE: readonly PlanStatus[] = ["ready", "needs_clarification"];

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
      statements.push(
        ...answerStatements(
          ctx,
          handoff,
          {
            response,
            verdict: VERDICT[input.action],
            resolve: true,
            from: ["open", "claimed", "responded"],
            notifyAsker: true,
            when: answer.landed,
          },
          now,
        ).statements,
      );
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
    if (answerable && handoffUpdated!.results.length > 0) await announceNotices(ctx, [handoff.from_actor_id]);
    const answered = (await findApproval(ctx, request.id))!;

    const planStatus = await planAfterAnswer(ctx, answered, warnings);
    return { request: answered, plan_status: planStatus, ...(warnings.length > 0 ? { warnings } : {}) };
  },
  summarize: (r) => `Approval request ${r.request.id} ${r.request.status}; plan ${r.request.plan_id} is ${r.plan_status ?? "deleted"}${r.warnings ? ` (${r.warnings.length} warning(s))` : ""}.`,
});
