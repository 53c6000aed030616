/**
 * The change ledger's hot paths (not a test): `npm run bench:changes`. BENCH_CHANGES_AGENTS agents,
 * each with its own key, log BENCH_CHANGES_PER_AGENT changes each through /mcp at once (every
 * log_change is a chained, atomic D1 batch, so agents race for the tenant's chain head); then
 * change_search runs BENCH_CHANGES_SEARCHES sequential calls per query over the ledger they wrote.
 * Prints p50/p99 and rows/s. Loopback only; every loop is bounded by a count.
 */
import { load, mcpSession, startBenchServer } from "./lib";

const AGENTS = Number(process.env.BENCH_CHANGES_AGENTS ?? 8);
const PER_AGENT = Number(process.env.BENCH_CHANGES_PER_AGENT ?? 40);
const SEARCHES = Number(process.env.BENCH_CHANGES_SEARCHES ?? 100);

async function main(): Promise<void> {
  const server = await startBenchServer();
  try {
    const keys: string[] = [];
    // One keys command at a time: concurrent writers to the local database get SQLITE_BUSY.
    for (let i = 0; i < AGENTS; i++) keys.push(await server.key("ledger", `agent-${i}`));
    const agents = await Promise.all(keys.map((k) => mcpSession(server.base, k)));
    const total = AGENTS * PER_AGENT;
    // Every seventh change is a rename: two rows and two chain entries in one batch.
    const args = (i: number) =>
      i % 7 === 6
        ? { entity_path: `src/mod${i % 40}/renamed${i}.ts`, rename_from: `src/mod${i % 40}/file${i}.ts`, change_type: "rename", reasoning: `move ${i} for the nightly import` }
        : { entity_path: `src/mod${i % 40}/file${i}.ts`, change_type: i % 3 === 0 ? "create" : "modify", entity_type: "file", diff: `+ value_${i} `, reasoning: `change ${i} for the nightly import` };

    await load(AGENTS, AGENTS, async (i) => void (await agents[i]!("log_change", { entity_path: `warmup/${i}`, change_type: "create" })));
    const stats = async () => (await (await fetch(`${server.base}/bench/chain-stats`)).json()) as { appends: number; batches: number; retries: number };
    const before = await stats();
    const write = await load(total, AGENTS, async (i) => void (await agents[i % AGENTS]!("log_change", args(i))));
    const after = await stats();
    // The read the writes are compared with, at the same concurrency, on the same server.
    const blame = await load(total, AGENTS, async (i) => void (await agents[i % AGENTS]!("blame", { entity_path: `src/mod${i % 40}/file${i}.ts` })));
    const verified = (await agents[0]!("change_verify", { limit: 5000 })) as { intact: boolean; checked: number };
    const rows = total + Math.floor((total + 1) / 7);
    console.log(`\n## log_change: ${AGENTS} agents, ${total} calls (${rows} event rows), through /mcp\n`);
    console.log("| operation | clients | calls/s | rows/s | p50 ms | p99 ms |");
    console.log("|---|---|---|---|---|---|");
    console.log(`| log_change | ${AGENTS} | ${write.rps.toFixed(1)} | ${((write.rps * rows) / total).toFixed(1)} | ${write.p50.toFixed(2)} | ${write.p99.toFixed(2)} |`);
    console.log(`| blame (the read beside it) | ${AGENTS} | ${blame.rps.toFixed(1)} | | ${blame.p50.toFixed(2)} | ${blame.p99.toFixed(2)} |`);
    const appended = after.appends - before.appends;
    console.log(
      `\nlog_change ÷ blame req/s ${(write.rps / blame.rps).toFixed(2)}; chain retries per write ${(appended ? (after.retries - before.retries) / appended : 0).toFixed(3)} (${after.retries - before.retries} over ${appended} appends); appends per D1 batch ${(appended / Math.max(1, after.batches - before.batches)).toFixed(2)}; change_verify intact=${verified.intact} checked=${verified.checked}`,
    );

    console.log(`\n## change_search over those ${rows} events (${SEARCHES} sequential calls each)\n`);
    console.log("| query | p50 ms | p99 ms | rows/s |");
    console.log("|---|---|---|---|");
    const lead = agents[0]!;
    const cases: Array<[string, string]> = [
      ["'nightly import' (every event matches, one page)", "nightly import"],
      ["'value_77 ' (one event)", "value_77 "],
      ["'zzqx' (no match)", "zzqx"],
      ["'od' (two characters: the scan path, every event)", "od"],
    ];
    for (const [label, query] of cases) {
      let found = 0;
      await load(10, 1, async () => void (await lead("change_search", { query, limit: 20 })));
      const f = await load(SEARCHES, 1, async () => {
        const r = (await lead("change_search", { query, limit: 20 })) as { items: unknown[] };
        found += r.items.length;
      });
      console.log(`| ${label} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} | ${((f.rps * found) / SEARCHES).toFixed(1)} |`);
    }
  } finally {
    await server.close();
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
