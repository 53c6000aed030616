/**
 * `npm start [-- --port <n>] [--persist-to <dir>]`: local D1 migrated, a development key ready, then
 * `wrangler dev`. The dev key lives beside the state (.wrangler/dev-key by default, git-ignored) so
 * restarts keep the same key. Ctrl-C (or SIGINT/SIGTERM to `npm`) stops wrangler and workerd together:
 * the npm script `exec`s node, because npm hands a signal only to its shell, and a shell waiting on a
 * command does not pass it on.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { hashApiKey, provisionKey } from "../src/auth/provision";
import { devEnvFileArgs } from "./credentials-key";
import { superviseGroup } from "./process-group";
import { startBanner } from "./start-banner";
import { applyMigrations, executeSql, querySql, ROOT, WRANGLER, wranglerEnv, type Target } from "./wrangler";

const USAGE = `usage: npm start [-- --port <n>] [-- --persist-to <dir>]
  --port        the loopback port to serve on (default: $PORT, else 8787)
  --persist-to  the local state folder (default: .wrangler/state); the dev key is kept beside it`;

export function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65535) throw new Error(`port '${text}' is not a TCP port: give a whole number from 1 to 65535 (--port 8788 or PORT=8788)`);
  return port;
}

async function devKey(target: Target, keyFile: string): Promise<string> {
  if (existsSync(keyFile)) {
    const key = (await readFile(keyFile, "utf8")).trim();
    const rows = await querySql(`SELECT 1 AS live FROM api_keys WHERE key_hash = '${await hashApiKey(key)}' AND revoked_at IS NULL`, target);
    if (rows.length > 0) return key;
  }
  const { key, statements } = await provisionKey("local", "dev", new Date(), "npm start");
  await executeSql(statements, target);
  await mkdir(path.dirname(keyFile), { recursive: true });
  await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
  return key;
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { port: { type: "string" }, "persist-to": { type: "string" }, help: { type: "boolean", default: false } } });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const port = parsePort(values.port ?? process.env.PORT ?? "8787");
  const persistTo = values["persist-to"] ? path.resolve(values["persist-to"]) : undefined;
  const target: Target = { persistTo };
  const keyFile = persistTo ? path.join(persistTo, "dev-key") : path.join(ROOT, ".wrangler", "dev-key");
  console.log("Applying migrations to local D1…");
  await applyMigrations(target);
  const key = await devKey(target, keyFile);
  console.log(startBanner(port, key));
  // The local credentials key, so tokens stored with `npm run github -- set-token` decrypt.
  const envFiles = await devEnvFileArgs();
  // --test-scheduled: local dev has no cron clock, so /__scheduled?cron=… is the way to run the jobs (README: Cron).
  // Its own process group (detached), which superviseGroup stops as a whole. A process outside the
  // terminal's foreground group may not read the terminal, so stdin is closed and wrangler's
  // keyboard shortcuts are off (Ctrl-C here stops it).
  const child = spawn(
    process.execPath,
    [WRANGLER, "dev", "--ip", "127.0.0.1", "--port", String(port), "--test-scheduled", "--show-interactive-dev-session=false",
      ...(persistTo ? ["--persist-to", persistTo] : []), ...envFiles],
    { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"], env: wranglerEnv(), detached: true },
  );
  superviseGroup(child);
}

main(process.argv.slice(2)).catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
