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
