/**
 * The 2026-07-28 protocol revision over HTTP, driven by the SDK's own v2 client: stateless calls
 * without a session, server/discover, caching hints, request ids on errors, input_required round
 * trips (accepted, declined, tampered state), and the 2025 revisions still served beside it.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import { describe, expect, it } from "vitest";
import { live, othersAttachment } from "../support/confirm-rig";
import { connectClient, makeCtx, ok, seedIdentity, workerFetch } from "../support/helpers";
import { framesOf, type Frame, modernRequest } from "../support/modern";

const MODERN = "2026-07-28";

type Answer = "yes" | "no" | "cancel";

async function modernClient(key: string, path: string, answer?: Answer) {
  const transport = new StreamableHTTPClientTransport(new URL(`http://ledger.test${path}`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: (input, init) => workerFetch(input, init),
  });
  const asked: string[] = [];
  const client = new Client(
    { name: "vitest-modern", version: "1.0.0" },
    {
      versionNegotiation: { mode: { pin: MODERN } },
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      ...(answer ? { capabilities: { elicitation: { form: {} } } } : {}),
    },
  );
  if (answer) {
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params.message);
      if (answer === "cancel") return { action: "cancel" };
      return { action: "accept", content: { confirm: answer === "yes" } };
    });
  }
  await client.connect(transport);
  return { client, asked };
}

async function rawModern(key: string, method: string, params: Record<string, unknown> = {}, id: number | string = 1, name?: string, path = "/mcp?toolsets=collab") {
  const res = await workerFetch(`http://ledger.test${path}`, modernRequest(key, method, params, { id, name }));
  const frames = await framesOf(res);
  return { status: res.status, body: frames.at(-1)! as Frame & { id: unknown }, frames };
}

describe("2026-07-28 over HTTP", () => {
  it("negotiates the current revision with server/discover and calls tools without a session", async () => {
    const me = await seedIdentity("modern-a", "agent");
    const { client } = await modernClient(me.key, "/mcp");
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain("whoami");
    const whoami = await client.callTool({ name: "whoami", arguments: {} });
    expect(whoami.isError).toBeFalsy();
    expect((whoami.structuredContent as { actor: { external_ref: string } }).actor.external_ref).toBe("agent");
    expect((whoami.structuredContent as { session_id: string }).session_id).toBe("");
    await client.close();
  });

  it("answers server/discover with the revisions it serves, and lists with caching hints", async () => {
    const me = await seedIdentity("modern-b", "agent");
    const discover = await rawModern(me.key, "server/discover", {}, 7);
    expect(discover.status).toBe(200);
    expect(discover.body.id).toBe(7);
    expect(discover.body.result?.supportedVersions).toContain(MODERN);
    const list = await rawModern(me.key, "tools/list", {}, 8);
    expect(list.body.result?.ttlMs).toBeGreaterThan(0);
    expect(list.body.result?.cacheScope).toBe("private");
    expect((list.body.result?.tools as unknown[]).length).toBeGreaterThan(0);
  });

  it("refuses a Mcp-Method header that contradicts the body, naming the request", async () => {
    const me = await seedIdentity("modern-c", "agent");
    const res = await workerFetch("http://ledger.test/mcp", {
      method: "POST",
      headers: { Authorization: `Bearer ${me.key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "req-9",
        method: "tools/list",
        params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} } },
      }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    const body = (await res.json()) as { id: unknown; error: { code: number } };
    expect(body.error.code).toBeLessThan(0);
    expect(body.id).toBe("req-9");
  });

  it("puts the request id on errors it answers itself (an unknown toolset)", async () => {
    const me = await seedIdentity("modern-d", "agent");
    const res = await workerFetch("http://ledger.test/mcp?toolsets=nope", {
      method: "POST",
      headers: { Authorization: `Bearer ${me.key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 42, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { id: unknown }).id).toBe(42);
  });

  it("serves a 2025-06-18 client: initialize negotiates it, and the session's calls carry it", async () => {
    const me = await seedIdentity("modern-f", "agent");
    const base = { Authorization: `Bearer ${me.key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    const init = await workerFetch("http://ledger.test/mcp", {
      method: "POST",
      headers: base,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "old", version: "1" } } }),
    });
    expect(init.status).toBe(200);
    expect(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe("2025-06-18");
    const session = init.headers.get("Mcp-Session-Id")!;
    expect(session).toBeTruthy();
    const call = await workerFetch("http://ledger.test/mcp", {
      method: "POST",
      headers: { ...base, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "whoami", arguments: {} } }),
    });
    const body = (await call.json()) as { id: number; result: { structuredContent: { ok: boolean; session_id: string } } };
    expect(body.id).toBe(2);
    expect(body.result.structuredContent).toMatchObject({ ok: true, session_id: session });
  });

  it("serves a 2025 client beside it, with a session", async () => {
    const me = await seedIdentity("modern-e", "agent");
    const { client, transport } = await connectClient(me.key);
    expect(transport.sessionId).toBeTruthy();
    const r = await client.callTool({ name: "whoami", arguments: {} });
    expect(r.isError).toBeFalsy();
    await client.close();
  });
});

describe("input_required: asking before removing another actor's record", () => {
  it("asks, and removes on a yes", async () => {
    const { a, b, attachmentId } = await othersAttachment("confirm-yes");
    const { client, asked } = await modernClient(b.key, "/mcp?toolsets=collab", "yes");
    const r = await client.callTool({ name: "attach_remove", arguments: { attachment_id: attachmentId } });
    expect(r.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("another actor added");
    expect(await live(makeCtx(a), attachmentId)).toBe(false);
  });

  it("asks, and changes nothing on a no or a cancel", async () => {
    const { a, b, attachmentId } = await othersAttachment("confirm-no");
    for (const answer of ["no", "cancel"] as const) {
      const { client, asked } = await modernClient(b.key, "/mcp?toolsets=collab", answer);
      const r = await client.callTool({ name: "attach_remove", arguments: { attachment_id: attachmentId } });
      expect(r.isError).toBe(true);
      expect((r.structuredContent as { error: { code: string } }).error.code).toBe("confirmation_declined");
      expect(asked).toHaveLength(1);
    }
    expect(await live(makeCtx(a), attachmentId)).toBe(true);
  });

  it("does not ask for one's own record; a client that cannot be asked needs confirm: true", async () => {
    const { a, b, attachmentId } = await othersAttachment("confirm-skip");
    const own = await modernClient(a.key, "/mcp?toolsets=collab", "no");
    const ctx = makeCtx(a);
    const project = (await ok(ctx, "project_query", {})).items as { id: string }[];
    const mine = await ok(ctx, "attach_add", { object_type: "project", object_id: project[0]!.id, kind: "link", url: "https://example.com/mine" });
    const r1 = await own.client.callTool({ name: "attach_remove", arguments: { attachment_id: (mine.attachment as { id: string }).id } });
    expect(r1.isError).toBeFalsy();
    expect(own.asked).toHaveLength(0);
    const mute = await modernClient(b.key, "/mcp?toolsets=collab");
    const refused = await mute.client.callTool({ name: "attach_remove", arguments: { attachment_id: attachmentId } });
    expect(refused.isError).toBe(true);
    expect((refused.structuredContent as { error: { code: string; hint: string } }).error).toMatchObject({ code: "confirmation_required", hint: expect.stringContaining("confirm: true") });
    expect(await live(makeCtx(a), attachmentId)).toBe(true);
    const r2 = await mute.client.callTool({ name: "attach_remove", arguments: { attachment_id: attachmentId, confirm: true } });
    expect(r2.isError).toBeFalsy();
    expect(await live(makeCtx(a), attachmentId)).toBe(false);
  });

  it("refuses tampered request state and state issued for another call, changing nothing", async () => {
    const { a, b, attachmentId } = await othersAttachment("confirm-tamper");
    const first = await rawModern(b.key, "tools/call", { name: "attach_remove", arguments: { attachment_id: attachmentId } }, 1, "attach_remove");
    expect(first.body.result?.resultType).toBe("input_required");
    const state = first.body.result?.requestState as string;
    expect(typeof state).toBe("string");
    const yes = { confirm_remove: { action: "accept", content: { confirm: true } } };
    const flipped = state.slice(0, -2) + (state.endsWith("AA") ? "BB" : "AA");
    const tampered = await rawModern(b.key, "tools/call", { name: "attach_remove", arguments: { attachment_id: attachmentId }, inputResponses: yes, requestState: flipped }, 2, "attach_remove");
    expect(tampered.body.error?.code).toBe(-32602);
    // Valid state, but minted for other arguments: an answer never approves a different operation.
    const other = await rawModern(b.key, "tools/call", { name: "attach_remove", arguments: { attachment_id: "att-other" }, inputResponses: yes, requestState: state }, 3, "attach_remove");
    expect(other.body.error?.code).toBe(-32602);
    // Another actor replaying bob's state is refused too (the state is bound to its caller).
    const replay = await rawModern(a.key, "tools/call", { name: "attach_remove", arguments: { attachment_id: attachmentId }, inputResponses: yes, requestState: state }, 4, "attach_remove");
    expect(replay.body.error?.code).toBe(-32602);
    expect(await live(makeCtx(a), attachmentId)).toBe(true);
    const good = await rawModern(b.key, "tools/call", { name: "attach_remove", arguments: { attachment_id: attachmentId }, inputResponses: yes, requestState: state }, 5, "attach_remove");
    expect(good.body.result?.isError).toBeFalsy();
    expect(await live(makeCtx(a), attachmentId)).toBe(false);
  });
});

describe("logging, icons and titles", () => {
  it("on 2026-07-28 sends a tool's warnings as log messages only to a request that set a logLevel", async () => {
    const me = await seedIdentity("logging-m", "agent");
    const args = (key: string) => ({ name: "project_create", arguments: { title: "Secrets", key, description: `password = "hunter2hunter2"` } });
    const quiet = await rawModern(me.key, "tools/call", args("LOGM"), 1, "project_create", "/mcp");
    expect(quiet.frames.filter((f) => f.method === "notifications/message")).toEqual([]);
    expect(quiet.body.result?.structuredContent).toMatchObject({ ok: true });
    const loud = await rawModern(me.key, "tools/call", { ...args("LOGN"), _meta: { "io.modelcontextprotocol/logLevel": "info" } }, 2, "project_create", "/mcp");
    expect(loud.frames.filter((f) => f.method === "notifications/message").map((f) => f.params)).toEqual([
      { level: "warning", logger: "agent-ledger", data: { tool: "project_create", warning: expect.stringContaining("secret assignment") } },
    ]);
    expect(loud.body).toMatchObject({ id: 2, result: { structuredContent: { ok: true } } });
  });

  it("sends a tool's warnings as log messages once a 2025 session sets its level, and not before", async () => {
    const { LoggingMessageNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
    const me = await seedIdentity("logging-a", "agent");
    const { client } = await connectClient(me.key);
    const messages: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
    const secretive = { title: "Secrets", description: `password = "hunter2hunter2"` };
    const quiet = await client.callTool({ name: "project_create", arguments: { ...secretive, key: "LOGA" } });
    expect((quiet.structuredContent as { warnings: string[] }).warnings).toHaveLength(1);
    expect(messages).toHaveLength(0);
    await client.setLoggingLevel("warning");
    await client.callTool({ name: "project_create", arguments: { ...secretive, key: "LOGB" } });
    expect(messages).toEqual([{ level: "warning", logger: "agent-ledger", data: { tool: "project_create", warning: expect.stringContaining("secret assignment") } }]);
    // A stricter level filters warnings out again.
    await client.setLoggingLevel("error");
    await client.callTool({ name: "project_create", arguments: { ...secretive, key: "LOGC" } });
    expect(messages).toHaveLength(1);
    await client.close();
  });

  it("names icons the server serves, on the server and (in full listings) on each tool", async () => {
    const me = await seedIdentity("icons-a", "agent");
    const { client } = await connectClient(me.key, "/mcp?schemas=full");
    const info = client.getServerVersion()!;
    expect(info.title).toBe("agent-ledger");
    // The canonical origin: plain http is kept only on loopback hosts (src/auth/oauth.ts).
    const src = info.icons![0]!.src;
    expect(src).toBe("https://ledger.test/icons/agent-ledger.svg");
    const svg = await workerFetch(src);
    expect(svg.status).toBe(200);
    expect(svg.headers.get("content-type")).toBe("image/svg+xml");
    expect(await svg.text()).toMatch(/^<svg /);
    const tools = await client.listTools();
    const whoami = tools.tools.find((t) => t.name === "whoami")!;
    expect(whoami.title).toBeTruthy();
    expect(whoami.icons![0]!.src).toBe("https://ledger.test/icons/toolset-identity.svg");
    expect((await workerFetch(whoami.icons![0]!.src)).status).toBe(200);
    expect((await workerFetch("https://ledger.test/icons/nope.svg")).status).toBe(404);
    await client.close();
  });
});

describe("prompts, completions, resources and skills over HTTP", () => {
  it("lists the workflow prompts, completes a template variable from the caller's tenant only, and answers an unknown resource with -32602", async () => {
    const mine = await othersAttachment("complete-a");
    await othersAttachment("complete-b"); // another tenant with a project of the same key prefix
    const { client } = await modernClient(mine.b.key, "/mcp");
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(prompts.slice(0, 3)).toEqual(["start_session", "prepare_handoff", "review_change"]);
    const done = await client.complete({ ref: { type: "ref/resource", uri: "ledger://project/{key}/brief" }, argument: { name: "key", value: "mo" } });
    expect(done.completion.values).toEqual(["MOD"]);
    const byPrompt = await client.complete({ ref: { type: "ref/prompt", name: "start_session" }, argument: { name: "project", value: "M" } });
    expect(byPrompt.completion.values).toEqual(["MOD"]);
    const brief = await client.readResource({ uri: "ledger://project/MOD/brief" });
    expect(JSON.parse((brief.contents[0] as { text: string }).text)).toMatchObject({ ok: true });
    await expect(client.readResource({ uri: "ledger://project/NOPE/brief" })).rejects.toMatchObject({ code: -32602 });
    await expect(client.readResource({ uri: "ledger://nothing" })).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it("serves the guide topics as skills (SEP-2640)", async () => {
    const me = await seedIdentity("skills-a", "agent");
    const listed = await rawModern(me.key, "skills/list", {}, 1);
    const skills = (listed.body.result?.skills ?? []) as { name: string }[];
    expect(skills.length).toBeGreaterThan(3);
    const list = await rawModern(me.key, "resources/list", {}, 2);
    const uris = (list.body.result?.resources as { uri: string }[]).map((r) => r.uri);
    expect(uris).toContain("ledger://guide");
    expect(uris.some((u) => u.startsWith("skill://agent-ledger/"))).toBe(true);
  });
});

describe("confirmation before a whole re-index", () => {
  it("asks before reindex_workspace touches anything, and a no is confirmation_declined", async () => {
    const { findTool } = await import("../../src/server/registry");
    const { callTool } = await import("../../src/core/call");
    const { InputNeeded } = await import("../../src/core/confirm");
    const me = await seedIdentity("confirm-reindex", "agent");
    const def = findTool("reindex_workspace")!;
    const args = { repo: "octocat/Hello-World" };
    // Asked first: nothing reaches GitHub (an unexpected outbound request would fail this test).
    await expect(callTool(def, { ...makeCtx(me), confirmer: { answer: () => "unanswered" } }, args)).rejects.toBeInstanceOf(InputNeeded);
    const declined = await callTool(def, { ...makeCtx(me), confirmer: { answer: () => "declined" } }, args);
    expect(declined.isError).toBe(true);
    expect((declined.structuredContent as { error: { code: string } }).error.code).toBe("confirmation_declined");
    // Without a confirmer (a client that cannot be asked) the call goes on to its own checks.
    const unasked = await callTool(def, makeCtx(me), args);
    expect((unasked.structuredContent as { error: { code: string } }).error.code).toBe("github_not_configured");
  });
});
