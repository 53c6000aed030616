/**
 * ClaimsDO's group commit against real local D1: claims queued together are decided in one D1
 * batch, in arrival order (claim-next by priority, claims by id, handoff claims side by side); a
 * group whose batch fails runs again member by member; every lease handed out is tracked and the
 * alarm sits at the earliest. Claims are queued inside the object in one tick, so they form one
 * group whatever the timing; the object's D1 binding is wrapped to count batches.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ClaimsDO } from "../../src/durable/claims";
import type { ClaimOutcome } from "../../src/work/claims/model";
import { count, ok, type Structured, newWorld, type World, type Who } from "../support/helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const NOW = Date.parse(T0);
const MINUTE = 60_000;
const lease = (seconds: number) => new Date(NOW + seconds * 1000).toISOString();

const world = (name: string): Promise<World> => newWorld(`dc-${name}`, { start: T0 });

/** A project with tasks of these priorities, created one after another; their ids in that order. */
async function projectWith(w: World, key: string, priorities: number[]): Promise<{ projectId: string; taskIds: string[] }> {
  const p = (await ok(w.ctx, "project_create", { title: `Project ${key}`, key })).project as Structured;
  const r = await ok(w.ctx, "task_create_many", { project_id: p.id, tasks: priorities.map((priority, i) => ({ title: `t${i}`, priority })) });
  return { projectId: p.id as string, taskIds: r.task_ids as string[] };
}

const stubOf = (tenantId: string, scope: string) => env.CLAIMS.get(env.CLAIMS.idFromName(`${tenantId}:${scope}`)) as DurableObjectStub<ClaimsDO>;

/** The arguments task_claim passes the object for `who`. */
const scopeOf = (who: Who, extra: { projectId?: string; taskId?: string; leaseSeconds?: number }) => ({
  tenantId: who.id.tenantId,
  actorId: who.id.actorId,
  sessionId: who.ctx.sessionId,
  runId: null,
  leaseSeconds: 3600,
  nowMs: NOW,
  ...extra,
});

interface Counted {
  /** Statements per D1 batch the object ran, in order, and whether each batch failed. */
  batches: Array<{ statements: number; failed: boolean }>;
}

/**
 * Runs `fn` inside the object with its D1 binding wrapped to record every batch, then puts the
 * binding back.
 */
async function withCountedDb<T>(stub: DurableObjectStub<ClaimsDO>, fn: (o: ClaimsDO, counted: Counted) => Promise<T>): Promise<{ value: T; counted: Counted }> {
  return runInDurableObject(stub, async (instance) => {
    const o = instance as unknown as { env: typeof env };
    const original = o.env;
    const counted: Counted = { batches: [] };
    const db = new Proxy(original.DB, {
      get(target, prop) {
        if (prop === "batch") {
          return async (statements: D1PreparedStatement[]) => {
            const entry = { statements: statements.length, failed: false };
            counted.batches.push(entry);
            try {
              return await target.batch(statements);
            } catch (err) {
              entry.failed = true;
              throw err;
            }
          };
        }
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    o.env = { ...original, DB: db };
    try {
      return { value: await fn(instance, counted), counted };
    } finally {
      o.env = original;
    }
  });
}

const claimedTask = (o: ClaimOutcome) => (o.claimed ? o.taskId : null);

async function taskRow(id: string): Promise<Structured> {
  return (await env.DB.prepare("SELECT id, status, assignee_actor_id, lease_expires_at, lease_token FROM tasks WHERE id = ?").bind(id).first<Structured>())!;
}

const claimedActivity = async (tenantId: string) =>
  (await env.DB.prepare("SELECT object_id, actor_id FROM activity WHERE tenant_id = ? AND verb = 'task.claimed' ORDER BY seq").bind(tenantId).all<Structured>()).results;

describe("ClaimsDO group commit", () => {
  it("claim-next calls queued together are decided in ONE D1 batch, each taking the best task the ones before it left", async () => {
    const w = await world("prio");
    // Distinct priorities: tasks made in one call share their creation time, so ties would fall to random id bits.
    const { projectId, taskIds } = await projectWith(w, "PRI", [3, 0, 2, 1, 4]);
    const agents = await Promise.all(["a1", "a2", "a3", "a4"].map((n) => w.other(n)));
    const stub = stubOf(w.id.tenantId, projectId);
    const leases = [7200, 600, 3600, 1800];
    const { value: outcomes, counted } = await withCountedDb(stub, (o) => Promise.all(agents.map((a, i) => o.claim(scopeOf(a, { projectId, leaseSeconds: leases[i] })))));

    expect(counted.batches).toEqual([{ statements: 8, failed: false }]);
    const best = [taskIds[1], taskIds[3], taskIds[2], taskIds[0]];
    expect(outcomes.map(claimedTask)).toEqual(best);
    for (const [i, o] of outcomes.entries()) {
      // The claim returns the task's reference: tasks are numbered in the order projectWith made them.
      expect(o).toEqual({ claimed: true, taskId: best[i], projectId, ref: `PRI-${taskIds.indexOf(best[i]!) + 1}`, leaseExpiresAt: lease(leases[i]!), extended: false, fencingToken: 1 });
      expect(await taskRow(best[i]!)).toMatchObject({ status: "in_progress", assignee_actor_id: agents[i]!.id.actorId, lease_expires_at: lease(leases[i]!), lease_token: 1 });
    }
    expect(await claimedActivity(w.id.tenantId)).toEqual(best.map((id, i) => ({ object_id: id, actor_id: agents[i]!.id.actorId })));
    // Every member's lease is tracked, and the alarm sits at the earliest of them.
    expect(await stub.tracked()).toEqual(best.map((id, i) => ({ task_id: id, expires_at: lease(leases[i]!) })).sort((x, y) => x.expires_at.localeCompare(y.expires_at)));
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBe(Date.parse(lease(600)));

    // One task is left: a group of three gets it and two pool_empty answers, still one batch.
    const more = await Promise.all(["b1", "b2", "b3"].map((n) => w.other(n)));
    const second = await withCountedDb(stub, (o) => Promise.all(more.map((a) => o.claim(scopeOf(a, { projectId })))));
    expect(second.counted.batches).toEqual([{ statements: 6, failed: false }]);
    expect(second.value.map(claimedTask)).toEqual([taskIds[4], null, null]);
    expect(second.value.slice(1)).toEqual([
      { claimed: false, reason: "pool_empty" },
      { claimed: false, reason: "pool_empty" },
    ]);
  });

  it("claims by id and claim-next share a group in arrival order: a claim by id takes its task before a later claim-next can, and loses it to an earlier one", async () => {
    const w = await world("mixed");
    const { projectId, taskIds } = await projectWith(w, "MIX", [0, 1, 2, 3]);
    const [a, b, c, d] = await Promise.all(["a", "b", "c", "d"].map((n) => w.other(n)));
    const stub = stubOf(w.id.tenantId, projectId);
    const { value: outcomes, counted } = await withCountedDb(stub, (o) =>
      Promise.all([
        o.claim(scopeOf(b!, { taskId: taskIds[0] })),
        o.claim(scopeOf(a!, { projectId })),
        o.claim(scopeOf(c!, { projectId })),
        // taskIds[1] went to a (the claim-next before this one), in this same batch.
        o.claim(scopeOf(d!, { taskId: taskIds[1] })),
        // b re-claims its own task a minute later, in the same group: an extension, same token.
        o.claim({ ...scopeOf(b!, { taskId: taskIds[0], leaseSeconds: 7200 }), nowMs: NOW + MINUTE }),
      ]),
    );
    expect(counted.batches).toEqual([{ statements: 10, failed: false }]);
    expect(outcomes[0]).toEqual({ claimed: true, taskId: taskIds[0], projectId, ref: "MIX-1", leaseExpiresAt: lease(3600), extended: false, fencingToken: 1 });
    expect(outcomes.slice(1, 3).map(claimedTask)).toEqual([taskIds[1], taskIds[2]]);
    expect(outcomes[3]).toEqual({ claimed: false, reason: "held", holder: a!.id.actorId, leaseExpiresAt: lease(3600) });
    expect(outcomes[4]).toEqual({ claimed: true, taskId: taskIds[0], projectId, ref: "MIX-1", leaseExpiresAt: lease(60 + 7200), extended: true, fencingToken: 1 });
    expect(await taskRow(taskIds[0]!)).toMatchObject({ assignee_actor_id: b!.id.actorId, lease_expires_at: lease(60 + 7200), lease_token: 1 });
    expect(await taskRow(taskIds[3]!)).toMatchObject({ status: "todo", assignee_actor_id: null });
    // One task.claimed per claim that took or extended a task; none for the refused one.
    expect(await claimedActivity(w.id.tenantId)).toEqual([
      { object_id: taskIds[0], actor_id: b!.id.actorId },
      { object_id: taskIds[1], actor_id: a!.id.actorId },
      { object_id: taskIds[2], actor_id: c!.id.actorId },
      { object_id: taskIds[0], actor_id: b!.id.actorId },
    ]);
    // The extension moved the tracked lease of taskIds[0]; the others are tracked as handed out.
    const byExpiry = (ls: Array<{ task_id: string; expires_at: string }>) => ls.sort((x, y) => x.expires_at.localeCompare(y.expires_at) || x.task_id.localeCompare(y.task_id));
    expect(byExpiry(await stub.tracked())).toEqual(
      byExpiry([
        { task_id: taskIds[1]!, expires_at: lease(3600) },
        { task_id: taskIds[2]!, expires_at: lease(3600) },
        { task_id: taskIds[0]!, expires_at: lease(60 + 7200) },
      ]),
    );
  });

  it("a group whose batch fails is run again member by member: only the faulty claim fails, the others get distinct tasks, nothing of the faulty one is written", async () => {
    const w = await world("fault");
    const { projectId, taskIds } = await projectWith(w, "FLT", [0, 1, 2, 3]);
    const [a, faulty, c] = await Promise.all(["a", "faulty", "c"].map((n) => w.other(n)));
    // A real failure inside D1: any write making `faulty` an assignee aborts its statement (and so its batch).
    const trigger = `fail_claims_${faulty!.id.actorId.replace(/[^0-9a-zA-Z]/g, "")}`;
    await env.DB.prepare(
      `CREATE TRIGGER ${trigger} BEFORE UPDATE ON tasks WHEN NEW.assignee_actor_id = '${faulty!.id.actorId.replace(/'/g, "")}' BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    ).run();
    try {
      const stub = stubOf(w.id.tenantId, projectId);
      const { value: settled, counted } = await withCountedDb(stub, (o) =>
        Promise.allSettled([o.claim(scopeOf(a!, { projectId })), o.claim(scopeOf(faulty!, { projectId })), o.claim(scopeOf(c!, { projectId }))]),
      );
      // The group's batch failed whole, then each member ran in a batch of its own, in the same order.
      expect(counted.batches).toEqual([
        { statements: 6, failed: true },
        { statements: 2, failed: false },
        { statements: 2, failed: true },
        { statements: 2, failed: false },
      ]);
      expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(String((settled[1] as PromiseRejectedResult).reason)).toContain("injected fault");
      const [first, , third] = settled.map((s) => (s.status === "fulfilled" ? (s.value as ClaimOutcome) : null));
      expect(claimedTask(first!)).toBe(taskIds[0]);
      expect(claimedTask(third!)).toBe(taskIds[1]);
      expect(await taskRow(taskIds[2]!)).toMatchObject({ status: "todo", assignee_actor_id: null, lease_token: 0 });
      expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE tenant_id = ? AND assignee_actor_id = ?", w.id.tenantId, faulty!.id.actorId)).toBe(0);
      expect(await claimedActivity(w.id.tenantId)).toEqual([
        { object_id: taskIds[0], actor_id: a!.id.actorId },
        { object_id: taskIds[1], actor_id: c!.id.actorId },
      ]);
      expect((await stub.tracked()).map((l) => l.task_id).sort()).toEqual([taskIds[0], taskIds[1]].sort());
    } finally {
      await env.DB.prepare(`DROP TRIGGER IF EXISTS ${trigger}`).run();
    }
  });

  it("handoff claims join the group too: of several recipients claiming one handoff in one batch exactly one wins", async () => {
    const w = await world("handoff");
    const rs = await Promise.all(["r1", "r2", "r3"].map((n) => w.other(n)));
    const h = (await ok(w.ctx, "handoff_create", { title: "Take me", to_actor_ids: ["r1", "r2", "r3"] })).handoff as Structured;
    const stub = stubOf(w.id.tenantId, "handoffs");
    const claimOf = (r: Who) => ({ tenantId: w.id.tenantId, actorId: r.id.actorId, sessionId: r.ctx.sessionId, runId: null, handoffId: h.id as string, nowMs: NOW + MINUTE });
    const { value: outcomes, counted } = await withCountedDb(stub, (o) => Promise.all([...rs.map((r) => o.claimHandoff(claimOf(r))), o.claimHandoff(claimOf(rs[0]!))]));
    expect(counted.batches).toEqual([{ statements: 8, failed: false }]);
    expect(outcomes).toEqual([
      { claimed: true, already: false },
      { claimed: false, reason: "taken", holder: rs[0]!.id.actorId },
      { claimed: false, reason: "taken", holder: rs[0]!.id.actorId },
      { claimed: true, already: true },
    ]);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'handoff.claimed'", w.id.tenantId)).toBe(1);
  });
});
