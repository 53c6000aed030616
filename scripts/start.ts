/**
 * `npm start` (options: scripts/start-args.ts): local D1 migrated, a development key ready, then
 * `wrangler dev`. The dev key lives beside the state (.wrangler/dev-key by default, git-ignored) so
 * restarts keep the same key. Ctrl-C (or SIGINT/SIGTERM to `npm`) stops wrangler and workerd together:
 * the npm script `exec`s node, because npm hands a signal only to its shell, and a shell waiting on a
 * command does not pass it on.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { hashApiKey, provisionKey } from "../src/auth/provision";
import { devEnvFileArgs } from "./credentials-key";
import { superviseGroup } from "./process-group";
import { parseStartArgs, USAGE, wranglerDevArgs } from "./start-args";
import { startBanner } from "./start-banner";
import { applyMigrations, executeSql, querySql, ROOT, WRANGLER, wranglerEnv, type Target } from "./wrangler";

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
  const opts = await parseStartArgs(argv, process.env);
  if (opts.help) {
    console.log(USAGE);
    return;
  }
  const { port } = opts;
  const persistTo = opts.persistTo ? path.resolve(opts.persistTo) : undefined;
  const target: Target = { persistTo };
  const keyFile = persistTo ? path.join(persistTo, "dev-key") : path.join(ROOT, ".wrangler", "dev-key");
  console.log("Applying migrations to local D1…");
  await applyMigrations(target);
  const key = await devKey(target, keyFile);
  console.log(startBanner(port, key));
  console.log(`Devtools inspector on 127.0.0.1:${opts.inspectorPort} (another one: --inspector-port <n>).`);
  // The local credentials key, so tokens stored with `npm run github -- set-token` decrypt.
  const envFiles = await devEnvFileArgs();
  // Its own process group (detached), which superviseGroup stops as a whole. A process outside the
  // terminal's foreground group may not read the terminal, so stdin is closed and wrangler's
  // keyboard shortcuts are off (Ctrl-C here stops it).
  const child = spawn(process.execPath, [WRANGLER, ...wranglerDevArgs({ ...opts, persistTo }, envFiles)], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"], env: wranglerEnv(), detached: true });
  superviseGroup(child);
}

main(process.argv.slice(2)).catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
