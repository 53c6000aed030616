/**
 * Where one MCP call's time goes (not a test): `npm run bench:breakdown`. Against `wrangler dev`
 * with BENCH_ROUTES=1, every answer carries a `Server-Timing` header (src/core/timing.ts) with the
 * phases of its request. Inside workerd a request's clock moves only at I/O, in whole
 * milliseconds: the I/O phases are printed as means over many calls (the rounding averages out),
 * and the CPU-only ones (the server's set-up, validation, the envelope) are timed in Node on the
 * same modules (bench/cpu-phases.ts). Beside them: workerd's CPU time per call, the client's
 * latency and the floors (`GET /healthz`, and `mcp.echo` through /mcp). Sequential calls from one
 * client, so each phase is the call's own and not a queue's.
 */
import { TIMINGS_HEADER } from "../src/core/timing";
import { cpuPhases } from "./cpu-phases";
import { pct, startBenchServer } from "./lib";

const CALLS = Number(process.env.BENCH_BREAKDOWN_CALLS ?? 300);
const WARMUP = 30;

/** The phases in the order a request meets them (src/core/timing.ts names them); `cpu` ones are timed in Node. */
const PHASES: Array<[string, string, "io" | "cpu"]> = [
  ["edge", "origin check and credential (OAuth provider)", "io"],
  ["caller", "identity and grant check", "io"],
  ["session", "session record (Durable Object), beside the next", "io"],
  ["limit", "rate-limit unit (Durable Object)", "io"],
  ["parse", "body read and JSON parse", "io"],
  ["build", "MCP server set-up for the request (CPU)", "cpu"],
  ["validate", "input schema and bounds (CPU)", "cpu"],
  ["pay", "the tool's own rate-limit units", "io"],
  ["idempotency", "idempotency record", "io"],
  ["run", "the tool's own work (its D1 reads and writes)", "io"],
  ["envelope", "output schema, cap and rendering (CPU)", "cpu"],
];

type Timings = Map<string, number>;

function parseTimings(header: string | null): Timings {
  const out: Timings = new Map();
  for (const part of (header ?? "").split(",")) {
    const [name, ...params] = part.trim().split(";");
    const dur = params.find((p) => p.startsWith("dur="));
    if (name && dur) out.set(name, Number(dur.slice(4)));
  }
  return out;
}

const median = (xs: number[]) =>
  pct(
    [...xs].sort((a, b) => a - b),
    50,
  );
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

async function main(): Promise<void> {
  const server = await startBenchServer();
  try {
    const key = await server.key("breakdown", "agent");
    const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", [TIMINGS_HEADER]: "1" };
    const init = await fetch(`${server.base}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } }),
    });
    await init.text();
    const session = { ...headers, "Mcp-Session-Id": init.headers.get("Mcp-Session-Id")! };
    let id = 1;
    const call = async (name: string, args: Record<string, unknown>): Promise<{ ms: number; timings: Timings; result: Record<string, unknown> }> => {
      const t0 = performance.now();
      const res = await fetch(`${server.base}/mcp?toolsets=all`, {
        method: "POST",
        headers: session,
        body: JSON.stringify({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: args } }),
      });
      const body = (await res.json()) as { result?: { isError?: boolean; structuredContent?: Record<string, unknown> } };
      const ms = performance.now() - t0;
      if (!res.ok || !body.result || body.result.isError) throw new Error(`${name} failed: ${JSON.stringify(body).slice(0, 500)}`);
      return { ms, timings: parseTimings(res.headers.get("Server-Timing")), result: body.result.structuredContent ?? {} };
    };

    await call("project_create", { title: "Breakdown", key: "BRK" });
    await call("task_create_many", { project_id: "BRK", tasks: Array.from({ length: 100 }, (_, i) => ({ title: `Task ${i}` })) });
    for (let i = 0; i < 200; i++) await call("log_change", { entity_path: `users.col${i % 20}`, change_type: "add", reasoning: `Seed ${i}` });

    const healthz: number[] = [];
    for (let i = 0; i < CALLS + WARMUP; i++) {
      const t0 = performance.now();
      await (await fetch(`${server.base}/healthz`)).text();
      if (i >= WARMUP) healthz.push(performance.now() - t0);
    }

    let n = 0;
    const cases: Array<[string, string, () => Record<string, unknown>]> = [
      ["mcp.echo (MCP floor)", "mcp.echo", () => ({ message: "ping" })],
      ["blame", "blame", () => ({ entity_path: "users.col3" })],
      ["log_change", "log_change", () => ({ entity_path: `bench.path${n++ % 50}`, change_type: "modify", reasoning: "Measured write" })],
      ["task_claim (claim-next)", "task_claim", () => ({ project_id: "BRK" })],
    ];
    const rows: Array<{ label: string; tool: string; client: number; phases: Map<string, number>; total: number; cpu: number; args: Record<string, unknown>; result: Record<string, unknown> }> = [];
    for (const [label, tool, args] of cases) {
      const client: number[] = [];
      const phases = new Map<string, number[]>();
      const totals: number[] = [];
      let cpu = 0;
      let sample: { args: Record<string, unknown>; result: Record<string, unknown> } | undefined;
      for (let i = 0; i < CALLS + WARMUP; i++) {
        const a = args();
        // workerd's CPU is read once before the measured calls and once after: reading it walks /proc, which would slow the calls beside it.
        if (i === WARMUP) cpu = await server.workerdCpuMs();
        const r = await call(tool, a);
        const { ok: _ok, rate_limit: _rl, idempotent_replay: _r, ...result } = r.result;
        sample ??= { args: a, result };
        // Each claim's task goes back to the pool (not measured), so every measured call claims one.
        const claimed = tool === "task_claim" ? (r.result.task as { id: string } | null) : null;
        if (claimed) await call("task_release", { task_id: claimed.id });
        if (i < WARMUP) continue;
        client.push(r.ms);
        totals.push(r.timings.get("total") ?? 0);
        for (const [name] of PHASES) {
          const list = phases.get(name) ?? [];
          list.push(r.timings.get(name) ?? 0);
          phases.set(name, list);
        }
      }
      // The claim case's releases run between its calls and count in its CPU: they are left in, and said so in the README.
      cpu = (await server.workerdCpuMs()) - cpu;
      rows.push({ label, tool, client: median(client), phases: new Map([...phases].map(([k, v]) => [k, mean(v)])), total: mean(totals), cpu: cpu / CALLS, ...sample! });
    }
    const cpuOnly = await cpuPhases(rows.map((r) => ({ tool: r.tool, args: r.args, result: r.result })));

    console.log(`\n## Where one call's time goes (${CALLS} sequential calls each; ms: I/O phases are means, CPU phases medians timed in Node)\n`);
    console.log(`GET /healthz p50 ${median(healthz).toFixed(2)} ms (the floor).\n`);
    console.log(`| phase | ${rows.map((r) => r.label).join(" | ")} |`);
    console.log(`|---|${rows.map(() => "---").join("|")}|`);
    const value = (r: (typeof rows)[number], name: string, kind: "io" | "cpu") =>
      kind === "cpu" ? (cpuOnly.get(r.tool)?.[name as "validate" | "build" | "envelope"] ?? 0) : (r.phases.get(name) ?? 0);
    for (const [name, what, kind] of PHASES) console.log(`| ${name}: ${what} | ${rows.map((r) => value(r, name, kind).toFixed(2)).join(" | ")} |`);
    console.log(`| **in the Worker, wall** (Server-Timing total, mean) | ${rows.map((r) => r.total.toFixed(2)).join(" | ")} |`);
    console.log(`| **workerd CPU per call** (all its threads) | ${rows.map((r) => r.cpu.toFixed(2)).join(" | ")} |`);
    console.log(`| **at the client** (median) | ${rows.map((r) => r.client.toFixed(2)).join(" | ")} |`);
  } finally {
    await server.close();
  }
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
