/**
 * The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) over HTTP on 2026-07-28, through
 * the conformance fixtures: negotiation per request, CreateTaskResult, tasks/get, tasks/update and
 * tasks/cancel, the -32021 refusal of a client that did not declare it, the methods v2 removed,
 * tasks kept to the actor that made them, header checks, and expiry.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { connectClient, seedIdentity, type TestIdentity } from "../support/helpers";
import { callRpc, rpc, type RpcAnswer, TASKS_EXTENSION, taskRow, taskRowsOf, taskRpc, workerWithTasks } from "../support/tasks";

const fetch = workerWithTasks({ fixtures: true });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAY_MS = 86_400_000;
/** The one _meta key the SDK stamps on every result. */
const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

/** A fixture tool called as a task: its CreateTaskResult, checked to be one. */
async function startTask(me: TestIdentity, tool: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown> & { taskId: string }> {
  const r = await callRpc(fetch, me.key, tool, args);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.result?.resultType, JSON.stringify(r.body)).toBe("task");
  return r.body.result as Record<string, unknown> & { taskId: string };
}

const get = (me: TestIdentity, taskId: string) => taskRpc(fetch, me.key, "tasks/get", taskId);
const cancel = (me: TestIdentity, taskId: string) => taskRpc(fetch, me.key, "tasks/cancel", taskId);

/** The result of an answer that must have succeeded. */
function resultOf(r: RpcAnswer): Record<string, any> {
  expect(r.body.error, JSON.stringify(r.body)).toBeUndefined();
  expect(r.status).toBe(200);
  return r.body.result!;
}

/** The error of an answer that must have failed with `code`. */
function errorOf(r: RpcAnswer, code: number): { code: number; message: string; data?: any } {
  expect(r.body.result, JSON.stringify(r.body)).toBeUndefined();
  expect(r.body.error?.code, JSON.stringify(r.body)).toBe(code);
  return r.body.error!;
}

/** tasks/get until the task leaves `working` (fixture tasks settle on a deadline), or fails after `ms`. */
async function settled(me: TestIdentity, taskId: string, ms = 5000): Promise<Record<string, any>> {
  const until = Date.now() + ms;
  for (;;) {
    const task = resultOf(await get(me, taskId));
    if (task.status !== "working" || Date.now() > until) return task;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An ack: resultType "complete" and the SDK's own _meta, nothing of the task (no taskId, status, result). */
function expectAck(r: RpcAnswer): void {
  const ack = resultOf(r);
  expect(ack.resultType).toBe("complete");
  const { resultType: _rt, _meta, ...rest } = ack;
  expect(rest).toEqual({});
  expect(Object.keys(_meta as object)).toEqual([SERVER_INFO]);
}

describe("negotiating the tasks extension", () => {
  it("is advertised by server/discover on 2026-07-28, and not to a 2025 session", async () => {
    const me = await seedIdentity("mcp-tasks-caps", "agent");
    const discover = resultOf(await rpc(fetch, me.key, "server/discover", {}));
    expect(discover.capabilities.extensions[TASKS_EXTENSION]).toEqual({});
    expect(discover.capabilities.tasks).toBeUndefined();
    expect(discover.capabilities.tools).toBeDefined();

    const { client } = await connectClient(me.key);
    const caps = client.getServerCapabilities()!;
    expect(caps.tools).toBeDefined();
    expect((caps as { extensions?: Record<string, unknown> }).extensions?.[TASKS_EXTENSION]).toBeUndefined();
    expect(caps.tasks).toBeUndefined();
    await client.close();
  });
});

describe("a task-supporting tool", () => {
  it("answers a CreateTaskResult to a client that declares the extension, with the row written first, and completes it", async () => {
    const me = await seedIdentity("mcp-tasks-create", "agent");
    const created = await startTask(me, "slow_compute", { seconds: 1, label: "sum" });
    // Besides the task: the SDK's own stamps, its serverInfo _meta and the empty content it gives every tools/call result.
    const { _meta, content, ...task } = created;
    expect(Object.keys(_meta as object)).toEqual([SERVER_INFO]);
    if (content !== undefined) expect(content).toEqual([]);
    expect(Object.keys(task).sort()).toEqual(["createdAt", "lastUpdatedAt", "pollIntervalMs", "resultType", "status", "taskId", "ttlMs"]);
    expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: DAY_MS, pollIntervalMs: 200 });
    expect(created.createdAt).toMatch(ISO);
    expect(created.lastUpdatedAt).toMatch(ISO);
    expect(Number.isInteger(created.ttlMs)).toBe(true);
    expect(Number.isInteger(created.pollIntervalMs)).toBe(true);

    const rows = await taskRowsOf(me.tenantId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: created.taskId, actor_id: me.actorId, tool: "slow_compute", driver: "conformance.fixture", status: "working", ttl_ms: DAY_MS, poll_ms: 200 });
    expect(Date.parse(rows[0]!.expires_at) - Date.parse(rows[0]!.created_at)).toBe(DAY_MS);

    // At once: the row is there before the answer leaves.
    const first = resultOf(await get(me, created.taskId));
    expect(first).toMatchObject({ resultType: "complete", taskId: created.taskId, status: "working", createdAt: created.createdAt, ttlMs: DAY_MS, pollIntervalMs: 200 });
    expect(first.result).toBeUndefined();
    expect(first.statusMessage).toMatch(/^due in \ds$/);

    const done = await settled(me, created.taskId);
    expect(done).toMatchObject({ resultType: "complete", taskId: created.taskId, status: "completed" });
    expect(done.result.content[0]).toEqual({ type: "text", text: "Computed sum after 1s." });
    expect(done.statusMessage).toBeUndefined();
    expect(done.error).toBeUndefined();
    expect(Date.parse(done.lastUpdatedAt)).toBeGreaterThanOrEqual(Date.parse(created.lastUpdatedAt as string));
    expect((await taskRow(created.taskId))!.status).toBe("completed");
  });

  it("answers a plain tool result to a client that does not declare it, writing no task", async () => {
    const me = await seedIdentity("mcp-tasks-sync", "agent");
    const r = resultOf(await callRpc(fetch, me.key, "slow_compute", { seconds: 0, label: "now" }, { capabilities: {} }));
    expect(r.resultType).toBe("complete");
    expect(r.content).toEqual([{ type: "text", text: "Computed now after 0s." }]);
    expect(r.taskId).toBeUndefined();
    expect(r.status).toBeUndefined();
    expect(await taskRowsOf(me.tenantId)).toEqual([]);
  });

  it("is cancelled by tasks/cancel, which acks with nothing of the task and may be sent again", async () => {
    const me = await seedIdentity("mcp-tasks-cancel", "agent");
    const created = await startTask(me, "slow_compute", { seconds: 60 });
    expectAck(await cancel(me, created.taskId));
    const after = resultOf(await get(me, created.taskId));
    expect(after).toMatchObject({ taskId: created.taskId, status: "cancelled", statusMessage: "Cancelled by the client." });
    expect(after.result).toBeUndefined();
    const stamped = (await taskRow(created.taskId))!.updated_at;

    expectAck(await cancel(me, created.taskId));
    expect(resultOf(await get(me, created.taskId)).status).toBe("cancelled");
    const row = (await taskRow(created.taskId))!;
    expect(row.status).toBe("cancelled");
    expect(row.updated_at).toBe(stamped);
  });
});

describe("a task-required tool", () => {
  it("refuses a client that does not declare the extension with 400 and -32021, writing nothing", async () => {
    const me = await seedIdentity("mcp-tasks-required", "agent");
    const r = await callRpc(fetch, me.key, "failing_job", {}, { capabilities: {} });
    expect(r.status).toBe(400);
    const error = errorOf(r, -32021);
    expect(error.data.requiredCapabilities.extensions[TASKS_EXTENSION]).toEqual({});
    expect(error.message).toContain("failing_job");
    expect(await taskRowsOf(me.tenantId)).toEqual([]);
  });
});

describe("the task methods", () => {
  it("refuse a client that does not declare the extension (-32021), an unknown task (-32602), and the removed methods (-32601)", async () => {
    const me = await seedIdentity("mcp-tasks-methods", "agent");
    const created = await startTask(me, "slow_compute", { seconds: 60 });
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"] as const) {
      const refused = errorOf(await taskRpc(fetch, me.key, method, created.taskId, {}, { capabilities: {} }), -32021);
      expect(refused.data.requiredCapabilities.extensions[TASKS_EXTENSION], method).toEqual({});
      expect(refused.message, method).toContain(method);
      errorOf(await taskRpc(fetch, me.key, method, "no-such-task"), -32602);
    }
    // None of the refused requests touched the task.
    expect((await taskRow(created.taskId))!.status).toBe("working");
    for (const method of ["tasks/result", "tasks/list"]) errorOf(await rpc(fetch, me.key, method, method === "tasks/result" ? { taskId: created.taskId } : {}, { name: created.taskId }), -32601);
  });

  it("keep a task to the actor that made it: another actor or tenant reads it as unknown and cannot cancel it", async () => {
    const owner = await seedIdentity("mcp-tasks-own", "owner");
    const colleague = await seedIdentity("mcp-tasks-own", "colleague");
    const stranger = await seedIdentity("mcp-tasks-other", "owner");
    expect(colleague.tenantId).toBe(owner.tenantId);
    expect(stranger.tenantId).not.toBe(owner.tenantId);
    const created = await startTask(owner, "slow_compute", { seconds: 60 });
    for (const who of [colleague, stranger]) {
      expect(errorOf(await get(who, created.taskId), -32602).message).toContain("Unknown task");
      errorOf(await cancel(who, created.taskId), -32602);
      errorOf(await taskRpc(fetch, who.key, "tasks/update", created.taskId, { inputResponses: { x: { action: "accept", content: {} } } }), -32602);
    }
    expect(resultOf(await get(owner, created.taskId)).status).toBe("working");
    expect((await taskRow(created.taskId))!.status).toBe("working");
  });

  it("take answers to pending input requests one by one, ignoring others", async () => {
    const me = await seedIdentity("mcp-tasks-input", "agent");
    const created = await startTask(me, "multi_input");
    expect(created.status).toBe("input_required");
    const asked = resultOf(await get(me, created.taskId));
    expect(asked.status).toBe("input_required");
    expect(Object.keys(asked.inputRequests).sort()).toEqual(["first", "second"]);
    expect(asked.inputRequests.first).toMatchObject({ method: "elicitation/create", params: { message: "First: your name?" } });

    const update = (inputResponses: Record<string, unknown>) => taskRpc(fetch, me.key, "tasks/update", created.taskId, { inputResponses });
    expectAck(await update({ first: { action: "accept", content: { name: "Ada" } } }));
    const half = resultOf(await get(me, created.taskId));
    expect(half.status).toBe("input_required");
    expect(Object.keys(half.inputRequests)).toEqual(["second"]);
    expect(half.inputRequests.second).toEqual(asked.inputRequests.second);

    // Keys the task does not wait for (one unknown, one answered already) are acknowledged and change nothing.
    const before = (await taskRow(created.taskId))!;
    expectAck(await update({ nope: { action: "accept", content: { name: "Eve" } } }));
    expectAck(await update({ first: { action: "accept", content: { name: "Mallory" } } }));
    expect(await taskRow(created.taskId)).toEqual(before);

    expectAck(await update({ second: { action: "accept", content: { name: "Grace", confirm: true } } }));
    const done = resultOf(await get(me, created.taskId));
    expect(done.status).toBe("completed");
    expect(done.inputRequests).toBeUndefined();
    expect(done.result.content).toEqual([{ type: "text", text: "Got: Ada, Grace." }]);
    expect((await taskRow(created.taskId))!.input_requests).toBe("{}");
  });

  it("refuse a tasks/get whose Mcp-Name names another task with 400 and -32020", async () => {
    const me = await seedIdentity("mcp-tasks-header", "agent");
    const created = await startTask(me, "slow_compute", { seconds: 60 });
    const r = await rpc(fetch, me.key, "tasks/get", { taskId: created.taskId }, { name: "some-other-task" });
    expect(r.status).toBe(400);
    errorOf(r, -32020);
    const missing = await rpc(fetch, me.key, "tasks/get", { taskId: created.taskId });
    expect(missing.status).toBe(400);
    errorOf(missing, -32020);
  });

  it("read an expired task as unknown", async () => {
    const me = await seedIdentity("mcp-tasks-expiry", "agent");
    const created = await startTask(me, "slow_compute", { seconds: 60 });
    expect(resultOf(await get(me, created.taskId)).status).toBe("working");
    await env.DB.prepare(`UPDATE mcp_tasks SET expires_at = ? WHERE id = ?`)
      .bind(new Date(Date.now() - 1000).toISOString(), created.taskId)
      .run();
    expect(errorOf(await get(me, created.taskId), -32602).message).toContain("has expired");
    errorOf(await cancel(me, created.taskId), -32602);
    expect((await taskRow(created.taskId))!.status).toBe("working");
  });
});
