/** Tasks as stored and as returned, the state machine, and the reads the task tools share. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { notFound } from "../../core/errors";
import { jsonArray } from "../shared";
import { TASK_STATE_SQL, taskSummarySchema, type TaskStatus, type TaskSummaryRow, toTaskSummary } from "./summary";

export const criterionSchema = z.object({
  text: z.string().trim().min(1).max(1000).describe("What must be true."),
  met: z.boolean().default(false).describe("Whether it is met."),
});
export type Criterion = z.infer<typeof criterionSchema>;

/**
 * The most tasks one task may wait on. task_link refuses edges past it, so depends_on (carried
 * whole in every task answer) stays bounded, like labels (20) and acceptance_criteria (50).
 */
export const MAX_DEPENDENCIES = 100;

export const taskSchema = taskSummarySchema.extend({
  body: z.string().describe("Description."),
  reviewer_actor_id: z.string().nullable().describe("Reviewer whose answer gates done, or null."),
  parent_task_id: z.string().nullable().describe("Parent task, or null."),
  acceptance_criteria: z.array(z.object({ text: z.string().describe("Criterion."), met: z.boolean().describe("Met?") })).describe("Checklist that must be all met before done."),
  requires_evidence: z.boolean().describe("Whether done needs a code ref or attachment."),
  depends_on: z.array(z.string()).describe(`Ids of the tasks this one waits on (at most ${MAX_DEPENDENCIES}).`),
  claimed_at: z.string().nullable().describe("When the current claim started, or null."),
  created_by: z.string().describe("Actor that created it."),
  created_at: z.string().describe("Creation time."),
  done_at: z.string().nullable().describe("When it was done, or null."),
});
export type Task = z.infer<typeof taskSchema>;

/**
 * Allowed status moves. done and cancelled are terminal unless the caller says allow_reopen.
 */
export const TRANSITIONS: Record<TaskStatus, readonly TaskStatus[]> = {
  todo: ["in_progress", "in_review", "done", "cancelled"],
  in_progress: ["todo", "in_review", "done", "cancelled"],
  in_review: ["todo", "in_progress", "done", "cancelled"],
  done: [],
  cancelled: [],
};
export const REOPEN: Record<TaskStatus, readonly TaskStatus[]> = {
  todo: [], in_progress: [], in_review: [], done: ["todo", "in_progress"], cancelled: ["todo"],
};

export const TASK_COLUMNS = `t.id, t.project_id, t.seq, p.key AS project_key, t.title, t.body, t.status, t.priority,
  t.assignee_actor_id, t.reviewer_actor_id, t.due_on, t.parent_task_id, t.labels, t.acceptance_criteria,
  t.requires_evidence, t.lease_expires_at, t.claimed_at, t.created_by, t.created_at, t.updated_at, t.done_at,
  ${TASK_STATE_SQL} AS state,
  (SELECT json_group_array(d.depends_on_task_id) FROM task_deps d WHERE d.tenant_id = t.tenant_id AND d.task_id = t.id) AS depends_on`;

export interface TaskRow extends TaskSummaryRow {
  body: string;
  reviewer_actor_id: string | null;
  parent_task_id: string | null;
  acceptance_criteria: string;
  requires_evidence: number;
  claimed_at: string | null;
  created_by: string;
  created_at: string;
  done_at: string | null;
  depends_on: string;
}

export function toTask(r: TaskRow): Task {
  return {
    ...toTaskSummary(r),
    body: r.body,
    reviewer_actor_id: r.reviewer_actor_id,
    parent_task_id: r.parent_task_id,
    acceptance_criteria: jsonArray<Criterion>(r.acceptance_criteria),
    requires_evidence: r.requires_evidence === 1,
    depends_on: jsonArray<string>(r.depends_on).sort(),
    claimed_at: r.claimed_at,
    created_by: r.created_by,
    created_at: r.created_at,
    done_at: r.done_at,
  };
}

export const selectTask = (ctx: Ctx, id: string): D1PreparedStatement =>
  ctx.d1.prepare(`SELECT ${TASK_COLUMNS} FROM tasks t JOIN projects p ON p.id = t.project_id WHERE t.tenant_id = ? AND t.id = ?`).bind(ctx.tenantId, id);

/**
 * A task by id or by its KEY-number reference, in the caller's tenant; anything else is
 * not_found (another tenant's task included).
 */
export async function findTask(ctx: Ctx, ref: string): Promise<Task> {
  const value = ref.trim();
  const m = /^([A-Za-z][A-Za-z0-9]{1,15})-(\d{1,9})$/.exec(value);
  const row = m
    ? await ctx.d1
        .prepare(`SELECT ${TASK_COLUMNS} FROM tasks t JOIN projects p ON p.id = t.project_id WHERE t.tenant_id = ? AND p.deleted_at IS NULL AND p.key = ? COLLATE NOCASE AND t.seq = ?`)
        .bind(ctx.tenantId, m[1], Number(m[2]))
        .first<TaskRow>()
    : await selectTask(ctx, value).first<TaskRow>();
  if (!row) throw notFound("task", value, "Pass a task id or its KEY-number reference; task_query lists tasks.");
  return toTask(row);
}

export const taskRefField = (description: string) => z.string().min(1).max(100).describe(`${description} Id or ref (API-12).`);


/**
 * Who follows a task's status. Plans build on tasks (a plan step follows its linked task), so the
 * dependency runs plans → tasks: the catalog registers plans' listener here once, and the task
 * tools call out through this without knowing who listens. Listeners swallow their own errors: a
 * follower's failure never fails the task write that already landed.
 */
export type TaskStatusListener = (ctx: Ctx, taskId: string) => Promise<void>;
const taskStatusListeners: TaskStatusListener[] = [];

export function onTaskStatusChange(listener: TaskStatusListener): void {
  if (!taskStatusListeners.includes(listener)) taskStatusListeners.push(listener);
}

export async function taskStatusChanged(ctx: Ctx, taskId: string): Promise<void> {
  for (const listener of taskStatusListeners) await listener(ctx, taskId);
}
