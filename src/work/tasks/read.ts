/** task_query and task_get. */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { commentSchema, type CommentRow, toComment } from "../collab/model";
import { activityItemSchema, cursorField, dateField, type ActivityItem, decodeKeyset, EMBEDDED_LIST_MAX, embeddedList, limitField, listsSchema, resolveActor, keysetPage } from "../shared";
import { reviewStanding, reviewStandingSchema } from "../handoffs/model";
import { findProject, projectSchema, readProjectBrief } from "../projects/model";
import { findTask, LABEL, listTaskSummaries, TASK_ORDERS, type TaskFilter, taskDetailStatements, taskRefField, taskSchema } from "./model";
import { TASK_STATUSES, taskSummarySchema, toTaskSummary, type TaskSummaryRow } from "./summary";

export const taskQueryTool = defineTool({
  name: "task_query",
  title: "Find tasks",
  toolset: "tasks",
  description: "List or search tasks; state: ready gives open tasks whose dependencies are done.",
  input: z.object({
    project_id: z.string().min(1).max(100).optional().describe("Project id or key."),
    assignee_actor_id: z.string().min(1).max(200).optional().describe('Actor id, external_ref, "me" or "unassigned".'),
    status: z.array(z.enum(TASK_STATUSES)).max(5).optional().describe("Only these statuses."),
    state: z.enum(["ready", "blocked"]).optional().describe("Readiness of open tasks."),
    label: LABEL.optional().describe("Only tasks with this label."),
    due_before: dateField("Only tasks due before this date.").optional(),
    q: z.string().max(200).optional().describe("Case-insensitive text in title or body."),
    parent_task_id: taskRefField("Only this task's subtasks.").optional(),
    dependencies_of: taskRefField("Only the tasks this one waits on.").optional(),
    dependents_of: taskRefField("Only the tasks that wait on this task.").optional(),
    order_by: z.enum(["priority", "created", "updated", "due"]).default("priority").describe("priority (default), created or updated (newest first), due (soonest first)."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(taskSummarySchema).describe("Tasks."),
    next_cursor: z.string().optional().describe("Pass as cursor (with the same filters) for the next page; absent on the last page."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const filter: TaskFilter = {
      projectId: input.project_id ? (await findProject(ctx, input.project_id)).id : undefined,
      assigneeActorId: input.assignee_actor_id === "unassigned" ? null : input.assignee_actor_id ? await resolveActor(ctx, input.assignee_actor_id) : undefined,
      statuses: input.status,
      label: input.label,
      dueBefore: input.due_before,
      q: input.q?.trim() || undefined,
      parentTaskId: input.parent_task_id ? (await findTask(ctx, input.parent_task_id)).id : undefined,
      dependenciesOf: input.dependencies_of ? (await findTask(ctx, input.dependencies_of)).id : undefined,
      dependentsOf: input.dependents_of ? (await findTask(ctx, input.dependents_of)).id : undefined,
      state: input.state,
    };
    const order = TASK_ORDERS[input.order_by];
    const rows = await listTaskSummaries(ctx, filter, input.order_by, decodeKeyset(input.cursor, order.keys.length), input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => order.keys.map((k) => last[k] as string | number));
    return {
      items: page.map(toTaskSummary),
      ...cursor,
    };
  },
  summarize: (r) => `${r.items.length} task(s).`,
});

/** The lists task_get bounds, and what each holds. */
const TASK_GET_LISTS = {
  blockers: "Dependencies not done or cancelled (task_query with dependencies_of pages them all).",
  dependents: "Tasks that wait on this one (task_query with dependents_of).",
  subtasks: "Subtasks (task_query with parent_task_id).",
  comments: "Comments, oldest first (comment_query continues the thread).",
  activity: "Activity on the task, newest first (activity_query continues it).",
};

export const taskGetTool = defineTool({
  name: "task_get",
  title: "Read a task",
  toolset: "tasks",
  description: `Deep-read one task with its blockers, dependents, subtasks, comments, review and activity (up to ${EMBEDDED_LIST_MAX} each).`,
  input: z.object({
    task_id: taskRefField("The task."),
    include: z
      .array(z.enum(["brief"]))
      .max(1)
      .optional()
      .describe("brief: attach the project brief."),
  }),
  output: z.object({
    task: taskSchema.describe("The task."),
    ready: z.boolean().describe("True when it is open and nothing blocks it."),
    blockers: z.array(taskSummarySchema).describe(`Dependencies that are not done or cancelled, by priority (up to ${EMBEDDED_LIST_MAX}).`),
    dependents: z.array(taskSummarySchema).describe(`Tasks that wait on this one, by priority (up to ${EMBEDDED_LIST_MAX}).`),
    subtasks: z.array(taskSummarySchema).describe(`Tasks whose parent is this one, by priority (up to ${EMBEDDED_LIST_MAX}).`),
    comments: z.array(commentSchema).describe(`The task's comments, oldest first (up to ${EMBEDDED_LIST_MAX}).`),
    project: projectSchema.pick({ id: true, key: true, title: true, status: true }).describe("The task's project."),
    evidence: z.object({ code_refs: z.number().int().describe("Live code refs."), attachments: z.number().int().describe("Live attachments.") }).describe("Evidence on record."),
    review: reviewStandingSchema
      .nullable()
      .describe("With a reviewer: the latest review handoff addressed to them, its verdict and whether it unlocks done; null without a reviewer or before one was asked."),
    activity: z.array(activityItemSchema).describe(`The task's activity, newest first (up to ${EMBEDDED_LIST_MAX}).`),
    lists: listsSchema(TASK_GET_LISTS),
    brief: z.record(z.string(), z.unknown()).optional().describe("The project brief, with include: ['brief']."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const task = await findTask(ctx, input.task_id);
    const review = task.reviewer_actor_id ? reviewStanding(ctx, task, task.reviewer_actor_id) : Promise.resolve(null);
    const max = EMBEDDED_LIST_MAX;
    const [blockers, dependents, subtasks, comments, activity, totals, project, evidence] = await ctx.d1.batch<Record<string, unknown>>(taskDetailStatements(ctx, task, max));
    const total = totals!.results[0] as Record<keyof typeof TASK_GET_LISTS, number>;
    type LinkRow = TaskSummaryRow & { created_at: string };
    const linkList = (r: D1Result<Record<string, unknown>> | undefined, n: number, filter: Record<string, unknown>) =>
      embeddedList(r!.results as unknown as LinkRow[], n, {
        tool: "task_query",
        arguments: { ...filter, order_by: "priority" },
        cursorOf: (last) => [last.priority, last.created_at, last.id],
      });
    const open = ["todo", "in_progress", "in_review"];
    const b = linkList(blockers, total.blockers, { dependencies_of: task.id, status: open });
    const d = linkList(dependents, total.dependents, { dependents_of: task.id });
    const sub = linkList(subtasks, total.subtasks, { parent_task_id: task.id });
    const c = embeddedList(comments!.results as unknown as CommentRow[], total.comments, {
      tool: "comment_query",
      arguments: { object_type: "task", object_id: task.id },
      cursorOf: (last) => [last.seq],
    });
    const a = embeddedList(activity!.results as unknown as Array<ActivityItem & { seq: number }>, total.activity, {
      tool: "activity_query",
      arguments: { object_type: "task", object_id: task.id },
      cursorOf: (last) => [last.seq],
    });
    const projectRow = project!.results[0] as z.infer<typeof projectSchema>;
    const brief = input.include?.includes("brief")
      ? ((await readProjectBrief(ctx, { project: task.project_id, max_tasks: 10, max_decisions: 10, max_knowledge: 10, max_activity: 20 })) as Record<string, unknown>)
      : undefined;
    return {
      task,
      ready: task.state === "ready",
      blockers: b.items.map(toTaskSummary),
      dependents: d.items.map(toTaskSummary),
      subtasks: sub.items.map(toTaskSummary),
      comments: c.items.map(toComment),
      project: { id: projectRow.id, key: projectRow.key, title: projectRow.title, status: projectRow.status },
      evidence: evidence!.results[0] as { code_refs: number; attachments: number },
      review: await review,
      activity: a.items.map(({ seq: _seq, ...item }) => item),
      lists: { blockers: b.info, dependents: d.info, subtasks: sub.info, comments: c.info, activity: a.info },
      ...(brief ? { brief } : {}),
    };
  },
  summarize: (r) => `${r.task.ref} ${r.task.status} (${r.task.state})${r.blockers.length ? `, blocked by ${r.blockers.map((b) => b.ref).join(", ")}` : ""}.`,
});
