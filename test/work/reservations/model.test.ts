/**
 * Path reservations (src/work/reservations/model.ts) through the repository's ClaimsDO: overlapping
 * globs, shared beside exclusive, renewal and fencing tokens, lease expiry, release, what a write
 * would run into, racing reservers, and tenants kept apart.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { iso } from "../../../src/core/time";
import { holdsToken, liveReservations, releaseTaskReservations, type ReserveRequest, reservationsStub, writeConflicts } from "../../../src/work/reservations/model";

const T0 = Date.parse("2026-11-29T10:00:00.000Z");
const scope = () => ({ tenantId: `rsv-${crypto.randomUUID().slice(0, 8)}`, repositoryId: `repo-${crypto.randomUUID().slice(0, 8)}` });
type Scope = ReturnType<typeof scope>;

const stub = (s: Scope) => reservationsStub({ env, tenantId: s.tenantId }, s.repositoryId);
const request = (s: Scope, actorId: string, patterns: string[], more: Partial<ReserveRequest> = {}): ReserveRequest => ({
  ...s,
  actorId,
  sessionId: "",
  patterns,
  exclusive: true,
  leaseSeconds: 600,
  taskId: null,
  reason: "",
  nowMs: T0,
  ...more,
});
const reserve = (s: Scope, actorId: string, patterns: string[], more: Partial<ReserveRequest> = {}) => stub(s).reservePaths(request(s, actorId, patterns, more));
const liveAt = (s: Scope, ms = T0) => liveReservations(env.DB, s.tenantId, s.repositoryId, iso(new Date(ms)));

describe("path reservations", () => {
  it("refuses another actor's exclusive reservation of overlapping paths, all or nothing, naming the holder", async () => {
    const s = scope();
    const first = await reserve(s, "alice", ["src/auth/**"], { reason: "login rewrite" });
    expect(first.reserved).toBe(true);
    const refused = await reserve(s, "bob", ["docs/**", "src/auth/login.ts"]);
    expect(refused.reserved).toBe(false);
    if (refused.reserved) return;
    expect(refused.conflicts).toHaveLength(1);
    expect(refused.conflicts[0]).toMatchObject({ pattern: "src/auth/login.ts", held: { actor_id: "alice", pattern: "src/auth/**", reason: "login rewrite", expires_at: iso(new Date(T0 + 600_000)) } });
    // docs/** was free, but the call reserved nothing.
    expect((await liveAt(s)).map((r) => [r.actor_id, r.pattern])).toEqual([["alice", "src/auth/**"]]);
    expect((await reserve(s, "bob", ["src/*.ts", "docs/**"])).reserved).toBe(true);
  });

  it("lets shared holders sit together, and keeps an exclusive one out of shared paths and the other way round", async () => {
    const s = scope();
    expect((await reserve(s, "alice", ["lib/**"], { exclusive: false })).reserved).toBe(true);
    expect((await reserve(s, "bob", ["lib/util/*.ts"], { exclusive: false })).reserved).toBe(true);
    expect((await reserve(s, "carol", ["lib/util/a.ts"])).reserved).toBe(false);
    expect((await reserve(s, "carol", ["app/**"])).reserved).toBe(true);
    expect((await reserve(s, "dave", ["app/main.ts"], { exclusive: false })).reserved).toBe(false);
  });

  it("renews one's own pattern under the same fencing token; a new reservation gets a higher one", async () => {
    const s = scope();
    const a = await reserve(s, "alice", ["a/**"]);
    const b = await reserve(s, "bob", ["b/**"]);
    if (!a.reserved || !b.reserved) throw new Error("not reserved");
    expect(b.fencing_token).toBeGreaterThan(a.fencing_token);
    const renewed = await reserve(s, "alice", ["a/**"], { nowMs: T0 + 300_000, leaseSeconds: 900 });
    if (!renewed.reserved) throw new Error("not renewed");
    expect(renewed.renewed).toEqual(["a/**"]);
    expect(renewed.fencing_token).toBe(a.fencing_token);
    expect(renewed.reservations).toHaveLength(1);
    expect(renewed.reservations[0]!.expires_at).toBe(iso(new Date(T0 + 300_000 + 900_000)));
    // Overlapping one's own reservation is no conflict.
    const more = await reserve(s, "alice", ["a/x.ts", "c/**"]);
    if (!more.reserved) throw new Error("not reserved");
    expect(more.renewed).toEqual([]);
    expect(more.fencing_token).toBeGreaterThan(b.fencing_token);
    expect(new Set(more.reservations.map((r) => r.fencing_token))).toEqual(new Set([more.fencing_token]));
  });

  it("frees paths when the lease runs out, and a token stops counting then or once released", async () => {
    const s = scope();
    const a = await reserve(s, "alice", ["x/**"], { leaseSeconds: 60 });
    if (!a.reserved) throw new Error("not reserved");
    const now = iso(new Date(T0 + 30_000));
    expect(await holdsToken(env.DB, s.tenantId, s.repositoryId, "alice", a.fencing_token, now)).toBe(true);
    expect(await holdsToken(env.DB, s.tenantId, s.repositoryId, "bob", a.fencing_token, now)).toBe(false);
    expect(await holdsToken(env.DB, s.tenantId, s.repositoryId, "alice", a.fencing_token, iso(new Date(T0 + 60_000)))).toBe(false);
    expect((await reserve(s, "bob", ["x/y.ts"], { nowMs: T0 + 30_000 })).reserved).toBe(false);
    const later = await reserve(s, "bob", ["x/y.ts"], { nowMs: T0 + 61_000 });
    expect(later.reserved).toBe(true);
    const released = await stub(s).releasePaths({ ...s, actorId: "bob", nowMs: T0 + 62_000 });
    expect(released.map((r) => r.pattern)).toEqual(["x/y.ts"]);
    if (!later.reserved) return;
    expect(await holdsToken(env.DB, s.tenantId, s.repositoryId, "bob", later.fencing_token, iso(new Date(T0 + 63_000)))).toBe(false);
  });

  it("releases by id, by pattern or all of the actor's, never someone else's, and ties reservations to a task", async () => {
    const s = scope();
    const a = await reserve(s, "alice", ["a/**", "b/**", "c/**"]);
    await reserve(s, "bob", ["d/**"], { taskId: "task-1" });
    await reserve(s, "bob", ["e/**"], { taskId: "task-2" });
    if (!a.reserved) throw new Error("not reserved");
    const byId = await stub(s).releasePaths({ ...s, actorId: "alice", ids: [a.reservations.find((r) => r.pattern === "a/**")!.id], nowMs: T0 + 1000 });
    expect(byId.map((r) => r.pattern)).toEqual(["a/**"]);
    expect(await stub(s).releasePaths({ ...s, actorId: "bob", patterns: ["b/**"], nowMs: T0 + 1000 })).toEqual([]);
    expect((await stub(s).releasePaths({ ...s, actorId: "alice", patterns: ["b/**"], nowMs: T0 + 1000 })).map((r) => r.pattern)).toEqual(["b/**"]);
    expect(await releaseTaskReservations(env.DB, s.tenantId, "task-1", T0 + 1000)).toBe(1);
    expect((await liveAt(s, T0 + 2000)).map((r) => r.pattern).sort()).toEqual(["c/**", "e/**"]);
    expect((await stub(s).releasePaths({ ...s, actorId: "alice", nowMs: T0 + 3000 })).map((r) => r.pattern)).toEqual(["c/**"]);
    expect((await liveAt(s, T0 + 4000)).map((r) => r.pattern)).toEqual(["e/**"]);
  });

  it("says which paths of a write another actor holds exclusively", async () => {
    const s = scope();
    await reserve(s, "alice", ["src/auth/**"]);
    await reserve(s, "bob", ["README.md"], { exclusive: false });
    await reserve(s, "carol", ["*.json"]);
    const now = iso(new Date(T0 + 1000));
    const paths = ["src/auth/login.ts", "src/app.ts", "README.md", "package.json", "src/x.json"];
    const found = await writeConflicts(env.DB, s.tenantId, s.repositoryId, "bob", paths, now);
    expect(found.map((c) => [c.path, c.held.actor_id, c.held.pattern])).toEqual([
      ["src/auth/login.ts", "alice", "src/auth/**"],
      ["package.json", "carol", "*.json"],
    ]);
    // One's own reservations never stand in one's way.
    expect((await writeConflicts(env.DB, s.tenantId, s.repositoryId, "alice", paths, now)).map((c) => c.held.actor_id)).toEqual(["carol"]);
    expect(await writeConflicts(env.DB, s.tenantId, s.repositoryId, "bob", paths, iso(new Date(T0 + 700_000)))).toEqual([]);
  });

  it("lets exactly one of 32 racing reservers hold overlapping paths exclusively", async () => {
    const s = scope();
    const outcomes = await Promise.all(Array.from({ length: 32 }, (_, i) => reserve(s, `agent-${i}`, [`src/m${i}/**`, "src/*/shared.ts"])));
    const winners = outcomes.filter((o) => o.reserved);
    expect(winners).toHaveLength(1);
    const held = await liveAt(s);
    for (const a of held) for (const b of held) if (a.actor_id !== b.actor_id) throw new Error(`${a.actor_id} and ${b.actor_id} both hold ${a.pattern} / ${b.pattern}`);
    // Disjoint paths all go through.
    const disjoint = await Promise.all(Array.from({ length: 32 }, (_, i) => reserve(s, `agent-${i}`, [`lib/p${i}.ts`])));
    expect(disjoint.every((o) => o.reserved)).toBe(true);
  });

  it("keeps tenants apart: the same repository id in another tenant holds nothing here", async () => {
    const s = scope();
    const other = { tenantId: `${s.tenantId}-b`, repositoryId: s.repositoryId };
    await reserve(s, "alice", ["**"]);
    expect((await reserve(other, "bob", ["src/a.ts"])).reserved).toBe(true);
    // In the other tenant only bob's own reservation covers src/a.ts; alice's "**" is not there.
    expect((await writeConflicts(env.DB, other.tenantId, other.repositoryId, "carol", ["src/a.ts", "src/b.ts"], iso(new Date(T0)))).map((c) => [c.path, c.held.actor_id])).toEqual([
      ["src/a.ts", "bob"],
    ]);
    expect((await writeConflicts(env.DB, s.tenantId, s.repositoryId, "carol", ["src/a.ts", "src/b.ts"], iso(new Date(T0)))).map((c) => [c.path, c.held.actor_id])).toEqual([
      ["src/a.ts", "alice"],
      ["src/b.ts", "alice"],
    ]);
    expect((await liveAt(other)).map((r) => r.actor_id)).toEqual(["bob"]);
  });
});
