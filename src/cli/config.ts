/**
 * Where the command line finds its server and credential: `AGENT_LEDGER_URL` and `AGENT_LEDGER_KEY`
 * first (what hooks and CI set), else the file `agent-ledger login` wrote. The file holds a
 * credential, so it is written owner-only (0600, its folder 0700) and read only when it still is.
 */
import { chmod, mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** OAuth state kept between runs: the registered client and its tokens (refreshed in place). */
export interface OAuthState {
  client?: Record<string, unknown>;
  tokens?: Record<string, unknown>;
}

export interface SavedConfig {
  url: string;
  key?: string;
  oauth?: OAuthState;
}

export interface Config extends SavedConfig {
  /** Where the values came from, for `doctor` and error hints. */
  source: "env" | "file";
  /** The config file's path (whether or not it exists). */
  file: string;
}

export class ConfigError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

type Env = Record<string, string | undefined>;

/** `AGENT_LEDGER_CONFIG`, else `$XDG_CONFIG_HOME/agent-ledger/config.json`, else `~/.config/…`. */
export function configPath(env: Env = process.env): string {
  if (env.AGENT_LEDGER_CONFIG) return env.AGENT_LEDGER_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "agent-ledger", "config.json");
}

/** A server URL as typed: scheme added for a bare host, trailing slashes and a trailing /mcp dropped. */
export function normalizeUrl(raw: string): string {
  let text = raw.trim();
  if (!/^https?:\/\//i.test(text)) text = `${/^(localhost|127\.|\[::1\])/.test(text) ? "http" : "https"}://${text}`;
  const url = new URL(text);
  let path = url.pathname;
  while (path.endsWith("/")) path = path.slice(0, -1);
  if (path.endsWith("/mcp")) path = path.slice(0, -4);
  return `${url.protocol}//${url.host}${path}`;
}

async function readSaved(file: string): Promise<SavedConfig | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return null;
  }
  if (process.platform !== "win32") {
    const mode = (await stat(file)).mode & 0o777;
    if (mode & 0o077) throw new ConfigError(`${file} can be read by others (mode ${mode.toString(8)}); it holds a credential.`, `Run: chmod 600 ${file}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(`${file} is not valid JSON.`, "Run `agent-ledger login` again to rewrite it.");
  }
  const saved = parsed as Partial<SavedConfig>;
  if (!saved || typeof saved.url !== "string") throw new ConfigError(`${file} names no server url.`, "Run `agent-ledger login --url <server>`.");
  return saved as SavedConfig;
}

/** The configuration to use, or null when none is set anywhere. */
export async function loadConfig(env: Env = process.env): Promise<Config | null> {
  const file = configPath(env);
  if (env.AGENT_LEDGER_URL) {
    const saved = await readSaved(file).catch(() => null);
    const url = normalizeUrl(env.AGENT_LEDGER_URL);
    // The file's OAuth tokens still serve a URL given by environment when it is the same server.
    const oauth = saved && normalizeUrl(saved.url) === url ? saved.oauth : undefined;
    return { url, key: env.AGENT_LEDGER_KEY || undefined, oauth: env.AGENT_LEDGER_KEY ? undefined : oauth, source: "env", file };
  }
  const saved = await readSaved(file);
  if (!saved) return null;
  return { ...saved, url: normalizeUrl(saved.url), key: env.AGENT_LEDGER_KEY || saved.key, source: "file", file };
}

/** Like loadConfig, but a missing configuration is an error with the way out. */
export async function requireConfig(env: Env = process.env): Promise<Config> {
  const config = await loadConfig(env);
  if (!config) throw new ConfigError("No server is configured.", "Run `agent-ledger login --url <server>` (or set AGENT_LEDGER_URL and AGENT_LEDGER_KEY).");
  return config;
}

/** Writes the file atomically with owner-only permissions. */
export async function saveConfig(file: string, config: SavedConfig): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  const body: SavedConfig = { url: config.url, ...(config.key ? { key: config.key } : {}), ...(config.oauth ? { oauth: config.oauth } : {}) };
  await writeFile(tmp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}
