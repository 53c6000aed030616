/**
 * Where each agent client keeps its hooks and what we install there, in the client's documented
 * file and shape (docs/hooks.md has the same settings to paste by hand):
 * - Claude Code: `.claude/settings.json` (or `~/.claude/settings.json`); `http` hooks straight to
 *   the server, or command hooks through `agent-ledger hook claude-code`.
 * - OpenAI Codex: `.codex/hooks.json` (or `~/.codex/hooks.json`); command hooks only.
 * - Gemini CLI: `.gemini/settings.json` (or `~/.gemini/settings.json`); command hooks only, timeout in ms.
 * - Cursor: `.cursor/hooks.json` (or `~/.cursor/hooks.json`), `version: 1`; command hooks.
 */
import { join } from "node:path";
import { HookSettingsError, type HookEntry, type Json, type Layout } from "./settings";

export const HOOK_CLIENTS = ["claude-code", "codex", "cursor", "gemini"] as const;
export type HookClient = (typeof HOOK_CLIENTS)[number];

export interface PlanOptions {
  /** The server's base address, e.g. https://ledger.example.com (no /mcp). */
  url: string;
  /** The registered repository the agent works in, passed on to the server so edits are judged. */
  repository?: string;
  /** Claude Code only: `http` hooks to the server (default) or command hooks through the command line. The others run commands only. */
  mode: "http" | "command";
  scope: "project" | "user";
  cwd: string;
  home: string;
}

interface ClientSpec {
  layout: Layout;
  /** The file, relative to the project root or the home directory. */
  file: string[];
  /** Keys a new file starts with. */
  skeleton: Json;
  entries(o: PlanOptions): HookEntry[];
}

/** Claude Code's file-writing tools. */
const CLAUDE_EDITS = "Edit|Write|MultiEdit|NotebookEdit";
/** Seconds (Claude Code, Codex, Cursor) the client waits for us; the relay gives up well before. */
const TIMEOUT_S = 30;

/** The base address without trailing slashes (a loop, not a regex over the caller's text). */
export function baseUrl(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === "/") end--;
  return url.slice(0, end);
}

/** A repository slug is put in a shell command and a URL: only the characters a slug has. */
function checkedRepository(repository: string | undefined): string | undefined {
  if (repository === undefined || repository === "") return undefined;
  const safe = repository.length <= 200 && [...repository].every((ch) => (ch >= "a" && ch <= "z") || (ch >= "A" && ch <= "Z") || (ch >= "0" && ch <= "9") || "._/-".includes(ch));
  if (!safe) throw new HookSettingsError(`"${repository.slice(0, 60)}" is not a repository slug (owner/name).`);
  return repository;
}

export function relayCommand(client: HookClient, repository: string | undefined): string {
  const repo = checkedRepository(repository);
  return `npx agent-ledger hook ${client}${repo ? ` --repository ${repo}` : ""}`;
}

function claudeHandler(o: PlanOptions): Json {
  if (o.mode === "command") return { type: "command", command: relayCommand("claude-code", o.repository), timeout: TIMEOUT_S };
  const repo = checkedRepository(o.repository);
  return {
    type: "http",
    url: `${baseUrl(o.url)}/mcp/hooks/claude-code${repo ? `?repository=${repo}` : ""}`,
    headers: { Authorization: "Bearer $AGENT_LEDGER_KEY" },
    allowedEnvVars: ["AGENT_LEDGER_KEY"],
    timeout: 10,
  };
}

/** One entry per `[event, matcher?]`, all with the client's one handler. */
const each = (handler: Json, events: ReadonlyArray<readonly [event: string, matcher?: string]>) => events.map(([event, matcher]) => ({ event, ...(matcher ? { matcher } : {}), handler }));

const SPECS: Record<HookClient, ClientSpec> = {
  "claude-code": {
    layout: "grouped",
    file: [".claude", "settings.json"],
    skeleton: {},
    entries: (o) => {
      return each(claudeHandler(o), [["PreToolUse", CLAUDE_EDITS], ["PostToolUse", CLAUDE_EDITS], ["SessionStart"], ["PostCompact"], ["PreCompact"], ["Stop"]]);
    },
  },
  codex: {
    layout: "grouped",
    file: [".codex", "hooks.json"],
    skeleton: {},
    entries: (o) => {
      const h = { type: "command", command: relayCommand("codex", o.repository), timeout: TIMEOUT_S };
      return each(h, [["SessionStart"], ["PreToolUse", "apply_patch"], ["PostToolUse", "apply_patch"], ["PreCompact"], ["Stop"]]);
    },
  },
  gemini: {
    layout: "grouped",
    file: [".gemini", "settings.json"],
    skeleton: {},
    entries: (o) => {
      const h = { name: "agent-ledger", type: "command", command: relayCommand("gemini", o.repository), timeout: TIMEOUT_S * 1000 };
      return each(h, [["SessionStart"], ["BeforeTool", "write_file|replace"], ["AfterTool", "write_file|replace"], ["AfterAgent"], ["PreCompress"]]);
    },
  },
  cursor: {
    layout: "flat",
    file: [".cursor", "hooks.json"],
    skeleton: { version: 1 },
    entries: (o) => {
      return each({ command: relayCommand("cursor", o.repository), timeout: TIMEOUT_S }, [["sessionStart"], ["afterFileEdit"], ["preCompact"], ["stop"]]);
    },
  },
};

export function specOf(client: string): ClientSpec {
  if (!(HOOK_CLIENTS as readonly string[]).includes(client)) throw new HookSettingsError(`No hooks for client "${client.slice(0, 40)}"; clients: ${HOOK_CLIENTS.join(", ")}.`);
  return SPECS[client as HookClient];
}

export function settingsPath(client: HookClient, o: Pick<PlanOptions, "scope" | "cwd" | "home">): string {
  return join(o.scope === "user" ? o.home : o.cwd, ...specOf(client).file);
}
