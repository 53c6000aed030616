/**
 * Benchmarks (not tests): `npm run bench`. Starts wrangler dev on fresh local state and prints
 * figures; bench/README.md records the last results. Traffic goes to 127.0.0.1 only, and every
 * loop is bounded by a request count.
 *
 *   1. tools/call throughput and p50/p99 for blame, change_history and log_change at 1, 8 and 32
 *      concurrent clients, beside GET /healthz (the floor) and a plain route running blame's query
 *      with no MCP, auth or session.
 *   2. change_search, change_diff and the global search p50/p99 with 1k, 10k and 100k events.
 */
import { load, mcpSession, startBenchServer, statelessCaller } from "./lib";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const SCALE_REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 300);
const CONCURRENCY = [1, 8, 32];

async function main(): Promise<void> {
  const server = await startBenchServer();
  const base = server.base;
  try {
    const key = await server.key("bench", "bench-agent");
    const scaleKey = await server.key("scale", "bench-agent");
    const callTool = await mcpSession(base, key);
    const callStateless = statelessCaller(base, key);

    // A realistic ledger to read from: 2,000 events over 200 entities.
    for (let i = 0; i < 2000; i++) {
      await callTool("log_change", { entity_path: `table${i % 200}.col${i % 5}`, change_type: "modify", reasoning: `Widen column ${i} because the nightly import overflowed` });
    }
    const plain = `${base}/bench/blame?tenant=${await server.tenantId("bench")}&path=table7.col2`;
    const ops: Array<[string, (i: number) => Promise<void>]> = [
      ["GET /healthz (floor)", async () => void (await (await fetch(`${base}/healthz`)).text())],
      ["plain route, blame's query", async () => void (await (await fetch(plain)).text())],
      // The MCP floor: a call that does no work of its own, so no tool call can be cheaper.
      ["tools/call mcp.echo (MCP floor)", async () => void (await callTool("mcp.echo", { message: "x" }))],
      ["tools/call blame", async () => void (await callTool("blame", { entity_path: "table7.col2" }))],
      ["tools/call blame, 2026-07-28 (no session)", async () => void (await callStateless("blame", { entity_path: "table7.col2" }))],
      ["tools/call change_history", async () => void (await callTool("change_history", { limit: 20 }))],
      [
        "tools/call log_change",
        async (i) => void (await callTool("log_change", { entity_path: `bench.col${i % 50}`, change_type: "modify", reasoning: "Benchmark write with a reasonably long reason" })),
      ],
    ];
    console.log(`\n## Throughput and latency (${REQUESTS} requests per cell, after 100 warm-up)\n`);
    console.log("| operation | clients | req/s | p50 ms | p99 ms |");
    console.log("|---|---|---|---|---|");
    const p50s: Record<string, Record<number, number>> = {};
    const rates: Record<string, Record<number, number>> = {};
    for (const [name, op] of ops) {
      await load(100, 8, op);
      for (const c of CONCURRENCY) {
        const f = await load(REQUESTS, c, op);
        (p50s[name] ??= {})[c] = f.p50;
        (rates[name] ??= {})[c] = f.rps;
        console.log(`| ${name} | ${c} | ${f.rps.toFixed(0)} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} |`);
      }
    }
    console.log("\nMCP layer cost (p50 of tools/call blame ÷ p50 of the plain route):");
    for (const c of CONCURRENCY) {
      const plainP50 = p50s["plain route, blame's query"]![c]!;
      const ratio = (op: string) => (p50s[op]![c]! / plainP50).toFixed(2);
      console.log(`  ${c} client(s): ${ratio("tools/call blame")}x in a 2025-06-18 session, ${ratio("tools/call blame, 2026-07-28 (no session)")}x on 2026-07-28`);
    }

    console.log("\nAgainst the healthz floor (p50 ÷ healthz p50; req/s ÷ healthz req/s):");
    for (const c of CONCURRENCY) {
      const floor = "GET /healthz (floor)";
      const against = (op: string) => `${(p50s[op]![c]! / p50s[floor]![c]!).toFixed(2)}x, ${(rates[op]![c]! / rates[floor]![c]!).toFixed(2)}x`;
      console.log(`  ${c} client(s): mcp.echo ${against("tools/call mcp.echo (MCP floor)")}; blame ${against("tools/call blame")}`);
    }

    // BENCH_SCALE_REQUESTS=0 stops after the MCP layer's table (no seeding).
    if (SCALE_REQUESTS === 0) return;
    const scaleCall = await mcpSession(base, scaleKey);
    const scaleTenant = await server.tenantId("scale");
    console.log(`\n## Scale: change_search, change_diff and search (${SCALE_REQUESTS} sequential requests per cell)\n`);
    console.log("| events | query | p50 ms | p99 ms |");
    console.log("|---|---|---|---|");
    let seeded = 0;
    for (const target of [1_000, 10_000, 100_000]) {
      while (seeded < target) {
        const n = Math.min(10_000, target - seeded);
        const res = await fetch(`${base}/bench/seed?tenant=${scaleTenant}&from=${seeded}&n=${n}`, { method: "POST" });
        if (!res.ok) throw new Error(`seed failed: ${await res.text()}`);
        seeded += n;
      }
      const cases: Array<[string, string, Record<string, unknown>]> = [
        ["change_search 'nightly import' (every event matches)", "change_search", { query: "nightly import" }],
        ["change_search 'value_777 ' (one event)", "change_search", { query: "value_777 " }],
        ["change_search 'zzqx' (no match)", "change_search", { query: "zzqx" }],
        ["change_diff 'table42' (prefix, 1 in 500)", "change_diff", { entity_path: "table42" }],
        ["search 'nightly import' (every event matches; past 2,000 matches, newest with title matches first)", "search", { q: "nightly import" }],
        ["search 'table42' (title words, 1 in 500)", "search", { q: "table42" }],
        ["search 'zzqx' (no word, no substring)", "search", { q: "zzqx" }],
      ];
      for (const [label, name, args] of cases) {
        await load(20, 1, async () => void (await scaleCall(name, args)));
        const f = await load(SCALE_REQUESTS, 1, async () => void (await scaleCall(name, args)));
        console.log(`| ${target.toLocaleString("en")} | ${label} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} |`);
      }
    }
  } finally {
    await server.close();
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
