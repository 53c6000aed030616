/**
 * Claim contention (not a test): `npm run bench:claims`. 32 agents, each with its own key, race
 * claim-next over 1,000 ready tasks through /mcp until the pool is empty. Prints claims per
 * second, p50/p99 latency, the proof line `double_claims=0 unclaimed=0`, and beside them the floor:
 * `GET /healthz` from as many clients in the same run, and claims/s as a share of its req/s; for
 * both, workerd's CPU per request (all its threads, which include local D1 and the objects). Then
 * task_query p50 with 10,000 tasks in the project. Loopback only; every loop is bounded.
 */
import { load, mcpSession, pct, startBenchServer, statelessCaller } from "./lib";

const AGENTS = Number(process.env.BENCH_AGENTS ?? 32);
const TASKS = Number(process.env.BENCH_TASKS ?? 1000);
const QUERY_TASKS = Number(process.env.BENCH_QUERY_TASKS ?? 10_000);
/** healthz requests for the floor, from AGENTS clients at once. */
const FLOOR_REQUESTS = Number(process.env.BENCH_FLOOR_REQUESTS ?? 2000);
/** The agents' protocol: a 2025-06-18 session each (the default), or 2026-07-28, which has none. */
const STATELESS = process.env.BENCH_REVISION === "2026-07-28";

async function main(): Promise<void> {
  const server = await startBenchServer();
  try {
    const keys: string[] = [];
    // One keys command at a time: concurrent writers to the local database get SQLITE_BUSY.
    for (let i = 0; i < AGENTS; i++) keys.push(await server.key("race", `agent-${i}`));
    const agents = await Promise.all(keys.map((k) => (STATELESS ? statelessCaller(server.base, k) : mcpSession(server.base, k))));
    const lead = agents[0]!;
    await lead("project_create", { title: "Claim Race", key: "RACE" });
    for (let i = 0; i < TASKS; i += 100) {
      await lead("task_create_many", {
        project_id: "RACE",
        tasks: Array.from({ length: Math.min(100, TASKS - i) }, (_, j) => ({ title: `Task ${i + j}`, priority: (i + j) % 5 })),
      });
    }

    // The floor, at the same concurrency and on the same server, just before the race.
    const healthz = async () => void (await (await fetch(`${server.base}/healthz`)).text());
    await load(100, AGENTS, healthz);
    const floorCpu0 = await server.workerdCpuMs();
    const floor = await load(FLOOR_REQUESTS, AGENTS, healthz);
    const floorCpu = (await server.workerdCpuMs()) - floorCpu0;

    const claimedBy = new Map<string, number>();
    let doubleClaims = 0;
    const latencies: number[] = [];
    const cpu0 = await server.workerdCpuMs();
    const started = performance.now();
    await Promise.all(
      agents.map(async (call, agent) => {
        for (;;) {
          const t0 = performance.now();
          // A key per call: an identical claim-next is a retry (it gets the task already claimed), and each of these means a new claim.
          const r = (await call("task_claim", { project_id: "RACE", idempotency_key: crypto.randomUUID() })) as { claimed: boolean; task: { id: string } | null };
          latencies.push(performance.now() - t0);
          if (!r.claimed) return;
          if (claimedBy.has(r.task!.id)) doubleClaims++;
          claimedBy.set(r.task!.id, agent);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const raceCpu = (await server.workerdCpuMs()) - cpu0;
    latencies.sort((a, b) => a - b);
    const remaining = (await lead("task_query", { project_id: "RACE", status: ["todo"], limit: 1 })) as { items: unknown[] };
    console.log(`\n## Claim contention: ${AGENTS} agents, ${TASKS} ready tasks, claim-next through /mcp (${STATELESS ? "2026-07-28" : "2025-06-18 sessions"})\n`);
    const claimsPerSecond = claimedBy.size / seconds;
    console.log(
      `GET /healthz (floor, ${AGENTS} clients)  req/s ${floor.rps.toFixed(1)}  p50 ${floor.p50.toFixed(2)} ms  p99 ${floor.p99.toFixed(2)} ms  workerd CPU ${(floorCpu / FLOOR_REQUESTS).toFixed(2)} ms/request`,
    );
    console.log(
      `claims/s ${claimsPerSecond.toFixed(1)}  calls ${latencies.length}  p50 ${pct(latencies, 50).toFixed(2)} ms  p99 ${pct(latencies, 99).toFixed(2)} ms  workerd CPU ${(raceCpu / latencies.length).toFixed(2)} ms/call (${(raceCpu / 1000 / seconds).toFixed(2)} cores)`,
    );
    console.log(`claims/s ÷ healthz req/s ${(claimsPerSecond / floor.rps).toFixed(3)}`);
    console.log(`double_claims=${doubleClaims} unclaimed=${TASKS - claimedBy.size + remaining.items.length}`);

    await lead("project_create", { title: "Query Scale", key: "QS" });
    for (let i = 0; i < QUERY_TASKS; i += 100) {
      await lead("task_create_many", {
        project_id: "QS",
        tasks: Array.from({ length: 100 }, (_, j) => ({ title: `Item ${i + j}`, priority: (i + j) % 5, labels: [`l${(i + j) % 10}`] })),
      });
    }
    console.log(`\n## task_query with ${QUERY_TASKS.toLocaleString("en")} tasks in the project (200 sequential calls each)\n`);
    console.log("| query | p50 ms | p99 ms |");
    console.log("|---|---|---|");
    const cases: Array<[string, Record<string, unknown>]> = [
      ["first page, priority order", { project_id: "QS" }],
      ["state ready", { project_id: "QS", state: "ready" }],
      ["label l3", { project_id: "QS", label: "l3" }],
      ["order_by updated", { project_id: "QS", order_by: "updated" }],
    ];
    for (const [label, args] of cases) {
      await load(10, 1, async () => void (await lead("task_query", args)));
      const f = await load(200, 1, async () => void (await lead("task_query", args)));
      console.log(`| ${label} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} |`);
    }
  } finally {
    await server.close();
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
