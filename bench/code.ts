/**
 * Code index benchmark (not a test, but a regression gate on retrieval quality): `npm run bench:code`.
 *
 * On `wrangler dev` (local D1, the local hash embedder and D1 vector index, the real Workflow
 * engine) with GitHub served by the test suite's fake on loopback:
 * 1. Quality: rxjs 7.8.2's published sources indexed through index_workspace; each question of
 *    bench/code-questions.ts asked in keyword, semantic and hybrid mode through the benchmark
 *    route /bench/code-search; recall@10 over distinct files and MRR. The script exits 1 when
 *    hybrid recall@10 falls below RECORDED_HYBRID_RECALL - RECALL_MARGIN.
 * 2. Scale: about 2,000 files (three.js, rxjs, zod) indexed end to end and timed; each workflow
 *    step's wall time from the `[code-index]` lines the workflow logs; workerd's CPU over the run;
 *    then semantic_search and get_context_for_prompt p50/p99 beside the healthz floor.
 *
 * BENCH_CODE_PARTS=quality or =scale runs one part; BENCH_CODE_REQUESTS sets requests per cell;
 * BENCH_CODE_VERBOSE=1 prints each relevant file's rank per mode (what a ranking change moved).
 */
import { randomUUID } from "node:crypto";
import { setTokenSql } from "../src/git/operator";
import { executeSql } from "../scripts/wrangler";
import { OWNER, startBenchGitHub, type BenchGitHub } from "./code-github";
import { packageTree, QUALITY_SOURCES, SCALE_SOURCES } from "./code-corpus";
import { CUTOFF, fileRank, score, summarize, type Score } from "./code-quality";
import { QUESTIONS } from "./code-questions";
import { load, sdkSession, startBenchServer, type BenchServer, type ToolCaller } from "./lib";

/** Hybrid recall@10 recorded in bench/README.md for this question set and ranking. */
const RECORDED_HYBRID_RECALL = 0.809;
/** How far below the record a run may fall before it fails: about one question's worth of files. */
const RECALL_MARGIN = 0.02;

const VERBOSE = process.env.BENCH_CODE_VERBOSE === "1";
const PARTS = new Set((process.env.BENCH_CODE_PARTS ?? "quality,scale").split(","));
const REQUESTS = Number(process.env.BENCH_CODE_REQUESTS ?? 100);
const MODES = ["keyword", "semantic", "hybrid"] as const;
/** Chunks asked per question: enough for ten distinct files even when a file has many chunks. */
const SEARCH_TOP_K = 50;
/** Candidates per pass per result, as semantic_search's fast mode draws. */
const SEARCH_POOL = 3;
const INDEX_TIMEOUT_MS = 20 * 60_000;

interface Tenant {
  key: string;
  call: ToolCaller;
  close(): Promise<void>;
}

/** A tenant with a key and a stored GitHub token (as `npm run github -- set-token` stores one), connected over MCP. */
async function tenant(server: BenchServer, slug: string, credentialsKey: string): Promise<Tenant> {
  const key = await server.key(slug, "bench-agent");
  await executeSql([await setTokenSql(await server.tenantId(slug), `ghp_bench_${randomUUID()}`, credentialsKey)], server.target);
  // Calls wait up to 10 minutes: an index_status answer can queue behind a running index job's steps.
  return { key, ...(await sdkSession(server.base, key, "/mcp?toolsets=code", 10 * 60_000)) };
}

interface IndexRun {
  seconds: number;
  /** The slowest index_status answer while the job ran: how long a caller waited behind it. */
  slowestStatusMs: number;
  status: Record<string, unknown>;
  jobId: string;
}

/** index_workspace, then index_status every 250 ms until the index is complete; wall time between. */
async function indexRepo(t: Tenant, repo: string): Promise<IndexRun> {
  const started = performance.now();
  const job = await t.call("index_workspace", { repo: `${OWNER}/${repo}`, ref: "main" });
  let slowestStatusMs = 0;
  for (;;) {
    const asked = performance.now();
    const status = ((await t.call("index_status", { repo: `${OWNER}/${repo}`, check_head: false })).items as Record<string, unknown>[])[0]!;
    slowestStatusMs = Math.max(slowestStatusMs, performance.now() - asked);
    if (status.phase === "complete") return { seconds: (performance.now() - started) / 1000, slowestStatusMs, status, jobId: String(job.job_id) };
    if (status.phase === "failed") throw new Error(`indexing ${repo} failed: ${JSON.stringify(status.errors)}`);
    if (performance.now() - started > INDEX_TIMEOUT_MS) throw new Error(`indexing ${repo} did not finish in ${INDEX_TIMEOUT_MS / 60_000} minutes`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function ranked(server: BenchServer, t: Tenant, q: string, mode: string): Promise<string[]> {
  const url = `${server.base}/bench/code-search?mode=${mode}&top_k=${SEARCH_TOP_K}&pool=${SEARCH_POOL}&q=${encodeURIComponent(q)}`;
  const res = await fetch(url, { headers: { Authorization: `Bearer ${t.key}` } });
  const body = (await res.json()) as { ok: boolean; mode: string; paths: string[] };
  if (!body.ok || body.mode !== mode) throw new Error(`code-search ${mode} answered ${JSON.stringify(body).slice(0, 300)}`);
  return body.paths;
}

/** Part 1. Returns hybrid recall@10. */
async function quality(server: BenchServer, github: BenchGitHub, credentialsKey: string): Promise<number> {
  const tree = await packageTree(QUALITY_SOURCES);
  github.add("rxjs", tree);
  const t = await tenant(server, "code-quality", credentialsKey);
  try {
    const run = await indexRepo(t, "rxjs");
    const s = run.status;
    console.log(`quality repository: rxjs 7.8.2 (${Object.keys(tree).length} files served; ${s.files_total} indexed, ${s.chunks} chunks, ${s.symbols} symbols) indexed in ${run.seconds.toFixed(1)} s`);
    const scores: Record<string, Score[]> = { keyword: [], semantic: [], hybrid: [] };
    for (const q of QUESTIONS) {
      const ranks: string[] = [];
      for (const mode of MODES) {
        const paths = await ranked(server, t, q.q, mode);
        scores[mode]!.push(score(q, paths));
        ranks.push(`${mode} ${q.relevant.map((p) => fileRank(paths, p)).join("/")}`);
      }
      if (VERBOSE) console.log(`${ranks.join("  ")}  "${q.q}"`);
    }
    console.log(`\n${QUESTIONS.length} questions, ${QUESTIONS.reduce((n, q) => n + q.relevant.length, 0)} relevant files\n`);
    console.log(`| mode | recall@${CUTOFF} | MRR@${CUTOFF} | questions fully answered |`);
    console.log("|---|---|---|---|");
    for (const mode of MODES) {
      const f = summarize(scores[mode]!);
      console.log(`| ${mode} | ${f.recall.toFixed(3)} | ${f.mrr.toFixed(3)} | ${scores[mode]!.filter((x) => x.recall === 1).length} |`);
    }
    const misses = QUESTIONS.map((q, i) => ({ q: q.q, s: scores.hybrid![i]! })).filter((x) => x.s.recall < 1);
    if (misses.length > 0) {
      console.log(`\nhybrid misses (relevant files not in the first ${CUTOFF} distinct files):`);
      for (const m of misses) console.log(`- "${m.q}": ${m.s.missed.join(", ")}`);
    }
    return summarize(scores.hybrid!).recall;
  } finally {
    await t.close();
  }
}

/** The `[code-index] <job> <step> <ms>` lines of one job, in order. */
function stepTimes(output: string, jobId: string): { step: string; ms: number }[] {
  const out: { step: string; ms: number }[] = [];
  for (const m of output.matchAll(/\[code-index\] (\S+) (.+?) (\d+)\s*$/gm)) if (m[1] === jobId) out.push({ step: m[2]!, ms: Number(m[3]) });
  return out;
}

function printSteps(steps: { step: string; ms: number }[]): void {
  const kinds = new Map<string, number[]>();
  for (const s of steps) kinds.set(s.step.replace(/ \d+$/, ""), [...(kinds.get(s.step.replace(/ \d+$/, "")) ?? []), s.ms]);
  console.log(`\n| step | runs | total ms | max ms |`);
  console.log("|---|---|---|---|");
  for (const [kind, ms] of kinds) console.log(`| ${kind} | ${ms.length} | ${ms.reduce((a, b) => a + b, 0)} | ${Math.max(...ms)} |`);
  const peak = steps.reduce((a, b) => (b.ms > a.ms ? b : a), { step: "", ms: 0 });
  console.log(`peak step: ${peak.step} ${peak.ms} ms (wall time inside the step; the local proxy for its CPU)`);
}

/** Part 2. */
async function scale(server: BenchServer, github: BenchGitHub, credentialsKey: string): Promise<void> {
  const tree = await packageTree(SCALE_SOURCES);
  github.add("scale", tree);
  const t = await tenant(server, "code-scale", credentialsKey);
  try {
    const cpu0 = await server.workerdCpuMs();
    const run = await indexRepo(t, "scale");
    const cpu = (await server.workerdCpuMs()) - cpu0;
    const s = run.status;
    console.log(
      `\nscale repository: three 0.187.0 + rxjs 7.8.2 + zod's src (${Object.keys(tree).length} files served; ${s.files_total} indexed, skipped ${JSON.stringify(s.skipped)}, ${s.chunks} chunks, ${s.symbols} symbols)`,
    );
    console.log(
      `indexed end to end in ${run.seconds.toFixed(1)} s (index_workspace → index_status complete); workerd CPU over the run ${(cpu / 1000).toFixed(1)} s; slowest index_status answer meanwhile ${(run.slowestStatusMs / 1000).toFixed(1)} s`,
    );
    const steps = stepTimes(server.output(), run.jobId);
    if (steps.length === 0) console.log("no [code-index] step lines in wrangler dev's output");
    else printSteps(steps);

    const time = async (once: (i: number) => Promise<unknown>) => {
      await load(10, 1, async (i) => void (await once(i)));
      return load(REQUESTS, 1, async (i) => void (await once(i)));
    };
    const ask = (i: number) => QUESTIONS[i % QUESTIONS.length]!.q;
    const floor = await time(async () => (await fetch(`${server.base}/healthz`)).text());
    const search = await time((i) => t.call("semantic_search", { query: ask(i), bypass_cache: true }));
    const context = await time((i) => t.call("get_context_for_prompt", { query: ask(i), bypass_cache: true }));
    console.log(`\n| operation (${s.files_total} files, ${s.chunks} chunks, ${REQUESTS} sequential requests) | p50 ms | p99 ms |`);
    console.log("|---|---|---|");
    for (const [name, f] of [
      ["GET /healthz (floor)", floor],
      ["semantic_search (top_k 10, fast, cache bypassed)", search],
      ["get_context_for_prompt (defaults, cache bypassed)", context],
    ] as const) {
      console.log(`| ${name} | ${f.p50.toFixed(1)} | ${f.p99.toFixed(1)} |`);
    }
  } finally {
    await t.close();
  }
}

async function main(): Promise<void> {
  // A credentials key for this run's throwaway state only; nothing outside the run ever sees it.
  const credentialsKey = randomUUID();
  const github = await startBenchGitHub();
  const server = await startBenchServer({ GITHUB_API_URL: github.url, GITHUB_CREDENTIALS_KEY: credentialsKey });
  let failed = false;
  try {
    if (PARTS.has("quality")) {
      const recall = await quality(server, github, credentialsKey);
      const floor = RECORDED_HYBRID_RECALL - RECALL_MARGIN;
      console.log(`\nhybrid recall@${CUTOFF} ${recall.toFixed(3)}: gate ≥ ${floor.toFixed(2)} (recorded ${RECORDED_HYBRID_RECALL} - margin ${RECALL_MARGIN}) ${recall >= floor ? "passed" : "FAILED"}`);
      failed = recall < floor;
    }
    if (PARTS.has("scale")) await scale(server, github, credentialsKey);
  } catch (err) {
    // What the Worker printed last is usually why (a step that failed, a request that hung).
    console.error(`wrangler dev's last output:\n${server.output().split("\n").slice(-40).join("\n")}`);
    throw err;
  } finally {
    await server.close().catch((err: Error) => console.error(`cleanup: ${err.message}`));
    await github.close();
  }
  if (failed) process.exit(1);
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
