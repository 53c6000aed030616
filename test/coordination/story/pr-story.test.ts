/**
 * The pull request story: a comment the server writes on a pull request of an opted-in repository
 * (review_settings pr_story) and edits on every later event, through the GitHub stand-in.
 */
import definitions from "@octokit/webhooks-examples";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../../src/core/context";
import { STORY_MARKER } from "../../../src/coordination/story/comment";
import { gatherStory, MAX_STORY_CHARS, renderStory, storyPullRequestEvent, type StoryData, type StoryPr } from "../../../src/coordination/story/pr-story";
import type { LedgerEvent } from "../../../src/coordination/story/provenance";
import { updateReviewSettings } from "../../../src/review/settings/model";
import { errorBody, example, FakeGitHub, type FakeRequest } from "../../support/github/fake";
import { FakeComments } from "../../support/github/fake-comments";
import { connectGitHub } from "../../support/github/tenant";
import { fails, MINUTE, ok, type Structured } from "../../support/helpers";
import { at, NAME, OWNER, REPO, repository, SHA1, SHA2, storyWorld, webhook, type Story } from "../../support/story-rig";

type Payload = Record<string, any>;
const FILES = ["src/cart.ts", "src/tax.ts"];

/** GitHub's example pull_request delivery for `action`, moved to the test repository, PR #7 at `sha`. */
function prPayload(action: string, sha: string, title = "SHOP-1: checkout totals"): Payload {
  const def = (definitions as unknown as { name: string; examples: Payload[] }[]).find((d) => d.name === "pull_request")!;
  const p = structuredClone(def.examples.find((e) => e.action === action)!);
  return {
    ...p,
    number: 7,
    repository: { ...p.repository, ...repository, owner: { ...p.repository.owner, login: OWNER } },
    pull_request: { ...p.pull_request, number: 7, title, body: "", draft: false, head: { ...p.pull_request.head, sha, ref: "shop-1-totals" }, base: { ...p.pull_request.base, ref: "main" } },
  };
}

const writes = (gh: FakeGitHub) => gh.requests.filter((r: FakeRequest) => r.method !== "GET").map((r) => `${r.method} ${r.path.comment_id ?? r.path.issue_number}`);

interface Rig {
  s: Story;
  ctx: Ctx;
  gh: FakeGitHub;
  comments: FakeComments;
}

/** The story world, connected to the GitHub stand-in, with a reverted attempt and a reservation on the PR's files. */
async function rig(prefix: string, optIn = true): Promise<Rig> {
  const s = await storyWorld(prefix);
  // Tried before and undone: an add on src/cart.ts, reverted a minute later.
  await ok(s.bob.ctx, "log_change", { entity_path: "src/cart.ts", change_type: "add", reasoning: "round down instead" });
  s.clock.advance(MINUTE);
  await ok(s.bob.ctx, "log_change", { entity_path: "src/cart.ts", change_type: "revert", reasoning: "customers were undercharged" });
  await ok(s.ctx, "path_reserve", { repository_id: REPO, paths: ["src/**"], task_id: "SHOP-1", reason: "checkout rework" });
  // The fake answers as api.github.com: the repository is registered on github.com.
  const gh = new FakeGitHub("https://api.github.com");
  const comments = new FakeComments(REPO, 7);
  comments.serve(gh, FILES);
  const ctx = await connectGitHub(s.ctx, gh);
  if (optIn) await updateReviewSettings(ctx, REPO, { prStory: true });
  return { s, ctx, gh, comments };
}

describe("the pull request story", () => {
  it("posts one comment on an opted-in repository's pull request, telling the task, decisions, events, undone attempts, reservations and the chain check", async () => {
    const { ctx, gh, comments } = await rig("story-post");
    const out = await webhook(ctx, "pull_request", prPayload("opened", SHA1));
    expect(out).toMatchObject({ status: "processed" });
    expect(out!.note).toMatch(/PR #7 open: 0 code ref\(s\) moved, 1 task\(s\) linked; PR story: comment 5001 posted on PR #7/);
    expect(writes(gh)).toEqual(["POST 7"]);
    const body = comments.bodies.get(5001)!;
    expect(body.startsWith(STORY_MARKER)).toBe(true);
    expect(body).toContain("**SHOP-1** Checkout totals — in_progress, assigned to alice");
    expect(body).toContain("Rounding: Round half up at checkout (accepted)");
    expect(body).toContain(`\`src/cart.ts\` modify by alice: round half up (${SHA1.slice(0, 12)})`);
    expect(body).toContain("`src/tax.ts` add by alice: tax on the rounded total");
    expect(body).toMatch(/`src\/cart.ts` add by bob at \S+ — \*\*reverted\*\* \(exact\): customers were undercharged/);
    expect(body).toMatch(/`src\/\*\*` held exclusively by alice until \S+ for SHOP-1 — checkout rework/);
    expect(body).toContain(`SHOP-1 claimed by alice at ${at(1)}`);
    expect(body).toMatch(/✅ The \d+ ledger entries cited here match the tamper-evident hash chain/);
    // Bob's unrelated decision and event are not this pull request's story.
    expect(body).not.toMatch(/Unrelated|src\/other\.ts/);
    expect(body.length).toBeLessThanOrEqual(65_536);
  });

  it("edits the same comment on a later push, and writes nothing when a re-delivery or a retry finds the story unchanged", async () => {
    const { ctx, gh, comments, s } = await rig("story-edit");
    const opened = crypto.randomUUID();
    await webhook(ctx, "pull_request", prPayload("opened", SHA1), opened);
    // The same delivery again (GitHub's redelivery): stored once, processed once.
    expect(await webhook(ctx, "pull_request", prPayload("opened", SHA1), opened)).toBeNull();
    expect(writes(gh)).toEqual(["POST 7"]);

    s.clock.advance(MINUTE);
    await ok(s.ctx, "log_change", { entity_path: "src/tax.ts", change_type: "modify", reasoning: "tax after discounts", changeset_id: "SHOP-1" });
    const sync = crypto.randomUUID();
    const out = await webhook(ctx, "pull_request", prPayload("synchronize", SHA2), sync);
    expect(out!.note).toContain("PR story: comment 5001 edited on PR #7");
    expect(writes(gh)).toEqual(["POST 7", "PATCH 5001"]);
    expect(comments.bodies.size).toBe(1);
    expect(comments.bodies.get(5001)).toContain("tax after discounts");
    expect(comments.bodies.get(5001)).toContain(`PR #7 at ${SHA2.slice(0, 12)}`);

    // The delivery tried again (say its first attempt was cut off): the story is the same, so GitHub is not written to.
    await env.DB.prepare(`UPDATE webhook_deliveries SET status = 'failed' WHERE tenant_id = ? AND delivery_id = ?`).bind(ctx.tenantId, sync).run();
    const again = await webhook(ctx, "pull_request", prPayload("synchronize", SHA2), sync);
    expect(again!.note).toContain("PR story: comment 5001 already tells it (unchanged)");
    expect(writes(gh)).toEqual(["POST 7", "PATCH 5001"]);
  });

  it("finds its comment by the marker when the stored id is lost, and posts anew when the comment was deleted", async () => {
    const { ctx, gh, comments, s } = await rig("story-lost");
    const payload = prPayload("opened", SHA1);
    await webhook(ctx, "pull_request", payload);
    await env.DB.prepare(`DELETE FROM pr_story_comments WHERE tenant_id = ?`).bind(ctx.tenantId).run();
    // Someone else's comment quoting the marker further on is not the story, nor is one that opens with it but is not ours to edit.
    comments.bodies.set(4000, `see ${STORY_MARKER}`);
    comments.bodies.set(4001, `${STORY_MARKER} forged`);
    comments.theirs.add(4001);
    expect(await storyPullRequestEvent(ctx, payload)).toBe("PR story: comment 5001 already tells it (unchanged) on PR #7");
    expect(writes(gh)).toEqual(["POST 7"]);
    await env.DB.prepare(`DELETE FROM pr_story_comments WHERE tenant_id = ?`).bind(ctx.tenantId).run();
    expect(await storyPullRequestEvent(ctx, prPayload("reopened", SHA2))).toBe("PR story: comment 5001 edited on PR #7");
    expect(writes(gh)).toEqual(["POST 7", "PATCH 4001", "PATCH 5001"]);

    comments.bodies.delete(5001);
    s.clock.advance(MINUTE);
    await ok(s.ctx, "log_change", { entity_path: "src/cart.ts", change_type: "modify", reasoning: "one more" });
    expect(await storyPullRequestEvent(ctx, prPayload("synchronize", SHA2))).toBe("PR story: comment 5002 posted on PR #7");
    expect(writes(gh)).toEqual(["POST 7", "PATCH 4001", "PATCH 5001", "PATCH 5001", "PATCH 4001", "POST 7"]);
  });

  it("says so when a change event it cites was edited behind the ledger's back", async () => {
    const { ctx, comments, s } = await rig("story-tamper");
    await webhook(ctx, "pull_request", prPayload("opened", SHA1));
    expect(comments.bodies.get(5001)).toContain("✅");
    await env.DB.prepare(`UPDATE events SET reasoning = 'round down' WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, s.cartEvent).run();
    expect(await storyPullRequestEvent(ctx, prPayload("synchronize", SHA1))).toBe("PR story: comment 5001 edited on PR #7");
    expect(comments.bodies.get(5001)).toContain(`⚠️ **The hash chain does not verify**: event ${s.cartEvent}`);
    expect(comments.bodies.get(5001)).toContain("no longer matches the hash recorded when it was written");
  });

  it("leaves a pull request alone while another delivery is posting its story", async () => {
    const { ctx, gh } = await rig("story-busy");
    const repo = await env.DB.prepare(`SELECT id FROM repositories WHERE tenant_id = ?`).bind(ctx.tenantId).first<{ id: string }>();
    const now = new Date().toISOString();
    await env.DB.prepare(`INSERT INTO pr_story_comments (tenant_id, repository_id, pr_number, claimed_at, updated_at) VALUES (?, ?, 7, ?, ?)`).bind(ctx.tenantId, repo!.id, now, now).run();
    expect(await storyPullRequestEvent(ctx, prPayload("opened", SHA1))).toMatch(/another delivery is writing PR #7's story right now/);
    expect(writes(gh)).toEqual([]);
  });

  it("writes nothing for a repository that did not opt in, or for other actions", async () => {
    const { ctx, gh } = await rig("story-off", false);
    const out = await webhook(ctx, "pull_request", prPayload("opened", SHA1));
    expect(out).toMatchObject({ status: "processed", note: "PR #7 open: 0 code ref(s) moved, 1 task(s) linked" });
    await updateReviewSettings(ctx, REPO, { prStory: true });
    expect(await storyPullRequestEvent(ctx, prPayload("closed", SHA1))).toBeNull();
    expect(await storyPullRequestEvent(ctx, prPayload("labeled", SHA1))).toBeNull();
    expect(gh.requests).toEqual([]);
  });

  it("notes GitHub not being configured, or refusing, and the delivery still succeeds", async () => {
    const s = await storyWorld("story-nogh");
    await updateReviewSettings(s.ctx, REPO, { prStory: true });
    const out = await webhook(s.ctx, "pull_request", prPayload("opened", SHA1));
    expect(out).toMatchObject({ status: "processed" });
    expect(out!.note).toContain("PR story: GitHub is not configured for this tenant; no comment written");

    const { ctx, gh } = await rig("story-refused");
    gh.on("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", () => ({ status: 403, body: errorBody("Resource not accessible by integration") }));
    const refused = await webhook(ctx, "pull_request", prPayload("opened", SHA1));
    expect(refused).toMatchObject({ status: "processed" });
    expect(refused!.note).toMatch(/PR story: not written, GitHub answered 403/);
    // The claim was let go: the next event tries at once.
    expect((await env.DB.prepare(`SELECT claimed_at FROM pr_story_comments WHERE tenant_id = ?`).bind(ctx.tenantId).first<Structured>())!.claimed_at).toBeNull();
  });

  it("is deterministic: the same ledgers give the same body", async () => {
    const { ctx } = await rig("story-same");
    await webhook(ctx, "pull_request", prPayload("opened", SHA1));
    const repo = await env.DB.prepare(`SELECT id FROM repositories WHERE tenant_id = ?`).bind(ctx.tenantId).first<{ id: string }>();
    const pr: StoryPr = { repositoryId: repo!.id, slug: REPO, number: 7, headSha: SHA1, files: FILES, filesCut: false };
    const first = renderStory(pr, await gatherStory(ctx, pr));
    const second = renderStory(pr, await gatherStory(ctx, pr));
    expect(second).toBe(first);
    expect(first).toContain("SHOP-1");
  });

  it("stays within GitHub's comment size with many events, cutting the longest sections to '… and N more', and keeps ledger text inert", async () => {
    const event = (i: number): LedgerEvent => ({
      seq: 10_000 - i,
      id: `evt-${i}`,
      actor_id: "a1",
      timestamp: new Date(Date.UTC(2026, 5, 1, 12, 0, 0) - i * 1000).toISOString(),
      entity_path: `src/module-${i % 300}.ts`,
      entity_type: "file",
      change_type: "modify",
      diff: "",
      reasoning: `@octocat <img src=x> [link](https://example.com) ${i} ${"long reasoning ".repeat(40)}`,
      agent: "alice",
      actor: "alice",
      session_id: "",
      git_commit: "",
      project: "SHOP",
      changeset_id: "",
      metadata: {},
      revisit_after: "",
      expires_when: "",
      stale_when: "",
      supersedes: "",
      constraint: "",
      superseded_by: "",
    });
    const events = Array.from({ length: 3000 }, (_, i) => event(i));
    const data: StoryData = {
      tasks: [],
      decisions: [],
      claims: [],
      events,
      undone: events.slice(0, 800).map((e) => ({
        ...e,
        outcome: "reverted" as const,
        confidence: "exact" as const,
        outcome_reasoning: "x".repeat(400),
        supersede_reasoning: "",
        current_status: "reverted" as const,
        match_type: "exact" as const,
        similarity: 0,
        note: "",
      })),
      reservations: [],
      chain: { intact: true, checked: 3000, unchained_legacy: 0, first_break: null },
      names: new Map(),
      truncated: true,
    };
    const pr: StoryPr = { repositoryId: "r", slug: REPO, number: 9, headSha: SHA1, files: ["src/a.ts"], filesCut: true };
    const body = renderStory(pr, data);
    expect(body.length).toBeLessThanOrEqual(MAX_STORY_CHARS);
    expect(body.length).toBeGreaterThan(MAX_STORY_CHARS / 4);
    expect(body).toMatch(/- … and \d+ more/);
    expect(body).toContain("#### Change events on its files (3000)");
    expect(body.startsWith(STORY_MARKER)).toBe(true);
    expect(body).toContain("#### Ledger integrity");
    // Mentions do not ping, HTML and links stay text.
    expect(body).not.toMatch(/@octocat/);
    expect(body).toContain("@\u200boctocat");
    expect(body).not.toContain("<img");
    expect(body).toContain("\\[link\\](https://example.com)");
    expect(renderStory(pr, data)).toBe(body);
  });
});

describe("review_settings pr_story", () => {
  it("turns the story on for a repository the credentials can see, and reads it back", async () => {
    const { ctx, gh } = await rig("story-settings", false);
    gh.on("GET /repos/{owner}/{repo}", () => ({ body: example("GET /repos/{owner}/{repo}", { name: NAME, full_name: REPO, language: "TypeScript", source: { language: "TypeScript" } }) }));
    const on = await ok(ctx, "review_settings", { repo: REPO, pr_story: true });
    expect(on).toMatchObject({ changed: true, settings: { pr_story: true, reactive: false, publish: false } });
    expect((await ok(ctx, "review_settings", { repo: REPO })).settings.pr_story).toBe(true);
    expect(gh.requests.map((q) => [q.op, q.path.owner, q.path.repo])).toEqual([["GET /repos/{owner}/{repo}", OWNER, NAME]]);
    expect((await fails(ctx, "review_settings", { repo: REPO, pr_story: "yes" })).code).toBe("invalid_input");
  });
});
