/**
 * GitHub's failures and reviews reach whoever holds the work (src/work/signals), through the
 * Worker's webhook route with GitHub's own example payloads signed here: check_run, check_suite,
 * workflow_run, pull_request_review, pull_request_review_comment, and pushes to a task's branch.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { replaySql } from "../../src/git/operator";
import { makeCtx, ok, seedIdentity, type Structured } from "../support/helpers";
import { appTenant, deliver, deliveryRow, example, type Payload, runCron, withRepo } from "../support/webhook-rig";

const REPO = "acme/api";

/** A tenant on installation `installation` with a project SIG and a task its dev holds, on branch `feature/login`. */
async function holderWorld(slug: string, installation: number) {
  const t = await appTenant(slug, installation, REPO);
  // The webhook path reads the wall clock; the tenant's writes use it too.
  const dev = makeCtx(t.id, { now: () => new Date() });
  const other = makeCtx(await seedIdentity(slug, "other"), { now: () => new Date() });
  await ok(dev, "project_create", { title: "Signals", key: "SIG" });
  const task = (await ok(dev, "task_create", { project_id: "SIG", title: "login" })).task as Structured;
  expect((await ok(dev, "task_claim", { task_id: task.id })).claimed).toBe(true);
  await ok(dev, "task_code_ref", { task_id: task.id, repository_id: REPO, ref_type: "branch", branch: "feature/login" });
  return { tenantId: t.id.tenantId, dev, other, task };
}

const notices = async (ctx: Ctx, kind: string) =>
  (
    await env.DB.prepare(`SELECT kind, object_type, object_id, summary, dedupe_key FROM notifications WHERE tenant_id = ? AND actor_id = ? AND kind = ? ORDER BY seq`)
      .bind(ctx.tenantId, ctx.actorId, kind)
      .all<Structured>()
  ).results;

let ids = 0;
const checkRun = (installation: number, conclusion: string, more: Payload = {}) => {
  const p = withRepo(
    example("check_run", (e) => e.action === "completed" && e.check_run.conclusion === "failure"),
    REPO,
    installation,
  );
  p.check_run = { ...p.check_run, id: 7_000_000 + ++ids, conclusion, check_suite: { ...p.check_run.check_suite, head_branch: "feature/login" }, pull_requests: [], ...more };
  return p;
};

describe("check_run, check_suite and workflow_run deliveries", () => {
  let w: Awaited<ReturnType<typeof holderWorld>>;
  beforeAll(async () => {
    w = await holderWorld("sig-hook-check", 9501);
  });

  it("a failed check run reaches the claim holder's inbox once, with the check's name, conclusion and URL", async () => {
    const payload = checkRun(9501, "failure");
    const r = await deliver("check_run", payload);
    expect(r.status).toBe(202);
    expect(await deliveryRow(w.tenantId, r.delivery)).toMatchObject({ status: "processed", error: "" });
    const inbox = (await ok(w.dev, "notification_query", {})).items as Structured[];
    expect(inbox).toEqual([
      expect.objectContaining({
        kind: "check.failed",
        object_type: "task",
        object_id: w.task.id,
        summary: `Check "Octocoders-linter" failure on acme/api@feature/login (ec26c3e), your task ${w.task.ref}: ${payload.check_run.html_url}`,
      }),
    ]);
    expect(await notices(w.other, "check.failed")).toEqual([]);

    // Processed again: an operator's replay, and the same check in a new body (GitHub's own redelivery is a duplicate already).
    expect((await env.DB.prepare(replaySql(r.delivery, w.tenantId)).all()).results).toHaveLength(1);
    await runCron(new Date());
    expect(await deliveryRow(w.tenantId, r.delivery)).toMatchObject({ status: "processed" });
    await deliver("check_run", { ...payload, check_run: { ...payload.check_run, completed_at: "2026-06-02T00:00:00Z" } });
    expect(await notices(w.dev, "check.failed")).toHaveLength(1);
  });

  it("a check that passed, or one still running, tells nobody", async () => {
    const before = (await notices(w.dev, "check.failed")).length;
    const passed = await deliver("check_run", checkRun(9501, "success"));
    expect(await deliveryRow(w.tenantId, passed.delivery)).toMatchObject({ status: "ignored", error: expect.stringContaining("'success'") });
    const created = await deliver("check_run", { ...checkRun(9501, "failure"), action: "created" });
    expect(await deliveryRow(w.tenantId, created.delivery)).toMatchObject({ status: "ignored" });
    expect(await notices(w.dev, "check.failed")).toHaveLength(before);
  });

  it("a failed workflow run and check suite reach the holder through the PR linked to the task", async () => {
    const pr = await ok(w.dev, "task_create", { project_id: "SIG", title: "by PR" });
    const prTask = pr.task as Structured;
    await ok(w.other, "task_claim", { task_id: prTask.id });
    await ok(w.other, "task_code_ref", { task_id: prTask.id, repository_id: REPO, ref_type: "pr", pr_number: 2 });

    const run = withRepo(
      example("workflow_run", (e) => e.action === "completed"),
      REPO,
      9501,
    );
    run.workflow_run = { ...run.workflow_run, conclusion: "timed_out", head_branch: "unrelated", head_sha: "1".repeat(40), pull_requests: [{ number: 2, base: { repo: { id: run.repository.id } } }] };
    expect((await deliver("workflow_run", run)).status).toBe(202);

    const suite = withRepo(
      example("check_suite", (e) => e.action === "completed"),
      REPO,
      9501,
    );
    suite.check_suite = { ...suite.check_suite, conclusion: "failure", head_branch: "unrelated", head_sha: "2".repeat(40), pull_requests: [{ number: 2 }] };
    await deliver("check_suite", suite);
    // A PR of another base repository has its own numbers: it names no task here.
    const fork = withRepo(
      example("workflow_run", (e) => e.action === "completed"),
      REPO,
      9501,
    );
    fork.workflow_run = { ...fork.workflow_run, id: 424242, conclusion: "failure", head_branch: "x", head_sha: "3".repeat(40), pull_requests: [{ number: 2, base: { repo: { id: 1 } } }] };
    await deliver("workflow_run", fork);

    const told = await notices(w.other, "check.failed");
    expect(told.map((n) => n.object_id)).toEqual([prTask.id, prTask.id]);
    expect(told[0]!.summary).toMatch(/^Workflow ".+" timed_out on acme\/api@unrelated \(1111111\), your task SIG-\d+: https:\/\/github\.com\/octo-org\/octo-repo\/actions\/runs\/\d+$/);
    expect(told[1]!.summary).toMatch(/^Check suite ".+" failure .*: https:\/\/github\.com\/acme\/api\/commit\/2{40}\/checks$/);
  });

  it("ignores a repository the tenant has not registered", async () => {
    const p = withRepo(checkRun(9501, "failure"), "acme/unknown", 9501);
    const r = await deliver("check_run", p);
    expect(await deliveryRow(w.tenantId, r.delivery)).toMatchObject({ status: "ignored", error: expect.stringContaining("not registered") });
  });
});

describe("pull_request_review and pull_request_review_comment deliveries", () => {
  let w: Awaited<ReturnType<typeof holderWorld>>;
  let prTask: Structured;
  beforeAll(async () => {
    w = await holderWorld("sig-hook-review", 9502);
    prTask = (await ok(w.dev, "task_create", { project_id: "SIG", title: "reviewed" })).task as Structured;
    await ok(w.other, "task_claim", { task_id: prTask.id });
    // The PR names the task: the pull_request delivery links them.
    const opened = withRepo(
      example("pull_request", (e) => e.action === "opened"),
      REPO,
      9502,
    );
    opened.number = 77;
    opened.pull_request = { ...opened.pull_request, number: 77, title: `${prTask.ref}: reviewed change`, body: "" };
    await deliver("pull_request", opened);
  });

  const reviewPayload = (state: string, id: number) => {
    const p = withRepo(
      example("pull_request_review", (e) => e.action === "submitted"),
      REPO,
      9502,
    );
    p.pull_request = { ...p.pull_request, number: 77, head: { ...p.pull_request.head, ref: "elsewhere", sha: "4".repeat(40) } };
    p.review = { ...p.review, id, state };
    return p;
  };

  it("a review requesting changes reaches the holder of the task the PR is linked to", async () => {
    const r = await deliver("pull_request_review", reviewPayload("changes_requested", 1001));
    expect(await deliveryRow(w.tenantId, r.delivery)).toMatchObject({ status: "processed" });
    const told = await notices(w.other, "review.submitted");
    expect(told).toEqual([
      {
        kind: "review.submitted",
        object_type: "task",
        object_id: prTask.id,
        // The URL is the example payload's own.
        summary: `Codertocat requested changes on acme/api#77 (review changes_requested), your task ${prTask.ref}: https://github.com/Codertocat/Hello-World/pull/2#pullrequestreview-237895671`,
        dedupe_key: "review:1001:changes_requested",
      },
    ]);
    expect(await notices(w.dev, "review.submitted")).toEqual([]);
    // An approval is news too; a dismissal is not.
    await deliver("pull_request_review", reviewPayload("approved", 1002));
    const dismissed = await deliver("pull_request_review", { ...reviewPayload("dismissed", 1003), action: "dismissed" });
    expect(await deliveryRow(w.tenantId, dismissed.delivery)).toMatchObject({ status: "ignored" });
    expect((await notices(w.other, "review.submitted")).map((n) => n.dedupe_key)).toEqual(["review:1001:changes_requested", "review:1002:approved"]);
  });

  it("a review comment reaches the holder on the PR's head branch, with the file it is on", async () => {
    const p = withRepo(
      example("pull_request_review_comment", (e) => e.action === "created"),
      REPO,
      9502,
    );
    p.pull_request = { ...p.pull_request, number: 78, head: { ...p.pull_request.head, ref: "feature/login", repo: { id: p.repository.id } } };
    p.comment = { ...p.comment, id: 5555, path: "src/login.ts", line: 3 };
    await deliver("pull_request_review_comment", p);
    await deliver("pull_request_review_comment", { ...p, comment: { ...p.comment, body: "edited in transit" } });
    const told = await notices(w.dev, "review.comment");
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ object_id: w.task.id, dedupe_key: "review-comment:5555" });
    expect(told[0]!.summary).toMatch(/^Codertocat commented on acme\/api#78 at src\/login\.ts:3, your task SIG-1: https:\/\/github\.com\/.+#discussion_r\d+$/);
    // A fork's head branch of the same name is not this repository's branch.
    const fork = { ...p, pull_request: { ...p.pull_request, number: 79, head: { ...p.pull_request.head, repo: { id: 1 } } }, comment: { ...p.comment, id: 5556 } };
    await deliver("pull_request_review_comment", fork);
    expect(await notices(w.dev, "review.comment")).toHaveLength(1);
  });
});

describe("a push to a claimed task's branch", () => {
  it("tells the task's holder once per push, beside the reservation notices", async () => {
    const w = await holderWorld("sig-hook-push", 9503);
    const push = (after: string, ref = "refs/heads/feature/login") => {
      const p = withRepo(
        example("push", (e) => e.commits.length > 0),
        REPO,
        9503,
      );
      p.ref = ref;
      p.after = after;
      p.deleted = false;
      p.commits = [{ ...p.commits[0], id: after, timestamp: "2026-06-02T10:00:00Z", message: "m", added: [], modified: ["src/login.ts"], removed: [] }];
      return p;
    };
    const r = await deliver("push", push("5".repeat(40)));
    expect(await deliveryRow(w.tenantId, r.delivery)).toMatchObject({ status: "processed" });
    await deliver("push", { ...push("5".repeat(40)), compare: "https://example.com/another-body" });
    await deliver("push", push("6".repeat(40), "refs/heads/other"));
    const told = await notices(w.dev, "task.code_pushed");
    expect(told).toEqual([expect.objectContaining({ object_type: "task", object_id: w.task.id, dedupe_key: `task-push:feature/login:${"5".repeat(40)}` })]);
  });
});

describe("tenants", () => {
  it("a delivery for one tenant's installation never reaches another tenant's holder of the same repository, key and branch", async () => {
    const a = await holderWorld("sig-hook-ten-a", 9504);
    const b = await holderWorld("sig-hook-ten-b", 9505);
    await deliver("check_run", checkRun(9504, "failure"));
    const review = withRepo(
      example("pull_request_review", (e) => e.action === "submitted"),
      REPO,
      9504,
    );
    review.pull_request = { ...review.pull_request, number: 90, head: { ...review.pull_request.head, ref: "feature/login", repo: { id: review.repository.id } } };
    review.review = { ...review.review, id: 9090, state: "changes_requested" };
    await deliver("pull_request_review", review);
    expect((await notices(a.dev, "check.failed")).length).toBe(1);
    expect((await notices(a.dev, "review.submitted")).length).toBe(1);
    expect(await notices(b.dev, "check.failed")).toEqual([]);
    expect(await notices(b.dev, "review.submitted")).toEqual([]);
  });
});
