/**
 * The CPU-only phases of one MCP call, timed in Node on the server's own modules (bench/breakdown.ts
 * runs it): inside workerd a request's clock moves only at I/O, so validation, the server's set-up
 * and the envelope read 0 there. Bundled with esbuild, `cloudflare:workers` replaced by empty
 * classes (nothing here touches a binding).
 */
import { build } from "esbuild";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const ENTRY = `
import { compile } from "../src/core/listing";
import { checkArgShape } from "../src/core/bounds";
import { normalizeArgs, parseArgs } from "../src/core/inputs";
import { capResponse } from "../src/core/response-cap";
import { findTool, selectTools } from "../src/server/registry";
import { buildServer } from "../src/server/server";
export { compile, checkArgShape, normalizeArgs, parseArgs, capResponse, findTool, selectTools, buildServer };
`;

const STUB = `export class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } }
export class WorkflowEntrypoint { constructor(ctx, env) { this.ctx = ctx; this.env = env; } }
export const env = {};
export class NonRetryableError extends Error {}`;

/** Median microseconds of `fn` over `n` runs after a warm-up. */
function micros(n: number, fn: () => unknown): number {
  for (let i = 0; i < 50; i++) fn();
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    xs.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  xs.sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)]!;
}

async function microsAsync(n: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await fn();
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    xs.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  xs.sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)]!;
}

export interface CpuCase {
  tool: string;
  args: Record<string, unknown>;
  /** The tool's answer from a live call, without the envelope's own fields. */
  result: Record<string, unknown>;
}

/** Validation, the per-request server set-up and the envelope, in ms, per case. */
export async function cpuPhases(cases: CpuCase[], runs = 2000): Promise<Map<string, { validate: number; build: number; envelope: number }>> {
  const dir = await mkdtemp(path.join(import.meta.dirname, ".cpu-"));
  try {
    await writeFile(path.join(dir, "entry.ts"), ENTRY.replaceAll("../src/", `${path.relative(dir, path.join(import.meta.dirname, "../src"))}/`));
    await writeFile(path.join(dir, "cf-stub.js"), STUB);
    const out = path.join(await mkdtemp(path.join(tmpdir(), "agent-ledger-cpu-")), "phases.mjs");
    await build({
      entryPoints: [path.join(dir, "entry.ts")],
      outfile: out,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      alias: { "cloudflare:workers": path.join(dir, "cf-stub.js"), "cloudflare:workflows": path.join(dir, "cf-stub.js") },
      // The parsers' grammars are never run here; their bytes need only load.
      loader: { ".wasm": "binary" },
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
      logLevel: "error",
    });
    const m = await import(pathToFileURL(out).href);
    const tools = m.selectTools({ toolsets: ["all"], readonly: false });
    const ctx = { env: {}, tenantId: "t", actorId: "a", actorName: "bench", sessionId: "", clock: { now: () => new Date() } };
    const options = { era: "legacy", listing: "lean", surface: { toolsets: ["all"], readonly: false, compact: false }, origin: "http://127.0.0.1", stateKey: "k".repeat(64) };
    const out2 = new Map<string, { validate: number; build: number; envelope: number }>();
    const build_ = (await microsAsync(Math.min(runs, 300), () => m.buildServer(ctx, tools, options))) / 1000;
    for (const c of cases) {
      const def = m.findTool(c.tool);
      const validate = micros(runs, () => {
        const { input } = m.compile(def);
        m.checkArgShape(c.args);
        m.parseArgs(input, m.normalizeArgs(c.args, input), def.name);
      });
      const envelope = micros(runs, () => {
        const parsed = def.output.parse(c.result);
        const { value } = m.capResponse(parsed);
        JSON.stringify({ content: [{ type: "text", text: JSON.stringify({ ok: true, ...value }) }], structuredContent: { ok: true, ...value } });
      });
      out2.set(c.tool, { validate: validate / 1000, build: build_, envelope: envelope / 1000 });
    }
    await rm(path.dirname(out), { recursive: true, force: true });
    return out2;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
