/**
 * Starts `wrangler dev` on a free loopback port against fresh local state, with keys made by
 * the `keys` command exactly as a user makes them, and stops the whole process group after.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { applyMigrations, ROOT } from "../../scripts/wrangler";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    keyA: string;
    keyB: string;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(" ")}: ${err || out}`))));
  });
}

let child: ChildProcess | undefined;
let stateDir = "";

export async function setup(project: TestProject): Promise<void> {
  stateDir = await mkdtemp(path.join(tmpdir(), "agent-ledger-e2e-"));
  const persist = path.join(stateDir, "state");
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", XDG_CONFIG_HOME: path.join(stateDir, "config") };
  await applyMigrations({ persistTo: persist, env });
  const tsx = path.join(ROOT, "node_modules", ".bin", "tsx");
  const createKey = async (tenant: string, actor: string) =>
    (await run(tsx, ["scripts/keys.ts", "create", "--tenant", tenant, "--actor", actor, "--quiet", "--persist-to", persist], env)).trim().split("\n").pop()!;
  const keyA = await createKey("e2e-a", "claude-code");
  const keyB = await createKey("e2e-b", "cursor");

  const port = await freePort();
  child = spawn(process.execPath, [path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"), "dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", persist, "--show-interactive-dev-session=false"], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(`${baseUrl}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`wrangler dev did not become ready:\n${log}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  project.provide("baseUrl", baseUrl);
  project.provide("keyA", keyA);
  project.provide("keyB", keyB);
}

export async function teardown(): Promise<void> {
  if (child?.pid) {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}
