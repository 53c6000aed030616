/**
 * review_diff benchmark (not a test): `npm run bench:review`.
 *
 * On `wrangler dev` with fresh local state: review_diff over a real 50-file diff (hono
 * e5975edc, test/fixtures/review/diff/bench-50-files.diff), deterministic only (no stages are
 * wired, none asked for), through the MCP SDK client; p50/p99 of sequential calls beside the
 * GET /healthz floor, and workerd's CPU per call from the scheduler's counters.
 * BENCH_REVIEW_REQUESTS sets requests per cell (default 200).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { load, sdkSession, startBenchServer, type BenchServer, type Figures } from "./lib";

const REQUESTS = Number(process.env.BENCH_REVIEW_REQUESTS ?? 200);
const WARMUP = 10;

/** Latency and workerd CPU per call of `once`, after a warm-up. */
async function cell(server: BenchServer, once: () => Promise<unknown>): Promise<Figures & { cpuMs: number }> {
  await load(WARMUP, 1, async () => void (await once()));
  const cpu0 = await server.workerdCpuMs();
  const figures = await load(REQUESTS, 1, async () => void (await once()));
  const cpuMs = ((await server.workerdCpuMs()) - cpu0) / REQUESTS;
  return { ...figures, cpuMs };
}

async function main(): Promise<void> {
  const diff = await readFile(path.join(import.meta.dirname, "../test/fixtures/review/diff/bench-50-files.diff"), "utf8");
  const server = await startBenchServer();
  try {
    const key = await server.key("bench-review", "bench-agent");
    const session = await sdkSession(server.base, key, "/mcp?toolsets=review");
    try {
      const first = await session.call("review_diff", { diff });
      const stats = first.stats as { files_changed: number; lines_added: number; lines_removed: number };
      console.log(
        `diff: ${stats.files_changed} files, +${stats.lines_added}/-${stats.lines_removed}, ${diff.length.toLocaleString("en")} characters; risk ${String(first.risk_score)}, ${(first.findings as unknown[]).length} findings`,
      );
      const floor = await cell(server, async () => (await fetch(`${server.base}/healthz`)).text());
      const plain = await cell(server, () => session.call("review_diff", { diff }));
      const outputs = await cell(server, () => session.call("review_diff", { diff, options: { include_sarif: true, include_markdown: true } }));
      console.log(`\n| operation (${REQUESTS} sequential requests) | p50 ms | p99 ms | workerd CPU ms per call |`);
      console.log("|---|---|---|---|");
      for (const [name, f] of [
        ["GET /healthz (floor)", floor],
        ["review_diff, 50-file diff, defaults", plain],
        ["review_diff, 50-file diff, include_sarif + include_markdown", outputs],
      ] as const) {
        console.log(`| ${name} | ${f.p50.toFixed(1)} | ${f.p99.toFixed(1)} | ${f.cpuMs.toFixed(2)} |`);
      }
    } finally {
      await session.close();
    }
  } finally {
    await server.close().catch((err: Error) => console.error(`cleanup: ${err.message}`));
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
