/** The read-only git tools (seed 002 over the GitHub API): status, inventory, parity, presets, log, diff summary. */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tenantTokenSource } from "../../src/git/credentials";
import { clearSql, deletePresetSql, setInstallationSql, setPresetSql, setTokenSql } from "../../src/git/operator";
import type { Ctx } from "../../src/core/context";
import { findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { errorBody, example, exampleItem, FakeGitHub } from "../support/github/fake";
import { connectGitHub } from "../support/github/tenant";
import { call, fails, newWorld, ok } from "../support/helpers";

afterEach(() => vi.restoreAllMocks());

const SHA_A = "a".repeat(40);
const SHA_B = "b".repeat(40);
const SHA_C = "c".repeat(40);

// GitHub's own example lacks `language`, which its schema requires; a real answer has it.
const repoBody = (over: Record<string, unknown> = {}) => example("GET /repos/{owner}/{repo}", { default_branch: "main", language: "TypeScript", source: { language: "TypeScript" }, ...over });
const branchBody = (name: string, sha: string, isProtected = false) =>
  example("GET /repos/{owner}/{repo}/branches/{branch}", { name, commit: { sha }, protected: isProtected, _links: { html: `https://github.com/octocat/Hello-World/tree/${name}` } });
const compareBody = (ahead: number, behind: number, files?: Record<string, unknown>[]) => {
  return example("GET /repos/{owner}/{repo}/compare/{basehead}", { ahead_by: ahead, behind_by: behind, ...(files ? { files: files.map(diffFile) } : {}) });
};
/** A changed file as GitHub lists them (its own compare example, whose patch is dropped unless given). */
function diffFile(over: Record<string, unknown>) {
  const { patch: _none, ...file } = example<{ files: Record<string, unknown>[] }>("GET /repos/{owner}/{repo}/compare/{basehead}").files[0]!;
  return { ...file, ...over };
}
const commitItem = (sha: string, message: string, date: string, author = { name: "Mona Lisa", email: "mona@example.com" }) =>
  exampleItem("GET /repos/{owner}/{repo}/commits", { sha, commit: { message, author: { ...author, date } } });

async function setup(prefix = "gitread") {
  const w = await newWorld(prefix, { start: "2026-06-01T12:00:00.000Z" });
  const gh = new FakeGitHub();
  const ctx = await connectGitHub(w.ctx, gh);
  return { w, gh, ctx };
}

async function text(ctx: Ctx, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await callTool(findTool(name)!, ctx, args);
  return (result.content[0] as { text: string }).text;
}

/** A bad input is refused with `code` before anything is asked of GitHub. */
async function refusedLocally(ctx: Ctx, gh: FakeGitHub, name: string, args: Record<string, unknown>, code: string) {
  const before = gh.requests.length;
  const err = await fails(ctx, name, args);
  expect(err.code, JSON.stringify(err)).toBe(code);
  expect(err.hint.length).toBeGreaterThan(0);
  expect(gh.requests.length).toBe(before);
  return err;
}

describe("git_status", () => {
  it("reports head, ahead/behind, protection, the open pull request, statuses and checks", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }))
      .on("GET /repos/{owner}/{repo}/branches/{branch}", (req) => ({ body: branchBody(req.path.branch!, SHA_A, false) }))
      .on("GET /repos/{owner}/{repo}/compare/{basehead}", () => ({ body: compareBody(2, 1) }))
      .on("GET /repos/{owner}/{repo}/pulls", () => ({
        body: [exampleItem("GET /repos/{owner}/{repo}/pulls", { number: 7, title: "Add \u202eevil\u200b thing", draft: false, base: { ref: "main" }, requested_teams: [] })],
      }))
      .on("GET /repos/{owner}/{repo}/commits/{ref}/status", () => ({ body: example("GET /repos/{owner}/{repo}/commits/{ref}/status", { state: "pending", total_count: 2 }) }))
      .on("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", () => {
        const run = example<{ check_runs: Record<string, unknown>[] }>("GET /repos/{owner}/{repo}/commits/{ref}/check-runs").check_runs[0]!;
        return {
          body: example("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", {
            total_count: 2,
            check_runs: [
              { ...run, status: "completed", conclusion: "success" },
              { ...run, status: "in_progress", conclusion: null },
            ],
          }),
        };
      })
      .on("GET /repos/{owner}/{repo}/contents/{path}", () => ({ status: 404, body: errorBody("Not Found") }));
    const r = await ok(ctx, "git_status", { repo: "octocat/Hello-World", branch: "feature/x" });
    const row = r.groups[0].repos[0];
    expect(r.groups[0].workspace_root).toBe("octocat/Hello-World");
    expect(row).toMatchObject({ ok: true, branch: "feature/x", base: "main", headSha: SHA_A, headAbbrev: "aaaaaaa", ahead: 2, behind: 1, statusText: "## feature/x...main [ahead 2, behind 1]" });
    expect(row.protected).toBeUndefined();
    expect(row.pullRequest).toMatchObject({ number: 7, title: "Add evil thing", base: "main" });
    expect(row.combinedStatus).toEqual({ state: "pending", total: 2 });
    expect(row.checks).toEqual({ total: 2, success: 1, failure: 0, pending: 1, other: 0 });
    expect(gh.requests.find((q) => q.op === "GET /repos/{owner}/{repo}/compare/{basehead}")!.path.basehead).toBe("main...feature/x");
    expect(gh.requests.find((q) => q.op === "GET /repos/{owner}/{repo}/pulls")!.query).toMatchObject({ head: "octocat:feature/x", state: "open" });
    // No .gitmodules at the head: no submodule rows (test/git/submodules.test.ts has them).
    expect(gh.requests.find((q) => q.op === "GET /repos/{owner}/{repo}/contents/{path}")!).toMatchObject({ path: { path: ".gitmodules" }, query: { ref: SHA_A } });
    expect(r.groups[0].repos).toHaveLength(1);
  });

  it("answers branch_not_found and repo_not_found, and refuses unsafe refs before any request", async () => {
    const { gh, ctx } = await setup();
    let repoExists = true;
    gh.on("GET /repos/{owner}/{repo}", () => (repoExists ? { body: repoBody() } : { status: 404, body: errorBody("Not Found") })).on("GET /repos/{owner}/{repo}/branches/{branch}", () => ({
      status: 404,
      body: errorBody("Branch not found"),
    }));
    expect((await fails(ctx, "git_status", { repo: "octocat/Hello-World", branch: "nope", base: "main" })).code).toBe("branch_not_found");
    repoExists = false;
    expect((await fails(ctx, "git_status", { repo: "octocat/Hello-World" })).code).toBe("repo_not_found");
    await refusedLocally(ctx, gh, "git_status", { repo: "octocat/Hello-World", branch: "a..b" }, "unsafe_ref_token");
    await refusedLocally(ctx, gh, "git_status", { repo: "octocat/Hello-World", base: "-x" }, "unsafe_ref_token");
    await refusedLocally(ctx, gh, "git_status", { repo: "not a repo" }, "invalid_repo");
    await refusedLocally(ctx, gh, "git_status", {}, "invalid_input");
  });

  it("fans out over repos, a failing repository reporting its error in its row", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}", (req) => (req.path.repo === "gone" ? { status: 404, body: errorBody("Not Found") } : { body: repoBody() }))
      .on("GET /repos/{owner}/{repo}/branches/{branch}", (req) => ({ body: branchBody(req.path.branch!, SHA_A, true) }))
      .on("GET /repos/{owner}/{repo}/pulls", () => ({ body: [] }))
      .on("GET /repos/{owner}/{repo}/commits/{ref}/status", () => ({ body: example("GET /repos/{owner}/{repo}/commits/{ref}/status", { total_count: 0, statuses: [] }) }))
      .on("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", () => ({ body: { total_count: 0, check_runs: [] } }))
      .on("GET /repos/{owner}/{repo}/contents/{path}", () => ({ status: 404, body: errorBody("Not Found") }));
    const r = await ok(ctx, "git_status", { repos: ["octocat/Hello-World", "octocat/gone"] });
    expect(r.groups[0].repos[0]).toMatchObject({ statusText: "## main", protected: true, ok: true });
    expect(r.groups[0].repos[0].checks).toBeUndefined();
    expect(r.groups[1].repos[0]).toMatchObject({ label: "octocat/gone", error: "repo_not_found" });
    expect(r.groups[1].repos[0].ok).toBeUndefined();
  });

  describe("markdown renderings", () => {
    it("git_status, git_inventory, git_parity and list_presets render readable markdown", async () => {
      const { gh, ctx } = await setup();
      gh.on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }))
        .on("GET /repos/{owner}/{repo}/branches/{branch}", (req) => ({ body: branchBody(req.path.branch!, SHA_A, true) }))
        .on("GET /repos/{owner}/{repo}/pulls", () => ({ body: [] }))
        .on("GET /repos/{owner}/{repo}/commits/{ref}/status", () => ({ body: example("GET /repos/{owner}/{repo}/commits/{ref}/status", { state: "success", total_count: 1 }) }))
        .on("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", () => ({ body: { total_count: 0, check_runs: [] } }))
        .on("GET /repos/{owner}/{repo}/commits", () => ({ body: [commitItem(SHA_A, "x", "2026-05-30T00:00:00Z")] }))
        .on("GET /repos/{owner}/{repo}/contents/{path}", () => ({ status: 404, body: errorBody("Not Found") }));
      expect(await text(ctx, "git_status", { repo: "octocat/Hello-World" })).toBe("# git_status\n\n### octocat/Hello-World\n```\n## main\n```\nhead aaaaaaa · protected · status success (1)");
      expect(await text(ctx, "git_inventory", { repo: "octocat/Hello-World" })).toContain("| octocat/Hello-World | ## main...origin/main | aaaaaaa | 0 | 0 | tracking origin/main |");
      expect(await text(ctx, "git_parity", { pairs: [{ left: "octocat/a", right: "octocat/b@main" }] })).toContain(
        "### tenant: OK\n| pair | result |\n|---|---|\n| octocat/a / octocat/b@main | match aaaaaaa |",
      );
      expect(await text(ctx, "list_presets", { repo: "octocat/Hello-World" })).toBe(
        "# list_presets\n\n### ledger:git_presets\n(no presets)\n\n### octocat/Hello-World:.rethunk/git-mcp-presets.json\n(no preset file)",
      );
    });
  });
});

describe("git_inventory", () => {
  it("auto mode: each repository's ref against its default branch, with the seed's notes", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}", (req) => (req.path.repo === "gone" ? { status: 404, body: errorBody("Not Found") } : { body: repoBody() }))
      .on("GET /repos/{owner}/{repo}/branches/{branch}", (req) => (req.path.repo === "nobranch" ? { status: 404, body: errorBody("Branch not found") } : { body: branchBody(req.path.branch!, SHA_B) }))
      .on("GET /repos/{owner}/{repo}/compare/{basehead}", () => ({ body: compareBody(3, 0) }));
    await env.DB.prepare(setPresetSql(ctx.tenantId, "mixed", JSON.stringify({ nestedRoots: ["octocat/Hello-World", "octocat/gone", "octocat/nobranch", "bad//name"] }))).run();
    const r = await ok(ctx, "git_inventory", { preset: "mixed", ref: "dev" });
    const [hello, gone, nobranch, bad] = r.inventories[0].entries;
    expect(r.inventories[0].workspace_root).toBe("tenant");
    expect(r.inventories[0].upstream).toBeUndefined();
    expect(hello).toEqual({
      label: "octocat/Hello-World",
      path: "octocat/Hello-World",
      upstreamMode: "auto",
      headAbbrev: "bbbbbbb",
      upstreamRef: "origin/main",
      ahead: "3",
      behind: "0",
      upstreamNote: "tracking origin/main",
      branchStatus: "## dev...origin/main [ahead 3]",
    });
    expect(gone.skipReason).toMatch(/not found/);
    expect(nobranch.skipReason).toBe("(no branch dev — skip)");
    expect(bad.skipReason).toMatch(/rejected/);
  });

  it("fixed mode and truncation at max_roots (maxRoots alias)", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}/branches/{branch}", (req) => ({ body: branchBody(req.path.branch!, SHA_A) })).on("GET /repos/{owner}/{repo}/compare/{basehead}", (req) =>
      req.path.repo === "r1" ? { status: 404, body: errorBody("Not Found") } : { body: compareBody(0, 4) },
    );
    const r = await ok(ctx, "git_inventory", { repos: ["octocat/r0", "octocat/r1", "octocat/r2"], ref: "feature", remote: "origin", branch: "release", maxRoots: 2 });
    const inv = r.inventories[0];
    expect(inv.upstream).toEqual({ mode: "fixed", remote: "origin", branch: "release" });
    expect(inv.nestedRootsTruncated).toBe(true);
    expect(inv.nestedRootsOmittedCount).toBe(1);
    expect(inv.entries).toHaveLength(2);
    expect(inv.entries[0]).toMatchObject({ upstreamMode: "fixed", upstreamRef: "origin/release", ahead: "0", behind: "4" });
    expect(inv.entries[1].upstreamNote).toBe("(no local ref origin/release or unreadable)");
    expect(gh.count("GET /repos/{owner}/{repo}")).toBe(0);
  });

  it("the seed's root limits: max_roots defaults to 64 and goes up to 256, with the requests that takes", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }))
      .on("GET /repos/{owner}/{repo}/branches/{branch}", (req) => ({ body: branchBody(req.path.branch!, SHA_A) }))
      .on("GET /repos/{owner}/{repo}/compare/{basehead}", () => ({ body: compareBody(1, 0) }));
    const repos = Array.from({ length: 130 }, (_, i) => `octocat/r${i}`);
    const byDefault = (await ok(ctx, "git_inventory", { repos: repos.slice(0, 70) })).inventories[0];
    expect(byDefault.entries).toHaveLength(64);
    expect(byDefault.nestedRootsOmittedCount).toBe(6);
    // Three requests per repository (default branch, head, compare): 390, past the other read tools' budget.
    const wide = (await ok(ctx, "git_inventory", { repos, ref: "dev", max_roots: 256 })).inventories[0];
    expect(wide.entries).toHaveLength(130);
    expect(wide.nestedRootsTruncated).toBeUndefined();
    expect(wide.entries[129]).toMatchObject({ label: "octocat/r129", ahead: "1" });
    await refusedLocally(ctx, gh, "git_inventory", { repos, max_roots: 257 }, "invalid_input");
  }, 60_000);

  it("refuses a half upstream and unsafe tokens before any request", async () => {
    const { gh, ctx } = await setup();
    await refusedLocally(ctx, gh, "git_inventory", { repos: ["a/b"], remote: "origin" }, "remote_branch_mismatch");
    await refusedLocally(ctx, gh, "git_inventory", { repos: ["a/b"], remote: "origin", branch: "a..b" }, "invalid_remote_or_branch");
    await refusedLocally(ctx, gh, "git_inventory", { repos: ["a/b"], remote: "-x", branch: "main" }, "invalid_remote_or_branch");
    await refusedLocally(ctx, gh, "git_inventory", { repos: ["a/b"], ref: "x@{1}" }, "unsafe_ref_token");
    await refusedLocally(ctx, gh, "git_inventory", {}, "invalid_input");
    await refusedLocally(ctx, gh, "git_inventory", { repos: ["octocat/ok", "bad//name"] }, "invalid_repo");
  });
});

describe("list_presets", () => {
  const presetFile = (json: unknown) => {
    const content = btoa(typeof json === "string" ? json : JSON.stringify(json));
    return example("GET /repos/{owner}/{repo}/contents/{path}", { type: "file", name: "git-mcp-presets.json", path: ".rethunk/git-mcp-presets.json", content, size: content.length });
  };

  async function storePreset(ctx: Ctx, name: string, roots: string[], pairs: unknown[] = []) {
    await env.DB.prepare(`INSERT INTO git_presets (tenant_id, name, nested_roots, parity_pairs, updated_at) VALUES (?, ?, ?, ?, ?)`)
      .bind(ctx.tenantId, name, JSON.stringify(roots), JSON.stringify(pairs), "2026-06-01T00:00:00Z")
      .run();
  }

  it("list_presets reports the tenant's presets and the repository's file; tenants do not share presets", async () => {
    const { gh, ctx } = await setup();
    await storePreset(ctx, "services", ["octocat/api", "octocat/web"]);
    gh.on("GET /repos/{owner}/{repo}/contents/{path}", () => ({
      body: presetFile({ schemaVersion: 1, presets: { mirrors: { parityPairs: [{ left: "octocat/a@main", right: "octocat/b@main" }], workspaceRootHint: "x" } } }),
    }));
    const r = await ok(ctx, "list_presets", { repo: "octocat/Hello-World" });
    expect(r.roots[0]).toMatchObject({ workspaceRoot: "tenant", presetFile: "ledger:git_presets", presets: [{ name: "services", nestedRootsCount: 2, parityPairsCount: 0 }] });
    expect(r.roots[1]).toMatchObject({
      workspaceRoot: "octocat/Hello-World",
      gitTop: "octocat/Hello-World",
      fileExists: true,
      presetSchemaVersion: 1,
      presets: [{ name: "mirrors", parityPairsCount: 1, workspaceRootHint: "x" }],
    });
    expect(gh.requests[0]!.path.path).toBe(".rethunk/git-mcp-presets.json");

    const b = await newWorld("gitread-b", { start: "2026-06-01T12:00:00.000Z" });
    const bCtx = { ...b.ctx, env: ctx.env };
    const mine = await ok(bCtx, "list_presets", {});
    expect(mine.roots[0].presets).toBeUndefined();
    expect((await fails(bCtx, "list_presets", { repo: "octocat/Hello-World" })).code).toBe("github_not_configured");
  });

  it("reads the legacy flat shape, treats a missing file as no presets, and reports bad JSON and schema errors", async () => {
    const { gh, ctx } = await setup();
    let answer: () => { status?: number; body: unknown } = () => ({ body: presetFile({ schemaVersion: 2, $schema: "x", old: { nestedRoots: ["octocat/x"] } }) });
    gh.on("GET /repos/{owner}/{repo}/contents/{path}", () => answer()).on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }));
    expect((await ok(ctx, "list_presets", { repo: "octocat/Hello-World" })).roots[1].presets).toEqual([{ name: "old", nestedRootsCount: 1, parityPairsCount: 0, nestedRoots: ["octocat/x"] }]);
    answer = () => ({ status: 404, body: errorBody("Not Found") });
    const missing = (await ok(ctx, "list_presets", { repo: "octocat/Hello-World" })).roots[1];
    expect(missing.fileExists).toBeUndefined();
    expect(missing.error).toBeUndefined();
    answer = () => ({ body: presetFile("{not json") });
    expect((await ok(ctx, "list_presets", { repo: "octocat/Hello-World" })).roots[1]).toMatchObject({ error: "preset_file_invalid", kind: "invalid_json" });
    answer = () => ({ body: presetFile({ presets: { p: { nestedRoots: "octocat/x" } } }) });
    const schema = (await ok(ctx, "list_presets", { repo: "octocat/Hello-World" })).roots[1];
    expect(schema).toMatchObject({ error: "preset_file_invalid", kind: "schema" });
    expect(schema.issues[0]).toMatch(/p\.nestedRoots/);
    await refusedLocally(ctx, gh, "list_presets", { repo: "octocat/Hello-World", ref: "a b" }, "unsafe_ref_token");
    await refusedLocally(ctx, gh, "list_presets", { ref: "main" }, "invalid_input");
  });

  it("git_inventory and git_parity resolve presets (tenant first, then the file), preset_not_found otherwise", async () => {
    const { gh, ctx } = await setup();
    await storePreset(ctx, "svc", ["octocat/api"]);
    gh.on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }))
      .on("GET /repos/{owner}/{repo}/branches/{branch}", (req) => ({ body: branchBody(req.path.branch!, SHA_A) }))
      .on("GET /repos/{owner}/{repo}/contents/{path}", () => ({ body: presetFile({ presets: { pairs: { parityPairs: [{ left: "octocat/a@main", right: "octocat/b@main", label: "mirror" }] } } }) }))
      .on("GET /repos/{owner}/{repo}/commits", () => ({ body: [commitItem(SHA_C, "x", "2026-05-30T00:00:00Z")] }));
    const inv = await ok(ctx, "git_inventory", { preset: "svc", repos: ["octocat/web"], preset_merge: true });
    expect(inv.inventories[0].entries.map((e: { label: string }) => e.label)).toEqual(["octocat/web", "octocat/api"]);
    const par = await ok(ctx, "git_parity", { repo: "octocat/Hello-World", preset: "pairs" });
    expect(par.parity[0]).toMatchObject({ workspace_root: "octocat/Hello-World", status: "OK", pairs: [{ label: "mirror", match: true, sha: SHA_C }] });
    expect((await fails(ctx, "git_parity", { repo: "octocat/Hello-World", preset: "missing" })).code).toBe("preset_not_found");
    expect((await fails(ctx, "git_inventory", { preset: "missing" })).code).toBe("preset_not_found");
  });
});

describe("git_parity", () => {
  it("compares heads of owner/name@ref pairs; one request per distinct side", async () => {
    const { gh, ctx } = await setup();
    const heads: Record<string, string> = { main: SHA_A, mirror: SHA_A, dev: SHA_B };
    gh.on("GET /repos/{owner}/{repo}/commits", (req) => {
      const sha = heads[req.query.sha ?? "main"];
      return sha ? { body: [commitItem(sha, "x", "2026-05-30T00:00:00Z")] } : { status: 404, body: errorBody("No commit found for SHA") };
    }).on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }));
    const r = await ok(ctx, "git_parity", {
      pairs: [
        { left: "octocat/a@main", right: "octocat/b@mirror" },
        { left: "octocat/a@main", right: "octocat/b@dev", label: "dev" },
        { left: "octocat/a", right: "octocat/b@gone" },
      ],
    });
    const [same, differ, missing] = r.parity[0].pairs;
    expect(r.parity[0].status).toBe("MISMATCH");
    expect(same).toEqual({ label: "octocat/a@main / octocat/b@mirror", leftPath: "octocat/a@main", rightPath: "octocat/b@mirror", match: true, sha: SHA_A });
    expect(differ).toMatchObject({ label: "dev", leftSha: SHA_A, rightSha: SHA_B });
    expect(differ.match).toBeUndefined();
    expect(missing.error).toMatch(/ref not found/);
    expect(gh.requests.filter((q) => q.op === "GET /repos/{owner}/{repo}/commits" && q.path.repo === "a" && q.query.sha === "main")).toHaveLength(1);
  });

  it("refuses no pairs and unsafe sides before any request", async () => {
    const { gh, ctx } = await setup();
    await refusedLocally(ctx, gh, "git_parity", {}, "no_pairs");
    await refusedLocally(ctx, gh, "git_parity", { pairs: [{ left: "octocat/a@a..b", right: "octocat/b" }] }, "unsafe_ref_token");
    await refusedLocally(ctx, gh, "git_parity", { pairs: [{ left: "nope", right: "octocat/b" }] }, "invalid_repo");
  });
});

describe("git_log", () => {
  const commits = (n: number, start = Date.parse("2026-06-01T11:00:00Z")) =>
    Array.from({ length: n }, (_, i) => commitItem(i.toString(16).padStart(40, "0"), `commit ${i}\n\nbody`, new Date(start - i * 3600_000).toISOString().replace(/\.\d{3}Z$/, "Z")));

  it("lists commits newest first with the seed's fields, since as a relative form, truncation by fetching one more", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}/commits", (req) => ({ body: commits(20).slice(0, Number(req.query.per_page)) }));
    const r = await ok(ctx, "git_log", { repo: "octocat/Hello-World", since: "2.days.ago", maxCommits: 3 });
    const g = r.groups[0];
    expect(g).toMatchObject({ workspace_root: "octocat/Hello-World", repo: "Hello-World", branch: "HEAD", truncated: true, omittedCount: 1 });
    expect(g.commits).toHaveLength(3);
    expect(g.commits[0]).toEqual({
      sha7: "0000000",
      shaFull: "0".repeat(40),
      subject: "commit 0",
      author: "Mona Lisa",
      email: "mona@example.com",
      date: "2026-06-01T11:00:00Z",
      ageRelative: "1h ago",
    });
    expect(gh.requests[0]!.query).toMatchObject({ since: "2026-05-30T12:00:00Z", per_page: "4" });
    expect(gh.requests[0]!.query.sha).toBeUndefined();
  });

  it("filters by author and grep here (case-insensitive), merges several paths by SHA, adds stats when asked", async () => {
    const { gh, ctx } = await setup();
    const list = [
      commitItem(SHA_A, "Fix: the Parser\u0007", "2026-06-01T10:00:00Z", { name: "Ada \u202eEvil", email: "ada@example.com" }),
      commitItem(SHA_B, "docs", "2026-06-01T09:00:00Z", { name: "Ada", email: "ada@example.com" }),
      commitItem(SHA_C, "fix the lexer", "2026-06-01T08:00:00Z", { name: "Bob", email: "bob@example.com" }),
    ];
    gh.on("GET /repos/{owner}/{repo}/commits", (req) => ({ body: req.query.path === "src/a.ts" ? list.slice(0, 2) : list.slice(0, 1) })).on("GET /repos/{owner}/{repo}/commits/{ref}", () => ({
      body: example("GET /repos/{owner}/{repo}/commits/{ref}", { stats: { additions: 5, deletions: 0, total: 5 }, files: [diffFile({})] }),
    }));
    const r = await ok(ctx, "git_log", { repo: "octocat/Hello-World", paths: ["src/a.ts", "src/b.ts"], grep: "FIX", author: "ada", stats: true, branch: "dev" });
    const g = r.groups[0];
    expect(g.commits).toHaveLength(1);
    expect(g.commits[0]).toMatchObject({ shaFull: SHA_A, subject: "Fix: the Parser", author: "Ada Evil", filesChanged: 1, insertions: 5 });
    expect(g.commits[0].deletions).toBeUndefined();
    expect(g.truncated).toBeUndefined();
    expect(g.branch).toBe("dev");
    expect(gh.requests.filter((q) => q.op === "GET /repos/{owner}/{repo}/commits").map((q) => q.query.path)).toEqual(["src/a.ts", "src/b.ts"]);
    expect(gh.requests.every((q) => q.op !== "GET /repos/{owner}/{repo}/commits" || q.query.sha === "dev")).toBe(true);
    expect(gh.count("GET /repos/{owner}/{repo}/commits/{ref}")).toBe(1);
  });

  it("grep is a regular expression (RE2, case-insensitive, ^ at each line of the message) as git --grep; a bad one is refused before any request", async () => {
    const { gh, ctx } = await setup();
    const list = [
      commitItem(SHA_A, "feat(api): add the endpoint", "2026-06-01T10:00:00Z"),
      commitItem(SHA_B, "docs: mention feat(api)\n\nFix: typo", "2026-06-01T09:00:00Z"),
      commitItem(SHA_C, "fix the lexer", "2026-06-01T08:00:00Z"),
    ];
    gh.on("GET /repos/{owner}/{repo}/commits", () => ({ body: list }));
    const shas = async (grep: string) => (await ok(ctx, "git_log", { repo: "octocat/Hello-World", grep })).groups[0].commits?.map((c: { shaFull: string }) => c.shaFull) ?? [];
    expect(await shas("^feat\\(api\\)")).toEqual([SHA_A]);
    expect(await shas("^fix")).toEqual([SHA_B, SHA_C]);
    expect(await shas("lexer|endpoint")).toEqual([SHA_A, SHA_C]);
    expect(await shas("f.x the")).toEqual([SHA_C]);
    const err = await refusedLocally(ctx, gh, "git_log", { repo: "octocat/Hello-World", grep: "(a" }, "invalid_input");
    expect(err.hint).toContain("RE2");
    await refusedLocally(ctx, gh, "git_log", { repo: "octocat/Hello-World", grep: "(?=x)" }, "invalid_input");
  });

  it("refuses bad since, paths and branch before any request; an unknown branch is git_log_failed", async () => {
    const { gh, ctx } = await setup();
    await refusedLocally(ctx, gh, "git_log", { repo: "octocat/Hello-World", since: "1.day; rm -rf /" }, "invalid_since");
    await refusedLocally(ctx, gh, "git_log", { repo: "octocat/Hello-World", since: "last tuesday" }, "invalid_since");
    await refusedLocally(ctx, gh, "git_log", { repo: "octocat/Hello-World", paths: ["../etc/passwd"] }, "invalid_paths");
    await refusedLocally(ctx, gh, "git_log", { repo: "octocat/Hello-World", paths: ["a|b"] }, "invalid_paths");
    await refusedLocally(ctx, gh, "git_log", { repo: "octocat/Hello-World", branch: "a~1" }, "unsafe_ref_token");
    await refusedLocally(ctx, gh, "git_log", { repo: "octocat/Hello-World", maxCommits: 501 }, "invalid_input");
    gh.on("GET /repos/{owner}/{repo}/commits", () => ({ status: 404, body: errorBody("No commit found for SHA: nope") })).on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }));
    expect((await fails(ctx, "git_log", { repo: "octocat/Hello-World", branch: "nope" })).code).toBe("git_log_failed");
  });

  it("stops at the per-call request budget instead of fanning out without bound", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}/commits", () => ({ body: commits(100) }));
    const paths = Array.from({ length: 10 }, (_, i) => `p${i}`);
    const err = await fails(ctx, "git_log", { repos: ["o/r1", "o/r2", "o/r3", "o/r4"], paths, grep: "never-matches" });
    expect(err.code).toBe("request_budget_exceeded");
    expect(gh.requests.length).toBeLessThanOrEqual(300);
  }, 60_000); // 300 full pages, each checked against GitHub's schema

  it("a rate limit fails the whole call (not one row), retryable, with the reset time in the hint", async () => {
    const { gh, ctx } = await setup();
    const reset = Math.floor(Date.now() / 1000) + 3600;
    gh.on("GET /repos/{owner}/{repo}/commits", () => ({ status: 403, body: errorBody("API rate limit exceeded"), headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) } }));
    const err = await fails(ctx, "git_log", { repos: ["octocat/a", "octocat/b"] });
    expect(err).toMatchObject({ code: "github_rate_limited", retryable: true });
    expect(err.hint).toContain(new Date(reset * 1000).toISOString());
  });

  it("reuses the ETag on a repeated read (a 304 answers from the cache)", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}/commits", (req) =>
      req.headers.get("if-none-match") === '"log-v1"' ? { status: 304, headers: { etag: '"log-v1"' } } : { body: commits(2), headers: { etag: '"log-v1"' } },
    );
    const first = await ok(ctx, "git_log", { repo: "octocat/etag-repo", since: "2026-05-01T00:00:00Z" });
    const second = await ok(ctx, "git_log", { repo: "octocat/etag-repo", since: "2026-05-01T00:00:00Z" });
    expect(gh.requests[1]!.headers.get("if-none-match")).toBe('"log-v1"');
    expect(second).toEqual(first);
  });

  it("renders markdown by default and minified, compacted JSON with format json", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}/commits", () => ({ body: commits(1) }));
    const md = await text(ctx, "git_log", { repo: "octocat/Hello-World" });
    expect(md).toMatch(/^# git_log\n\n### octocat\/Hello-World \(HEAD\)\n- 0000000 commit 0 — Mona Lisa, 1h ago$/);
    const json = await text(ctx, "git_log", { repo: "octocat/Hello-World", format: "json" });
    expect(json).not.toMatch(/\n| {2}|null|false|"ok"/);
    expect(JSON.parse(json)).toEqual({ groups: [{ workspace_root: "octocat/Hello-World", repo: "Hello-World", branch: "HEAD", commits: [expect.objectContaining({ sha7: "0000000" })] }] });
  });

  describe("errors under format", () => {
    it("a failure asked for format json is the seed's minified error payload with its format version; markdown keeps the envelope's text", async () => {
      const { gh, ctx } = await setup();
      const json = await callTool(findTool("git_log")!, ctx, { repo: "octocat/Hello-World", since: "bad;", format: "json" });
      expect(json.isError).toBe(true);
      const body = JSON.parse((json.content[0] as { text: string }).text);
      expect(body).toEqual({ error: "invalid_since", message: expect.stringContaining("bad;"), hint: expect.stringContaining("ISO"), retryable: false, jsonFormatVersion: "2" });
      expect(json.structuredContent).toMatchObject({ ok: false, error: { code: "invalid_since" } });
      // Refused for its arguments (nothing parsed): still JSON, since the caller asked for it.
      const unknown = await callTool(findTool("git_status")!, ctx, { repo: "octocat/Hello-World", nope: 1, format: "json" });
      expect(JSON.parse((unknown.content[0] as { text: string }).text)).toMatchObject({ error: "invalid_input", jsonFormatVersion: "2" });
      gh.on("GET /repos/{owner}/{repo}/compare/{basehead}", () => ({ status: 404, body: errorBody("Not Found") })).on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }));
      const github = await callTool(findTool("git_diff_summary")!, ctx, { repo: "octocat/Hello-World", range: "a...b", format: "json" });
      expect(JSON.parse((github.content[0] as { text: string }).text)).toMatchObject({ error: "git_diff_failed", jsonFormatVersion: "2" });
      expect(await text(ctx, "git_log", { repo: "octocat/Hello-World", since: "bad;" })).toMatch(/^Error \[invalid_since\]: /);
    });
  });

  describe("credentials and the registered repositories", () => {
    it("takes a repository registered in the work ledger by id, and refuses one registered on another host before any request", async () => {
      const { gh, ctx } = await setup();
      gh.on("GET /repos/{owner}/{repo}/commits", () => ({ body: [] }));
      const here = (await ok(ctx, "repo_register", { remote_url: "https://api.github.test/acme/api" })).repository;
      const r = await ok(ctx, "git_log", { repo: here.id });
      expect(r.groups[0].workspace_root).toBe("acme/api");
      expect(gh.requests[0]!.path).toMatchObject({ owner: "acme", repo: "api" });
      const elsewhere = (await ok(ctx, "repo_register", { remote_url: "https://github.com/acme/web" })).repository;
      await refusedLocally(ctx, gh, "git_log", { repo: elsewhere.id }, "repo_not_on_github");
    });

    it("a tenant without credentials gets github_not_configured, after validation", async () => {
      const { ctx } = await setup();
      const b = await newWorld("gitread-nocreds", { start: "2026-06-01T12:00:00.000Z" });
      const bCtx = { ...b.ctx, env: ctx.env };
      for (const [name, args] of [
        ["git_status", { repo: "octocat/Hello-World" }],
        ["git_log", { repo: "octocat/Hello-World" }],
        ["git_diff_summary", { repo: "octocat/Hello-World", range: "a...b" }],
      ] as const) {
        const err = await fails(bCtx, name, args);
        expect(err.code, name).toBe("github_not_configured");
      }
      const r = await call(bCtx, "git_log", { repo: "octocat/Hello-World", since: "bad;" });
      expect(r.error.code).toBe("invalid_since");
    });
  });

  describe("the seed's workspace pick over registered repositories", () => {
    it("workspaceRoot names the repository, rootIndex the Nth registered one (repo_query's order), allWorkspaceRoots all of them; nestedRoots is git_inventory's repos", async () => {
      const { gh, ctx } = await setup();
      gh.on("GET /repos/{owner}/{repo}/commits", () => ({ body: [] }))
        .on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }))
        .on("GET /repos/{owner}/{repo}/branches/{branch}", (req) => ({ body: branchBody(req.path.branch!, SHA_A) }));
      for (const name of ["zeta", "alpha", "mid"]) await ok(ctx, "repo_register", { remote_url: `https://api.github.test/acme/${name}` });
      const roots = async (args: Record<string, unknown>) => (await ok(ctx, "git_log", args)).groups.map((g: { workspace_root: string }) => g.workspace_root);
      expect(await roots({ workspaceRoot: "acme/zeta" })).toEqual(["acme/zeta"]);
      expect(await roots({ rootIndex: 1 })).toEqual(["acme/mid"]);
      expect(await roots({ allWorkspaceRoots: true })).toEqual(["acme/alpha", "acme/mid", "acme/zeta"]);
      const out = await refusedLocally(ctx, gh, "git_log", { rootIndex: 3 }, "root_index_out_of_range");
      expect(out.message).toContain("3 registered");
      await refusedLocally(ctx, gh, "git_log", { repo: "acme/zeta", rootIndex: 0 }, "invalid_input");
      await refusedLocally(ctx, gh, "git_status", { workspaceRoot: "acme/zeta", allWorkspaceRoots: true }, "invalid_input");
      await refusedLocally(ctx, gh, "git_diff_summary", { range: "a...b" }, "invalid_input");
      const inv = (await ok(ctx, "git_inventory", { nestedRoots: ["acme/alpha", "acme/mid"] })).inventories[0];
      expect(inv.entries.map((e: { path: string }) => e.path)).toEqual(["acme/alpha", "acme/mid"]);
      await refusedLocally(ctx, gh, "git_inventory", { nestedRoots: ["acme/alpha"], repos: ["acme/mid"] }, "invalid_input");
    });
  });
});

describe("git_diff_summary", () => {
  const files = [
    { filename: "src/a.ts", status: "modified", additions: 3, deletions: 1, patch: "@@ -1 +1 @@\n-a\n+b\n+c\n+d" },
    { filename: "src/new\u200b.ts", status: "renamed", previous_filename: "src/old.ts", additions: 0, deletions: 0 },
    { filename: "package-lock.json", status: "modified", additions: 100, deletions: 90 },
    { filename: "docs/x.md", status: "removed", additions: 0, deletions: 4, patch: "@@ -1,4 +0,0 @@" },
    { filename: "bin/tool", status: "added", additions: 0, deletions: 0 },
  ];

  it("summarizes a compare range with statuses, renames, excludes and line truncation", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}/compare/{basehead}", () => ({ body: compareBody(1, 0, files) }));
    const r = await ok(ctx, "git_diff_summary", { repo: "octocat/Hello-World", range: "main...feature", maxLinesPerFile: 2, maxFiles: 3 });
    expect(gh.requests[0]!.path.basehead).toBe("main...feature");
    expect(r).toMatchObject({ range: "main...feature", totalFiles: 4, totalAdditions: 3, totalDeletions: 5, truncatedFiles: 1, excludedFiles: ["package-lock.json"] });
    expect(r.note).toBeUndefined();
    expect(r.files[0]).toEqual({ path: "src/a.ts", status: "modified", additions: 3, deletions: 1, truncated: true, diff: "@@ -1 +1 @@\n-a" });
    expect(r.files[1]).toEqual({ path: "src/new.ts", status: "renamed", oldPath: "src/old.ts", additions: 0, deletions: 0 });
    expect(r.files[2]).toMatchObject({ path: "docs/x.md", status: "deleted" });
    const filtered = await ok(ctx, "git_diff_summary", { repo: "octocat/Hello-World", range: "main..feature", file_filter: "*.md", exclude_patterns: [] });
    expect(filtered.files.map((f: { path: string }) => f.path)).toEqual(["docs/x.md"]);
    expect(filtered.note).toMatch(/merge base/);
    expect(filtered.excludedFiles).toBeUndefined();
  });

  it("diffs a single ref against its parent (HEAD = the default branch) and a pull request's files", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}", () => ({ body: repoBody({ default_branch: "trunk" }) }))
      .on("GET /repos/{owner}/{repo}/commits/{ref}", () => ({
        body: example("GET /repos/{owner}/{repo}/commits/{ref}", { files: [diffFile({ filename: "a.txt", status: "added", additions: 1, deletions: 0, patch: "+x" })] }),
      }))
      .on("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", () => ({
        body: [exampleItem("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", { filename: "b.txt", status: "modified", additions: 2, deletions: 2, patch: "-a\n+b" })],
      }));
    const head = await ok(ctx, "git_diff_summary", { repo: "octocat/Hello-World" });
    expect(head).toMatchObject({ range: "HEAD", totalFiles: 1, files: [{ path: "a.txt", status: "added", diff: "+x" }] });
    expect(gh.requests.find((q) => q.op === "GET /repos/{owner}/{repo}/commits/{ref}")!.path.ref).toBe("trunk");
    const pr = await ok(ctx, "git_diff_summary", { repo: "octocat/Hello-World", pull_request: 12 });
    expect(pr).toMatchObject({ range: "pull request #12", totalAdditions: 2, files: [{ path: "b.txt" }] });
  });

  it("pages a commit's files past 100 and notes the compare API's 300-file cap", async () => {
    const { gh, ctx } = await setup();
    const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => diffFile({ filename: `${prefix}/f${i}.ts`, status: "modified", additions: 1, deletions: 0, patch: "+x" }));
    gh.on("GET /repos/{owner}/{repo}/commits/{ref}", (req) => ({ body: example("GET /repos/{owner}/{repo}/commits/{ref}", { files: req.query.page === "1" ? many(100, "a") : many(3, "b") }) })).on(
      "GET /repos/{owner}/{repo}/compare/{basehead}",
      () => ({ body: compareBody(1, 0, many(300, "c")) }),
    );
    const commit = await ok(ctx, "git_diff_summary", { repo: "octocat/Hello-World", range: SHA_A, max_files: 1 });
    expect(commit).toMatchObject({ totalFiles: 103, totalAdditions: 103, truncatedFiles: 102 });
    expect(gh.requests.filter((q) => q.op === "GET /repos/{owner}/{repo}/commits/{ref}").map((q) => q.query.page)).toEqual(["1", "2"]);
    const cmp = await ok(ctx, "git_diff_summary", { repo: "octocat/Hello-World", range: "a..b", max_files: 1 });
    expect(cmp.note).toMatch(/merge base.*at most 300 files/);
  });

  it("refuses staged/unstaged and unsafe ranges before any request; a missing ref is git_diff_failed", async () => {
    const { gh, ctx } = await setup();
    for (const range of ["staged", "cached", "unstaged"]) await refusedLocally(ctx, gh, "git_diff_summary", { repo: "octocat/Hello-World", range }, "unsupported_range");
    await refusedLocally(ctx, gh, "git_diff_summary", { repo: "octocat/Hello-World", range: "HEAD~1..HEAD" }, "unsafe_range_token");
    await refusedLocally(ctx, gh, "git_diff_summary", { repo: "octocat/Hello-World", range: "a....b" }, "unsafe_range_token");
    await refusedLocally(ctx, gh, "git_diff_summary", { repo: "octocat/Hello-World", range: "a...b", pull_request: 1 }, "invalid_input");
    await refusedLocally(ctx, gh, "git_diff_summary", { repo: "octocat/Hello-World", max_files: 0 }, "invalid_input");
    gh.on("GET /repos/{owner}/{repo}/compare/{basehead}", () => ({ status: 404, body: errorBody("Not Found") })).on("GET /repos/{owner}/{repo}", (req) =>
      req.path.repo === "gone" ? { status: 404, body: errorBody("Not Found") } : { body: repoBody() },
    );
    expect((await fails(ctx, "git_diff_summary", { repo: "octocat/Hello-World", range: "main...nope" })).code).toBe("git_diff_failed");
    expect((await fails(ctx, "git_diff_summary", { repo: "octocat/gone", range: "main...nope" })).code).toBe("repo_not_found");
  });

  it("markdown shows each file and the excluded ones", async () => {
    const { gh, ctx } = await setup();
    gh.on("GET /repos/{owner}/{repo}/compare/{basehead}", () => ({ body: compareBody(1, 0, files) }));
    const md = await text(ctx, "git_diff_summary", { repo: "octocat/Hello-World", range: "main...feature" });
    expect(md).toContain("# git_diff_summary: main...feature");
    expect(md).toContain("### src/old.ts → src/new.ts (renamed, +0 -0)");
    expect(md).toContain("Excluded: package-lock.json");
  });
});

describe("the github operator command's SQL", () => {
  const KEY = "operator-test-key-0123456789abcdefghij";
  const envWithKey = { ...env, GITHUB_CREDENTIALS_KEY: KEY };

  it("stores a token the tenant's token source decrypts, switches to an installation, and clears", async () => {
    const w = await newWorld("gitop", { start: "2026-06-01T12:00:00.000Z" });
    await env.DB.prepare(await setTokenSql(w.id.tenantId, "github_pat_0123456789abcdef'x", KEY)).run();
    expect(await tenantTokenSource(envWithKey, w.id.tenantId)()).toBe("github_pat_0123456789abcdef'x");
    const other = await newWorld("gitop-b", { start: "2026-06-01T12:00:00.000Z" });
    await expect(tenantTokenSource(envWithKey, other.id.tenantId)()).rejects.toMatchObject({ code: "github_not_configured" });
    await env.DB.prepare(setInstallationSql(w.id.tenantId, "123456")).run();
    expect(await env.DB.prepare(`SELECT kind, secret, installation_id FROM github_credentials WHERE tenant_id = ?`).bind(w.id.tenantId).first()).toEqual({
      kind: "app",
      secret: "",
      installation_id: "123456",
    });
    await env.DB.prepare(clearSql(w.id.tenantId)).run();
    await expect(tenantTokenSource(envWithKey, w.id.tenantId)()).rejects.toMatchObject({ code: "github_not_configured" });
    await expect(setTokenSql(w.id.tenantId, "short", KEY)).rejects.toThrow(/token/);
    expect(() => setInstallationSql(w.id.tenantId, "12; DROP TABLE x")).toThrow(/installation/);
  });

  it("stores presets list_presets reads, validated as the tools read them", async () => {
    const { ctx } = await setup("gitop-preset");
    await env.DB.prepare(
      setPresetSql(ctx.tenantId, "svc", JSON.stringify({ nestedRoots: ["octocat/api"], parityPairs: [{ left: "octocat/a@main", right: "octocat/b" }], workspaceRootHint: "it's" })),
    ).run();
    const r = await ok(ctx, "list_presets", {});
    expect(r.roots[0].presets).toEqual([
      { name: "svc", nestedRootsCount: 1, parityPairsCount: 1, workspaceRootHint: "it's", nestedRoots: ["octocat/api"], parityPairs: [{ left: "octocat/a@main", right: "octocat/b" }] },
    ]);
    expect(() => setPresetSql(ctx.tenantId, "bad", JSON.stringify({ nestedRoots: "x" }))).toThrow();
    expect(() => setPresetSql(ctx.tenantId, "bad", JSON.stringify({ extra: 1 }))).toThrow();
    expect(() => setPresetSql(ctx.tenantId, "a'b", "{}")).toThrow(/name/);
    await env.DB.prepare(deletePresetSql(ctx.tenantId, "svc")).run();
    expect((await ok(ctx, "list_presets", {})).roots[0].presets).toBeUndefined();
  });
});
