/**
 * Approval requests for plans in D1 (seed 004's request_approval and respond_approval). A request
 * is for one version of a plan, the whole plan or some of its steps, and reaches its approvers as
 * a handoff of kind approval. The statements here go into the tools' batches beside the handoff's
 * own, so a request and its handoff are written together, and answered together: an answer is a
 * compare-and-swap from pending, so of two racing answers exactly one lands.
 */
import { z } from "zod";
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { Ctx } from "../../core/context";
import { dbOf, jsonValues, statementOf } from "../../db/client";
import { afterTimeAndId } from "../../core/cursor";
import { actors, planApprovals } from "../../db/schema";
import { ToolError } from "../../core/errors";
import { jsonArray, Condition } from "../../work/shared";

export const APPROVAL_STATUSES = ["pending", "approved", "rejected", "modification_requested"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
export const APPROVAL_ACTIONS = ["approve", "reject", "request_modification"] as const;
export type ApprovalAction = (typeof APPROVAL_ACTIONS)[number];

/** What each action makes of a request. */
export const ACTION_STATUS: Record<ApprovalAction, Exclude<ApprovalStatus, "pending">> = {
  approve: "approved",
  reject: "rejected",
  request_modification: "modification_requested",
};

/** The reference's kinds of request: the whole plan, one step, or several. */
export const approvalType = (steps: readonly number[]) => (steps.length === 0 ? "full_plan" : steps.length === 1 ? "step" : "step_group");

export const approvalSchema = z.object({
  id: z.string().describe("Request id (request_id for respond_approval)."),
  plan_id: z.string().describe("The plan."),
  plan_version: z.number().int().describe("The plan version the request is for."),
  type: z.enum(["full_plan", "step", "step_group"]).describe("full_plan, step or step_group."),
  step_numbers: z.array(z.number().int()).describe("The steps asked about, ascending; [] for the whole plan."),
  status: z.enum(APPROVAL_STATUSES).describe("pending, approved, rejected or modification_requested."),
  summary: z.string().describe("What is to be approved, in a line."),
  note: z.string().describe('The requester\'s note ("" when none).'),
  approver_actor_ids: z.array(z.string()).describe("Actor ids of who may answer."),
  requested_by: z.string().describe("Actor id of the requester."),
  created_at: z.string().describe("When it was requested."),
  due_at: z.string().nullable().describe("When an answer is needed, or null."),
  responded_by: z.string().nullable().describe("Who answered, or null while pending."),
  responded_at: z.string().nullable().describe("When, or null."),
  comment: z.string().nullable().describe("The answer's comment, or null."),
  modifications: z.string().nullable().describe("The modifications asked for (request_modification), or null."),
  handoff_id: z.string().describe("The approval handoff in the approvers' inbox."),
});
export type Approval = z.infer<typeof approvalSchema>;

interface ApprovalRow {
  id: string;
  plan_id: string;
  plan_version: number;
  step_numbers: string;
  approver_ids: string;
  status: ApprovalStatus;
  summary: string;
  note: string;
  requested_by: string;
  created_at: string;
  due_at: string | null;
  responded_by: string | null;
  responded_at: string | null;
  comment: string | null;
  modifications: string | null;
  handoff_id: string;
}
const COLUMNS = "id, plan_id, plan_version, step_numbers, approver_ids, status, summary, note, requested_by, created_at, due_at, responded_by, responded_at, comment, modifications, handoff_id";

/** A request row's fields, keyed by SQL column name (the ApprovalRow shape; the same columns as COLUMNS). */
const approvalFields = {
  id: planApprovals.id,
  plan_id: planApprovals.planId,
  plan_version: planApprovals.planVersion,
  step_numbers: planApprovals.stepNumbers,
  approver_ids: planApprovals.approverIds,
  status: planApprovals.status,
  summary: planApprovals.summary,
  note: planApprovals.note,
  requested_by: planApprovals.requestedBy,
  created_at: planApprovals.createdAt,
  due_at: planApprovals.dueAt,
  responded_by: planApprovals.respondedBy,
  responded_at: planApprovals.respondedAt,
  comment: planApprovals.comment,
  modifications: planApprovals.modifications,
  handoff_id: planApprovals.handoffId,
};

export function toApproval(r: ApprovalRow): Approval {
  const { approver_ids, step_numbers, ...rest } = r;
  const steps = jsonArray<number>(step_numbers);
  return { ...rest, type: approvalType(steps), step_numbers: steps, approver_actor_ids: jsonArray<string>(approver_ids) };
}

/** The reference's words for a request that does not exist (or is another tenant's). */
export const approvalNotFound = (id: string) =>
  new ToolError("not_found", `Approval request ${id} not found`, { hint: "list_approvals shows the approval requests; inbox shows the ones waiting for you." });

export async function findApproval(ctx: Ctx, id: string): Promise<Approval | null> {
  const row = await dbOf(ctx)
    .select(approvalFields)
    .from(planApprovals)
    .where(and(eq(planApprovals.tenantId, ctx.tenantId), eq(planApprovals.id, id)))
    .get();
  return row ? toApproval(row as ApprovalRow) : null;
}

/** One pending request per plan, version and steps: a repeated request finds the first. */
export const approvalFingerprint = (planId: string, version: number, steps: readonly number[]) => `${planId}@${version}#${steps.length === 0 ? "plan" : steps.join(",")}`;

export async function findPending(ctx: Ctx, fingerprint: string): Promise<Approval | null> {
  const row = await dbOf(ctx)
    .select(approvalFields)
    .from(planApprovals)
    // 'pending' as a literal, as the partial unique index on pending fingerprints is declared, so the lookup stays on it.
    .where(and(eq(planApprovals.tenantId, ctx.tenantId), eq(planApprovals.fingerprint, fingerprint), sql`${planApprovals.status} = 'pending'`))
    .get();
  return row ? toApproval(row as ApprovalRow) : null;
}

export interface NewApproval {
  id: string;
  planId: string;
  planVersion: number;
  steps: readonly number[];
  approvers: readonly string[];
  summary: string;
  note: string;
  dueAt: string | null;
  handoffId: string;
  createdAt: string;
}

/**
 * The request's row, for the first place in a batch: written only while the plan is still at the
 * version asked about, and not when a pending request holds its fingerprint (then it returns no row).
 */
export function insertApprovalStatement(ctx: Ctx, a: NewApproval): D1PreparedStatement {
  // Hand SQL: an INSERT…SELECT guarded by EXISTS on the plan's version, which drizzle's insert cannot say.
  return ctx.d1
    .prepare(
      `INSERT INTO plan_approvals (tenant_id, id, plan_id, plan_version, step_numbers, approver_ids, status, summary, note, requested_by, created_at, due_at, handoff_id, fingerprint)
       SELECT ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?
       WHERE EXISTS (SELECT 1 FROM plans WHERE tenant_id = ? AND id = ? AND current_version = ?)
       ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
    )
    .bind(
      ctx.tenantId,
      a.id,
      a.planId,
      a.planVersion,
      JSON.stringify(a.steps),
      JSON.stringify(a.approvers),
      a.summary,
      a.note,
      ctx.actorId,
      a.createdAt,
      a.dueAt,
      a.handoffId,
      approvalFingerprint(a.planId, a.planVersion, a.steps),
      ctx.tenantId,
      a.planId,
      a.planVersion,
    );
}

/** True in a batch once the request named is in the tenant (its row was written earlier in the batch). */
export const approvalExists = (ctx: Ctx, id: string): Condition => ({
  sql: "EXISTS (SELECT 1 FROM plan_approvals WHERE tenant_id = ? AND id = ?)",
  params: [ctx.tenantId, id],
});

export interface ApprovalAnswer {
  status: Exclude<ApprovalStatus, "pending">;
  comment: string | null;
  modifications: string | null;
  at: string;
}

/**
 * The answer, as a compare-and-swap from pending (it returns the row only when it landed), and the
 * condition that holds once it did, for the statements that must follow only the winning answer.
 */
export function answerApprovalStatement(ctx: Ctx, id: string, a: ApprovalAnswer): { statement: D1PreparedStatement; landed: Condition } {
  return {
    statement: statementOf(
      ctx.d1,
      dbOf(ctx)
        .update(planApprovals)
        .set({ status: a.status, respondedBy: ctx.actorId, respondedAt: a.at, comment: a.comment, modifications: a.modifications })
        .where(and(eq(planApprovals.tenantId, ctx.tenantId), eq(planApprovals.id, id), sql`${planApprovals.status} = 'pending'`))
        .returning(approvalFields),
    ),
    // Hand SQL: a condition for the hand-SQL guards of the statements that follow the answer in the batch.
    landed: {
      sql: "EXISTS (SELECT 1 FROM plan_approvals WHERE tenant_id = ? AND id = ? AND status = ? AND responded_by = ? AND responded_at = ?)",
      params: [ctx.tenantId, id, a.status, ctx.actorId, a.at],
    },
  };
}

export interface ApprovalFilter {
  planId?: string;
  status?: ApprovalStatus;
  limit: number;
  /** list_approvals' cursor as the caller sent it: the (created_at, id) of the last request of the previous page. */
  cursor?: string;
}

/** Newest first. */
export async function listApprovals(ctx: Ctx, f: ApprovalFilter): Promise<Approval[]> {
  const rows = await dbOf(ctx)
    .select(approvalFields)
    .from(planApprovals)
    .where(
      and(
        eq(planApprovals.tenantId, ctx.tenantId),
        f.planId !== undefined ? eq(planApprovals.planId, f.planId) : undefined,
        f.status ? eq(planApprovals.status, f.status) : undefined,
        afterTimeAndId(f.cursor, planApprovals.createdAt, planApprovals.id),
      ),
    )
    .orderBy(desc(planApprovals.createdAt), desc(planApprovals.id))
    .limit(f.limit)
    .all();
  return rows.map((r) => toApproval(r as ApprovalRow));
}

/** "name (id)" for each actor id, to name who may answer in a hint. */
export async function actorLabels(ctx: Ctx, ids: readonly string[]): Promise<string> {
  const rows = await dbOf(ctx)
    .select({ id: actors.id, name: actors.name })
    .from(actors)
    .where(and(eq(actors.tenantId, ctx.tenantId), inArray(actors.id, jsonValues(ids))))
    .all();
  const names = new Map(rows.map((r) => [r.id, r.name]));
  return ids.map((id) => (names.has(id) ? `${names.get(id)} (${id})` : id)).join(", ");
}
