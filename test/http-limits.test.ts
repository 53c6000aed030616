/** Limits at the HTTP edge (README: Limits): body sizes, bounded errors, JSON-RPC shape, rate limits. */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_MCP_BODY_BYTES } from "../src/http/body";
import worker from "../src/index";
import { seedIdentity, workerFetch } from "./helpers";

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
      method: "POST", headers: headers(id.key),
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
      method: "POST", headers: headers(id.key, { "MCP-Protocol-Version": "2025-03-26" }),
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
