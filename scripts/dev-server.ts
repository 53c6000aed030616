/** Starts `wrangler dev` on a free loopback port (for the e2e tests and the benchmarks). */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { signalGroup } from "./process-group";
import { ROOT, WRANGLER, wranglerEnv, type EnvOverlay } from "./wrangler";

export interface DevServer {
  baseUrl: string;
  /** The process group wrangler and workerd run in (the benchmarks read workerd's CPU time through it). */
  pgid: number;
  /** What wrangler and workerd have printed so far (the Worker's console.log lines among it). */
  output(): string;
  stop(): void;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** `inspectorPort` opens wrangler's devtools inspector there (a benchmark takes CPU profiles through it). */
export async function startDevServer(opts: { persistTo: string; env?: EnvOverlay; vars?: Record<string, string>; inspectorPort?: number }): Promise<DevServer> {
  const port = await freePort();
  const vars = Object.entries(opts.vars ?? {}).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  if (opts.inspectorPort !== undefined) vars.push("--inspector-port", String(opts.inspectorPort));
  const child = spawn(
    process.execPath,
    [WRANGLER, "dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", opts.persistTo, "--show-interactive-dev-session=false", "--test-scheduled", ...vars],
    // Its own process group, so stopping it takes workerd down too.
    { cwd: ROOT, env: wranglerEnv(opts.env), detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const stop = () => {
    if (signalGroup(child.pid, "SIGTERM")) setTimeout(() => signalGroup(child.pid, "SIGKILL"), 5_000).unref();
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return { baseUrl, pgid: child.pid!, output: () => log, stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      stop();
      throw new Error(`wrangler dev did not become ready:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
