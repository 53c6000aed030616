/**
 * A small history for the provenance and pull request story tests: a project and a registered
 * repository, a task that is claimed and decided on, change events, a push recorded by the push
 * webhook, and a check run delivered by GitHub (stored as webhook deliveries, as in production).
 */
import type { Ctx } from "../../src/core/context";
import { sha256Hex } from "../../src/db/ids";
import { processDelivery, recordDelivery } from "../../src/server/webhooks";
import { MINUTE, newWorld, ok, type Structured, type Who, type World } from "./helpers";

export const OWNER = "acme";
export const NAME = "shop";
export const REPO = `${OWNER}/${NAME}`;
export const SHA1 = "1111111111111111111111111111111111111111";
export const SHA2 = "2222222222222222222222222222222222222222";
/**
 * Half an hour ago, to the minute: the webhooks run on the real clock, and a reservation's lease
 * (an hour from the test clock) must still be live for them.
 */
export const START = new Date(Math.floor((Date.now() - 30 * MINUTE) / MINUTE) * MINUTE).toISOString();
/** START plus `minutes`. */
export const at = (minutes: number) => new Date(Date.parse(START) + minutes * MINUTE).toISOString();

type Payload = Record<string, unknown>;

/** Stores a delivery and processes it, as the webhook route does after its response; returns the outcome. */
export async function webhook(ctx: Ctx, event: string, payload: Payload, delivery = crypto.randomUUID()): Promise<Structured | null> {
  const raw = JSON.stringify(payload);
  await recordDelivery(ctx.env, { tenantId: ctx.tenantId, deliveryId: delivery, event, payload, rawPayload: raw, contentHash: await sha256Hex(raw) }, new Date());
  return processDelivery(ctx.env, ctx.tenantId, delivery, new Date(), payload);
}

export const repository = { full_name: REPO, name: NAME, owner: { login: OWNER }, html_url: `https://github.com/${REPO}`, default_branch: "main" };

/** A push of one commit to a branch. */
export const pushPayload = (sha: string, at: string, files: string[], branch = "main") => ({
  ref: `refs/heads/${branch}`,
  after: sha,
  repository,
  pusher: { name: "alice-gh" },
  commits: [{ id: sha, message: "Round totals half up\n\nSHOP-1", timestamp: at, author: { name: "Alice Dev", email: "alice@example.com" }, added: [], modified: files, removed: [] }],
});

/** A completed check run on a commit, as GitHub delivers it (only the fields anyone reads here). */
export const checkRunPayload = (sha: string, at: string, conclusion = "success") => ({
  action: "completed",
  check_run: { id: 42, name: "ci / test", head_sha: sha, status: "completed", conclusion, completed_at: at, html_url: `https://github.com/${REPO}/runs/42` },
  repository,
  sender: { login: "github-actions[bot]" },
});

export interface Story extends World {
  task: Structured;
  decision: Structured;
  /** The event naming SHA1 as its commit, on src/cart.ts. */
  cartEvent: string;
  /** The event filed under changeset SHOP-1, without a commit, on src/tax.ts. */
  taxEvent: string;
  /** An event of someone else's, elsewhere: it belongs to no chain here. */
  strayEvent: string;
  bob: Who;
}

/**
 * The history, a minute per step: SHOP-1 created and claimed, a decision, two events, the push
 * of SHA1 touching src/cart.ts, SHA1 recorded on the task, a check run on SHA1. Bob logs an
 * unrelated decision and event.
 */
export async function storyWorld(prefix: string): Promise<Story> {
  const w = await newWorld(prefix, { start: START, actor: "alice" });
  const bob = await w.other("bob");
  const step = () => w.clock.advance(MINUTE);
  await ok(w.ctx, "project_create", { title: "Shop", key: "SHOP" });
  await ok(w.ctx, "project_create", { title: "Other", key: "OTHER" });
  await ok(w.ctx, "repo_register", { slug: REPO });
  const task = (await ok(w.ctx, "task_create", { project_id: "SHOP", title: "Checkout totals" })).task;
  step();
  await ok(w.ctx, "task_claim", { task_id: task.id });
  step();
  const decision = (await ok(w.ctx, "decision_log", { project_id: "SHOP", title: "Rounding", choice: "Round half up at checkout" })).decision;
  await ok(bob.ctx, "decision_log", { project_id: "OTHER", title: "Unrelated", choice: "Nothing to do with SHOP-1" });
  step();
  const cartEvent = (await ok(w.ctx, "log_change", { entity_path: "src/cart.ts", change_type: "modify", reasoning: "round half up", git_commit: SHA1, project: "SHOP" })).id;
  step();
  const taxEvent = (await ok(w.ctx, "log_change", { entity_path: "src/tax.ts", change_type: "add", reasoning: "tax on the rounded total", changeset_id: "SHOP-1" })).id;
  const strayEvent = (await ok(bob.ctx, "log_change", { entity_path: "src/other.ts", change_type: "add", reasoning: "unrelated", project: "OTHER" })).id;
  step();
  await webhook(w.ctx, "push", pushPayload(SHA1, new Date(w.clock.now()).toISOString(), ["src/cart.ts"]));
  step();
  await ok(w.ctx, "task_code_ref", { task_id: task.id, ref_type: "commit", sha: SHA1, repository_id: REPO });
  step();
  await webhook(w.ctx, "check_run", checkRunPayload(SHA1, new Date(w.clock.now()).toISOString()));
  step();
  return { ...w, task, decision, cartEvent, taxEvent, strayEvent, bob };
}
