/** The outgoing-webhook tools over the call pipeline: webhook_subscribe, webhook_deliveries, webhook_replay. */
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import type { Env } from "../../../src/env";
import { MAX_HOOKS_PER_OWNER } from "../../../src/work/outhooks/model";
import { deliver, holdQueue, notify, RECEIVER, receiver, take } from "../../support/outhooks-rig";
import { call, fails, newWorld, ok, refusedWithoutWrites, type Structured } from "../../support/helpers";

const T0 = "2026-06-01T12:00:00.000Z";
const URL_A = `${RECEIVER}/ledger/a`;

beforeEach(() => holdQueue());

async function world() {
  const w = await newWorld("hooks-tools", { start: T0, actor: "alice" });
  const bob = await w.other("bob");
  const ops = await w.other("ops", { operator: true });
  return { ...w, alice: w, bob, ops };
}

const listed = async (ctx: Parameters<typeof ok>[0], args: Record<string, unknown> = {}) => ok(ctx, "webhook_deliveries", args);

describe("webhook_subscribe", () => {
  it("creates a subscription, answers its signing secret once, and never shows the secret again", async () => {
    const w = await world();
    const r = await ok(w.ctx, "webhook_subscribe", { url: URL_A, kinds: ["mention", "check.*"], label: "laptop" });
    expect(r.action).toBe("create");
    expect(r.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(r.subscription).toEqual({
      id: expect.any(String),
      url: URL_A,
      owner_actor_id: w.id.actorId,
      recipients: "mine",
      kinds: ["mention", "check.*"],
      label: "laptop",
      active: true,
      created_at: T0,
      updated_at: T0,
    });
    const again = await listed(w.ctx);
    expect(again.subscriptions).toEqual([r.subscription]);
    expect(JSON.stringify(again)).not.toContain(r.secret);
    // Two subscriptions never share a secret.
    const other = await ok(w.ctx, "webhook_subscribe", { url: `${RECEIVER}/ledger/b` });
    expect(other.secret).not.toBe(r.secret);
    expect(other.subscription.kinds).toEqual([]);
  });

  it("refuses non-public, non-https and malformed targets, storing nothing", async () => {
    const w = await world();
    const state = async () => (await listed(w.ctx)).subscriptions;
    for (const url of [
      "http://hooks.example.com/ledger",
      "https://127.0.0.1/hook",
      "https://10.1.2.3/hook",
      "https://169.254.169.254/latest",
      "https://[::1]/hook",
      "https://localhost/hook",
      "https://build.internal/hook",
      "https://user:pw@hooks.example.com/hook",
    ]) {
      const e = await refusedWithoutWrites(w.ctx, "webhook_subscribe", { url }, "url_not_allowed", state);
      expect(e.hint).toMatch(/public https URL/);
      expect(e.message).not.toContain("pw@");
    }
    expect((await refusedWithoutWrites(w.ctx, "webhook_subscribe", { url: "not a url" }, "invalid_input", state)).message).toMatch(/not a valid absolute URL/);
    await refusedWithoutWrites(w.ctx, "webhook_subscribe", {}, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "webhook_subscribe", { url: URL_A, kinds: ["mention", "(a+)+$"] }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "webhook_subscribe", { url: URL_A, kinds: Array.from({ length: 21 }, (_, i) => `k${i}`) }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "webhook_subscribe", { url: `${URL_A}?${"x".repeat(2100)}` }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "webhook_subscribe", { url: URL_A, secret: "mine" }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "webhook_subscribe", { url: URL_A, subscription_id: "x" }, "invalid_input", state);
  });

  it("lets only an operator key subscribe to every actor's notifications", async () => {
    const w = await world();
    const e = await refusedWithoutWrites(w.ctx, "webhook_subscribe", { url: URL_A, recipients: "all" }, "operator_required", async () => (await listed(w.ops.ctx)).subscriptions);
    expect(e.hint).toMatch(/recipients: mine/);
    const r = await ok(w.ops.ctx, "webhook_subscribe", { url: URL_A, recipients: "all" });
    expect(r.subscription).toMatchObject({ recipients: "all", owner_actor_id: w.ops.id.actorId });
  });

  it("pauses, resumes and deletes the caller's own subscription; another actor's or tenant's id is not_found", async () => {
    const w = await world();
    const other = await newWorld("hooks-tools-b", { start: T0, actor: "alice" });
    const otherOps = await other.other("ops", { operator: true });
    const id = (await ok(w.ctx, "webhook_subscribe", { url: URL_A })).subscription.id;

    expect((await ok(w.ctx, "webhook_subscribe", { action: "pause", subscription_id: id })).subscription.active).toBe(false);
    expect((await listed(w.ctx)).subscriptions[0].active).toBe(false);
    expect((await ok(w.ctx, "webhook_subscribe", { action: "resume", subscription_id: id })).subscription.active).toBe(true);

    const state = async () => (await listed(w.ctx)).subscriptions;
    for (const who of [w.bob.ctx, other.ctx, otherOps.ctx]) {
      for (const action of ["pause", "resume", "delete"]) await refusedWithoutWrites(who, "webhook_subscribe", { action, subscription_id: id }, "not_found", state);
    }
    await refusedWithoutWrites(w.ctx, "webhook_subscribe", { action: "pause" }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "webhook_subscribe", { action: "pause", subscription_id: id, url: URL_A }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "webhook_subscribe", { action: "stop", subscription_id: id }, "invalid_input", state);
    // The tenant's operator may manage it.
    expect((await ok(w.ops.ctx, "webhook_subscribe", { action: "pause", subscription_id: id })).subscription.active).toBe(false);

    const gone = await ok(w.ctx, "webhook_subscribe", { action: "delete", subscription_id: id });
    expect(gone.subscription.id).toBe(id);
    expect((await listed(w.ctx)).subscriptions).toEqual([]);
    // A retry of the delete answers as the delete did; a new call finds nothing.
    expect((await ok(w.ctx, "webhook_subscribe", { action: "delete", subscription_id: id })).idempotent_replay).toBe(true);
    expect((await fails(w.ctx, "webhook_subscribe", { action: "delete", subscription_id: id, idempotency_key: "again" })).code).toBe("not_found");
  });

  it(`holds an actor to ${MAX_HOOKS_PER_OWNER} subscriptions`, async () => {
    const w = await world();
    for (let i = 0; i < MAX_HOOKS_PER_OWNER; i++) await ok(w.ctx, "webhook_subscribe", { url: `${RECEIVER}/n/${i}` });
    const e = await refusedWithoutWrites(w.ctx, "webhook_subscribe", { url: `${RECEIVER}/n/extra` }, "too_many_subscriptions", async () => (await listed(w.ctx)).subscriptions.length);
    expect(e.hint).toMatch(/Delete one/);
    // Another actor's count is its own.
    await ok(w.bob.ctx, "webhook_subscribe", { url: `${RECEIVER}/bob` });
  });

  it("answers a retried create with the first result instead of a second subscription", async () => {
    const w = await world();
    const first = await ok(w.ctx, "webhook_subscribe", { url: URL_A, idempotency_key: "hook-1" });
    const again = await ok(w.ctx, "webhook_subscribe", { url: URL_A, idempotency_key: "hook-1" });
    expect(again.idempotent_replay).toBe(true);
    expect(again.subscription.id).toBe(first.subscription.id);
    expect((await listed(w.ctx)).subscriptions).toHaveLength(1);
  });
});

describe("webhook_deliveries", () => {
  it("lists the caller's own subscriptions and deliveries newest first, by page, by status and subscription; an operator sees the tenant's", async () => {
    const w = await world();
    const rx = receiver();
    const mine = (await ok(w.ctx, "webhook_subscribe", { url: URL_A })).subscription.id;
    const bobs = (await ok(w.bob.ctx, "webhook_subscribe", { url: `${RECEIVER}/bob` })).subscription.id;
    for (let i = 0; i < 3; i++) {
      await notify(w.ctx, w.id.actorId, "mention", `for alice ${i}`);
      w.clock.advance(1000);
    }
    await notify(w.ctx, w.bob.id.actorId, "mention", "for bob");
    rx.answers = [200, 200, 500];
    // One at a time, so the answers go to alice's three notices in order (bob's gets the last one too).
    for (const m of take()) await deliver([m], w.clock);

    const page1 = await listed(w.ctx, { limit: 2 });
    expect(page1.subscriptions.map((s: Structured) => s.id)).toEqual([mine]);
    expect(page1.items).toHaveLength(2);
    expect(page1.items.every((d: Structured) => d.subscription_id === mine && d.recipient_actor_id === w.id.actorId)).toBe(true);
    const page2 = await listed(w.ctx, { limit: 2, cursor: page1.next_cursor });
    expect(page2.items).toHaveLength(1);
    expect(page2.next_cursor).toBeUndefined();
    const all = [...page1.items, ...page2.items].map((d: Structured) => d.id);
    expect(all).toEqual([...all].sort().reverse());

    const statuses = (await listed(w.ctx)).items.map((d: Structured) => d.status).sort();
    expect(statuses).toEqual(["delivered", "delivered", "pending"]);
    expect((await listed(w.ctx, { status: "pending" })).items).toEqual([expect.objectContaining({ status: "pending", attempts: 1, last_status: 500, last_error: "answered HTTP 500" })]);

    const ops = await listed(w.ops.ctx);
    expect(ops.subscriptions.map((s: Structured) => s.id).sort()).toEqual([mine, bobs].sort());
    expect(ops.items).toHaveLength(4);
    expect((await listed(w.ops.ctx, { subscription_id: bobs })).items.map((d: Structured) => d.recipient_actor_id)).toEqual([w.bob.id.actorId]);
  });

  it("refuses another actor's or tenant's subscription as not_found, and a cursor it did not issue", async () => {
    const w = await world();
    const other = await newWorld("hooks-tools-c", { start: T0, actor: "alice" });
    const id = (await ok(w.ctx, "webhook_subscribe", { url: URL_A })).subscription.id;
    expect((await fails(w.bob.ctx, "webhook_deliveries", { subscription_id: id })).code).toBe("not_found");
    expect((await fails(other.ctx, "webhook_deliveries", { subscription_id: id })).code).toBe("not_found");
    expect((await listed(other.ctx)).subscriptions).toEqual([]);
    expect((await fails(w.ctx, "webhook_deliveries", { cursor: "nope" })).code).toBe("invalid_input");
    expect((await fails(w.ctx, "webhook_deliveries", { status: "lost" })).code).toBe("invalid_input");
    expect((await fails(w.ctx, "webhook_deliveries", { limit: 1000 })).code).toBe("invalid_input");
  });
});

describe("webhook_replay", () => {
  it("refuses bad arguments, pending deliveries, paused subscriptions and others' ids", async () => {
    const w = await world();
    const other = await newWorld("hooks-tools-d", { start: T0, actor: "alice" });
    receiver().answers = [500];
    const hook = (await ok(w.ctx, "webhook_subscribe", { url: URL_A })).subscription.id;
    await notify(w.ctx, w.id.actorId, "mention");
    await deliver(take(), w.clock);
    const [pending] = (await listed(w.ctx)).items;
    expect(pending.status).toBe("pending");
    const state = async () => (await listed(w.ctx)).items;

    await refusedWithoutWrites(w.ctx, "webhook_replay", {}, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "webhook_replay", { delivery_id: pending.id, since: "1h" }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "webhook_replay", { delivery_id: pending.id, subscription_id: hook }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "webhook_replay", { since: "yesterday-ish" }, "invalid_input", state);
    expect((await refusedWithoutWrites(w.ctx, "webhook_replay", { delivery_id: pending.id }, "conflict", state)).hint).toMatch(/next_attempt_at/);
    for (const who of [w.bob.ctx, other.ctx]) await refusedWithoutWrites(who, "webhook_replay", { delivery_id: pending.id }, "not_found", state);
    await refusedWithoutWrites(other.ctx, "webhook_replay", { since: "1d", subscription_id: hook }, "not_found", state);
    // Another tenant's "every failed one" finds none of this tenant's.
    expect((await ok(other.ctx, "webhook_replay", { since: "30d" })).items).toEqual([]);

    await env.DB.prepare(`UPDATE outbound_hook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = ?`).bind(pending.id).run();
    await ok(w.ctx, "webhook_subscribe", { action: "pause", subscription_id: hook });
    expect((await refusedWithoutWrites(w.ctx, "webhook_replay", { delivery_id: pending.id }, "subscription_paused", state)).hint).toMatch(/resume/);
    expect((await ok(w.ctx, "webhook_replay", { since: "1d" })).items).toEqual([]);
    expect((await call(w.ctx, "webhook_replay", { delivery_id: "0190-nope" })).error.code).toBe("not_found");
  });

  it("is open-world and not read-only, and webhook_deliveries is read-only", async () => {
    const { findTool } = await import("../../../src/server/registry");
    expect(findTool("webhook_replay")!.annotations).toMatchObject({ readOnly: false, openWorld: true });
    expect(findTool("webhook_subscribe")!.annotations).toMatchObject({ readOnly: false, destructive: true, openWorld: true });
    expect(findTool("webhook_deliveries")!.annotations.readOnly).toBe(true);
    expect((env as unknown as Env).OUTBOUND_HOOKS_ALLOW_PRIVATE).toBeUndefined();
  });
});
