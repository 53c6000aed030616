/** Answering a tools/call as a task: the row is written first, so a tasks/get sent at once finds it. */
import type { Ctx } from "../../core/context";
import type { AnyToolDef } from "../../core/define-tool";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { createTask, type NewTask } from "./store";
import { createTaskResult, TASK_TTL_MS } from "./wire";

export type TaskPlan = Omit<NewTask, "tool" | "ttlMs">;

/**
 * The CreateTaskResult, typed as the tool result it stands in for: the SDK passes a tools/call
 * result with another resultType through untouched, but its handler type knows only the core ones.
 */
export async function startTask(ctx: Ctx, tool: string, plan: TaskPlan): Promise<CallToolResult> {
  return createTaskResult(await createTask(ctx, { ...plan, tool, ttlMs: TASK_TTL_MS })) as unknown as CallToolResult;
}

/** A registry tool's successful answer turned into the task that follows the work it started. */
export function startToolTask(ctx: Ctx, def: AnyToolDef, result: CallToolResult) {
  const task = def.task!;
  const { ok: _ok, ...output } = (result.structuredContent ?? {}) as Record<string, unknown>;
  return startTask(ctx, def.name, { driver: task.driver, link: task.link(output), pollMs: task.pollMs });
}
