/** Product feedback (seed 001): what gets in an agent's way, filed for this server's operators, and its lifecycle. */
import { z } from "zod";
import { notFound } from "../../core/errors";
import type { Ctx } from "../../core/context";
import { and, desc, eq, inArray, lt, ne, or, sql, type SQL } from "drizzle-orm";
import { dbOf, statementOf } from "../../db/client";
import { featureRequestEvents, featureRequests } from "../../db/schema";

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
  const h = featureRequestEvents;
  const rows = await dbOf(ctx)
    .select({ from_status: h.fromStatus, to_status: h.toStatus, note: h.note, actor_id: h.actorId, at: h.at })
    .from(h)
    .where(and(eq(h.tenantId, ctx.tenantId), eq(h.requestId, requestId)))
    .orderBy(h.seq)
    .limit(200)
    .all();
  return rows as HistoryEntry[];
}

const r = featureRequests;

/** A request row's fields, keyed by SQL column name so rows keep the shape the tools return. */
const requestFields = {
  seq: r.seq,
  id: r.id,
  title: r.title,
  body: r.body,
  kind: r.kind,
  severity: r.severity,
  tool_name: r.toolName,
  error_code: r.errorCode,
  context: r.context,
  fingerprint: r.fingerprint,
  status: r.status,
  resolution_note: r.resolutionNote,
  occurrences: r.occurrences,
  actor_id: r.actorId,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
};

const selectRequest = async (ctx: Ctx, where: SQL | undefined): Promise<RequestRow | null> => ((await dbOf(ctx).select(requestFields).from(r).where(where).get()) as RequestRow | undefined) ?? null;

/** Live statuses as a literal list: the partial unique index on live fingerprints is declared with exactly this list. */
const isLiveSql = sql`${r.status} IN ${sql.raw(LIVE_SQL)}`;

export async function findRequest(ctx: Ctx, id: string): Promise<Request> {
  const row = await selectRequest(ctx, and(eq(r.tenantId, ctx.tenantId), eq(r.id, id)));
  if (!row) throw notFound("feature request", id, "feature_request_query lists your tenant's requests with their ids.");
  const { seq: _seq, ...request } = row;
  return request;
}

export type RequestRow = Request & { seq: number };

/** Which requests feature_request_query reads, besides the caller's tenant. */
export interface RequestFilter {
  id?: string;
  statuses?: string[];
  kind?: string;
  /** Text the title or body contains (ASCII case folded). */
  q?: string;
  /** The cursor's position, to read the requests filed before it. */
  beforeSeq?: string | number | null;
}

/** A page of requests that pass the filter, newest first. */
export async function listRequests(ctx: Ctx, f: RequestFilter, limit: number): Promise<RequestRow[]> {
  const where = and(
    eq(r.tenantId, ctx.tenantId),
    f.id ? eq(r.id, f.id) : undefined,
    f.statuses?.length ? inArray(r.status, f.statuses) : undefined,
    f.kind ? eq(r.kind, f.kind) : undefined,
    f.q ? or(sql`instr(lower(${r.title}), lower(${f.q})) > 0`, sql`instr(lower(${r.body}), lower(${f.q})) > 0`) : undefined,
    f.beforeSeq !== undefined ? lt(r.seq, f.beforeSeq as number) : undefined,
  );
  return (await dbOf(ctx).select(requestFields).from(r).where(where).orderBy(desc(r.seq)).limit(limit).all()) as RequestRow[];
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
export function insertRequestStatement(ctx: Ctx, req: RequestInsert): D1PreparedStatement {
  const { now, ...row } = req;
  // drizzle writes null for a column left out (SQLite has no DEFAULT in VALUES), so the migration's defaults are spelled out.
  const defaults = { status: "open", resolutionNote: "", occurrences: 1 };
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .insert(r)
      .values({ ...row, ...defaults, tenantId: ctx.tenantId, actorId: ctx.actorId, createdAt: now, updatedAt: now })
      .onConflictDoNothing()
      .returning({ id: r.id }),
  );
}

/** One more occurrence of the live request with this fingerprint, other than `newId`. */
export function countOccurrenceStatement(ctx: Ctx, fingerprint: string, newId: string, now: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .update(r)
      .set({ occurrences: sql`${r.occurrences} + 1`, updatedAt: now })
      .where(and(eq(r.tenantId, ctx.tenantId), eq(r.fingerprint, fingerprint), isLiveSql, ne(r.id, newId))),
  );
}

export async function getRequest(ctx: Ctx, id: string): Promise<RequestRow | null> {
  return selectRequest(ctx, eq(r.id, id));
}

export async function findLiveRequestByFingerprint(ctx: Ctx, fingerprint: string): Promise<RequestRow | null> {
  return selectRequest(ctx, and(eq(r.tenantId, ctx.tenantId), eq(r.fingerprint, fingerprint), isLiveSql));
}

/** Compare-and-swap of a request's status (a null note keeps the one it has); returns the id when it moved. */
export function setRequestStatusStatement(ctx: Ctx, id: string, from: string, to: string, note: string | null, now: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .update(r)
      .set({ status: to, resolutionNote: sql`COALESCE(${note}, ${r.resolutionNote})`, updatedAt: now })
      .where(and(eq(r.tenantId, ctx.tenantId), eq(r.id, id), eq(r.status, from)))
      .returning({ id: r.id }),
  );
}

/** The history entry of a status move; written only when the statement before it changed a row. */
export function insertRequestEventStatement(ctx: Ctx, id: string, requestId: string, from: string, to: string, note: string, now: string): D1PreparedStatement {
  // Hand SQL: drizzle cannot guard an INSERT…SELECT on `changes() > 0`.
  return ctx.d1
    .prepare(`INSERT INTO feature_request_events (id, tenant_id, request_id, from_status, to_status, note, actor_id, at) SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE changes() > 0`)
    .bind(id, ctx.tenantId, requestId, from, to, note, ctx.actorId, now);
}

/** The filer's notice of a status move: only when the statement before it changed a row and the filer is not the caller. */
export function notifyFilerStatement(ctx: Ctx, id: string, filer: string, requestId: string, summary: string, now: string): D1PreparedStatement {
  // Hand SQL: drizzle cannot guard an INSERT…SELECT on `changes() > 0`.
  return ctx.d1
    .prepare(
      `INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at)
                  SELECT ?, ?, ?, 'feedback', 'feature_request', ?, ?, ?, ? WHERE changes() > 0 AND ? <> ?`,
    )
    .bind(id, ctx.tenantId, filer, requestId, summary, ctx.actorId, now, filer, ctx.actorId);
}
