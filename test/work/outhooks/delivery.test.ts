/**
 * Outgoing webhooks end to end: notices written through deliverNotices are matched to subscriptions,
 * queued once, POSTed signed by the OUTBOUND_HOOKS consumer, retried with backoff, replayed; the cron
 * sweep catches up what a kick missed; private targets are never reached.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { FREQUENT_CRON, runMaintenance } from "../../../src/cron/maintenance";
import type { Env } from "../../../src/env";
import worker from "../../../src/index";
import { kickOutboundHooks, STALE_PENDING_MS, sweepOutboundHooks } from "../../../src/work/outhooks/dispatch";
import { MAX_ATTEMPTS } from "../../../src/work/outhooks/model";
import { OUTBOUND_HOOKS_QUEUE, retryDelaySeconds } from "../../../src/work/outhooks/send";
import { count, fails, newWorld, ok, settle, type Structured } from "../../support/helpers";
import { deliver, held, hmacHex, holdQueue, notify, RECEIVER, receiver, take } from "../../support/outhooks-rig";

const T0 = "2026-06-01T12:00:00.000Z";
const URL_A = `${RECEIVER}/ledger/a`;

beforeEach(() => holdQueue());

async function world(prefix = "hooks") {
  const w = await newWorld(prefix, { start: T0, actor: "alice" });
  const bob = await w.other("bob");
  const ops = await w.other("ops", { operator: true });
  return { ...w, bob, ops };
}

const deliveries = async (ctx: Parameters<typeof ok>[0], args: Record<string, unknown> = {}): Promise<Structured[]> => (await ok(ctx, "webhook_deliveries", args)).items;
/** The held messages of `w`'s tenant (the sweep serves every tenant of the file's database), taken. */
const mine = (w: { id: { tenantId: string } }) => take().filter((m) => m.tenant_id === w.id.tenantId);
const bodies = (rx: { received: { body: string }[] }) => rx.received.map((r) => JSON.parse(r.body) as Structured);

describe("outgoing webhook delivery", () => {
  it("POSTs the notification signed with the subscription's secret: HMAC-SHA256 of the exact body, timestamp inside it", async () => {
    const w = await world();
    const rx = receiver();
    const sub = await ok(w.ctx, "webhook_subscribe", { url: URL_A });
    await notify(w.bob.ctx, w.id.actorId, "mention", "bob mentioned you on T-1");
    const queued = take();
    expect(queued).toEqual([{ tenant_id: w.id.tenantId, delivery_id: expect.any(String) }]);

    w.clock.advance(5000);
    const result = await deliver(queued, w.clock);
    expect(result.acked).toEqual(["m0"]);
    expect(result.retried).toEqual([]);
    expect(rx.received).toHaveLength(1);
    const [got] = rx.received;
    expect(got!.url).toBe(URL_A);
    expect(got!.redirect).toBe("manual");
    expect(rx.lookups).toContain("hooks.example.com");
    const h = got!.headers;
    expect(h.get("content-type")).toBe("application/json");
    expect(h.get("x-ledger-event")).toBe("mention");
    expect(h.get("x-ledger-delivery")).toBe(queued[0]!.delivery_id);
    expect(h.get("x-ledger-signature-256")).toBe(`sha256=${await hmacHex(sub.secret, got!.body)}`);
    // Any other secret, or any change to the body, fails the check.
    expect(h.get("x-ledger-signature-256")).not.toBe(
      `sha256=${await hmacHex(
        sub.secret.replace(/^./, (c: string) => (c === "0" ? "1" : "0")),
        got!.body,
      )}`,
    );
    expect(h.get("x-ledger-signature-256")).not.toBe(`sha256=${await hmacHex(sub.secret, `${got!.body} `)}`);

    const body = JSON.parse(got!.body);
    const [notice] = (await ok(w.ctx, "notification_query", {})).items;
    expect(body).toEqual({
      id: notice.id,
      kind: "mention",
      object_type: "task",
      object_id: "t-1",
      summary: "bob mentioned you on T-1",
      actor: { id: w.id.actorId, name: "alice" },
      from_actor_id: w.bob.id.actorId,
      created_at: T0,
      delivery_id: queued[0]!.delivery_id,
      subscription_id: sub.subscription.id,
      attempt: 1,
      timestamp: Date.parse(T0) / 1000 + 5,
    });
    expect(h.get("x-ledger-timestamp")).toBe(String(body.timestamp));

    expect(await deliveries(w.ctx)).toEqual([
      expect.objectContaining({
        id: queued[0]!.delivery_id,
        status: "delivered",
        attempts: 1,
        last_status: 200,
        last_error: "",
        next_attempt_at: null,
        delivered_at: "2026-06-01T12:00:05.000Z",
        replayed_at: null,
      }),
    ]);
  });

  it("retries a failing receiver with exponential backoff and records the delivery once it answers 2xx", async () => {
    const w = await world();
    const rx = receiver();
    rx.answers = [500, 503, 204];
    await ok(w.ctx, "webhook_subscribe", { url: URL_A });
    await notify(w.ctx, w.id.actorId, "check.failed");
    const [m] = take();

    const first = await deliver([m!], w.clock);
    expect(first.retried).toEqual([{ msgId: "m0", delaySeconds: retryDelaySeconds(1) }]);
    expect(retryDelaySeconds(1)).toBe(30);
    expect((await deliveries(w.ctx))[0]).toMatchObject({ status: "pending", attempts: 1, last_status: 500, last_error: "answered HTTP 500", next_attempt_at: "2026-06-01T12:00:30.000Z" });

    // The message back early (or a duplicate) finds the attempt not due: no POST, acknowledged.
    const early = await deliver([m!], w.clock);
    expect(early.acked).toEqual(["m0"]);
    expect(rx.received).toHaveLength(1);

    w.clock.advance(30_000);
    const second = await deliver([m!], w.clock);
    expect(second.retried).toEqual([{ msgId: "m0", delaySeconds: 60 }]);
    w.clock.advance(60_000);
    const third = await deliver([m!], w.clock);
    expect(third.acked).toEqual(["m0"]);
    expect(bodies(rx).map((b) => b.attempt)).toEqual([1, 2, 3]);
    expect(new Set(rx.received.map((r) => r.headers.get("x-ledger-delivery")))).toEqual(new Set([m!.delivery_id]));
    expect((await deliveries(w.ctx))[0]).toMatchObject({ status: "delivered", attempts: 3, last_status: 204, last_error: "", next_attempt_at: null });
  });

  it(`gives up after ${MAX_ATTEMPTS} attempts; webhook_replay sends it again as a new attempt, by id or every failed one since a time`, async () => {
    const w = await world();
    const rx = receiver();
    rx.answers = [502];
    const hook = (await ok(w.ctx, "webhook_subscribe", { url: URL_A })).subscription.id;
    await notify(w.ctx, w.id.actorId, "mention", "first");
    await notify(w.ctx, w.id.actorId, "mention", "second");
    const [a, b] = take();
    const delays: number[] = [];
    for (let i = 1; i <= MAX_ATTEMPTS; i++) {
      const r = await deliver([a!, b!], w.clock);
      if (i < MAX_ATTEMPTS) {
        expect(r.retried.map((x) => x.msgId).sort()).toEqual(["m0", "m1"]);
        delays.push(r.retried[0]!.delaySeconds!);
        w.clock.advance(r.retried[0]!.delaySeconds! * 1000);
      } else {
        expect(r.acked.sort()).toEqual(["m0", "m1"]);
      }
    }
    expect(delays).toEqual([30, 60, 120, 240, 480, 960, 1920]);
    expect(rx.received).toHaveLength(2 * MAX_ATTEMPTS);
    const failed = await deliveries(w.ctx, { status: "failed" });
    expect(failed).toHaveLength(2);
    expect(failed.every((d) => d.attempts === MAX_ATTEMPTS && d.last_status === 502 && d.next_attempt_at === null)).toBe(true);
    // Nothing more is sent for a failed delivery, whatever arrives.
    w.clock.advance(3_600_000);
    await deliver([a!], w.clock);
    expect(rx.received).toHaveLength(2 * MAX_ATTEMPTS);

    rx.answers = [200];
    const one = await ok(w.ctx, "webhook_replay", { delivery_id: a!.delivery_id });
    expect(one.items).toEqual([expect.objectContaining({ id: a!.delivery_id, status: "pending", attempts: MAX_ATTEMPTS, replayed_at: w.clock.now().toISOString() })]);
    expect(take()).toEqual([a]);
    expect((await deliver([a!], w.clock)).acked).toEqual(["m0"]);
    expect(bodies(rx).at(-1)).toMatchObject({ delivery_id: a!.delivery_id, attempt: MAX_ATTEMPTS + 1 });
    expect((await deliveries(w.ctx)).find((d) => d.id === a!.delivery_id)).toMatchObject({ status: "delivered", attempts: MAX_ATTEMPTS + 1, last_status: 200 });

    // A delivered one may be sent again too (the receiver lost it).
    expect((await ok(w.ctx, "webhook_replay", { delivery_id: a!.delivery_id })).items).toHaveLength(1);
    take();
    // "Every failed one since": the other; a window that ends before it failed finds none.
    expect((await ok(w.ctx, "webhook_replay", { since: "1m" })).items).toEqual([]);
    const all = await ok(w.ctx, "webhook_replay", { since: "1d", subscription_id: hook });
    expect(all).toMatchObject({ more: false, items: [expect.objectContaining({ id: b!.delivery_id, status: "pending" })] });
    expect(take()).toEqual([b]);
  });

  it("sends only the kinds a subscription asks for: exact kinds and prefixes", async () => {
    const w = await world();
    const rx = receiver();
    await ok(w.ctx, "webhook_subscribe", { url: URL_A, kinds: ["check.*", "mention"] });
    for (const kind of ["check.failed", "mention", "paths.pushed", "checkpoint", "check.passed", "mentions"]) await notify(w.ctx, w.id.actorId, kind);
    await deliver(take(), w.clock);
    expect(
      bodies(rx)
        .map((b) => b.kind)
        .sort(),
    ).toEqual(["check.failed", "check.passed", "mention"]);
    expect((await deliveries(w.ctx)).map((d) => d.kind).sort()).toEqual(["check.failed", "check.passed", "mention"]);
  });

  it("sends an agent's subscription only its owner's notices, an operator's all-actors subscription everyone's of its tenant only", async () => {
    const w = await world("hooks-scope");
    const other = await newWorld("hooks-scope-b", { start: T0, actor: "alice" });
    const rx = receiver();
    await ok(w.ctx, "webhook_subscribe", { url: `${RECEIVER}/alice` });
    await ok(w.ops.ctx, "webhook_subscribe", { url: `${RECEIVER}/ops`, recipients: "all" });
    await notify(w.bob.ctx, w.id.actorId, "mention", "to alice");
    await notify(w.ctx, w.bob.id.actorId, "mention", "to bob");
    await notify(other.ctx, other.id.actorId, "mention", "to the other tenant's alice");
    await deliver(take(), w.clock);
    const sent = rx.received.map((r) => [new URL(r.url).pathname, JSON.parse(r.body).summary]).sort();
    expect(sent).toEqual([
      ["/alice", "to alice"],
      ["/ops", "to alice"],
      ["/ops", "to bob"],
    ]);
    // The log follows the same lines: alice sees her own, the operator the tenant's, the other tenant nothing.
    expect((await deliveries(w.ctx)).map((d) => d.recipient_actor_id)).toEqual([w.id.actorId]);
    expect(await deliveries(w.ops.ctx)).toHaveLength(3);
    expect(await deliveries(w.bob.ctx)).toEqual([]);
    expect(await deliveries(other.ctx)).toEqual([]);
    expect((await ok(other.ctx, "webhook_deliveries", {})).subscriptions).toEqual([]);
  });

  it("never reaches a private address: a name resolving privately fails the delivery at once, without a POST", async () => {
    const w = await world();
    const rx = receiver({ "evil.example.net": { A: ["93.184.215.14", "10.0.0.7"] } });
    await ok(w.ctx, "webhook_subscribe", { url: "https://evil.example.net/hook" });
    await notify(w.ctx, w.id.actorId, "mention");
    const r = await deliver(take(), w.clock);
    expect(r.acked).toEqual(["m0"]);
    expect(rx.received).toEqual([]);
    expect(rx.lookups).toContain("evil.example.net");
    const [d] = await deliveries(w.ctx);
    expect(d).toMatchObject({ status: "failed", attempts: 1, last_status: null });
    expect(d!.last_error).toMatch(/^refused: .*10\.0\.0\.7.*not a public address/);

    // A stored URL that turned private (written around the tool) is refused the same way, without DNS.
    await env.DB.prepare(`UPDATE outbound_hooks SET url = 'https://127.0.0.1:8787/mcp' WHERE tenant_id = ?`).bind(w.id.tenantId).run();
    w.clock.advance(1000);
    await notify(w.ctx, w.id.actorId, "mention");
    await deliver(take(), w.clock);
    expect(rx.received).toEqual([]);
    expect((await deliveries(w.ctx))[0]!.last_error).toMatch(/^refused: .*127\.0\.0\.1.*loopback/);
  });

  it("reaches a receiver on 127.0.0.1 over http only when OUTBOUND_HOOKS_ALLOW_PRIVATE is 1 (development)", async () => {
    const w = await world();
    const local = "http://127.0.0.1:9911";
    const rx = receiver({}, [local]);
    expect((await fails(w.ctx, "webhook_subscribe", { url: `${local}/hook` })).code).toBe("url_not_allowed");
    const dev = { ...w.ctx, env: { ...(env as unknown as Env), OUTBOUND_HOOKS_ALLOW_PRIVATE: "1" } };
    const sub = await ok(dev, "webhook_subscribe", { url: `${local}/hook` });
    await notify(dev, w.id.actorId, "mention");
    const queued = take();
    // The consumer without the setting refuses it.
    await deliver(queued, w.clock);
    expect(rx.received).toEqual([]);
    await ok(w.ctx, "webhook_replay", { delivery_id: queued[0]!.delivery_id });
    await deliver(take(), w.clock, { OUTBOUND_HOOKS_ALLOW_PRIVATE: "1" });
    expect(rx.received.map((r) => r.url)).toEqual([`${local}/hook`]);
    expect(rx.lookups).toEqual([]);
    expect(rx.received[0]!.headers.get("x-ledger-signature-256")).toBe(`sha256=${await hmacHex(sub.secret, rx.received[0]!.body)}`);
  });

  it("queues and sends a notification once, however many kicks, sweeps and duplicate messages race", async () => {
    const w = await world();
    const rx = receiver();
    await ok(w.ctx, "webhook_subscribe", { url: URL_A });
    // Rows written without a kick (a batch of its own), then many dispatchers at once.
    for (let i = 0; i < 3; i++) {
      await env.DB.prepare(`INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at) VALUES (?, ?, ?, 'mention', 'task', 't', ?, '', ?)`)
        .bind(crypto.randomUUID(), w.id.tenantId, w.id.actorId, `n${i}`, T0)
        .run();
    }
    const kick = () => kickOutboundHooks({ d1: env.DB, tenantId: w.id.tenantId, clock: w.clock, env: env as unknown as Env }, [w.id.actorId]);
    await Promise.all([kick(), kick(), sweepOutboundHooks(env as unknown as Env, w.clock.now()), kick()]);
    await kick();
    const queued = mine(w);
    expect(queued).toHaveLength(3);
    expect(new Set(queued.map((m) => m.delivery_id)).size).toBe(3);
    expect(await count(`SELECT COUNT(*) AS n FROM outbound_hook_deliveries WHERE tenant_id = ?`, w.id.tenantId)).toBe(3);

    // Every message twice in one batch, and once more after: one POST per notification.
    await deliver([...queued, ...queued], w.clock);
    await deliver(queued, w.clock);
    expect(
      bodies(rx)
        .map((b) => b.summary)
        .sort(),
    ).toEqual(["n0", "n1", "n2"]);
  });

  it("the cron sweep catches up what no kick announced, queues again a delivery whose message was lost, and drops old log rows", async () => {
    const w = await world();
    const rx = receiver();
    await ok(w.ctx, "webhook_subscribe", { url: URL_A });
    // A handoff writes its notice in its own batch, with no kick.
    await ok(w.bob.ctx, "handoff_create", { to_actor_ids: [w.id.actorId], kind: "question", title: "Can you look at the login bug?" });
    await settle(w.bob.ctx);
    const kicked = mine(w);
    const reports = await runMaintenance(env as unknown as Env, w.clock.now(), FREQUENT_CRON);
    const job = reports.find((r) => r.job === "outbound_hooks");
    expect(job).toMatchObject({ ok: true });
    const swept = [...kicked, ...mine(w)];
    expect(swept).toHaveLength(1);
    expect(job!.detail).toMatch(/delivery\(ies\) queued/);

    // The message is lost: nothing is sent until the sweep finds the delivery overdue.
    w.clock.advance(STALE_PENDING_MS - 60_000);
    await sweepOutboundHooks(env as unknown as Env, w.clock.now());
    expect(mine(w)).toEqual([]);
    w.clock.advance(2 * 60_000);
    await sweepOutboundHooks(env as unknown as Env, w.clock.now());
    const again = mine(w);
    expect(again).toEqual(swept);
    await deliver(again, w.clock);
    expect(bodies(rx).map((b) => [b.kind, b.summary])).toEqual([["question", "Can you look at the login bug?"]]);

    // Finished rows leave the log after 30 days; the subscription stays.
    w.clock.advance(31 * 24 * 3_600_000);
    await sweepOutboundHooks(env as unknown as Env, w.clock.now());
    expect(await deliveries(w.ctx)).toEqual([]);
    expect((await ok(w.ctx, "webhook_deliveries", {})).subscriptions).toHaveLength(1);
  });

  it("sends nothing while a subscription is paused, and what came meanwhile once it is resumed", async () => {
    const w = await world();
    const rx = receiver();
    const id = (await ok(w.ctx, "webhook_subscribe", { url: URL_A })).subscription.id;
    await notify(w.ctx, w.id.actorId, "mention", "before");
    const before = take();
    await ok(w.ctx, "webhook_subscribe", { action: "pause", subscription_id: id });
    await notify(w.ctx, w.id.actorId, "mention", "during");
    expect(take()).toEqual([]);
    // The message queued before the pause finds it paused: nothing is sent, the delivery waits.
    await deliver(before, w.clock);
    expect(rx.received).toEqual([]);
    await ok(w.ctx, "webhook_subscribe", { action: "resume", subscription_id: id });
    await settle(w.ctx);
    await deliver(take(), w.clock);
    expect(
      bodies(rx)
        .map((b) => b.summary)
        .sort(),
    ).toEqual(["before", "during"]);
    // Deleted: the log goes with it, and a late message finds nothing to send.
    await notify(w.ctx, w.id.actorId, "mention", "after");
    const late = take();
    await ok(w.ctx, "webhook_subscribe", { action: "delete", subscription_id: id });
    await deliver(late, w.clock);
    expect(rx.received).toHaveLength(2);
    expect(await count(`SELECT COUNT(*) AS n FROM outbound_hook_deliveries WHERE tenant_id = ?`, w.id.tenantId)).toBe(0);
  });

  it("is the Worker's consumer of the outbound hooks queue, and drops a malformed message", async () => {
    const w = await world();
    const rx = receiver();
    await ok(w.ctx, "webhook_subscribe", { url: URL_A });
    await notify(w.ctx, w.id.actorId, "mention");
    const batch = createMessageBatch<unknown>(OUTBOUND_HOOKS_QUEUE, [
      { id: "good", timestamp: new Date(), attempts: 1, body: held.splice(0)[0] },
      { id: "bad", timestamp: new Date(), attempts: 1, body: { tenant_id: 7 } },
    ]);
    const ectx = createExecutionContext();
    await worker.queue!(batch, env as unknown as Env, ectx);
    const result = await getQueueResult(batch, ectx);
    expect(result.explicitAcks.sort()).toEqual(["bad", "good"]);
    expect(rx.received).toHaveLength(1);
  });
});
