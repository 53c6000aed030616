/** Handoffs and the inbox (seed 001): typed work requests between actors. */
import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso, parseIsoInstant } from "../../core/time";
import type { Ctx } from "../../core/context";
import { excerpt, invalidInput, notFound, ToolError } from "../../core/errors";
import { activityStatement, type Condition, jsonArray } from "../shared";
import { and, asc, desc, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, jsonValues, statementOf } from "../../db/client";
import { afterTimeAndId } from "../../core/cursor";
import { handoffRecipients, handoffs } from "../../db/schema";
import { announceNotices } from "../collab/inbox";

export const HANDOFF_KINDS = ["handoff", "question", "review", "collab", "approval"] as const;
export type HandoffKind = (typeof HANDOFF_KINDS)[number];
export const HANDOFF_STATUSES = ["open", "claimed", "responded", "resolved", "cancelled"] as const;
export type HandoffStatus = (typeof HANDOFF_STATUSES)[number];
export const LIVE = ["open", "claimed"];
/** How a review is answered. Only `approved` unlocks done; the other two send the task back to in_progress. */
export const VERDICTS = ["approved", "changes_requested", "rejected"] as const;
export type Verdict = (typeof VERDICTS)[number];

const optionSchema = z.object({ label: z.string().describe("Option."), summary: z.string().describe("What it means.") });

export const handoffSchema = z.object({
  id: z.string().describe("Handoff id."),
  kind: z.enum(HANDOFF_KINDS).describe("handoff, question, review, collab or approval."),
  title: z.string().describe("Title."),
  body: z.string().describe("The request."),
  from_actor_id: z.string().describe("Who asked."),
  to_actor_ids: z.array(z.string()).describe("Recipients."),
  status: z.enum(HANDOFF_STATUSES).describe("open, claimed, responded, resolved or cancelled."),
  claimed_by: z.string().nullable().describe("The recipient working on it, or null."),
  options: z.array(optionSchema).describe("Choices offered."),
  allow_free_text: z.boolean().describe("Whether a response may be free text rather than an option."),
  response: z.record(z.string(), z.unknown()).nullable().describe("The response, or null."),
  responded_by: z.string().nullable().describe("Who responded, or null."),
  responded_at: z.string().nullable().describe("When, or null."),
  verdict: z.enum(VERDICTS).nullable().describe("A review's verdict (approved, changes_requested or rejected), or null: not answered yet, or not a review."),
  resolution: z.string().nullable().describe("processed or cancelled once resolved, else null."),
  resolution_note: z.string().describe("Note given when resolving."),
  related_task_id: z.string().nullable().describe("Related task, or null."),
  related_project_id: z.string().nullable().describe("Related project, or null."),
  due_at: z.string().nullable().describe("Due time, or null."),
  fingerprint: z.string().nullable().describe("De-duplication fingerprint, or null."),
  created_at: z.string().describe("When it was created."),
  updated_at: z.string().describe("Last change."),
  acked: z.boolean().describe("Whether you (as a recipient) acknowledged it; false if you are not one."),
});
export type Handoff = z.infer<typeof handoffSchema>;

/** Handoffs as the room's reads name them: `h`, which the recipient subqueries and the verbs' filters correlate with. */
const h = alias(handoffs, "h");

/** A handoff row's own columns, keyed by SQL column name so rows keep the shape the tools return. */
const handoffColumns = {
  id: h.id,
  kind: h.kind,
  title: h.title,
  body: h.body,
  from_actor_id: h.fromActorId,
  status: h.status,
  claimed_by: h.claimedBy,
  options: h.options,
  allow_free_text: h.allowFreeText,
  response: h.response,
  responded_by: h.respondedBy,
  responded_at: h.respondedAt,
  verdict: h.verdict,
  resolution: h.resolution,
  resolution_note: h.resolutionNote,
  related_task_id: h.relatedTaskId,
  related_project_id: h.relatedProjectId,
  due_at: h.dueAt,
  fingerprint: h.fingerprint,
  created_at: h.createdAt,
  updated_at: h.updatedAt,
};

// Written out: the subqueries correlate with `h.`, which drizzle drops inside fields of a single-table select.
const RECIPIENTS_OF_H = "FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id";
const TO_ACTOR_IDS_SQL = `(SELECT json_group_array(r.actor_id) ${RECIPIENTS_OF_H})`;
const ACKED_BY = `(SELECT r.acked_at IS NOT NULL ${RECIPIENTS_OF_H} AND r.actor_id = `;

/** HandoffRow's fields for a drizzle select over `h`: the row's columns, its recipients, and whether `actorId` acked it. */
const handoffFields = (actorId: string) => ({
  ...handoffColumns,
  to_actor_ids: sql<string>`${sql.raw(TO_ACTOR_IDS_SQL)}`.as("to_actor_ids"),
  acked: sql<number | null>`${sql.raw(ACKED_BY)}${actorId})`.as("acked"),
});

/** `actor` is among the handoff's recipients. */
const addressedTo = (actor: string): SQL => sql`EXISTS (${sql.raw(`SELECT 1 ${RECIPIENTS_OF_H}`)} AND r.actor_id = ${actor})`;

/** Live (open or claimed), written as the live-fingerprint partial index declares it so lookups stay on it. */
const isLive = sql`${h.status} IN ('open', 'claimed')`;

export type HandoffRow = Omit<Handoff, "to_actor_ids" | "options" | "response" | "allow_free_text" | "acked"> & {
  to_actor_ids: string;
  options: string;
  response: string | null;
  allow_free_text: number;
  acked: number | null;
};

export function toHandoff(r: HandoffRow): Handoff {
  let response: Record<string, unknown> | null;
  try {
    response = r.response ? (JSON.parse(r.response) as Record<string, unknown>) : null;
  } catch {
    response = {};
  }
  return {
    ...r,
    to_actor_ids: jsonArray<string>(r.to_actor_ids).sort(),
    options: jsonArray<{ label: string; summary?: string }>(r.options).map((o) => ({ label: o.label, summary: o.summary ?? "" })),
    allow_free_text: r.allow_free_text === 1,
    response,
    acked: r.acked === 1,
  };
}

/** The handoff, or null when there is none in the caller's tenant. */
export async function maybeHandoff(ctx: Ctx, id: string): Promise<Handoff | null> {
  const row = await dbOf(ctx)
    .select(handoffFields(ctx.actorId))
    .from(h)
    .where(and(eq(h.tenantId, ctx.tenantId), eq(h.id, id)))
    .get();
  return row ? toHandoff(row as HandoffRow) : null;
}

export async function findHandoff(ctx: Ctx, id: string): Promise<Handoff> {
  const h = await maybeHandoff(ctx, id);
  if (!h) throw notFound("handoff", id, "handoff_query or inbox lists your handoffs.");
  return h;
}

export type HandoffOption = { label: string; summary: string };

/** A handoff to write: recipients already resolved to actor ids, due time already parsed. */
export interface HandoffSpec {
  kind: HandoffKind;
  title: string;
  body: string;
  recipients: readonly string[];
  options: readonly HandoffOption[];
  allowFreeText: boolean;
  relatedTaskId?: string | null;
  relatedProjectId?: string | null;
  dueAt?: Date | null;
  fingerprint?: string | null;
}

/**
 * The statements that write a handoff (its row, handoff.created, one recipient row and one
 * notification per recipient) for a D1 batch. The row is written only when `when` holds and no
 * live handoff holds its fingerprint; the rest only if the row was, so a caller that puts its own
 * row before these (and `when` on it) gets both or neither.
 */
export function handoffStatements(ctx: Ctx, spec: HandoffSpec, when: Condition = { sql: "1", params: [] }): { id: string; statements: D1PreparedStatement[] } {
  const id = uuidv7();
  const now = iso(ctx.clock.now());
  const projectId = spec.relatedProjectId ?? null;
  const recipients = [...new Set(spec.recipients)];
  // Hand SQL: INSERT…SELECT guarded by the caller's condition, and rows that exist only if the handoff's did.
  const statements = [
    ctx.d1
      .prepare(
        `INSERT INTO handoffs (id, tenant_id, kind, title, body, from_actor_id, status, related_task_id, related_project_id, fingerprint, options, allow_free_text, due_at, created_at, updated_at)
         SELECT ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?, ?, ?, ?, ? WHERE ${when.sql} ON CONFLICT DO NOTHING RETURNING id`,
      )
      .bind(
        id,
        ctx.tenantId,
        spec.kind,
        spec.title,
        spec.body,
        ctx.actorId,
        spec.relatedTaskId ?? null,
        projectId,
        spec.fingerprint ?? null,
        JSON.stringify(spec.options),
        spec.allowFreeText ? 1 : 0,
        spec.dueAt ? iso(spec.dueAt) : null,
        now,
        now,
        ...when.params,
      ),
    activityStatement(ctx, { verb: "handoff.created", objectType: "work_request", objectId: id, projectId, summary: `${spec.kind}: ${spec.title}`, ifPreviousChanged: true }),
    // Recipients and notifications exist only if the handoff row was written.
    ...recipients.flatMap((actor) => [
      ctx.d1.prepare(`INSERT INTO handoff_recipients (tenant_id, handoff_id, actor_id) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM handoffs WHERE id = ?)`).bind(ctx.tenantId, id, actor, id),
      ctx.d1
        .prepare(
          `INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at)
                      SELECT ?, ?, ?, ?, 'work_request', ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM handoffs WHERE id = ?)`,
        )
        .bind(uuidv7(), ctx.tenantId, actor, spec.kind, id, spec.title, ctx.actorId, now, id),
    ]),
  ];
  return { id, statements };
}

/**
 * No live review handoff on the task (addressed to `reviewer`, when given), as a condition for a
 * handoff insert, so two racing requests cannot both open one.
 */
// Hand SQL: a guard other rooms' inserts and updates carry as SQL text.
export const noLiveReview = (ctx: Ctx, taskId: string, reviewer?: string): Condition => ({
  sql: `NOT EXISTS (SELECT 1 FROM handoffs h WHERE h.tenant_id = ? AND h.related_task_id = ? AND h.kind = 'review' AND h.status IN ('open', 'claimed')
          ${reviewer ? "AND EXISTS (SELECT 1 FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id AND r.actor_id = ?)" : ""})`,
  params: [ctx.tenantId, taskId, ...(reviewer ? [reviewer] : [])],
});

/** The task's live review handoff (to `reviewer`, when given), newest first, or null. */
export async function liveReview(ctx: Ctx, taskId: string, reviewer?: string): Promise<{ id: string; to: string[] } | null> {
  const row = await dbOf(ctx)
    .select({ id: h.id, recipients: sql<string>`${sql.raw(TO_ACTOR_IDS_SQL)}`.as("recipients") })
    .from(h)
    .where(and(eq(h.tenantId, ctx.tenantId), eq(h.relatedTaskId, taskId), eq(h.kind, "review"), isLive, reviewer ? addressedTo(reviewer) : undefined))
    .orderBy(desc(h.createdAt), desc(h.id))
    .limit(1)
    .get();
  return row ? { id: row.id, to: jsonArray<string>(row.recipients).sort() } : null;
}

/** One review at a time per task: a second request would become "the latest" and strand the first. */
export async function refuseSecondReview(ctx: Ctx, task: { id: string; ref: string }): Promise<void> {
  const open = await liveReview(ctx, task.id);
  if (!open) return;
  throw new ToolError("review_already_open", `${task.ref} already has an open review handoff, ${open.id} (to ${open.to.join(", ")}).`, {
    hint: `Wait for its verdict (handoff_query { direction: "any", related_task_id: "${task.ref}" } shows it), or close it with handoff_resolve { handoff_id: "${open.id}", resolution: "cancelled" } and ask again.`,
  });
}

/** Writes a handoff; a live one holding the same fingerprint is returned instead (deduplicated). */
export async function createHandoff(ctx: Ctx, spec: HandoffSpec, onMiss?: () => Promise<void>): Promise<{ handoff: Handoff; deduplicated: boolean }> {
  const review = spec.kind === "review" && spec.relatedTaskId ? noLiveReview(ctx, spec.relatedTaskId) : undefined;
  const { id, statements } = handoffStatements(ctx, spec, review);
  const [inserted] = await ctx.d1.batch<{ id: string }>(statements);
  if (inserted!.results.length > 0) {
    await announceNotices(ctx, spec.recipients);
    return { handoff: await findHandoff(ctx, id), deduplicated: false };
  }
  // Lost to a review opened meanwhile: say so rather than report a duplicate.
  if (onMiss) await onMiss();
  const live = await dbOf(ctx)
    .select(handoffFields(ctx.actorId))
    .from(h)
    .where(and(eq(h.tenantId, ctx.tenantId), eq(h.fingerprint, spec.fingerprint ?? ""), isLive))
    .get();
  if (!live) throw new ToolError("conflict", "The handoff could not be written and no live duplicate was found.", { hint: "Retry.", retryable: true });
  return { handoff: toHandoff(live as HandoffRow), deduplicated: true };
}

/** due_at as the handoff tools take it: a date or an instant, kept in UTC (parseDueAt). */
export const dueAtField = z.string().max(64);

export function parseDueAt(text: string | undefined): Date | null {
  if (!text) return null;
  const due = parseIsoInstant(text);
  if (!due) throw invalidInput(`due_at '${excerpt(text, 64)}' is not an ISO-8601 time.`, "Use e.g. 2026-12-01 or 2026-12-01T17:00:00Z.");
  return due;
}

/** How a handoff is answered (see answerStatements). */
export interface HandoffAnswer {
  response: Record<string, unknown>;
  verdict: Verdict | null;
  /** Close it as processed with the answer, when nothing is left to do once it is given (a review, an approval). */
  resolve: boolean;
  /** The statuses it may be answered from: the update is a compare-and-swap on them. */
  from: readonly HandoffStatus[];
  notifyAsker: boolean;
  /** A further condition of the update: another write of the batch that must have landed first. */
  when?: Condition;
}

/**
 * The statements that record the caller's answer to `h` for a D1 batch: the update first (it
 * returns the handoff's id when it landed), handoff.responded, the asker's notification. `landed`
 * holds once this call's answer is the handoff's (same responder, same instant, same verdict), for
 * the caller's own statements that must act only then.
 */
export function answerStatements(ctx: Ctx, h: Handoff, a: HandoffAnswer, now: string): { statements: D1PreparedStatement[]; landed: Condition } {
  const when = a.when ?? { sql: "1", params: [] };
  const landed = {
    sql: `EXISTS (SELECT 1 FROM handoffs WHERE tenant_id = ? AND id = ? AND responded_by = ? AND responded_at = ? AND verdict IS ?)`,
    params: [ctx.tenantId, h.id, ctx.actorId, now, a.verdict],
  };
  const summary = a.verdict ? `${a.verdict}: ${h.title}` : `answered: ${h.title}`;
  // Hand SQL: a compare-and-swap guarded by the caller's SQL condition, and a notification only if it landed.
  const statements = [
    ctx.d1
      .prepare(
        `UPDATE handoffs SET status = ?, response = ?, responded_by = ?, responded_at = ?, verdict = ?, claimed_by = COALESCE(claimed_by, ?), updated_at = ?,
                  resolution = CASE WHEN ? THEN 'processed' ELSE resolution END, resolved_at = CASE WHEN ? THEN ? ELSE resolved_at END
                WHERE tenant_id = ? AND id = ? AND status IN (SELECT value FROM json_each(?)) AND ${when.sql} RETURNING id`,
      )
      .bind(
        a.resolve ? "resolved" : "responded",
        JSON.stringify(a.response),
        ctx.actorId,
        now,
        a.verdict,
        ctx.actorId,
        now,
        a.resolve ? 1 : 0,
        a.resolve ? 1 : 0,
        now,
        ctx.tenantId,
        h.id,
        JSON.stringify(a.from),
        ...when.params,
      ),
    activityStatement(ctx, {
      verb: "handoff.responded",
      objectType: "work_request",
      objectId: h.id,
      projectId: h.related_project_id,
      summary,
      metadata: a.verdict ? { verdict: a.verdict, resolved: a.resolve } : {},
      ifPreviousChanged: true,
    }),
  ];
  if (a.notifyAsker) {
    statements.push(
      ctx.d1
        .prepare(
          `INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at)
                      SELECT ?, ?, ?, 'response', 'work_request', ?, ?, ?, ? WHERE ${landed.sql}`,
        )
        .bind(uuidv7(), ctx.tenantId, h.from_actor_id, h.id, summary, ctx.actorId, now, ...landed.params),
    );
  }
  return { statements, landed };
}

export const handoffIdField = z.string().min(1).max(100).describe("The handoff.");

/** Where a task's review stands, as the done gate and task_get see it. */
export const reviewStandingSchema = z.object({
  handoff_id: z.string().describe("The latest review handoff addressed to the task's reviewer."),
  status: z.enum(HANDOFF_STATUSES).describe("Its status."),
  verdict: z.enum(VERDICTS).nullable().describe("Its verdict, or null while unanswered."),
  requested_by: z.string().describe("Who asked for the review (its from_actor_id)."),
  responded_by: z.string().nullable().describe("Who gave the verdict, or null."),
  responded_at: z.string().nullable().describe("When, or null."),
  approved: z.boolean().describe("True when this review unlocks done: approved by the task's reviewer, who is neither the one who asked nor the task's assignee."),
  reason: z.string().describe('Why it does not unlock done ("" when approved).'),
});
export type ReviewStanding = z.infer<typeof reviewStandingSchema>;

/**
 * The latest review handoff on a task addressed to its reviewer, and whether it unlocks done. Only
 * the latest counts, so a fresh round of review must itself be approved, and an approval counts
 * only from the reviewer, never from whoever asked for it or the assignee doing the work.
 */
export async function reviewStanding(ctx: Ctx, task: { id: string; assignee_actor_id: string | null }, reviewer: string): Promise<ReviewStanding | null> {
  const review = (await dbOf(ctx)
    .select({ id: h.id, status: h.status, verdict: h.verdict, from_actor_id: h.fromActorId, responded_by: h.respondedBy, responded_at: h.respondedAt })
    .from(h)
    .where(and(eq(h.tenantId, ctx.tenantId), eq(h.relatedTaskId, task.id), eq(h.kind, "review"), addressedTo(reviewer)))
    .orderBy(desc(h.createdAt), desc(h.id))
    .limit(1)
    .get()) as { id: string; status: Handoff["status"]; verdict: Verdict | null; from_actor_id: string; responded_by: string | null; responded_at: string | null } | undefined;
  if (!review) return null;
  const reason =
    review.verdict === null
      ? "the reviewer has not given a verdict yet"
      : review.verdict !== "approved"
        ? `the verdict is ${review.verdict}`
        : review.responded_by !== reviewer
          ? "it was approved by someone other than the task's reviewer"
          : review.responded_by === review.from_actor_id || review.responded_by === task.assignee_actor_id
            ? "it was approved by the one who asked for it or the task's assignee, and nobody approves their own work"
            : "";
  return {
    handoff_id: review.id,
    status: review.status,
    verdict: review.verdict,
    requested_by: review.from_actor_id,
    responded_by: review.responded_by,
    responded_at: review.responded_at,
    approved: reason === "",
    reason,
  };
}

/** handoff_query's filter: whose handoffs, and which. */
export interface HandoffFilter {
  direction: "to_me" | "from_me" | "any";
  statuses?: string[];
  kinds?: string[];
  relatedTaskId?: string;
  /** The previous page's cursor: resume after its last row. */
  cursor?: string;
}

/** A page of handoffs that pass the filter, newest first. */
export async function listHandoffs(ctx: Ctx, f: HandoffFilter, limit: number): Promise<HandoffRow[]> {
  const where = and(
    eq(h.tenantId, ctx.tenantId),
    f.direction === "to_me" ? addressedTo(ctx.actorId) : f.direction === "from_me" ? eq(h.fromActorId, ctx.actorId) : undefined,
    f.statuses?.length ? inArray(h.status, f.statuses) : undefined,
    f.kinds?.length ? inArray(h.kind, f.kinds) : undefined,
    f.relatedTaskId !== undefined ? eq(h.relatedTaskId, f.relatedTaskId) : undefined,
    afterTimeAndId(f.cursor, h.createdAt, h.id),
  );
  return (await dbOf(ctx).select(handoffFields(ctx.actorId)).from(h).where(where).orderBy(desc(h.createdAt), desc(h.id)).limit(limit).all()) as HandoffRow[];
}

/**
 * The inbox, as one batch: acknowledge `ack` (returns the handoff ids acked), then up to `limit` unacknowledged
 * items oldest first, then their count (row `n`), optionally only of `kinds`.
 */
export function inboxStatements(ctx: Ctx, kindsFilter: string[] | undefined, ack: string[], limit: number, now: string): D1PreparedStatement[] {
  const db = dbOf(ctx);
  const hr = handoffRecipients;
  const r = alias(handoffRecipients, "r");
  const recipient = and(eq(r.tenantId, h.tenantId), eq(r.handoffId, h.id));
  // Resolved and cancelled handoffs need no action, so they leave the inbox (as whoami counts it).
  const pending = and(
    eq(h.tenantId, ctx.tenantId),
    eq(r.actorId, ctx.actorId),
    isNull(r.ackedAt),
    inArray(h.status, ["open", "claimed", "responded"]),
    kindsFilter?.length ? inArray(h.kind, kindsFilter) : undefined,
  );
  return [
    statementOf(
      ctx.d1,
      db
        .update(hr)
        .set({ ackedAt: now })
        .where(and(eq(hr.tenantId, ctx.tenantId), eq(hr.actorId, ctx.actorId), isNull(hr.ackedAt), inArray(hr.handoffId, jsonValues(ack))))
        .returning({ handoff_id: hr.handoffId }),
    ),
    statementOf(ctx.d1, db.select(handoffFields(ctx.actorId)).from(h).innerJoin(r, recipient).where(pending).orderBy(asc(h.createdAt), asc(h.id)).limit(limit)),
    statementOf(
      ctx.d1,
      db
        .select({ n: sql<number>`COUNT(*)`.as("n") })
        .from(h)
        .innerJoin(r, recipient)
        .where(pending),
    ),
  ];
}

/** The review verdict's notice to whoever does the task; written only when the answer `landed`. */
// Hand SQL: INSERT…SELECT guarded by `landed`, SQL text shared with the answer's other statements.
export function notifyVerdictStatement(ctx: Ctx, id: string, to: string, taskId: string, summary: string, now: string, landed: Condition): D1PreparedStatement {
  return ctx.d1
    .prepare(
      `INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at)
                        SELECT ?, ?, ?, 'review_verdict', 'task', ?, ?, ?, ? WHERE ${landed.sql}`,
    )
    .bind(id, ctx.tenantId, to, taskId, summary, ctx.actorId, now, ...landed.params);
}

/** Back to work, only from in_review and only when the answer `landed`: a task someone already moved on is left where it is. */
// Hand SQL: guarded by `landed`, SQL text shared with the answer's other statements.
export function sendTaskBackStatement(ctx: Ctx, taskId: string, now: string, landed: Condition): D1PreparedStatement {
  return ctx.d1
    .prepare(`UPDATE tasks SET status = 'in_progress', updated_at = ? WHERE tenant_id = ? AND id = ? AND status = 'in_review' AND ${landed.sql} RETURNING id`)
    .bind(now, ctx.tenantId, taskId, ...landed.params);
}

/** Compare-and-swap: resolves or cancels the handoff only while it is still in `from`; returns the id when it did. */
export function closeHandoffStatement(ctx: Ctx, id: string, from: string, status: string, resolution: string, note: string, now: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .update(handoffs)
      .set({ status, resolution, resolutionNote: note, resolvedAt: now, updatedAt: now })
      .where(and(eq(handoffs.tenantId, ctx.tenantId), eq(handoffs.id, id), eq(handoffs.status, from)))
      .returning({ id: handoffs.id }),
  );
}
