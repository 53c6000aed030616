/** Answering a tools/call as a task: the row is written first, so a tasks/get sent at once finds it. */
import type { Ctx } from "../../core/context";
import type { AnyToolDef } from "../../core/define-tool";
import type { ToolTask } from "../../core/task-driver";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { createTask, type NewTask } from "./store";
import { createTaskResult, TASK_TTL_MS } from "./wire";

export type TaskPlan = Omit<NewTask, "tool" | "ttlMs">;
export type LinkedTask = Extract<ToolTask<unknown>, { driver: string }>;

/**
 * The CreateTaskResult, typed as the tool result it stands in for: the SDK's handler type knows
 * only the core results. It passes this one on with its resultType and fields, adding only an
 * empty `content` and the server's `_meta`, which the extension allows.
 */
export async function startTask(ctx: Ctx, tool: string, plan: TaskPlan): Promise<CallToolResult> {
  return createTaskResult(await createTask(ctx, { ...plan, tool, ttlMs: TASK_TTL_MS })) as unknown as CallToolResult;
}

/** Where a task's CreateTaskResult carries the answer the call gave without the extension (its job id, its session id). */
const STARTED_META_KEY = "agent-ledger/started";

/**
 * A registry tool's successful answer turned into the task that follows the work it started. The
 * answer itself rides along in `_meta`, so a client can still use the job id with the job's tools.
 */
export async function startToolTask(ctx: Ctx, def: AnyToolDef, task: LinkedTask, result: CallToolResult): Promise<CallToolResult> {
  const { ok: _ok, ...output } = (result.structuredContent ?? {}) as Record<string, unknown>;
  const created = await startTask(ctx, def.name, { driver: task.driver, link: task.link(output), pollMs: task.pollMs });
  return { ...created, _meta: { [STARTED_META_KEY]: output } };
}
