/**
 * How the costs grow (not a test): `npm run bench:growth`. One tenant's work grows 10x twice
 * (events and tasks 1k → 10k → 100k, documents 1k → 10k by default) and, separately, the number
 * of agents working at once (4 → 32 → 128). At each size the same calls are timed, sequentially
 * beside the MCP floor of the same run, and each cost is printed with its growth factor (its p50
 * at this size ÷ its p50 at the size before): about 1 is flat, about 10 is linear in the work.
 * Loopback only; every loop is bounded by a count.
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { querySql, type Target } from "../scripts/wrangler";
import { corpus } from "./corpus";
import { type Figures, load, mcpSession, startBenchServer, type ToolCaller } from "./lib";

/** A comma-separated list of sizes; empty skips that part. */
const sizes = (v: string) =>
  v
    .split(",")
    .filter((s) => s.trim() !== "")
    .map(Number);
const SIZES = sizes(process.env.BENCH_GROWTH_SIZES ?? "1000,10000,100000");
const DOC_SIZES = sizes(process.env.BENCH_GROWTH_DOC_SIZES ?? "1000,10000");
const AGENTS = sizes(process.env.BENCH_GROWTH_AGENTS ?? "4,32,128");
const REQUESTS = Number(process.env.BENCH_GROWTH_REQUESTS ?? 100);
/** Times only the costs whose names contain this text (the floors always), to rerun one part quickly. */
const ONLY = process.env.BENCH_GROWTH_ONLY ?? "";
/** Distinct keys the agents share (each agent has its own MCP session): minting a key per agent would take minutes. */
const KEYS = 8;
const DOC_BATCH = 50;

interface Row {
  cost: string;
  p50: number[];
  p99: number[];
}

/** The local D1 database's size in bytes (its SQLite files), which decides when data outgrows one database. */
async function databaseBytes(target: Target): Promise<number> {
  const dir = path.join(target.persistTo ?? ".wrangler/state", "v3", "d1");
  const files = (await readdir(dir, { recursive: true })).filter((f) => /\.sqlite(-wal)?$/.test(f));
  const sizes = await Promise.all(files.map(async (f) => (await stat(path.join(dir, f))).size));
  return sizes.reduce((a, b) => a + b, 0);
}

/** Prints a table of p50/p99 per size, with each step's growth factor. */
function table(title: string, sizes: number[], rows: Row[]): void {
  console.log(`\n## ${title}\n`);
  const steps = sizes.slice(1).map((s, i) => `×${(s / sizes[i]!).toFixed(0)} growth`);
  console.log(`| cost | ${sizes.map((s) => `${s.toLocaleString("en")} p50 / p99 ms`).join(" | ")} | ${steps.join(" | ")} |`);
  console.log(`|---|${sizes.map(() => "---").join("|")}|${steps.map(() => "---").join("|")}|`);
  for (const r of rows) {
    const cells = r.p50.map((p, i) => `${p.toFixed(1)} / ${r.p99[i]!.toFixed(1)}`);
    const growth = r.p50.slice(1).map((p, i) => `${(p / r.p50[i]!).toFixed(2)}`);
    console.log(`| ${r.cost} | ${cells.join(" | ")} | ${growth.join(" | ")} |`);
  }
}

/** A cost's figures at one size, appended to its row. */
function record(rows: Row[], cost: string, f: Figures): void {
  let row = rows.find((r) => r.cost === cost);
  if (!row) rows.push((row = { cost, p50: [], p99: [] }));
  row.p50.push(f.p50);
  row.p99.push(f.p99);
}

/** Times each cost sequentially at one size. */
async function measure(rows: Row[], costs: Array<[string, () => Promise<unknown>]>): Promise<void> {
  for (const [cost, once] of costs) {
    if (!cost.includes(ONLY) && !cost.includes("floor")) continue;
    await load(10, 1, async () => void (await once()));
    record(rows, cost, await load(REQUESTS, 1, async () => void (await once())));
  }
}

async function main(): Promise<void> {
  const server = await startBenchServer();
  const base = server.base;
  try {
    const keys: string[] = [];
    for (let i = 0; i < KEYS; i++) keys.push(await server.key("growth", `agent-${i}`));
    const lead = await mcpSession(base, keys[0]!);
    const tenant = await server.tenantId("growth");
    const floor: Array<[string, () => Promise<unknown>]> = [
      ["GET /healthz (floor)", async () => (await fetch(`${base}/healthz`)).text()],
      ["mcp.echo (MCP floor)", () => lead("mcp.echo", { message: "x" })],
    ];

    // Events and tasks, 1k → 10k → 100k.
    await lead("project_create", { title: "Growth", key: "GROW" });
    const rows: Row[] = [];
    let events = 0;
    let tasks = 0;
    for (const size of SIZES) {
      for (; events < size; events += Math.min(10_000, size - events)) {
        const res = await fetch(`${base}/bench/seed?tenant=${tenant}&from=${events}&n=${Math.min(10_000, size - events)}`, { method: "POST" });
        if (!res.ok) throw new Error(`seed failed: ${await res.text()}`);
      }
      for (; tasks < size; tasks += 100) {
        await lead("task_create_many", {
          project_id: "GROW",
          tasks: Array.from({ length: 100 }, (_, j) => ({ title: `Item ${tasks + j} of the nightly import`, priority: (tasks + j) % 5, labels: [`l${(tasks + j) % 10}`] })),
        });
      }
      await measure(rows, [
        ...floor,
        ["blame (one entity)", () => lead("blame", { entity_path: "table42.col0" })],
        ["change_history (newest 20)", () => lead("change_history", { limit: 20 })],
        ["change_search, one event matches", () => lead("change_search", { query: "value_777 " })],
        ["change_search, every event matches", () => lead("change_search", { query: "nightly import" })],
        ["search (global), every event matches", () => lead("search", { q: "nightly import" })],
        ["search (global), a common and a rare word", () => lead("search", { q: "nightly table42" })],
        ["search (global), a fragment every event holds (trigram)", () => lead("search", { q: "ightly impor" })],
        ["log_change", () => lead("log_change", { entity_path: "grow.path", change_type: "modify", reasoning: "A write at this size" })],
        ["task_query, first page", () => lead("task_query", { project_id: "GROW" })],
        ["task_query, label", () => lead("task_query", { project_id: "GROW", label: "l3" })],
        // A key per call: an identical claim-next is a retry of the first.
        ["task_claim (claim-next)", () => lead("task_claim", { project_id: "GROW", idempotency_key: crypto.randomUUID() })],
        ["task_claim (claim-next), label", () => lead("task_claim", { project_id: "GROW", label: "l3", idempotency_key: crypto.randomUUID() })],
      ]);
      console.log(`${size.toLocaleString("en")} events and tasks: database ${((await databaseBytes(server.target)) / 2 ** 20).toFixed(1)} MiB`);
    }
    table(`Events and tasks in one tenant (${REQUESTS} sequential calls per cell)`, SIZES, rows);
    if (DOC_SIZES.length === 0 && AGENTS.length === 0) return;

    // Documents, through the document store's own surface.
    if (DOC_SIZES.length > 0) {
      const docsCall = await mcpSession(base, keys[0]!, "/mcp?toolsets=docs");
      const docs = await corpus(Math.max(...DOC_SIZES));
      const docRows: Row[] = [];
      let stored = 0;
      for (const size of DOC_SIZES.filter((s) => s <= docs.length)) {
        for (; stored < size; stored += DOC_BATCH) {
          const part = docs.slice(stored, Math.min(size, stored + DOC_BATCH));
          const r = await docsCall("docs_execute", { operations: part.map((d) => ({ op: "add", params: { name: d.name, content: d.content } })) });
          if (r.failed) throw new Error(`seeding failed: ${JSON.stringify(r).slice(0, 500)}`);
        }
        // Measured once every embedding has landed, as the docs benchmark does.
        for (let waited = 0; waited < 600; waited += 5) {
          const [row] = await querySql<{ n: number }>(`SELECT COUNT(*) AS n FROM embeddings WHERE status = 'pending'`, server.target);
          if (!row || row.n === 0) break;
          await new Promise((r) => setTimeout(r, 5000));
        }
        const search = (type: string) => () => docsCall("docs_query", { steps: [{ op: "search", params: { query: "parse options and return the default value", type } }] });
        await measure(docRows, [
          ...floor,
          ["docs keyword search", search("keyword")],
          ["docs hybrid search", search("hybrid")],
          ["docs add (one document)", () => docsCall("docs_execute", { operations: [{ op: "add", params: { name: `grow/${crypto.randomUUID()}.md`, content: docs[0]!.content } }] })],
        ]);
      }
      console.log(`with documents: database ${((await databaseBytes(server.target)) / 2 ** 20).toFixed(1)} MiB`);
      table(`Documents in one tenant (${REQUESTS} sequential calls per cell)`, DOC_SIZES, docRows);
    }

    // Agents at once: each its own session, a mixed day's calls.
    if (AGENTS.length > 0) {
      const agentRows: Row[] = [];
      const sessions: ToolCaller[] = [];
      for (const n of AGENTS) {
        while (sessions.length < n) sessions.push(await mcpSession(base, keys[sessions.length % KEYS]!));
        const calls = n * 10;
        const mixed = async (i: number) => {
          const call = sessions[i % n]!;
          const kind = i % 4;
          if (kind === 0) await call("log_change", { entity_path: `agents/a${i % n}.ts`, change_type: "modify", reasoning: "A write among many agents" });
          else if (kind === 1) await call("task_claim", { project_id: "GROW", idempotency_key: crypto.randomUUID() });
          else if (kind === 2) await call("blame", { entity_path: `table${i % 500}.col${i % 7}` });
          else await call("task_query", { project_id: "GROW", limit: 20 });
        };
        const healthz = await load(calls, n, async () => void (await (await fetch(`${base}/healthz`)).text()));
        const f = await load(calls, n, mixed);
        record(agentRows, "GET /healthz (floor), at once", healthz);
        record(agentRows, "mixed calls (log_change, task_claim, blame, task_query), at once", f);
        console.log(`${n} agents: mixed ${f.rps.toFixed(1)} calls/s, healthz ${healthz.rps.toFixed(1)} req/s`);
      }
      table(`Agents at once (10 calls each, over ${SIZES.at(-1)!.toLocaleString("en")} events and tasks)`, AGENTS, agentRows);
    }
  } finally {
    await server.close().catch((err: Error) => console.error(`cleanup: ${err.message}`));
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
