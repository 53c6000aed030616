/**
 * overseer_message: an operator interrupts an agent; the message goes first in the agent's inbox
 * (notification_query, whoami) until read, and notices delivered through deliverNotices land once
 * per dedupe key and wake the registered listeners.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deliverNotices, onNoticesDelivered } from "../../../src/work/collab/inbox";
import { fails, makeCtx, ok, seedIdentity, TestClock } from "../../support/helpers";

let n = 0;
async function team() {
  const tenant = `overseer-${++n}-${crypto.randomUUID().slice(0, 6)}`;
  const clock = new TestClock();
  const boss = makeCtx(await seedIdentity(tenant, "pat", { operator: true }), clock);
  const agent = makeCtx(await seedIdentity(tenant, "agent-7"), clock);
  const peer = makeCtx(await seedIdentity(tenant, "agent-8"), clock);
  return { tenant, clock, boss, agent, peer };
}

type Item = { kind: string; summary: string; id: string; from_actor_id: string };
const inbox = async (ctx: ReturnType<typeof makeCtx>, args: Record<string, unknown> = {}) =>
  (await ok(ctx, "notification_query", args)) as { items: Item[]; unread_count: number; next_cursor?: string };

describe("overseer_message", () => {
  it("puts the message before newer notices until it is read, in notification_query and whoami", async () => {
    const { clock, boss, agent, peer } = await team();
    const sent = await ok(boss, "overseer_message", { to: ["agent-7"], message: "Stop the migration work; the schema is frozen until Monday." });
    expect(sent.delivered).toEqual([agent.actorId]);
    // Newer notices arrive after it: mentions from a peer.
    const project = (await ok(peer, "project_create", { title: "API", key: "API" })).project as { id: string };
    for (let i = 0; i < 3; i++) {
      clock.advance(60_000);
      await ok(peer, "comment_add", { object_type: "project", object_id: project.id, body: `@agent-7 look ${i}`, mentions: ["agent-7"] });
    }
    const first = await inbox(agent, { limit: 2 });
    expect(first.items[0]).toMatchObject({ kind: "overseer", summary: "Stop the migration work; the schema is frozen until Monday.", from_actor_id: boss.actorId });
    expect(first.items[1]!.summary).toBe("@agent-7 look 2");
    // The cursor carries the pinned order: the next page goes on with older mentions, no repeats.
    const second = await inbox(agent, { limit: 5, cursor: first.next_cursor });
    expect(second.items.map((x) => x.summary)).toEqual(["@agent-7 look 1", "@agent-7 look 0"]);
    const whoami = (await ok(agent, "whoami", {})) as { notifications: { items: Item[] } };
    expect(whoami.notifications.items[0]!.kind).toBe("overseer");

    // Read, it takes its place in time like any other notice.
    await ok(agent, "notification_mark_read", { ids: [first.items[0]!.id] });
    expect((await inbox(agent)).items.map((x) => x.kind)).toEqual(["mention", "mention", "mention", "overseer"]);
    // It is logged, and the peer was told nothing.
    const logged = (await ok(boss, "activity_query", { verb: "overseer.message" })).items as { object_id: string; severity: string }[];
    expect(logged).toEqual([expect.objectContaining({ object_id: agent.actorId, severity: "warn" })]);
    expect((await inbox(peer)).items.filter((x) => x.kind === "overseer")).toEqual([]);
  });

  it("tells each named agent once, and refuses a key that is not an operator's without writing", async () => {
    const { boss, agent, peer } = await team();
    const sent = await ok(boss, "overseer_message", { to: ["agent-7", agent.actorId, "agent-8"], message: "Pause." });
    expect([...(sent.delivered as string[])].sort()).toEqual([agent.actorId, peer.actorId].sort());
    expect((await inbox(agent)).items.filter((x) => x.kind === "overseer")).toHaveLength(1);

    const e = await fails(peer, "overseer_message", { to: ["agent-7"], message: "I am not your boss." });
    expect(e.code).toBe("operator_required");
    expect(e.hint).toMatch(/comment_add/);
    expect((await inbox(agent)).items.filter((x) => x.kind === "overseer")).toHaveLength(1);
  });

  it("refuses an unknown agent (or another tenant's) before telling anyone, and bad input", async () => {
    const { boss, agent } = await team();
    const other = await team();
    expect((await fails(boss, "overseer_message", { to: ["agent-7", other.agent.actorId], message: "Hi" })).code).toBe("not_found");
    expect((await fails(boss, "overseer_message", { to: ["agent-7", "nobody"], message: "Hi" })).code).toBe("not_found");
    expect((await inbox(agent)).items).toEqual([]);
    expect((await inbox(other.agent)).items).toEqual([]);
    expect((await fails(boss, "overseer_message", { to: [], message: "Hi" })).code).toBe("invalid_input");
    expect((await fails(boss, "overseer_message", { to: ["agent-7"], message: "x".repeat(501) })).code).toBe("invalid_input");
    expect((await fails(boss, "overseer_message", { to: ["agent-7"], message: "   " })).code).toBe("invalid_input");
  });
});

describe("deliverNotices", () => {
  it("lands a notice once per recipient and dedupe key, and tells listeners only of what landed", async () => {
    const { tenant: _t, agent, peer, clock } = await team();
    const heard: string[][] = [];
    onNoticesDelivered(async (ctx, recipients) => {
      if (ctx.tenantId === agent.tenantId) heard.push([...recipients].sort());
    });
    const ctx = { d1: env.DB, tenantId: agent.tenantId, clock };
    const notice = (actorId: string, key?: string) => ({ actorId, kind: "check.failed", objectType: "repository", objectId: "r1", summary: "CI failed", fromActorId: "", dedupeKey: key });
    expect(await deliverNotices(ctx, [notice(agent.actorId, "check:1"), notice(peer.actorId, "check:1")])).toBe(2);
    expect(await deliverNotices(ctx, [notice(agent.actorId, "check:1"), notice(peer.actorId, "check:2")])).toBe(1);
    expect(await deliverNotices(ctx, [notice(agent.actorId), notice(agent.actorId)])).toBe(2);
    expect(heard).toEqual([[agent.actorId, peer.actorId].sort(), [peer.actorId], [agent.actorId]]);
    expect((await inbox(agent)).items).toHaveLength(3);
    expect((await inbox(peer)).items).toHaveLength(2);
    // A summary is cut to its bound, never refused.
    expect(await deliverNotices(ctx, [{ ...notice(peer.actorId), summary: "y".repeat(2000) }])).toBe(1);
    expect((await inbox(peer)).items[0]!.summary).toHaveLength(500);
  });
});
