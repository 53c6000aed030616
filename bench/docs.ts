/**
 * Document-store benchmark (not a test): `npm run bench:docs`. Through /mcp?toolsets=docs on
 * `wrangler dev`, beside the healthz floor of the same run: ingest rate of 1 KB documents through
 * docs_execute, then at 1k and 10k documents in one tenant keyword and hybrid search p50/p99 and
 * grep for a rare literal. The corpus is real public code and text: the files of the packages this
 * repository pins (node_modules), so the figures do not depend on text written for the benchmark.
 */
import { querySql } from "../scripts/wrangler";
import { corpus, MAX_DOC_BYTES, rareLiteral } from "./corpus";
import { load, mcpSession, startBenchServer } from "./lib";

const SIZES = (process.env.BENCH_DOCS_SIZES ?? "1000,10000").split(",").map(Number);
const REQUESTS = Number(process.env.BENCH_DOCS_REQUESTS ?? 100);
const INGEST_DOCS = Number(process.env.BENCH_DOCS_INGEST ?? 200);
const BATCH = 50;
async function main(): Promise<void> {
  const all = await corpus(Math.max(...SIZES));
  console.log(`corpus: ${all.length} documents cut from the text files in node_modules (≤ ${MAX_DOC_BYTES} bytes each)`);
  const server = await startBenchServer();
  const base = server.base;
  try {
    const key = await server.key("docs", "bench-agent");
    const call = await mcpSession(base, key, "/mcp?toolsets=docs");
    const floor = await load(REQUESTS, 1, async () => void (await (await fetch(`${base}/healthz`)).text()));
    const echo = await load(REQUESTS, 1, async () => void (await call("mcp.echo", { message: "x" })));
    console.log(`\nhealthz floor: p50 ${floor.p50.toFixed(1)} ms, p99 ${floor.p99.toFixed(1)} ms; MCP floor (mcp.echo through /mcp): p50 ${echo.p50.toFixed(1)} ms, p99 ${echo.p99.toFixed(1)} ms`);

    // Ingest: 1 KB documents, one add per call (YAMS measured this shape), then 50 per call.
    const kb = (i: number) => ({ op: "add", params: { name: `ingest/doc-${i}.md`, content: all[i % all.length]!.content.padEnd(1024, " ").slice(0, 1024) + `\n${i}` } });
    const single = await load(INGEST_DOCS, 1, async (i) => void (await call("docs_execute", { operations: [kb(i)] })));
    const t0 = performance.now();
    for (let i = 0; i < INGEST_DOCS; i += BATCH) await call("docs_execute", { operations: Array.from({ length: BATCH }, (_, k) => kb(INGEST_DOCS + i + k)) });
    const batched = INGEST_DOCS / ((performance.now() - t0) / 1000);
    console.log(`ingest 1 KB: ${single.rps.toFixed(1)} docs/s one per call (p50 ${single.p50.toFixed(1)} ms), ${batched.toFixed(1)} docs/s ${BATCH} per call`);
    await call("docs_execute", { operations: [{ op: "delete", params: { name: "ingest/**" } }] });

    console.log(`\n| documents | keyword p50 | keyword p99 | hybrid p50 | hybrid p99 | grep (rare literal) p50 | grep p99 |`);
    console.log("|---|---|---|---|---|---|---|");
    let seeded = 0;
    for (const size of SIZES) {
      const docs = all.slice(0, size);
      while (seeded < docs.length) {
        const part = docs.slice(seeded, seeded + BATCH);
        const r = await call("docs_execute", { operations: part.map((d) => ({ op: "add", params: { name: d.name, content: d.content } })) });
        if (r.failed) throw new Error(`seeding failed: ${JSON.stringify(r).slice(0, 500)}`);
        seeded += part.length;
      }
      // Embeddings are made after each write's response; measuring while they still land would
      // time the embedder too (and move the vector index's generation under every query).
      for (let waited = 0; waited < 600; waited += 5) {
        const [row] = await querySql<{ n: number }>(`SELECT COUNT(*) AS n FROM embeddings WHERE status = 'pending'`, server.target);
        if (!row || row.n === 0) break;
        await new Promise((r) => setTimeout(r, 5000));
      }
      const literal = rareLiteral(docs);
      const time = async (once: () => Promise<unknown>) => {
        await load(10, 1, async () => void (await once()));
        return load(REQUESTS, 1, async () => void (await once()));
      };
      const keyword = await time(() => call("docs_query", { steps: [{ op: "search", params: { query: "parse options and return the default value", type: "keyword" } }] }));
      const hybrid = await time(() => call("docs_query", { steps: [{ op: "search", params: { query: "parse options and return the default value", type: "hybrid" } }] }));
      const grep = await time(() => call("docs_query", { steps: [{ op: "grep", params: { pattern: literal } }] }));
      const cells = [keyword.p50, keyword.p99, hybrid.p50, hybrid.p99, grep.p50, grep.p99].map((v) => v.toFixed(1));
      console.log(`| ${docs.length.toLocaleString("en")} | ${cells.join(" | ")} |`);
    }
  } finally {
    await server.close().catch((err: Error) => console.error(`cleanup: ${err.message}`));
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
