/** Comments, the activity log, and notifications (seed 001): the shared room of the work ledger. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { notFound } from "../../core/errors";
import { ACTIVITY_ACTOR_NAME, jsonArray } from "../shared";
import { findProject } from "../projects/model";
import { findTask } from "../tasks/model";

export const OBJECT_TYPES = ["project", "task", "decision", "work_request", "note"] as const;
type ObjectType = (typeof OBJECT_TYPES)[number];

/** Where each commentable object lives (projects and tasks resolve by key as well), and its project column. */
const OBJECT_TABLES: Record<Exclude<ObjectType, "project" | "task">, { table: string; projectColumn: string }> = {
  decision: { table: "decisions", projectColumn: "project_id" },
  work_request: { table: "handoffs", projectColumn: "related_project_id" },
  note: { table: "knowledge_notes", projectColumn: "project_id" },
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
  const { table, projectColumn } = OBJECT_TABLES[type];
  const row = await ctx.d1.prepare(`SELECT ${projectColumn} AS project_id FROM ${table} WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, ref).first<{ project_id: string | null }>();
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
export const ACTIVITY_COLUMNS = `seq, id, at, actor_id, ${ACTIVITY_ACTOR_NAME}, verb, object_type, object_id, project_id, summary, severity, session_id, run_id, metadata`;

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
  sessionId: string | null;
  runId: string | null;
  metadata: string;
  contentHash: string;
}

export function insertActivityStatement(ctx: Ctx, a: ActivityInsert): D1PreparedStatement {
  return ctx.d1
    .prepare(
      `INSERT INTO activity (id, tenant_id, at, actor_id, verb, object_type, object_id, project_id, summary, severity, session_id, run_id, metadata, content_hash)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .bind(a.id, ctx.tenantId, a.at, a.actorId, a.verb, a.objectType, a.objectId, a.projectId, a.summary, a.severity, a.sessionId, a.runId, a.metadata, a.contentHash);
}

/** The activity entry holding a content hash (the one just written, or the earlier duplicate). */
export function activityByHashStatement(ctx: Ctx, hash: string): D1PreparedStatement {
  return ctx.d1.prepare(`SELECT ${ACTIVITY_COLUMNS} FROM activity WHERE tenant_id = ? AND content_hash = ?`).bind(ctx.tenantId, hash);
}

/** A page of activity that passes the filter, newest first. */
export async function listActivity(ctx: Ctx, where: string[], params: unknown[], limit: number): Promise<ActivityRow[]> {
  return (
    await ctx.d1
      .prepare(`SELECT ${ACTIVITY_COLUMNS} FROM activity WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`)
      .bind(...params, limit)
      .all<ActivityRow>()
  ).results;
}

export type NotificationRow = z.infer<typeof notificationSchema> & { seq: number };

/** A page of the caller's own notifications before `beforeSeq`, newest first; joins a batch. */
export function callerNotificationsStatement(ctx: Ctx, unreadOnly: boolean, beforeSeq: number | string, limit: number): D1PreparedStatement {
  return ctx.d1
    .prepare(
      `SELECT seq, id, kind, object_type, object_id, summary, from_actor_id, created_at, read_at FROM notifications
                  WHERE tenant_id = ? AND actor_id = ? ${unreadOnly ? "AND read_at IS NULL" : ""} AND seq < ? ORDER BY seq DESC LIMIT ?`,
    )
    .bind(ctx.tenantId, ctx.actorId, beforeSeq, limit);
}

/** How many of the caller's notifications are unread (row `n`); joins a batch. */
export function callerUnreadCountStatement(ctx: Ctx): D1PreparedStatement {
  return ctx.d1.prepare(`SELECT COUNT(*) AS n FROM notifications WHERE tenant_id = ? AND actor_id = ? AND read_at IS NULL`).bind(ctx.tenantId, ctx.actorId);
}

/** Marks the caller's unread notifications among `ids` read; returns the ids it changed. */
export async function markNotificationsRead(ctx: Ctx, ids: string[], now: string): Promise<string[]> {
  const res = await ctx.d1
    .prepare(`UPDATE notifications SET read_at = ? WHERE tenant_id = ? AND actor_id = ? AND read_at IS NULL AND id IN (SELECT value FROM json_each(?)) RETURNING id`)
    .bind(now, ctx.tenantId, ctx.actorId, JSON.stringify(ids))
    .all<{ id: string }>();
  return res.results.map((r) => r.id);
}

/** Where a comment sits, or null when the tenant has no such comment. */
export async function findCommentTarget(ctx: Ctx, id: string): Promise<{ object_type: string; object_id: string } | null> {
  return ctx.d1.prepare(`SELECT object_type, object_id FROM comments WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, id).first<{ object_type: string; object_id: string }>();
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
  return ctx.d1
    .prepare(`INSERT INTO comments (id, tenant_id, object_type, object_id, body, author_actor_id, parent_comment_id, mentions, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .bind(c.id, ctx.tenantId, c.objectType, c.objectId, c.body, ctx.actorId, c.parentCommentId, c.mentions, c.createdAt);
}

/** A mention notification for `actor`, from the caller, about a comment. */
export function insertMentionStatement(ctx: Ctx, id: string, actor: string, commentId: string, summary: string, now: string): D1PreparedStatement {
  return ctx.d1
    .prepare(`INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at) VALUES (?, ?, ?, 'mention', 'comment', ?, ?, ?, ?)`)
    .bind(id, ctx.tenantId, actor, commentId, summary, ctx.actorId, now);
}

export async function getComment(ctx: Ctx, id: string): Promise<CommentRow | null> {
  return ctx.d1.prepare(`SELECT * FROM comments WHERE id = ?`).bind(id).first<CommentRow>();
}

/** A page of the comments on an object after `afterSeq`, oldest first. */
export async function listComments(ctx: Ctx, objectType: string, objectId: string, afterSeq: number | string, limit: number): Promise<CommentRow[]> {
  return (
    await ctx.d1
      .prepare(`SELECT * FROM comments WHERE tenant_id = ? AND object_type = ? AND object_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?`)
      .bind(ctx.tenantId, objectType, objectId, afterSeq, limit)
      .all<CommentRow>()
  ).results;
}
