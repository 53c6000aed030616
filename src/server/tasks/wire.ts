/**
 * The tasks extension's wire (io.modelcontextprotocol/tasks, SEP-2663 on protocol revision
 * 2026-07-28): negotiation per request, CreateTaskResult and the DetailedTask tasks/get answers.
 */
import { CLIENT_CAPABILITIES_META_KEY, MissingRequiredClientCapabilityError, type ServerContext } from "@modelcontextprotocol/server";
import type { TaskRow } from "./store";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** Kept for a day: a client that stopped polling overnight still finds its result. */
export const TASK_TTL_MS = 24 * 60 * 60_000;

/** Whether this request's client declared the extension (in its per-request capabilities). */
export function declaresTasks(sctx: ServerContext): boolean {
  const caps = sctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY as keyof typeof sctx.mcpReq.envelope] as { extensions?: Record<string, unknown> } | undefined;
  const extensions = caps?.extensions;
  return typeof extensions === "object" && extensions !== null && Object.hasOwn(extensions, TASKS_EXTENSION);
}

/** -32021 naming the extension, in the shape of the capabilities the client would declare. */
export function tasksCapabilityMissing(what: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    `${what} needs the tasks extension: declare capabilities.extensions["${TASKS_EXTENSION}"] in the request's _meta clientCapabilities.`,
  );
}

/** The Task fields every task-bearing answer shares. */
function taskFields(row: TaskRow) {
  return {
    taskId: row.id,
    status: row.status,
    ...(row.statusMessage ? { statusMessage: row.statusMessage } : {}),
    createdAt: row.createdAt,
    lastUpdatedAt: row.updatedAt,
    ttlMs: row.ttlMs,
    pollIntervalMs: row.pollMs,
  };
}

/** tools/call's answer when it made a task: flat, with nothing of the result yet. */
export const createTaskResult = (row: TaskRow) => ({ resultType: "task" as const, ...taskFields(row) });

/** tasks/get's answer: the task, with what its status carries inlined (requests, result or error). */
export function detailedTask(row: TaskRow) {
  return {
    ...taskFields(row),
    ...(row.status === "input_required" ? { inputRequests: JSON.parse(row.inputRequests) as Record<string, unknown> } : {}),
    ...(row.status === "completed" && row.result !== null ? { result: JSON.parse(row.result) as Record<string, unknown> } : {}),
    ...(row.status === "failed" && row.error !== null ? { error: JSON.parse(row.error) as Record<string, unknown> } : {}),
  };
}
