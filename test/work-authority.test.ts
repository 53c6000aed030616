/**
 * Authority within a tenant: operator keys; who may heartbeat and end a run; leased tasks
 * (lease_held, operator force with a reason, fencing tokens, racing writers); review verdicts
 * and the done gate; bounded lists inside single-object reads; and tenant isolation of all of it.
 * Through the registry against real local D1 and Durable Objects, and over HTTP where the key's
 * role has to reach the tool Ctx.
 *
 * Time: the clock sits at T0 (2030), so leases never run out in real time and no Durable Object
 * alarm fires under a test; expiry is reached by moving the test clock.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { identityForKey } from "../src/auth/identity";
import { createDb } from "../src/db/client";
import type { Ctx } from "../src/mcp/context";
import { call, connectClient, count, MINUTE, newWorld, ok, refusedWithoutWrites, type Structured, type World } from "./helpers";
import { inSession } from "./run-helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const SECOND = 1000;
const HOUR = 60 * MINUTE;
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

const world = (name: string, actor = "alice"): Promise<World> => newWorld(`wauth-${name}`, { start: T0, actor });

/** Everything these tools write for one tenant, so a refused call can be shown to write nothing. */
async function tenantState(tenantId: string) {
  const text = (sql: string) => env.DB.prepare(sql).bind(tenantId).first<{ s: string | null }>().then((r) => r?.s ?? "");
  return {
    tasks: await text(
      `SELECT group_concat(id || ':' || title || ':' || status || ':' || ifnull(assignee_actor_id, '-') || ':' || ifnull(lease_expires_at, '-') || ':' ||
         lease_token || ':' || updated_at, '|') AS s FROM (SELECT * FROM tasks WHERE tenant_id = ? ORDER BY id)`,
    ),
    runs: await text(`SELECT group_concat(id || ':' || status || ':' || last_heartbeat_at || ':' || counts, '|') AS s FROM (SELECT * FROM runs WHERE tenant_id = ? ORDER BY id)`),
    handoffs: await text(`SELECT group_concat(id || ':' || status || ':' || ifnull(verdict, '-'), '|') AS s FROM (SELECT * FROM handoffs WHERE tenant_id = ? ORDER BY id)`),
    activity: await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", tenantId),
    notifications: await count("SELECT COUNT(*) AS n FROM notifications WHERE tenant_id = ?", tenantId),
  };
}

const rejects = (ctx: Ctx, tool: string, args: unknown, code: string): Promise<Structured> =>
  refusedWithoutWrites(ctx, tool, args, code, () => tenantState(ctx.tenantId));

async function activityRows(tenantId: string, where = "1 = 1", ...params: unknown[]): Promise<Structured[]> {
  const rows = await env.DB.prepare(`SELECT * FROM activity WHERE tenant_id = ? AND ${where} ORDER BY seq`).bind(tenantId, ...params).all<Structured>();
  return rows.results.map((r) => ({ ...r, metadata: JSON.parse(r.metadata as string) as Structured }));
}

async function notificationsOf(tenantId: string, actorId: string): Promise<Structured[]> {
  return (await env.DB.prepare("SELECT * FROM notifications WHERE tenant_id = ? AND actor_id = ? ORDER BY seq").bind(tenantId, actorId).all<Structured>()).results;
}

async function taskRow(id: string): Promise<Structured> {
  return (await env.DB.prepare("SELECT * FROM tasks WHERE id = ?").bind(id).first<Structured>())!;
}

// ---------------------------------------------------------------------------------------------

describe("operator keys", () => {
  it("a key's role reaches the identity: agent by default, operator when made with --operator", async () => {
    const w = await world("keys");
    const op = await w.other("ops", { operator: true });
    const db = createDb(env.DB);
    expect(await identityForKey(db, w.id.key)).toMatchObject({ actorId: w.id.actorId, operator: false });
    expect(await identityForKey(db, op.id.key)).toMatchObject({ actorId: op.id.actorId, operator: true });
    const roles = await env.DB.prepare("SELECT role FROM api_keys WHERE tenant_id = ? ORDER BY role").bind(w.id.tenantId).all<{ role: string }>();
    expect(roles.results.map((r) => r.role)).toEqual(["agent", "operator"]);
    // The column refuses any other role.
    await expect(env.DB.prepare("UPDATE api_keys SET role = 'admin' WHERE actor_id = ?").bind(w.id.actorId).run()).rejects.toThrow(/CHECK/);
  });
});

// ---------------------------------------------------------------------------------------------

describe("runs: only their actor or an operator key may heartbeat or end them", () => {
  it("refuses another actor's run_heartbeat and run_end with not_run_owner naming the owner; an operator may", async () => {
    const w = await world("run-owner");
    const bob = await w.other("bob");
    const op = await w.other("ops", { operator: true });
    const s = await inSession(w.ctx);
    const child = (await ok(s, "run_fork", { label: "alice's child" })).run as Structured;
    const root = child.parent_run_id as string;

    // Bob sees the run (it is the tenant's), but may not change it.
    expect((await ok(bob.ctx, "run_query", {})).items.map((r: Structured) => r.id)).toContain(child.id);
    for (const ref of [child.run_key, child.id, root]) {
      const beat = await rejects(bob.ctx, "run_heartbeat", { run_key: ref, branch: "hijack" }, "not_run_owner");
      expect(beat.message).toContain("alice");
      expect(beat.message).toContain(w.id.actorId);
      expect(beat.hint).toMatch(/operator/);
      expect(beat.hint).toMatch(/run_fork/);
      const end = await rejects(bob.ctx, "run_end", { run_key: ref, status: "cancelled" }, "not_run_owner");
      expect(end.message).toContain("alice");
    }
    // Bob's own session run is his to end.
    const bobSession = await inSession(bob.ctx);
    await ok(bobSession, "project_create", { title: "Bob's", key: "BOB" });
    expect((await ok(bobSession, "run_end", { status: "succeeded" })).run.actor_id).toBe(bob.id.actorId);

    // The operator may heartbeat and end alice's run; the end records whose run it was.
    w.clock.advance(MINUTE);
    const beat = await ok(op.ctx, "run_heartbeat", { run_key: child.run_key, branch: "rescued" });
    expect(beat.run).toMatchObject({ id: child.id, actor_id: w.id.actorId, branch: "rescued", last_heartbeat_at: at(MINUTE) });
    const ended = await ok(op.ctx, "run_end", { run_key: child.run_key, status: "cancelled" });
    expect(ended.run).toMatchObject({ id: child.id, status: "cancelled", actor_id: w.id.actorId });
    const row = (await activityRows(w.id.tenantId, "verb = 'run.cancelled' AND object_id = ?", child.id))[0]!;
    expect(row).toMatchObject({ actor_id: op.id.actorId });
    expect(row.metadata).toMatchObject({ run_owner_actor_id: w.id.actorId, operator_override: true });
    // Alice's own changes carry no override marker.
    const mine = await ok(s, "run_fork", { label: "another" });
    await ok(s, "run_end", { run_key: mine.run.run_key, status: "succeeded" });
    expect((await activityRows(w.id.tenantId, "verb = 'run.succeeded' AND object_id = ?", mine.run.id))[0]!.metadata).toEqual({});
  });

  it("an ended run is run_ended for everyone, and another tenant's operator finds nothing", async () => {
    const w = await world("run-ended");
    const bob = await w.other("bob");
    const s = await inSession(w.ctx);
    const child = (await ok(s, "run_fork", { label: "c" })).run as Structured;
    await ok(s, "run_end", { run_key: child.run_key, status: "failed" });
    await rejects(bob.ctx, "run_heartbeat", { run_key: child.run_key }, "run_ended");

    const other = await newWorld("wauth-run-iso", { start: T0, actor: "mallory" });
    const theirOp = await other.other("root", { operator: true });
    const live = (await ok(s, "run_fork", { label: "live" })).run as Structured;
    for (const ref of [live.run_key, live.id]) {
      await refusedWithoutWrites(theirOp.ctx, "run_heartbeat", { run_key: ref }, "not_found", () => tenantState(w.id.tenantId));
      await refusedWithoutWrites(theirOp.ctx, "run_end", { run_key: ref, status: "cancelled" }, "not_found", () => tenantState(w.id.tenantId));
    }
  });
});
