/**
 * Benchmarks (not tests): `npm run bench`. Starts wrangler dev on fresh local state and prints
 * figures; bench/README.md records the last results. Traffic goes to 127.0.0.1 only, and every
 * loop is bounded by a request count.
 *
 *   1. tools/call throughput and p50/p99 for blame, change_history and log_change at 1, 8 and 32
 *      concurrent clients, beside GET /healthz (the floor) and a plain route running blame's query
 *      with no MCP, auth or session.
 *   2. change_search and change_diff p50/p99 with 1k, 10k and 100k events.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startDevServer } from "../scripts/dev-server";
import { applyMigrations, createKeyWithCommand, querySql } from "../scripts/wrangler";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const SCALE_REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 300);
const CONCURRENCY = [1, 8, 32];

interface Figures {
  rps: number;
  p50: number;
  p99: number;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function load(total: number, concurrency: number, once: (i: number) => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t0 = performance.now();
        await once(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { rps: total / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99) };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "agent-ledger-bench-"));
  const persistTo = path.join(dir, "state");
  const env = { XDG_CONFIG_HOME: path.join(dir, "config") };
  await applyMigrations({ persistTo, env });
  const key = await createKeyWithCommand("bench", "bench-agent", { persistTo, env });
  const scaleKey = await createKeyWithCommand("scale", "bench-agent", { persistTo, env });
  const tenants = await querySql<{ id: string; slug: string }>("SELECT id, slug FROM tenants", { persistTo, env });
  const tenantId = (slug: string) => tenants.find((t) => t.slug === slug)!.id;
  const server = await startDevServer({ persistTo, env, vars: { BENCH_ROUTES: "1" } });
  const base = server.baseUrl;

  try {
    const session = async (k: string) => {
      const res = await fetch(`${base}/mcp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${k}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } }),
      });
      await res.text();
      return res.headers.get("Mcp-Session-Id")!;
    };
    const caller = (k: string, sid: string) => async (name: string, args: Record<string, unknown>) => {
      const res = await fetch(`${base}/mcp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${k}`, "Mcp-Session-Id": sid, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
      });
      const body = (await res.json()) as { result?: { isError?: boolean } };
      if (!res.ok || body.result?.isError) throw new Error(`${name} failed: ${JSON.stringify(body)}`);
    };
    const callTool = caller(key, await session(key));

    // A realistic ledger to read from: 2,000 events over 200 entities.
    for (let i = 0; i < 2000; i++) {
      await callTool("log_change", { entity_path: `table${i % 200}.col${i % 5}`, change_type: "modify", reasoning: `Widen column ${i} because the nightly import overflowed` });
    }
    const plain = `${base}/bench/blame?tenant=${tenantId("bench")}&path=table7.col2`;
    const ops: Array<[string, (i: number) => Promise<void>]> = [
      ["GET /healthz (floor)", async () => void (await (await fetch(`${base}/healthz`)).text())],
      ["plain route, blame's query", async () => void (await (await fetch(plain)).text())],
      ["tools/call blame", async () => callTool("blame", { entity_path: "table7.col2" })],
      ["tools/call change_history", async () => callTool("change_history", { limit: 20 })],
      ["tools/call log_change", async (i) => callTool("log_change", { entity_path: `bench.col${i % 50}`, change_type: "modify", reasoning: "Benchmark write with a reasonably long reason" })],
    ];
    console.log(`\n## Throughput and latency (${REQUESTS} requests per cell, after 100 warm-up)\n`);
    console.log("| operation | clients | req/s | p50 ms | p99 ms |");
    console.log("|---|---|---|---|---|");
    const p50s: Record<string, Record<number, number>> = {};
    for (const [name, op] of ops) {
      await load(100, 8, op);
      for (const c of CONCURRENCY) {
        const f = await load(REQUESTS, c, op);
        (p50s[name] ??= {})[c] = f.p50;
        console.log(`| ${name} | ${c} | ${f.rps.toFixed(0)} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} |`);
      }
    }
    console.log("\nMCP layer cost (p50 of tools/call blame ÷ p50 of the plain route):");
    for (const c of CONCURRENCY) {
      console.log(`  ${c} client(s): ${(p50s["tools/call blame"]![c]! / p50s["plain route, blame's query"]![c]!).toFixed(2)}x`);
    }

    const scaleCall = caller(scaleKey, await session(scaleKey));
    console.log(`\n## Scale: change_search and change_diff (${SCALE_REQUESTS} sequential requests per cell)\n`);
    console.log("| events | query | p50 ms | p99 ms |");
    console.log("|---|---|---|---|");
    let seeded = 0;
    for (const target of [1_000, 10_000, 100_000]) {
      while (seeded < target) {
        const n = Math.min(10_000, target - seeded);
        const res = await fetch(`${base}/bench/seed?tenant=${tenantId("scale")}&from=${seeded}&n=${n}`, { method: "POST" });
        if (!res.ok) throw new Error(`seed failed: ${await res.text()}`);
        seeded += n;
      }
      const cases: Array<[string, string, Record<string, unknown>]> = [
        ["change_search 'nightly import' (every event matches)", "change_search", { query: "nightly import" }],
        ["change_search 'value_777 ' (one event)", "change_search", { query: "value_777 " }],
        ["change_search 'zzqx' (no match)", "change_search", { query: "zzqx" }],
        ["change_diff 'table42' (prefix, 1 in 500)", "change_diff", { entity_path: "table42" }],
      ];
      for (const [label, name, args] of cases) {
        await load(20, 1, () => scaleCall(name, args));
        const f = await load(SCALE_REQUESTS, 1, () => scaleCall(name, args));
        console.log(`| ${target.toLocaleString("en")} | ${label} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} |`);
      }
    }
  } finally {
    server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
