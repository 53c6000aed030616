/**
 * The command line as a user gets it: `npm pack` of this repository, installed into an empty folder,
 * run as `agent-ledger` against `wrangler dev`.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Browser, decide, signInWithKey } from "../support/oauth-flow";

const run = promisify(execFile);
const baseUrl = inject("baseUrl");
const repo = resolve(import.meta.dirname, "../..");

let dir: string;
let bin: string;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the installed command with its own config file and HOME, so nothing of this machine leaks in. */
function cli(args: string[], options: { input?: string; env?: Record<string, string>; onStderr?: (chunk: string) => void } = {}): Promise<Ran> {
  return new Promise((done, fail) => {
    const child = spawn(bin, args, {
      cwd: dir,
      env: { PATH: process.env.PATH!, HOME: dir, AGENT_LEDGER_CONFIG: join(dir, "config", "config.json"), ...options.env } as unknown as NodeJS.ProcessEnv,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      options.onStderr?.(c.toString());
    });
    child.on("error", fail);
    child.on("close", (code) => done({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe("agent-ledger command line, from the packed package", () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "al-cli-"));
    await run("npm", ["pack", "--pack-destination", dir, "--silent"], { cwd: repo });
    const tarball = (await readdir(dir)).find((f) => f.endsWith(".tgz"))!;
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: "cli-user", private: true }));
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", `./${tarball}`], { cwd: dir });
    bin = join(dir, "node_modules", ".bin", "agent-ledger");
  }, 180_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("installs alone: the package brings the bundled command and no dependency", async () => {
    expect((await readdir(join(dir, "node_modules"))).filter((n) => !n.startsWith("."))).toEqual(["agent-ledger"]);
    const v = await cli(["--version"]);
    expect(v).toMatchObject({ code: 0, stdout: "0.1.0\n" });
  });

  it("without configuration, says how to log in (exit 3)", async () => {
    const r = await cli(["status"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("error: configuration: No server is configured.");
    expect(r.stderr).toContain("hint: Run `agent-ledger login --url <server>`");
  });

  it("logs in with a key from stdin, checked first, saved owner-only", async () => {
    const bad = await cli(["login", "--url", baseUrl, "--key-stdin"], { input: "alk_not-a-real-key\n" });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain("error: unauthorized");
    const r = await cli(["login", "--url", `${baseUrl}/mcp`, "--key-stdin"], { input: `${inject("cliKey")}\n` });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Logged in to ${baseUrl} as claude-code`);
    expect((await stat(join(dir, "config", "config.json"))).mode & 0o777).toBe(0o600);
  });

  it("status shows who you are and what waits for you", async () => {
    const r = await cli(["status"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`claude-code (agent) on ${baseUrl}, tenant e2e-cli`);
    expect(r.stdout).toContain("Open tasks (");
    expect(r.stdout).toContain("Unread notices:");
    const j = await cli(["status", "--json"]);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: true, actor: { display_name: "claude-code" } });
  });

  it("every tool is a subcommand: flags and positionals from its schema", async () => {
    const logged = await cli(["log-change", "cli.users.email", "add", "--entity-type", "column", "--reasoning", "Added from the command line for password resets", "--changeset-id", "cli-e2e"]);
    expect(logged.code).toBe(0);
    expect(logged.stdout).toMatch(/^Logged [0-9a-f-]{36}\./);
    const blame = await cli(["blame", "cli.users.email", "--json"]);
    expect(JSON.parse(blame.stdout)).toMatchObject({ ok: true, change_type: "add", entity_type: "column", reasoning: "Added from the command line for password resets" });
    const history = await cli(["history", "--since", "1h", "--entity-path", "cli.users"]);
    expect(history.stdout).toContain("1 event(s).");
    const help = await cli(["log-change", "--help"]);
    expect(help.stdout).toContain("--entity-path <string> (required)");
    expect(help.stdout).toContain("--revisit-after <string>");
  });

  it("a tool's error exits 1 with its hint; a usage error exits 2", async () => {
    const bad = await cli(["log-change", "cli.x", "frobnicate"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("error: invalid_input:");
    expect(bad.stderr).toContain("hint: ");
    const json = await cli(["task-get", "no-such-task", "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: "not_found" } });
    const flag = await cli(["blame", "x", "--bogus", "1"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("error: usage: Unknown flag --bogus.");
    const unknown = await cli(["frobnicate"]);
    expect(unknown.code).toBe(2);
  });

  it("watch follows the activity feed", async () => {
    const r = await cli(["watch", "--since", "1h", "--count", "1", "--verb", "change.logged"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ claude-code change\.logged change:[0-9a-f-]+ +add cli\.users\.email/);
  });

  it("export writes an entity's history as Markdown", async () => {
    const r = await cli(["export", "entity", "cli.users", "--out", "history.md"]);
    expect(r.code).toBe(0);
    const md = await readFile(join(dir, "history.md"), "utf8");
    expect(md).toContain("# History of cli.users");
    expect(md).toContain("add `cli.users.email`");
    expect(md).toContain("> Added from the command line for password resets");
  });

  it("doctor: healthy here, and a fix for each failure against an unreachable server", async () => {
    const ok = await cli(["doctor"]);
    expect(ok.stdout).toContain("ok   protocol: negotiated 2026-07-28");
    expect(ok.stdout).toContain("All checks passed.");
    expect(ok.code).toBe(0);
    const port = await closedPort();
    const down = await cli(["doctor"], { env: { AGENT_LEDGER_URL: `http://127.0.0.1:${port}`, AGENT_LEDGER_KEY: "alk_x" } });
    expect(down.code).toBe(1);
    expect(down.stdout).toContain(`FAIL reachable: http://127.0.0.1:${port}/healthz`);
    expect(down.stdout).toContain("fix: Start the server");
    const refused = await cli(["doctor"], { env: { AGENT_LEDGER_URL: baseUrl, AGENT_LEDGER_KEY: "alk_revoked" } });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain("FAIL credential");
  });

  it("hooks install shows the diff, writes once, keeps the person's own hooks; doctor sees them reach the server; uninstall removes exactly ours", async () => {
    const settings = join(dir, ".claude", "settings.json");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(join(dir, ".claude"), { recursive: true });
    const mine = { permissions: { allow: ["Bash(ls)"] }, hooks: { Stop: [{ hooks: [{ type: "command", command: "echo mine" }] }] } };
    await writeFile(settings, JSON.stringify(mine, null, 2) + "\n");

    const dry = await cli(["hooks", "install", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`+            "url": "${baseUrl}/mcp/hooks/claude-code",`);
    expect(dry.stderr).toContain("Dry run: nothing written.");
    expect(JSON.parse(await readFile(settings, "utf8"))).toEqual(mine);

    const installed = await cli(["hooks", "install"]);
    expect(installed.stderr).toContain(`Installed claude-code hooks in ${settings}.`);
    const written = JSON.parse(await readFile(settings, "utf8"));
    expect(written.permissions).toEqual(mine.permissions);
    expect(written.hooks.Stop[0]).toEqual(mine.hooks.Stop[0]);
    expect(written.hooks.PreToolUse[0]).toMatchObject({ matcher: "Edit|Write|MultiEdit|NotebookEdit", hooks: [{ type: "http", url: `${baseUrl}/mcp/hooks/claude-code` }] });
    const again = await cli(["hooks", "install"]);
    expect(again.stdout).toBe("");
    expect(again.stderr).toContain("already has these hooks; nothing to change.");

    const doctor = await cli(["doctor"], { env: { AGENT_LEDGER_KEY: inject("cliKey") } });
    expect(doctor.stdout).toMatch(new RegExp(`ok   hook ${baseUrl}/mcp/hooks/claude-code: in .*settings.json, answered in \\d+ ms`));
    expect(doctor.code).toBe(0);
    const noKey = await cli(["doctor"]);
    expect(noKey.stdout).toContain("FAIL hook key: the installed http hooks send $AGENT_LEDGER_KEY");

    const removed = await cli(["hooks", "uninstall"]);
    expect(removed.code).toBe(0);
    expect(JSON.parse(await readFile(settings, "utf8"))).toEqual(mine);
  });

  it("the command hook relays an event to the server and prints the client's answer; with the server down it lets the agent go on", async () => {
    const event = { session_id: "cli-e2e", transcript_path: "/tmp/t.jsonl", cwd: dir, hook_event_name: "SessionStart", source: "startup" };
    const r = await cli(["hook", "claude-code"], { input: JSON.stringify(event) });
    expect(r.code).toBe(0);
    const answer = JSON.parse(r.stdout);
    expect(answer.hookSpecificOutput).toMatchObject({ hookEventName: "SessionStart" });
    expect(answer.hookSpecificOutput.additionalContext).toContain("claude-code");
    const port = await closedPort();
    const down = await cli(["hook", "claude-code"], { input: JSON.stringify(event), env: { AGENT_LEDGER_URL: `http://127.0.0.1:${port}`, AGENT_LEDGER_KEY: "alk_x" } });
    expect(down).toMatchObject({ code: 0, stdout: "{}\n" });
    expect(down.stderr).toContain("the agent goes on");
  });

  it("imports a real migration folder (graphile-worker's, shipped in its npm package) once, however often it runs", async () => {
    const folder = join(repo, "node_modules", "graphile-worker", "sql");
    const dry = await cli(["import", "migrations", folder, "--dry-run"], { env: { AGENT_LEDGER_CONFIG: join(dir, "none.json") } });
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain("sql: 71 event(s) from 20 file(s), 115 statement(s) skipped; dry run: nothing sent.");
    const first = await cli(["import", "migrations", folder, "--json"]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ ok: true, format: "sql", files: 20, events: 71, imported: 71, skipped: 0 });
    // Added in 000002; 000011 rebuilds the table, so its create lists the column again.
    const diff = JSON.parse((await cli(["change-diff", "jobs.locked_by", "--json"])).stdout) as { items: Array<{ change_type: string; reasoning: string }> };
    expect(diff.items.map((e) => [e.change_type, e.reasoning.split(",")[0]])).toEqual([
      ["add", "Migration 000011.sql"],
      ["add", "Migration 000002.sql"],
    ]);
    const again = await cli(["import", "migrations", folder, "--json"]);
    expect(JSON.parse(again.stdout)).toMatchObject({ imported: 0, skipped: 71 });
  });

  it("docs/hooks.md's command-line session runs exactly as written", async () => {
    const page = await readFile(join(repo, "docs", "hooks.md"), "utf8");
    const block = /A session, step by step[\s\S]*?```sh\n([\s\S]*?)```/.exec(page)?.[1];
    expect(block).toBeDefined();
    const lines = block!.trim().split("\n");
    expect(lines[0]).toContain("--url http://127.0.0.1:8787 --key-stdin");
    const env = { PATH: `${join(dir, "node_modules", ".bin")}:${process.env.PATH}`, HOME: dir, AGENT_LEDGER_KEY: inject("cliKey"), AGENT_LEDGER_CONFIG: join(dir, "walk", "config.json") };
    const outputs: string[] = [];
    for (const line of lines) {
      // The page's address is npm start's default; the test's server listens elsewhere.
      const command = line.replaceAll("http://127.0.0.1:8787", baseUrl);
      const r = await run("sh", ["-c", command], { cwd: dir, env: env as unknown as NodeJS.ProcessEnv }).catch((e: Ran & Error) => e);
      expect((r as { code?: number }).code ?? 0, `${line}\n${r.stdout}${r.stderr}`).toBe(0);
      outputs.push(r.stdout);
    }
    expect(outputs[3]).toContain("Sessions expire after 12 hours, not 30 days");
    expect(outputs[6]).toContain("# History of src/auth");
    expect(outputs.at(-1)).toContain("All checks passed.");
  });

  it("logs in through OAuth in a browser (the loopback redirect), then calls tools with the tokens", async () => {
    const oauthConfig = { AGENT_LEDGER_CONFIG: join(dir, "oauth", "config.json") };
    let seen = "";
    let signedIn: Promise<void> | undefined;
    const browser = new Browser((url, init) => fetch(url, init));
    const login = cli(["login", "--url", baseUrl, "--no-browser"], {
      env: oauthConfig,
      onStderr: (chunk) => {
        seen += chunk;
        const url = /https?:\/\/\S+\/authorize\?\S+/.exec(seen)?.[0];
        if (url && !signedIn)
          signedIn = (async () => {
            const consent = await signInWithKey(browser, url, inject("oauthKey"));
            const back = await decide(browser, baseUrl, await consent.text(), "allow");
            // The browser follows the redirect to the command line's loopback listener.
            expect((await fetch(back)).status).toBe(200);
          })();
      },
    });
    const r = await login;
    await signedIn;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("(OAuth)");
    const status = await cli(["status", "--json"], { env: oauthConfig });
    expect(JSON.parse(status.stdout)).toMatchObject({ ok: true, tenant: { slug: "e2e-oauth" } });
  });
});
