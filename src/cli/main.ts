/**
 * agent-ledger's command line. The verbs a person uses (login, status, doctor, watch, …) are here;
 * every tool of the server is a subcommand too, generated from the server's own listing.
 */
import { createInterface } from "node:readline/promises";
import { split, take, takeBool, takeString, UsageError, type Split } from "./args";
import { ConfigError, requireConfig } from "./config";
import { connect, LedgerError, type Asker, type Ledger } from "./connection";
import { EXIT, printError, processOut, type Out } from "./output";
import { CLI_VERSION } from "./version";
import { closestNames, findTool, runTool, toolHelp } from "./tool-command";
import { login } from "./commands/login";
import { logout } from "./commands/logout";
import { stale, status } from "./commands/status";
import { doctor } from "./commands/doctor";
import { watch } from "./commands/watch";
import { exportCommand } from "./commands/export";
import { hookRelay, hooksCommand } from "./commands/hooks";
import { importCommand } from "./commands/import";
import { indexCommand } from "./commands/index-repo";

/** Shortcuts a person types for the tools asked most: the tool's own flags still apply. */
const SHORTCUTS: Record<string, string> = { history: "change_history", prior: "prior_attempts", blame: "blame" };

const USAGE = `agent-ledger ${CLI_VERSION}: the team's shared memory and coordination point, from a terminal.

Usage: agent-ledger <command> [flags]

  login [--url URL] [--key-stdin]   Save the server and a credential (OAuth in a browser without a key)
  logout                            Forget the saved server and credential
  status                            Who you are: claims and leases, inbox, notices
  stale                             Decisions due for review (stale_decisions)
  doctor                            Check configuration, server, key, protocol, clock and hooks
  watch [--interval S] [--since W]  Follow the activity feed
  blame <path> | history | prior <path>
                                    Shortcuts to blame, change_history, prior_attempts
  import git <owner/name> [--since 90.days] [--count 200]
                                    A repository's history into change events (idempotent)
  import migrations <folder> [--format sql|prisma|drizzle|alembic] [--dry-run]
                                    A migration folder's schema changes into change events
  index <owner/name> [--ref r] [--reindex] [--no-wait]
                                    Index a repository for the code tools, following the job
  export entity <path> | changeset <id> | decisions <project> [--format md|json] [--out FILE]
                                    An entity's history, a changeset or decisions, as Markdown or JSON
  hooks install|uninstall [--client claude-code|codex|cursor|gemini] [--command] [--user] [--dry-run]
                                    Wire an agent client's hooks to this server (shows the diff)
  hook <client>                     The command hook itself: relays the client's event (stdin)
  tools                             List every tool; each is a command: agent-ledger <tool> --help
  <tool> [flags]                    Run a tool (flags from its schema; --args '{json}' for all)

Flags for every command: --json (the JSON envelope), --help.
Configuration: AGENT_LEDGER_URL and AGENT_LEDGER_KEY, or the file \`login\` writes.
Exit codes: 0 ok, 1 the tool answered an error, 2 usage, 3 configuration or connection.`;

async function readAll(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** A terminal person answers the server's confirmation questions; a script never says yes. */
function terminalAsker(): Asker | undefined {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  return async (message) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return /^y(es)?$/i.test((await rl.question(`${message} [y/N] `)).trim());
    } finally {
      rl.close();
    }
  };
}

async function withLedger<T>(work: (ledger: Ledger) => Promise<T>): Promise<T> {
  const ledger = await connect(await requireConfig(), { ask: terminalAsker() });
  try {
    return await work(ledger);
  } finally {
    await ledger.close();
  }
}

/** Stands in for a server where a command needs none; calling it is a bug. */
const offline: Ledger = {
  url: "",
  call: () => Promise.reject(new Error("no server in a dry run")),
  listTools: () => Promise.resolve([]),
  readResource: () => Promise.resolve(""),
  protocolVersion: () => undefined,
  close: () => Promise.resolve(),
};

const rest = (words: Split): string[] => {
  const argv = [...words.positionals];
  for (const [k, values] of words.flags) for (const v of values) argv.push(v === true ? `--${k}` : `--${k}=${v}`);
  return argv;
};

async function runCommand(command: string, argv: string[], out: Out, help: boolean): Promise<number> {
  const words = split(argv);
  switch (command) {
    case "login":
      return login(words, out);
    case "logout":
      return logout(out);
    case "doctor":
      return doctor(out);
    case "status":
      return withLedger((l) => status(l, out));
    case "stale":
      return withLedger((l) => stale(l, out, {}));
    case "watch": {
      const interval = Number(takeString(words, "interval") ?? "5");
      const count = Number(takeString(words, "count") ?? "0");
      if (!(interval > 0) || !Number.isInteger(count) || count < 0) throw new UsageError("--interval takes seconds (> 0) and --count a whole number.", "Example: agent-ledger watch --interval 2");
      const controller = new AbortController();
      process.once("SIGINT", () => controller.abort());
      const filter: Record<string, unknown> = {};
      for (const key of ["project_id", "actor_id", "verb", "object_type", "object_id", "run_id"]) {
        const v = takeString(words, key);
        if (v) filter[key] = v;
      }
      const since = takeString(words, "since") ?? "15m";
      return withLedger((l) => watch(l, out, { intervalMs: interval * 1000, count, since, filter }, controller.signal));
    }
    case "hooks":
      return hooksCommand(words, out);
    case "hook":
      return hookRelay(words, readAll);
    case "import":
      // A dry run of a migration folder reads files only: no server needed.
      if (words.positionals[0] === "migrations" && words.flags.has("dry-run")) return importCommand(offline, words, out);
      return withLedger((l) => importCommand(l, words, out));
    case "index": {
      const controller = new AbortController();
      process.once("SIGINT", () => controller.abort());
      return withLedger((l) => indexCommand(l, words, out, controller.signal));
    }
    case "export":
      return withLedger((l) => exportCommand(l, words, out));
    case "tools":
      return withLedger(async (l) => {
        const tools = await l.listTools();
        if (out.json) out.stdout(JSON.stringify({ ok: true, items: tools.map((t) => ({ name: t.name, description: t.description })) }, null, 2));
        else for (const t of tools) out.stdout(`${t.name.replace(/_/g, "-").padEnd(28)} ${(t.description ?? "").split(/(?<=\.)\s/)[0]!.slice(0, 100)}`);
        return EXIT.ok;
      });
    default: {
      const name = SHORTCUTS[command] ?? command;
      return withLedger(async (l) => {
        const tool = await findTool(l, name);
        if (!tool) {
          const near = closestNames(
            name,
            (await l.listTools()).map((t) => t.name),
          );
          throw new UsageError(
            `Unknown command '${command.slice(0, 60)}'.`,
            near.length ? `Did you mean: ${near.join(", ")}?` : "Run `agent-ledger --help` for the verbs, `agent-ledger tools` for every tool.",
          );
        }
        if (help) {
          out.stdout(toolHelp(tool));
          return EXIT.ok;
        }
        return runTool(l, tool, rest(words), out, readAll);
      });
    }
  }
}

export async function main(argv: string[]): Promise<number> {
  const globals = split(argv.filter((w) => w === "--json" || w === "-j" || w === "--help" || w === "-h" || w === "--version"));
  const json = takeBool(globals, "json");
  const help = take(globals, "help").length > 0;
  const out = processOut(json);
  const words = argv.filter((w) => !["--json", "-j", "--help", "-h", "--version"].includes(w));
  if (argv.includes("--version")) {
    out.stdout(CLI_VERSION);
    return EXIT.ok;
  }
  const [command, ...args] = words;
  if (!command || command === "help") {
    out.stdout(USAGE);
    return command || help ? EXIT.ok : EXIT.usage;
  }
  try {
    return await runCommand(command, args, out, help);
  } catch (err) {
    if (err instanceof UsageError) {
      printError(out, "usage", err.message, err.hint);
      return EXIT.usage;
    }
    if (err instanceof ConfigError) {
      printError(out, "configuration", err.message, err.hint);
      return EXIT.connection;
    }
    if (err instanceof LedgerError) {
      printError(out, err.code, err.message, err.hint);
      return EXIT.connection;
    }
    printError(out, "internal_error", err instanceof Error ? err.message : String(err), "This is a bug in the command line; run with --json and report it.");
    return EXIT.toolError;
  }
}
