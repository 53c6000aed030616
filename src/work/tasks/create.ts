/** task_create and task_create_many: one creation path, atomic for a whole batch. */
import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../db/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { BRIEF_IN_LISTING } from "../../core/json-schema";
import { invalidInput, notFound } from "../../core/errors";
import { activityStatement, actorRefField, dateField, resolveActor } from "../shared";
import { findProject } from "../projects/model";
import { criterionSchema, findTask, selectTask, taskSchema, toTask, type TaskRow } from "./model";

export const LABEL = z.string().min(1).max(50).regex(/^[\p{L}\p{N}_.:/-]+$/u, "labels are single words: letters, digits, _ . : / -");

const itemFields = {
  title: z.string().trim().min(1).max(300).describe("Title."),
  body: z.string().max(65_536).optional().describe("Description."),
  assignee_actor_id: actorRefField("Assignee.").optional(),
  priority: z.number().int().min(0).max(4).default(2).describe("0 (highest) to 4."),
  due_on: dateField("Due date (YYYY-MM-DD).").optional(),
  parent_task_id: z.string().min(1).max(100).optional().describe("Parent task (makes this a subtask)."),
  labels: z.array(LABEL).max(20).optional().describe("Labels."),
  acceptance_criteria: z.array(criterionSchema).max(50).optional().describe("Checklist that must be met before done."),
  requires_evidence: z.boolean().default(false).describe("Done needs a code ref or attachment."),
  reviewer_actor_id: actorRefField("Reviewer, whose approval done waits for.").optional(),
};

const batchRef = z.object({ batch_index: z.number().int().min(0).max(99).describe("Index of an earlier item in this batch.") }).strict();

export const createItemSchema = z.object({
  ...itemFields,
  depends_on: z.array(z.string().min(1).max(100)).max(50).optional().describe("Tasks this one waits on."),
});
const manyItemSchema = z.object({
  ...itemFields,
  depends_on: z.array(z.union([z.string().min(1).max(100), batchRef])).max(50).optional()
    .describe("Tasks this one waits on: refs, or {batch_index: N}."),
}).meta(BRIEF_IN_LISTING).describe("task_create's arguments without project_id; depends_on may also name {batch_index: N}.");
export type ManyItem = z.output<typeof manyItemSchema>;

/**
 * Resolves every reference of a batch up front, so a bad one fails the call before any write.
 * `alongside` adds statements to the same atomic batch (plan_to_tasks links steps to the new ids).
 */
export async function createTasks(
  ctx: Ctx, projectRef: string, items: ManyItem[], alongside: (ids: readonly string[]) => D1PreparedStatement[] = () => [],
): Promise<{ ids: string[]; refs: string[] }> {
  const project = await findProject(ctx, projectRef);
  const actorIds = new Map<string, string>();
  const taskIds = new Map<string, string>();
  for (const item of items) {
    for (const ref of [item.assignee_actor_id, item.reviewer_actor_id]) {
      if (ref && !actorIds.has(ref)) actorIds.set(ref, await resolveActor(ctx, ref));
    }
    for (const ref of [item.parent_task_id, ...(item.depends_on ?? [])]) {
      if (typeof ref === "string" && !taskIds.has(ref)) taskIds.set(ref, (await findTask(ctx, ref)).id);
    }
  }
  items.forEach((item, i) => {
    for (const dep of item.depends_on ?? []) {
      if (typeof dep !== "string" && dep.batch_index >= i) {
        throw invalidInput(`tasks[${i}].depends_on refers to batch_index ${dep.batch_index}, which is not an earlier item.`,
          "A batch item may depend only on items before it (batch_index < its own index), which keeps the batch acyclic.");
      }
    }
  });

  const now = iso(ctx.clock.now());
  const ids = items.map(() => uuidv7(ctx.clock.now().getTime()));
  const n = items.length;
  const statements: D1PreparedStatement[] = [
    // Numbers come from the project's counter, bumped once for the batch inside the same atomic batch.
    ctx.d1.prepare(`UPDATE projects SET task_seq = task_seq + ? WHERE tenant_id = ? AND id = ?`).bind(n, ctx.tenantId, project.id),
  ];
  items.forEach((item, i) => {
    statements.push(
      ctx.d1
        .prepare(
          `INSERT INTO tasks (id, tenant_id, project_id, seq, title, body, status, priority, assignee_actor_id, reviewer_actor_id, due_on,
             parent_task_id, labels, acceptance_criteria, requires_evidence, created_by, created_at, updated_at)
           VALUES (?, ?, ?, (SELECT task_seq FROM projects WHERE id = ?) - ?, ?, ?, 'todo', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .bind(ids[i], ctx.tenantId, project.id, project.id, n - 1 - i, item.title, item.body ?? "", item.priority,
          item.assignee_actor_id ? actorIds.get(item.assignee_actor_id)! : null,
          item.reviewer_actor_id ? actorIds.get(item.reviewer_actor_id)! : null,
          item.due_on ?? null, item.parent_task_id ? taskIds.get(item.parent_task_id)! : null,
          JSON.stringify([...new Set(item.labels ?? [])]), JSON.stringify(item.acceptance_criteria ?? []),
          item.requires_evidence ? 1 : 0, ctx.actorId, now, now),
    );
    const deps = new Set((item.depends_on ?? []).map((d) => (typeof d === "string" ? taskIds.get(d)! : ids[d.batch_index]!)));
    for (const dep of deps) {
      statements.push(
        ctx.d1.prepare(`INSERT INTO task_deps (tenant_id, task_id, depends_on_task_id, created_at) VALUES (?, ?, ?, ?)`).bind(ctx.tenantId, ids[i], dep, now),
      );
    }
    statements.push(activityStatement(ctx, { verb: "task.created", objectType: "task", objectId: ids[i]!, projectId: project.id, summary: `created ${item.title}` }));
  });
  await ctx.d1.batch([...statements, ...alongside(ids)]);
  const seqs = await ctx.d1
    // One JSON parameter, not one per id: D1 allows at most 100 bound parameters.
    .prepare(`SELECT id, seq FROM tasks WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))`)
    .bind(ctx.tenantId, JSON.stringify(ids))
    .all<{ id: string; seq: number }>();
  const seqOf = new Map(seqs.results.map((r) => [r.id, r.seq]));
  return { ids, refs: ids.map((id) => `${project.key}-${seqOf.get(id)}`) };
}

export const taskCreateTool = defineTool({
  name: "task_create",
  title: "Create a task",
  toolset: "tasks",
  description:
    "Create a task (or subtask) in a project, with its dependencies and what gates done.",
  input: z.object({ project_id: z.string().min(1).max(100).describe("Project id or key."), ...createItemSchema.shape }),
  output: z.object({ task: taskSchema.describe("The new task.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
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
  description:
    "Create up to 100 tasks and their dependencies atomically (all or nothing).",
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
  run: async (ctx, input) => {
    const { ids, refs } = await createTasks(ctx, input.project_id, input.tasks);
    return { count: ids.length, task_ids: ids, refs };
  },
  summarize: (r) => `Created ${r.count} task(s): ${r.refs.join(", ")}.`,
});
