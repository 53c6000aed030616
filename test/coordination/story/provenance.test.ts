/** provenance: the chain from a task, a commit, a path or a pull request, read from the ledgers and the stored webhook deliveries. */
import { describe, expect, it } from "vitest";
import { call, fails, MINUTE, newWorld, ok, type Structured } from "../../support/helpers";
import { at, checkRunPayload, pushPayload, REPO, repository, SHA1, SHA2, START, storyWorld, webhook } from "../../support/story-rig";

const kinds = (items: Structured[]) => items.map((x) => x.kind);

describe("provenance", () => {
  it("from a task: claim → decision → change events → commit → review verdict → CI, oldest first, each with its actor and identifying fields", async () => {
    const s = await storyWorld("prov-task");
    // A review round: bob reviews SHOP-1 and approves it.
    await ok(s.ctx, "task_update", { task_id: s.task.id, patch: { reviewer_actor_id: "bob" } });
    const moved = await ok(s.ctx, "task_update", { task_id: s.task.id, patch: { status: "in_review" } });
    s.clock.advance(MINUTE);
    await ok(s.bob.ctx, "handoff_respond", { handoff_id: moved.review_handoff.id, response: { verdict: "approved" } });

    const r = await ok(s.ctx, "provenance", { task_id: "SHOP-1" });
    expect(r.start).toEqual({ kind: "task", ref: "SHOP-1" });
    expect(kinds(r.items)).toEqual(["claim", "decision", "change", "change", "commit", "ci", "review"]);
    expect(r.truncated).toBe(false);
    expect(r.counts).toMatchObject({ claim: 1, decision: 1, change: 2, commit: 1, ci: 1, review: 1, pr: 0 });
    const [claim, decision, cart, tax, commit, ci, review] = r.items as Structured[];
    expect(claim).toMatchObject({ actor: { id: s.id.actorId, name: "alice" }, task_id: s.task.id, task_key: "SHOP-1", at: at(1) });
    expect(decision).toMatchObject({ decision_id: s.decision.id, decision_title: "Rounding", task_key: "SHOP-1", actor: { id: s.id.actorId, name: "alice" } });
    expect(cart).toMatchObject({ event_id: s.cartEvent, entity_path: "src/cart.ts", change_type: "modify", sha: SHA1, actor: { id: s.id.actorId, name: "alice" } });
    expect(tax).toMatchObject({ event_id: s.taxEvent, entity_path: "src/tax.ts", task_key: "SHOP-1", sha: null });
    expect(commit).toMatchObject({ sha: SHA1, repository: REPO, actor: { id: null, name: "Alice Dev" }, at: at(5) });
    expect(commit!.summary).toContain("Round totals half up");
    expect(ci).toMatchObject({ sha: SHA1, check_name: "ci / test", conclusion: "success", url: `https://github.com/${REPO}/runs/42`, actor: { id: null, name: "github-actions[bot]" } });
    expect(review).toMatchObject({ verdict: "approved", task_key: "SHOP-1", actor: { id: s.bob.id.actorId, name: "bob" } });
    // Nothing of bob's unrelated work.
    expect(r.items.some((x: Structured) => x.event_id === s.strayEvent || x.decision_title === "Unrelated")).toBe(false);
    // Time order throughout.
    expect(r.items.map((x: Structured) => x.at)).toEqual([...r.items.map((x: Structured) => x.at)].sort());
  });

  it("from a commit: that commit's events, checks and task context, not the task's other work", async () => {
    const s = await storyWorld("prov-sha");
    const r = await ok(s.ctx, "provenance", { sha: SHA1.slice(0, 10) });
    expect(r.start).toEqual({ kind: "commit", ref: SHA1.slice(0, 10) });
    expect(kinds(r.items)).toEqual(["claim", "decision", "change", "commit", "ci"]);
    expect(r.items.find((x: Structured) => x.kind === "change")).toMatchObject({ event_id: s.cartEvent });
    // The same by full SHA, and scoped to the repository.
    const full = await ok(s.ctx, "provenance", { sha: SHA1.toUpperCase(), repository_id: REPO });
    expect(kinds(full.items)).toEqual(kinds(r.items));
    // A commit nothing knows of: an empty chain, not an error.
    expect((await ok(s.ctx, "provenance", { sha: SHA2 })).items).toEqual([]);
  });

  it("from a path: its change events (symbols included), the commits that touched it and their checks, and the task behind them", async () => {
    const s = await storyWorld("prov-path");
    const symbol = (await ok(s.ctx, "log_change", { entity_path: "src/cart.ts::total", change_type: "modify", reasoning: "rounding in total()" })).id;
    await ok(s.ctx, "log_change", { entity_path: "src/cart.tsx", change_type: "add", reasoning: "another file" });
    const r = await ok(s.ctx, "provenance", { repository_id: REPO, path: "./src/cart.ts" });
    expect(r.start).toEqual({ kind: "path", ref: `${REPO}:src/cart.ts` });
    expect(kinds(r.items)).toEqual(["claim", "decision", "change", "commit", "ci", "change"]);
    expect(r.items.filter((x: Structured) => x.kind === "change").map((x: Structured) => x.event_id)).toEqual([s.cartEvent, symbol]);
    // src/tax.ts is SHOP-1's too, but not this path's story.
    expect(r.items.some((x: Structured) => x.entity_path === "src/tax.ts")).toBe(false);
  });

  it("from a pull request: the PR, its task (linked by key), and the commits of its head branch", async () => {
    const s = await storyWorld("prov-pr");
    const now = s.clock.now().toISOString();
    await webhook(s.ctx, "push", pushPayload(SHA2, now, ["src/cart.ts"], "shop-1-totals"));
    await webhook(s.ctx, "check_run", checkRunPayload(SHA2, now, "failure"));
    const pr = {
      action: "opened",
      number: 7,
      pull_request: { number: 7, title: "SHOP-1: checkout totals", body: "", draft: false, head: { sha: SHA2, ref: "shop-1-totals" }, base: { ref: "main" }, user: { login: "alice-gh" } },
      repository,
      sender: { login: "alice-gh" },
    };
    await webhook(s.ctx, "pull_request", pr);
    const r = await ok(s.ctx, "provenance", { repository_id: REPO, pr_number: 7 });
    expect(r.start).toEqual({ kind: "pr", ref: `${REPO}#7` });
    expect(r.counts).toMatchObject({ claim: 1, pr: 1, commit: 2, ci: 2 });
    expect(r.items.find((x: Structured) => x.kind === "pr")).toMatchObject({ pr_number: 7, repository: REPO, task_key: "SHOP-1" });
    expect(r.items.filter((x: Structured) => x.kind === "ci").map((x: Structured) => [x.sha, x.conclusion])).toEqual([
      [SHA1, "success"],
      [SHA2, "failure"],
    ]);
  });

  it("bounds the chain: limit keeps the oldest entries and says truncated", async () => {
    const s = await storyWorld("prov-limit");
    const r = await ok(s.ctx, "provenance", { task_id: s.task.id, limit: 2 });
    expect(kinds(r.items)).toEqual(["claim", "decision"]);
    expect(r.truncated).toBe(true);
    expect(r.counts.change).toBe(2);
  });

  it("refuses bad input: no start, two starts, a path or PR without repository, a bad sha, a limit past the cap", async () => {
    const s = await storyWorld("prov-bad");
    for (const args of [
      {},
      { task_id: "SHOP-1", sha: SHA1 },
      { path: "src/cart.ts" },
      { pr_number: 7 },
      { task_id: "SHOP-1", repository_id: REPO },
      { sha: "xyz1234" },
      { sha: "abc" },
      { task_id: "SHOP-1", limit: 501 },
      { task_id: "SHOP-1", taskId: "SHOP-1", extra: 1 },
      { repository_id: REPO, path: "../etc/passwd" },
    ]) {
      const e = await fails(s.ctx, "provenance", args);
      expect(e.code, JSON.stringify(args)).toBe("invalid_input");
      expect(e.hint.length).toBeGreaterThan(0);
    }
    expect((await fails(s.ctx, "provenance", { task_id: "SHOP-99" })).code).toBe("not_found");
    expect((await fails(s.ctx, "provenance", { repository_id: "acme/nope", pr_number: 1 })).code).toBe("not_found");
  });

  it("keeps to the caller's tenant: another tenant's task and repository are not found, and its commits show nothing", async () => {
    const s = await storyWorld("prov-tenant");
    const other = await newWorld("prov-tenant-b", { start: START });
    expect((await fails(other.ctx, "provenance", { task_id: s.task.id })).code).toBe("not_found");
    expect((await fails(other.ctx, "provenance", { repository_id: REPO, path: "src/cart.ts" })).code).toBe("not_found");
    const r = await call(other.ctx, "provenance", { sha: SHA1 });
    expect(r).toMatchObject({ ok: true, items: [], truncated: false });
  });
});
