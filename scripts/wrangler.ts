/** Runs wrangler for the project's scripts (start, keys) and the end-to-end tests. */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "..");
export const WRANGLER = path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

/**
 * Variables laid over process.env for a child process. Not NodeJS.ProcessEnv: the Worker's generated
 * types (worker-configuration.d.ts) add its wrangler.toml vars to ProcessEnv, which a child's overlay need not set.
 */
export type EnvOverlay = Record<string, string | undefined>;

/**
 * The environment of every wrangler run: no usage metrics, and no download of the sample `Request.cf`
 * object from workers.cloudflare.com, which offline prints a network error's stack trace at every start
 * (the Worker reads no `cf` field, so miniflare's built-in placeholder serves). Either can be set otherwise.
 */
export const wranglerEnv = (extra?: EnvOverlay): NodeJS.ProcessEnv => ({
  ...process.env,
  WRANGLER_SEND_METRICS: process.env.WRANGLER_SEND_METRICS ?? "false",
  CLOUDFLARE_CF_FETCH_ENABLED: process.env.CLOUDFLARE_CF_FETCH_ENABLED ?? "false",
  ...extra,
});

export interface Target {
  /** Against the deployed database instead of local state. */
  remote?: boolean;
  /** Local state folder (wrangler's --persist-to); default .wrangler/state. */
  persistTo?: string;
  /** Extra environment for the wrangler process. */
  env?: EnvOverlay;
}

const targetArgs = (t: Target) => [t.remote ? "--remote" : "--local", ...(t.persistTo && !t.remote ? ["--persist-to", t.persistTo] : [])];

/** Runs wrangler to completion (asynchronously, so a caller's own servers keep serving). */
export function wrangler(args: string[], t: Target = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRANGLER, ...args], {
      cwd: ROOT,
      env: wranglerEnv(t.env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`wrangler ${args.join(" ")} failed (${code}):\n${err || out}`))));
  });
}

export const applyMigrations = (t: Target = {}) => wrangler(["d1", "migrations", "apply", "DB", ...targetArgs(t)], { ...t, env: { ...t.env, CI: "true" } });

/** A throwaway state folder, migrated, for a server that must not see the user's `.wrangler/state`. */
export interface LocalState {
  dir: string;
  target: { persistTo: string; env: EnvOverlay };
  dispose(): Promise<void>;
}

export async function createLocalState(label: string): Promise<LocalState> {
  const dir = await mkdtemp(path.join(tmpdir(), `agent-ledger-${label}-`));
  // A private config home keeps wrangler from writing into the user's home folder.
  const target = { persistTo: path.join(dir, "state"), env: wranglerEnv({ XDG_CONFIG_HOME: path.join(dir, "config") }) };
  await applyMigrations(target);
  return { dir, target, dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** Executes SQL statements in one wrangler call. */
export async function executeSql(statements: string[], t: Target = {}): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "agent-ledger-sql-"));
  try {
    const file = path.join(dir, "run.sql");
    await writeFile(file, statements.map((s) => `${s};`).join("\n"));
    await wrangler(["d1", "execute", "DB", ...targetArgs(t), "--file", file, "--yes"], t);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs one query and returns its rows. */
export async function querySql<T>(sql: string, t: Target = {}): Promise<T[]> {
  const out = await wrangler(["d1", "execute", "DB", ...targetArgs(t), "--command", sql, "--json"], t);
  const parsed = JSON.parse(out.slice(out.indexOf("["))) as Array<{ results: T[] }>;
  return parsed[0]?.results ?? [];
}

/** Runs the `keys` command, as a user would, and returns what it printed. */
export const keysCommand = (args: string[], t: Target = {}): Promise<string> => operatorCommand("keys", args, t);

/** Runs one of the operator commands in scripts/ (`keys`, `oauth`), as a user would, and returns what it printed. */
export function operatorCommand(name: "keys" | "oauth", args: string[], t: Target = {}): Promise<string> {
  const argv = [path.join(ROOT, "scripts", `${name}.ts`), ...args, ...(t.persistTo ? ["--persist-to", t.persistTo] : [])];
  return new Promise<string>((resolve, reject) => {
    const child = spawn(path.join(ROOT, "node_modules", ".bin", "tsx"), argv, { cwd: ROOT, env: { ...process.env, ...t.env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${name} ${args[0]} failed: ${stderr || stdout}`))));
  });
}

/** Creates a key with the `keys` command, as a user would, and returns the key. */
export async function createKeyWithCommand(tenant: string, actor: string, t: Target = {}): Promise<string> {
  const out = await keysCommand(["create", "--tenant", tenant, "--actor", actor, "--quiet"], t);
  return out.trim().split("\n").pop()!;
}
