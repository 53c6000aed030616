import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { notFound } from "../../core/errors";
import { selectTask, taskSchema, toTask, type TaskRow } from "./model";
import { createItemSchema, createTasks, manyItemSchema } from "./model";

export const taskCreateTool = defineTool({
  name: "task_create",
  title: "Create a task",
  toolset: "tasks",
  description: "Create a task (or subtask) in a project, with its dependencies and what gates done.",
  input: z.object({ project_id: z.string().min(1).max(100).describe("Project id or key."), ...createItemSchema.shape }),
  output: z.object({ task: taskSchema.describe("The new task.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  // createTasks takes the key in its one batch.
  keyedBatch: true,
  run: async (ctx, { project_id, ...item }) => {
    const { ids } = await createTasks(ctx, project_id, [item]);
    const row = await selectTask(ctx, ids[0]!).first<TaskRow>();
    if (!row) throw notFound("task", ids[0]!, "The task vanished right after creation; retry.");
    return { task: toTask(row) };
  },
  summarize: (r) => `Created ${r.task.ref}: ${r.task.title}.`,
});

export const taskCreateManyTool = defineTool({
  name: "task_create_many",
  title: "Create many tasks",
  toolset: "tasks",
  description: "Create up to 100 tasks and their dependencies atomically (all or nothing).",
  input: z.object({
    project_id: z.string().min(1).max(100).describe("Project id or key."),
    tasks: z.array(manyItemSchema).min(1).max(100).describe("The tasks."),
  }),
  output: z.object({
    count: z.number().int().describe("Tasks created."),
    task_ids: z.array(z.string()).describe("Ids in input order."),
    refs: z.array(z.string()).describe("KEY-number refs in input order."),
  }),
  cost: { items: "tasks" },
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  // createTasks takes the key in its one batch.
  keyedBatch: true,
  run: async (ctx, input) => {
    const { ids, refs } = await createTasks(ctx, input.project_id, input.tasks);
    return { count: ids.length, task_ids: ids, refs };
  },
  summarize: (r) => `Created ${r.count} task(s): ${r.refs.join(", ")}.`,
});
