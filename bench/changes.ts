/**
 * The change ledger's hot paths (not a test): `npm run bench:changes`. BENCH_CHANGES_AGENTS agents,
 * each with its own key, log BENCH_CHANGES_PER_AGENT changes each through /mcp at once (every
 * log_change is a chained, atomic D1 batch, so agents race for the tenant's chain head); then
 * change_search runs BENCH_CHANGES_SEARCHES sequential calls per query over the ledger they wrote.
 * Prints p50/p99 and rows/s. Then a mixed soak: BENCH_SOAK_CLIENTS clients at once (a third of them
 * writing with log_change, the others reading with blame and change_history), BENCH_SOAK_CALLS
 * calls in all, beside GET /healthz at the same concurrency. Loopback only; every loop is bounded
 * by a count.
 */
import { load, mcpSession, startBenchServer } from "./lib";

const AGENTS = Number(process.env.BENCH_CHANGES_AGENTS ?? 8);
const PER_AGENT = Number(process.env.BENCH_CHANGES_PER_AGENT ?? 40);
const SEARCHES = Number(process.env.BENCH_CHANGES_SEARCHES ?? 100);
const SOAK_CLIENTS = Number(process.env.BENCH_SOAK_CLIENTS ?? 32);
const SOAK_CALLS = Number(process.env.BENCH_SOAK_CALLS ?? 1600);

async function main(): Promise<void> {
  const server = await startBenchServer();
  try {
    const keys: string[] = [];
    // One keys command at a time: concurrent writers to the local database get SQLITE_BUSY.
    for (let i = 0; i < Math.max(AGENTS, SOAK_CLIENTS); i++) keys.push(await server.key("ledger", `agent-${i}`));
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

    // Every third client writes; the others read what is there. Each call is the client's next, in turn.
    const soakCall = (i: number) => {
      const client = i % SOAK_CLIENTS;
      const call = agents[client]!;
      if (client % 3 === 0) return call("log_change", args(total + i));
      return client % 3 === 1 ? call("blame", { entity_path: `src/mod${i % 40}/file${i % total}.ts` }) : call("change_history", { limit: 20 });
    };
    const floor = await load(SOAK_CALLS, SOAK_CLIENTS, async () => void (await (await fetch(`${server.base}/healthz`)).text()));
    const soakBefore = await stats();
    const soak = await load(SOAK_CALLS, SOAK_CLIENTS, async (i) => void (await soakCall(i)));
    const soakAfter = await stats();
    const soakVerified = (await lead("change_verify", { limit: 5000 })) as { intact: boolean; checked: number };
    console.log(`\n## Mixed soak: ${SOAK_CLIENTS} clients (a third writing), ${SOAK_CALLS} calls\n`);
    console.log("| operation | clients | calls/s | p50 ms | p99 ms |");
    console.log("|---|---|---|---|---|");
    console.log(`| GET /healthz (floor) | ${SOAK_CLIENTS} | ${floor.rps.toFixed(1)} | ${floor.p50.toFixed(2)} | ${floor.p99.toFixed(2)} |`);
    console.log(`| log_change, blame, change_history | ${SOAK_CLIENTS} | ${soak.rps.toFixed(1)} | ${soak.p50.toFixed(2)} | ${soak.p99.toFixed(2)} |`);
    const soakAppends = soakAfter.appends - soakBefore.appends;
    console.log(
      `\nchain retries per write ${(soakAppends ? (soakAfter.retries - soakBefore.retries) / soakAppends : 0).toFixed(3)}; appends per D1 batch ${(soakAppends / Math.max(1, soakAfter.batches - soakBefore.batches)).toFixed(2)}; change_verify intact=${soakVerified.intact} checked=${soakVerified.checked}`,
    );
  } finally {
    await server.close();
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
