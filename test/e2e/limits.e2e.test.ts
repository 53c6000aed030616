/** Limits at the edge through wrangler dev (docs/limits.md): body size and a rate limit set with the keys command. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, inject, it } from "vitest";

const baseUrl = inject("baseUrl");
const headers = (key: string) => ({ "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${key}` });

describe("limits over HTTP (wrangler dev)", () => {
  it("answers an oversized /mcp body with a short 413, declared or streamed", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "blame", arguments: { entity_path: "x".repeat(3 * 1024 * 1024) } } });
    const res = await fetch(`${baseUrl}/mcp`, { method: "POST", headers: headers(inject("keyB")), body: big });
    expect(res.status).toBe(413);
    const text = await res.text();
    expect(text.length).toBeLessThan(1000);
    expect(JSON.parse(text)).toMatchObject({ error: { code: -32000, data: { ok: false, error: { code: "payload_too_large" } } } });

    // Streamed without a Content-Length: refused once the bytes read pass the limit.
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 6 * 1024 * 1024) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const streamed = await fetch(`${baseUrl}/mcp`, { method: "POST", headers: headers(inject("keyB")), body: stream, duplex: "half" } as RequestInit);
    expect(streamed.status).toBe(413);
  });

  it("throttles a key held to a low limit by the keys command: the SDK client gets HTTP 429, the body carries rate_limited", async () => {
    const key = inject("limitedKey");
    const limit = inject("limitedKeyPerMin");
    const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
    const client = new Client({ name: "e2e-limits", version: "1.0.0" });
    // initialize and notifications/initialized are requests too.
    await client.connect(transport);
    let refused: unknown;
    let calls = 0;
    for (; calls < limit + 2 && !refused; calls++) {
      try {
        await client.callTool({ name: "guide", arguments: {} });
      } catch (err) {
        refused = err;
      }
    }
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(429);
    expect((refused as Error).message).toContain("rate_limited");
    expect(calls).toBeLessThanOrEqual(limit - 1);
    await client.close().catch(() => undefined);

    const raw = await fetch(`${baseUrl}/mcp`, { method: "POST", headers: headers(key), body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
    expect(raw.status).toBe(429);
    expect(Number(raw.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect(await raw.json()).toMatchObject({ error: { code: -32000, data: { ok: false, error: { code: "rate_limited", retryable: true } } } });

    // Other tenants keep the defaults.
    const other = await fetch(`${baseUrl}/mcp`, { method: "POST", headers: headers(inject("keyB")), body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
    expect(other.status).toBe(200);
  });

  it("counts a compact call's ops and batch items: the answer says what it counted, and a call costing more than the limit does nothing", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp?mode=compact`), { requestInit: { headers: { Authorization: `Bearer ${inject("keyB")}` } } });
    const client = new Client({ name: "e2e-limits-compact", version: "1.0.0" });
    await client.connect(transport);
    const read = await client.callTool({ name: "query", arguments: { steps: [{ op: "describe" }, { op: "describe" }, { op: "describe" }] } });
    expect((read.structuredContent as { rate_limit: { counted: number } }).rate_limit.counted).toBe(3);
    // The shape that once wrote 5,000 tasks in one unit: 50 ops of 100 tasks each is 50 × 91 units.
    const tasks = Array.from({ length: 100 }, (_, i) => ({ title: `t${i}` }));
    const operations = Array.from({ length: 50 }, () => ({ op: "task_create_many", params: { project_id: "NOPE", tasks } }));
    const refused = await client.callTool({ name: "execute", arguments: { operations } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ ok: false, error: { code: "rate_limited", retryable: false, message: expect.stringContaining("needs 4550 units") } });
    await client.close().catch(() => undefined);
  });
});
