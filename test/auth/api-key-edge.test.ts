/**
 * An agent's /mcp call with a known API key skips the OAuth provider's per-request routing
 * (src/edge.ts) and must be answered exactly as the provider would answer it; every other request
 * shape still goes through the provider.
 */
import { OAuthProvider } from "@cloudflare/workers-oauth-provider";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { seedIdentity, workerFetch, type TestIdentity } from "../support/helpers";

const HTTPS = "https://ledger.test/mcp";
const rpc = (method: string, params: unknown = {}) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
const initBody = rpc("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } });
const jsonHeaders = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

let agent: TestIdentity;
beforeAll(async () => {
  agent = await seedIdentity("edge-fast", "agent");
});
afterEach(() => vi.restoreAllMocks());

/** Sends one initialize and reports whether the provider saw it. */
async function initialize(url: string, authorization: string, extra: Record<string, string> = {}) {
  const provider = vi.spyOn(OAuthProvider.prototype, "fetch");
  const before = provider.mock.calls.length;
  const res = await workerFetch(url, { method: "POST", headers: { ...jsonHeaders, Authorization: authorization, ...extra }, body: initBody });
  return { res, viaProvider: provider.mock.calls.length > before };
}

async function whoamiAs(sessionId: string, url = HTTPS) {
  const res = await workerFetch(url, {
    method: "POST",
    headers: { ...jsonHeaders, Authorization: `Bearer ${agent.key}`, "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": "2025-06-18" },
    body: rpc("tools/call", { name: "whoami", arguments: {} }),
  });
  return (await res.json()) as { result: { structuredContent: { tenant_id?: string; actor?: { id?: string; name?: string } } } };
}

describe("an API-key call on /mcp", () => {
  it("is served without the provider, as the key's actor, with no CORS headers", async () => {
    const { res, viaProvider } = await initialize(HTTPS, `Bearer ${agent.key}`);
    expect(res.status).toBe(200);
    expect(viaProvider).toBe(false);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBeNull();
    const session = res.headers.get("Mcp-Session-Id")!;
    const who = JSON.stringify(await whoamiAs(session));
    expect(who).toContain(agent.actorId);
    expect(who).toContain(agent.tenantId);
  });

  it("sends an unknown key to the provider, which refuses it with its challenge", async () => {
    const { res, viaProvider } = await initialize(HTTPS, "Bearer alk_not-a-real-key");
    expect(viaProvider).toBe(true);
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="OAuth", resource_metadata="https:\/\/ledger\.test\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token"/);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 } });
  });

  it.each([
    ["the scheme in lower case", HTTPS, () => `bearer ${agent.key}`, {}, 200],
    ["a tab after the scheme", HTTPS, () => `Bearer\t${agent.key}`, {}, 200],
    ["a second value after a comma", HTTPS, () => `Bearer ${agent.key}, x`, {}, 401],
    ["plain http on a public host (answered as its https twin)", "http://ledger.test/mcp", () => `Bearer ${agent.key}`, {}, 200],
  ])("leaves %s to the provider, answered as before", async (_, url, auth, extra, status) => {
    const { res, viaProvider } = await initialize(url, auth(), extra);
    expect(viaProvider).toBe(true);
    expect(res.status).toBe(status);
  });

  it("leaves a browser's request from an allowed origin to the provider, which adds CORS headers", async () => {
    const loopback = "http://127.0.0.1:8787";
    const { res, viaProvider } = await initialize(`${loopback}/mcp`, `Bearer ${agent.key}`, { Origin: loopback });
    expect(viaProvider).toBe(true);
    expect(res.status).toBe(200);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe(loopback);
    const fast = await initialize(`${loopback}/mcp`, `Bearer ${agent.key}`);
    expect([fast.viaProvider, fast.res.status]).toEqual([false, 200]);
  });

  it("answers a key the provider also accepts the same way on both paths", async () => {
    const fast = await initialize(HTTPS, `Bearer ${agent.key}`);
    const slow = await initialize(HTTPS, `bearer ${agent.key}`);
    expect([fast.viaProvider, slow.viaProvider]).toEqual([false, true]);
    expect(fast.res.status).toBe(slow.res.status);
    const shape = async (r: Response) => {
      const body = (await r.json()) as { result: { protocolVersion: string; serverInfo: unknown; capabilities: unknown } };
      return { version: body.result.protocolVersion, server: body.result.serverInfo, capabilities: body.result.capabilities, type: r.headers.get("Content-Type") };
    };
    expect(await shape(fast.res)).toEqual(await shape(slow.res));
    expect(JSON.stringify(await whoamiAs(fast.res.headers.get("Mcp-Session-Id")!))).toContain(agent.actorId);
    expect(JSON.stringify(await whoamiAs(slow.res.headers.get("Mcp-Session-Id")!))).toContain(agent.actorId);
  });

  it("covers the paths below /mcp (agent hooks) and no other", async () => {
    const provider = vi.spyOn(OAuthProvider.prototype, "fetch");
    const hook = await workerFetch("https://ledger.test/mcp/hooks/claude-code", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${agent.key}` },
      body: JSON.stringify({ hook_event_name: "SessionStart", session_id: "s-edge-fast", cwd: "/repo" }),
    });
    expect(hook.status).toBe(200);
    expect(((await hook.json()) as { hookSpecificOutput?: { hookEventName?: string } }).hookSpecificOutput?.hookEventName).toBe("SessionStart");
    expect(provider).not.toHaveBeenCalled();
    const other = await workerFetch("https://ledger.test/mcpx", { method: "POST", headers: { Authorization: `Bearer ${agent.key}` } });
    expect(provider).toHaveBeenCalledTimes(1);
    expect(other.status).toBe(404);
  });
});
