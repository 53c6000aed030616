/** The short form of a task that lists (whoami, briefs, queries) share, and its derived state. */
// SQL stays here, not in tasks/model.ts: projects/model reads task summaries and tasks/model imports projects/model, so it would close an import circle.
import { z } from "zod";
import { and, asc, eq, notInArray, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../../core/context";
import { type Db, dbOf } from "../../db/client";
import { projects, tasks } from "../../db/schema";
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

/** Tasks and projects as task reads name them: `t` and `p`, which the state expression (SQL text) correlates with. */
export const taskT = alias(tasks, "t");
export const projectP = alias(projects, "p");

/**
 * A task summary row's fields over `t` joined to `p`, keyed by SQL column name so rows keep the shape the tools return.
 * Renamed columns are `sql` aliases: a statement run through statementOf returns rows keyed by the names the SQL gives them.
 */
export const taskSummaryFields = {
  id: taskT.id,
  project_id: taskT.projectId,
  seq: taskT.seq,
  project_key: sql<string>`${projectP.key}`.as("project_key"),
  title: taskT.title,
  status: taskT.status,
  priority: taskT.priority,
  assignee_actor_id: taskT.assigneeActorId,
  due_on: taskT.dueOn,
  labels: taskT.labels,
  lease_expires_at: taskT.leaseExpiresAt,
  updated_at: taskT.updatedAt,
  state: sql<"ready" | "blocked" | "closed">`${sql.raw(TASK_STATE_SQL)}`.as("state"),
};

/** Task summaries: `t` joined to its project `p`, for a where, order and limit. */
export const taskSummariesIn = <F extends typeof taskSummaryFields>(db: Db, fields: F) => db.select(fields).from(taskT).innerJoin(projectP, eq(projectP.id, taskT.projectId));
export const selectTaskSummaries = <F extends typeof taskSummaryFields>(ctx: Ctx, fields: F) => taskSummariesIn(dbOf(ctx), fields);

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
export async function openTasksFor(ctx: Ctx, actorId: string, limit: number): Promise<TaskSummary[]> {
  const rows = await selectTaskSummaries(ctx, taskSummaryFields)
    .where(and(eq(taskT.tenantId, ctx.tenantId), eq(taskT.assigneeActorId, actorId), notInArray(taskT.status, ["done", "cancelled"])))
    .orderBy(asc(taskT.priority), asc(taskT.createdAt))
    .limit(limit)
    .all();
  return (rows as TaskSummaryRow[]).map(toTaskSummary);
}
