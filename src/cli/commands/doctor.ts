/**
 * `doctor`: checks, in order, everything the command line and the agents' hooks need, and says how to
 * fix each failure: configuration, reachability, the credential, the protocol revision, the
 * toolsets, the clock, and whether each installed hook reaches this server.
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { loadConfig, type Config } from "../config";
import { connect, PROTOCOL_REVISION, type Ledger } from "../connection";
import { EXIT, type Out } from "../output";
import { HOOK_CLIENTS } from "../hooks";
import { settingsPath } from "../hooks/clients";

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

/** Clock difference that makes leases and relative windows misleading. */
const MAX_SKEW_MS = 60_000;
const HOOK_MARK = "/mcp/hooks/";

/** The settings files agent clients read hooks from (project first, then the user's). */
export function hookFiles(cwd: string, home: string): string[] {
  const files = HOOK_CLIENTS.flatMap((client) => (["project", "user"] as const).map((scope) => settingsPath(client, { scope, cwd, home })));
  // Claude Code's personal project file, which install never writes but a person may have filled by hand.
  return [...files, join(cwd, ".claude", "settings.local.json")];
}

/** Every hook of ours in a parsed settings file: http URLs to /mcp/hooks/ and `agent-ledger hook` commands. */
export function ourHooks(value: unknown, found: { urls: Set<string>; commands: Set<string> } = { urls: new Set(), commands: new Set() }, depth = 0) {
  if (depth > 12 || value === null || typeof value !== "object") return found;
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === "string") {
      if (k === "url" && v.includes(HOOK_MARK)) found.urls.add(v);
      if (k === "command" && v.includes("agent-ledger hook")) found.commands.add(v);
    } else ourHooks(v, found, depth + 1);
  }
  return found;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value?: T; error?: unknown; ms: number }> {
  const start = performance.now();
  try {
    return { value: await work(), ms: Math.round(performance.now() - start) };
  } catch (error) {
    return { error, ms: Math.round(performance.now() - start) };
  }
}

const message = (err: unknown) => (err instanceof Error ? (err.cause instanceof Error ? `${err.message} (${err.cause.message})` : err.message) : String(err));

async function hookChecks(config: Config, cwd: string, home: string): Promise<Check[]> {
  const checks: Check[] = [];
  let sendsEnvKey = false;
  for (const file of hookFiles(cwd, home)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(file, "utf8"));
    } catch {
      continue;
    }
    const { urls, commands } = ourHooks(parsed);
    if (urls.size) sendsEnvKey = true;
    for (const url of urls) {
      const same = url.startsWith(`${config.url}${HOOK_MARK}`);
      if (!same) {
        checks.push({ name: `hook ${url}`, ok: false, detail: `in ${file}, points at another server than ${config.url}`, fix: "Run `agent-ledger hooks install` again to point it here." });
        continue;
      }
      // A harmless event: every hook endpoint answers {} to one it does not act on.
      const res = await timed(() =>
        fetch(url, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...(config.key ? { Authorization: `Bearer ${config.key}` } : {}) },
          body: JSON.stringify({ hook_event_name: "Notification", session_id: "doctor", cwd, message: "agent-ledger doctor" }),
          signal: AbortSignal.timeout(10_000),
        }),
      );
      const status = res.value?.status;
      checks.push(
        status === 200
          ? { name: `hook ${url}`, ok: true, detail: `in ${file}, answered in ${res.ms} ms` }
          : {
              name: `hook ${url}`,
              ok: false,
              detail: `in ${file}: ${status ? `HTTP ${status}` : message(res.error)}`,
              fix:
                status === 401
                  ? "The hook sends $AGENT_LEDGER_KEY: export AGENT_LEDGER_KEY in the agent's environment (and keep it in allowedEnvVars)."
                  : "Check that the server is up and the URL is right; `agent-ledger hooks install` rewrites it.",
            },
      );
    }
    for (const command of commands)
      checks.push({
        name: `hook command`,
        ok: Boolean(config.key || config.oauth),
        detail: `in ${file}: ${command}`,
        fix: config.key || config.oauth ? undefined : "Command hooks use this machine's login: run `agent-ledger login`.",
      });
  }
  if (sendsEnvKey && !process.env.AGENT_LEDGER_KEY)
    checks.push({
      name: "hook key",
      ok: false,
      detail: "the installed http hooks send $AGENT_LEDGER_KEY, which is not set in this shell",
      fix: "export AGENT_LEDGER_KEY=<your key> in the environment the agent starts from.",
    });
  if (!checks.length) checks.push({ name: "hooks", ok: true, detail: "none installed here (`agent-ledger hooks install` adds them)" });
  return checks;
}

export async function runChecks(options: { cwd?: string; home?: string } = {}): Promise<Check[]> {
  const checks: Check[] = [];
  let config: Config | null;
  try {
    config = await loadConfig();
  } catch (err) {
    return [{ name: "configuration", ok: false, detail: message(err), fix: (err as { hint?: string }).hint }];
  }
  if (!config) return [{ name: "configuration", ok: false, detail: "no server configured", fix: "Run `agent-ledger login --url <server>`, or set AGENT_LEDGER_URL and AGENT_LEDGER_KEY." }];
  checks.push({
    name: "configuration",
    ok: true,
    detail: `${config.url} (from ${config.source === "env" ? "AGENT_LEDGER_URL" : config.file}; ${config.key ? "API key" : config.oauth ? "OAuth" : "no credential"})`,
  });

  const health = await timed(() => fetch(`${config.url}/healthz`, { signal: AbortSignal.timeout(10_000) }));
  if (!health.value) {
    checks.push({
      name: "reachable",
      ok: false,
      detail: `${config.url}/healthz: ${message(health.error)}`,
      fix: "Start the server (`npm start` in a clone) or correct the URL with `agent-ledger login --url`.",
    });
    return checks;
  }
  checks.push({
    name: "reachable",
    ok: health.value.ok,
    detail: `/healthz answered ${health.value.status} in ${health.ms} ms`,
    fix: health.value.ok ? undefined : "The server is up but unhealthy: see its logs.",
  });
  const serverDate = Date.parse(health.value.headers.get("date") ?? "");
  if (Number.isFinite(serverDate)) {
    // The Date header has one-second resolution and was stamped somewhere in the round trip.
    const skew = Math.abs(Date.now() - health.ms / 2 - serverDate);
    checks.push({
      name: "clock",
      ok: skew < MAX_SKEW_MS,
      detail: `${Math.round(skew / 1000)} s from the server's clock`,
      fix: skew < MAX_SKEW_MS ? undefined : "Sync this machine's clock (NTP): leases and time windows depend on it.",
    });
  }

  if (!config.key && !config.oauth?.tokens) {
    checks.push({ name: "credential", ok: false, detail: "no API key and no sign-in", fix: "Run `agent-ledger login`, or set AGENT_LEDGER_KEY." });
    return checks;
  }
  let ledger: Ledger | undefined;
  try {
    const conn = await timed(() => connect(config));
    if (!conn.value) {
      checks.push({ name: "credential", ok: false, detail: message(conn.error), fix: (conn.error as { hint?: string }).hint });
      return checks;
    }
    ledger = conn.value;
    const me = await ledger.call("whoami", {});
    const actor = (me.envelope.actor as { display_name?: string } | undefined)?.display_name;
    checks.push(
      me.envelope.ok
        ? { name: "credential", ok: true, detail: `accepted: you are ${actor ?? "?"}` }
        : { name: "credential", ok: false, detail: me.envelope.error?.message ?? "refused", fix: me.envelope.error?.hint ?? "Run `agent-ledger login` again." },
    );
    const revision = ledger.protocolVersion();
    checks.push({
      name: "protocol",
      ok: revision === PROTOCOL_REVISION,
      detail: `negotiated ${revision ?? "nothing"}`,
      fix: revision === PROTOCOL_REVISION ? undefined : `This command line speaks ${PROTOCOL_REVISION}; update the server or the command line so they match.`,
    });
    const tools = await ledger.listTools();
    const needed = ["whoami", "activity_query", "stale_decisions", "blame", "change_history", "prior_attempts"];
    const missing = needed.filter((n) => !tools.some((t) => t.name === n));
    checks.push({
      name: "toolsets",
      ok: missing.length === 0,
      detail: missing.length ? `missing: ${missing.join(", ")}` : `${tools.length} tools listed`,
      fix: missing.length ? "The server hides some toolsets from this credential; ask its operator." : undefined,
    });
  } finally {
    await ledger?.close();
  }
  checks.push(...(await hookChecks(config, options.cwd ?? process.cwd(), options.home ?? homedir())));
  return checks;
}

export async function doctor(out: Out): Promise<number> {
  const checks = await runChecks();
  const healthy = checks.every((c) => c.ok);
  if (out.json) out.stdout(JSON.stringify({ ok: healthy, checks }, null, 2));
  else {
    for (const c of checks) {
      out.stdout(`${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail}`);
      if (!c.ok && c.fix) out.stdout(`     fix: ${c.fix}`);
    }
    out.stdout(healthy ? "All checks passed." : `${checks.filter((c) => !c.ok).length} check(s) failed.`);
  }
  return healthy ? EXIT.ok : EXIT.toolError;
}
