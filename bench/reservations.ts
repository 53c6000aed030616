/**
 * Path reservations under contention (not a test): `npm run bench:reservations`. 32 agents, each
 * with its own key, in one repository:
 * 1. reserve/release churn: each agent reserves a random folder of 50 and lets it go, 20 times;
 *    every reserve of the repository queues in its claims Durable Object, like claims do.
 * 2. the race: every agent reserves the same overlapping patterns at once, and the proof line
 *    `overlapping_exclusive_holders=0` checks the live reservations afterwards.
 * 3. the check agents call before they start (path_reservations with 5 paths) against 200 live
 *    reservations: sequential and 32 at a time. It reads D1 only, beside the queue.
 */
import { patternsOverlap } from "../src/work/reservations/globs";
import { load, mcpSession, pct, startBenchServer, type ToolCaller } from "./lib";

const AGENTS = Number(process.env.BENCH_AGENTS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const FOLDERS = 50;
const PATH = "/mcp?toolsets=coordination,repos";
const REPO = "bench/mono";

interface Held {
  actor_id: string;
  pattern: string;
  exclusive: boolean;
}

async function main(): Promise<void> {
  const server = await startBenchServer();
  try {
    const keys: string[] = [];
    // One keys command at a time: concurrent writers to the local database get SQLITE_BUSY.
    for (let i = 0; i < AGENTS; i++) keys.push(await server.key("rsv", `agent-${i}`));
    const agents: ToolCaller[] = await Promise.all(keys.map((k) => mcpSession(server.base, k, PATH)));
    const lead = agents[0]!;
    await lead("repo_register", { slug: REPO });

    // 1. Churn.
    const latencies: number[] = [];
    let reserved = 0;
    let refused = 0;
    const started = performance.now();
    await Promise.all(
      agents.map(async (call) => {
        for (let round = 0; round < ROUNDS; round++) {
          const pattern = `pkg/${Math.floor(Math.random() * FOLDERS)}/`;
          const t0 = performance.now();
          const r = (await call("path_reserve", { repository_id: REPO, paths: [pattern], lease_seconds: 60 })) as { reserved: boolean };
          latencies.push(performance.now() - t0);
          if (!r.reserved) {
            refused++;
            continue;
          }
          reserved++;
          const t1 = performance.now();
          await call("path_release", { repository_id: REPO, paths: [pattern] });
          latencies.push(performance.now() - t1);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    console.log(`\n## Reserve/release churn: ${AGENTS} agents x ${ROUNDS} rounds over ${FOLDERS} folders of one repository\n`);
    console.log(`calls/s ${(latencies.length / seconds).toFixed(1)}  reserved ${reserved}  refused ${refused}  p50 ${pct(latencies, 50).toFixed(2)} ms  p99 ${pct(latencies, 99).toFixed(2)} ms`);

    // 2. The race for the same overlapping patterns.
    const contested = ["src/", "src/auth/**", "src/auth/login.ts", "src/*/index.ts"];
    const raced = await Promise.all(agents.map((call, i) => call("path_reserve", { repository_id: REPO, paths: [contested[i % contested.length]!], lease_seconds: 600 })));
    const winners = raced.filter((r) => r.reserved === true).length;
    const live = (await lead("path_reservations", { repository_id: REPO })) as { items: Held[] };
    let overlapping = 0;
    for (let i = 0; i < live.items.length; i++) {
      for (let j = i + 1; j < live.items.length; j++) {
        const a = live.items[i]!;
        const b = live.items[j]!;
        if (a.actor_id !== b.actor_id && (a.exclusive || b.exclusive) && patternsOverlap(a.pattern, b.pattern)) overlapping++;
      }
    }
    console.log(`\n## The race: ${AGENTS} agents reserve ${contested.length} overlapping patterns at once\n`);
    console.log(`winners ${winners}  overlapping_exclusive_holders=${overlapping}`);

    // 3. The check, against 200 live reservations.
    await Promise.all(
      agents.map(async (call, a) => {
        for (let k = 0; k < 200 / AGENTS; k++) await call("path_reserve", { repository_id: REPO, paths: [`lib/${a}/${k}/`], lease_seconds: 600 });
      }),
    );
    const proposed = ["src/auth/login.ts", "lib/3/1/a.ts", "lib/9/2/b.ts", "docs/readme.md", "pkg/7/x.ts"];
    await load(10, 1, async () => void (await agents[1]!("path_reservations", { repository_id: REPO, paths: proposed })));
    console.log(`\n## path_reservations with ${proposed.length} paths against ~${200 + winners} live reservations\n`);
    console.log("| clients | checks/s | p50 ms | p99 ms |");
    console.log("|---|---|---|---|");
    for (const concurrency of [1, AGENTS]) {
      const f = await load(300, concurrency, async (i) => void (await agents[i % AGENTS]!("path_reservations", { repository_id: REPO, paths: proposed })));
      console.log(`| ${concurrency} | ${f.rps.toFixed(1)} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} |`);
    }
  } finally {
    await server.close();
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
