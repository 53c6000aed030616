import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { IDENTITY_CACHE_MS, identityForKey } from "../../src/auth/identity";
import { provisionKey, revokeKeySql } from "../../src/auth/provision";
import { createDb } from "../../src/db/client";
import { connectClient, seedIdentity, workerFetch } from "../support/helpers";
import { ALL_TOOL_NAMES } from "../support/tool-names";

const MCP = "http://ledger.test/mcp";
const rpc = (method: string, params: unknown = {}, id = 1) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
const initBody = rpc("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } });
const headers = (key?: string, extra: Record<string, string> = {}) => ({
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
  ...(key ? { Authorization: `Bearer ${key}` } : {}),
  ...extra,
});

describe("HTTP surface", () => {
  it("answers /healthz without auth", async () => {
    const res = await workerFetch("http://ledger.test/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, service: "agent-ledger" });
  });

  it("refuses /mcp without a key, with a WWW-Authenticate challenge", async () => {
    const res = await workerFetch(MCP, { method: "POST", headers: headers(), body: initBody });
    expect(res.status).toBe(401);
    // The challenge names the protected-resource metadata, so an OAuth client can find where to sign in (RFC 9728).
    expect(res.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="OAuth", resource_metadata="https:\/\/ledger\.test\/\.well-known\/oauth-protected-resource\/mcp"/);
  });

  it("refuses unknown and revoked keys", async () => {
    const bad = await workerFetch(MCP, { method: "POST", headers: headers("alk_not-a-real-key"), body: initBody });
    expect(bad.status).toBe(401);
    const id = await seedIdentity("http-revoked", "agent");
    await env.DB.prepare("UPDATE api_keys SET revoked_at = '2026-01-01T00:00:00.000Z' WHERE actor_id = ?").bind(id.actorId).run();
    const revoked = await workerFetch(MCP, { method: "POST", headers: headers(id.key), body: initBody });
    expect(revoked.status).toBe(401);
  });

  it("caches a key's identity per isolate for at most IDENTITY_CACHE_MS after revocation", async () => {
    const id = await seedIdentity("http-cache", "agent");
    const db = createDb(env.DB);
    const t0 = Date.now();
    expect(await identityForKey(db, id.key, t0)).toMatchObject({ tenantId: id.tenantId, actorName: "agent" });
    await env.DB.prepare("UPDATE api_keys SET revoked_at = '2026-01-01T00:00:00.000Z' WHERE actor_id = ?").bind(id.actorId).run();
    expect(await identityForKey(db, id.key, t0 + 1000)).not.toBeNull();
    expect(await identityForKey(db, id.key, t0 + IDENTITY_CACHE_MS + 1)).toBeNull();
  });

  it("answers a cached key without hashing it again", async () => {
    const id = await seedIdentity("http-cache-digest", "agent");
    const db = createDb(env.DB);
    const digest = vi.spyOn(crypto.subtle, "digest");
    try {
      expect(await identityForKey(db, id.key)).toMatchObject({ tenantId: id.tenantId });
      expect(digest).toHaveBeenCalledTimes(1);
      expect(await identityForKey(db, id.key)).toMatchObject({ tenantId: id.tenantId });
      expect(digest).toHaveBeenCalledTimes(1);
      // Another key is its own entry: hashed and looked up, never answered from the first.
      expect(await identityForKey(db, `${id.key}x`)).toBeNull();
      expect(digest).toHaveBeenCalledTimes(2);
    } finally {
      digest.mockRestore();
    }
  });

  it("stores only the SHA-256 of a key", async () => {
    const id = await seedIdentity("http-hash", "agent");
    const rows = await env.DB.prepare("SELECT key_hash, prefix FROM api_keys WHERE actor_id = ?").bind(id.actorId).all<{ key_hash: string; prefix: string }>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows.results)).not.toContain(id.key);
  });

  it("guards against DNS rebinding: foreign Origin 403 (even when Host matches it), allowed, loopback-own or absent Origin passes", async () => {
    const id = await seedIdentity("http-origin", "agent");
    const evil = await workerFetch(MCP, { method: "POST", headers: headers(id.key, { Origin: "http://evil.example" }), body: initBody });
    expect(evil.status).toBe(403);
    const allowed = await workerFetch(MCP, { method: "POST", headers: headers(id.key, { Origin: "http://localhost:6274" }), body: initBody });
    expect(allowed.status).toBe(200);
    // Its own origin on a loopback host passes (a local page of the server's own)...
    const local = await workerFetch("http://127.0.0.1:8787/mcp", { method: "POST", headers: headers(id.key, { Origin: "http://127.0.0.1:8787" }), body: initBody });
    expect(local.status).toBe(200);
    // ...but "same as the Host header" proves nothing elsewhere: a rebinding page sets both.
    const rebound = await workerFetch("http://evil.example:8787/mcp", { method: "POST", headers: headers(id.key, { Origin: "http://evil.example:8787" }), body: initBody });
    expect(rebound.status).toBe(403);
    const same = await workerFetch(MCP, { method: "POST", headers: headers(id.key, { Origin: "http://ledger.test" }), body: initBody });
    expect(same.status).toBe(403);
    const none = await workerFetch(MCP, { method: "POST", headers: headers(id.key), body: initBody });
    expect(none.status).toBe(200);
  });

  it("issues a session on initialize, honours it, and ends it on DELETE", async () => {
    const id = await seedIdentity("http-session", "agent");
    const init = await workerFetch(MCP, { method: "POST", headers: headers(id.key), body: initBody });
    expect(init.status).toBe(200);
    const sessionId = init.headers.get("Mcp-Session-Id");
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);

    const list = await workerFetch(MCP, { method: "POST", headers: headers(id.key, { "Mcp-Session-Id": sessionId! }), body: rpc("tools/list", {}, 2) });
    expect(list.status).toBe(200);
    const body = (await list.json()) as { result: { tools: Array<{ name: string }> } };
    expect(body.result.tools.map((t) => t.name)).toContain("log_change");

    const del = await workerFetch(MCP, { method: "DELETE", headers: headers(id.key, { "Mcp-Session-Id": sessionId! }) });
    expect(del.status).toBe(204);
    const after = await workerFetch(MCP, { method: "POST", headers: headers(id.key, { "Mcp-Session-Id": sessionId! }), body: rpc("tools/list", {}, 3) });
    expect(after.status).toBe(404);
  });

  it("answers 404 for an unknown session id and for another tenant's session", async () => {
    const a = await seedIdentity("http-sess-a", "agent");
    const b = await seedIdentity("http-sess-b", "agent");
    const unknown = await workerFetch(MCP, { method: "POST", headers: headers(a.key, { "Mcp-Session-Id": crypto.randomUUID() }), body: rpc("tools/list") });
    expect(unknown.status).toBe(404);
    const init = await workerFetch(MCP, { method: "POST", headers: headers(a.key), body: initBody });
    const sessionId = init.headers.get("Mcp-Session-Id")!;
    const stolen = await workerFetch(MCP, { method: "POST", headers: headers(b.key, { "Mcp-Session-Id": sessionId }), body: rpc("tools/list") });
    expect(stolen.status).toBe(404);
    const stolenDelete = await workerFetch(MCP, { method: "DELETE", headers: headers(b.key, { "Mcp-Session-Id": sessionId }) });
    expect(stolenDelete.status).toBe(404);
    // The owner's session survived the attempt.
    const still = await workerFetch(MCP, { method: "POST", headers: headers(a.key, { "Mcp-Session-Id": sessionId }), body: rpc("tools/list") });
    expect(still.status).toBe(200);
  });

  it("answers GET /mcp with 405 and DELETE without a session with 400", async () => {
    const id = await seedIdentity("http-get", "agent");
    const get = await workerFetch(MCP, { method: "GET", headers: { ...headers(id.key), Accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    expect(get.headers.get("Allow")).toBe("POST, DELETE");
    const del = await workerFetch(MCP, { method: "DELETE", headers: headers(id.key) });
    expect(del.status).toBe(400);
  });

  it("rejects a body that is not JSON with a JSON-RPC parse error", async () => {
    const id = await seedIdentity("http-parse", "agent");
    const res = await workerFetch(MCP, { method: "POST", headers: headers(id.key), body: "{not json" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: -32700 } });
  });

  it("filters tools by toolset and read-only surface, and rejects unknown toolsets", async () => {
    const id = await seedIdentity("http-surface", "agent");
    const list = async (path: string, extra: Record<string, string> = {}) => {
      const res = await workerFetch(`http://ledger.test${path}`, { method: "POST", headers: headers(id.key, extra), body: rpc("tools/list") });
      return { status: res.status, body: (await res.json()) as { result?: { tools: Array<{ name: string; annotations: { readOnlyHint: boolean } }> } } };
    };
    const changes = await list("/mcp?toolsets=changes");
    expect(changes.body.result!.tools).toHaveLength(10); // the seed's eight, change_verify and mcp.echo
    const readonly = await list("/mcp?readonly=1");
    expect(readonly.body.result!.tools.map((t) => t.name)).not.toContain("log_change");
    expect(readonly.body.result!.tools.every((t) => t.annotations.readOnlyHint)).toBe(true);
    const header = await list("/mcp", { "X-MCP-Toolsets": "all" });
    expect(header.body.result!.tools.length).toBeGreaterThanOrEqual(8);
    const unknown = await list("/mcp?toolsets=nope");
    expect(unknown.status).toBe(400);
  });

  it("names the change ledger's tools as seed 000 does where the work ledger is absent, and takes the seed names as aliases beside it", async () => {
    const id = await seedIdentity("http-seed-names", "agent");
    const post = async (path: string, method: string, params: unknown = {}) => {
      const res = await workerFetch(`http://ledger.test${path}`, { method: "POST", headers: headers(id.key), body: rpc(method, params) });
      return (await res.json()) as { result?: { tools?: Array<{ name: string }>; structuredContent?: Record<string, unknown>; isError?: boolean }; error?: unknown };
    };
    const seedSurface = await post("/mcp?toolsets=changes", "tools/list");
    expect(seedSurface.result!.tools!.map((t) => t.name).sort()).toEqual(
      // The seed's eight tools under its names, and its `selvedge verify` command as `verify`.
      // mcp.echo is on every surface (seed 003: "always registered").
      ["blame", "changeset", "diff", "history", "log_change", "mcp.echo", "prior_attempts", "search", "stale_decisions", "verify"],
    );
    const logged = await post("/mcp?toolsets=changes", "tools/call", { name: "log_change", arguments: { entity_path: "users.email", change_type: "add", reasoning: "Needed for password resets" } });
    expect(logged.result!.structuredContent).toMatchObject({ ok: true });
    const searched = await post("/mcp?toolsets=changes", "tools/call", { name: "search", arguments: { query: "password resets" } });
    expect(searched.result!.structuredContent).toMatchObject({ ok: true, items: [{ entity_path: "users.email" }] });

    // Beside the work ledger the listing keeps the prefixed names (its own `search` is another tool)...
    const combined = (await post("/mcp", "tools/list")).result!.tools!.map((t) => t.name);
    expect(combined).toEqual(expect.arrayContaining(["change_diff", "change_history", "change_search", "search"]));
    expect(combined).not.toContain("diff");
    expect(combined).not.toContain("history");
    // ...and the seed's names still answer, as the same tools.
    const diffed = await post("/mcp", "tools/call", { name: "diff", arguments: { entity_path: "users" } });
    expect(diffed.result!.structuredContent).toMatchObject({ ok: true, items: [{ entity_path: "users.email" }] });
    const history = await post("/mcp", "tools/call", { name: "history", arguments: { since: "1h" } });
    expect(history.result!.structuredContent).toMatchObject({ ok: true, items: [{ entity_path: "users.email" }] });
    const workSearch = await post("/mcp", "tools/call", { name: "search", arguments: { q: "password" } });
    expect(workSearch.result!.structuredContent).toMatchObject({ ok: true, mode: expect.any(String) });
    // Without the work ledger's search toolset, `search` is the change ledger's.
    const noWorkSearch = await post("/mcp?toolsets=changes,tasks", "tools/call", { name: "search", arguments: { query: "password resets" } });
    expect(noWorkSearch.result!.structuredContent).toMatchObject({ ok: true, items: [{ entity_path: "users.email" }] });
  });

  it("keeps the default surface under 40 tools: the core rooms, with collab, repos and feedback opt-in", async () => {
    const id = await seedIdentity("http-default", "agent");
    const res = await workerFetch(MCP, { method: "POST", headers: headers(id.key), body: rpc("tools/list") });
    const names = ((await res.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name);
    expect(names.length).toBeLessThanOrEqual(40);
    for (const core of ["whoami", "guide", "log_change", "task_claim", "decision_log", "inbox"]) expect(names).toContain(core);
    for (const optIn of ["comment_add", "repo_register", "feature_request_create", "run_fork"]) expect(names).not.toContain(optIn);
  });

  it("calling a tool this server has off the surface answers the envelope naming its toolset and how to add it; an unknown name stays a protocol error", async () => {
    const id = await seedIdentity("http-outside", "agent");
    const callAt = async (path: string, name: string, args: unknown, extra: Record<string, string> = {}) => {
      const res = await workerFetch(`http://ledger.test${path}`, { method: "POST", headers: headers(id.key, extra), body: rpc("tools/call", { name, arguments: args }) });
      return (await res.json()) as {
        result?: { isError?: boolean; structuredContent: { ok: boolean; error: { code: string; message: string; hint: string; retryable: boolean } } };
        error?: { code: number };
      };
    };
    const offToolset = await callAt("/mcp", "comment_add", { object_type: "task", object_id: "x", body: "hi" });
    expect(offToolset.error).toBeUndefined();
    expect(offToolset.result!.isError).toBe(true);
    const e = offToolset.result!.structuredContent.error;
    expect(e).toMatchObject({ code: "tool_not_on_surface", retryable: false });
    expect(e.message).toContain("collab toolset");
    expect(e.hint).toContain("?toolsets=default,collab");
    expect(e.hint).toContain("X-MCP-Toolsets: default,collab");
    // Through the header, the hint builds on the toolsets already asked for.
    const viaHeader = await callAt("/mcp", "task_claim", {}, { "X-MCP-Toolsets": "changes" });
    expect(viaHeader.result!.structuredContent.error.hint).toContain("?toolsets=changes,tasks");
    const readonly = await callAt("/mcp?readonly=1", "log_change", { entity_path: "a", change_type: "add" });
    expect(readonly.result!.structuredContent.error.code).toBe("tool_not_on_surface");
    expect(readonly.result!.structuredContent.error.hint).toContain("readonly=1");
    const compact = await callAt("/mcp?mode=compact", "task_query", {});
    expect(compact.result!.structuredContent.error.hint).toContain('query with {"steps":[{"op":"task_query"');
    const unknown = await callAt("/mcp", "no_such_tool", {});
    expect(unknown.error).toMatchObject({ code: -32602 });
  });

  it("names in its instructions only the tools the connected surface can call, and how to add the rooms it lacks", async () => {
    const id = await seedIdentity("http-instructions", "agent");
    const instructions = async (path: string) => {
      const res = await workerFetch(`http://ledger.test${path}`, { method: "POST", headers: headers(id.key), body: initBody });
      return ((await res.json()) as { result: { instructions: string } }).result.instructions;
    };
    const listed = async (path: string) => {
      const res = await workerFetch(`http://ledger.test${path}`, { method: "POST", headers: headers(id.key), body: rpc("tools/list") });
      return new Set(((await res.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name));
    };
    // A tool name as a word: `search` inside `knowledge_search` is not the search tool.
    const named = (text: string) => ALL_TOOL_NAMES.filter((n) => new RegExp(`(^|[^a-z_])${n}([^a-z_]|$)`).test(text));
    for (const path of ["/mcp", "/mcp?toolsets=changes", "/mcp?readonly=1"]) {
      const text = await instructions(path);
      const tools = await listed(path);
      // A line that names how to add a toolset may name what that toolset holds; every other name is callable.
      const callable = text.split("\n").filter((line) => !line.includes("?toolsets="));
      for (const name of named(callable.join("\n"))) expect(tools.has(name), `${path}: ${name}`).toBe(true);
    }
    const dflt = await instructions("/mcp");
    expect(dflt).toContain("Call whoami first");
    expect(dflt).not.toContain("feature_request_create");
    expect(dflt).toContain("?toolsets=default,feedback");
    // The rooms whoami points at: the inbox is on the default surface; notifications and comments say how to add them.
    expect(await listed("/mcp")).toContain("inbox");
    const collabLine = dflt.split("\n").find((line) => line.includes("notification_query"));
    expect(collabLine).toContain("comment_query");
    expect(collabLine).toContain("?toolsets=default,collab");
    expect(collabLine).toContain("X-MCP-Toolsets: default,collab");
    const changes = await instructions("/mcp?toolsets=changes");
    expect(changes).toContain("log_change");
    expect(changes).not.toMatch(/whoami|task_claim|knowledge_search/);
    const readonly = await instructions("/mcp?readonly=1");
    expect(readonly).not.toMatch(/log_change|task_claim|decision_log|knowledge_write|whoami/);
    expect(readonly).toContain("prior_attempts");
  });

  it("serves the MCP SDK client end to end inside workerd", async () => {
    const id = await seedIdentity("http-sdk", "claude-code");
    const { client, transport } = await connectClient(id.key, "/mcp?toolsets=all");
    expect(transport.sessionId).toBeTruthy();
    expect(client.getServerVersion()?.name).toBe("agent-ledger");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(ALL_TOOL_NAMES);
    const logged = await client.callTool({ name: "log_change", arguments: { entity_path: "users.email", change_type: "add", reasoning: "Need email for password resets" } });
    expect(logged.isError).toBeFalsy();
    expect(logged.structuredContent).toMatchObject({ ok: true, status: "ok" });
    const blamed = await client.callTool({ name: "blame", arguments: { entity_path: "users.email" } });
    expect(blamed.structuredContent).toMatchObject({ ok: true, agent: "claude-code", session_id: transport.sessionId });
    const failed = await client.callTool({ name: "log_change", arguments: { entity_path: "x", change_type: "modfy" } });
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent).toMatchObject({ ok: false, error: { code: "invalid_input" } });
    await transport.terminateSession();
    await client.close();
  });

  it("ends a session that has been idle for a day when its alarm fires", async () => {
    const stub = env.SESSIONS.get(env.SESSIONS.idFromName(crypto.randomUUID()));
    const longAgo = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000).toISOString();
    await stub.open({ tenantId: "t", actorId: "a", createdAt: longAgo, protocolVersion: "2025-06-18", clientName: "x", clientVersion: "1" });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.touch()).toBeNull();

    const fresh = env.SESSIONS.get(env.SESSIONS.idFromName(crypto.randomUUID()));
    await fresh.open({ tenantId: "t", actorId: "a", createdAt: new Date().toISOString(), protocolVersion: "", clientName: "", clientVersion: "" });
    await runDurableObjectAlarm(fresh);
    expect(await fresh.touch()).toMatchObject({ tenantId: "t", actorId: "a" });
  });
});

describe("key provisioning (the keys command's SQL)", () => {
  it("refuses names that are not slugs, so nothing untrusted reaches the SQL", async () => {
    await expect(provisionKey("Acme Corp", "agent")).rejects.toThrow(/slug/);
    await expect(provisionKey("acme", "x'; DROP TABLE api_keys;--")).rejects.toThrow(/slug/);
    expect(() => revokeKeySql("alk_'--")).toThrow();
  });

  it("reuses the tenant and actor for a second key, and revokes by prefix", async () => {
    const first = await seedIdentity("keys-reuse", "agent");
    const second = await seedIdentity("keys-reuse", "agent");
    expect(second.actorId).toBe(first.actorId);
    expect(second.key).not.toBe(first.key);
    const prefix = second.key.slice(0, 10);
    await env.DB.prepare(revokeKeySql(prefix)).run();
    const db = createDb(env.DB);
    expect(await identityForKey(db, second.key, Date.now() + IDENTITY_CACHE_MS * 10)).toBeNull();
    expect(await identityForKey(db, first.key, Date.now() + IDENTITY_CACHE_MS * 10)).not.toBeNull();
  });
});

describe("derived idempotency keys (work-ledger writes without idempotency_key)", () => {
  const createProject = (key: string, sessionId: string | null, id: number, title = "Retry Safe") =>
    workerFetch(MCP, {
      method: "POST",
      headers: headers(key, sessionId ? { "Mcp-Session-Id": sessionId } : {}),
      body: rpc("tools/call", { name: "project_create", arguments: { title } }, id),
    }).then(async (r) => ((await r.json()) as { result: { structuredContent: Record<string, unknown> & { project: { id: string; key: string } } } }).result.structuredContent);

  it("replays an identical call under any JSON-RPC id, in a session and in stateless requests", async () => {
    const id = await seedIdentity("http-derived", "agent");
    const init = await workerFetch(MCP, { method: "POST", headers: headers(id.key), body: initBody });
    const sessionId = init.headers.get("Mcp-Session-Id")!;
    const first = await createProject(id.key, sessionId, 41);
    const retry = await createProject(id.key, sessionId, 42);
    expect(retry.project.id).toBe(first.project.id);
    expect(retry.idempotent_replay).toBe(true);
    // Two stateless requests (no session, different ids) carrying the same call: one write, then a replay.
    const a = await createProject(id.key, null, 1, "Stateless");
    const b = await createProject(id.key, null, 2, "Stateless");
    expect(a.idempotent_replay).toBeUndefined();
    expect(b).toMatchObject({ idempotent_replay: true, project: { id: a.project.id } });
    // Different arguments are a different call.
    const c = await createProject(id.key, null, 3, "Stateless Two");
    expect(c.idempotent_replay).toBeUndefined();
    expect(c.project.id).not.toBe(a.project.id);
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM projects WHERE tenant_id = ?").bind(id.tenantId).first<{ n: number }>();
    expect(rows!.n).toBe(3);
  });
});

describe("resources", () => {
  it("serves the guide as resources with the guide tool's text, and project briefs for the caller only", async () => {
    const a = await seedIdentity("res-a", "agent");
    const b = await seedIdentity("res-b", "agent");
    const { client } = await connectClient(a.key);
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain("ledger://guide");
    expect(listed.resources.map((r) => r.uri)).toContain("ledger://guide/the-loop");
    const templates = await client.listResourceTemplates();
    // Ours first; the guide's skills (SEP-2640) add their own template after them.
    expect(templates.resourceTemplates.map((t) => t.uriTemplate).slice(0, 3)).toEqual(["ledger://guide/{topic}", "ledger://project/{key}/brief", "ledger://repos/{owner}/{name}/presets"]);

    const index = await client.readResource({ uri: "ledger://guide" });
    const bare = await client.callTool({ name: "guide", arguments: {} });
    expect((index.contents[0] as { text: string }).text).toBe((bare.structuredContent as { text: string }).text);
    const loop = await client.readResource({ uri: "ledger://guide/the-loop" });
    const loopTool = await client.callTool({ name: "guide", arguments: { topic: "the-loop" } });
    expect((loop.contents[0] as { text: string }).text).toBe((loopTool.structuredContent as { text: string }).text);
    await expect(client.readResource({ uri: "ledger://guide/nope" })).rejects.toThrow(/not found/);

    await client.callTool({ name: "project_create", arguments: { title: "Resource Brief", key: "RB" } });
    const brief = await client.readResource({ uri: "ledger://project/RB/brief" });
    expect(JSON.parse((brief.contents[0] as { text: string }).text)).toMatchObject({ ok: true, project: { key: "RB" } });
    const other = await connectClient(b.key);
    await expect(other.client.readResource({ uri: "ledger://project/RB/brief" })).rejects.toThrow(/not found/);
    await other.client.close();

    // The presets resource is list_presets' envelope; a tenant without GitHub credentials gets that error as data.
    const presets = await client.readResource({ uri: "ledger://repos/octocat/Hello-World/presets" });
    expect(JSON.parse((presets.contents[0] as { text: string }).text)).toMatchObject({ ok: false, error: { code: "github_not_configured" } });
    await client.close();
  });
});
