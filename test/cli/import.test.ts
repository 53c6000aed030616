import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { split } from "../../src/cli/args";
import type { Envelope, Ledger } from "../../src/cli/connection";
import { importCommand } from "../../src/cli/commands/import";
import type { Out } from "../../src/cli/output";

type Call = { name: string; args: Record<string, unknown> };

/** A server that answers each call from `answer` and records what it was asked. */
function fakeLedger(answer: (call: Call, n: number) => Envelope): Ledger & { calls: Call[] } {
  const calls: Call[] = [];
  return {
    url: "http://fake",
    calls,
    call: async (name, args) => {
      calls.push({ name, args });
      return { envelope: answer({ name, args }, calls.length), text: "" };
    },
    listTools: async () => [],
    readResource: async () => "",
    protocolVersion: () => "2026-07-28",
    close: async () => undefined,
  };
}

function capture(json = true): Out & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { json, tty: false, out, err, stdout: (t) => out.push(t), stderr: (t) => err.push(t) };
}

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("agent-ledger import git", () => {
  it("walks the history page by page with the server's cursor, until --count commits", async () => {
    const ledger = fakeLedger((c, n) => ({
      ok: true,
      repo: "acme/api",
      commits: c.args.max_commits,
      imported: 2 * Number(c.args.max_commits),
      skipped: 1,
      next_cursor: `c${n}`,
      warnings: n === 2 ? ["commit abc: only the first 300 files"] : [],
    }));
    const out = capture();
    expect(await importCommand(ledger, split(["git", "acme/api", "--since", "90.days", "--count", "120", "--changeset-id", "hist"]), out)).toBe(0);
    expect(ledger.calls.map((c) => [c.name, c.args.max_commits, c.args.cursor ?? null])).toEqual([
      ["change_import_git", 50, null],
      ["change_import_git", 50, "c1"],
      ["change_import_git", 20, "c2"],
    ]);
    expect(ledger.calls[0]!.args).toMatchObject({ repo: "acme/api", since: "90.days", changeset_id: "hist" });
    expect(JSON.parse(out.out[0]!)).toEqual({ ok: true, repo: "acme/api", commits: 120, imported: 240, skipped: 3, more: true, warnings: ["commit abc: only the first 300 files"] });
  });

  it("stops when the history is done (no next_cursor)", async () => {
    const ledger = fakeLedger(() => ({ ok: true, commits: 7, imported: 9, skipped: 0, warnings: [] }));
    const out = capture();
    await importCommand(ledger, split(["git", "acme/api"]), out);
    expect(ledger.calls).toHaveLength(1);
    expect(JSON.parse(out.out[0]!)).toMatchObject({ commits: 7, imported: 9, more: false });
  });

  it("a server refusal stops the walk and exits 1 with its hint", async () => {
    const ledger = fakeLedger(() => ({ ok: false, error: { code: "github_not_configured", message: "No GitHub token.", hint: "npm run github -- connect" } }));
    const out = capture(false);
    expect(await importCommand(ledger, split(["git", "acme/api"]), out)).toBe(1);
    expect(out.err).toEqual(["error: github_not_configured: No GitHub token.", "hint: npm run github -- connect"]);
  });

  it("refuses a missing repository or a bad --count before calling anything", async () => {
    const ledger = fakeLedger(() => ({ ok: true }));
    await expect(importCommand(ledger, split(["git"]), capture())).rejects.toThrow("import git needs a registered repository.");
    await expect(importCommand(ledger, split(["git", "a/b", "--count", "0"]), capture())).rejects.toThrow("--count takes a whole number above 0.");
    await expect(importCommand(ledger, split(["svn"]), capture())).rejects.toThrow("import takes git or migrations.");
    expect(ledger.calls).toHaveLength(0);
  });
});

describe("agent-ledger import migrations", () => {
  it("sends the folder's events to change_import in batches of 100", async () => {
    dir = await mkdtemp(join(tmpdir(), "al-mig-"));
    const columns = Array.from({ length: 249 }, (_, i) => `c${i} int`).join(", ");
    await writeFile(join(dir, "0001_wide.sql"), `CREATE TABLE wide (${columns});`);
    const ledger = fakeLedger((c) => ({ ok: true, imported: (c.args.events as unknown[]).length, skipped: 0, ids: [], warnings: [] }));
    const out = capture();
    expect(await importCommand(ledger, split(["migrations", dir]), out)).toBe(0);
    expect(ledger.calls.map((c) => (c.args.events as unknown[]).length)).toEqual([100, 100, 50]);
    expect((ledger.calls[0]!.args.events as Array<Record<string, unknown>>)[0]).toMatchObject({ entity_path: "wide", change_type: "create", entity_type: "table" });
    expect(JSON.parse(out.out[0]!)).toMatchObject({ format: "sql", files: 1, events: 250, imported: 250 });
  });

  it("refuses an unknown --format", async () => {
    await expect(
      importCommand(
        fakeLedger(() => ({ ok: true })),
        split(["migrations", ".", "--format", "liquibase"]),
        capture(),
      ),
    ).rejects.toThrow("--format is one of sql, prisma, drizzle, alembic.");
  });
});
