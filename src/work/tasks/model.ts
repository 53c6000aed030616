/** Tasks as stored and as returned, the state machine, the one creation path (task_create, task_create_many, plan_to_tasks), and the reads the task tools share. */
import { z } from "zod";
import { alias } from "drizzle-orm/sqlite-core";
import { and, asc, count, desc, eq, inArray, isNotNull, isNull, lt, notInArray, type Placeholder, sql, type SQL } from "drizzle-orm";
import type { Ctx } from "../../core/context";
import { compiled, CompiledShapes, type Db, dbOf, jsonValues, statementOf } from "../../db/client";
import { activity, comments, projects, taskDeps, taskLabels, tasks } from "../../db/schema";
import { invalidInput, notFound } from "../../core/errors";
import { activityItemFields, activityStatement, actorRefField, type Condition, dateField, jsonArray, resolveActor } from "../shared";
import { projectP, selectTaskSummaries, TASK_STATE_SQL, taskSummariesIn, taskSummaryFields, taskSummarySchema, taskT, type TaskStatus, type TaskSummaryRow, toTaskSummary } from "./summary";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { BRIEF_IN_LISTING } from "../../core/json-schema";
import { findProject } from "../projects/model";

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
  todo: [],
  in_progress: [],
  in_review: [],
  done: ["todo", "in_progress"],
  cancelled: ["todo"],
};

/** Tasks and projects as the room's reads name them: `t` and `p`, which the state expression (SQL text) correlates with. */
const t = taskT;
/** A task's labels at its place in the claim order (migration 0056): a label's tasks in that order are one index range. */
const tl = alias(taskLabels, "tl");
const p = projectP;

/**
 * A task row's fields, keyed by SQL column name so rows keep the shape the tools return. Renamed columns are
 * `sql` aliases: a statement run through statementOf returns rows keyed by the names the SQL gives them.
 */
const taskFields = {
  id: t.id,
  project_id: t.projectId,
  seq: t.seq,
  project_key: sql<string>`${p.key}`.as("project_key"),
  title: t.title,
  body: t.body,
  status: t.status,
  priority: t.priority,
  assignee_actor_id: t.assigneeActorId,
  reviewer_actor_id: t.reviewerActorId,
  due_on: t.dueOn,
  parent_task_id: t.parentTaskId,
  labels: t.labels,
  acceptance_criteria: t.acceptanceCriteria,
  requires_evidence: t.requiresEvidence,
  lease_expires_at: t.leaseExpiresAt,
  claimed_at: t.claimedAt,
  created_by: t.createdBy,
  created_at: t.createdAt,
  updated_at: t.updatedAt,
  done_at: t.doneAt,
  state: sql.raw(TASK_STATE_SQL).as("state"),
  depends_on: sql<string>`(SELECT json_group_array(d.depends_on_task_id) FROM task_deps d WHERE d.tenant_id = ${t.tenantId} AND d.task_id = ${t.id})`.as("depends_on"),
};

const taskSelect = (db: Db) => db.select(taskFields).from(t).innerJoin(p, eq(p.id, t.projectId));

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

// Compiled once: every task call reads its task, by id or by reference.
const taskById = compiled(["tenant", "id"], (db, v) => taskSelect(db).where(and(eq(t.tenantId, v.tenant), eq(t.id, v.id))));
const taskByRef = compiled(["tenant", "key", "seq"], (db, v) =>
  // `COLLATE NOCASE` as the live-key index is declared, so the key lookup stays on it.
  taskSelect(db).where(and(eq(t.tenantId, v.tenant), isNull(p.deletedAt), sql`${p.key} = ${v.key} COLLATE NOCASE`, eq(t.seq, v.seq))),
);

export const selectTask = (ctx: Ctx, id: string): D1PreparedStatement => taskById(ctx.d1, { tenant: ctx.tenantId, id });

/**
 * A task by id or by its KEY-number reference, in the caller's tenant; anything else is
 * not_found (another tenant's task included).
 */
export async function findTask(ctx: Ctx, ref: string): Promise<Task> {
  const value = ref.trim();
  const m = /^([A-Za-z][A-Za-z0-9]{1,15})-(\d{1,9})$/.exec(value);
  const row = await (m ? taskByRef(ctx.d1, { tenant: ctx.tenantId, key: m[1], seq: Number(m[2]) }) : selectTask(ctx, value)).first<TaskRow>();
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
export type TaskStatusListener = (ctx: Ctx, taskId: string, known?: KnownStatus) => Promise<void>;
/** The status and assignee the write just gave the task, when its caller knows them: a listener need not read them back. */
export interface KnownStatus {
  status: string;
  assignee: string | null;
}
const taskStatusListeners: TaskStatusListener[] = [];

export function onTaskStatusChange(listener: TaskStatusListener): void {
  if (!taskStatusListeners.includes(listener)) taskStatusListeners.push(listener);
}

export async function taskStatusChanged(ctx: Ctx, taskId: string, known?: KnownStatus): Promise<void> {
  // The followers are independent of each other (a plan step; the task's reservations).
  await Promise.all(taskStatusListeners.map((listener) => listener(ctx, taskId, known)));
}

export const LABEL = z
  .string()
  .min(1)
  .max(50)
  .regex(/^[\p{L}\p{N}_.:/-]+$/u, "labels are single words: letters, digits, _ . : / -");

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
export const manyItemSchema = z
  .object({
    ...itemFields,
    depends_on: z
      .array(z.union([z.string().min(1).max(100), batchRef]))
      .max(50)
      .optional()
      .describe("Tasks this one waits on: refs, or {batch_index: N}."),
  })
  .meta(BRIEF_IN_LISTING)
  .describe("task_create's arguments without project_id; depends_on may also name {batch_index: N}.");
export type ManyItem = z.output<typeof manyItemSchema>;

/**
 * Resolves every reference of a batch up front, so a bad one fails the call before any write.
 * `alongside` adds statements to the same atomic batch (plan_to_tasks links steps to the new ids).
 */
export async function createTasks(
  ctx: Ctx,
  projectRef: string,
  items: ManyItem[],
  alongside: (ids: readonly string[]) => D1PreparedStatement[] = () => [],
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
        throw invalidInput(
          `tasks[${i}].depends_on refers to batch_index ${dep.batch_index}, which is not an earlier item.`,
          "A batch item may depend only on items before it (batch_index < its own index), which keeps the batch acyclic.",
        );
      }
    }
  });

  const now = iso(ctx.clock.now());
  const ids = items.map(() => uuidv7(ctx.clock.now().getTime()));
  const n = items.length;
  const db = dbOf(ctx);
  const statements: D1PreparedStatement[] = [
    // A keyedBatch caller's idempotency key, taken in this batch (before its activity rows).
    ...(ctx.keyed?.open() ?? []),
    // Numbers come from the project's counter, bumped once for the batch inside the same atomic batch.
    statementOf(
      ctx.d1,
      db
        .update(projects)
        .set({ taskSeq: sql`${projects.taskSeq} + ${n}` })
        .where(and(eq(projects.tenantId, ctx.tenantId), eq(projects.id, project.id))),
    ),
  ];
  items.forEach((item, i) => {
    statements.push(
      statementOf(
        ctx.d1,
        db.insert(tasks).values({
          id: ids[i]!,
          tenantId: ctx.tenantId,
          projectId: project.id,
          seq: sql`(SELECT task_seq FROM projects WHERE id = ${project.id}) - ${n - 1 - i}`,
          title: item.title,
          body: item.body ?? "",
          status: "todo",
          priority: item.priority,
          assigneeActorId: item.assignee_actor_id ? actorIds.get(item.assignee_actor_id)! : null,
          reviewerActorId: item.reviewer_actor_id ? actorIds.get(item.reviewer_actor_id)! : null,
          dueOn: item.due_on ?? null,
          parentTaskId: item.parent_task_id ? taskIds.get(item.parent_task_id)! : null,
          labels: JSON.stringify([...new Set(item.labels ?? [])]),
          acceptanceCriteria: JSON.stringify(item.acceptance_criteria ?? []),
          requiresEvidence: item.requires_evidence ? 1 : 0,
          createdBy: ctx.actorId,
          createdAt: now,
          updatedAt: now,
          // drizzle writes null for a column left out (SQLite has no DEFAULT in VALUES): lease_token's default is spelled out.
          leaseToken: 0,
        }),
      ),
    );
    const deps = new Set((item.depends_on ?? []).map((d) => (typeof d === "string" ? taskIds.get(d)! : ids[d.batch_index]!)));
    for (const dep of deps) {
      statements.push(statementOf(ctx.d1, db.insert(taskDeps).values({ tenantId: ctx.tenantId, taskId: ids[i]!, dependsOnTaskId: dep, createdAt: now })));
    }
    statements.push(activityStatement(ctx, { verb: "task.created", objectType: "task", objectId: ids[i]!, projectId: project.id, summary: `created ${item.title}` }));
  });
  await ctx.d1.batch([...statements, ...alongside(ids)]);
  const seqs = await db
    .select({ id: tasks.id, seq: tasks.seq })
    .from(tasks)
    // One JSON parameter, not one per id: D1 allows at most 100 bound parameters.
    .where(and(eq(tasks.tenantId, ctx.tenantId), inArray(tasks.id, jsonValues(ids))))
    .all();
  const seqOf = new Map(seqs.map((r) => [r.id, r.seq]));
  return { ids, refs: ids.map((id) => `${project.key}-${seqOf.get(id)}`) };
}

/** Compare-and-swap release: back to the pool only while in progress and the lease `guard` holds (and, unless `anyHolder`, held by the caller); returns the id when it did. */
// Hand SQL: the lease guard is a Condition, SQL text the claim verbs build.
export function releaseTaskStatement(ctx: Ctx, taskId: string, anyHolder: boolean, guard: Condition, now: string): D1PreparedStatement {
  const holderOnly = anyHolder ? "" : " AND assignee_actor_id = ?";
  return ctx.d1
    .prepare(
      `UPDATE tasks SET status = 'todo', assignee_actor_id = NULL, lease_expires_at = NULL, claimed_at = NULL, updated_at = ?
                  WHERE tenant_id = ? AND id = ? AND status = 'in_progress'${holderOnly} AND ${guard.sql} RETURNING id`,
    )
    .bind(now, ctx.tenantId, taskId, ...(anyHolder ? [] : [ctx.actorId]), ...guard.params);
}

/** How many live code refs and attachments a task has, together. */
// Hand SQL: one FROM-less row of two scalar counts, which drizzle's select cannot say.
export async function taskEvidenceCount(ctx: Ctx, taskId: string): Promise<{ n: number } | null> {
  return ctx.d1
    .prepare(
      `SELECT (SELECT COUNT(*) FROM code_refs WHERE tenant_id = ?1 AND object_type = 'task' AND object_id = ?2 AND deleted_at IS NULL)
              + (SELECT COUNT(*) FROM attachments WHERE tenant_id = ?1 AND object_type = 'task' AND object_id = ?2 AND deleted_at IS NULL) AS n`,
    )
    .bind(ctx.tenantId, taskId)
    .first<{ n: number }>();
}

/**
 * Compare-and-swap on the status read (a racing writer that moved it wins, the caller reports conflict), on the
 * lease rule (`guard`, so no lease can change between the check and the write) and on `extra`; returns the id when it wrote.
 */
// Hand SQL: the lease guard and `extra` are Conditions, SQL text the update verb builds.
export function updateTaskStatement(
  ctx: Ctx,
  task: Pick<Task, "id" | "status">,
  changes: Record<string, unknown>,
  columns: string[],
  guard: Condition,
  extra: Condition,
  now: string,
): D1PreparedStatement {
  return ctx.d1
    .prepare(`UPDATE tasks SET ${columns.map((c) => `${c} = ?`).join(", ")}, updated_at = ? WHERE tenant_id = ? AND id = ? AND status = ? AND ${guard.sql}${extra.sql} RETURNING id`)
    .bind(...columns.map((c) => changes[c]), now, ctx.tenantId, task.id, task.status, ...guard.params, ...extra.params);
}

// Whether ?3 is reachable from ?1 by following depends_on edges (binds: start, tenant, target).
const REACHES_SQL = `WITH RECURSIVE reach(id) AS (
    SELECT ?
    UNION SELECT d.depends_on_task_id FROM task_deps d JOIN reach ON d.task_id = reach.id WHERE d.tenant_id = ?)
  SELECT 1 FROM reach WHERE id = ?`;

// Whether ?3 is an ancestor-or-self of ?1 through parent links (binds: start, tenant, target).
const PARENT_REACHES_SQL = `WITH RECURSIVE up(id) AS (
    SELECT ?
    UNION SELECT t.parent_task_id FROM tasks t JOIN up ON t.id = up.id WHERE t.tenant_id = ? AND t.parent_task_id IS NOT NULL)
  SELECT 1 FROM up WHERE id = ?`;

/** A dependency edge, only when it closes no cycle and the task waits on fewer than `max` tasks; returns the dependency when it wrote. */
// Hand SQL: an INSERT…SELECT guarded by a recursive CTE, which drizzle cannot say.
export function addDependencyStatement(ctx: Ctx, taskId: string, dep: string, max: number, now: string): D1PreparedStatement {
  return ctx.d1
    .prepare(
      `INSERT INTO task_deps (tenant_id, task_id, depends_on_task_id, created_at) SELECT ?, ?, ?, ? WHERE NOT EXISTS (${REACHES_SQL})
                      AND (SELECT COUNT(*) FROM task_deps WHERE tenant_id = ? AND task_id = ?) < ?
                    ON CONFLICT DO NOTHING RETURNING depends_on_task_id`,
    )
    .bind(ctx.tenantId, taskId, dep, now, dep, ctx.tenantId, taskId, ctx.tenantId, taskId, max);
}

export function removeDependencyStatement(ctx: Ctx, taskId: string, dep: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .delete(taskDeps)
      .where(and(eq(taskDeps.tenantId, ctx.tenantId), eq(taskDeps.taskId, taskId), eq(taskDeps.dependsOnTaskId, dep)))
      .returning({ depends_on_task_id: taskDeps.dependsOnTaskId }),
  );
}

/** Sets a task's parent, only when the parent is not the task or below it; returns the id when it wrote. */
// Hand SQL: the cycle guard is a recursive CTE, which drizzle cannot say.
export function setParentStatement(ctx: Ctx, taskId: string, parent: string, now: string): D1PreparedStatement {
  return ctx.d1
    .prepare(`UPDATE tasks SET parent_task_id = ?, updated_at = ? WHERE tenant_id = ? AND id = ? AND NOT EXISTS (${PARENT_REACHES_SQL}) RETURNING id`)
    .bind(parent, now, ctx.tenantId, taskId, parent, ctx.tenantId, taskId);
}

export function clearParentStatement(ctx: Ctx, taskId: string, now: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .update(tasks)
      .set({ parentTaskId: null, updatedAt: now })
      .where(and(eq(tasks.tenantId, ctx.tenantId), eq(tasks.id, taskId)))
      .returning({ id: tasks.id }),
  );
}

/** How many tasks a task waits on. */
export async function dependencyCount(ctx: Ctx, taskId: string): Promise<number> {
  const row = await dbOf(ctx)
    .select({ n: count() })
    .from(taskDeps)
    .where(and(eq(taskDeps.tenantId, ctx.tenantId), eq(taskDeps.taskId, taskId)))
    .get();
  return row?.n ?? 0;
}

/** task_query's sort orders and the keyset each pages by (every key ends with the id, so ties are stable). */
export const TASK_ORDERS = {
  priority: { sql: "priority ASC, created_at ASC, id ASC", keys: ["priority", "created_at", "id"], dirs: [">", ">", ">"] },
  created: { sql: "created_at DESC, id DESC", keys: ["created_at", "id"], dirs: ["<", "<"] },
  updated: { sql: "updated_at DESC, id DESC", keys: ["updated_at", "id"], dirs: ["<", "<"] },
  due: { sql: "due_key ASC, id ASC", keys: ["due_key", "id"], dirs: [">", ">"] },
} as const;
export type TaskOrder = keyof typeof TASK_ORDERS;

/** Which tasks task_query reads: the caller's tenant, narrowed by what the caller asked for (ids already resolved). */
export interface TaskFilter {
  projectId?: string;
  /** An actor id, or null for unassigned tasks. */
  assigneeActorId?: string | null;
  statuses?: readonly string[];
  label?: string;
  dueBefore?: string;
  /** Case-insensitive text in title or body. */
  q?: string;
  parentTaskId?: string;
  /** Only the tasks this task waits on. */
  dependenciesOf?: string;
  /** Only the tasks that wait on this task. */
  dependentsOf?: string;
  state?: "ready" | "blocked";
}

/**
 * A task_query page's values by placeholder name. Which names are there is the statement's shape
 * (a filter given or not, how many statuses, a resume point or not); an unassigned filter has no
 * value, so its name only marks the shape.
 */
function pageValues(tenantId: string, f: TaskFilter, after: ReadonlyArray<string | number | null> | null, limit: number): Record<string, unknown> {
  const v: Record<string, unknown> = { tenant: tenantId, limit };
  const optional = {
    project: f.projectId,
    assignee: f.assigneeActorId ?? undefined,
    unassigned: f.assigneeActorId === null ? true : undefined,
    label: f.label,
    dueBefore: f.dueBefore,
    q: f.q,
    parent: f.parentTaskId,
    dependenciesOf: f.dependenciesOf,
    dependentsOf: f.dependentsOf,
    state: f.state,
  };
  for (const [name, value] of Object.entries(optional)) if (value !== undefined) v[name] = value;
  f.statuses?.forEach((s, i) => (v[`status${i}`] = s));
  after?.forEach((a, i) => (v[`after${i}`] = a));
  return v;
}

/**
 * task_query's filter over `p`, the placeholders pageValues names. With a label the page is read
 * from `tl`, whose rows carry the tenant and project too, so they are matched there: the label's
 * index range is then the whole scope, walked in order.
 */
function taskWhere(p: Record<string, Placeholder>, f: TaskFilter): SQL {
  const byLabel = f.label !== undefined;
  return and(
    byLabel ? and(eq(tl.tenantId, p.tenant!), eq(tl.label, p.label!)) : eq(t.tenantId, p.tenant!),
    f.projectId !== undefined ? eq(byLabel ? tl.projectId : t.projectId, p.project!) : undefined,
    f.assigneeActorId === null ? isNull(t.assigneeActorId) : f.assigneeActorId !== undefined ? eq(t.assigneeActorId, p.assignee!) : undefined,
    f.statuses?.length
      ? inArray(
          t.status,
          f.statuses.map((_, i) => p[`status${i}`]!),
        )
      : undefined,
    f.dueBefore !== undefined ? and(isNotNull(t.dueOn), lt(t.dueOn, p.dueBefore!)) : undefined,
    f.q !== undefined ? sql`(instr(lower(${t.title}), lower(${p.q})) > 0 OR instr(lower(${t.body}), lower(${p.q})) > 0)` : undefined,
    f.parentTaskId !== undefined ? eq(t.parentTaskId, p.parent!) : undefined,
    f.dependenciesOf !== undefined ? sql`${t.id} IN (SELECT depends_on_task_id FROM task_deps WHERE tenant_id = ${t.tenantId} AND task_id = ${p.dependenciesOf})` : undefined,
    f.dependentsOf !== undefined ? sql`${t.id} IN (SELECT task_id FROM task_deps WHERE tenant_id = ${t.tenantId} AND depends_on_task_id = ${p.dependentsOf})` : undefined,
  )!;
}

/** `(a, b, c) > (x, y, z)` spelled out for SQLite, as an OR of prefixes, over the listing's (unqualified) columns. */
function keysetAfter(keys: readonly string[], dirs: readonly string[], after: readonly Placeholder[]): SQL {
  const terms = keys.map((_, i) => sql.join([...keys.slice(0, i).map((k, j) => sql`${sql.raw(k)} = ${after[j]}`), sql`${sql.raw(keys[i]!)} ${sql.raw(dirs[i]!)} ${after[i]}`], sql` AND `));
  return sql`(${sql.join(
    terms.map((term) => sql`(${term})`),
    sql` OR `,
  )})`;
}

/**
 * task_query's page: the task summaries passing the filter, in `order`, resuming strictly after `after` (the cursor's keyset).
 */
export async function listTaskSummaries(
  ctx: Ctx,
  f: TaskFilter,
  orderBy: TaskOrder,
  after: ReadonlyArray<string | number | null> | null,
  limit: number,
): Promise<Array<TaskSummaryRow & Record<string, string | number>>> {
  const order = TASK_ORDERS[orderBy];
  const values = pageValues(ctx.tenantId, f, after, limit);
  const statement = taskPages.statement(ctx.d1, `${orderBy}:${Object.keys(values).join(",")}`, values, (db, p) => {
    const fields = { ...taskSummaryFields, created_at: t.createdAt, due_key: sql<string>`COALESCE(${t.dueOn}, '9999-12-31')`.as("due_key") };
    // With a label, the claim order's columns come from the label's rows, so its index serves the order.
    const source =
      f.label === undefined
        ? taskSummariesIn(db, fields)
        : db
            .select({ ...fields, id: sql<string>`${tl.taskId}`.as("id"), priority: tl.priority, created_at: tl.createdAt })
            .from(tl)
            .innerJoin(t, eq(t.id, tl.taskId))
            .innerJoin(projectP, eq(projectP.id, t.projectId));
    const page = source.where(taskWhere(p, f)).as("page");
    // The state and the keyset read the derived columns, so they filter the selection, not the tasks.
    const resume = after
      ? keysetAfter(
          order.keys,
          order.dirs,
          order.keys.map((_, i) => p[`after${i}`]!),
        )
      : undefined;
    return db
      .select()
      .from(page)
      .where(and(f.state !== undefined ? eq(page.state, p.state!) : undefined, resume))
      .orderBy(sql.raw(order.sql))
      .limit(p.limit!);
  });
  return (await statement.all<TaskSummaryRow & Record<string, string | number>>()).results;
}

// task_query is the most called listing: its statement is compiled once per shape of filter.
const taskPages = new CompiledShapes();

/**
 * task_get's detail as one batch, in this order: blockers, dependents, subtasks (each in task_query's priority
 * order, so its cursor continues where this page stops), comments, activity (each up to `max` + 1), their totals,
 * the project, and the evidence counts.
 */
export function taskDetailStatements(ctx: Ctx, task: Pick<Task, "id" | "project_id">, max: number): D1PreparedStatement[] {
  const LINKS = {
    blockers: and(sql`${t.id} IN (SELECT depends_on_task_id FROM task_deps WHERE tenant_id = ${t.tenantId} AND task_id = ${task.id})`, notInArray(t.status, ["done", "cancelled"]))!,
    dependents: sql`${t.id} IN (SELECT task_id FROM task_deps WHERE tenant_id = ${t.tenantId} AND depends_on_task_id = ${task.id})`,
    subtasks: eq(t.parentTaskId, task.id),
  };
  const links = (where: SQL) =>
    statementOf(
      ctx.d1,
      selectTaskSummaries(ctx, { ...taskSummaryFields, created_at: t.createdAt })
        .where(and(eq(t.tenantId, ctx.tenantId), where))
        .orderBy(asc(t.priority), asc(t.createdAt), asc(t.id))
        .limit(max + 1),
    );
  const linkCount = (where: SQL) => sql`(SELECT COUNT(*) FROM tasks t WHERE ${and(eq(t.tenantId, ctx.tenantId), where)})`;
  // Hand SQL (the totals, the evidence counts): FROM-less rows of scalar counts, which drizzle's select cannot say
  // (the totals' link counts are the links' drizzle conditions).
  return [
    links(LINKS.blockers),
    links(LINKS.dependents),
    links(LINKS.subtasks),
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .select()
        .from(comments)
        .where(and(eq(comments.tenantId, ctx.tenantId), eq(comments.objectType, "task"), eq(comments.objectId, task.id)))
        .orderBy(asc(comments.seq))
        .limit(max + 1),
    ),
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .select({ seq: activity.seq, ...activityItemFields })
        .from(activity)
        .where(and(eq(activity.tenantId, ctx.tenantId), eq(activity.objectType, "task"), eq(activity.objectId, task.id)))
        .orderBy(desc(activity.seq))
        .limit(max + 1),
    ),
    statementOf(ctx.d1, {
      toSQL: () =>
        dbOf(ctx)
          .all(
            sql`SELECT ${linkCount(LINKS.blockers)} AS blockers, ${linkCount(LINKS.dependents)} AS dependents, ${linkCount(LINKS.subtasks)} AS subtasks,
                (SELECT COUNT(*) FROM comments WHERE tenant_id = ${ctx.tenantId} AND object_type = 'task' AND object_id = ${task.id}) AS comments,
                (SELECT COUNT(*) FROM activity WHERE tenant_id = ${ctx.tenantId} AND object_type = 'task' AND object_id = ${task.id}) AS activity`,
          )
          .getQuery(),
    }),
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .select({ id: projects.id, key: projects.key, title: projects.title, status: projects.status })
        .from(projects)
        .where(and(eq(projects.tenantId, ctx.tenantId), eq(projects.id, task.project_id))),
    ),
    ctx.d1
      .prepare(
        `SELECT (SELECT COUNT(*) FROM code_refs WHERE tenant_id = ?1 AND object_type = 'task' AND object_id = ?2 AND deleted_at IS NULL) AS code_refs,
                (SELECT COUNT(*) FROM attachments WHERE tenant_id = ?1 AND object_type = 'task' AND object_id = ?2 AND deleted_at IS NULL) AS attachments`,
      )
      .bind(ctx.tenantId, task.id),
  ];
}
