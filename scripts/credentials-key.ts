/**
 * The key that encrypts tenants' GitHub tokens (the Worker secret GITHUB_CREDENTIALS_KEY).
 * Locally a development key is kept in .wrangler/github-credentials-key (git-ignored, like the
 * dev API key), so `npm run github` and `npm start` agree on it across restarts.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ROOT } from "./wrangler";

export const KEY_FILE = path.join(ROOT, ".wrangler", "github-credentials-key");
/** Handed to wrangler dev with --env-file, so the key never appears on a command line. */
export const ENV_FILE = path.join(ROOT, ".wrangler", "github-credentials.env");

export async function localCredentialsKey(): Promise<string> {
  if (existsSync(KEY_FILE)) return (await readFile(KEY_FILE, "utf8")).trim();
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const key = Buffer.from(bytes).toString("base64url");
  await mkdir(path.dirname(KEY_FILE), { recursive: true });
  await writeFile(KEY_FILE, `${key}\n`, { mode: 0o600 });
  return key;
}

/**
 * wrangler dev's --env-file arguments: the local key first, then the project's own .dev.vars or
 * .env (a later file wins), because naming any --env-file stops wrangler reading those itself.
 */
export async function devEnvFileArgs(): Promise<string[]> {
  const key = process.env.GITHUB_CREDENTIALS_KEY || (await localCredentialsKey());
  await writeFile(ENV_FILE, `GITHUB_CREDENTIALS_KEY=${key}\n`, { mode: 0o600 });
  const own = [".dev.vars", ".env"].map((f) => path.join(ROOT, f)).find((f) => existsSync(f));
  return ["--env-file", ENV_FILE, ...(own ? ["--env-file", own] : [])];
}
