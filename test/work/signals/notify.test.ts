/**
 * The notices GitHub events become (src/work/signals/notify.ts): failed checks, reviews, review
 * comments and pushes reach whoever holds the work, once per event, with untrusted payload text
 * flattened and bounded.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../../src/core/context";
import type { SignalRepository } from "../../../src/work/signals/model";
import { type CheckSignal, notifyCheckFailure, notifyReview, notifyReviewComment, notifyTaskPush, oneLine, type ReviewSignal, shownUrl } from "../../../src/work/signals/notify";
import { makeCtx, ok, seedIdentity, TestClock, type Structured } from "../../support/helpers";

const REPO = "acme/api";
const SHA = "abcdef1234567890abcdef1234567890abcdef12";

async function world(prefix: string) {
  const tenant = `sig-n-${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  const clock = new TestClock();
  const dev = makeCtx(await seedIdentity(tenant, "dev"), clock);
  const other = makeCtx(await seedIdentity(tenant, "other"), clock);
  const repo = (await ok(dev, "repo_register", { slug: REPO, default_branch: "main" })).repository as SignalRepository;
  await ok(dev, "project_create", { title: "Signals", key: "SIG" });
  const claimed = async (who: Ctx, title: string, ref: Structured) => {
    const task = (await ok(who, "task_create", { project_id: "SIG", title })).task as Structured;
    await ok(who, "task_claim", { task_id: task.id });
    await ok(who, "task_code_ref", { task_id: task.id, repository_id: REPO, ...ref });
    return task;
  };
  return { dev, other, repo, claimed };
}

const inbox = async (ctx: Ctx) =>
  (
    await env.DB.prepare(`SELECT kind, object_type, object_id, summary, from_actor_id, dedupe_key FROM notifications WHERE tenant_id = ? AND actor_id = ? ORDER BY seq`)
      .bind(ctx.tenantId, ctx.actorId)
      .all<Structured>()
  ).results;

const check = (more: Partial<CheckSignal> = {}): CheckSignal => ({
  event: "check_run",
  id: 901,
  attempt: "",
  name: "lint",
  conclusion: "failure",
  url: "https://github.com/acme/api/runs/901",
  headSha: SHA,
  branch: "feature/login",
  prNumbers: [],
  ...more,
});

const review = (more: Partial<ReviewSignal> = {}): ReviewSignal => ({
  id: 77,
  state: "changes_requested",
  reviewer: "octocat",
  prNumber: 41,
  headSha: SHA,
  branch: "feature/login",
  url: "https://github.com/acme/api/pull/41#pullrequestreview-77",
  ...more,
});

describe("notifyCheckFailure", () => {
  it("tells the holder of the task on the check's branch once, naming the check, conclusion, task and URL", async () => {
    const w = await world("check");
    const task = await w.claimed(w.dev, "login", { ref_type: "branch", branch: "feature/login" });
    expect(await notifyCheckFailure(w.dev, w.repo, check())).toBe(1);
    const told = await inbox(w.dev);
    expect(told).toEqual([
      {
        kind: "check.failed",
        object_type: "task",
        object_id: task.id,
        summary: `Check "lint" failure on acme/api@feature/login (abcdef1), your task ${task.ref}: https://github.com/acme/api/runs/901`,
        from_actor_id: w.dev.actorId,
        dedupe_key: "check:901:failure",
      },
    ]);
    // Processed again (a retried or replayed delivery): nobody is told twice.
    expect(await notifyCheckFailure(w.dev, w.repo, check())).toBe(0);
    expect(await inbox(w.dev)).toHaveLength(1);
    expect(await inbox(w.other)).toEqual([]);
  });

  it("tells nobody of a check that passed, or of one without an id", async () => {
    const w = await world("pass");
    await w.claimed(w.dev, "login", { ref_type: "branch", branch: "feature/login" });
    for (const conclusion of ["success", "neutral", "skipped", ""]) expect(await notifyCheckFailure(w.dev, w.repo, check({ conclusion }))).toBeNull();
    expect(await notifyCheckFailure(w.dev, w.repo, check({ id: Number.NaN }))).toBeNull();
    expect(await inbox(w.dev)).toEqual([]);
  });

  it("every failing conclusion tells; a workflow's new attempt is news again, a suite links its commit's checks page", async () => {
    const w = await world("kinds");
    await w.claimed(w.dev, "login", { ref_type: "pr", pr_number: 5 });
    let id = 1000;
    for (const conclusion of ["failure", "timed_out", "cancelled", "action_required", "startup_failure"])
      expect(await notifyCheckFailure(w.dev, w.repo, check({ id: ++id, conclusion, branch: "", prNumbers: [5] }))).toBe(1);
    const run = check({ event: "workflow_run", id: 55, attempt: "1", name: "CI", branch: "", prNumbers: [5], url: "https://github.com/acme/api/actions/runs/55" });
    await notifyCheckFailure(w.dev, w.repo, run);
    await notifyCheckFailure(w.dev, w.repo, { ...run, attempt: "2" });
    await notifyCheckFailure(w.dev, w.repo, check({ event: "check_suite", id: 66, attempt: "2026-06-01T12:00:00Z", name: "GitHub Actions", url: "", branch: "", prNumbers: [5] }));
    const told = await inbox(w.dev);
    expect(told.map((n) => n.dedupe_key)).toEqual([
      "check:1001:failure",
      "check:1002:timed_out",
      "check:1003:cancelled",
      "check:1004:action_required",
      "check:1005:startup_failure",
      "workflow:55:1:failure",
      "workflow:55:2:failure",
      "suite:66:2026-06-01T12:00:00Z:failure",
    ]);
    expect(told[5]!.summary).toMatch(/^Workflow "CI" failure on acme\/api \(abcdef1\), your task SIG-1: https:\/\/github\.com\/acme\/api\/actions\/runs\/55$/);
    expect(told[7]!.summary).toMatch(/^Check suite "GitHub Actions" failure .*: https:\/\/github\.com\/acme\/api\/commit\/abcdef1234567890abcdef1234567890abcdef12\/checks$/);
  });

  it("finds reservation holders through the files an earlier push recorded for the commit, and its branch", async () => {
    const w = await world("files");
    const task = await w.claimed(w.dev, "auth", { ref_type: "branch", branch: "feature/auth" });
    await ok(w.other, "path_reserve", { repository_id: REPO, paths: ["src/auth/**"] });
    await env.DB.prepare(
      `INSERT INTO git_commits (tenant_id, repository_id, sha, ref, message, author_name, author_email, committed_at, files, delivery_id, recorded_at)
       VALUES (?, ?, ?, 'refs/heads/feature/auth', 'm', 'a', 'a@x', '2026-06-01T00:00:00Z', '["src/auth/login.ts"]', 'd', '2026-06-01T00:00:00Z')`,
    )
      .bind(w.dev.tenantId, w.repo.id, SHA)
      .run();
    // The suite names no branch (a fork's PR): the recorded push gives it.
    expect(await notifyCheckFailure(w.dev, w.repo, check({ branch: "" }))).toBe(2);
    expect((await inbox(w.dev))[0]).toMatchObject({ object_type: "task", object_id: task.id });
    expect((await inbox(w.other))[0]).toMatchObject({ kind: "check.failed", object_type: "repository", object_id: w.repo.id });
    expect((await inbox(w.other))[0]!.summary).toContain("your reservation src/auth/**");
  });

  it("says once to an actor holding several matching tasks, naming the first", async () => {
    const w = await world("many");
    const first = await w.claimed(w.dev, "one", { ref_type: "branch", branch: "feature/login" });
    await w.claimed(w.dev, "two", { ref_type: "commit", sha: SHA });
    await notifyCheckFailure(w.dev, w.repo, check());
    const told = await inbox(w.dev);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ object_id: first.id });
    expect(told[0]!.summary).toContain(`your task ${first.ref} and 1 more`);
  });

  it("flattens and bounds the payload's text, and shows only plain http(s) URLs", async () => {
    const w = await world("hostile");
    await w.claimed(w.dev, "login", { ref_type: "branch", branch: "feature/login" });
    await notifyCheckFailure(w.dev, w.repo, check({ id: 1, name: `evil\n\u202Eline two ${"x".repeat(500)}`, url: "javascript:alert(1)" }));
    await notifyCheckFailure(w.dev, w.repo, check({ id: 2, url: `https://user:pw@example.com/` }));
    const [a, b] = await inbox(w.dev);
    expect(a!.summary).not.toMatch(/[\n\u202E]/);
    expect(a!.summary).toMatch(/^Check "evil line two x+…" failure on .*your task SIG-1$/);
    expect(a!.summary.length).toBeLessThanOrEqual(500);
    expect(b!.summary).not.toContain("example.com");
  });
});

describe("notifyReview and notifyReviewComment", () => {
  it("tell the holder of the PR's task of a review (changes requested, approved, commented) and of a comment, once each", async () => {
    const w = await world("review");
    const task = await w.claimed(w.dev, "login", { ref_type: "pr", pr_number: 41 });
    expect(await notifyReview(w.dev, w.repo, review())).toBe(1);
    expect(await notifyReview(w.dev, w.repo, review())).toBe(0);
    expect(await notifyReview(w.dev, w.repo, review({ id: 78, state: "approved" }))).toBe(1);
    expect(await notifyReview(w.dev, w.repo, review({ id: 79, state: "dismissed" }))).toBeNull();
    expect(await notifyReviewComment(w.dev, w.repo, review({ id: 500, state: "", path: "src/login.ts", line: 12, url: "https://github.com/acme/api/pull/41#discussion_r500" }))).toBe(1);
    const told = await inbox(w.dev);
    expect(told.map((n) => [n.kind, n.object_id, n.dedupe_key])).toEqual([
      ["review.submitted", task.id, "review:77:changes_requested"],
      ["review.submitted", task.id, "review:78:approved"],
      ["review.comment", task.id, "review-comment:500"],
    ]);
    expect(told[0]!.summary).toBe(`octocat requested changes on acme/api#41 (review changes_requested), your task ${task.ref}: https://github.com/acme/api/pull/41#pullrequestreview-77`);
    expect(told[2]!.summary).toBe(`octocat commented on acme/api#41 at src/login.ts:12, your task ${task.ref}: https://github.com/acme/api/pull/41#discussion_r500`);
  });

  it("reaches the holder through the PR's head branch too, and nobody when no task is held", async () => {
    const w = await world("review-branch");
    await w.claimed(w.other, "login", { ref_type: "branch", branch: "feature/login" });
    expect(await notifyReview(w.dev, w.repo, review({ prNumber: 9, url: "" }))).toBe(1);
    expect((await inbox(w.other))[0]!.summary).toMatch(/: https:\/\/github\.com\/acme\/api\/pull\/9$/);
    expect(await notifyReview(w.dev, w.repo, review({ id: 80, prNumber: 10, branch: "elsewhere", headSha: "" }))).toBe(0);
  });
});

describe("notifyTaskPush", () => {
  it("tells the holder of the task on the pushed branch once per push; a deleted branch or a push elsewhere tells nobody", async () => {
    const w = await world("push");
    const task = await w.claimed(w.dev, "login", { ref_type: "branch", branch: "feature/login" });
    const push = { branch: "refs/heads/feature/login", after: SHA, shas: [SHA], pusher: "octocat" };
    expect(await notifyTaskPush(w.dev, w.repo, push)).toBe(1);
    expect(await notifyTaskPush(w.dev, w.repo, push)).toBe(0);
    expect(await notifyTaskPush(w.dev, w.repo, { ...push, after: "0".repeat(40), shas: [] })).toBe(0);
    expect(await notifyTaskPush(w.dev, w.repo, { ...push, branch: "refs/heads/other", after: "1".repeat(40), shas: ["1".repeat(40)] })).toBe(0);
    const told = await inbox(w.dev);
    expect(told).toEqual([
      expect.objectContaining({
        kind: "task.code_pushed",
        object_type: "task",
        object_id: task.id,
        summary: `octocat pushed 1 commit to acme/api@feature/login (abcdef1), your task ${task.ref}: https://github.com/acme/api/commit/${SHA}`,
      }),
    ]);
  });
});

describe("oneLine and shownUrl", () => {
  it("flatten controls and direction marks, and keep only short plain http(s) URLs", () => {
    expect(oneLine("  a\r\n\tb\u2028c\u2066d  ", 50)).toBe("a b c d");
    expect(oneLine("abcdef", 4)).toBe("abc…");
    expect(shownUrl("https://github.com/a/b/runs/1")).toBe("https://github.com/a/b/runs/1");
    for (const bad of ["javascript:alert(1)", "data:text/html,x", "https://u:p@x.io/", "not a url", `https://x.io/${"a".repeat(300)}`]) expect(shownUrl(bad)).toBe("");
  });
});
