/** The coordination tools over /mcp's pipeline: path_reserve, path_reservations, path_release. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../../src/core/context";
import { call, fails, makeCtx, ok, seedIdentity, TestClock } from "../../support/helpers";

const REPO = "acme/api";

async function world(): Promise<{ alice: Ctx; bob: Ctx; clock: TestClock; tenant: string }> {
  const tenant = `rsv-tools-${crypto.randomUUID().slice(0, 8)}`;
  const clock = new TestClock();
  const alice = makeCtx(await seedIdentity(tenant, "alice"), clock);
  const bob = makeCtx(await seedIdentity(tenant, "bob"), clock);
  await ok(alice, "repo_register", { slug: REPO });
  return { alice, bob, clock, tenant };
}

describe("path_reserve", () => {
  it("reserves globs under a lease with a fencing token, renews them, and answers reserved: false with the holder", async () => {
    const { alice, bob } = await world();
    const r = await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/", "./README.md"], reason: "login rewrite" });
    expect(r).toMatchObject({ reserved: true, renewed: [], conflicts: [] });
    expect(r.reservations.map((x: { pattern: string }) => x.pattern).sort()).toEqual(["README.md", "src/auth/**"]);
    expect(r.fencing_token).toBeGreaterThan(0);
    const again = await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/**"] });
    expect(again).toMatchObject({ reserved: true, renewed: ["src/auth/**"], fencing_token: r.fencing_token });
    const no = await ok(bob, "path_reserve", { repository_id: REPO, paths: ["src/auth/token.ts"] });
    expect(no).toMatchObject({ reserved: false, reservations: [], fencing_token: null });
    expect(no.conflicts).toEqual([expect.objectContaining({ pattern: "src/auth/token.ts", held_by: alice.actorId, held_pattern: "src/auth/**", exclusive: true })]);
    // Shared with shared is fine.
    expect((await ok(bob, "path_reserve", { repository_id: REPO, paths: ["docs/**"], exclusive: false })).reserved).toBe(true);
    expect((await ok(alice, "path_reserve", { repository_id: REPO, paths: ["docs/a.md"], exclusive: false })).reserved).toBe(true);
  });

  it("refuses an unknown repository, an unknown task and a bad pattern, reserving nothing", async () => {
    const { alice } = await world();
    expect((await fails(alice, "path_reserve", { repository_id: "acme/nope", paths: ["a"] })).code).toBe("not_found");
    expect((await fails(alice, "path_reserve", { repository_id: REPO, paths: ["a"], task_id: "NOPE-1" })).code).toBe("not_found");
    const bad = await fails(alice, "path_reserve", { repository_id: REPO, paths: ["ok/**", "../etc/passwd"] });
    expect(bad.code).toBe("invalid_input");
    expect(bad.hint).toMatch(/relative to the repository root/);
    expect((await fails(alice, "path_reserve", { repository_id: REPO, paths: [] })).code).toBe("invalid_input");
    expect((await fails(alice, "path_reserve", { repository_id: REPO, paths: ["a"], lease_seconds: 5 })).code).toBe("invalid_input");
    expect((await ok(alice, "path_reservations", { repository_id: REPO })).items).toEqual([]);
  });

  it("refuses a reservation past the repository's bound of live reservations, reserving nothing", async () => {
    const { alice, bob } = await world();
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["seed/"] });
    const repo = (await ok(alice, "repo_query", {})).items as { id: string }[];
    // The repository filled up to its bound (as 20 agents holding 50 files each would).
    const now = new Date(Date.parse("2026-06-01T12:00:00.000Z")).toISOString();
    const far = new Date(Date.parse(now) + 3_600_000).toISOString();
    const rows = Array.from({ length: 999 }, (_, i) =>
      env.DB.prepare(
        `INSERT INTO path_reservations (id, tenant_id, repository_id, actor_id, pattern, exclusive, task_id, reason, fencing_token, session_id, created_at, expires_at, released_at)
         VALUES (?, ?, ?, ?, ?, 1, NULL, '', 1, '', ?, ?, NULL)`,
      ).bind(crypto.randomUUID(), alice.tenantId, repo[0]!.id, alice.actorId, `filler/${i}.ts`, now, far),
    );
    for (let i = 0; i < rows.length; i += 100) await env.DB.batch(rows.slice(i, i + 100));
    const e = await fails(bob, "path_reserve", { repository_id: REPO, paths: ["other/"] });
    expect(e.code).toBe("too_many_reservations");
    expect(e.hint).toMatch(/path_release/);
    expect((await ok(bob, "path_reservations", { repository_id: REPO, actor_id: "me" })).items).toEqual([]);
  });

  it("ties reservations to a task: finishing the task releases them", async () => {
    const { alice } = await world();
    await ok(alice, "project_create", { title: "API", key: "API" });
    const task = (await ok(alice, "task_create", { project_id: "API", title: "Rewrite login" })).task;
    const claim = await ok(alice, "task_claim", { task_id: task.id });
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/**"], task_id: task.ref });
    expect((await ok(alice, "path_reservations", { repository_id: REPO })).items).toHaveLength(1);
    await ok(alice, "task_update", { task_id: task.id, patch: { status: "done" }, fencing_token: claim.fencing_token });
    expect((await ok(alice, "path_reservations", { repository_id: REPO })).items).toEqual([]);
    // Given back to the pool with task_release: the same.
    const other = (await ok(alice, "task_create", { project_id: "API", title: "Rewrite tokens" })).task;
    const held = await ok(alice, "task_claim", { task_id: other.id });
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/tokens/**"], task_id: other.id });
    expect((await ok(alice, "path_reservations", { repository_id: REPO })).items).toHaveLength(1);
    await ok(alice, "task_release", { task_id: other.id, fencing_token: held.fencing_token });
    expect((await ok(alice, "path_reservations", { repository_id: REPO })).items).toEqual([]);
  });
});

describe("path_reservations", () => {
  it("lists live reservations, by holder, and the conflicts of a proposed change", async () => {
    const { alice, bob, clock } = await world();
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/**"], lease_seconds: 120 });
    await ok(bob, "path_reserve", { repository_id: REPO, paths: ["docs/**"], exclusive: false });
    const all = await ok(bob, "path_reservations", { repository_id: REPO, paths: ["src/auth/login.ts", "docs/x.md", "src/app.ts"] });
    expect(all.items.map((x: { pattern: string }) => x.pattern).sort()).toEqual(["docs/**", "src/auth/**"]);
    expect(all.conflicts).toEqual([expect.objectContaining({ path: "src/auth/login.ts", reservation: expect.objectContaining({ actor_id: alice.actorId }) })]);
    expect((await ok(bob, "path_reservations", { repository_id: REPO, actor_id: "me" })).items.map((x: { pattern: string }) => x.pattern)).toEqual(["docs/**"]);
    expect((await ok(alice, "path_reservations", { repository_id: REPO, paths: ["src/auth/login.ts"] })).conflicts).toEqual([]);
    clock.advance(121_000);
    expect((await ok(bob, "path_reservations", { repository_id: REPO, paths: ["src/auth/login.ts"] })).conflicts).toEqual([]);
  });

  it("pages the live reservations oldest first, and bounds the conflicts it names", async () => {
    const { alice, bob, clock } = await world();
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      await ok(alice, "path_reserve", { repository_id: REPO, paths: [`pkg/${i}/`] });
    }
    const first = await ok(bob, "path_reservations", { repository_id: REPO, limit: 2 });
    expect(first.items.map((x: { pattern: string }) => x.pattern)).toEqual(["pkg/0/**", "pkg/1/**"]);
    const rest = await ok(bob, "path_reservations", { repository_id: REPO, limit: 10, cursor: first.next_cursor });
    expect(rest.items.map((x: { pattern: string }) => x.pattern)).toEqual(["pkg/2/**", "pkg/3/**", "pkg/4/**"]);
    expect(rest.next_cursor).toBeUndefined();
    // 300 paths under alice's folders: 200 named, and the answer says there are more.
    const many = await ok(bob, "path_reservations", { repository_id: REPO, limit: 1, paths: Array.from({ length: 300 }, (_, i) => `pkg/${i % 5}/f${i}.ts`) });
    expect(many.conflicts).toHaveLength(200);
    expect(many.conflicts_truncated).toBe(true);
    expect((await fails(bob, "path_reservations", { repository_id: REPO, limit: 501 })).code).toBe("invalid_input");
  });

  it("refuses a bad path and an unknown repository", async () => {
    const { alice } = await world();
    expect((await fails(alice, "path_reservations", { repository_id: REPO, paths: ["/etc/passwd"] })).code).toBe("invalid_input");
    expect((await fails(alice, "path_reservations", { repository_id: "nobody/here" })).code).toBe("not_found");
  });

  it("keeps tenants apart: another tenant's same-named repository shows none of these", async () => {
    const { alice } = await world();
    const { alice: stranger } = await world();
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["**"] });
    expect((await ok(stranger, "path_reservations", { repository_id: REPO, paths: ["a.ts"] })).conflicts).toEqual([]);
    expect((await ok(stranger, "path_reserve", { repository_id: REPO, paths: ["a.ts"] })).reserved).toBe(true);
  });
});

describe("path_release", () => {
  it("releases by id, by pattern or all of one's own, never another's", async () => {
    const { alice, bob } = await world();
    const r = await ok(alice, "path_reserve", { repository_id: REPO, paths: ["a/**", "b/**", "c/**"] });
    await ok(bob, "path_reserve", { repository_id: REPO, paths: ["d/**"] });
    const a = r.reservations.find((x: { pattern: string }) => x.pattern === "a/**");
    expect((await ok(alice, "path_release", { repository_id: REPO, reservation_ids: [a.id] })).released.map((x: { pattern: string }) => x.pattern)).toEqual(["a/**"]);
    expect((await ok(bob, "path_release", { repository_id: REPO, paths: ["b/**"] })).released).toEqual([]);
    expect((await ok(alice, "path_release", { repository_id: REPO, paths: ["b/"] })).released.map((x: { pattern: string }) => x.pattern)).toEqual(["b/**"]);
    expect((await ok(alice, "path_release", { repository_id: REPO })).released.map((x: { pattern: string }) => x.pattern)).toEqual(["c/**"]);
    expect((await ok(alice, "path_reservations", { repository_id: REPO })).items.map((x: { actor_id: string }) => x.actor_id)).toEqual([bob.actorId]);
    const bad = await call(alice, "path_release", { repository_id: REPO, reservation_ids: [] });
    expect(bad.error.code).toBe("invalid_input");
  });
});
