/**
 * The cost of hostile input, per tool (`npm run bench:fuzz`): every case of the fuzz walk
 * (test/fuzz/cases.ts: oversized, 5,000-deep, wrong-typed and control-character arguments for each
 * parameter of each tool on /mcp?toolsets=all) is sent once over HTTP to wrangler dev on loopback,
 * one at a time. For each tool it prints the worst case by workerd CPU time (from the scheduler's
 * counters, so it is CPU, not wall time), with the wall time, the response size and what came back.
 */
import { argsJson, fuzzCases, type FuzzCase } from "../test/fuzz/cases";
import { startBenchServer } from "./lib";

interface Outcome {
  c: FuzzCase;
  cpuMs: number;
  wallMs: number;
  status: number;
  bytes: number;
  code: string;
}

async function main(): Promise<void> {
  const server = await startBenchServer();
  const only = process.env.BENCH_FUZZ_TOOLS?.split(",").filter(Boolean);
  try {
    const key = await server.key("fuzz", "fuzz-agent");
    const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18" };
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
        let code = `http_${res.status}`;
        try {
          const body = JSON.parse(text) as { result?: { structuredContent?: { ok?: boolean; error?: { code?: string } } }; error?: { code?: number } };
          code = body.result?.structuredContent?.error?.code ?? (body.result?.structuredContent?.ok ? "ok" : body.error ? `rpc_${body.error.code}` : code);
        } catch {
          // not JSON: keep the HTTP status
        }
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
    console.log(`Answers over all cases: ${[...codes.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(", ")}.`);
  } finally {
    await server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
