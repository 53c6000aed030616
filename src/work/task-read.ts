/** task_query and task_get. */
import { z } from "zod";
import { defineTool } from "../mcp/define-tool";
import { activityItemSchema, cursorField, dateField, type ActivityItem, decodeKeyset, limitField, resolveActor, keysetPage } from "./common";
import { reviewStanding, reviewStandingSchema } from "./handoffs";
import { findProject, projectBriefTool, projectSchema } from "./projects";
import { LABEL } from "./task-create";
import { findTask, STATUS_LIST, taskRefField, taskSchema } from "./task-model";
import { TASK_STATUSES, TASK_SUMMARY_COLUMNS, taskSummarySchema, toTaskSummary, type TaskSummaryRow } from "./task-summary";

/** Sort orders and the keyset each pages by (every key ends with the id, so ties are stable). */
const ORDERS = {
  priority: { sql: "priority ASC, created_at ASC, id ASC", keys: ["priority", "created_at", "id"], dirs: [">", ">", ">"] },
  created: { sql: "created_at DESC, id DESC", keys: ["created_at", "id"], dirs: ["<", "<"] },
  updated: { sql: "updated_at DESC, id DESC", keys: ["updated_at", "id"], dirs: ["<", "<"] },
  due: { sql: "due_key ASC, id ASC", keys: ["due_key", "id"], dirs: [">", ">"] },
} as const;

/** `(a, b, c) > (x, y, z)` spelled out for SQLite, as an OR of prefixes. */
function keysetAfter(keys: readonly string[], dirs: readonly string[]): string {
  const terms = keys.map((_, i) => [...keys.slice(0, i).map((k) => `${k} = ?`), `${keys[i]} ${dirs[i]} ?`].join(" AND "));
  return `(${terms.map((t) => `(${t})`).join(" OR ")})`;
}

export const taskQueryTool = defineTool({
  name: "task_query",
  title: "Find tasks",
  toolset: "tasks",
  description:
    "List or search tasks. state filters server-side on derived readiness (ready: every dependency done or cancelled; blocked: waiting on one) and leaves out done and cancelled tasks, so page one is never a lie. assignee_actor_id takes \"me\" or \"unassigned\".",
  input: z.object({
    project_id: z.string().min(1).max(100).optional().describe("Project id or key."),
    assignee_actor_id: z.string().min(1).max(200).optional().describe("An actor id or external_ref, \"me\", or \"unassigned\"."),
    status: z.array(z.enum(TASK_STATUSES)).max(5).optional().describe(`Only these statuses (${STATUS_LIST}).`),
    state: z.enum(["ready", "blocked"]).optional().describe("Derived readiness; excludes done and cancelled."),
    label: LABEL.optional().describe("Only tasks with this label."),
    due_before: dateField("Only tasks due before this date.").optional(),
    q: z.string().max(200).optional().describe("Case-insensitive text in title or body."),
    order_by: z.enum(["priority", "created", "updated", "due"]).default("priority").describe("priority (default: highest first, then oldest), created or updated (newest first), due (soonest first, undated last)."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(taskSummarySchema).describe("Tasks."),
    next_cursor: z.string().optional().describe("Pass as cursor (with the same filters) for the next page; absent on the last page."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const where = ["t.tenant_id = ?"];
    const params: unknown[] = [ctx.tenantId];
    if (input.project_id) { where.push("t.project_id = ?"); params.push((await findProject(ctx, input.project_id)).id); }
    if (input.assignee_actor_id === "unassigned") where.push("t.assignee_actor_id IS NULL");
    else if (input.assignee_actor_id) { where.push("t.assignee_actor_id = ?"); params.push(await resolveActor(ctx, input.assignee_actor_id)); }
    if (input.status?.length) { where.push(`t.status IN (${input.status.map(() => "?").join(", ")})`); params.push(...input.status); }
    if (input.label) { where.push("EXISTS (SELECT 1 FROM json_each(t.labels) l WHERE l.value = ?)"); params.push(input.label); }
    if (input.due_before) { where.push("t.due_on IS NOT NULL AND t.due_on < ?"); params.push(input.due_before); }
    if (input.q?.trim()) { where.push("(instr(lower(t.title), lower(?)) > 0 OR instr(lower(t.body), lower(?)) > 0)"); params.push(input.q.trim(), input.q.trim()); }
    const outer: string[] = [];
    const outerParams: unknown[] = [];
    if (input.state) { outer.push("state = ?"); outerParams.push(input.state); }
    const order = ORDERS[input.order_by];
    const after = decodeKeyset(input.cursor, order.keys.length);
    if (after) { outer.push(keysetAfter(order.keys, order.dirs)); order.keys.forEach((_, i) => outerParams.push(...after.slice(0, i), after[i])); }
    const rows = await ctx.d1
      .prepare(
        `SELECT * FROM (SELECT ${TASK_SUMMARY_COLUMNS}, t.created_at, COALESCE(t.due_on, '9999-12-31') AS due_key
           FROM tasks t JOIN projects p ON p.id = t.project_id WHERE ${where.join(" AND ")})
         ${outer.length ? `WHERE ${outer.join(" AND ")}` : ""} ORDER BY ${order.sql} LIMIT ?`,
      )
      .bind(...params, ...outerParams, input.limit + 1)
      .all<TaskSummaryRow & Record<string, string | number>>();
    const { page, cursor } = keysetPage(rows.results, input.limit, (last) => order.keys.map((k) => last[k] as string | number));
    return {
      items: page.map(toTaskSummary),
      ...cursor,
    };
  },
  summarize: (r) => `${r.items.length} task(s).`,
});

export const taskGetTool = defineTool({
  name: "task_get",
  title: "Read a task",
  toolset: "tasks",
  description:
    "Deep-read one task: the task with its derived readiness, blockers (dependencies not yet done), dependents, subtasks, project context, evidence counts, where its review stands (verdict) and recent activity. include: ['brief'] attaches the whole project brief, for a one-call cold start.",
  input: z.object({
    task_id: taskRefField("The task."),
    include: z.array(z.enum(["brief"])).max(1).optional().describe("brief: attach the project brief."),
  }),
  output: z.object({
    task: taskSchema.describe("The task."),
    ready: z.boolean().describe("True when it is open and nothing blocks it."),
    blockers: z.array(taskSummarySchema).describe("Dependencies that are not done or cancelled."),
    dependents: z.array(taskSummarySchema).describe("Tasks that wait on this one."),
    subtasks: z.array(taskSummarySchema).describe("Tasks whose parent is this one."),
    project: projectSchema.pick({ id: true, key: true, title: true, status: true }).describe("The task's project."),
    evidence: z.object({ code_refs: z.number().int().describe("Live code refs."), attachments: z.number().int().describe("Live attachments.") }).describe("Evidence on record."),
    review: reviewStandingSchema.nullable().describe("With a reviewer: the latest review handoff addressed to them, its verdict and whether it unlocks done; null without a reviewer or before one was asked."),
    activity: z.array(activityItemSchema).describe("The task's recent activity, newest first (up to 20)."),
    brief: z.record(z.string(), z.unknown()).optional().describe("The project brief, with include: ['brief']."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const task = await findTask(ctx, input.task_id);
    const review = task.reviewer_actor_id ? reviewStanding(ctx, task, task.reviewer_actor_id) : Promise.resolve(null);
    const summaries = (where: string) =>
      ctx.d1.prepare(`SELECT ${TASK_SUMMARY_COLUMNS} FROM tasks t JOIN projects p ON p.id = t.project_id WHERE t.tenant_id = ? AND ${where} ORDER BY t.priority, t.created_at`).bind(ctx.tenantId, task.id);
    const [blockers, dependents, subtasks, project, evidence, activity] = await ctx.d1.batch<Record<string, unknown>>([
      summaries(`t.id IN (SELECT depends_on_task_id FROM task_deps WHERE task_id = ?) AND t.status NOT IN ('done', 'cancelled')`),
      summaries(`t.id IN (SELECT task_id FROM task_deps WHERE depends_on_task_id = ?)`),
      summaries(`t.parent_task_id = ?`),
      ctx.d1.prepare(`SELECT id, key, title, status FROM projects WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, task.project_id),
      ctx.d1.prepare(
        `SELECT (SELECT COUNT(*) FROM code_refs WHERE tenant_id = ?1 AND object_type = 'task' AND object_id = ?2 AND deleted_at IS NULL) AS code_refs,
                (SELECT COUNT(*) FROM attachments WHERE tenant_id = ?1 AND object_type = 'task' AND object_id = ?2 AND deleted_at IS NULL) AS attachments`,
      ).bind(ctx.tenantId, task.id),
      ctx.d1.prepare(`SELECT at, verb, object_type, object_id, actor_id, summary FROM activity WHERE tenant_id = ? AND object_type = 'task' AND object_id = ? ORDER BY seq DESC LIMIT 20`).bind(ctx.tenantId, task.id),
    ]);
    const rows = (r: D1Result<Record<string, unknown>> | undefined) => (r!.results as unknown as TaskSummaryRow[]).map(toTaskSummary);
    const projectRow = project!.results[0] as z.infer<typeof projectSchema>;
    const brief = input.include?.includes("brief")
      ? ((await projectBriefTool.run(ctx, { project: task.project_id, max_tasks: 10, max_decisions: 10, max_knowledge: 10, max_activity: 20 })) as Record<string, unknown>)
      : undefined;
    return {
      task,
      ready: task.state === "ready",
      blockers: rows(blockers),
      dependents: rows(dependents),
      subtasks: rows(subtasks),
      project: { id: projectRow.id, key: projectRow.key, title: projectRow.title, status: projectRow.status },
      evidence: evidence!.results[0] as { code_refs: number; attachments: number },
      review: await review,
      activity: activity!.results as ActivityItem[],
      ...(brief ? { brief } : {}),
    };
  },
  summarize: (r) => `${r.task.ref} ${r.task.status} (${r.task.state})${r.blockers.length ? `, blocked by ${r.blockers.map((b) => b.ref).join(", ")}` : ""}.`,
});

