/**
 * Who holds the work a GitHub event names (src/work/signals/model.ts): tasks through their code refs
 * (branch, commit, pull request), reservations through the files, only tasks someone holds, and
 * only the tenant's own.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../../src/core/context";
import { branchName, holdersOf, recordedCommit, type SignalRepository } from "../../../src/work/signals/model";
import { makeCtx, ok, seedIdentity, TestClock, type Structured } from "../../support/helpers";

const REPO = "acme/api";
const SHA = "abcdef1234567890abcdef1234567890abcdef12";

interface World {
  dev: Ctx;
  other: Ctx;
  repo: SignalRepository;
  /** A task `who` created and claimed, so it is in progress with `who` holding it. */
  claimed: (who: Ctx, title: string) => Promise<Structured>;
}

async function world(prefix: string): Promise<World> {
  const tenant = `sig-${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  const clock = new TestClock();
  const dev = makeCtx(await seedIdentity(tenant, "dev"), clock);
  const other = makeCtx(await seedIdentity(tenant, "other"), clock);
  const repo = (await ok(dev, "repo_register", { slug: REPO, default_branch: "main" })).repository as SignalRepository;
  await ok(dev, "project_create", { title: "Signals", key: "SIG" });
  const claimed = async (who: Ctx, title: string) => {
    const task = (await ok(who, "task_create", { project_id: "SIG", title })).task as Structured;
    expect((await ok(who, "task_claim", { task_id: task.id })).claimed).toBe(true);
    return task;
  };
  return { dev, other, repo, claimed };
}

const codeRef = (ctx: Ctx, task: Structured, ref: Structured) => ok(ctx, "task_code_ref", { task_id: task.id, repository_id: REPO, ...ref });
const brief = (holders: Awaited<ReturnType<typeof holdersOf>>) => holders.map((h) => ({ actor: h.actorId, task: h.task?.ref ?? null, via: h.via }));

describe("holdersOf", () => {
  it("finds the holder of a task through its branch ref, however the branch is spelled", async () => {
    const w = await world("branch");
    const task = await w.claimed(w.dev, "login");
    await codeRef(w.dev, task, { ref_type: "branch", branch: "feature/login" });
    expect(brief(await holdersOf(w.dev, w.repo, { branches: ["feature/login"] }))).toEqual([{ actor: w.dev.actorId, task: task.ref, via: "branch" }]);
    expect(brief(await holdersOf(w.dev, w.repo, { branches: ["refs/heads/feature/login"] }))).toHaveLength(1);
    expect(await holdersOf(w.dev, w.repo, { branches: ["feature/logout", "refs/tags/feature/login", "feature login"] })).toEqual([]);
  });

  it("finds it through a commit ref, full or abbreviated, and only for the commit it names", async () => {
    const w = await world("sha");
    const full = await w.claimed(w.dev, "full");
    const short = await w.claimed(w.other, "short");
    await codeRef(w.dev, full, { ref_type: "commit", sha: SHA.toUpperCase() });
    await codeRef(w.other, short, { ref_type: "commit", sha: SHA.slice(0, 9) });
    const both = brief(await holdersOf(w.dev, w.repo, { shas: [SHA] }));
    expect(both).toEqual(
      expect.arrayContaining([
        { actor: w.dev.actorId, task: full.ref, via: "commit" },
        { actor: w.other.actorId, task: short.ref, via: "commit" },
      ]),
    );
    expect(both).toHaveLength(2);
    // The same first seven characters, another commit: neither ref names it.
    expect(await holdersOf(w.dev, w.repo, { shas: [`${SHA.slice(0, 8)}${"0".repeat(32)}`] })).toEqual([]);
    // Abbreviated or malformed ids in the event are not commits.
    expect(await holdersOf(w.dev, w.repo, { shas: [SHA.slice(0, 12), "not-a-sha"] })).toEqual([]);
  });

  it("finds it through the pull request linked to the task, by number or by the URL the link was built from", async () => {
    const w = await world("pr");
    const byNumber = await w.claimed(w.dev, "by number");
    const byUrl = await w.claimed(w.other, "by url");
    await codeRef(w.dev, byNumber, { ref_type: "pr", pr_number: 41 });
    await codeRef(w.other, byUrl, { ref_type: "pr", pr_url: "https://github.com/acme/api/pull/42" });
    expect(brief(await holdersOf(w.dev, w.repo, { prNumbers: [41] }))).toEqual([{ actor: w.dev.actorId, task: byNumber.ref, via: "pr" }]);
    expect(brief(await holdersOf(w.dev, w.repo, { prNumbers: [42] }))).toEqual([{ actor: w.other.actorId, task: byUrl.ref, via: "pr" }]);
    expect(await holdersOf(w.dev, w.repo, { prNumbers: [43, -1, 1.5] })).toEqual([]);
  });

  it("finds the holders of live reservations covering the files, with the task a reservation is tied to", async () => {
    const w = await world("paths");
    const task = await w.claimed(w.dev, "auth");
    await ok(w.dev, "path_reserve", { repository_id: REPO, paths: ["src/auth/**"], task_id: task.id });
    await ok(w.other, "path_reserve", { repository_id: REPO, paths: ["docs/**"] });
    const holders = await holdersOf(w.dev, w.repo, { files: ["src/auth/login.ts", "README.md"] });
    expect(holders).toEqual([{ actorId: w.dev.actorId, task: { id: task.id, ref: task.ref, title: "auth" }, via: "paths", pattern: "src/auth/**" }]);
    expect(await holdersOf(w.dev, w.repo, { files: ["docs/guide.md"] })).toEqual([{ actorId: w.other.actorId, task: null, via: "paths", pattern: "docs/**" }]);
    expect(await holdersOf(w.dev, w.repo, { files: ["lib/x.ts"] })).toEqual([]);
  });

  it("lists an actor once per task, code-ref matches before reservations", async () => {
    const w = await world("dedupe");
    const task = await w.claimed(w.dev, "one task, many links");
    await codeRef(w.dev, task, { ref_type: "branch", branch: "feat" });
    await codeRef(w.dev, task, { ref_type: "pr", pr_number: 7 });
    await ok(w.dev, "path_reserve", { repository_id: REPO, paths: ["src/**"], task_id: task.id });
    const holders = await holdersOf(w.dev, w.repo, { branches: ["feat"], prNumbers: [7], files: ["src/a.ts"] });
    expect(holders).toHaveLength(1);
    expect(holders[0]).toMatchObject({ actorId: w.dev.actorId, task: { id: task.id } });
    expect(["branch", "pr"]).toContain(holders[0]!.via);
  });

  it("tells nobody of a task nobody holds: not claimed, finished, or its link removed", async () => {
    const w = await world("nobody");
    const open = (await ok(w.dev, "task_create", { project_id: "SIG", title: "unclaimed" })).task as Structured;
    await codeRef(w.dev, open, { ref_type: "branch", branch: "unclaimed" });
    const finished = await w.claimed(w.dev, "finished");
    await codeRef(w.dev, finished, { ref_type: "branch", branch: "finished" });
    await ok(w.dev, "task_update", { task_id: finished.id, patch: { status: "done" } });
    const unlinked = await w.claimed(w.dev, "unlinked");
    const ref = (await codeRef(w.dev, unlinked, { ref_type: "branch", branch: "unlinked" })).code_ref as Structured;
    await env.DB.prepare(`UPDATE code_refs SET deleted_at = '2026-06-01T12:00:00.000Z' WHERE id = ?`).bind(ref.id).run();
    expect(await holdersOf(w.dev, w.repo, { branches: ["unclaimed", "finished", "unlinked"] })).toEqual([]);
    // A task in review still has its holder: the review's news is for the assignee.
    const reviewed = await w.claimed(w.dev, "in review");
    await codeRef(w.dev, reviewed, { ref_type: "branch", branch: "reviewed" });
    await ok(w.dev, "task_update", { task_id: reviewed.id, patch: { status: "in_review" } });
    expect(brief(await holdersOf(w.dev, w.repo, { branches: ["reviewed"] }))).toEqual([{ actor: w.dev.actorId, task: reviewed.ref, via: "branch" }]);
  });

  it("never matches another tenant's task or reservation, even on the same repository name, branch and files", async () => {
    const a = await world("ten-a");
    const b = await world("ten-b");
    const taskA = await a.claimed(a.dev, "a");
    const taskB = await b.claimed(b.dev, "b");
    await codeRef(a.dev, taskA, { ref_type: "branch", branch: "shared" });
    await codeRef(b.dev, taskB, { ref_type: "branch", branch: "shared" });
    await ok(b.dev, "path_reserve", { repository_id: REPO, paths: ["src/**"] });
    expect(brief(await holdersOf(a.dev, a.repo, { branches: ["shared"], files: ["src/a.ts"] }))).toEqual([{ actor: a.dev.actorId, task: taskA.ref, via: "branch" }]);
    // Tenant B's context with tenant A's repository finds nothing of either.
    expect(await holdersOf(b.dev, a.repo, { branches: ["shared"], files: ["src/a.ts"] })).toEqual([]);
  });
});

describe("recordedCommit", () => {
  it("gives a pushed commit's branch and files, for this tenant and repository only", async () => {
    const w = await world("commit");
    const b = await world("commit-b");
    await env.DB.prepare(
      `INSERT INTO git_commits (tenant_id, repository_id, sha, ref, message, author_name, author_email, committed_at, files, delivery_id, recorded_at)
       VALUES (?, ?, ?, 'refs/heads/feature', 'm', 'a', 'a@x', '2026-06-01T00:00:00Z', '["src/a.ts", 7]', 'd', '2026-06-01T00:00:00Z')`,
    )
      .bind(w.dev.tenantId, w.repo.id, SHA)
      .run();
    expect(await recordedCommit(w.dev, w.repo.id, SHA)).toEqual({ branch: "feature", files: ["src/a.ts"] });
    expect(await recordedCommit(b.dev, w.repo.id, SHA)).toBeNull();
    expect(await recordedCommit(w.dev, w.repo.id, "f".repeat(40))).toBeNull();
  });
});

describe("branchName", () => {
  it("keeps branch names, drops refs/heads/, and refuses tags and what git refuses", () => {
    expect(branchName("refs/heads/feature/x")).toBe("feature/x");
    expect(branchName("main")).toBe("main");
    for (const bad of ["", "refs/tags/v1", "a b", "a\nb", "a~1", "a:b", "x".repeat(251)]) expect(branchName(bad)).toBe("");
  });
});
