/**
 * The cost of hostile input, per tool (`npm run bench:fuzz`), over HTTP to wrangler dev on
 * loopback, one call at a time. Two parts (BENCH_FUZZ_PARTS=schema,hostile; both by default):
 * - schema: every case of the fuzz walk (test/fuzz/cases.ts: oversized, 5,000-deep, wrong-typed
 *   and control-character arguments for each parameter of each tool on /mcp?toolsets=all), which
 *   the input bounds should refuse;
 * - hostile: well-formed calls whose content is built to be expensive (test/fuzz/hostile.ts:
 *   bracket markdown, import-line sources, a PDF whose pages share one huge stream, key-shaped
 *   strings, long diffs, deep YAML, pathological grep patterns), which reach the parsers,
 *   extractors and matchers; while each runs, another tenant calls mcp.echo over and over, and
 *   the slowest of those is reported beside it.
 * For each call it reads workerd CPU time (the scheduler's counters, so CPU, not wall time) and
 * the wall time, the response size and what came back; it prints the worst case per tool and the
 * worst case overall.
 */
import { argsJson, fuzzCases, type FuzzCase } from "../test/fuzz/cases";
import { DEFAULT_SIZES, hostileCases, type HostileCall, type HostileCase, type HostileSizes } from "../test/fuzz/hostile";
import { type BenchServer, startBenchServer } from "./lib";

interface Outcome {
  c: FuzzCase;
  cpuMs: number;
  wallMs: number;
  status: number;
  bytes: number;
  code: string;
}

const PROTOCOL = "2025-06-18";

/** The answer's envelope code: `ok`, the error code, `rpc_<code>` or `http_<status>`. */
function answerCode(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { result?: { structuredContent?: { ok?: boolean; error?: { code?: string } } }; error?: { code?: number } };
    return body.result?.structuredContent?.error?.code ?? (body.result?.structuredContent?.ok ? "ok" : body.error ? `rpc_${body.error.code}` : `http_${status}`);
  } catch {
    return `http_${status}`;
  }
}

async function schemaPart(server: BenchServer, only: string[] | undefined): Promise<void> {
  const key = await server.key("fuzz", "fuzz-agent");
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "MCP-Protocol-Version": PROTOCOL };
  const url = `${server.base}/mcp?toolsets=all`;
  const rpc = async (id: number, method: string, params: unknown, argsText?: string) => {
    let body = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    // Arguments go in as text: the deep case cannot pass through JSON.stringify.
    if (argsText) body = body.replace('"arguments":"__ARGS__"', `"arguments":${argsText}`);
    const res = await fetch(url, { method: "POST", headers, body });
    const text = await res.text();
    return { res, text };
  };
  const listed = JSON.parse((await rpc(0, "tools/list", {})).text) as { result: { tools: Array<{ name: string; inputSchema: Record<string, unknown> }> } };
  const tools = listed.result.tools.filter((t) => !only || only.includes(t.name));
  const huge = "a".repeat(1_000_000);
  const worst = new Map<string, Outcome>();
  let n = 0;
  const codes = new Map<string, number>();
  for (const tool of tools) {
    for (const c of fuzzCases(tool, huge)) {
      const cpu0 = await server.workerdCpuMs();
      const t0 = performance.now();
      const { res, text } = await rpc(++n, "tools/call", { name: c.tool, arguments: "__ARGS__" }, argsJson(c.args));
      const wallMs = performance.now() - t0;
      // Let anything the request scheduled after its response finish before reading the counter.
      await new Promise((r) => setTimeout(r, 5));
      const cpuMs = (await server.workerdCpuMs()) - cpu0;
      const code = answerCode(res.status, text);
      codes.set(code, (codes.get(code) ?? 0) + 1);
      const o: Outcome = { c, cpuMs, wallMs, status: res.status, bytes: text.length, code };
      const w = worst.get(c.tool);
      if (!w || o.cpuMs > w.cpuMs) worst.set(c.tool, o);
    }
  }
  console.log(`\n## Worst hostile input per tool (${n} cases over ${tools.length} tools, one at a time)\n`);
  console.log("| tool | worst case | workerd CPU ms | wall ms | response bytes | answer |");
  console.log("|---|---|---|---|---|---|");
  const rows = [...worst.values()].sort((a, b) => b.cpuMs - a.cpuMs);
  for (const o of rows) {
    console.log(`| ${o.c.tool} | ${o.c.kind} \`${o.c.field}\` | ${o.cpuMs.toFixed(1)} | ${o.wallMs.toFixed(1)} | ${o.bytes} | ${o.code} |`);
  }
  const all = rows.map((o) => o.cpuMs).sort((a, b) => a - b);
  console.log(`\nWorst per tool: max ${all.at(-1)?.toFixed(1)} ms CPU, median ${all[Math.floor(all.length / 2)]?.toFixed(1)} ms.`);
  console.log(
    `Answers over all cases: ${[...codes.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}.`,
  );
}

/** BENCH_FUZZ_SIZES=keys=10000,pdfStreamBytes=10485760 overrides the hostile content's sizes. */
function sizesFromEnv(): HostileSizes {
  const sizes = { ...DEFAULT_SIZES };
  for (const pair of (process.env.BENCH_FUZZ_SIZES ?? "").split(",").filter(Boolean)) {
    const [k, v] = pair.split("=");
    if (!k || !(k in sizes) || !Number.isInteger(Number(v)) || Number(v) <= 0) throw new Error(`BENCH_FUZZ_SIZES: '${pair}' is not one of ${Object.keys(sizes).join(", ")} = a positive integer`);
    sizes[k as keyof HostileSizes] = Number(v);
  }
  return sizes;
}

interface HostileOutcome {
  c: HostileCase;
  cpuMs: number;
  wallMs: number;
  /** The slowest mcp.echo another tenant made while the call ran. */
  probeMaxMs: number;
  probes: number;
  bytes: number;
  code: string;
  /** The answer says it cut or skipped something (truncated, a warning, a note). */
  cut: boolean;
}

/** A 2025 session on one path, answering raw tools/call with timing; one per path and key. */
async function rawSession(base: string, key: string, path: string) {
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "MCP-Protocol-Version": PROTOCOL };
  const init = await fetch(`${base}${path}`, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "bench-fuzz", version: "1" } } }),
  });
  await init.text();
  const session = init.headers.get("Mcp-Session-Id") ?? "";
  let id = 1;
  return async (name: string, args: Record<string, unknown>, timeoutMs: number) => {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { ...headers, "Mcp-Session-Id": session },
      body: JSON.stringify({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: args } }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, text: await res.text() };
  };
}

async function hostilePart(server: BenchServer, only: string[] | undefined): Promise<void> {
  const timeoutMs = Number(process.env.BENCH_FUZZ_TIMEOUT_MS ?? 120_000);
  const sizes = sizesFromEnv();
  const cases = (await hostileCases(sizes, `h${Date.now()}`)).filter((c) => !only || only.some((t) => c.tool.startsWith(t)));
  const key = await server.key("fuzz-hostile", "fuzz-agent");
  const probeKey = await server.key("fuzz-probe", "probe-agent");
  const sessions = new Map<string, Awaited<ReturnType<typeof rawSession>>>();
  const sessionFor = async (path: string) => {
    let s = sessions.get(path);
    if (!s) sessions.set(path, (s = await rawSession(server.base, key, path)));
    return s;
  };
  const probe = await rawSession(server.base, probeKey, "/mcp?toolsets=docs");
  const call = async (c: HostileCall) => (await sessionFor(c.path))(c.name, c.args, timeoutMs);
  const outcomes: HostileOutcome[] = [];
  for (const c of cases) {
    for (const s of c.setup ?? []) {
      const r = await call(s).catch((err: Error) => ({ status: 0, text: err.message }));
      if (answerCode(r.status, r.text) !== "ok") console.warn(`setup of ${c.tool} (${c.label}) answered ${answerCode(r.status, r.text)}`);
    }
    const cpu0 = await server.workerdCpuMs();
    const t0 = performance.now();
    let done = false;
    const probeTimes: number[] = [];
    // Another tenant's cheapest call, again and again while the hostile one runs.
    const probing = (async () => {
      while (!done) {
        const p0 = performance.now();
        await probe("mcp.echo", { message: "ping" }, timeoutMs).catch(() => undefined);
        probeTimes.push(performance.now() - p0);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const answer = await call(c).catch((err: Error) => ({ status: 0, text: err.name === "TimeoutError" ? "timeout" : err.message }));
    const wallMs = performance.now() - t0;
    done = true;
    await probing;
    await new Promise((r) => setTimeout(r, 5));
    const cpuMs = (await server.workerdCpuMs()) - cpu0;
    const code = answer.text === "timeout" ? `timeout_${timeoutMs}ms` : answerCode(answer.status, answer.text);
    const cut = /"(truncated|truncation|warnings|note|cut)"\s*:\s*(true|\[\s*"|\{|")/.test(answer.text);
    outcomes.push({ c, cpuMs, wallMs, probeMaxMs: Math.max(0, ...probeTimes), probes: probeTimes.length, bytes: answer.text.length, code, cut });
    console.log(`  ${c.tool} | ${c.label}: ${cpuMs.toFixed(0)} ms CPU, ${wallMs.toFixed(0)} ms wall, echo max ${Math.max(0, ...probeTimes).toFixed(0)} ms, ${code}`);
  }
  const worst = new Map<string, HostileOutcome>();
  for (const o of outcomes) {
    const w = worst.get(o.c.tool);
    if (!w || o.wallMs > w.wallMs) worst.set(o.c.tool, o);
  }
  const sizeText = Object.entries(sizes)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
  console.log(`\n## Hostile content: the slowest call per tool (${outcomes.length} calls, one at a time; ${sizeText})\n`);
  console.log("| tool | slowest content | wall ms | workerd CPU ms | another tenant's mcp.echo, max ms (calls) | response bytes | answer | says what was cut |");
  console.log("|---|---|---|---|---|---|---|---|");
  const rows = [...worst.values()].sort((a, b) => b.wallMs - a.wallMs);
  for (const o of rows) {
    console.log(`| ${o.c.tool} | ${o.c.label} | ${o.wallMs.toFixed(0)} | ${o.cpuMs.toFixed(0)} | ${o.probeMaxMs.toFixed(0)} (${o.probes}) | ${o.bytes} | ${o.code} | ${o.cut ? "yes" : "no"} |`);
  }
  const top = rows[0];
  if (top) {
    const probeWorst = outcomes.reduce((m, o) => Math.max(m, o.probeMaxMs), 0);
    console.log(`\nWorst case per isolate: ${top.c.tool} with ${top.c.label}: ${top.wallMs.toFixed(0)} ms wall, ${top.cpuMs.toFixed(0)} ms CPU (${top.code}).`);
    console.log(`Another tenant's mcp.echo waited at most ${probeWorst.toFixed(0)} ms during any hostile call.`);
  }
}

async function main(): Promise<void> {
  const parts = (process.env.BENCH_FUZZ_PARTS ?? "schema,hostile").split(",").filter(Boolean);
  const only = process.env.BENCH_FUZZ_TOOLS?.split(",").filter(Boolean);
  const server = await startBenchServer();
  try {
    if (parts.includes("schema")) await schemaPart(server, only);
    if (parts.includes("hostile")) await hostilePart(server, only);
  } finally {
    await server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
