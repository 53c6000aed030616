/** The tasks' rows (migrations/0057): written before a CreateTaskResult leaves, settled on each read. */
import { and, eq, inArray } from "drizzle-orm";
import { dbOf } from "../../db/client";
import { uuidv7 } from "../../db/ids";
import { mcpTasks } from "../../db/schema";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import type { TaskChange, TaskStatus } from "../../core/task-driver";

export const TERMINAL: readonly TaskStatus[] = ["completed", "failed", "cancelled"];
const LIVE: TaskStatus[] = ["working", "input_required"];

export type TaskRow = typeof mcpTasks.$inferSelect;

export interface NewTask {
  tool: string;
  driver: string;
  link: Record<string, unknown>;
  ttlMs: number;
  pollMs: number;
  status?: TaskStatus;
  statusMessage?: string;
  inputRequests?: Record<string, unknown>;
}

const mine = (ctx: Ctx, id: string) => and(eq(mcpTasks.tenantId, ctx.tenantId), eq(mcpTasks.actorId, ctx.actorId), eq(mcpTasks.id, id));

export async function createTask(ctx: Ctx, task: NewTask): Promise<TaskRow> {
  const now = ctx.clock.now();
  const row: TaskRow = {
    tenantId: ctx.tenantId,
    id: uuidv7(now.getTime()),
    actorId: ctx.actorId,
    tool: task.tool,
    driver: task.driver,
    link: JSON.stringify(task.link),
    status: task.status ?? "working",
    statusMessage: task.statusMessage ?? "",
    inputRequests: JSON.stringify(task.inputRequests ?? {}),
    result: null,
    error: null,
    createdAt: iso(now),
    updatedAt: iso(now),
    ttlMs: task.ttlMs,
    pollMs: task.pollMs,
    expiresAt: iso(new Date(now.getTime() + task.ttlMs)),
  };
  await dbOf(ctx).insert(mcpTasks).values(row).run();
  return row;
}

/** The caller's task, if it has not expired: another actor's or tenant's id reads as unknown. */
export async function findTask(ctx: Ctx, id: string): Promise<TaskRow | undefined> {
  const row = await dbOf(ctx).select().from(mcpTasks).where(mine(ctx, id)).get();
  return row && row.expiresAt > iso(ctx.clock.now()) ? row : undefined;
}

/**
 * Applies a change while the task is still in the status it was read in, so a cancel that landed
 * in between is never overwritten. Returns the row as stored afterwards.
 */
export async function changeTask(ctx: Ctx, row: TaskRow, change: TaskChange): Promise<TaskRow> {
  const set = {
    ...(change.status !== undefined ? { status: change.status } : {}),
    ...(change.statusMessage !== undefined ? { statusMessage: change.statusMessage } : {}),
    ...(change.inputRequests !== undefined ? { inputRequests: JSON.stringify(change.inputRequests) } : {}),
    ...(change.result !== undefined ? { result: JSON.stringify(change.result) } : {}),
    ...(change.error !== undefined ? { error: JSON.stringify(change.error) } : {}),
    ...(change.link !== undefined ? { link: JSON.stringify(change.link) } : {}),
    updatedAt: iso(ctx.clock.now()),
  };
  const updated = await dbOf(ctx)
    .update(mcpTasks)
    .set(set)
    .where(and(mine(ctx, row.id), eq(mcpTasks.status, row.status), eq(mcpTasks.updatedAt, row.updatedAt)))
    .returning()
    .get();
  return updated ?? (await findTask(ctx, row.id)) ?? row;
}

/** Marks a live task cancelled; a terminal one keeps its status. True when this call cancelled it. */
export async function cancelTask(ctx: Ctx, row: TaskRow, message: string): Promise<boolean> {
  const r = await dbOf(ctx)
    .update(mcpTasks)
    .set({ status: "cancelled", statusMessage: message, inputRequests: "{}", updatedAt: iso(ctx.clock.now()) })
    .where(and(mine(ctx, row.id), inArray(mcpTasks.status, LIVE)))
    .run();
  return (r.meta.changes ?? 0) > 0;
}
