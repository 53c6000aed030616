/**
 * Knowledge search benchmark (not a test): `npm run bench:knowledge`. Seeds synthetic notes
 * (with vectors from the local embedder, as the backfill leaves them) into one tenant and prints
 * knowledge_search p50/p99, lexical and hybrid, and the cost of the local vector scan alone, as
 * the tenant grows. Local adapters only: Workers AI and Vectorize do not run here.
 */
import { load, mcpSession, startBenchServer } from "./lib";

const REQUESTS = Number(process.env.BENCH_KNOWLEDGE_REQUESTS ?? 200);
const SIZES = (process.env.BENCH_KNOWLEDGE_SIZES ?? "1000,5000,10000,20000,40000").split(",").map(Number);
const SEED_BATCH = 500;

async function main(): Promise<void> {
  const server = await startBenchServer();
  const base = server.base;
  try {
    const key = await server.key("kb", "bench-agent");
    const tenant = await server.tenantId("kb");
    const callTool = await mcpSession(base, key);
    const actor = (await callTool("whoami", {})).actor as { id: string };
    console.log(`\n## knowledge_search (${REQUESTS} sequential requests per cell, after 20 warm-up)\n`);
    console.log("| notes | query | lexical p50 | lexical p99 | hybrid p50 | hybrid p99 | vector scan p50 | vector scan p99 |");
    console.log("|---|---|---|---|---|---|---|---|");
    let seeded = 0;
    for (const size of SIZES) {
      while (seeded < size) {
        const n = Math.min(SEED_BATCH, size - seeded);
        const res = await fetch(`${base}/bench/seed-notes?tenant=${tenant}&actor=${actor.id}&from=${seeded}&n=${n}`, { method: "POST" });
        if (!res.ok) throw new Error(`seed failed: ${await res.text()}`);
        seeded += n;
      }
      for (const q of ["rollback the deploy after a flaky release", "zzqx qqzv"]) {
        const time = async (once: () => Promise<unknown>) => {
          await load(20, 1, async () => void (await once()));
          return load(REQUESTS, 1, async () => void (await once()));
        };
        const lexical = await time(() => callTool("knowledge_search", { q, lexical_only: true }));
        const hybrid = await time(() => callTool("knowledge_search", { q }));
        const scan = await time(async () => {
          const res = await fetch(`${base}/bench/vector-scan?tenant=${tenant}&q=${encodeURIComponent(q)}`);
          if (!res.ok) throw new Error(`scan failed: ${await res.text()}`);
          return res.json();
        });
        const cells = [lexical.p50, lexical.p99, hybrid.p50, hybrid.p99, scan.p50, scan.p99].map((x) => x.toFixed(1));
        console.log(`| ${size.toLocaleString("en")} | ${q} | ${cells.join(" | ")} |`);
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
