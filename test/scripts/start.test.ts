/**
 * `npm start` as a user runs it: on its own port and state, up until /healthz answers, then SIGINT
 * to `npm` alone (what a shell or process manager that signals only the job's leader does). Nothing
 * it started may outlive it, and an offline start prints no network error trace.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { freePort } from "../../scripts/dev-server";
import { ROOT } from "../../scripts/wrangler";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Every process below `root`, with its command line. */
function descendants(root: number): Array<{ pid: number; args: string }> {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/)!)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
  const found: Array<{ pid: number; args: string }> = [];
  const walk = (pid: number) => rows.filter((r) => r.ppid === pid).forEach((r) => (found.push(r), walk(r.pid)));
  walk(root);
  return found;
}

async function until(done: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return done();
}

const cleanup: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

it("npm start stops wrangler and workerd on SIGINT, and starts offline without a network error trace", { timeout: 300_000 }, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "agent-ledger-start-"));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  const port = await freePort();
  // detached: npm leads a group of its own, as a shell job does; afterAll can then remove whatever is left.
  const npm = spawn("npm", ["start", "--", "--port", String(port), "--persist-to", path.join(dir, "state")], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, XDG_CONFIG_HOME: path.join(dir, "config") },
  });
  let output = "";
  npm.stdout.on("data", (d) => (output += d));
  npm.stderr.on("data", (d) => (output += d));
  let tree: Array<{ pid: number; args: string }> = [];
  cleanup.push(() => {
    for (const p of tree) if (alive(p.pid)) process.kill(p.pid, "SIGKILL");
    try {
      process.kill(-npm.pid!, "SIGKILL");
    } catch {
      // gone
    }
  });
  const healthy = async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
    } catch {
      return false;
    }
  };
  expect(await until(healthy, 240_000), output).toBe(true);
  tree = descendants(npm.pid!);
  expect(tree.some((p) => p.args.includes("workerd"))).toBe(true);
  // The key it printed (made in the state the server reads) is accepted.
  const key = output.match(/\balk_[\w-]+/)?.[0];
  const init = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "start-test", version: "1" } } }),
  });
  expect(init.status, await init.clone().text()).toBe(200);

  process.kill(npm.pid!, "SIGINT");
  const gone = await until(() => tree.every((p) => !alive(p.pid)), 20_000);
  expect(
    tree.filter((p) => alive(p.pid)).map((p) => p.args.slice(0, 120)),
    "left running after SIGINT",
  ).toEqual([]);
  expect(gone).toBe(true);
  expect(await healthy()).toBe(false);

  expect(output).toContain(`http://127.0.0.1:${port}/mcp`);
  expect(output).toContain(`Dashboard: http://127.0.0.1:${port}/app`);
  // Offline (as on CI), miniflare's download of the Request.cf sample failed with a stack trace.
  expect(output).not.toContain("Unable to fetch the `Request.cf` object");
  expect(output).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
});
