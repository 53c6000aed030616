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
import { identityForKey } from "../../../src/auth/identity";
import { createDb } from "../../../src/db/client";
import type { Ctx } from "../../../src/core/context";
import { call, connectClient, count, interleaved, MINUTE, newWorld, ok, refusedWithoutWrites, type Structured, type World } from "../../support/helpers";
import { inSession } from "../../support/run-helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const SECOND = 1000;
const HOUR = 60 * MINUTE;
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

const world = (name: string, actor = "alice"): Promise<World> => newWorld(`wauth-${name}`, { start: T0, actor });

/** Everything these tools write for one tenant, so a refused call can be shown to write nothing. */
async function tenantState(tenantId: string) {
  const text = (sql: string) =>
    env.DB.prepare(sql)
      .bind(tenantId)
      .first<{ s: string | null }>()
      .then((r) => r?.s ?? "");
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

const rejects = (ctx: Ctx, tool: string, args: unknown, code: string): Promise<Structured> => refusedWithoutWrites(ctx, tool, args, code, () => tenantState(ctx.tenantId));

async function activityRows(tenantId: string, where = "1 = 1", ...params: unknown[]): Promise<Structured[]> {
  const rows = await env.DB.prepare(`SELECT * FROM activity WHERE tenant_id = ? AND ${where} ORDER BY seq`)
    .bind(tenantId, ...params)
    .all<Structured>();
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

// ---------------------------------------------------------------------------------------------

/** A project and a task in it, claimed by `holder` for `leaseSeconds`; returns the task and the claim. */
async function leasedTask(w: World, holder: Ctx, key: string, leaseSeconds = 3600): Promise<{ task: Structured; claim: Structured }> {
  await ok(w.ctx, "project_create", { title: `Project ${key}`, key });
  const task = (await ok(w.ctx, "task_create", { project_id: key, title: "the task" })).task as Structured;
  const claim = await ok(holder, "task_claim", { task_id: task.id, lease_seconds: leaseSeconds });
  expect(claim.claimed).toBe(true);
  return { task, claim };
}

/** `ctx` on its own clock, for an actor that acts at another moment than the rest of the world. */
const at2 = (ctx: Ctx, iso: string): Ctx => ({ ...ctx, clock: { now: () => new Date(iso) } });

describe("leases guard writes: lease_held", () => {
  it("refuses another actor's task_update, task_assign and task_release while the lease is live, naming the holder and the expiry", async () => {
    const w = await world("held");
    const bob = await w.other("bob");
    const { task } = await leasedTask(w, w.ctx, "HLD");
    const expiry = at(HOUR);

    for (const [tool, args] of [
      ["task_update", { task_id: task.id, patch: { title: "bob's title" } }],
      ["task_update", { task_id: "HLD-1", patch: { status: "todo" } }],
      ["task_assign", { task_id: task.id, actor_id: "me" }],
      ["task_assign", { task_id: task.id, actor_id: null }],
      ["task_release", { task_id: task.id }],
    ] as const) {
      const e = await rejects(bob.ctx, tool, args, "lease_held");
      expect(e.message).toContain(`HLD-1 is leased to alice (${w.id.actorId}) until ${expiry}`);
      expect(e.hint).toContain(expiry);
      expect(e.hint).toContain("alice");
      expect(e.hint).toMatch(/force/);
    }

    // The holder's own plain writes (no token) keep working.
    w.clock.advance(MINUTE);
    expect((await ok(w.ctx, "task_update", { task_id: task.id, patch: { title: "alice's title" } })).task).toMatchObject({ title: "alice's title", status: "in_progress" });

    // Once the lease has run out (no reaper needed), anyone may write again, as before leases guarded writes.
    w.clock.set(at(HOUR));
    expect((await ok(bob.ctx, "task_update", { task_id: task.id, patch: { title: "bob's turn" } })).task.title).toBe("bob's turn");
    expect((await ok(bob.ctx, "task_assign", { task_id: task.id, actor_id: "me" })).task).toMatchObject({ assignee_actor_id: bob.id.actorId, lease_expires_at: null });
  });

  it("a write checked before a claim lands but written after it is refused: the lease rule is inside the UPDATE", async () => {
    const w = await world("held-race");
    const bob = await w.other("bob");
    const { task } = await leasedTask(w, w.ctx, "HR", 60);
    // At 61s alice's lease has run out (the task is still in_progress, nobody reaped it), so bob's
    // checks let his write through; alice re-claims before bob's write reaches D1. The status is
    // in_progress throughout: only the lease rule inside the UPDATE can stop bob.
    w.clock.set(at(61 * SECOND));
    const racing = interleaved(bob.ctx, () => ok(w.ctx, "task_claim", { task_id: task.id }));
    const e = await call(racing, "task_update", { task_id: task.id, patch: { title: "bob was here" } });
    expect(e.error).toMatchObject({ code: "lease_held" });
    expect(e.error.message).toContain(`until ${at(61 * SECOND + HOUR)}`);
    expect(await taskRow(task.id as string)).toMatchObject({ title: "the task", assignee_actor_id: w.id.actorId, status: "in_progress", lease_token: 2 });
    expect(await activityRows(w.id.tenantId, "verb = 'task.updated'")).toEqual([]);
  });
});

describe("leases: operator force", () => {
  it("an operator forces task_update, task_assign and task_release with a reason; the timeline keeps who was overridden and the holder is notified", async () => {
    const w = await world("force");
    const op = await w.other("ops", { operator: true });
    const { task } = await leasedTask(w, w.ctx, "FRC");
    const expiry = at(HOUR);

    // Even an operator needs force: a plain write is refused like anyone's.
    await rejects(op.ctx, "task_update", { task_id: task.id, patch: { title: "ops" } }, "lease_held");

    w.clock.advance(MINUTE);
    const updated = await ok(op.ctx, "task_update", { task_id: task.id, patch: { priority: 0 }, force: true, reason: "incident INC-7: bump priority" });
    // A forced field change leaves the lease with its holder.
    expect(updated.task).toMatchObject({ priority: 0, assignee_actor_id: w.id.actorId, lease_expires_at: expiry });
    const row = (await activityRows(w.id.tenantId, "verb = 'task.updated' AND actor_id = ?", op.id.actorId))[0]!;
    expect(row).toMatchObject({ severity: "warn", object_id: task.id });
    expect(row.summary).toContain("forced over alice's lease: incident INC-7: bump priority");
    expect(row.metadata).toMatchObject({ forced: true, reason: "incident INC-7: bump priority", overridden_actor_id: w.id.actorId, overridden_lease_expires_at: expiry, changed: ["priority"] });
    const notes = await notificationsOf(w.id.tenantId, w.id.actorId);
    expect(notes.at(-1)).toMatchObject({ kind: "lease_overridden", object_type: "task", object_id: task.id, from_actor_id: op.id.actorId });
    expect(notes.at(-1)!.summary).toContain("incident INC-7");

    // Reassigning by force hands the task over and ends alice's lease.
    const bob = await w.other("bob");
    const assigned = await ok(op.ctx, "task_assign", { task_id: task.id, actor_id: "bob", force: true, reason: "alice is offline" });
    expect(assigned.task).toMatchObject({ assignee_actor_id: bob.id.actorId, lease_expires_at: null, claimed_at: null, status: "in_progress" });
    expect((await activityRows(w.id.tenantId, "verb = 'task.assigned'")).at(-1)!.metadata).toMatchObject({ forced: true, reason: "alice is offline", overridden_actor_id: w.id.actorId });

    // A forced release of someone else's claim.
    const claimed = await ok(bob.ctx, "task_claim", { task_id: task.id });
    expect(claimed.claimed).toBe(true);
    await rejects(w.ctx, "task_release", { task_id: task.id }, "lease_held");
    const released = await ok(op.ctx, "task_release", { task_id: task.id, note: "back to the pool", force: true, reason: "bob's agent is stuck" });
    expect(released.task).toMatchObject({ status: "todo", assignee_actor_id: null, lease_expires_at: null });
    expect((await activityRows(w.id.tenantId, "verb = 'task.released'")).at(-1)!.metadata).toMatchObject({
      note: "back to the pool",
      forced: true,
      reason: "bob's agent is stuck",
      overridden_actor_id: bob.id.actorId,
    });
    expect((await notificationsOf(w.id.tenantId, bob.id.actorId)).at(-1)).toMatchObject({ kind: "lease_overridden", object_id: task.id });
  });

  it("refuses force from a non-operator key (operator_required), force without a reason and a reason without force", async () => {
    const w = await world("force-bad");
    const bob = await w.other("bob");
    const op = await w.other("ops", { operator: true });
    const { task } = await leasedTask(w, w.ctx, "FB");
    for (const [tool, args] of [
      ["task_update", { task_id: task.id, patch: { title: "x" }, force: true, reason: "I want it" }],
      ["task_assign", { task_id: task.id, actor_id: "me", force: true, reason: "I want it" }],
      ["task_release", { task_id: task.id, force: true, reason: "I want it" }],
    ] as const) {
      const e = await rejects(bob.ctx, tool, args, "operator_required");
      expect(e.hint).toMatch(/--operator/);
    }
    // Even the holder may not use force without an operator key.
    await rejects(w.ctx, "task_update", { task_id: task.id, patch: { title: "x" }, force: true, reason: "mine anyway" }, "operator_required");
    await rejects(op.ctx, "task_update", { task_id: task.id, patch: { title: "x" }, force: true }, "invalid_input");
    await rejects(op.ctx, "task_update", { task_id: task.id, patch: { title: "x" }, reason: "no force" }, "invalid_input");
    await rejects(op.ctx, "task_update", { task_id: task.id, patch: { title: "x" }, force: true, reason: "r".repeat(501) }, "invalid_input");
    await rejects(op.ctx, "task_update", { task_id: task.id, patch: { title: "x" }, force: true, reason: "   " }, "invalid_input");
  });

  it("a forced write is a compare-and-swap on the lease it read: if the holder changed meanwhile it is refused, not recorded against the wrong holder", async () => {
    const w = await world("force-race");
    const bob = await w.other("bob");
    const op = await w.other("ops", { operator: true });
    const { task } = await leasedTask(w, w.ctx, "FR", 60);
    const later = at(61 * SECOND);
    // The operator reads alice's lease; before its write lands, alice's lease runs out and bob claims.
    const racing = interleaved(at2(op.ctx, at(59 * SECOND)), () => ok(at2(bob.ctx, later), "task_claim", { task_id: task.id }));
    const e = await call(racing, "task_update", { task_id: task.id, patch: { title: "forced" }, force: true, reason: "cleanup" });
    expect(e.error).toMatchObject({ code: "conflict", retryable: true });
    expect(await taskRow(task.id as string)).toMatchObject({ title: "the task", assignee_actor_id: bob.id.actorId });
    expect(await notificationsOf(w.id.tenantId, w.id.actorId)).toEqual([]);
  });
});

describe("leases: fencing tokens", () => {
  it("task_claim returns the lease's token; an extension keeps it, every new claim raises it", async () => {
    const w = await world("fence-claim");
    const bob = await w.other("bob");
    const { task, claim } = await leasedTask(w, w.ctx, "FC", 60);
    expect(claim).toMatchObject({ fencing_token: 1, extended: false });
    w.clock.advance(30 * SECOND);
    expect(await ok(w.ctx, "task_claim", { task_id: task.id, lease_seconds: 60 })).toMatchObject({ fencing_token: 1, extended: true });
    // Alice's lease runs out; her own re-claim is a new lease with a new token.
    w.clock.advance(61 * SECOND);
    expect(await ok(w.ctx, "task_claim", { task_id: task.id, lease_seconds: 60 })).toMatchObject({ fencing_token: 2, extended: false });
    w.clock.advance(61 * SECOND);
    expect(await ok(bob.ctx, "task_claim", { project_id: "FC" })).toMatchObject({ claimed: true, fencing_token: 3 });
    expect(await ok(w.ctx, "task_claim", { task_id: task.id })).toMatchObject({ claimed: false, reason: "held", fencing_token: null });
    expect((await taskRow(task.id as string)).lease_token).toBe(3);
    // A task's token is its own: another task starts at 1.
    const other = (await ok(w.ctx, "task_create", { project_id: "FC", title: "other" })).task as Structured;
    expect((await ok(w.ctx, "task_claim", { task_id: other.id })).fencing_token).toBe(1);
  });

  it("accepts the current token and a holder's write without one; refuses a token from an expired or superseded lease with stale_fencing_token", async () => {
    const w = await world("fence");
    const bob = await w.other("bob");
    const { task, claim } = await leasedTask(w, w.ctx, "FT", 60);
    const token = claim.fencing_token as number;

    expect((await ok(w.ctx, "task_update", { task_id: task.id, patch: { title: "with token" }, fencing_token: token })).task.title).toBe("with token");
    expect((await ok(w.ctx, "task_update", { task_id: task.id, patch: { body: "without token" } })).task.body).toBe("without token");
    // A token that is not this lease's (a guess, or bob's) is refused even while alice's lease is live.
    await rejects(w.ctx, "task_update", { task_id: task.id, patch: { title: "guess" }, fencing_token: token + 1 }, "stale_fencing_token");
    await rejects(bob.ctx, "task_update", { task_id: task.id, patch: { title: "bob" }, fencing_token: token }, "stale_fencing_token");

    // Alice's lease runs out, nobody has claimed yet: her token is already stale.
    w.clock.advance(61 * SECOND);
    const expired = await rejects(w.ctx, "task_update", { task_id: task.id, patch: { title: "late" }, fencing_token: token }, "stale_fencing_token");
    expect(expired.message).toContain(`your lease on FT-1 ran out at ${at(60 * SECOND)}`);
    expect(expired.hint).toMatch(/task_claim/);

    // Bob claims: alice's token now belongs to a superseded lease, on every guarded tool.
    const bobClaim = await ok(bob.ctx, "task_claim", { task_id: task.id });
    expect(bobClaim.fencing_token).toBe(token + 1);
    const superseded = await rejects(w.ctx, "task_update", { task_id: task.id, patch: { title: "stale agent wakes up" }, fencing_token: token }, "stale_fencing_token");
    expect(superseded.message).toContain(`bob (${bob.id.actorId}) holds it until`);
    await rejects(w.ctx, "task_assign", { task_id: task.id, actor_id: "me", fencing_token: token }, "stale_fencing_token");
    await rejects(w.ctx, "task_release", { task_id: task.id, fencing_token: token }, "stale_fencing_token");

    // Bob's current token works on each of them.
    w.clock.advance(SECOND);
    expect((await ok(bob.ctx, "task_update", { task_id: task.id, patch: { title: "bob's" }, fencing_token: bobClaim.fencing_token })).task.title).toBe("bob's");
    expect((await ok(bob.ctx, "task_assign", { task_id: task.id, actor_id: "me", fencing_token: bobClaim.fencing_token })).task.assignee_actor_id).toBe(bob.id.actorId);
    expect((await ok(bob.ctx, "task_release", { task_id: task.id, fencing_token: bobClaim.fencing_token })).task).toMatchObject({ status: "todo", assignee_actor_id: null });
    // Released: the token of that lease is stale too.
    await rejects(bob.ctx, "task_update", { task_id: task.id, patch: { title: "after release" }, fencing_token: bobClaim.fencing_token }, "stale_fencing_token");
    await rejects(bob.ctx, "task_update", { task_id: task.id, patch: { title: "x" }, fencing_token: 0 }, "invalid_input");
    await rejects(bob.ctx, "task_update", { task_id: task.id, patch: { title: "x" }, fencing_token: "1" }, "invalid_input");
  });

  it("a stale token checked just before a new claim lands is still refused: the token is compared inside the UPDATE", async () => {
    const w = await world("fence-cas");
    const bob = await w.other("bob");
    const { task, claim } = await leasedTask(w, w.ctx, "FCAS", 60);
    // Alice checks at 59s (her lease is live); bob's claim at 61s lands before her write.
    const racing = interleaved(at2(w.ctx, at(59 * SECOND)), () => ok(at2(bob.ctx, at(61 * SECOND)), "task_claim", { task_id: task.id }));
    const e = await call(racing, "task_update", { task_id: task.id, patch: { title: "clobber" }, fencing_token: claim.fencing_token });
    expect(e.error).toMatchObject({ code: "stale_fencing_token" });
    expect(e.error.message).toContain("bob");
    expect(await taskRow(task.id as string)).toMatchObject({ title: "the task", assignee_actor_id: bob.id.actorId, lease_token: 2 });
  });

  it("racing writers (Promise.all): a stale token never lands beside the current one", async () => {
    const w = await world("fence-race");
    const bob = await w.other("bob");
    const { task, claim } = await leasedTask(w, w.ctx, "FRC", 60);
    const stale = claim.fencing_token as number;
    w.clock.advance(61 * SECOND);

    // Bob's claim races alice's writes under her expired lease: bob always wins, alice never writes.
    const [bobClaim, ...alice] = await Promise.all([
      call(bob.ctx, "task_claim", { task_id: task.id }),
      call(w.ctx, "task_update", { task_id: task.id, patch: { title: "alice 1" }, fencing_token: stale }),
      call(w.ctx, "task_assign", { task_id: task.id, actor_id: "me", fencing_token: stale }),
      call(w.ctx, "task_update", { task_id: task.id, patch: { status: "in_review" }, fencing_token: stale }),
    ]);
    expect(bobClaim).toMatchObject({ ok: true, claimed: true, fencing_token: stale + 1 });
    for (const r of alice) expect(r.error).toMatchObject({ code: "stale_fencing_token" });
    const current = bobClaim.fencing_token as number;

    // Both tokens at once, many times over: only the current one's writes land.
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? call(w.ctx, "task_update", { task_id: task.id, patch: { title: `stale ${i}` }, fencing_token: stale })
          : call(bob.ctx, "task_update", { task_id: task.id, patch: { title: `current ${i}` }, fencing_token: current }),
      ),
    );
    results.forEach((r, i) => {
      if (i % 2 === 0) expect(r.error).toMatchObject({ code: "stale_fencing_token" });
      else expect(r.ok).toBe(true);
    });
    expect((await taskRow(task.id as string)).title).toMatch(/^current /);
    expect(await activityRows(w.id.tenantId, "actor_id = ? AND verb LIKE 'task.%' AND verb <> 'task.created' AND verb <> 'task.claimed'", w.id.actorId)).toEqual([]);

    // A live lease taken away under a writer: either alice's write landed before the forced release, or it was refused.
    const op = await w.other("ops", { operator: true });
    for (let round = 0; round < 4; round++) {
      const mine = await ok(w.ctx, "task_claim", { task_id: task.id });
      if (!mine.claimed) await ok(op.ctx, "task_release", { task_id: task.id, force: true, reason: "reset" });
      const lease = mine.claimed ? mine : await ok(w.ctx, "task_claim", { task_id: task.id });
      const [write] = await Promise.all([
        call(w.ctx, "task_update", { task_id: task.id, patch: { title: `round ${round}` }, fencing_token: lease.fencing_token }),
        ok(op.ctx, "task_release", { task_id: task.id, force: true, reason: `round ${round}` }),
      ]);
      const rows = await activityRows(w.id.tenantId, "object_id = ? AND (verb = 'task.updated' OR verb = 'task.released')", task.id);
      const released = rows.filter((r) => r.verb === "task.released").at(-1)!;
      if (write.ok) {
        const updated = rows.filter((r) => r.verb === "task.updated" && r.actor_id === w.id.actorId).at(-1)!;
        expect(updated.seq as number).toBeLessThan(released.seq as number);
      } else {
        expect(write.error.code).toBe("stale_fencing_token");
      }
    }
  });
});

describe("leases over HTTP: the key's role reaches the tool", () => {
  it("an operator key may force over MCP; an agent key gets operator_required", async () => {
    const w = await world("http");
    const op = await w.other("ops", { operator: true });
    const bob = await w.other("bob");
    await ok(w.ctx, "project_create", { title: "Web", key: "WEB" });
    const task = (await ok(w.ctx, "task_create", { project_id: "WEB", title: "held" })).task as Structured;
    // A lease on the real clock, as HTTP calls run on it.
    await ok({ ...w.ctx, clock: { now: () => new Date() } }, "task_claim", { task_id: task.id });
    const args = { task_id: task.id, patch: { title: "over http" }, force: true, reason: "http override" };

    const agent = await connectClient(bob.id.key);
    const refused = await agent.client.callTool({ name: "task_update", arguments: args });
    expect(refused.structuredContent).toMatchObject({ ok: false, error: { code: "operator_required" } });
    await agent.client.close();

    const operator = await connectClient(op.id.key);
    const forced = await operator.client.callTool({ name: "task_update", arguments: args });
    expect(forced.structuredContent).toMatchObject({ ok: true, task: { title: "over http", assignee_actor_id: w.id.actorId } });
    await operator.client.close();
  });
});

describe("leases: tenant isolation", () => {
  it("another tenant's operator, force and tokens find nothing: not_found, and A's task is untouched", async () => {
    const a = await world("iso-a");
    const { task, claim } = await leasedTask(a, a.ctx, "ISO");
    const b = await newWorld("wauth-iso-b", { start: T0, actor: "mallory" });
    const bOp = await b.other("root", { operator: true });
    const aState = () => tenantState(a.id.tenantId);
    for (const [tool, args] of [
      ["task_update", { task_id: task.id, patch: { title: "pwned" }, force: true, reason: "mine now" }],
      ["task_update", { task_id: task.id, patch: { title: "pwned" }, fencing_token: claim.fencing_token }],
      ["task_assign", { task_id: task.id, actor_id: "me", force: true, reason: "mine now" }],
      ["task_release", { task_id: task.id, force: true, reason: "mine now" }],
      ["task_release", { task_id: "ISO-1", fencing_token: claim.fencing_token }],
    ] as const) {
      const e = await refusedWithoutWrites(bOp.ctx, tool, args, "not_found", aState);
      expect(e.message).not.toContain("alice");
    }
  });
});

// ---------------------------------------------------------------------------------------------

/** Alice's task API-1 with `reviewer`, assigned to alice, moved to in_review by `asker`; returns the review handoff. */
async function inReview(w: World, reviewer: string, asker: Ctx = w.ctx): Promise<{ task: Structured; review: Structured }> {
  await ok(w.ctx, "project_create", { title: "API", key: "API" });
  const task = (await ok(w.ctx, "task_create", { project_id: "API", title: "Cache layer", reviewer_actor_id: reviewer, assignee_actor_id: "me" })).task as Structured;
  await ok(w.ctx, "task_update", { task_id: task.id, patch: { status: "in_progress" } });
  await ok(asker, "task_update", { task_id: task.id, patch: { status: "in_review" } });
  const review = (await ok(asker, "handoff_query", { direction: "any", related_task_id: task.id, type: ["review"], status: ["open"] })).items[0] as Structured;
  return { task, review };
}

describe("review verdicts", () => {
  it("a review needs a verdict; an approval by the reviewer resolves the handoff and unlocks done, and reads show it", async () => {
    const w = await world("verdict-ok");
    const bob = await w.other("bob");
    const { task, review } = await inReview(w, "bob");

    const missing = await rejects(bob.ctx, "handoff_respond", { handoff_id: review.id, response: { text: "LGTM" } }, "verdict_required");
    expect(missing.hint).toMatch(/approved, changes_requested or rejected/);
    await rejects(bob.ctx, "handoff_respond", { handoff_id: review.id, response: { text: "LGTM", verdict: "lgtm" } }, "invalid_input");
    // Before the verdict: done is pending and task_get says why.
    await rejects(w.ctx, "task_update", { task_id: task.id, patch: { status: "done" } }, "review_pending");
    expect((await ok(w.ctx, "task_get", { task_id: task.id })).review).toMatchObject({ handoff_id: review.id, status: "open", verdict: null, approved: false });

    w.clock.advance(MINUTE);
    const answered = await ok(bob.ctx, "handoff_respond", { handoff_id: review.id, response: { text: "LGTM", verdict: "approved" } });
    expect(answered.handoff).toMatchObject({ status: "resolved", resolution: "processed", verdict: "approved", responded_by: bob.id.actorId, responded_at: at(MINUTE) });
    expect(answered.handoff.response).toEqual({ text: "LGTM", verdict: "approved" });
    expect((await ok(w.ctx, "handoff_query", { direction: "from_me", related_task_id: task.id })).items[0]).toMatchObject({ id: review.id, verdict: "approved", status: "resolved" });
    expect((await ok(w.ctx, "task_get", { task_id: task.id })).review).toEqual({
      handoff_id: review.id,
      status: "resolved",
      verdict: "approved",
      requested_by: w.id.actorId,
      responded_by: bob.id.actorId,
      responded_at: at(MINUTE),
      approved: true,
      reason: "",
    });
    // Alice (asker and assignee) hears of it once.
    expect((await notificationsOf(w.id.tenantId, w.id.actorId)).map((n) => [n.kind, n.object_id])).toEqual([["review_verdict", task.id]]);
    expect((await ok(w.ctx, "task_update", { task_id: task.id, patch: { status: "done" } })).task.status).toBe("done");
  });

  it("self-approval does not unlock done: not by a reviewer who is the assignee, nor by the one who asked", async () => {
    const w = await world("verdict-self");
    const { task, review } = await inReview(w, "me");
    await ok(w.ctx, "handoff_respond", { handoff_id: review.id, response: { verdict: "approved" } });
    const self = await rejects(w.ctx, "task_update", { task_id: task.id, patch: { status: "done" } }, "review_pending");
    expect(self.message).toMatch(/nobody approves their own work/);
    expect(self.hint).toMatch(/reviewer_actor_id to someone else/);
    expect((await ok(w.ctx, "task_get", { task_id: task.id })).review).toMatchObject({ verdict: "approved", approved: false });

    // Bob reviews, but bob himself asked for the review (he moved the task to in_review): his approval does not count.
    const w2 = await world("verdict-asker");
    const bob2 = await w2.other("bob");
    const second = await inReview(w2, "bob", bob2.ctx);
    expect(second.review.from_actor_id).toBe(bob2.id.actorId);
    await ok(bob2.ctx, "handoff_respond", { handoff_id: second.review.id, response: { verdict: "approved" } });
    await rejects(w2.ctx, "task_update", { task_id: second.task.id, patch: { status: "done" } }, "review_pending");

    // Asked by alice, approved by bob: counts.
    await ok(w2.ctx, "task_update", { task_id: second.task.id, patch: { status: "in_progress" } });
    await ok(w2.ctx, "task_update", { task_id: second.task.id, patch: { status: "in_review" } });
    const fresh = (await ok(w2.ctx, "handoff_query", { direction: "from_me", related_task_id: second.task.id, status: ["open"] })).items[0] as Structured;
    await ok(bob2.ctx, "handoff_respond", { handoff_id: fresh.id, response: { verdict: "approved" } });
    expect((await ok(w2.ctx, "task_update", { task_id: second.task.id, patch: { status: "done" } })).task.status).toBe("done");
  });

  it("changes_requested resolves the review, sends the task back to in_progress, notifies the assignee and keeps done locked until a fresh approval", async () => {
    const w = await world("verdict-changes");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    // Carol asks for the review of alice's task: alice (assignee) and carol (asker) are both told.
    const { task, review } = await inReview(w, "bob", carol.ctx);
    w.clock.advance(MINUTE);
    const r = await ok(bob.ctx, "handoff_respond", { handoff_id: review.id, response: { text: "needs a TTL", verdict: "changes_requested" } });
    expect(r.handoff).toMatchObject({ status: "resolved", verdict: "changes_requested" });
    const t = (await ok(w.ctx, "task_get", { task_id: task.id })) as Structured;
    expect(t.task).toMatchObject({ status: "in_progress", updated_at: at(MINUTE) });
    expect(t.review).toMatchObject({ verdict: "changes_requested", approved: false, reason: "the verdict is changes_requested" });
    const back = (await activityRows(w.id.tenantId, "object_id = ? AND verb = 'task.in_progress'", task.id)).at(-1)!;
    expect(back).toMatchObject({ actor_id: bob.id.actorId });
    expect(back.metadata).toMatchObject({ from: "in_review", to: "in_progress", verdict: "changes_requested", handoff_id: review.id });
    const toAlice = (await notificationsOf(w.id.tenantId, w.id.actorId)).at(-1)!;
    expect(toAlice).toMatchObject({ kind: "review_verdict", object_type: "task", object_id: task.id, from_actor_id: bob.id.actorId });
    expect(toAlice.summary).toBe("changes_requested on API-1: needs a TTL");
    expect((await notificationsOf(w.id.tenantId, carol.id.actorId)).at(-1)).toMatchObject({ kind: "response", object_id: review.id, summary: `changes_requested: ${review.title}` });
    // The review left bob's inbox (resolved), and done stays locked.
    expect((await ok(bob.ctx, "inbox", {})).items).toEqual([]);
    const locked = await rejects(w.ctx, "task_update", { task_id: task.id, patch: { status: "done" } }, "review_not_approved");
    expect(locked.hint).toMatch(/in_review again/);

    // A fresh round, approved, unlocks it.
    await ok(w.ctx, "task_update", { task_id: task.id, patch: { status: "in_review" } });
    const fresh = (await ok(bob.ctx, "inbox", { kinds: ["review"] })).items[0] as Structured;
    expect(fresh.id).not.toBe(review.id);
    await ok(bob.ctx, "handoff_respond", { handoff_id: fresh.id, response: { verdict: "approved" } });
    expect((await ok(w.ctx, "task_update", { task_id: task.id, patch: { status: "done" } })).task.status).toBe("done");
  });

  it("rejected does not unlock done and also sends the task back to in_progress; a later approval of an older round does not count", async () => {
    const w = await world("verdict-rejected");
    const bob = await w.other("bob");
    const { task, review } = await inReview(w, "bob");
    await ok(bob.ctx, "handoff_respond", { handoff_id: review.id, response: { text: "wrong approach", verdict: "rejected" } });
    expect((await ok(w.ctx, "task_get", { task_id: task.id })).task.status).toBe("in_progress");
    await rejects(w.ctx, "task_update", { task_id: task.id, patch: { status: "done" } }, "review_not_approved");
    // A new round that is still open keeps done locked even if bob had approved an earlier one.
    await ok(w.ctx, "task_update", { task_id: task.id, patch: { status: "in_review" } });
    await rejects(w.ctx, "task_update", { task_id: task.id, patch: { status: "done" } }, "review_pending");
    // A verdict on a task someone already moved on leaves the task's status alone.
    const fresh = (await ok(bob.ctx, "inbox", { kinds: ["review"] })).items[0] as Structured;
    await ok(w.ctx, "task_update", { task_id: task.id, patch: { status: "todo" } });
    await ok(bob.ctx, "handoff_respond", { handoff_id: fresh.id, response: { verdict: "rejected" } });
    expect((await taskRow(task.id as string)).status).toBe("todo");
  });

  it("a verdict on a handoff that is not a review is kept in the response and changes nothing else", async () => {
    const w = await world("verdict-other");
    const bob = await w.other("bob");
    await ok(w.ctx, "project_create", { title: "API", key: "API" });
    const task = (await ok(w.ctx, "task_create", { project_id: "API", title: "t" })).task as Structured;
    await ok(w.ctx, "task_update", { task_id: task.id, patch: { status: "in_review" } });
    const q = (await ok(w.ctx, "handoff_create", { to_actor_ids: ["bob"], kind: "question", title: "ok?", related_task_id: task.id })).handoff as Structured;
    const r = await ok(bob.ctx, "handoff_respond", { handoff_id: q.id, response: { text: "no", verdict: "rejected" } });
    expect(r.handoff).toMatchObject({ status: "responded", verdict: null, response: { text: "no", verdict: "rejected" } });
    expect((await taskRow(task.id as string)).status).toBe("in_review");
  });

  it("another tenant cannot give a verdict on A's review, nor read where it stands", async () => {
    const a = await world("verdict-iso");
    await a.other("bob");
    const { task, review } = await inReview(a, "bob");
    const b = await newWorld("wauth-verdict-iso-b", { start: T0, actor: "bob" });
    const aState = () => tenantState(a.id.tenantId);
    await refusedWithoutWrites(b.ctx, "handoff_respond", { handoff_id: review.id, response: { verdict: "approved" } }, "not_found", aState);
    await refusedWithoutWrites(b.ctx, "task_get", { task_id: task.id }, "not_found", aState);
    await refusedWithoutWrites(a.ctx, "task_update", { task_id: task.id, patch: { status: "done" } }, "review_pending", aState);
  });
});

// ---------------------------------------------------------------------------------------------

describe("bounded lists inside single-object reads", () => {
  it("task_get with 200 comments and 200 activity rows carries 50 of each, the totals, and cursors the list tools continue exactly", async () => {
    const w = await world("bounded-task");
    await ok(w.ctx, "project_create", { title: "Big", key: "BIG" });
    const task = (await ok(w.ctx, "task_create", { project_id: "BIG", title: "busy" })).task as Structured;
    const statements: D1PreparedStatement[] = [];
    for (let i = 0; i < 200; i++) {
      statements.push(
        env.DB.prepare(`INSERT INTO comments (id, tenant_id, object_type, object_id, body, author_actor_id, created_at) VALUES (?, ?, 'task', ?, ?, ?, ?)`).bind(
          crypto.randomUUID(),
          w.id.tenantId,
          task.id,
          `comment ${i}`,
          w.id.actorId,
          at(i * SECOND),
        ),
        env.DB.prepare(`INSERT INTO activity (id, tenant_id, at, actor_id, verb, object_type, object_id, project_id, summary) VALUES (?, ?, ?, ?, 'note.added', 'task', ?, ?, ?)`).bind(
          crypto.randomUUID(),
          w.id.tenantId,
          at(i * SECOND),
          w.id.actorId,
          task.id,
          task.project_id,
          `activity ${i}`,
        ),
      );
    }
    await env.DB.batch(statements);

    const g = await ok(w.ctx, "task_get", { task_id: task.id });
    expect(g.comments).toHaveLength(50);
    expect(g.comments.map((c: Structured) => c.body)).toEqual(Array.from({ length: 50 }, (_, i) => `comment ${i}`));
    expect(g.activity).toHaveLength(50);
    expect(g.activity[0].summary).toBe("activity 199");
    expect(g.lists.comments).toMatchObject({ total: 200, returned: 50, more: { tool: "comment_query", arguments: { object_type: "task", object_id: task.id } } });
    expect(g.lists.activity).toMatchObject({ total: 201, returned: 50, more: { tool: "activity_query", arguments: { object_type: "task", object_id: task.id } } });
    expect(g.lists.comments.more.arguments.cursor).toBe(g.lists.comments.next_cursor);
    expect(g.lists.subtasks).toEqual({ total: 0, returned: 0 });

    // Following the pointer reads the rest, each row exactly once, in the same order.
    const rest = async (info: Structured, key: string): Promise<string[]> => {
      const out: string[] = [];
      let args: Structured | undefined = { ...info.more.arguments, limit: 60 };
      while (args) {
        const page = await ok(w.ctx, info.more.tool as string, args);
        out.push(...page.items.map((r: Structured) => r[key] as string));
        args = page.next_cursor ? { ...args, cursor: page.next_cursor } : undefined;
      }
      return out;
    };
    const comments = [...g.comments.map((c: Structured) => c.body), ...(await rest(g.lists.comments, "body"))];
    expect(comments).toEqual(Array.from({ length: 200 }, (_, i) => `comment ${i}`));
    const activity = [...g.activity.map((a: Structured) => a.summary), ...(await rest(g.lists.activity, "summary"))];
    expect(activity).toHaveLength(201);
    expect(new Set(activity).size).toBe(201);
    expect(activity.slice(0, 200)).toEqual(Array.from({ length: 200 }, (_, i) => `activity ${199 - i}`));
  });

  it("blockers, dependents and subtasks are capped the same way; task_query pages the rest from the cursor", async () => {
    const w = await world("bounded-links");
    await ok(w.ctx, "project_create", { title: "Links", key: "LNK" });
    const hub = (await ok(w.ctx, "task_create", { project_id: "LNK", title: "hub" })).task as Structured;
    const made = await ok(w.ctx, "task_create_many", {
      project_id: "LNK",
      tasks: Array.from({ length: 60 }, (_, i) => ({ title: `child ${i}`, priority: i % 3, parent_task_id: hub.id, depends_on: [hub.id] })),
    });
    const children = made.task_ids as string[];
    await ok(w.ctx, "task_create", { project_id: "LNK", title: "waits on hub", depends_on: [hub.id] });
    const waiter = (await ok(w.ctx, "task_create", { project_id: "LNK", title: "waits on all" })).task as Structured;
    await ok(w.ctx, "task_link", { task_id: waiter.id, add_depends_on: children.slice(0, 50) });
    await ok(w.ctx, "task_link", { task_id: waiter.id, add_depends_on: children.slice(50) });

    const follow = async (first: Structured[], info: Structured): Promise<string[]> => {
      const ids = first.map((t) => t.id as string);
      let args: Structured | undefined = info.more ? { ...info.more.arguments, limit: 7 } : undefined;
      while (args) {
        const page = await ok(w.ctx, "task_query", args);
        ids.push(...page.items.map((t: Structured) => t.id as string));
        args = page.next_cursor ? { ...args, cursor: page.next_cursor } : undefined;
      }
      return ids;
    };
    const byPriority = async (filter: Structured) => (await ok(w.ctx, "task_query", { ...filter, limit: 200 })).items.map((t: Structured) => t.id as string);

    const h = await ok(w.ctx, "task_get", { task_id: hub.id });
    expect(h.subtasks).toHaveLength(50);
    expect(h.lists.subtasks).toMatchObject({ total: 60, returned: 50, more: { tool: "task_query", arguments: { parent_task_id: hub.id, order_by: "priority" } } });
    expect(h.lists.dependents).toMatchObject({ total: 61, returned: 50 });
    const subtasks = await follow(h.subtasks, h.lists.subtasks);
    expect(subtasks).toEqual(await byPriority({ parent_task_id: hub.id }));
    expect(new Set(subtasks)).toEqual(new Set(children));
    expect(await follow(h.dependents, h.lists.dependents)).toEqual(await byPriority({ dependents_of: hub.id }));

    const all = await ok(w.ctx, "task_get", { task_id: waiter.id });
    expect(all.task.depends_on).toHaveLength(60);
    expect(all.lists.blockers).toMatchObject({ total: 60, returned: 50, more: { arguments: { dependencies_of: waiter.id, status: ["todo", "in_progress", "in_review"] } } });
    expect(new Set(await follow(all.blockers, all.lists.blockers))).toEqual(new Set(children));
  });

  it("a task waits on at most 100 tasks: task_link rejects edges past that with the reason", async () => {
    const w = await world("bounded-deps");
    await ok(w.ctx, "project_create", { title: "Deps", key: "DEP" });
    const target = (await ok(w.ctx, "task_create", { project_id: "DEP", title: "umbrella" })).task as Structured;
    const ids = [
      ...((await ok(w.ctx, "task_create_many", { project_id: "DEP", tasks: Array.from({ length: 100 }, (_, i) => ({ title: `a${i}` })) })).task_ids as string[]),
      ...((await ok(w.ctx, "task_create_many", { project_id: "DEP", tasks: [{ title: "b0" }, { title: "b1" }] })).task_ids as string[]),
    ];
    await ok(w.ctx, "task_link", { task_id: target.id, add_depends_on: ids.slice(0, 50) });
    // The edge past the limit is refused inside its insert, beside edges that still fit.
    const second = await ok(w.ctx, "task_link", { task_id: target.id, add_depends_on: ids.slice(51, 100) });
    expect(second.added).toHaveLength(49);
    expect(second.cycle_rejected).toEqual([]);
    const third = await ok(w.ctx, "task_link", { task_id: target.id, add_depends_on: [ids[50], ids[100]] });
    expect(third.added).toEqual([ids[50]]);
    expect(third.cycle_rejected).toEqual([{ depends_on: ids[100], reason: expect.stringContaining("already waits on 100 tasks") }]);
    expect(await count("SELECT COUNT(*) AS n FROM task_deps WHERE tenant_id = ? AND task_id = ?", w.id.tenantId, target.id)).toBe(100);
    // Dropping one makes room again.
    const swapped = await ok(w.ctx, "task_link", { task_id: target.id, remove_depends_on: [ids[0]] });
    expect(swapped.removed).toEqual([ids[0]]);
    expect((await ok(w.ctx, "task_link", { task_id: target.id, add_depends_on: [ids[101]] })).added).toEqual([ids[101]]);
  });

  it("project_brief caps its repositories and points at repo_query; run_get pages a subtree of 60 children with its own cursor", async () => {
    const w = await world("bounded-brief");
    const p = (await ok(w.ctx, "project_create", { title: "Repos", key: "REP" })).project as Structured;
    const repoRows: D1PreparedStatement[] = [];
    for (let i = 0; i < 55; i++) {
      const id = crypto.randomUUID();
      const name = `r${String(i).padStart(2, "0")}`;
      repoRows.push(
        env.DB.prepare(`INSERT INTO repositories (id, tenant_id, owner, name, slug, remote_url, created_by, created_at) VALUES (?, ?, 'acme', ?, ?, ?, ?, ?)`).bind(
          id,
          w.id.tenantId,
          name,
          `acme/${name}`,
          `https://github.com/acme/${name}`,
          w.id.actorId,
          T0,
        ),
        env.DB.prepare(`INSERT INTO project_repositories (tenant_id, project_id, repository_id, created_at) VALUES (?, ?, ?, ?)`).bind(w.id.tenantId, p.id, id, T0),
      );
    }
    await env.DB.batch(repoRows);
    const brief = await ok(w.ctx, "project_brief", { project: "REP" });
    expect(brief.repositories).toHaveLength(50);
    expect(brief.lists.repositories).toEqual({ total: 55, returned: 50, more: { tool: "repo_query", arguments: { project_id: p.id } } });
    expect((await ok(w.ctx, "repo_query", { ...brief.lists.repositories.more.arguments, limit: 100 })).items).toHaveLength(55);

    const s = await inSession(w.ctx);
    await ok(s, "project_create", { title: "Runs", key: "RUN" });
    const root = (await env.DB.prepare("SELECT id FROM runs WHERE tenant_id = ?").bind(w.id.tenantId).first<{ id: string }>())!.id;
    const forked: string[] = [];
    for (let i = 0; i < 60; i++) forked.push((await ok(s, "run_fork", { label: `child ${i}` })).run.id as string);
    const first = await ok(w.ctx, "run_get", { run_id: root, include_children: true });
    expect(first.children).toHaveLength(50);
    expect(first.children_truncated).toBe(true);
    expect(first.lists.children).toMatchObject({ total: 60, returned: 50, more: { tool: "run_get", arguments: { run_id: root, include_children: true } } });
    const next = await ok(w.ctx, "run_get", first.lists.children.more.arguments);
    expect(next.children.map((r: Structured) => r.id)).toEqual(forked.slice(50));
    expect(next.lists.children).toEqual({ total: 60, returned: 10 });
    expect(next.children_truncated).toBe(false);
    await rejects(w.ctx, "run_get", { run_id: root, cursor: first.lists.children.next_cursor }, "invalid_input");
  });

  it("another tenant's task is not_found to task_get, and task_query's link filters do not reach into it", async () => {
    const a = await world("bounded-iso");
    await ok(a.ctx, "project_create", { title: "A", key: "AAA" });
    const t = (await ok(a.ctx, "task_create", { project_id: "AAA", title: "a" })).task as Structured;
    await ok(a.ctx, "task_create", { project_id: "AAA", title: "child", parent_task_id: t.id, depends_on: [t.id] });
    const b = await newWorld("wauth-bounded-iso-b", { start: T0, actor: "mallory" });
    const aState = () => tenantState(a.id.tenantId);
    await refusedWithoutWrites(b.ctx, "task_get", { task_id: t.id }, "not_found", aState);
    for (const filter of ["parent_task_id", "dependencies_of", "dependents_of"]) {
      await refusedWithoutWrites(b.ctx, "task_query", { [filter]: t.id }, "not_found", aState);
    }
  });
});
