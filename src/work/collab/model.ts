/** Comments, the activity log, and notifications (seed 001): the shared room of the work ledger. */
import { z } from "zod";
import { and, asc, count, desc, eq, gt, gte, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { dbOf, jsonValues, statementOf } from "../../db/client";
import { activity, comments, decisions, handoffs, knowledgeNotes, notifications } from "../../db/schema";
import type { Ctx } from "../../core/context";
import { notFound } from "../../core/errors";
import { activityActorName, jsonArray } from "../shared";
import { findProject } from "../projects/model";
import { findTask } from "../tasks/model";

export const OBJECT_TYPES = ["project", "task", "decision", "work_request", "note"] as const;
type ObjectType = (typeof OBJECT_TYPES)[number];

/** Where each commentable object lives (projects and tasks resolve by key as well), and its project column. */
const OBJECT_TABLES: Record<Exclude<ObjectType, "project" | "task">, { table: SQLiteTable; tenantId: SQLiteColumn; id: SQLiteColumn; projectId: SQLiteColumn }> = {
  decision: { table: decisions, tenantId: decisions.tenantId, id: decisions.id, projectId: decisions.projectId },
  work_request: { table: handoffs, tenantId: handoffs.tenantId, id: handoffs.id, projectId: handoffs.relatedProjectId },
  note: { table: knowledgeNotes, tenantId: knowledgeNotes.tenantId, id: knowledgeNotes.id, projectId: knowledgeNotes.projectId },
};

/**
 * Resolves an object reference in the caller's tenant: its canonical id (tasks may be named by
 * KEY-number, projects by key) and its project, for the activity timeline.
 */
export async function findObject(ctx: Ctx, type: ObjectType, ref: string): Promise<{ id: string; projectId: string | null }> {
  if (type === "task") {
    const task = await findTask(ctx, ref);
    return { id: task.id, projectId: task.project_id };
  }
  if (type === "project") {
    const project = await findProject(ctx, ref);
    return { id: project.id, projectId: project.id };
  }
  const t = OBJECT_TABLES[type];
  const row = (await dbOf(ctx)
    .select({ project_id: t.projectId })
    .from(t.table)
    .where(and(eq(t.tenantId, ctx.tenantId), eq(t.id, ref)))
    .get()) as { project_id: string | null } | undefined;
  if (!row) throw notFound(type, ref, `Pass the id of a ${type} in your tenant.`);
  return { id: ref, projectId: row.project_id };
}

export const commentSchema = z.object({
  id: z.string().describe("Comment id."),
  object_type: z.enum(OBJECT_TYPES).describe("What it is on."),
  object_id: z.string().describe("The object's id."),
  body: z.string().describe("Text."),
  author_actor_id: z.string().describe("Who wrote it."),
  parent_comment_id: z.string().nullable().describe("The comment it replies to, or null."),
  mentions: z.array(z.string()).describe("Actor ids mentioned (each was notified)."),
  created_at: z.string().describe("When."),
});
export type CommentRow = Omit<z.infer<typeof commentSchema>, "mentions"> & { mentions: string; seq: number };
export const toComment = ({ seq: _seq, ...r }: CommentRow) => ({ ...r, mentions: jsonArray<string>(r.mentions) });

export const objectFields = {
  object_type: z.enum(OBJECT_TYPES).describe("project, task, decision, work_request (a handoff) or note."),
  object_id: z.string().min(1).max(100).describe("The object's id."),
};

export const activityRowSchema = z.object({
  id: z.string().describe("Activity id."),
  at: z.string().describe("When."),
  actor_id: z.string().describe("Who."),
  actor_name: z.string().describe('Their name ("" if the actor is gone).'),
  verb: z.string().describe("What happened."),
  object_type: z.string().describe("Kind of object."),
  object_id: z.string().describe("Object id."),
  project_id: z.string().nullable().describe("Project, or null."),
  summary: z.string().describe("One line."),
  severity: z.enum(["info", "warn", "critical"]).describe("info, warn or critical."),
  session_id: z.string().describe('Session it came from, or "".'),
  run_id: z.string().nullable().describe("Run it is attributed to, or null."),
  metadata: z.record(z.string(), z.unknown()).describe("Extra data."),
});
export type ActivityRow = Omit<z.infer<typeof activityRowSchema>, "metadata"> & { metadata: string; seq: number };
export function toActivity({ seq: _seq, ...r }: ActivityRow): z.infer<typeof activityRowSchema> {
  let metadata: Record<string, unknown> = {};
  try {
    metadata = JSON.parse(r.metadata) as Record<string, unknown>;
  } catch {
    /* damaged metadata reads as {} */
  }
  return { ...r, metadata };
}
/** An activity row's fields as activity_log and activity_query return them, keyed by SQL column name; for a select from `activity`. */
const activityFields = {
  seq: activity.seq,
  id: activity.id,
  at: activity.at,
  actor_id: activity.actorId,
  actor_name: activityActorName,
  verb: activity.verb,
  object_type: activity.objectType,
  object_id: activity.objectId,
  project_id: activity.projectId,
  summary: activity.summary,
  severity: activity.severity,
  session_id: activity.sessionId,
  run_id: activity.runId,
  metadata: activity.metadata,
};

export const notificationSchema = z.object({
  id: z.string().describe("Notification id."),
  kind: z.string().describe("mention, handoff, review, …"),
  object_type: z.string().describe("What it points at."),
  object_id: z.string().describe("That object's id."),
  summary: z.string().describe("One line."),
  from_actor_id: z.string().describe("Who caused it."),
  created_at: z.string().describe("When."),
  read_at: z.string().nullable().describe("When you marked it read, or null."),
});

/** One activity entry as logged by activity_log; a repeat of the same content hash is skipped. */
export interface ActivityInsert {
  id: string;
  at: string;
  actorId: string;
  verb: string;
  objectType: string;
  objectId: string;
  projectId: string | null;
  summary: string;
  severity: string;
  sessionId: string;
  runId: string | null;
  metadata: string;
  contentHash: string;
}

export function insertActivityStatement(ctx: Ctx, a: ActivityInsert): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .insert(activity)
      .values({
        id: a.id,
        tenantId: ctx.tenantId,
        at: a.at,
        actorId: a.actorId,
        verb: a.verb,
        objectType: a.objectType,
        objectId: a.objectId,
        projectId: a.projectId,
        summary: a.summary,
        severity: a.severity,
        sessionId: a.sessionId,
        runId: a.runId,
        metadata: a.metadata,
        contentHash: a.contentHash,
      })
      .onConflictDoNothing(),
  );
}

/** The activity entry holding a content hash (the one just written, or the earlier duplicate). */
export function activityByHashStatement(ctx: Ctx, hash: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .select(activityFields)
      .from(activity)
      .where(and(eq(activity.tenantId, ctx.tenantId), eq(activity.contentHash, hash))),
  );
}

/** activity_query's filter, and where the page resumes. */
export interface ActivityFilter {
  projectId?: string;
  actorId?: string;
  objectType?: string;
  objectId?: string;
  verb?: string;
  /** A family of verbs by their prefix, e.g. `task.`. */
  verbPrefix?: string;
  runId?: string;
  /** ISO bounds, inclusive. */
  since?: string;
  until?: string;
  /** The cursor's position: only activity before this seq. */
  beforeSeq?: string | number | null;
}

/** A page of activity that passes the filter, newest first. */
export async function listActivity(ctx: Ctx, f: ActivityFilter, limit: number): Promise<ActivityRow[]> {
  const a = activity;
  const where = and(
    eq(a.tenantId, ctx.tenantId),
    f.projectId !== undefined ? eq(a.projectId, f.projectId) : undefined,
    f.actorId !== undefined ? eq(a.actorId, f.actorId) : undefined,
    f.objectType !== undefined ? eq(a.objectType, f.objectType) : undefined,
    f.objectId !== undefined ? eq(a.objectId, f.objectId) : undefined,
    f.verbPrefix !== undefined ? sql`substr(${a.verb}, 1, ${f.verbPrefix.length}) = ${f.verbPrefix}` : undefined,
    f.verb !== undefined ? eq(a.verb, f.verb) : undefined,
    f.runId !== undefined ? eq(a.runId, f.runId) : undefined,
    f.since !== undefined ? gte(a.at, f.since) : undefined,
    f.until !== undefined ? lte(a.at, f.until) : undefined,
    f.beforeSeq !== undefined ? lt(a.seq, f.beforeSeq as number) : undefined,
  );
  return (await dbOf(ctx).select(activityFields).from(a).where(where).orderBy(desc(a.seq)).limit(limit).all()) as ActivityRow[];
}

export type NotificationRow = z.infer<typeof notificationSchema> & { seq: number; pinned: number };

/** 1 for an unread overseer message (it goes before everything else in the inbox), else 0. */
export const pinnedNotice = sql<number>`(${notifications.kind} = 'overseer' AND ${notifications.readAt} IS NULL)`;

/**
 * A page of the caller's own notifications after keyset `after` ([pinned, seq] of the last row
 * shown), unread overseer messages first, then newest first; joins a batch.
 */
export function callerNotificationsStatement(ctx: Ctx, unreadOnly: boolean, after: readonly [number, number] | null, limit: number): D1PreparedStatement {
  const n = notifications;
  const beyond = after ? or(lt(pinnedNotice, after[0]), and(eq(pinnedNotice, after[0]), lt(n.seq, after[1]))) : undefined;
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .select({
        pinned: pinnedNotice.as("pinned"),
        seq: n.seq,
        id: n.id,
        kind: n.kind,
        object_type: n.objectType,
        object_id: n.objectId,
        summary: n.summary,
        from_actor_id: n.fromActorId,
        created_at: n.createdAt,
        read_at: n.readAt,
      })
      .from(n)
      .where(and(eq(n.tenantId, ctx.tenantId), eq(n.actorId, ctx.actorId), unreadOnly ? isNull(n.readAt) : undefined, beyond))
      .orderBy(desc(pinnedNotice), desc(n.seq))
      .limit(limit),
  );
}

/** How many of the caller's notifications are unread (row `n`); joins a batch. */
export function callerUnreadCountStatement(ctx: Ctx): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .select({ n: count().as("n") })
      .from(notifications)
      .where(and(eq(notifications.tenantId, ctx.tenantId), eq(notifications.actorId, ctx.actorId), isNull(notifications.readAt))),
  );
}

/** Marks the caller's unread notifications among `ids` read; returns the ids it changed. */
export async function markNotificationsRead(ctx: Ctx, ids: string[], now: string): Promise<string[]> {
  const rows = await dbOf(ctx)
    .update(notifications)
    .set({ readAt: now })
    .where(and(eq(notifications.tenantId, ctx.tenantId), eq(notifications.actorId, ctx.actorId), isNull(notifications.readAt), inArray(notifications.id, jsonValues(ids))))
    .returning({ id: notifications.id })
    .all();
  return rows.map((r) => r.id);
}

/** Where a comment sits, or null when the tenant has no such comment. */
export async function findCommentTarget(ctx: Ctx, id: string): Promise<{ object_type: string; object_id: string } | null> {
  return (
    (await dbOf(ctx)
      .select({ object_type: comments.objectType, object_id: comments.objectId })
      .from(comments)
      .where(and(eq(comments.tenantId, ctx.tenantId), eq(comments.id, id)))
      .get()) ?? null
  );
}

export interface CommentInsert {
  id: string;
  objectType: string;
  objectId: string;
  body: string;
  parentCommentId: string | null;
  mentions: string;
  createdAt: string;
}

export function insertCommentStatement(ctx: Ctx, c: CommentInsert): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx).insert(comments).values({
      id: c.id,
      tenantId: ctx.tenantId,
      objectType: c.objectType,
      objectId: c.objectId,
      body: c.body,
      authorActorId: ctx.actorId,
      parentCommentId: c.parentCommentId,
      mentions: c.mentions,
      createdAt: c.createdAt,
    }),
  );
}

/** A mention notification for `actor`, from the caller, about a comment. */
export function insertMentionStatement(ctx: Ctx, id: string, actor: string, commentId: string, summary: string, now: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx).insert(notifications).values({
      id,
      tenantId: ctx.tenantId,
      actorId: actor,
      kind: "mention",
      objectType: "comment",
      objectId: commentId,
      summary,
      fromActorId: ctx.actorId,
      createdAt: now,
    }),
  );
}

/** Every column of a comment in table order, keyed by SQL column name: the rows `SELECT *` returned. */
const commentFields = {
  seq: comments.seq,
  id: comments.id,
  tenant_id: comments.tenantId,
  object_type: comments.objectType,
  object_id: comments.objectId,
  body: comments.body,
  author_actor_id: comments.authorActorId,
  parent_comment_id: comments.parentCommentId,
  mentions: comments.mentions,
  created_at: comments.createdAt,
};

export async function getComment(ctx: Ctx, id: string): Promise<CommentRow | null> {
  return ((await dbOf(ctx).select(commentFields).from(comments).where(eq(comments.id, id)).get()) as CommentRow | undefined) ?? null;
}

/** A page of the comments on an object after `afterSeq`, oldest first. */
export async function listComments(ctx: Ctx, objectType: string, objectId: string, afterSeq: number | string, limit: number): Promise<CommentRow[]> {
  return (await dbOf(ctx)
    .select(commentFields)
    .from(comments)
    .where(and(eq(comments.tenantId, ctx.tenantId), eq(comments.objectType, objectType), eq(comments.objectId, objectId), gt(comments.seq, afterSeq as number)))
    .orderBy(asc(comments.seq))
    .limit(limit)
    .all()) as CommentRow[];
}
