/**
 * Compact mode end to end: the SDK client on /mcp?mode=compact against `wrangler dev` runs a
 * realistic turn of work — plan a task, claim it, log the change, hand off for review, then read
 * the state back — in two tool calls where the normal surface needs one call per step.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

type S = Record<string, any>;

describe("compact mode over HTTP (wrangler dev)", () => {
  let client: Client;
  beforeAll(async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${inject("baseUrl")}/mcp?mode=compact&toolsets=all`), {
      requestInit: { headers: { Authorization: `Bearer ${inject("keyA")}` } },
    });
    client = new Client({ name: "e2e-compact", version: "1.0.0" });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("claims a task, logs a change and hands off in one execute call, then reads it all back in one query", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["query", "execute", "session", "mcp.echo"]);
    const key = `C${Date.now().toString(36).toUpperCase().slice(-5)}`;
    let calls = 0;
    const call = async (name: string, args: Record<string, unknown>) => {
      calls++;
      return (await client.callTool({ name, arguments: args })).structuredContent as S;
    };
    const work = await call("execute", {
      operations: [
        { op: "project_create", params: { title: "Compact e2e", key } },
        { op: "task_create", params: { project_id: key, title: "Cache the tenant lookup" } },
        { op: "task_claim", params: { project_id: key } },
        { op: "log_change", params: { entity_path: "src/auth/tenant.ts::lookup", change_type: "modify", reasoning: "Cache the lookup: it ran on every request." } },
        { op: "handoff_create", params: { to_actor_ids: ["me"], title: `Review the ${key} cache`, kind: "review" } },
      ],
    });
    expect(work).toMatchObject({ ok: true, totalOps: 5, succeeded: 5, failed: 0 });
    const taskId = work.results[1].data.task.id;
    expect(work.results[2].data).toMatchObject({ claimed: true, task: { id: taskId } });

    const state = await call("query", {
      steps: [
        { op: "task_get", params: { task_id: taskId } },
        { op: "change_history", params: { entity_path: "src/auth/tenant.ts::lookup" } },
        { op: "handoff_query", params: {} },
      ],
    });
    expect(state).toMatchObject({ ok: true, totalSteps: 3, completedSteps: 3 });
    expect(state.steps[0].result.task.id).toBe(taskId);
    expect(JSON.stringify(state.steps[2].result)).toContain(`Review the ${key} cache`);
    // The normal surface needs a call per step: 5 writes and 3 reads.
    expect(calls).toBe(2);
    expect(calls).toBeLessThan(8);
  });
});
