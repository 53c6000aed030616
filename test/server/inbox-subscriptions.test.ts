/**
 * ledger://inbox as a subscribable resource: a 2026-07-28 client's subscriptions/listen stream and a
 * 2025 session's resources/subscribe (updates on its GET stream) hear when notices land for their
 * actor, and only for their actor; the resource reads the unread notices, overseer messages first.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { taskResourceUri } from "../../src/core/task-driver";
import { systemClock } from "../../src/core/time";
import { ringTaskFollowers } from "../../src/durable/inbox";
import { createTask } from "../../src/server/tasks/store";
import { connectClient, makeCtx, ok, seedIdentity, workerFetch } from "../support/helpers";

let n = 0;
async function team() {
  const tenant = `inbox-sub-${++n}-${crypto.randomUUID().slice(0, 6)}`;
  const boss = makeCtx(await seedIdentity(tenant, "pat", { operator: true }));
  const agent = await seedIdentity(tenant, "agent-7");
  const peer = await seedIdentity(tenant, "agent-8");
  return { boss, agent, peer };
}

async function modernClient(key: string) {
  const transport = new StreamableHTTPClientTransport(new URL("http://ledger.test/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: (input, init) => workerFetch(input, init),
  });
  const client = new Client({ name: "vitest-inbox", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(transport);
  return client;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends overseer messages until `heard` grows (the listener may still be connecting), at most `tries` times. */
async function untilHeard(heard: string[], send: () => Promise<unknown>, tries = 25): Promise<number> {
  const before = heard.length;
  for (let i = 0; i < tries; i++) {
    await send();
    for (let w = 0; w < 10 && heard.length === before; w++) await sleep(20);
    if (heard.length > before) return i + 1;
  }
  throw new Error("no notifications/resources/updated arrived");
}

const tell = (boss: ReturnType<typeof makeCtx>, to: string, message: string) => () => ok(boss, "overseer_message", { to: [to], message });

describe("ledger://inbox", () => {
  it("is listed and reads your unread notices, overseer messages first", async () => {
    const { boss, agent } = await team();
    await ok(boss, "overseer_message", { to: ["agent-7"], message: "Stop and read DEC-12." });
    const { client } = await connectClient(agent.key);
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain("ledger://inbox");
    const read = await client.readResource({ uri: "ledger://inbox" });
    const body = JSON.parse((read.contents[0] as { text: string }).text) as { ok: boolean; items: { kind: string; summary: string }[]; unread_count: number };
    expect(body).toMatchObject({ ok: true, unread_count: 1, items: [{ kind: "overseer", summary: "Stop and read DEC-12." }] });
    await client.close();
  });

  it("wakes a 2026-07-28 subscriptions/listen stream when notices land for its actor, and not for another's", async () => {
    const { boss, agent, peer } = await team();
    const client = await modernClient(agent.key);
    const heard: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (n) => void heard.push(n.params.uri));
    const sub = await client.listen({ resourceSubscriptions: ["ledger://inbox"] });
    await untilHeard(heard, tell(boss, "agent-7", "Pause the deploy."));
    expect(heard.every((u) => u === "ledger://inbox")).toBe(true);
    // Another actor's news rings another bell.
    const count = heard.length;
    await ok(boss, "overseer_message", { to: ["agent-8"], message: "Not for agent-7." });
    await sleep(300);
    expect(heard.length).toBe(count);
    // A later notice of any kind rings again.
    const peerCtx = makeCtx(peer);
    const project = (await ok(peerCtx, "project_create", { title: "API", key: "API" })).project as { id: string };
    await untilHeard(heard, () => ok(peerCtx, "comment_add", { object_type: "project", object_id: project.id, body: "@agent-7 see this", mentions: ["agent-7"] }));
    await sub.close();
    await client.close();
  });

  it("wakes a 2025 session's GET stream after resources/subscribe, and stops after unsubscribe", async () => {
    const { boss, agent } = await team();
    const heard: string[] = [];
    const { client } = await connectClient(agent.key, "/mcp", {}, (c) => c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void heard.push(n.params.uri)));
    await client.subscribeResource({ uri: "ledger://inbox" });
    await untilHeard(heard, tell(boss, "agent-7", "Pause."));
    expect(heard[0]).toBe("ledger://inbox");
    await client.unsubscribeResource({ uri: "ledger://inbox" });
    const count = heard.length;
    await ok(boss, "overseer_message", { to: ["agent-7"], message: "Unheard." });
    await sleep(300);
    expect(heard.length).toBe(count);
    await client.close();
  });

  it("refuses subscribing to anything else, and a session-less GET", async () => {
    const { agent } = await team();
    const { client } = await connectClient(agent.key);
    await expect(client.subscribeResource({ uri: "ledger://guide" })).rejects.toThrow(/cannot be subscribed to; ledger:\/\/inbox can/);
    await client.close();
    const get = await workerFetch("http://ledger.test/mcp", { method: "GET", headers: { Authorization: `Bearer ${agent.key}`, Accept: "text/event-stream" } });
    expect(get.status).toBe(405);
  });

  it("rings a task's resource on a listen stream subscribed to it when the work it follows moves, and reads the task", async () => {
    const { agent, peer } = await team();
    const mine = await createTask(makeCtx(agent, systemClock), { tool: "index_workspace", driver: "code.index", link: { index_id: "ix-1", job_id: "job-1" }, ttlMs: 60_000, pollMs: 5000 });
    const theirs = await createTask(makeCtx(peer, systemClock), { tool: "index_workspace", driver: "code.index", link: { index_id: "ix-2", job_id: "job-2" }, ttlMs: 60_000, pollMs: 5000 });
    const client = await modernClient(agent.key);
    const heard: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (n) => void heard.push(n.params.uri));
    const sub = await client.listen({ resourceSubscriptions: ["ledger://inbox", taskResourceUri(mine.id)] });
    await untilHeard(heard, () => ringTaskFollowers(env, agent.tenantId, "code.index", "index_id", "ix-1"));
    expect(new Set(heard)).toEqual(new Set([taskResourceUri(mine.id)]));
    // Another index's work, and another actor's task, ring nothing here.
    const count = heard.length;
    await ringTaskFollowers(env, agent.tenantId, "code.index", "index_id", "ix-2");
    await ringTaskFollowers(env, agent.tenantId, "review.session", "index_id", "ix-1");
    await sleep(300);
    expect(heard.length).toBe(count);
    // Read, the resource is the task as tasks/get answers it: its index is gone, so the task ended.
    const read = await client.readResource({ uri: taskResourceUri(mine.id) });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ taskId: mine.id, status: "cancelled" });
    await expect(client.readResource({ uri: taskResourceUri(theirs.id) })).rejects.toThrow(/no such task of yours/);
    await sub.close();
    await client.close();
  });

  it("keeps a 2025 session's GET stream to the inbox: a task's ring is not sent there", async () => {
    const { boss, agent } = await team();
    await createTask(makeCtx(agent, systemClock), { tool: "index_workspace", driver: "code.index", link: { index_id: "ix-9", job_id: "job-9" }, ttlMs: 60_000, pollMs: 5000 });
    const heard: string[] = [];
    const { client } = await connectClient(agent.key, "/mcp", {}, (c) => c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void heard.push(n.params.uri)));
    await client.subscribeResource({ uri: "ledger://inbox" });
    await untilHeard(heard, tell(boss, "agent-7", "Ready?"));
    const count = heard.length;
    await ringTaskFollowers(env, agent.tenantId, "code.index", "index_id", "ix-9");
    await sleep(300);
    expect(heard.length).toBe(count);
    await client.close();
  });
});
