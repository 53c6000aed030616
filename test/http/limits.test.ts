/** Limits at the HTTP edge (docs/limits.md): body sizes, bounded errors, JSON-RPC shape, rate limits. */
import { createExecutionContext, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { clearRateLimitSql, parseLimit, setRateLimitSql } from "../../src/auth/rate-limits";
import { decide, WINDOW_MS, type WindowState } from "../../src/durable/rate-limit";
import { MAX_MCP_BODY_BYTES } from "../../src/http/body";
import worker from "../../src/index";
import { seedIdentity, workerFetch } from "../support/helpers";

const MCP = "http://ledger.test/mcp";
const rpc = (method: string, params: unknown = {}, id: number | string = 1) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
const headers = (key: string, extra: Record<string, string> = {}) => ({
  "Content-Type": "application/json",
  Accept: "application/json, text/event-stream",
  Authorization: `Bearer ${key}`,
  ...extra,
});

type Rpc = { jsonrpc: "2.0"; id: unknown; result?: any; error?: { code: number; message: string; data?: any } };

/** Calls the worker in this isolate with `testEnv`, so a test can set vars and stream bodies without a Content-Length. */
async function direct(req: Request, testEnv: typeof env = env): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(req, testEnv, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/**
 * A streamed body of `total` bytes made on demand (so no Content-Length), counting what the server
 * pulled from it: a reader that stops at the limit pulls little more than the limit.
 */
function streamedBody(prefix: string, total: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= total) return controller.close();
      const next = pulled === 0 ? new TextEncoder().encode(prefix) : chunk;
      pulled += next.byteLength;
      controller.enqueue(next);
    },
  });
  return { stream, pulled: () => pulled };
}

describe("request body size", () => {
  it("refuses a 10 MB /mcp body by its Content-Length with a short 413, echoing nothing", async () => {
    const id = await seedIdentity("lim-big", "agent");
    const args: Record<string, string> = {};
    for (let i = 0; i < 450_000; i++) args[`key_number_${i}`] = "v";
    const body = rpc("tools/call", { name: "blame", arguments: args });
    expect(body.length).toBeGreaterThan(10_000_000);
    const res = await workerFetch(MCP, { method: "POST", headers: headers(id.key), body });
    expect(res.status).toBe(413);
    const text = await res.text();
    expect(text.length).toBeLessThan(1000);
    expect(text).not.toContain("key_number");
    const parsed = JSON.parse(text) as Rpc;
    expect(parsed.error!.code).toBe(-32000);
    expect(parsed.error!.message).toContain(String(MAX_MCP_BODY_BYTES));
    expect(parsed.error!.data).toMatchObject({ ok: false, error: { code: "payload_too_large", retryable: false, hint: expect.stringMatching(/\w/) } });
  });

  it("refuses a declared oversized body without reading it", async () => {
    const id = await seedIdentity("lim-declared", "agent");
    const endless = streamedBody("{", 8 * MAX_MCP_BODY_BYTES);
    const res = await direct(new Request(MCP, { method: "POST", headers: headers(id.key, { "Content-Length": String(MAX_MCP_BODY_BYTES + 1) }), body: endless.stream }));
    expect(res.status).toBe(413);
    // A stream may pre-fill its first chunk; nothing past that was asked for.
    expect(endless.pulled()).toBeLessThanOrEqual(64 * 1024);
  });

  it("cuts off a chunked /mcp body (no Content-Length) at the limit instead of buffering it", async () => {
    const id = await seedIdentity("lim-chunked", "agent");
    const endless = streamedBody(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"blame","arguments":{"entity_path":"`, 8 * MAX_MCP_BODY_BYTES);
    const req = new Request(MCP, { method: "POST", headers: headers(id.key), body: endless.stream });
    expect(req.headers.get("Content-Length")).toBeNull();
    const res = await direct(req);
    expect(res.status).toBe(413);
    expect(((await res.json()) as Rpc).error!.data.error.code).toBe("payload_too_large");
    expect(endless.pulled()).toBeGreaterThan(MAX_MCP_BODY_BYTES);
    expect(endless.pulled()).toBeLessThan(MAX_MCP_BODY_BYTES + 4 * 64 * 1024);
  });

  it("still serves a body just under the limit", async () => {
    const id = await seedIdentity("lim-under", "agent");
    const pad = "p".repeat(MAX_MCP_BODY_BYTES - 200);
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { pad } } });
    expect(body.length).toBeLessThanOrEqual(MAX_MCP_BODY_BYTES);
    const res = await workerFetch(MCP, { method: "POST", headers: headers(id.key), body });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Rpc).result.tools.length).toBeGreaterThan(0);
  });
});

describe("errors never echo large input", () => {
  it("bounds a tool error that lists unknown parameters from a body under the limit", async () => {
    const id = await seedIdentity("lim-echo", "agent");
    const args: Record<string, string> = {};
    for (let i = 0; i < 40_000; i++) args[`key_number_${i}`] = "v";
    const body = rpc("tools/call", { name: "blame", arguments: args });
    expect(body.length).toBeGreaterThan(500_000);
    expect(body.length).toBeLessThan(MAX_MCP_BODY_BYTES);
    const res = await workerFetch(MCP, { method: "POST", headers: headers(id.key), body });
    const text = await res.text();
    expect(text.length).toBeLessThan(5000);
    const parsed = JSON.parse(text) as Rpc;
    expect(parsed.result.isError).toBe(true);
    expect(parsed.result.structuredContent).toMatchObject({ ok: false, error: { code: "invalid_input" } });
  });

  it("quotes at most a short prefix of an unknown tool name or resource URI", async () => {
    const id = await seedIdentity("lim-quote", "agent");
    const long = "n".repeat(50_000);
    for (const body of [rpc("tools/call", { name: long, arguments: {} }), rpc("resources/read", { uri: `ledger://${long}` })]) {
      const res = await workerFetch(MCP, { method: "POST", headers: headers(id.key), body });
      const parsed = (await res.json()) as Rpc;
      expect(parsed.error, body.slice(0, 60)).toBeDefined();
      expect(parsed.error!.message.length).toBeLessThan(400);
      expect(parsed.error!.message).toContain("n".repeat(50));
      expect(parsed.error!.message).not.toContain("n".repeat(101));
    }
  });
});

describe("JSON-RPC shape", () => {
  const batch = JSON.stringify([
    { jsonrpc: "2.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "guide", arguments: {} } },
  ]);

  it("refuses a batch on 2025-06-18 and later with -32600 and HTTP 400, running none of it", async () => {
    const id = await seedIdentity("lim-batch", "agent");
    for (const revision of ["2025-06-18", "2025-11-25"]) {
      const res = await workerFetch(MCP, { method: "POST", headers: headers(id.key, { "MCP-Protocol-Version": revision }), body: batch });
      expect(res.status, revision).toBe(400);
      const body = (await res.json()) as Rpc;
      expect(body.error!.code).toBe(-32600);
      expect(body.error!.message).toContain(revision);
      expect(body.error!.data).toMatchObject({ ok: false, error: { code: "batch_not_supported", retryable: false, hint: expect.stringContaining("one JSON-RPC message per POST") } });
    }
    // The revision an initialize asks for counts when it has no header yet.
    const init = JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }]);
    expect((await workerFetch(MCP, { method: "POST", headers: headers(id.key), body: init })).status).toBe(400);
  });

  it("refuses a batch without a header when the session negotiated 2025-06-18", async () => {
    const id = await seedIdentity("lim-batch-session", "agent");
    const init = await workerFetch(MCP, {
      method: "POST",
      headers: headers(id.key),
      body: rpc("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }),
    });
    const sessionId = init.headers.get("Mcp-Session-Id")!;
    const res = await workerFetch(MCP, { method: "POST", headers: headers(id.key, { "Mcp-Session-Id": sessionId }), body: batch });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Rpc).error!.code).toBe(-32600);
  });

  it("still serves a batch on 2025-03-26 (named, or assumed without a header)", async () => {
    const id = await seedIdentity("lim-batch-old", "agent");
    for (const extra of [{ "MCP-Protocol-Version": "2025-03-26" }, {}] as Record<string, string>[]) {
      const res = await workerFetch(MCP, { method: "POST", headers: headers(id.key, extra), body: batch });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Rpc[];
      expect(body.map((m) => m.id).sort()).toEqual([1, 2]);
      expect(body.find((m) => m.id === 2)!.result.structuredContent).toMatchObject({ ok: true });
    }
  });

  it("refuses an empty batch and a malformed MCP-Protocol-Version without quoting it whole", async () => {
    const id = await seedIdentity("lim-batch-empty", "agent");
    const empty = await workerFetch(MCP, { method: "POST", headers: headers(id.key, { "MCP-Protocol-Version": "2025-03-26" }), body: "[]" });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as Rpc).error!.code).toBe(-32600);
    const bad = await workerFetch(MCP, { method: "POST", headers: headers(id.key, { "MCP-Protocol-Version": "v".repeat(5000) }), body: rpc("ping") });
    expect(bad.status).toBe(400);
    expect((await bad.text()).length).toBeLessThan(300);
  });

  it.each([
    ["a string", "entity_path=users.email"],
    ["a number", 42],
    ["an array", [{ entity_path: "users.email" }]],
    ["null", null],
  ])("answers tools/call with %s as arguments with -32602 naming `arguments`", async (kind, args) => {
    const id = await seedIdentity(`lim-args-${kind.replace(/\W/g, "")}`, "agent");
    const res = await workerFetch(MCP, { method: "POST", headers: headers(id.key), body: rpc("tools/call", { name: "blame", arguments: args }, "call-7") });
    const body = (await res.json()) as Rpc;
    expect(body.id).toBe("call-7");
    expect(body.error!.code).toBe(-32602);
    expect(body.error!.message).toContain("`arguments`");
    expect(body.error!.message).toContain(kind);
    expect(body.error!.data).toMatchObject({ ok: false, error: { code: "invalid_input", retryable: false } });
  });

  it("answers a bad tools/call inside a 2025-03-26 batch on its own, serving the rest", async () => {
    const id = await seedIdentity("lim-args-batch", "agent");
    const res = await workerFetch(MCP, {
      method: "POST",
      headers: headers(id.key, { "MCP-Protocol-Version": "2025-03-26" }),
      body: JSON.stringify([
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "guide", arguments: "nope" } },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "guide", arguments: {} } },
      ]),
    });
    const body = (await res.json()) as Rpc[];
    expect(body.find((m) => m.id === 1)!.error!.code).toBe(-32602);
    expect(body.find((m) => m.id === 2)!.result.structuredContent).toMatchObject({ ok: true });
  });
});

describe("rate limits: the sliding window", () => {
  const T0 = 1_800_000_000_000 - (1_800_000_000_000 % WINDOW_MS);

  it("lets `limit` requests through in a minute, refuses the next without counting it", () => {
    let s: WindowState = { start: 0, count: 0, previous: 0 };
    const verdicts = [];
    for (let i = 0; i < 5; i++) {
      const r = decide(s, 3, T0 + i * 1000);
      s = r.state;
      verdicts.push(r.verdict.allowed);
    }
    expect(verdicts).toEqual([true, true, true, false, false]);
    expect(s).toEqual({ start: T0, count: 3, previous: 0 });
  });

  it("weights the previous minute by how much of it still overlaps the last 60 seconds", () => {
    const full: WindowState = { start: T0, count: 3, previous: 0 };
    // Halfway into the next window, 1.5 of the previous 3 still count: one more fits under 3, not two.
    const a = decide(full, 3, T0 + WINDOW_MS + WINDOW_MS / 2);
    expect(a.verdict.allowed).toBe(true);
    expect(a.state).toEqual({ start: T0 + WINDOW_MS, count: 1, previous: 3 });
    expect(decide(a.state, 3, T0 + WINDOW_MS + WINDOW_MS / 2).verdict.allowed).toBe(false);
    // Two quiet windows later nothing is remembered.
    expect(decide(full, 3, T0 + 2 * WINDOW_MS + 1).state).toEqual({ start: T0 + 2 * WINDOW_MS, count: 1, previous: 0 });
  });

  it("names a Retry-After that is exactly when the next request would be let through", () => {
    for (const limit of [1, 2, 5, 60]) {
      for (const offset of [0, 1_000, 17_500, 59_000]) {
        for (const previous of [0, Math.ceil(limit / 2), limit]) {
          // Fill the window at `offset` until refused.
          let s: WindowState = { start: T0, count: 0, previous };
          const at = T0 + offset;
          let r = decide(s, limit, at);
          while (r.verdict.allowed) {
            s = r.state;
            r = decide(s, limit, at);
          }
          const wait = r.verdict.retryAfterSeconds;
          expect(wait).toBeGreaterThanOrEqual(1);
          expect(wait).toBeLessThanOrEqual(120);
          expect(decide(r.state, limit, at + wait * 1000).verdict.allowed, `limit ${limit} offset ${offset} previous ${previous}`).toBe(true);
          if (wait > 1) expect(decide(r.state, limit, at + (wait - 1) * 1000 - 1).verdict.allowed).toBe(false);
        }
      }
    }
  });
});

describe("rate limit counters", () => {
  it("keep a recent window through their alarm and clear themselves once two windows have passed", async () => {
    const stub = env.RATE_LIMITS.getByName(`test:${crypto.randomUUID()}`);
    expect(await stub.hit(5)).toMatchObject({ allowed: true, remaining: 4 });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.stored()).toMatchObject({ count: 1 });
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec("UPDATE counter SET start = start - ?", 3 * WINDOW_MS);
    });
    await runInDurableObject(stub, (_o, state) => state.storage.setAlarm(Date.now() + 60_000));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.stored()).toBeNull();
    expect(await stub.hit(5)).toMatchObject({ allowed: true, remaining: 4 });
  });
});

describe("rate limits over HTTP", () => {
  const ping = (key: string, testEnv: typeof env, body = rpc("ping")) => direct(new Request(MCP, { method: "POST", headers: headers(key), body }), testEnv);
  const keyIdOf = async (actorId: string) => (await env.DB.prepare("SELECT id FROM api_keys WHERE actor_id = ? ORDER BY created_at DESC LIMIT 1").bind(actorId).first<{ id: string }>())!.id;

  it("answers a key over its limit with 429, Retry-After and rate_limited, before reading the body; another tenant's key is unaffected", async () => {
    const testEnv = { ...env, RATE_LIMIT_KEY_PER_MIN: "3" };
    const a = await seedIdentity("rl-key-a", "agent");
    const b = await seedIdentity("rl-key-b", "agent");
    for (let i = 0; i < 3; i++) expect((await ping(a.key, testEnv)).status).toBe(200);
    // Not even parsed: a throttled caller's malformed body gets the 429, not a parse error.
    const res = await ping(a.key, testEnv, "{not json");
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get("Retry-After"));
    // A sliding window can ask for up to 80 s here: three requests early in a minute are still
    // weighted at 2/3 until 20 s into the next one.
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 2 * 60, `Retry-After ${retryAfter}`).toBe(true);
    const body = (await res.json()) as Rpc;
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } });
    expect(body.error!.message).toMatch(/Rate limited: this API key made more than 3 requests/);
    expect(body.error!.data).toEqual({
      ok: false,
      error: { code: "rate_limited", message: body.error!.message, hint: expect.stringContaining("Retry-After"), retryable: true, retry_after_seconds: retryAfter },
    });
    expect((await ping(b.key, testEnv)).status).toBe(200);
    // The SDK client sees an HTTP error carrying the same body.
    expect((await ping(a.key, testEnv)).status).toBe(429);
  });

  it("limits a tenant's keys together, leaving other tenants alone", async () => {
    const testEnv = { ...env, RATE_LIMIT_KEY_PER_MIN: "100", RATE_LIMIT_TENANT_PER_MIN: "4" };
    const k1 = await seedIdentity("rl-tenant", "one");
    const k2 = await seedIdentity("rl-tenant", "two");
    const other = await seedIdentity("rl-tenant-other", "one");
    for (const k of [k1, k1, k2, k2]) expect((await ping(k.key, testEnv)).status).toBe(200);
    const res = await ping(k2.key, testEnv);
    expect(res.status).toBe(429);
    expect(((await res.json()) as Rpc).error!.data.error.message).toContain("this tenant's keys together made more than 4 requests");
    expect((await ping(k1.key, testEnv)).status).toBe(429);
    expect((await ping(other.key, testEnv)).status).toBe(200);
  });

  it("applies a tenant's override (the operator command's SQL) over the vars, and 0 there turns a limit off", async () => {
    const strict = await seedIdentity("rl-override", "agent");
    await env.DB.prepare(setRateLimitSql(strict.tenantId, { keyPerMin: 2 })).run();
    for (let i = 0; i < 2; i++) expect((await ping(strict.key, env)).status).toBe(200);
    expect((await ping(strict.key, env)).status).toBe(429);

    const exempt = await seedIdentity("rl-override-off", "agent");
    await env.DB.prepare(setRateLimitSql(exempt.tenantId, { keyPerMin: 0, tenantPerMin: 0 })).run();
    const tight = { ...env, RATE_LIMIT_KEY_PER_MIN: "2", RATE_LIMIT_TENANT_PER_MIN: "2" };
    for (let i = 0; i < 5; i++) expect((await ping(exempt.key, tight)).status).toBe(200);
    // Clearing the override brings the vars back (for keys looked up afresh).
    await env.DB.prepare(clearRateLimitSql(exempt.tenantId)).run();
    const fresh = await seedIdentity("rl-override-off", "second");
    for (let i = 0; i < 2; i++) expect((await ping(fresh.key, tight)).status).toBe(200);
    expect((await ping(fresh.key, tight)).status).toBe(429);
  });

  it("does not count at all when the vars are 0", async () => {
    const off = { ...env, RATE_LIMIT_KEY_PER_MIN: "0", RATE_LIMIT_TENANT_PER_MIN: "0" };
    const id = await seedIdentity("rl-off", "agent");
    for (let i = 0; i < 8; i++) expect((await ping(id.key, off)).status).toBe(200);
    expect(await env.RATE_LIMITS.getByName(`key:${await keyIdOf(id.actorId)}`).stored()).toBeNull();
    expect(await env.RATE_LIMITS.getByName(`tenant:${id.tenantId}`).stored()).toBeNull();
    // The same traffic under a limit of 2 is refused: the 200s above are the 0 at work.
    const on = { ...env, RATE_LIMIT_KEY_PER_MIN: "2" };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await ping(id.key, on)).status);
    expect(statuses).toEqual([200, 200, 429]);
  });

  it("refuses an operator setting that is not a limit", () => {
    expect(() => parseLimit("--key-per-min", "-1")).toThrow(/whole number/);
    expect(() => parseLimit("--key-per-min", "1e3")).toThrow(/whole number/);
    expect(() => parseLimit("--key-per-min", "2000000")).toThrow(/whole number/);
    expect(parseLimit("--key-per-min", "default")).toBe("default");
    expect(() => setRateLimitSql("t", {})).toThrow(/--key-per-min/);
    expect(setRateLimitSql("t'; DROP TABLE tenants;--", { keyPerMin: 5 })).toContain("'t''; DROP TABLE tenants;--'");
  });
});
