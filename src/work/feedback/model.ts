/** Product feedback (seed 001): what gets in an agent's way, filed for this server's operators, and its lifecycle. */
import { z } from "zod";
import { notFound } from "../../core/errors";
import type { Ctx } from "../../core/context";

export const FEEDBACK_KINDS = ["bug", "friction", "capability", "docs"] as const;
export const FEEDBACK_STATUSES = ["open", "accepted", "in_progress", "shipped", "declined"] as const;
export const LIVE_SQL = "('open', 'accepted', 'in_progress')";

export const requestSchema = z.object({
  id: z.string().describe("Request id."),
  title: z.string().describe("Title."),
  body: z.string().describe("Details."),
  kind: z.enum(FEEDBACK_KINDS).describe("bug, friction, capability or docs."),
  severity: z.enum(["low", "medium", "high"]).describe("low, medium or high."),
  tool_name: z.string().describe('The tool involved, or "".'),
  error_code: z.string().describe('The error code seen, or "".'),
  context: z.string().describe('What the agent was doing, or "".'),
  fingerprint: z.string().nullable().describe("De-duplication key, or null."),
  status: z.enum(FEEDBACK_STATUSES).describe("open → accepted → in_progress → shipped | declined."),
  resolution_note: z.string().describe('The operators\' note, or "".'),
  occurrences: z.number().int().describe("How many times it was filed while live."),
  actor_id: z.string().describe("Who filed it first."),
  created_at: z.string().describe("When."),
  updated_at: z.string().describe("Last change."),
});
export type Request = z.infer<typeof requestSchema>;
type FeedbackStatus = (typeof FEEDBACK_STATUSES)[number];

export const historyEntrySchema = z.object({
  from_status: z.enum(FEEDBACK_STATUSES).describe("The status before the move."),
  to_status: z.enum(FEEDBACK_STATUSES).describe("The status after it."),
  note: z.string().describe('The operator\'s note with the move, or "".'),
  actor_id: z.string().describe("The operator who moved it."),
  at: z.string().describe("When."),
});
type HistoryEntry = z.infer<typeof historyEntrySchema>;

/** The seed's path; declined ends it from any live status, and shipped and declined are final. */
const PATH: readonly FeedbackStatus[] = ["open", "accepted", "in_progress", "shipped"];
export const isLive = (s: FeedbackStatus) => s === "open" || s === "accepted" || s === "in_progress";

/** Why a request may not move from one status to another, or null when it may. */
export function transitionProblem(from: FeedbackStatus, to: FeedbackStatus): string | null {
  if (!isLive(from)) return `it is ${from}, which is final`;
  if (to === "declined") return null;
  if (PATH.indexOf(to) <= PATH.indexOf(from)) return `${to} comes before ${from} on open → accepted → in_progress → shipped`;
  return null;
}

export async function historyOf(ctx: Ctx, requestId: string): Promise<HistoryEntry[]> {
  const rows = await ctx.d1
    .prepare(`SELECT from_status, to_status, note, actor_id, at FROM feature_request_events WHERE tenant_id = ? AND request_id = ? ORDER BY seq LIMIT 200`)
    .bind(ctx.tenantId, requestId)
    .all<HistoryEntry>();
  return rows.results;
}

export async function findRequest(ctx: Ctx, id: string): Promise<Request> {
  const row = await ctx.d1.prepare(`SELECT ${COLUMNS} FROM feature_requests WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, id).first<Request & { seq: number }>();
  if (!row) throw notFound("feature request", id, "feature_request_query lists your tenant's requests with their ids.");
  const { seq: _seq, ...request } = row;
  return request;
}
export const COLUMNS = "seq, id, title, body, kind, severity, tool_name, error_code, context, fingerprint, status, resolution_note, occurrences, actor_id, created_at, updated_at";

export type RequestRow = Request & { seq: number };

/** A page of requests that pass the filter, newest first. */
export async function listRequests(ctx: Ctx, where: string[], params: unknown[], limit: number): Promise<RequestRow[]> {
  return (
    await ctx.d1
      .prepare(`SELECT ${COLUMNS} FROM feature_requests WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`)
      .bind(...params, limit)
      .all<RequestRow>()
  ).results;
}

export interface RequestInsert {
  id: string;
  title: string;
  body: string;
  kind: string;
  severity: string;
  toolName: string;
  errorCode: string;
  context: string;
  fingerprint: string | null;
  now: string;
}

/** A new request from the caller; returns its id, or nothing when a live request has the same fingerprint. */
export function insertRequestStatement(ctx: Ctx, r: RequestInsert): D1PreparedStatement {
  return ctx.d1
    .prepare(
      `INSERT INTO feature_requests (id, tenant_id, actor_id, title, body, kind, severity, tool_name, error_code, context, fingerprint, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
    )
    .bind(r.id, ctx.tenantId, ctx.actorId, r.title, r.body, r.kind, r.severity, r.toolName, r.errorCode, r.context, r.fingerprint, r.now, r.now);
}

/** One more occurrence of the live request with this fingerprint, other than `newId`. */
export function countOccurrenceStatement(ctx: Ctx, fingerprint: string, newId: string, now: string): D1PreparedStatement {
  return ctx.d1
    .prepare(
      `UPDATE feature_requests SET occurrences = occurrences + 1, updated_at = ?
                  WHERE tenant_id = ? AND fingerprint = ? AND status IN ${LIVE_SQL} AND id <> ?`,
    )
    .bind(now, ctx.tenantId, fingerprint, newId);
}

export async function getRequest(ctx: Ctx, id: string): Promise<RequestRow | null> {
  return ctx.d1.prepare(`SELECT ${COLUMNS} FROM feature_requests WHERE id = ?`).bind(id).first<RequestRow>();
}

export async function findLiveRequestByFingerprint(ctx: Ctx, fingerprint: string): Promise<RequestRow | null> {
  return ctx.d1.prepare(`SELECT ${COLUMNS} FROM feature_requests WHERE tenant_id = ? AND fingerprint = ? AND status IN ${LIVE_SQL}`).bind(ctx.tenantId, fingerprint).first<RequestRow>();
}

/** Compare-and-swap of a request's status (a null note keeps the one it has); returns the id when it moved. */
export function setRequestStatusStatement(ctx: Ctx, id: string, from: string, to: string, note: string | null, now: string): D1PreparedStatement {
  return ctx.d1
    .prepare(`UPDATE feature_requests SET status = ?, resolution_note = COALESCE(?, resolution_note), updated_at = ? WHERE tenant_id = ? AND id = ? AND status = ? RETURNING id`)
    .bind(to, note, now, ctx.tenantId, id, from);
}

/** The history entry of a status move; written only when the statement before it changed a row. */
export function insertRequestEventStatement(ctx: Ctx, id: string, requestId: string, from: string, to: string, note: string, now: string): D1PreparedStatement {
  return ctx.d1
    .prepare(`INSERT INTO feature_request_events (id, tenant_id, request_id, from_status, to_status, note, actor_id, at) SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE changes() > 0`)
    .bind(id, ctx.tenantId, requestId, from, to, note, ctx.actorId, now);
}

/** The filer's notice of a status move: only when the statement before it changed a row and the filer is not the caller. */
export function notifyFilerStatement(ctx: Ctx, id: string, filer: string, requestId: string, summary: string, now: string): D1PreparedStatement {
  return ctx.d1
    .prepare(
      `INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at)
                  SELECT ?, ?, ?, 'feedback', 'feature_request', ?, ?, ?, ? WHERE changes() > 0 AND ? <> ?`,
    )
    .bind(id, ctx.tenantId, filer, requestId, summary, ctx.actorId, now, filer, ctx.actorId);
}
