import { describe, expect, it } from "vitest";
import { split } from "../../src/cli/args";
import type { Envelope, Ledger } from "../../src/cli/connection";
import { indexCommand } from "../../src/cli/commands/index-repo";
import type { Out } from "../../src/cli/output";

type Call = { name: string; args: Record<string, unknown> };

function fakeLedger(statuses: Array<Record<string, unknown>>, start: Envelope = { ok: true, job_id: "job-1", status: "started", phase: "queued" }) {
  const calls: Call[] = [];
  let polled = 0;
  const ledger: Ledger = {
    url: "http://fake",
    call: async (name, args) => {
      calls.push({ name, args });
      if (name !== "index_status") return { envelope: start, text: "Indexing started." };
      const item = statuses[Math.min(polled++, statuses.length - 1)]!;
      return {
        envelope: {
          ok: true,
          items: [
            { job_id: "job-0", ref: "old", phase: "complete", complete: true },
            { job_id: "job-1", ref: "main", ...item },
          ],
        },
        text: "",
      };
    },
    listTools: async () => [],
    readResource: async () => "",
    protocolVersion: () => undefined,
    close: async () => undefined,
  };
  return { ledger, calls };
}

function capture(json = false): Out & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { json, tty: false, out, err, stdout: (t) => out.push(t), stderr: (t) => err.push(t) };
}

const never = new AbortController().signal;

describe("agent-ledger index", () => {
  it("starts the job and follows its own status (not another ref's) until it is searchable", async () => {
    const { ledger, calls } = fakeLedger([
      { phase: "fetching", complete: false, files_done: 0, files_total: 0 },
      { phase: "parsing", complete: false, files_done: 5, files_total: 10 },
      { phase: "complete", complete: true, files_done: 10, files_total: 10, chunks: 40, symbols: 12, indexed_commit: "abcdef0123456789" },
    ]);
    const out = capture();
    expect(await indexCommand(ledger, split(["acme/api", "--ref", "main"]), out, never, 1)).toBe(0);
    expect(calls[0]).toEqual({ name: "index_workspace", args: { repo: "acme/api", ref: "main" } });
    expect(calls.filter((c) => c.name === "index_status")).toHaveLength(3);
    expect(out.err).toContain("index acme/api: 5/10 parsing");
    expect(out.err.at(-1)).toBe("index acme/api: complete at abcdef012345, 10 file(s), 40 chunk(s), 12 symbol(s)");
  });

  it("a failed job exits 1 with its last error and how to resume", async () => {
    const { ledger } = fakeLedger([{ phase: "failed", complete: false, errors: ["GitHub answered 502"] }]);
    const out = capture();
    expect(await indexCommand(ledger, split(["acme/api", "--reindex"]), out, never, 1)).toBe(1);
    expect(out.err).toContain("error: index_failed: GitHub answered 502");
  });

  it("--reindex asks reindex_workspace; --no-wait prints the start and returns", async () => {
    const { ledger, calls } = fakeLedger([]);
    const out = capture();
    expect(await indexCommand(ledger, split(["acme/api", "--reindex", "--no-wait"]), out, never, 1)).toBe(0);
    expect(calls.map((c) => c.name)).toEqual(["reindex_workspace"]);
    expect(out.out[0]).toContain("Indexing started.");
  });

  it("a refusal to start is the tool's error; no repository is a usage error", async () => {
    const { ledger } = fakeLedger([], { ok: false, error: { code: "github_not_configured", message: "No token.", hint: "Connect GitHub." } });
    const out = capture();
    expect(await indexCommand(ledger, split(["acme/api"]), out, never, 1)).toBe(1);
    expect(out.err).toEqual(["error: github_not_configured: No token.", "hint: Connect GitHub."]);
    await expect(indexCommand(ledger, split([]), capture(), never, 1)).rejects.toThrow("index needs a repository.");
  });
});
