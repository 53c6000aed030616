/**
 * tasks/get, tasks/update and tasks/cancel for clients that declare the tasks extension. The
 * methods v2 removed (tasks/result, tasks/list) are left unregistered, so they answer -32601.
 */
import { z } from "zod";
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, ResourceTemplate, type McpServer, type ServerContext } from "@modelcontextprotocol/server";
import type { Ctx } from "../../core/context";
import { excerpt } from "../../core/errors";
import { taskResourceUri, type TaskDrivers } from "../../core/task-driver";
import { cancelTask, changeTask, findTask, TERMINAL, type TaskRow } from "./store";
import { declaresTasks, detailedTask, tasksCapabilityMissing } from "./wire";

const taskId = z.string().min(1).max(100);
const GetParams = z.object({ taskId });
// The SDK lifts inputResponses off every request's params (they are SEP-2322's), into sctx.mcpReq.
const UpdateParams = z.object({ taskId });

/** The caller's live or finished task, or -32602: ids of other callers read as unknown ones. */
async function taskOf(ctx: Ctx, sctx: ServerContext, method: string, id: string): Promise<TaskRow> {
  if (!declaresTasks(sctx)) throw tasksCapabilityMissing(method);
  const row = await findTask(ctx, id);
  if (!row) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown task '${excerpt(id, 100)}': it does not exist, has expired, or belongs to another caller.`);
  return row;
}

/** The task as its driver finds it now; a task whose driver cannot read what it follows is left as it was. */
export async function settleTask(ctx: Ctx, drivers: TaskDrivers, row: TaskRow): Promise<TaskRow> {
  if (TERMINAL.includes(row.status)) return row;
  const driver = drivers.get(row.driver);
  if (!driver) {
    return changeTask(ctx, row, { status: "failed", error: { code: ProtocolErrorCode.InternalError, message: `This server cannot follow '${row.driver}' tasks any more.` } });
  }
  try {
    const change = await driver.settle(ctx, row, JSON.parse(row.link) as Record<string, unknown>);
    return change ? await changeTask(ctx, row, change) : row;
  } catch (err) {
    // A failed read of the work is not the work failing: the next poll reads again.
    console.warn(`could not settle task ${row.id} (${row.driver})`, err);
    return row;
  }
}

const TASK_RESOURCE = new ResourceTemplate(taskResourceUri("{taskId}"), { list: undefined });

/**
 * The caller's tasks as resources (ledger://tasks/{taskId}, read as tasks/get answers): subscribed
 * to with subscriptions/listen, a task's resource is updated as its work moves (an index job's
 * steps, a review's steps), so a client need not poll to hear of progress.
 */
function registerTaskResource(mcp: McpServer, ctx: Ctx, drivers: TaskDrivers): void {
  mcp.registerResource(
    "task",
    TASK_RESOURCE,
    { description: "One of your MCP tasks, as tasks/get answers it. Subscribe (subscriptions/listen) to hear its work move.", mimeType: "application/json" },
    async (uri, vars) => {
      const row = await findTask(ctx, String(vars.taskId));
      if (!row) throw new ResourceNotFoundError(uri.href, `Resource not found: ${excerpt(uri.href)} (no such task of yours, or it expired).`);
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(detailedTask(await settleTask(ctx, drivers, row))) }] };
    },
  );
}

/** The task methods and the tasks' resources, on a 2026-07-28 server. */
export function registerTasks(mcp: McpServer, ctx: Ctx, drivers: TaskDrivers): void {
  registerTaskResource(mcp, ctx, drivers);
  registerTaskMethods(mcp.server, ctx, drivers);
}

function registerTaskMethods(server: McpServer["server"], ctx: Ctx, drivers: TaskDrivers): void {
  server.setRequestHandler("tasks/get", { params: GetParams }, async (params, sctx) => {
    const row = await settleTask(ctx, drivers, await taskOf(ctx, sctx, "tasks/get", params.taskId));
    return detailedTask(row);
  });

  server.setRequestHandler("tasks/update", { params: UpdateParams }, async (params, sctx) => {
    const row = await settleTask(ctx, drivers, await taskOf(ctx, sctx, "tasks/update", params.taskId));
    const driver = drivers.get(row.driver);
    if (row.status !== "input_required" || !driver?.answer) return {};
    // Only the keys the task waits for count; others are acknowledged and ignored, as the extension says.
    const pending = JSON.parse(row.inputRequests) as Record<string, unknown>;
    const answered = Object.fromEntries(Object.entries(sctx.mcpReq.inputResponses ?? {}).filter(([key]) => Object.hasOwn(pending, key)));
    if (Object.keys(answered).length === 0) return {};
    const change = await driver.answer(ctx, row, JSON.parse(row.link) as Record<string, unknown>, answered);
    if (change) {
      const stored = await changeTask(ctx, row, change);
      if (stored.status === "working") await driver.resume?.(ctx, stored);
    }
    return {};
  });

  server.setRequestHandler("tasks/cancel", { params: GetParams }, async (params, sctx) => {
    const row = await taskOf(ctx, sctx, "tasks/cancel", params.taskId);
    if (TERMINAL.includes(row.status)) return {};
    try {
      await drivers.get(row.driver)?.cancel?.(ctx, row, JSON.parse(row.link) as Record<string, unknown>);
    } catch (err) {
      console.warn(`could not stop the work of task ${row.id} (${row.driver})`, err);
    }
    await cancelTask(ctx, row, "Cancelled by the client.");
    return {};
  });
}
