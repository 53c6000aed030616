/**
 * `npm start`: local D1 migrated, a development key ready, then `wrangler dev`.
 * The dev key lives in .wrangler/dev-key (git-ignored) so restarts keep the same key.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { hashApiKey, provisionKey } from "../src/auth/provision";
import { devEnvFileArgs } from "./credentials-key";
import { applyMigrations, executeSql, querySql, ROOT } from "./wrangler";

const PORT = process.env.PORT ?? "8787";
const KEY_FILE = path.join(ROOT, ".wrangler", "dev-key");

async function devKey(): Promise<string> {
  if (existsSync(KEY_FILE)) {
    const key = (await readFile(KEY_FILE, "utf8")).trim();
    const rows = await querySql(`SELECT 1 AS live FROM api_keys WHERE key_hash = '${await hashApiKey(key)}' AND revoked_at IS NULL`);
    if (rows.length > 0) return key;
  }
  const { key, statements } = await provisionKey("local", "dev", new Date(), "npm start");
  await executeSql(statements);
  await mkdir(path.dirname(KEY_FILE), { recursive: true });
  await writeFile(KEY_FILE, `${key}\n`, { mode: 0o600 });
  return key;
}

async function main(): Promise<void> {
  console.log("Applying migrations to local D1…");
  await applyMigrations();
  const key = await devKey();
  const url = `http://127.0.0.1:${PORT}/mcp`;
  console.log(`
agent-ledger is starting on ${url}
Development API key (tenant 'local', actor 'dev'):

  ${key}

Connect Claude Code:
  claude mcp add --transport http agent-ledger ${url} --header "Authorization: Bearer ${key}"
GitHub tools (toolset git): printf %s "$GITHUB_TOKEN" | npm run github -- set-token --tenant local
Connect the MCP Inspector:
  npx @modelcontextprotocol/inspector   (transport: Streamable HTTP, URL ${url}, header Authorization: Bearer <key>)
`);
  // The local credentials key, so tokens stored with `npm run github -- set-token` decrypt.
  const envFiles = await devEnvFileArgs();
  // --test-scheduled: local dev has no cron clock, so /__scheduled?cron=… is the way to run the jobs (README: Cron).
  const child = spawn(process.execPath, [path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"), "dev", "--ip", "127.0.0.1", "--port", PORT, "--test-scheduled", ...envFiles], {
    cwd: ROOT,
    stdio: "inherit",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  const stop = () => child.kill("SIGINT");
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  child.on("exit", (code) => process.exit(code ?? 0));
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
