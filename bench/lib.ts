/** What the benchmark scripts share: a server on fresh state, MCP sessions, and a load loop. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startDevServer } from "../scripts/dev-server";
import { applyMigrations, createKeyWithCommand, querySql, type Target } from "../scripts/wrangler";

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
}

export const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Runs `total` calls of `once` from `concurrency` workers; a bounded loop, timed per call. */
export async function load(total: number, concurrency: number, once: (i: number) => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t0 = performance.now();
        await once(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { rps: total / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99) };
}

export interface BenchServer {
  base: string;
  /** CPU time (ms) workerd has used so far, summed over its threads. */
  workerdCpuMs(): Promise<number>;
  target: Target;
  key(tenant: string, actor: string): Promise<string>;
  tenantId(slug: string): Promise<string>;
  /** What wrangler dev has printed so far (the Worker's console.log lines among it). */
  output(): string;
  close(): Promise<void>;
}

/**
 * Migrated temporary state and `wrangler dev` with the benchmark routes mounted. Rate limits are
 * off (0): the benchmarks measure the server, and 32 clients at full speed are a load test, not abuse.
 * `vars` adds Worker variables (a benchmark that needs GitHub points GITHUB_API_URL at a loopback fake).
 */
export async function startBenchServer(vars: Record<string, string> = {}, inspectorPort?: number): Promise<BenchServer> {
  const dir = await mkdtemp(path.join(tmpdir(), "agent-ledger-bench-"));
  const target: Target = { persistTo: path.join(dir, "state"), env: { XDG_CONFIG_HOME: path.join(dir, "config") } };
  await applyMigrations(target);
  const server = await startDevServer({
    persistTo: target.persistTo!,
    env: target.env,
    vars: { ...vars, BENCH_ROUTES: "1", RATE_LIMIT_KEY_PER_MIN: "0", RATE_LIMIT_TENANT_PER_MIN: "0" },
    inspectorPort,
  });
  return {
    base: server.baseUrl,
    workerdCpuMs: () => groupCpuMs(server.pgid, "workerd"),
    target,
    key: (tenant, actor) => createKeyWithCommand(tenant, actor, target),
    tenantId: async (slug) => (await querySql<{ id: string }>(`SELECT id FROM tenants WHERE slug = '${slug.replace(/[^a-z0-9._-]/g, "")}'`, target))[0]!.id,
    output: server.output,
    close: async () => {
      server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * CPU time of the processes named `comm` in a process group, from the scheduler's per-thread
 * nanosecond counters (/proc/<pid>/task/<tid>/schedstat): finer than the 10 ms ticks of /proc/<pid>/stat.
 */
async function groupCpuMs(pgid: number, comm: string): Promise<number> {
  let ns = 0;
  for (const pid of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    const close = stat.lastIndexOf(")");
    if (!stat || stat.slice(stat.indexOf("(") + 1, close) !== comm) continue;
    if (Number(stat.slice(close + 2).split(" ")[2]) !== pgid) continue;
    for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
      const sched = await readFile(`/proc/${pid}/task/${tid}/schedstat`, "utf8").catch(() => "0");
      ns += Number(sched.split(" ")[0]);
    }
  }
  return ns / 1e6;
}

export type ToolCaller = (name: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** Opens an MCP session for a key and returns a raw JSON-RPC tools/call function (fresh ids). */
export async function mcpSession(base: string, key: string, path = "/mcp"): Promise<ToolCaller> {
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
  const init = await fetch(`${base}${path}`, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } }),
  });
  await init.text();
  const sessionId = init.headers.get("Mcp-Session-Id")!;
  let id = 1;
  return async (name, args) => {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { ...headers, "Mcp-Session-Id": sessionId },
      // Each call gets its own JSON-RPC id: the same id would make work-ledger writes replay.
      body: JSON.stringify({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: args } }),
    });
    const body = (await res.json()) as { result?: { isError?: boolean; structuredContent?: Record<string, unknown> } };
    if (!res.ok || !body.result || body.result.isError) throw new Error(`${name} failed: ${JSON.stringify(body)}`);
    return body.result.structuredContent ?? {};
  };
}

/**
 * A tools/call function on MCP 2026-07-28, which has no session: each call carries the revision's
 * `_meta` envelope and headers, and no session object is consulted.
 */
export function statelessCaller(base: string, key: string, path = "/mcp"): ToolCaller {
  const revision = "2026-07-28";
  const envelope = { "io.modelcontextprotocol/protocolVersion": revision, "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} };
  let id = 1;
  return async (name, args) => {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${key}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": revision,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        // A write's project and repository ride in headers too (x-mcp-header); a read ignores them.
        ...(typeof args.project_id === "string" ? { "Mcp-Param-Project": args.project_id } : {}),
        ...(typeof args.repo === "string" ? { "Mcp-Param-Repository": args.repo } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: args, _meta: envelope } }),
    });
    const body = (await res.json()) as { result?: { isError?: boolean; structuredContent?: Record<string, unknown> } };
    if (!res.ok || !body.result || body.result.isError) throw new Error(`${name} failed: ${JSON.stringify(body)}`);
    return body.result.structuredContent ?? {};
  };
}

/**
 * A tools/call function over the MCP SDK's own client (Streamable HTTP), as an agent connects:
 * the envelope's structuredContent of a call that succeeded, or an error naming the tool.
 * `timeoutMs` is how long one call may take (the SDK's own default is 60 s).
 */
export async function sdkSession(base: string, key: string, path = "/mcp", timeoutMs = 60_000): Promise<{ call: ToolCaller; close(): Promise<void> }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}${path}`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(transport);
  return {
    call: async (name, args) => {
      const r = await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs });
      if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.structuredContent ?? r.content).slice(0, 1000)}`);
      return (r.structuredContent ?? {}) as Record<string, unknown>;
    },
    close: () => client.close(),
  };
}
