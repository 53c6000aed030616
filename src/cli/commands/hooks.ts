/**
 * `hooks install|uninstall` writes or removes our hooks in an agent client's settings file, showing
 * the diff (and only showing it with --dry-run); `hook <client>` is the command hook itself, which
 * relays the client's event to the server and never stops the agent for the ledger's own trouble.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname } from "node:path";
import { takeBool, takeString, UsageError, type Split } from "../args";
import { loadConfig, requireConfig } from "../config";
import { EXIT, type Out } from "../output";
import { HOOK_CLIENTS, planInstall, planUninstall, relayHook, renderDiff, type HookClient } from "../hooks";

/** The command hook answers well inside every client's own time-out. */
const RELAY_TIMEOUT_MS = 8000;

function clientOf(words: Split, fallback?: string): HookClient {
  const client = takeString(words, "client") ?? fallback ?? "claude-code";
  if (!(HOOK_CLIENTS as readonly string[]).includes(client)) throw new UsageError(`No hooks for client '${client.slice(0, 40)}'.`, `Clients with documented hooks: ${HOOK_CLIENTS.join(", ")}.`);
  return client as HookClient;
}

const readText = (path: string): Promise<string | null> => readFile(path, "utf8").catch(() => null);

export async function hooksCommand(words: Split, out: Out): Promise<number> {
  const verb = words.positionals.shift();
  if (verb !== "install" && verb !== "uninstall")
    throw new UsageError("hooks takes install or uninstall.", "agent-ledger hooks install [--client claude-code|codex|cursor|gemini] [--command] [--user] [--dry-run]");
  const client = clientOf(words, words.positionals.shift());
  const dryRun = takeBool(words, "dry-run");
  const scope = takeBool(words, "user") ? "user" : "project";
  const place = { scope, cwd: process.cwd(), home: process.env.HOME || homedir() } as const;
  let plan;
  if (verb === "install") {
    const config = await requireConfig();
    const mode = takeBool(words, "command") ? "command" : "http";
    const repository = takeString(words, "repository");
    const probe = planInstall(client, { ...place, url: config.url, repository, mode }, null);
    plan = planInstall(client, { ...place, url: config.url, repository, mode }, await readText(probe.path));
  } else {
    const probe = planUninstall(client, place, null);
    plan = planUninstall(client, place, await readText(probe.path));
  }
  const changed = plan.after !== plan.before;
  const unchanged = verb === "install" ? `${plan.path} already has these hooks; nothing to change.` : `${plan.path} has no hooks of ours; nothing to remove.`;
  if (out.json) out.stdout(JSON.stringify({ ok: true, client, path: plan.path, changed, dry_run: dryRun, before: plan.before, after: plan.after }, null, 2));
  else if (changed) out.stdout(renderDiff(plan.path, plan.before, plan.after));
  if (changed && !dryRun) {
    if (plan.after === null) await rm(plan.path, { force: true });
    else {
      await mkdir(dirname(plan.path), { recursive: true });
      await writeFile(plan.path, plan.after);
    }
  }
  if (!out.json)
    out.stderr(!changed ? unchanged : dryRun ? "Dry run: nothing written." : `${verb === "install" ? "Installed" : "Removed"} ${client} hooks ${verb === "install" ? "in" : "from"} ${plan.path}.`);
  if (verb === "install" && changed && !dryRun && client === "claude-code" && !takeBool(words, "command")) out.stderr("The hooks send $AGENT_LEDGER_KEY: export it where the agent runs.");
  return EXIT.ok;
}

/** The command hook: stdin is the client's event; stdout is the client's answer; always exit 0. */
export async function hookRelay(words: Split, read: () => Promise<string>): Promise<number> {
  const client = words.positionals.shift() ?? "";
  const repository = takeString(words, "repository");
  const config = await loadConfig().catch(() => null);
  const key = config?.key ?? (typeof config?.oauth?.tokens?.access_token === "string" ? config.oauth.tokens.access_token : "");
  const result = await relayHook(client as HookClient, await read(), { url: config?.url ?? "", key, fetch, timeoutMs: RELAY_TIMEOUT_MS, repository });
  process.stdout.write(result.stdout.endsWith("\n") ? result.stdout : `${result.stdout}\n`);
  if (result.stderr) process.stderr.write(`${result.stderr}\n`);
  return EXIT.ok;
}
