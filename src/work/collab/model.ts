/** Comments, the activity log, and notifications (seed 001): the shared room of the work ledger. */
import { z } from "zod";
import { boundedJson } from "../../core/bounds";
import { sha256Hex, uuidv7 } from "../../db/ids";
import { iso, resolveSince } from "../../db/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { invalidInput, notFound } from "../../core/errors";
import { ACTIVITY_ACTOR_NAME, activityStatement, actorRefField, cursorField, decodeKeyset, jsonArray, limitField, resolveActor, keysetPage } from "../shared";
import { stableStringify } from "../../core/idempotency";
import { findProject } from "../projects/model";
import { findRun, runFilterValue } from "../runs/model";
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
  const row = await ctx.d1
    .prepare(`SELECT ${projectColumn} AS project_id FROM ${table} WHERE tenant_id = ? AND id = ?`)
    .bind(ctx.tenantId, ref)
    .first<{ project_id: string | null }>();
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

const objectFields = {
  object_type: z.enum(OBJECT_TYPES).describe("project, task, decision, work_request (a handoff) or note."),
  object_id: z.string().min(1).max(100).describe("The object's id."),
};

export const commentAddTool = defineTool({
  name: "comment_add",
  title: "Add a comment",
  toolset: "collab",
  description: "Comment on a project, task, decision, work request (handoff) or note. mentions notify exactly the actors named; parent_comment_id makes it a reply in the same thread.",
  input: z.object({
    ...objectFields,
    body: z.string().trim().min(1).max(20_000).describe("The comment (up to 20,000 characters)."),
    mentions: z.array(actorRefField("An actor to notify.")).max(20).optional().describe("Actors to notify (ids, external_refs or \"me\")."),
    parent_comment_id: z.string().min(1).max(100).optional().describe("The comment this replies to (same object)."),
  }),
  output: z.object({ comment: commentSchema.describe("The new comment."), notified: z.array(z.string()).describe("Actor ids notified.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const { id: objectId, projectId } = await findObject(ctx, input.object_type, input.object_id);
    if (input.parent_comment_id) {
      const parent = await ctx.d1
        .prepare(`SELECT object_type, object_id FROM comments WHERE tenant_id = ? AND id = ?`)
        .bind(ctx.tenantId, input.parent_comment_id)
        .first<{ object_type: string; object_id: string }>();
      if (!parent) throw notFound("comment", input.parent_comment_id, "Reply to a comment from comment_query.");
      if (parent.object_type !== input.object_type || parent.object_id !== objectId) {
        throw invalidInput("parent_comment_id is a comment on another object.", "A reply must be on the same object as the comment it answers.");
      }
    }
    const mentioned = [...new Set(await Promise.all((input.mentions ?? []).map((m) => resolveActor(ctx, m))))];
    const id = uuidv7();
    const now = iso(ctx.clock.now());
    await ctx.d1.batch([
      ctx.d1
        .prepare(`INSERT INTO comments (id, tenant_id, object_type, object_id, body, author_actor_id, parent_comment_id, mentions, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .bind(id, ctx.tenantId, input.object_type, objectId, input.body, ctx.actorId, input.parent_comment_id ?? null, JSON.stringify(mentioned), now),
      ...mentioned.map((actor) =>
        ctx.d1
          .prepare(`INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at) VALUES (?, ?, ?, 'mention', 'comment', ?, ?, ?, ?)`)
          .bind(uuidv7(), ctx.tenantId, actor, id, input.body.slice(0, 200), ctx.actorId, now),
      ),
      activityStatement(ctx, { verb: "comment.added", objectType: input.object_type, objectId, projectId, summary: input.body.slice(0, 200), metadata: { comment_id: id } }),
    ]);
    const row = await ctx.d1.prepare(`SELECT * FROM comments WHERE id = ?`).bind(id).first<CommentRow>();
    return { comment: toComment(row!), notified: mentioned };
  },
  summarize: (r) => `Comment ${r.comment.id} added${r.notified.length ? `, ${r.notified.length} notified` : ""}.`,
});

export const commentQueryTool = defineTool({
  name: "comment_query",
  title: "Read comments",
  toolset: "collab",
  description: "The comment thread on an object, oldest first (replies carry parent_comment_id).",
  input: z.object({ ...objectFields, limit: limitField(100, 500), cursor: cursorField }),
  output: z.object({
    items: z.array(commentSchema).describe("Comments, oldest first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  fields: true,
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const { id: objectId } = await findObject(ctx, input.object_type, input.object_id);
    const after = decodeKeyset(input.cursor, 1);
    const rows = await ctx.d1
      .prepare(`SELECT * FROM comments WHERE tenant_id = ? AND object_type = ? AND object_id = ? AND seq > ? ORDER BY seq ASC LIMIT ?`)
      .bind(ctx.tenantId, input.object_type, objectId, after?.[0] ?? 0, input.limit + 1)
      .all<CommentRow>();
    const { page, cursor } = keysetPage(rows.results, input.limit, (last) => [last.seq]);
    return { items: page.map(toComment), ...cursor };
  },
  summarize: (r) => `${r.items.length} comment(s).`,
});

const activityRowSchema = z.object({
  id: z.string().describe("Activity id."),
  at: z.string().describe("When."),
  actor_id: z.string().describe("Who."),
  actor_name: z.string().describe("Their name (\"\" if the actor is gone)."),
  verb: z.string().describe("What happened."),
  object_type: z.string().describe("Kind of object."),
  object_id: z.string().describe("Object id."),
  project_id: z.string().nullable().describe("Project, or null."),
  summary: z.string().describe("One line."),
  severity: z.enum(["info", "warn", "critical"]).describe("info, warn or critical."),
  session_id: z.string().describe("Session it came from, or \"\"."),
  run_id: z.string().nullable().describe("Run it is attributed to, or null."),
  metadata: z.record(z.string(), z.unknown()).describe("Extra data."),
});
type ActivityRow = Omit<z.infer<typeof activityRowSchema>, "metadata"> & { metadata: string; seq: number };
function toActivity({ seq: _seq, ...r }: ActivityRow): z.infer<typeof activityRowSchema> {
  let metadata: Record<string, unknown> = {};
  try { metadata = JSON.parse(r.metadata) as Record<string, unknown>; } catch { /* damaged metadata reads as {} */ }
  return { ...r, metadata };
}
const ACTIVITY_COLUMNS = `seq, id, at, actor_id, ${ACTIVITY_ACTOR_NAME}, verb, object_type, object_id, project_id, summary, severity, session_id, run_id, metadata`;

export const activityLogTool = defineTool({
  name: "activity_log",
  title: "Log activity",
  toolset: "collab",
  description: "Append a milestone to the activity log (verb + summary). Routine writes already record their own activity; use this for what is worth narrating. Append-only and de-duplicated: the same entry from the same actor is recorded once.",
  input: z.object({
    verb: z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/, "verb is dotted lower-case words, e.g. deploy.finished").max(100).describe("What happened, as dotted words (e.g. deploy.finished)."),
    summary: z.string().trim().min(1).max(2000).describe("One or two sentences."),
    object_type: z.enum(OBJECT_TYPES).optional().describe("The object it is about."),
    object_id: z.string().min(1).max(100).optional().describe("The object's id (with object_type)."),
    severity: z.enum(["info", "warn", "critical"]).default("info").describe("info (default), warn or critical."),
    status: z.string().max(50).optional().describe("A status word, kept in metadata."),
    run_id: z.string().min(1).max(100).optional().describe("The run it belongs to (a run_key or run id of your tenant); defaults to your current run."),
    metadata: boundedJson(z.record(z.string(), z.unknown()), { maxBytes: 8192, maxDepth: 8 }).optional().describe("Extra structured data (up to 8KB as JSON, 8 levels deep)."),
  }),
  output: z.object({ activity: activityRowSchema.describe("The entry."), deduplicated: z.boolean().describe("True when the same entry was already logged and is returned instead.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    if ((input.object_type === undefined) !== (input.object_id === undefined)) {
      throw invalidInput("object_type and object_id go together.", "Pass both to attach the entry to an object, or neither.");
    }
    const metadata = { ...(input.metadata ?? {}), ...(input.status ? { status: input.status } : {}) };
    const target = input.object_type ? await findObject(ctx, input.object_type, input.object_id!) : null;
    const projectId = target?.projectId ?? null;
    const explicitRun = input.run_id ? (await findRun(ctx, input.run_id)).id : null;
    // Only a run named explicitly tells entries apart: the same milestone logged again from a later session is still a duplicate.
    const hash = await sha256Hex(stableStringify([ctx.actorId, input.verb, input.summary, input.object_type ?? "", target?.id ?? "", input.severity, explicitRun ? { ...metadata, run_id: explicitRun } : metadata]));
    const id = uuidv7();
    const now = iso(ctx.clock.now());
    const [, existing] = await ctx.d1.batch<ActivityRow>([
      ctx.d1
        .prepare(
          `INSERT INTO activity (id, tenant_id, at, actor_id, verb, object_type, object_id, project_id, summary, severity, session_id, run_id, metadata, content_hash)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
        )
        .bind(id, ctx.tenantId, now, ctx.actorId, input.verb, input.object_type ?? "", target?.id ?? "", projectId, input.summary, input.severity, ctx.sessionId,
          explicitRun ?? ctx.runId ?? null, JSON.stringify(metadata), hash),
      ctx.d1.prepare(`SELECT ${ACTIVITY_COLUMNS} FROM activity WHERE tenant_id = ? AND content_hash = ?`).bind(ctx.tenantId, hash),
    ]);
    const row = existing!.results[0]!;
    return { activity: toActivity(row), deduplicated: row.id !== id };
  },
  summarize: (r) => (r.deduplicated ? `Already logged as ${r.activity.id}.` : `Logged ${r.activity.verb}.`),
});

export const activityQueryTool = defineTool({
  name: "activity_query",
  title: "Read activity",
  toolset: "collab",
  description: "The activity feed, newest first: filter by project, actor, object, verb, run or time window.",
  input: z.object({
    project_id: z.string().min(1).max(100).optional().describe("Project id or key."),
    actor_id: actorRefField("Only this actor's activity.").optional(),
    object_type: z.string().max(50).optional().describe("Only activity on this kind of object."),
    object_id: z.string().max(100).optional().describe("Only activity on this object."),
    verb: z.string().max(100).optional().describe("Only this verb (e.g. task.claimed); a trailing .* matches a family (task.*)."),
    run_id: z.string().min(1).max(100).optional().describe("Only activity attributed to this run (run_key or run id)."),
    since: z.string().max(64).optional().describe("From (15m, 24h, 7d, 5mo, 1y or ISO-8601)."),
    until: z.string().max(64).optional().describe("Up to (ISO-8601, or a relative window back from now)."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(activityRowSchema).describe("Activity, newest first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  fields: true,
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const where = ["tenant_id = ?"];
    const params: unknown[] = [ctx.tenantId];
    if (input.project_id) { where.push("project_id = ?"); params.push((await findProject(ctx, input.project_id)).id); }
    if (input.actor_id) { where.push("actor_id = ?"); params.push(await resolveActor(ctx, input.actor_id)); }
    if (input.object_type) { where.push("object_type = ?"); params.push(input.object_type); }
    if (input.object_id) { where.push("object_id = ?"); params.push(input.object_id); }
    if (input.verb?.endsWith(".*")) { where.push("substr(verb, 1, ?) = ?"); params.push(input.verb.length - 1, input.verb.slice(0, -1)); }
    else if (input.verb) { where.push("verb = ?"); params.push(input.verb); }
    if (input.run_id) { where.push("run_id = ?"); params.push(await runFilterValue(ctx, input.run_id)); }
    for (const [bound, op] of [[input.since, ">="], [input.until, "<="]] as const) {
      if (!bound) continue;
      const at = resolveSince(bound, ctx.clock.now());
      if (at === null) throw invalidInput(`could not parse '${bound}' as a time`, "Use 15m, 24h, 7d, 5mo, 1y or an ISO-8601 time.");
      where.push(`at ${op} ?`);
      params.push(at);
    }
    const after = decodeKeyset(input.cursor, 1);
    if (after) { where.push("seq < ?"); params.push(after[0]); }
    const rows = await ctx.d1
      .prepare(`SELECT ${ACTIVITY_COLUMNS} FROM activity WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`)
      .bind(...params, input.limit + 1)
      .all<ActivityRow>();
    const { page, cursor } = keysetPage(rows.results, input.limit, (last) => [last.seq]);
    return { items: page.map(toActivity), ...cursor };
  },
  summarize: (r) => `${r.items.length} activity item(s).`,
});

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

export const notificationQueryTool = defineTool({
  name: "notification_query",
  title: "Read your notifications",
  toolset: "collab",
  description: "Your own notifications, newest first (there is no recipient parameter: you only ever see yours). unread_only: true filters to unread.",
  input: z.object({
    unread_only: z.boolean().default(false).describe("Only unread ones."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(notificationSchema).describe("Notifications, newest first."),
    unread_count: z.number().int().describe("How many are unread in all."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const after = decodeKeyset(input.cursor, 1);
    const [rows, unread] = await ctx.d1.batch<z.infer<typeof notificationSchema> & { seq: number; n: number }>([
      ctx.d1
        .prepare(`SELECT seq, id, kind, object_type, object_id, summary, from_actor_id, created_at, read_at FROM notifications
                  WHERE tenant_id = ? AND actor_id = ? ${input.unread_only ? "AND read_at IS NULL" : ""} AND seq < ? ORDER BY seq DESC LIMIT ?`)
        .bind(ctx.tenantId, ctx.actorId, after?.[0] ?? Number.MAX_SAFE_INTEGER, input.limit + 1),
      ctx.d1.prepare(`SELECT COUNT(*) AS n FROM notifications WHERE tenant_id = ? AND actor_id = ? AND read_at IS NULL`).bind(ctx.tenantId, ctx.actorId),
    ]);
    const { page, cursor } = keysetPage(rows!.results, input.limit, (last) => [last.seq]);
    return {
      items: page.map(({ seq: _seq, n: _n, ...r }) => r),
      unread_count: unread!.results[0]?.n ?? 0,
      ...cursor,
    };
  },
  summarize: (r) => `${r.items.length} notification(s), ${r.unread_count} unread.`,
});

export const notificationMarkReadTool = defineTool({
  name: "notification_mark_read",
  title: "Mark notifications read",
  toolset: "collab",
  description: "Mark some of your notifications read, by id. Ids that are not yours (or do not exist) are not counted. Returns how many were marked.",
  input: z.object({ ids: z.array(z.string().min(1).max(100)).min(1).max(200).describe("Notification ids.") }),
  output: z.object({ marked: z.number().int().describe("How many changed from unread to read.") }),
  cost: { items: "ids" },
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const res = await ctx.d1
      .prepare(`UPDATE notifications SET read_at = ? WHERE tenant_id = ? AND actor_id = ? AND read_at IS NULL AND id IN (SELECT value FROM json_each(?)) RETURNING id`)
      .bind(iso(ctx.clock.now()), ctx.tenantId, ctx.actorId, JSON.stringify(input.ids))
      .all<{ id: string }>();
    return { marked: res.results.length };
  },
  summarize: (r) => `${r.marked} marked read.`,
});
