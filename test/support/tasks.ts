/**
 * Raw 2026-07-28 requests for the tasks extension (src/server/tasks): the Worker's own fetch, with
 * the conformance fixtures on (from loopback) or off, and the tasks' rows as D1 holds them.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach } from "vitest";
import worker from "../../src/index";
import { framesOf, type Frame, modernRequest } from "./modern";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** Client capabilities that declare the tasks extension. */
export const WITH_TASKS = { extensions: { [TASKS_EXTENSION]: {} } };

export type TaskFetch = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/**
 * The Worker's fetch, called with the test's env (so settings a test changes on it reach the
 * request), CONFORMANCE_FIXTURES "1" and a loopback caller when `fixtures`; what each request left
 * running after its response is awaited after each test.
 */
export function workerWithTasks(opts: { fixtures: boolean }): TaskFetch {
  const contexts: ExecutionContext[] = [];
  afterEach(async () => {
    for (const ctx of contexts.splice(0)) await waitOnExecutionContext(ctx);
  });
  return async (input, init) => {
    const request = new Request(input, init);
    if (opts.fixtures) request.headers.set("CF-Connecting-IP", "127.0.0.1");
    const ctx = createExecutionContext();
    contexts.push(ctx);
    return worker.fetch(request, opts.fixtures ? { ...env, CONFORMANCE_FIXTURES: "1" } : env, ctx);
  };
}

export interface RpcAnswer {
  status: number;
  body: Frame & { id?: unknown; error?: { code: number; message: string; data?: unknown } };
}

export interface RpcOptions {
  /** The Mcp-Name header: a tool's name for tools/call, the task id for tasks/*. */
  name?: string;
  /** The client capabilities the request's envelope declares (default: the tasks extension). */
  capabilities?: Record<string, unknown>;
  /** Headers beside the revision's own (Mcp-Param-*). */
  headers?: Record<string, string>;
  path?: string;
  id?: number;
}

/** One 2026-07-28 request and its last message (the answer). */
export async function rpc(fetch: TaskFetch, key: string, method: string, params: Record<string, unknown>, o: RpcOptions = {}): Promise<RpcAnswer> {
  const res = await fetch(`http://ledger.test${o.path ?? "/mcp"}`, modernRequest(key, method, params, { id: o.id ?? 1, name: o.name, headers: o.headers, capabilities: o.capabilities ?? WITH_TASKS }));
  const frames = await framesOf(res);
  return { status: res.status, body: frames.at(-1)! };
}

/** tasks/get, tasks/update or tasks/cancel on `taskId`, with the Mcp-Name header it needs. */
export const taskRpc = (fetch: TaskFetch, key: string, method: "tasks/get" | "tasks/update" | "tasks/cancel", taskId: string, extra: Record<string, unknown> = {}, o: RpcOptions = {}) =>
  rpc(fetch, key, method, { taskId, ...extra }, { name: taskId, ...o });

/** tools/call, with the Mcp-Name header it needs. */
export const callRpc = (fetch: TaskFetch, key: string, tool: string, args: Record<string, unknown>, o: RpcOptions = {}) =>
  rpc(fetch, key, "tools/call", { name: tool, arguments: args }, { name: tool, ...o });

export interface TaskRowSql {
  tenant_id: string;
  id: string;
  actor_id: string;
  tool: string;
  driver: string;
  link: string;
  status: string;
  status_message: string;
  input_requests: string;
  result: string | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  ttl_ms: number;
  poll_ms: number;
  expires_at: string;
}

/** A task's row, whoever owns it. */
export const taskRow = (id: string) => env.DB.prepare(`SELECT * FROM mcp_tasks WHERE id = ?`).bind(id).first<TaskRowSql>();

/** The task rows of a tenant. */
export async function taskRowsOf(tenantId: string): Promise<TaskRowSql[]> {
  return (await env.DB.prepare(`SELECT * FROM mcp_tasks WHERE tenant_id = ? ORDER BY id`).bind(tenantId).all<TaskRowSql>()).results;
}
