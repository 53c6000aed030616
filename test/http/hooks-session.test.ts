/**
 * One run per session (docs/hooks.md): an MCP request carrying the client's own session id
 * (X-Agent-Session-Id, X-Claude-Code-Session-Id, Session-Id) maps it to the MCP session, so a hook
 * event naming it as `session_id` writes in that session and on its run; without a mapping the
 * hook's writes carry the client's id and no run. Mappings never cross tenants or actors, are
 * written once per session and client id, and bad header values are ignored.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sessionStub, type SessionDO, type SessionRecord } from "../../src/durable/session";
import { count, makeCtx, ok, seedIdentity, workerFetch } from "../support/helpers";

const MCP = "http://ledger.test/mcp";
const CWD = "/home/dev/api";
const REPO = "acme/api";

const rpc = (method: string, params: unknown = {}, id = 1) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
const mcpHeaders = (key: string, extra: Record<string, string> = {}) => ({
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
  Authorization: `Bearer ${key}`,
  ...extra,
});

/** A 2025-06-18 session opened with `headers` on its initialize; answers its Mcp-Session-Id. */
async function openSession(key: string, headers: Record<string, string> = {}): Promise<string> {
  const init = rpc("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "claude-code", version: "2" } });
  const res = await workerFetch(MCP, { method: "POST", headers: mcpHeaders(key, headers), body: init });
  expect(res.status).toBe(200);
  return res.headers.get("Mcp-Session-Id")!;
}

/** log_change called over /mcp in `session` (or stateless, with ""), with extra request headers. */
async function logOverMcp(key: string, session: string, entity: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await workerFetch(MCP, {
    method: "POST",
    headers: mcpHeaders(key, { ...(session ? { "Mcp-Session-Id": session } : {}), ...headers }),
    body: rpc("tools/call", { name: "log_change", arguments: { entity_path: entity, change_type: "modify", reasoning: `tool call on ${entity}` } }, 2),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result: { isError?: boolean } };
  expect(body.result.isError).toBeFalsy();
}

async function hook(key: string, event: Record<string, unknown>, query = `?repository=${REPO}&log_changes=1`, client = "claude-code"): Promise<Record<string, unknown>> {
  const res = await workerFetch(`http://ledger.test/mcp/hooks/${client}${query}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify(event),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

const postEdit = (session: string, file: string) => ({
  session_id: session,
  transcript_path: "/t.jsonl",
  cwd: CWD,
  hook_event_name: "PostToolUse",
  tool_name: "Edit",
  tool_input: { file_path: `${CWD}/${file}`, old_string: "a", new_string: "b" },
  tool_response: { success: true },
});

/** Codex's PostToolUse for an apply_patch updating `file` (developers.openai.com/codex/hooks). */
const codexPatch = (session: string, file: string) => ({
  session_id: session,
  transcript_path: null,
  cwd: CWD,
  hook_event_name: "PostToolUse",
  model: "gpt-5",
  turn_id: "turn_1",
  tool_name: "apply_patch",
  tool_use_id: "call_1",
  tool_input: { command: ["*** Begin Patch", `*** Update File: ${file}`, "@@", "-a", "+b", "*** End Patch"].join("\n") },
  tool_response: "Success.",
});

/** The session and run a change event of `entity` was logged with (its change.logged activity row's run). */
async function loggedWith(tenantId: string, entity: string): Promise<{ session_id: string; run_id: string | null }[]> {
  const rows = await env.DB.prepare(
    `SELECT e.session_id, a.run_id FROM events e JOIN activity a ON a.tenant_id = e.tenant_id AND a.object_id = e.id AND a.verb = 'change.logged'
     WHERE e.tenant_id = ? AND e.entity_path = ? ORDER BY e.timestamp`,
  )
    .bind(tenantId, entity)
    .all<{ session_id: string; run_id: string | null }>();
  return rows.results;
}

const mappings = (tenantId: string) =>
  env.DB.prepare("SELECT actor_id, client_session_id, mcp_session_id, seen_at FROM client_sessions WHERE tenant_id = ? ORDER BY client_session_id")
    .bind(tenantId)
    .all<{ actor_id: string; client_session_id: string; mcp_session_id: string; seen_at: string }>()
    .then((r) => r.results);

async function team() {
  const tenant = `hsess-${crypto.randomUUID().slice(0, 8)}`;
  const alice = await seedIdentity(tenant, "alice");
  const bob = await seedIdentity(tenant, "bob");
  await ok(makeCtx(alice), "repo_register", { slug: REPO });
  return { tenant, alice, bob };
}

describe("hooks: one run per session", () => {
  it("a PostToolUse hook naming the session's X-Claude-Code-Session-Id logs its change in the MCP session, on the run the tool calls use", async () => {
    const { alice } = await team();
    const client = `cc-${crypto.randomUUID()}`;
    const session = await openSession(alice.key, { "X-Claude-Code-Session-Id": client });
    await logOverMcp(alice.key, session, "src/by-tool.ts", { "X-Claude-Code-Session-Id": client });
    const [byTool] = await loggedWith(alice.tenantId, "src/by-tool.ts");
    expect(byTool).toMatchObject({ session_id: session, run_id: expect.any(String) });

    const answer = await hook(alice.key, postEdit(client, "src/by-hook.ts"));
    expect(answer).toMatchObject({ hookSpecificOutput: { additionalContext: "agent-ledger logged this edit of src/by-hook.ts as a change event." } });
    expect(await loggedWith(alice.tenantId, "src/by-hook.ts")).toEqual([{ session_id: session, run_id: byTool!.run_id }]);
    // One run for the whole session, and the run tools see the hook's change on it.
    expect(await count("SELECT COUNT(*) AS n FROM runs WHERE tenant_id = ? AND actor_id = ?", alice.tenantId, alice.actorId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND run_id = ? AND verb = 'change.logged'", alice.tenantId, byTool!.run_id)).toBe(2);
    // The edit note stays keyed by the client's id, which the Stop reminder reads.
    expect(await count("SELECT COUNT(*) AS n FROM hook_edits WHERE tenant_id = ? AND session_id = ?", alice.tenantId, client)).toBe(1);
  });

  it("a hook that writes first mints the session's run, and the agent's next tool call lands on it", async () => {
    const { alice } = await team();
    const client = `agent-${crypto.randomUUID()}`;
    const session = await openSession(alice.key, { "X-Agent-Session-Id": client });
    await hook(alice.key, postEdit(client, "src/first.ts"));
    await logOverMcp(alice.key, session, "src/second.ts");
    const [first] = await loggedWith(alice.tenantId, "src/first.ts");
    const [second] = await loggedWith(alice.tenantId, "src/second.ts");
    expect(first).toMatchObject({ session_id: session, run_id: expect.any(String) });
    expect(second).toEqual(first);
  });

  it("without a mapping the hook's change carries the client's session id and no run", async () => {
    const { alice } = await team();
    // A session that never sent its client id, and a client id no session carried.
    const session = await openSession(alice.key);
    await logOverMcp(alice.key, session, "src/tool.ts");
    await hook(alice.key, postEdit("cc-unmapped", "src/a.ts"));
    expect(await loggedWith(alice.tenantId, "src/a.ts")).toEqual([{ session_id: "cc-unmapped", run_id: null }]);
    expect(await mappings(alice.tenantId)).toEqual([]);
  });

  it("never maps another actor's or another tenant's hook to the session, with the same client session id", async () => {
    const { alice, bob } = await team();
    const stranger = await team();
    const client = `cc-${crypto.randomUUID()}`;
    const session = await openSession(alice.key, { "X-Claude-Code-Session-Id": client });
    await logOverMcp(alice.key, session, "src/tool.ts");
    await hook(bob.key, postEdit(client, "src/bob.ts"));
    await hook(stranger.alice.key, postEdit(client, "src/stranger.ts"));
    expect(await loggedWith(alice.tenantId, "src/bob.ts")).toEqual([{ session_id: client, run_id: null }]);
    expect(await loggedWith(stranger.alice.tenantId, "src/stranger.ts")).toEqual([{ session_id: client, run_id: null }]);
    // The other tenant's alice, mapping the same id to her own session, changes nothing for this alice.
    const theirs = await openSession(stranger.alice.key, { "X-Claude-Code-Session-Id": client });
    await hook(alice.key, postEdit(client, "src/mine.ts"));
    expect((await loggedWith(alice.tenantId, "src/mine.ts"))[0]!.session_id).toBe(session);
    expect((await mappings(stranger.alice.tenantId)).map((m) => m.mcp_session_id)).toEqual([theirs]);
  });

  it("writes the mapping once per session and client id, follows a new id, and forgets an ended session", async () => {
    const { alice } = await team();
    const session = await openSession(alice.key);
    // Codex's header, first seen on a later request.
    await logOverMcp(alice.key, session, "src/one.ts", { "Session-Id": "thr_1" });
    const [first] = await mappings(alice.tenantId);
    expect(first).toMatchObject({ actor_id: alice.actorId, client_session_id: "thr_1", mcp_session_id: session });
    await env.DB.prepare("UPDATE client_sessions SET seen_at = '2000-01-01T00:00:00.000Z' WHERE tenant_id = ?").bind(alice.tenantId).run();
    await logOverMcp(alice.key, session, "src/two.ts", { "Session-Id": "thr_1" });
    expect((await mappings(alice.tenantId))[0]!.seen_at).toBe("2000-01-01T00:00:00.000Z");

    // The session now carries another id: the old one no longer reaches it.
    await logOverMcp(alice.key, session, "src/three.ts", { "Session-Id": "thr_2" });
    expect((await mappings(alice.tenantId)).map((m) => m.client_session_id)).toEqual(["thr_1", "thr_2"]);
    await hook(alice.key, codexPatch("thr_1", "src/old-id.ts"), `?repository=${REPO}&log_changes=1`, "codex");
    expect(await loggedWith(alice.tenantId, "src/old-id.ts")).toEqual([{ session_id: "thr_1", run_id: null }]);
    await hook(alice.key, codexPatch("thr_2", "src/new-id.ts"), `?repository=${REPO}&log_changes=1`, "codex");
    expect((await loggedWith(alice.tenantId, "src/new-id.ts"))[0]!.session_id).toBe(session);

    const del = await workerFetch(MCP, { method: "DELETE", headers: mcpHeaders(alice.key, { "Mcp-Session-Id": session }) });
    expect(del.status).toBe(204);
    await hook(alice.key, postEdit("thr_2", "src/after-end.ts"));
    expect(await loggedWith(alice.tenantId, "src/after-end.ts")).toEqual([{ session_id: "thr_2", run_id: null }]);
  });

  it("ignores malformed header values and writes nothing for them; a stateless request maps to no session", async () => {
    const { alice } = await team();
    for (const bad of ["has space", "a/b", "x".repeat(129), "semi;colon", "comma,list"]) {
      const session = await openSession(alice.key, { "X-Agent-Session-Id": bad });
      await logOverMcp(alice.key, session, "src/bad.ts", { "X-Claude-Code-Session-Id": bad });
      const record = await runInDurableObject(sessionStub(env, session) as unknown as DurableObjectStub<SessionDO>, (_o, state) => state.storage.get<SessionRecord>("session"));
      expect(record?.clientSessionId, bad).toBeUndefined();
    }
    expect(await mappings(alice.tenantId)).toEqual([]);
    // A malformed value of ours does not hide a good one of the client's.
    const session = await openSession(alice.key, { "X-Agent-Session-Id": "no good", "X-Claude-Code-Session-Id": "cc.ok:1" });
    expect(await mappings(alice.tenantId)).toMatchObject([{ client_session_id: "cc.ok:1", mcp_session_id: session }]);

    const stateless = await workerFetch(MCP, {
      method: "POST",
      headers: mcpHeaders(alice.key, { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "log_change", "X-Agent-Session-Id": "modern-1" }),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "log_change",
          arguments: { entity_path: "src/modern.ts", change_type: "modify", reasoning: "stateless call" },
          _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} },
        },
      }),
    });
    expect(stateless.status).toBe(200);
    expect(await loggedWith(alice.tenantId, "src/modern.ts")).toEqual([{ session_id: "", run_id: null }]);
    expect((await mappings(alice.tenantId)).map((m) => m.client_session_id)).toEqual(["cc.ok:1"]);
    await hook(alice.key, postEdit("modern-1", "src/modern-hook.ts"));
    expect(await loggedWith(alice.tenantId, "src/modern-hook.ts")).toEqual([{ session_id: "modern-1", run_id: null }]);
  });

  it("refreshes the session's run heartbeat at Stop and PreCompact when it is due, and never mints one there", async () => {
    const { alice, bob } = await team();
    const client = `cc-${crypto.randomUUID()}`;
    const session = await openSession(alice.key, { "X-Claude-Code-Session-Id": client });
    // No run yet: a Stop mints nothing.
    await hook(alice.key, { session_id: client, cwd: CWD, hook_event_name: "Stop", stop_hook_active: false }, "");
    expect(await count("SELECT COUNT(*) AS n FROM runs WHERE tenant_id = ?", alice.tenantId)).toBe(0);

    await logOverMcp(alice.key, session, "src/tool.ts");
    const old = "2000-01-01T00:00:00.000Z";
    const age = async () => {
      await env.DB.prepare("UPDATE runs SET last_heartbeat_at = ? WHERE tenant_id = ?").bind(old, alice.tenantId).run();
      // Through the object, which keeps its record in memory as well as in storage.
      await runInDurableObject(sessionStub(env, session) as unknown as DurableObjectStub<SessionDO>, async (o, state) => {
        const record = (await state.storage.get<SessionRecord>("session"))!;
        await o.markRunHeartbeat({ ...record.run!, heartbeatAt: old });
      });
    };
    const heartbeat = () => env.DB.prepare("SELECT last_heartbeat_at AS at FROM runs WHERE tenant_id = ?").bind(alice.tenantId).first<{ at: string }>();

    await age();
    // Not a turn's end: the run is left alone.
    await hook(alice.key, { session_id: client, cwd: CWD, hook_event_name: "SessionStart", source: "resume" }, "");
    expect((await heartbeat())!.at).toBe(old);
    await hook(alice.key, { session_id: client, cwd: CWD, hook_event_name: "Stop", stop_hook_active: true }, "");
    expect((await heartbeat())!.at > old).toBe(true);
    await age();
    await hook(alice.key, { session_id: client, cwd: CWD, hook_event_name: "PreCompact", trigger: "auto" }, "");
    expect((await heartbeat())!.at > old).toBe(true);
    // Another actor's Stop with the same id touches nothing.
    await age();
    await hook(bob.key, { session_id: client, cwd: CWD, hook_event_name: "Stop", stop_hook_active: false }, "");
    expect((await heartbeat())!.at).toBe(old);
    expect(await count("SELECT COUNT(*) AS n FROM runs WHERE tenant_id = ?", alice.tenantId)).toBe(1);
  });
});
