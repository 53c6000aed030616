/**
 * Server-Timing for the benchmarks (src/core/timing.ts): with BENCH_ROUTES=1 an MCP call that asks
 * gets an answer naming its phases; without it (every real deployment) no answer carries timings, and the answer
 * itself is the same either way.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { addTiming, TIMINGS_HEADER, timed, withTimings } from "../../src/core/timing";
import { seedIdentity } from "../support/helpers";

const call = (key: string, id: number, name: string, args: Record<string, unknown>, asks = true) =>
  new Request("https://ledger.test/mcp", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${key}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-06-18",
      ...(asks ? { [TIMINGS_HEADER]: "1" } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }),
  });

async function send(request: Request, vars: Record<string, string>) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, { ...env, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

const phases = (header: string | null) => (header ?? "").split(",").map((p) => p.trim().split(";")[0]);

describe("Server-Timing", () => {
  it("names an MCP write's phases with BENCH_ROUTES=1, and nothing without it; the answers match", async () => {
    const me = await seedIdentity("timing", "ada");
    const timedAnswer = await send(call(me.key, 1, "log_change", { entity_path: "timing.a", change_type: "add", reasoning: "Timed" }), { BENCH_ROUTES: "1" });
    expect(timedAnswer.status).toBe(200);
    const header = timedAnswer.headers.get("Server-Timing");
    expect(phases(header)).toEqual(expect.arrayContaining(["edge", "caller", "parse", "build", "dispatch", "validate", "pay", "idempotency", "run", "envelope", "total"]));
    for (const part of header!.split(",")) expect(part.trim()).toMatch(/^[a-z]+;dur=\d+\.\d{3}$/);
    const plain = await send(call(me.key, 2, "log_change", { entity_path: "timing.b", change_type: "add", reasoning: "Not timed" }), {});
    expect(plain.headers.get("Server-Timing")).toBeNull();
    // The benchmark routes on, but the request does not ask: no record is kept.
    const unasked = await send(call(me.key, 3, "log_change", { entity_path: "timing.c", change_type: "add", reasoning: "Not asked" }, false), { BENCH_ROUTES: "1" });
    expect(unasked.status).toBe(200);
    expect(unasked.headers.get("Server-Timing")).toBeNull();
    const [a, b] = [(await timedAnswer.json()) as { result: { structuredContent: Record<string, unknown> } }, (await plain.json()) as { result: { structuredContent: Record<string, unknown> } }];
    expect(Object.keys(a.result.structuredContent).sort()).toEqual(Object.keys(b.result.structuredContent).sort());
    expect(a.result.structuredContent.ok).toBe(true);
  });

  it("times nothing outside an open record, and sums a phase's repeats inside one", async () => {
    expect(await timed("x", async () => 7)).toBe(7);
    addTiming("x", 5);
    const response = await withTimings(true, async () => {
      addTiming("run", 1.25);
      addTiming("run", 0.5);
      await timed("io", () => new Promise((r) => setTimeout(r, 5)));
      return new Response("ok", { headers: { "X-Kept": "1" } });
    });
    expect(response.headers.get("X-Kept")).toBe("1");
    expect(await response.text()).toBe("ok");
    const header = response.headers.get("Server-Timing")!;
    expect(header).toMatch(/^run;dur=1\.750, io;dur=\d+\.\d{3}, total;dur=\d+\.\d{3}$/);
    expect((await withTimings(false, async () => new Response("plain"))).headers.get("Server-Timing")).toBeNull();
  });
});
