/**
 * Background MCP tasks (src/server/tasks/background.ts) over HTTP on 2026-07-28: requests to the
 * Worker with the test's env, and polling tasks/get while the tool-tasks queue runs the call.
 */
import { expect } from "vitest";
import type { Frame } from "./modern";
import { rpc as send, TASKS_EXTENSION, workerWithTasks } from "./tasks";

export { taskRowsOf } from "./tasks";

/** Client capabilities declaring the tasks extension, and form elicitation when `elicits`. */
export const tasksCapabilities = (elicits = false): Record<string, unknown> => ({
  ...(elicits ? { elicitation: { form: {} } } : {}),
  extensions: { [TASKS_EXTENSION]: {} },
});

export type Answer = Frame & { error?: { code: number; message: string; data?: unknown } };

export interface Caller {
  /** One 2026-07-28 request on `path`: its last message (the answer). */
  rpc(key: string, method: string, params: Record<string, unknown>, o?: { name?: string; capabilities?: Record<string, unknown>; headers?: Record<string, string> }): Promise<Answer>;
  /** tools/call of `tool`, declaring `capabilities` (default: the tasks extension without elicitation), with `headers` beside the revision's (Mcp-Param-*). */
  call(key: string, tool: string, args: Record<string, unknown>, o?: { capabilities?: Record<string, unknown>; headers?: Record<string, string> }): Promise<Answer>;
  /** tasks/get, tasks/update or tasks/cancel on `taskId` (with the tasks extension declared). */
  task(key: string, method: "tasks/get" | "tasks/update" | "tasks/cancel", taskId: string, extra?: Record<string, unknown>): Promise<Answer>;
}

/**
 * Requests to the Worker on `path`, with the test's env (settings a test assigns to it reach the
 * request); what each request left running after its answer is awaited after each test.
 */
export function taskCaller(path: string): Caller {
  const fetch = workerWithTasks({ fixtures: false });
  const rpc: Caller["rpc"] = async (key, method, params, o = {}) => (await send(fetch, key, method, params, { ...o, path, capabilities: o.capabilities ?? tasksCapabilities() })).body as Answer;
  return {
    rpc,
    call: (key, tool, args, o = {}) => rpc(key, "tools/call", { name: tool, arguments: args }, { name: tool, ...o }),
    task: (key, method, taskId, extra = {}) => rpc(key, method, { taskId, ...extra }, { name: taskId }),
  };
}

/** The result of an answer that must have succeeded. */
export function resultOf(a: Answer): Record<string, any> {
  expect(a.error, JSON.stringify(a)).toBeUndefined();
  return a.result!;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** tasks/get until `done` holds of the task, for at most `ms`; the last task read when it never does. */
export async function pollTask(caller: Caller, key: string, taskId: string, done: (task: Record<string, any>) => boolean, ms = 20_000): Promise<Record<string, any>> {
  const until = Date.now() + ms;
  for (;;) {
    const task = resultOf(await caller.task(key, "tasks/get", taskId));
    if (done(task) || Date.now() > until) return task;
    await sleep(100);
  }
}

/** tasks/get until the task is no longer working. */
export const untilSettled = (caller: Caller, key: string, taskId: string, ms?: number) => pollTask(caller, key, taskId, (t) => t.status !== "working", ms);
