/** The mutating git tools (batch_commit, git_merge, git_cherry_pick) against an in-memory repository behind the fake GitHub. */
import { describe, expect, it } from "vitest";
import { GitHubClient } from "../../src/git/client";
import { GitWriter } from "../../src/git/writer";
import type { Ctx } from "../../src/core/context";
import { findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { errorBody, FakeGitHub } from "../support/github/fake";
import { FakeRepo } from "../support/github/fake-repo";
import { connectGitHub } from "../support/github/tenant";
import { call, fails, makeCtx, ok, seedIdentity } from "../support/helpers";

const REPO = "octocat/Hello-World";
let n = 0;

async function setup(): Promise<{ ctx: Ctx; gh: FakeGitHub; repo: FakeRepo; main: string }> {
  const id = await seedIdentity(`git-write-${++n}`, "agent");
  const gh = new FakeGitHub();
  const repo = new FakeRepo(gh);
  const main = repo.write("main", { "README.md": "hello\n", "src/a.ts": "a1\n" }, "initial");
  const ctx = await connectGitHub(makeCtx(id), gh);
  return { ctx, gh, repo, main };
}

const forced = (gh: FakeGitHub) => gh.requests.filter((r) => r.body?.force === true);
const refUpdates = (gh: FakeGitHub) => gh.requests.filter((r) => r.op === "PATCH /repos/{owner}/{repo}/git/refs/{ref}");

describe("batch_commit", () => {
  it("commits entries in order on the default branch and moves it once, without force", async () => {
    const { ctx, gh, repo, main } = await setup();
    const r = await ok(ctx, "batch_commit", {
      repo: REPO,
      commits: [
        { message: "feat: add b", files: [{ path: "src/b.ts", content: "b\n" }] },
        {
          message: "chore: binary and cleanup",
          files: [
            { path: "img/x.bin", content: btoa("\u0001\u0002"), encoding: "base64" },
            { path: "README.md", delete: true },
          ],
        },
      ],
      format: "json",
    });
    expect(r).toMatchObject({ ok: true, branch: "main", committed: 2, total: 2 });
    expect(r.results.map((x: { ok: boolean }) => x.ok)).toEqual([true, true]);
    expect(repo.refs.get("main")).toBe(r.headSha);
    expect(repo.commits.get(r.results[1].sha)!.parents).toEqual([r.results[0].sha]);
    expect(repo.commits.get(r.results[0].sha)!.parents).toEqual([main]);
    expect(repo.files("main")).toEqual({ "src/a.ts": "a1\n", "src/b.ts": "b\n", "img/x.bin": "\u0001\u0002" });
    expect(refUpdates(gh)).toHaveLength(1);
    expect(refUpdates(gh)[0]!.body).toMatchObject({ force: false });
    expect(gh.count("POST /repos/{owner}/{repo}/git/blobs")).toBe(1);
  });

  it("renders markdown by default and the minified payload for format json", async () => {
    const { ctx } = await setup();
    const args = { repo: REPO, commits: [{ message: "docs: x", files: [{ path: "x.md", content: "x" }] }] };
    const md = await callTool(findTool("batch_commit")!, ctx, args);
    expect((md.content[0] as { text: string }).text).toMatch(/^# batch_commit ok: 1\/1 committed on main/);
    const json = await callTool(findTool("batch_commit")!, ctx, { ...args, commits: [{ message: "docs: y", files: [{ path: "y.md", content: "y" }] }], format: "json" });
    const parsed = JSON.parse((json.content[0] as { text: string }).text);
    expect(parsed).toMatchObject({ ok: true, committed: 1 });
    expect(parsed.created).toBeUndefined();
  });

  it("a failure asked for format json is JSON too (the seed's error payload and format version)", async () => {
    const { ctx } = await setup();
    const r = await callTool(findTool("batch_commit")!, ctx, { repo: REPO, branch: "nope", commits: [{ message: "x", files: [{ path: "x.md", content: "x" }] }], format: "json" });
    expect(r.isError).toBe(true);
    expect(JSON.parse((r.content[0] as { text: string }).text)).toMatchObject({ error: "branch_not_found", hint: expect.stringContaining("base"), jsonFormatVersion: "2" });
    for (const name of ["git_merge", "git_cherry_pick"]) {
      const bad = await callTool(findTool(name)!, ctx, { repo: REPO, sources: ["a~1"], format: "json" });
      expect(JSON.parse((bad.content[0] as { text: string }).text), name).toMatchObject({ error: "unsafe_ref_token", jsonFormatVersion: "2" });
    }
  });

  it('push "after" (or true) reports the commits as on the remote, since the API wrote them there; workspaceRoot names the repository', async () => {
    const { ctx, repo } = await setup();
    const entry = (path: string) => ({ message: `add ${path}`, files: [{ path, content: path }] });
    const r = await ok(ctx, "batch_commit", { workspaceRoot: REPO, commits: [entry("p.md")], push: "after" });
    expect(r.push).toEqual({ ok: true, branch: "main", upstream: "origin/main", note: expect.stringContaining("already on the remote") });
    expect(repo.refs.get("main")).toBe(r.headSha);
    expect((await ok(ctx, "batch_commit", { repo: REPO, commits: [entry("q.md")], push: true })).push.ok).toBe(true);
    expect((await ok(ctx, "batch_commit", { repo: REPO, commits: [entry("r.md")] })).push).toBeUndefined();
    const stopped = await call(ctx, "batch_commit", { repo: REPO, commits: [entry("s.md"), entry("s.md")], push: "after" });
    expect(stopped.ok).toBe(false);
    expect(stopped.committed).toBe(1);
    expect(stopped.push).toBeUndefined();
    expect((await fails(ctx, "batch_commit", { commits: [entry("t.md")] })).code).toBe("invalid_input");
  });

  it("creates a missing branch from base, and refuses a missing branch without base", async () => {
    const { ctx, repo, main } = await setup();
    const r = await ok(ctx, "batch_commit", { repo: REPO, branch: "feature/x", base: "main", commits: [{ message: "x", files: [{ path: "x", content: "1" }] }] });
    expect(r).toMatchObject({ ok: true, created: true, branch: "feature/x" });
    expect(repo.commits.get(repo.refs.get("feature/x")!)!.parents).toEqual([main]);
    expect(repo.refs.get("main")).toBe(main);
    expect((await fails(ctx, "batch_commit", { repo: REPO, branch: "nope", commits: [{ message: "x", files: [{ path: "x", content: "1" }] }] })).code).toBe("branch_not_found");
    expect((await fails(ctx, "batch_commit", { repo: REPO, branch: "new", base: "ghost", commits: [{ message: "x", files: [{ path: "x", content: "1" }] }] })).code).toBe("base_not_found");
  });

  it("refuses bad input before sending any request", async () => {
    const { ctx, gh } = await setup();
    const escape = await call(ctx, "batch_commit", {
      repo: REPO,
      commits: [
        { message: "a", files: [{ path: "ok.txt", content: "1" }] },
        { message: "b", files: [{ path: "../etc/passwd", content: "x" }] },
      ],
    });
    expect(escape).toMatchObject({ ok: false, isError: false, committed: 0, total: 2, results: [{ index: 1, ok: false, error: "path_escapes_repository" }] });
    expect((await fails(ctx, "batch_commit", { repo: REPO, branch: "a..b", commits: [{ message: "a", files: [{ path: "a", content: "1" }] }] })).code).toBe("unsafe_ref_token");
    expect((await fails(ctx, "batch_commit", { repo: REPO, commits: [{ message: "a", files: [{ path: "a", content: "1", delete: true }] }] })).code).toBe("invalid_input");
    expect((await fails(ctx, "batch_commit", { repo: REPO, commits: [{ message: "a", files: [{ path: "a" }] }] })).code).toBe("invalid_input");
    expect((await fails(ctx, "batch_commit", { repo: REPO, commits: [{ message: "a", files: [{ path: "a", content: "not base64!", encoding: "base64" }] }] })).code).toBe("invalid_input");
    expect((await fails(ctx, "batch_commit", { repo: REPO, commits: [{ message: "a", files: [{ path: "a", content: "x".repeat(1024 * 1024 + 1) }] }] })).code).toBe("invalid_input");
    expect((await fails(ctx, "batch_commit", { repo: REPO, commits: [] })).code).toBe("invalid_input");
    const many = Array.from({ length: 6 }, (_, i) => ({ message: `m${i}`, files: Array.from({ length: 100 }, (_, j) => ({ path: `f${i}-${j}`, content: "x" })) }));
    expect((await fails(ctx, "batch_commit", { repo: REPO, commits: many })).code).toBe("invalid_input");
    expect((await fails(ctx, "batch_commit", { repo: "not a repo", commits: [{ message: "a", files: [{ path: "a", content: "1" }] }] })).code).toBe("invalid_repo");
    expect(gh.requests).toHaveLength(0);
  });

  it("stops at the first failure: earlier entries land, the failed one says why, later ones are skipped", async () => {
    const { ctx, repo } = await setup();
    const r = await call(ctx, "batch_commit", {
      repo: REPO,
      commits: [
        { message: "one", files: [{ path: "one", content: "1" }] },
        { message: "two", files: [{ path: "missing.txt", delete: true }] },
        { message: "three", files: [{ path: "three", content: "3" }] },
      ],
    });
    expect(r).toMatchObject({ ok: false, isError: false, committed: 1, total: 3 });
    expect(r.results).toHaveLength(2);
    expect(r.results[1]).toMatchObject({ index: 1, ok: false, error: "commit_failed" });
    expect(r.results[1].detail).toMatch(/missing.txt/);
    expect(repo.refs.get("main")).toBe(r.results[0].sha);
    const nothing = await call(ctx, "batch_commit", { repo: REPO, commits: [{ message: "same", files: [{ path: "one", content: "1" }] }] });
    expect(nothing).toMatchObject({ ok: false, committed: 0, results: [{ error: "commit_failed", detail: expect.stringMatching(/nothing to commit/) }] });
    expect(repo.refs.get("main")).toBe(r.results[0].sha);
  });

  it("keeps a rewritten file's mode (an executable stays executable) and refuses a directory path", async () => {
    const { ctx, repo, main } = await setup();
    const base = repo.commits.get(main)!;
    const flat = new Map(repo.trees.get(base.tree)!);
    flat.set("run.sh", repo.blob("#!/bin/sh\n"));
    repo.refs.set("main", repo.commit(repo.tree(flat, new Map([["run.sh", "100755"]])), [main], "script"));
    const r = await ok(ctx, "batch_commit", {
      repo: REPO,
      commits: [
        {
          message: "edit",
          files: [
            { path: "run.sh", content: "#!/bin/sh\necho hi\n" },
            { path: "new.sh", content: "x" },
          ],
        },
      ],
    });
    const tree = repo.commits.get(r.headSha)!.tree;
    expect([repo.modeOf(tree, "run.sh"), repo.modeOf(tree, "new.sh")]).toEqual(["100755", "100644"]);
    const dir = await call(ctx, "batch_commit", { repo: REPO, commits: [{ message: "oops", files: [{ path: "src", content: "x" }] }] });
    expect(dir).toMatchObject({ ok: false, committed: 0, results: [{ error: "stage_failed", detail: expect.stringMatching(/directory/) }] });
  });

  it("a blob GitHub refuses is stage_failed", async () => {
    const { ctx, repo, main } = await setup();
    repo.before = (req) => (req.op === "POST /repos/{owner}/{repo}/git/blobs" ? { status: 422, body: errorBody("content too large") } : undefined);
    const r = await call(ctx, "batch_commit", { repo: REPO, commits: [{ message: "bin", files: [{ path: "b.bin", content: "AAAA", encoding: "base64" }] }] });
    expect(r).toMatchObject({ ok: false, committed: 0, results: [{ error: "stage_failed", detail: expect.stringMatching(/too large/) }] });
    expect(repo.refs.get("main")).toBe(main);
  });

  it("a branch moved between read and update is a retryable conflict, never a force push", async () => {
    const { ctx, gh, repo } = await setup();
    let theirs = "";
    repo.before = (req) => {
      if (req.op === "PATCH /repos/{owner}/{repo}/git/refs/{ref}" && !theirs) theirs = repo.write("main", { "src/a.ts": "someone else\n" }, "their push");
    };
    const err = await fails(ctx, "batch_commit", { repo: REPO, commits: [{ message: "mine", files: [{ path: "mine", content: "m" }] }] });
    expect(err).toMatchObject({ code: "conflict", retryable: true });
    expect(repo.refs.get("main")).toBe(theirs);
    expect(forced(gh)).toHaveLength(0);
  });

  it("a tenant without GitHub credentials gets github_not_configured from every write tool, while another tenant is connected", async () => {
    const id = await seedIdentity("git-write-nocreds", "agent");
    const gh = new FakeGitHub();
    await connectGitHub(makeCtx(await seedIdentity("git-write-other", "agent")), gh);
    const plain = makeCtx(id);
    const lonely = { ...plain, env: { ...plain.env, GITHUB_API_URL: gh.apiBase, GITHUB_CREDENTIALS_KEY: "test-credentials-key-0123456789abcdef" } };
    expect((await fails(lonely, "batch_commit", { repo: REPO, commits: [{ message: "a", files: [{ path: "a", content: "1" }] }] })).code).toBe("github_not_configured");
    expect((await fails(lonely, "git_merge", { repo: REPO, sources: ["feature"] })).code).toBe("github_not_configured");
    expect((await fails(lonely, "git_cherry_pick", { repo: REPO, sources: ["feature"] })).code).toBe("github_not_configured");
    expect(gh.requests).toHaveLength(0);
  });

  it("stops at the request budget before moving anything", async () => {
    const gh = new FakeGitHub();
    const repo = new FakeRepo(gh);
    repo.write("main", { a: "1" });
    const w = new GitWriter(new GitHubClient({ apiBase: gh.apiBase, token: async () => "t", fetch: gh.fetch }), { owner: "o", name: "r" }, 2);
    await w.defaultBranch();
    await w.branchHead("main");
    await expect(w.branchHead("main")).rejects.toMatchObject({ code: "request_budget_exceeded" });
    expect(gh.requests).toHaveLength(2);
  });
});

describe("git_merge", () => {
  it("fast-forwards when the destination is an ancestor", async () => {
    const { ctx, gh, repo } = await setup();
    const f = repo.write("feature/a", { "src/a.ts": "a2\n" }, "a2", repo.refs.get("main"));
    const r = await ok(ctx, "git_merge", { repo: REPO, sources: ["feature/a"] });
    expect(r).toMatchObject({ ok: true, into: "main", strategy: "auto", headSha: f, applied: 1, total: 1, results: [{ source: "feature/a", ok: true, outcome: "fast_forward", mergedSha: f }] });
    expect(repo.refs.get("main")).toBe(f);
    expect(forced(gh)).toHaveLength(0);
    expect(gh.count("POST /repos/{owner}/{repo}/git/refs")).toBe(0);
  });

  it("auto rebases a diverged source onto the destination: linear history, the source untouched, no temp refs", async () => {
    const { ctx, repo, main } = await setup();
    const f1 = repo.write("feature/b", { "b.txt": "b1" }, "b1", main);
    const f2 = repo.write("feature/b", { "b.txt": "b2", "c.txt": "c" }, "b2");
    const m2 = repo.write("main", { "README.md": "hello again\n" }, "readme");
    const r = await ok(ctx, "git_merge", { repo: REPO, sources: ["feature/b"] });
    expect(r.results[0]).toMatchObject({ ok: true, outcome: "rebase_then_ff" });
    const head = repo.refs.get("main")!;
    const tip = repo.commits.get(head)!;
    const prev = repo.commits.get(tip.parents[0]!)!;
    expect(prev.parents).toEqual([m2]);
    expect([prev.message, tip.message]).toEqual(["b1", "b2"]);
    expect(repo.files("main")).toEqual({ "README.md": "hello again\n", "src/a.ts": "a1\n", "b.txt": "b2", "c.txt": "c" });
    expect(repo.refs.get("feature/b")).toBe(f2);
    expect(f1).not.toBe(prev.sha);
    expect(repo.tempRefs()).toEqual([]);
  });

  it("strategy merge creates a merge commit through the merges API", async () => {
    const { ctx, repo, main } = await setup();
    const f = repo.write("feature/c", { "c.txt": "c" }, "c", main);
    const r = await ok(ctx, "git_merge", { repo: REPO, sources: ["feature/c"], strategy: "merge" });
    expect(r.results[0]).toMatchObject({ outcome: "merge_commit" });
    const m = repo.commits.get(repo.refs.get("main")!)!;
    expect(m.parents).toEqual([main, f]);
    expect(m.message).toBe("Merge branch 'feature/c' into main");
    expect(repo.tempRefs()).toEqual([]);
  });

  it("ff-only refuses divergence; already-merged sources are up to date", async () => {
    const { ctx, repo, main } = await setup();
    repo.write("feature/d", { d: "d" }, "d", main);
    const m2 = repo.write("main", { e: "e" }, "e");
    const r = await call(ctx, "git_merge", { repo: REPO, sources: ["feature/d"], strategy: "ff-only" });
    expect(r).toMatchObject({ ok: false, isError: false, applied: 0, results: [{ source: "feature/d", ok: false, error: "cannot_fast_forward" }] });
    expect(repo.refs.get("main")).toBe(m2);
    repo.refs.set("old", main);
    const up = await ok(ctx, "git_merge", { repo: REPO, sources: ["old"], delete_merged_branches: true });
    expect(up.results[0]).toEqual({ source: "old", ok: true, outcome: "up_to_date", mergedSha: m2 });
    expect(repo.refs.has("old")).toBe(true);
  });

  it("reports conflicts with the stage and paths, leaves the destination alone and no temporary branch behind", async () => {
    const { ctx, repo, main } = await setup();
    repo.write("feature/x", { "src/a.ts": "theirs\n", "x.txt": "x" }, "theirs", main);
    const m2 = repo.write("main", { "src/a.ts": "ours\n" }, "ours");
    const rebase = await call(ctx, "git_merge", { repo: REPO, sources: ["feature/x"], strategy: "rebase" });
    expect(rebase).toMatchObject({ ok: false, results: [{ ok: false, outcome: "conflicts", error: "rebase_conflicts", conflictStage: "rebase", conflictPaths: ["src/a.ts"] }] });
    expect(repo.tempRefs()).toEqual([]);
    const auto = await call(ctx, "git_merge", { repo: REPO, sources: ["feature/x"], format: "json" });
    expect(auto).toMatchObject({ ok: false, headSha: m2, results: [{ error: "merge_conflicts", conflictStage: "merge", conflictPaths: ["src/a.ts"] }] });
    expect(repo.refs.get("main")).toBe(m2);
    expect(repo.tempRefs()).toEqual([]);
  });

  it("sources before a conflict land; later ones are not attempted; cleanup does not run", async () => {
    const { ctx, repo, main } = await setup();
    const ok1 = repo.write("feature/ok", { "ok.txt": "1" }, "ok", main);
    repo.write("feature/bad", { "src/a.ts": "bad\n" }, "bad", main);
    repo.write("main", { "src/a.ts": "main\n" }, "main change");
    repo.write("feature/never", { n: "n" }, "n", main);
    const r = await call(ctx, "git_merge", { repo: REPO, sources: ["feature/ok", "feature/bad", "feature/never"], delete_merged_branches: true });
    expect(r).toMatchObject({ ok: false, applied: 1, total: 3 });
    expect(r.results.map((x: { source: string }) => x.source)).toEqual(["feature/ok", "feature/bad"]);
    expect(repo.files("main")["ok.txt"]).toBe("1");
    expect(repo.refs.get("feature/ok")).toBe(ok1);
    expect(repo.tempRefs()).toEqual([]);
  });

  it("renders markdown per source, and format json as the compact payload", async () => {
    const { ctx, repo, main } = await setup();
    repo.write("feature/md", { md: "1" }, "md", main);
    repo.write("feature/cp", { cp: "1" }, "cp", main);
    const md = await callTool(findTool("git_merge")!, ctx, { repo: REPO, sources: ["feature/md"] });
    expect((md.content[0] as { text: string }).text).toMatch(/^# git_merge ok: 1\/1 into main \(auto\), head [0-9a-f]{7}\n- feature\/md: fast_forward/);
    const json = await callTool(findTool("git_cherry_pick")!, ctx, { repo: REPO, sources: ["feature/cp"], format: "json" });
    const payload = JSON.parse((json.content[0] as { text: string }).text);
    expect(payload).toMatchObject({ ok: true, onto: "main", picked: 1, applied: 1 });
    expect(Object.keys(payload)).not.toContain("warnings");
  });

  it("cleanup deletes merged source branches after full success, never protected names", async () => {
    const { ctx, repo, main } = await setup();
    repo.write("feature/y", { y: "y" }, "y", main);
    repo.write("release/2.0", { r: "r" }, "r", main);
    const r = await ok(ctx, "git_merge", { repo: REPO, sources: ["feature/y", "release/2.0"], deleteMergedBranches: true, deleteMergedWorktrees: true });
    expect(r.results[0]).toMatchObject({ source: "feature/y", branchDeleted: true });
    expect(r.results[1].branchDeleted).toBeUndefined();
    expect(repo.refs.has("feature/y")).toBe(false);
    expect(repo.refs.has("release/2.0")).toBe(true);
    expect(r.warnings).toEqual([expect.stringMatching(/worktree/)]);
  });

  it("answers each per-source and per-call error code", async () => {
    const { ctx, gh, repo, main } = await setup();
    expect((await call(ctx, "git_merge", { repo: REPO, sources: ["ghost"] })).results[0]).toMatchObject({ error: "source_not_found" });
    repo.refs.set("orphan", repo.commit(repo.tree(new Map([["o", repo.blob("o")]])), [], "root"));
    expect((await call(ctx, "git_merge", { repo: REPO, sources: ["orphan"] })).results[0]).toMatchObject({ error: "merge_base_failed" });
    expect((await fails(ctx, "git_merge", { repo: REPO, sources: ["x"], into: "nowhere" })).code).toBe("destination_not_found");
    for (let i = 0; i < 101; i++) repo.write("long", { [`f${i}`]: String(i) }, `c${i}`, i === 0 ? main : undefined);
    repo.write("main", { m: "m" }, "m");
    expect((await call(ctx, "git_merge", { repo: REPO, sources: ["long"], strategy: "rebase" })).results[0]).toMatchObject({ error: "merge_failed" });
    const before = gh.requests.length;
    expect((await fails(ctx, "git_merge", { repo: REPO, sources: ["ok", "-rf"] })).code).toBe("unsafe_ref_token");
    expect((await fails(ctx, "git_merge", { repo: REPO, sources: ["ok"], into: "a@{1}" })).code).toBe("unsafe_ref_token");
    expect((await fails(ctx, "git_merge", { repo: REPO, sources: [] })).code).toBe("invalid_input");
    expect((await fails(ctx, "git_merge", { repo: REPO, sources: Array.from({ length: 21 }, (_, i) => `b${i}`) })).code).toBe("invalid_input");
    expect(gh.requests.length).toBe(before);
    expect(repo.tempRefs()).toEqual([]);
  });

  it("a destination moved during the merge is a retryable conflict; nothing forced, no temp refs", async () => {
    const { ctx, gh, repo, main } = await setup();
    repo.write("feature/z", { z: "z" }, "z", main);
    repo.write("main", { w: "w" }, "w");
    let theirs = "";
    repo.before = (req) => {
      if (req.op === "PATCH /repos/{owner}/{repo}/git/refs/{ref}" && !theirs) theirs = repo.write("main", { late: "1" }, "late push");
    };
    const err = await fails(ctx, "git_merge", { repo: REPO, sources: ["feature/z"], strategy: "merge" });
    expect(err).toMatchObject({ code: "conflict", retryable: true });
    expect(repo.refs.get("main")).toBe(theirs);
    expect(forced(gh)).toHaveLength(0);
    expect(repo.tempRefs()).toEqual([]);
  });

  it("a GitHub failure in the middle of a merge leaves no temporary branch", async () => {
    const { ctx, repo, main } = await setup();
    repo.write("feature/q", { q: "q" }, "q", main);
    repo.write("main", { p: "p" }, "p");
    repo.before = (req) => (req.op === "POST /repos/{owner}/{repo}/merges" ? { status: 403, body: errorBody("Resource not accessible by integration") } : undefined);
    expect((await fails(ctx, "git_merge", { repo: REPO, sources: ["feature/q"] })).code).toBe("github_forbidden");
    expect(repo.tempRefs()).toEqual([]);
    expect(repo.refs.get("main")).not.toBe(main);
  });
});

describe("git_cherry_pick", () => {
  it("applies only the picked commit's change, with the destination head as the only parent", async () => {
    const { ctx, gh, repo, main } = await setup();
    repo.write("feature/p", { "early.txt": "not picked" }, "early", main);
    const c = repo.write("feature/p", { "src/a.ts": "a-picked\n" }, "the fix");
    const m2 = repo.write("main", { "README.md": "readme 2\n" }, "main moved");
    const r = await ok(ctx, "git_cherry_pick", { repo: REPO, sources: [c.slice(0, 10)] });
    expect(r).toMatchObject({ ok: true, onto: "main", picked: 1, applied: 1, results: [{ source: c.slice(0, 10), kind: "sha", resolvedCommits: 1, keptCommits: 1 }] });
    const head = repo.commits.get(repo.refs.get("main")!)!;
    expect(head.parents).toEqual([m2]);
    expect(head.message).toBe("the fix");
    expect(repo.files("main")).toEqual({ "README.md": "readme 2\n", "src/a.ts": "a-picked\n" });
    expect(repo.tempRefs()).toEqual([]);
    expect(forced(gh)).toHaveLength(0);
  });

  it("expands branches and ranges oldest first, de-duplicates, skips what the destination already has", async () => {
    const { ctx, repo, main } = await setup();
    const b1 = repo.write("feature/r", { r1: "1" }, "r1", main);
    const b2 = repo.write("feature/r", { r2: "2" }, "r2");
    repo.write("main", { m: "m" }, "m");
    const r = await ok(ctx, "git_cherry_pick", { repo: REPO, sources: ["feature/r", `${main}..${b2}`, b1, main.slice(0, 8)] });
    expect(r.results).toEqual([
      { source: "feature/r", kind: "branch", resolvedCommits: 2, keptCommits: 2 },
      { source: `${main}..${b2}`, kind: "range", resolvedCommits: 2, keptCommits: 0 },
      { source: b1, kind: "sha", resolvedCommits: 1, keptCommits: 0 },
      { source: main.slice(0, 8), kind: "sha", resolvedCommits: 1, keptCommits: 0 },
    ]);
    expect(r).toMatchObject({ picked: 2, applied: 2 });
    const tip = repo.commits.get(repo.refs.get("main")!)!;
    expect(tip.message).toBe("r2");
    expect(repo.commits.get(tip.parents[0]!)!.message).toBe("r1");
  });

  it("drops patch-equivalent commits: applied is lower than picked", async () => {
    const { ctx, repo, main } = await setup();
    const same = repo.write("feature/s", { "s.txt": "same" }, "s on feature", main);
    const other = repo.write("feature/s", { "t.txt": "t" }, "t");
    const m2 = repo.write("main", { "s.txt": "same" }, "s on main");
    const r = await ok(ctx, "git_cherry_pick", { repo: REPO, sources: [same, other] });
    expect(r).toMatchObject({ picked: 2, applied: 1 });
    expect(repo.commits.get(repo.refs.get("main")!)!.parents).toEqual([m2]);
    const none = await ok(ctx, "git_cherry_pick", { repo: REPO, sources: [same] });
    expect(none).toMatchObject({ picked: 1, applied: 0, headSha: repo.refs.get("main") });
  });

  it("stops at a conflict with nothing applied, the destination untouched and no temp refs", async () => {
    const { ctx, gh, repo, main } = await setup();
    const good = repo.write("feature/t", { good: "g" }, "good", main);
    const bad = repo.write("feature/t", { "src/a.ts": "theirs\n" }, "bad");
    const m2 = repo.write("main", { "src/a.ts": "ours\n" }, "ours");
    const r = await call(ctx, "git_cherry_pick", { repo: REPO, sources: [good, bad] });
    expect(r).toMatchObject({ ok: false, isError: false, picked: 2, applied: 0, conflict: { stage: "cherry-pick", commit: bad, paths: ["src/a.ts"] } });
    expect(r.headSha).toBeUndefined();
    expect(repo.refs.get("main")).toBe(m2);
    expect(refUpdates(gh)).toHaveLength(0);
    expect(repo.tempRefs()).toEqual([]);
  });

  it("a destination moved during the pick is a retryable conflict; merge commits cannot be picked", async () => {
    const { ctx, gh, repo, main } = await setup();
    const c = repo.write("feature/v", { v: "v" }, "v", main);
    repo.write("main", { w: "w" }, "w");
    let theirs = "";
    repo.before = (req) => {
      if (req.op === "PATCH /repos/{owner}/{repo}/git/refs/{ref}" && !theirs) theirs = repo.write("main", { late: "1" }, "late push");
    };
    expect(await fails(ctx, "git_cherry_pick", { repo: REPO, sources: [c] })).toMatchObject({ code: "conflict", retryable: true });
    expect(repo.refs.get("main")).toBe(theirs);
    expect(forced(gh)).toHaveLength(0);
    expect(repo.tempRefs()).toEqual([]);
    repo.before = null;
    const merge = repo.commit(repo.commits.get(c)!.tree, [main, c], "a merge");
    repo.refs.set("feature/m", merge);
    const r = await call(ctx, "git_cherry_pick", { repo: REPO, sources: [merge] });
    expect(r).toMatchObject({ ok: false, applied: 0, conflict: { commit: merge, detail: expect.stringMatching(/merge commit/) } });
  });

  it("answers each error code, refusing unsafe input before any request", async () => {
    const { ctx, gh, repo, main } = await setup();
    expect((await fails(ctx, "git_cherry_pick", { repo: REPO, sources: ["ghost"] })).code).toBe("source_not_found");
    expect((await fails(ctx, "git_cherry_pick", { repo: REPO, sources: ["ghost..main"] })).code).toBe("range_resolution_failed");
    expect((await fails(ctx, "git_cherry_pick", { repo: REPO, sources: ["main"], onto: "nowhere" })).code).toBe("destination_not_found");
    for (let i = 0; i < 101; i++) repo.write("huge", { [`h${i}`]: String(i) }, `h${i}`, i === 0 ? main : undefined);
    expect((await fails(ctx, "git_cherry_pick", { repo: REPO, sources: ["huge"] })).code).toBe("cherry_pick_too_many_commits");
    const before = gh.requests.length;
    expect((await fails(ctx, "git_cherry_pick", { repo: REPO, sources: ["a b"] })).code).toBe("unsafe_ref_token");
    expect((await fails(ctx, "git_cherry_pick", { repo: REPO, sources: ["a....b"] })).code).toBe("unsafe_ref_token");
    expect((await fails(ctx, "git_cherry_pick", { repo: REPO, sources: ["main"], onto: "x.lock" })).code).toBe("unsafe_ref_token");
    expect(gh.requests.length).toBe(before);
    expect(repo.tempRefs()).toEqual([]);
  });

  it("cleanup deletes branch sources reachable from the result, never protected ones; a failed pick leaves no temp ref", async () => {
    const { ctx, repo, main } = await setup();
    repo.refs.set("feature/done", main);
    repo.refs.set("hotfix/1", main);
    const c = repo.write("feature/u", { u: "u" }, "u", main);
    repo.write("main", { v: "v" }, "v");
    const r = await ok(ctx, "git_cherry_pick", { repo: REPO, sources: ["feature/done", "hotfix/1", "feature/u"], delete_merged_branches: true, delete_merged_worktrees: true });
    expect(r.results.map((x: { branchDeleted?: boolean }) => x.branchDeleted)).toEqual([true, undefined, undefined]);
    expect(repo.refs.has("feature/done")).toBe(false);
    expect(repo.refs.has("hotfix/1")).toBe(true);
    expect(repo.refs.has("feature/u")).toBe(true);
    expect(r.warnings).toHaveLength(1);
    const d = repo.write("feature/w", { w: "w" }, "w", c);
    repo.before = (req) => (req.op === "POST /repos/{owner}/{repo}/merges" ? { status: 403, body: errorBody("Resource not accessible by integration") } : undefined);
    const head = repo.refs.get("main");
    expect((await fails(ctx, "git_cherry_pick", { repo: REPO, sources: [d] })).code).toBe("github_forbidden");
    expect(repo.refs.get("main")).toBe(head);
    expect(repo.tempRefs()).toEqual([]);
  });
});
