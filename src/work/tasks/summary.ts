/** The short form of a task that lists (whoami, briefs, queries) share, and its derived state. */
// SQL stays here, not in tasks/model.ts: projects/model reads task summaries and tasks/model imports projects/model, so it would close an import circle.
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { jsonArray } from "../shared";

export const TASK_STATUSES = ["todo", "in_progress", "in_review", "done", "cancelled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const taskSummarySchema = z.object({
  id: z.string().describe("Task id."),
  ref: z.string().describe("Human reference: PROJECTKEY-number."),
  project_id: z.string().describe("Project id."),
  title: z.string().describe("Title."),
  status: z.enum(TASK_STATUSES).describe("todo, in_progress, in_review, done or cancelled."),
  state: z.enum(["ready", "blocked", "closed"]).describe("Derived: blocked while a dependency is not done or cancelled; closed when done or cancelled."),
  priority: z.number().int().describe("0 (highest) to 4."),
  assignee_actor_id: z.string().nullable().describe("Assignee, or null."),
  due_on: z.string().nullable().describe("Due date, or null."),
  labels: z.array(z.string()).describe("Labels."),
  lease_expires_at: z.string().nullable().describe("When the current claim's lease runs out, or null."),
  updated_at: z.string().describe("Last change."),
});
export type TaskSummary = z.infer<typeof taskSummarySchema>;

/** SQL for a task row `t`'s derived state. */
export const TASK_STATE_SQL = `CASE WHEN t.status IN ('done', 'cancelled') THEN 'closed'
  WHEN EXISTS (SELECT 1 FROM task_deps d JOIN tasks b ON b.id = d.depends_on_task_id
               WHERE d.tenant_id = t.tenant_id AND d.task_id = t.id AND b.status NOT IN ('done', 'cancelled'))
  THEN 'blocked' ELSE 'ready' END`;

export const TASK_SUMMARY_COLUMNS = `t.id, t.project_id, t.seq, p.key AS project_key, t.title, t.status, t.priority,
  t.assignee_actor_id, t.due_on, t.labels, t.lease_expires_at, t.updated_at, ${TASK_STATE_SQL} AS state`;

export interface TaskSummaryRow {
  id: string;
  project_id: string;
  seq: number;
  project_key: string;
  title: string;
  status: TaskStatus;
  priority: number;
  assignee_actor_id: string | null;
  due_on: string | null;
  labels: string;
  lease_expires_at: string | null;
  updated_at: string;
  state: "ready" | "blocked" | "closed";
}

export function toTaskSummary(r: TaskSummaryRow): TaskSummary {
  return {
    id: r.id,
    ref: `${r.project_key}-${r.seq}`,
    project_id: r.project_id,
    title: r.title,
    status: r.status,
    state: r.state,
    priority: r.priority,
    assignee_actor_id: r.assignee_actor_id,
    due_on: r.due_on,
    labels: jsonArray<string>(r.labels),
    lease_expires_at: r.lease_expires_at,
    updated_at: r.updated_at,
  };
}

/** Open (not done or cancelled) tasks assigned to an actor, highest priority first. */
// Hand SQL: it selects TASK_SUMMARY_COLUMNS, SQL text shared with the projects room.
export async function openTasksFor(ctx: Ctx, actorId: string, limit: number): Promise<TaskSummary[]> {
  const rows = await ctx.d1
    .prepare(
      `SELECT ${TASK_SUMMARY_COLUMNS} FROM tasks t JOIN projects p ON p.id = t.project_id
       WHERE t.tenant_id = ? AND t.assignee_actor_id = ? AND t.status NOT IN ('done', 'cancelled')
       ORDER BY t.priority ASC, t.created_at ASC LIMIT ?`,
    )
    .bind(ctx.tenantId, actorId, limit)
    .all<TaskSummaryRow>();
  return rows.results.map(toTaskSummary);
}
