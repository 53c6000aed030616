/**
 * Where one tool call's CPU goes in the Worker's isolate (not a test): `npm run bench:profile`.
 * Starts `wrangler dev` with its devtools inspector on a loopback port, runs sequential calls of
 * each tool (BENCH_PROFILE_TOOLS, default `mcp.echo,blame,log_change`; `task_claim` claims the next
 * of as many tasks as there are calls) under V8's sampling
 * profiler, and prints per tool the self time per call of the hottest functions and of each
 * package or source folder. Only the Worker's isolate is sampled (its Durable Objects included);
 * workerd's own HTTP, and local D1 and KV, run outside it, so compare with `bench:breakdown`'s
 * workerd CPU per call for the rest.
 */
import { copyFile, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { freePort } from "../scripts/dev-server";
import { ROOT } from "../scripts/wrangler";
import { mcpSession, startBenchServer } from "./lib";

const CALLS = Number(process.env.BENCH_PROFILE_CALLS ?? 300);
const TOOLS = (process.env.BENCH_PROFILE_TOOLS ?? "mcp.echo,blame,log_change").split(",");
const TOP = Number(process.env.BENCH_PROFILE_TOP ?? 25);
/**
 * A folder to keep each tool's profile in (`<tool>.cpuprofile`, which Chrome's devtools open), with
 * the bundle wrangler ran and its source map, which turn the profile's lines into source files.
 */
const SAVE = process.env.BENCH_PROFILE_SAVE;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A Chrome DevTools Protocol connection: `send` resolves with the method's result. */
async function devtools(inspectorPort: number) {
  const deadline = Date.now() + 30_000;
  let targets: Array<{ webSocketDebuggerUrl: string }> = [];
  while (targets.length === 0) {
    targets = await fetch(`http://127.0.0.1:${inspectorPort}/json`)
      .then((r) => r.json() as Promise<typeof targets>)
      .catch(() => []);
    if (targets.length === 0) {
      if (Date.now() > deadline) throw new Error(`no inspector target on port ${inspectorPort}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  // The inspector refuses a connection without a loopback Origin; undici's WebSocket takes headers.
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl, { headers: { Origin: "http://localhost" } } as unknown as string[]);
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve);
    ws.addEventListener("error", reject);
  });
  let id = 0;
  const waiting = new Map<number, (v: unknown) => void>();
  ws.addEventListener("message", (e: MessageEvent) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result);
  });
  return {
    send: <T>(method: string, params: Record<string, unknown> = {}) =>
      new Promise<T>((resolve) => {
        const n = ++id;
        waiting.set(n, resolve as (v: unknown) => void);
        ws.send(JSON.stringify({ id: n, method, params }));
      }),
    close: () => ws.close(),
  };
}

/** Where a function lives: its package under node_modules, else its source folder, from the bundle's source map when it has one. */
function owner(frame: ProfileNode["callFrame"]): string {
  const path = frame.url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1]!;
  const src = /\/(src\/[^/]+(?:\/[^/]+)?)\//.exec(path);
  if (src) return src[1]!;
  return path === "" ? `(${frame.functionName || "program"})` : path.replace(/^.*\//, "");
}

/** Self time (ms) by function and by owner, from the samples. */
function selfTimes(profile: Profile): { byFunction: Map<string, number>; byOwner: Map<string, number>; totalMs: number } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  let totalMs = 0;
  profile.samples.forEach((nodeId, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const frame = nodes.get(nodeId)!.callFrame;
    if (frame.functionName === "(idle)") return;
    totalMs += ms;
    const fn = `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*\//, "")}:${frame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    const who = owner(frame);
    byOwner.set(who, (byOwner.get(who) ?? 0) + ms);
  });
  return { byFunction, byOwner, totalMs };
}

function printTop(title: string, times: Map<string, number>, calls: number): void {
  console.log(`\n| ${title} | ms per call |\n|---|---|`);
  for (const [name, ms] of [...times].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`| ${name} | ${(ms / calls).toFixed(3)} |`);
}

/** Copies the newest bundle wrangler dev built (under .wrangler/tmp, removed when it stops) into `dir`. */
async function keepBundle(dir: string): Promise<void> {
  const tmp = path.join(ROOT, ".wrangler", "tmp");
  const builds = await Promise.all((await readdir(tmp)).filter((d) => d.startsWith("dev-")).map(async (d) => ({ d, at: (await stat(path.join(tmp, d))).mtimeMs })));
  const newest = builds.sort((a, b) => b.at - a.at)[0];
  if (!newest) return;
  for (const file of ["index.js", "index.js.map"]) await copyFile(path.join(tmp, newest.d, file), path.join(dir, file));
}

async function main(): Promise<void> {
  const inspectorPort = await freePort();
  const server = await startBenchServer({}, inspectorPort);
  const inspector = await devtools(inspectorPort);
  try {
    const call = await mcpSession(server.base, await server.key("profile", "agent"), "/mcp?toolsets=all");
    for (let i = 0; i < 200; i++) await call("log_change", { entity_path: `users.col${i % 20}`, change_type: "add", reasoning: `Seed ${i}` });
    if (TOOLS.includes("task_claim")) {
      // One task per claim-next call, warm-up included, so no release runs among the sampled calls.
      await call("project_create", { title: "Profile", key: "PRF" });
      for (let left = CALLS + 30; left > 0; left -= 100) {
        await call("task_create_many", { project_id: "PRF", tasks: Array.from({ length: Math.min(100, left) }, (_, i) => ({ title: `Task ${left}-${i}` })) });
      }
    }
    let n = 0;
    const args: Record<string, () => Record<string, unknown>> = {
      "mcp.echo": () => ({ message: "ping" }),
      blame: () => ({ entity_path: "users.col3" }),
      log_change: () => ({ entity_path: `bench.path${n++ % 50}`, change_type: "modify", reasoning: "Measured write" }),
      task_claim: () => ({ project_id: "PRF" }),
    };
    // The floor beside the calls: workerd's CPU for a bare GET /healthz (not profiled).
    for (let i = 0; i < 30; i++) await (await fetch(`${server.base}/healthz`)).text();
    const floor0 = await server.workerdCpuMs();
    for (let i = 0; i < CALLS; i++) await (await fetch(`${server.base}/healthz`)).text();
    console.log(`## GET /healthz: ${CALLS} sequential requests; all of workerd ${(((await server.workerdCpuMs()) - floor0) / CALLS).toFixed(2)} ms per request`);
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval: 100 });
    for (const tool of TOOLS) {
      const make = args[tool] ?? (() => ({}));
      for (let i = 0; i < 30; i++) await call(tool, make());
      await inspector.send("Profiler.start");
      const cpu0 = await server.workerdCpuMs();
      for (let i = 0; i < CALLS; i++) await call(tool, make());
      const workerdCpu = ((await server.workerdCpuMs()) - cpu0) / CALLS;
      const { profile } = await inspector.send<{ profile: Profile }>("Profiler.stop");
      if (SAVE) await writeFile(path.join(SAVE, `${tool}.cpuprofile`), JSON.stringify(profile));
      const { byFunction, byOwner, totalMs } = selfTimes(profile);
      console.log(`\n## ${tool}: ${CALLS} sequential calls; the isolate's CPU ${(totalMs / CALLS).toFixed(2)} ms per call, all of workerd ${workerdCpu.toFixed(2)} ms`);
      printTop("package or folder (self time)", byOwner, CALLS);
      printTop("function (self time)", byFunction, CALLS);
    }
    if (SAVE) await keepBundle(SAVE);
  } finally {
    inspector.close();
    await server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
