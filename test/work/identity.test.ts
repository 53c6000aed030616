/**
 * The work ledger's identity & directory room (seed 001): whoami, register_actor and actor_query,
 * through the registry, against real local D1; tenant isolation across identity and projects.
 * The projects room's tests are in projects.test.ts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { DERIVED_WINDOW_MS } from "../../src/core/idempotency";
import { call, count, makeCtx, MINUTE, ok, seedIdentity, type Structured } from "../support/helpers";
import { T0, at, UUID_V7, type World, world, rejects, activityRows, createProject, insertTask, refs, names, walk } from "../support/identity-projects";

// ---------------------------------------------------------------------------------------------

describe("whoami", () => {
  it("returns the key's actor, the tenant and the session; first call has an empty delta", async () => {
    const w = await world("who-basic", "claude-code", "sess-who");
    const r = await ok(w.ctx, "whoami", {});
    expect(r.actor).toEqual({
      id: w.id.actorId,
      external_ref: "claude-code",
      kind: "agent",
      display_name: "claude-code",
      group: "",
      role: "",
      capabilities: [],
      created_at: expect.any(String),
      last_seen_at: T0,
    });
    expect(r.tenant).toEqual({ id: w.id.tenantId, slug: w.slug });
    expect(r.session_id).toBe("sess-who");
    expect(r.open_tasks).toEqual([]);
    expect(r.inbox).toEqual({ count: 0, items: [] });
    expect(r.delta).toEqual({ since: "", activity_count: 0, items: [] });
    expect(r.hints.next.length).toBeGreaterThan(0);
    // last_seen_at is stored, not just reported.
    expect(await count("SELECT COUNT(*) AS n FROM actors WHERE id = ? AND last_seen_at = ?", w.id.actorId, T0)).toBe(1);

    // Outside a session the session id is "".
    const bare = await ok(makeCtx(w.id, w.clock), "whoami", {});
    expect(bare.session_id).toBe("");
  });

  it("lists only the caller's open tasks, highest priority first, with derived state and KEY-seq refs", async () => {
    const w = await world("who-tasks");
    const bob = await w.other("bob");
    const p = await createProject(w.ctx, { title: "Agent Ledger" });
    expect(p.key).toBe("AL");
    const { tenantId, actorId } = w.id;
    const bobs = await insertTask(tenantId, actorId, p.id, { seq: 5, priority: 1, assignee: bob.id.actorId });
    const done = await insertTask(tenantId, actorId, p.id, { seq: 3, priority: 1, status: "done", assignee: actorId });
    await insertTask(tenantId, actorId, p.id, { seq: 1, priority: 2, assignee: actorId, labels: ["api", "db"], dueOn: "2026-07-01" });
    await insertTask(tenantId, actorId, p.id, { seq: 2, priority: 0, status: "in_progress", assignee: actorId, dependsOn: [bobs] });
    await insertTask(tenantId, actorId, p.id, { seq: 4, priority: 0, status: "cancelled", assignee: actorId });
    await insertTask(tenantId, actorId, p.id, { seq: 6, priority: 3, status: "in_review", assignee: actorId, dependsOn: [done] });
    await insertTask(tenantId, actorId, p.id, { seq: 7, priority: 4, assignee: null });

    const r = await ok(w.ctx, "whoami", {});
    expect(refs(r.open_tasks)).toEqual(["AL-2", "AL-1", "AL-6"]);
    expect(r.open_tasks.map((t: Structured) => [t.status, t.state, t.priority])).toEqual([
      ["in_progress", "blocked", 0],
      ["todo", "ready", 2],
      ["in_review", "ready", 3],
    ]);
    const plain = r.open_tasks[1] as Structured;
    expect(plain).toMatchObject({ project_id: p.id, title: "task 1", assignee_actor_id: actorId, due_on: "2026-07-01", labels: ["api", "db"], lease_expires_at: null });
    expect(r.hints.next.join(" ")).toContain("AL-2");

    // Once the blocker is done, the blocked task turns ready.
    await env.DB.prepare("UPDATE tasks SET status = 'done' WHERE id = ?").bind(bobs).run();
    const again = await ok(w.ctx, "whoami", {});
    expect(again.open_tasks[0]).toMatchObject({ ref: "AL-2", state: "ready" });

    // Bob sees only his own (now done, so none).
    const bobView = await ok(bob.ctx, "whoami", {});
    expect(bobView.open_tasks).toEqual([]);
  });

  it("the delta counts others' activity since last seen, lists it newest first, and advances last_seen_at", async () => {
    const w = await world("who-delta");
    const bob = await w.other("bob");
    // Before the caller's first whoami: one write by bob, one by the caller.
    const bp = await createProject(bob.ctx, { title: "Bob Project", key: "BOB" });
    await createProject(w.ctx, { title: "Mine", key: "MINE" });

    w.clock.advance(MINUTE);
    const first = await ok(w.ctx, "whoami", { include: ["delta_items"] });
    expect(first.delta.since).toBe("");
    expect(first.delta.activity_count).toBe(1);
    expect(first.delta.items).toEqual([
      { at: T0, verb: "project.created", object_type: "project", object_id: bp.id, actor_id: bob.id.actorId, actor_name: "bob", summary: expect.stringContaining("BOB") },
    ]);
    expect(first.actor.last_seen_at).toBe(at(MINUTE));

    // After it: two writes by bob, one by the caller.
    w.clock.advance(MINUTE);
    await ok(bob.ctx, "project_update", { project_id: "BOB", patch: { status: "paused" } });
    w.clock.advance(MINUTE);
    const bob2 = await createProject(bob.ctx, { title: "Bob Two", key: "BOB2" });
    await ok(w.ctx, "project_update", { project_id: "MINE", patch: { summary: "mine" } });
    w.clock.advance(MINUTE);

    const counted = await ok(w.ctx, "whoami", {});
    expect(counted.delta.since).toBe(at(MINUTE));
    expect(counted.delta.activity_count).toBe(2);
    expect(counted.delta.items).toEqual([]);
    expect(counted.actor.last_seen_at).toBe(at(4 * MINUTE));

    // Nothing new since: zero. Then the items view lists only what came after.
    w.clock.advance(MINUTE);
    await ok(bob.ctx, "project_update", { project_id: "BOB2", patch: { title: "Bob Two, renamed" } });
    w.clock.advance(MINUTE);
    await ok(bob.ctx, "project_update", { project_id: "BOB", patch: { status: "active" } });
    w.clock.advance(MINUTE);
    const listed = await ok(w.ctx, "whoami", { include: ["delta_items"] });
    expect(listed.delta.since).toBe(at(4 * MINUTE));
    expect(listed.delta.activity_count).toBe(2);
    expect(listed.delta.items.map((i: Structured) => [i.at, i.verb, i.object_id, i.actor_id])).toEqual([
      [at(6 * MINUTE), "project.updated", bp.id, bob.id.actorId],
      [at(5 * MINUTE), "project.updated", bob2.id, bob.id.actorId],
    ]);
    expect(await count("SELECT COUNT(*) AS n FROM actors WHERE id = ? AND last_seen_at = ?", w.id.actorId, at(7 * MINUTE))).toBe(1);

    w.clock.advance(MINUTE);
    const quiet = await ok(w.ctx, "whoami", { include: ["delta_items"] });
    expect(quiet.delta).toEqual({ since: at(7 * MINUTE), activity_count: 0, items: [] });

    // Bob's delta is per actor: his first call counts the caller's two writes, not his own.
    const bobsFirst = await ok(bob.ctx, "whoami", {});
    expect(bobsFirst.delta).toMatchObject({ since: "", activity_count: 2 });
  });

  it("shows the handoffs waiting on the caller, its unread notifications and its open mentions", async () => {
    const w = await world("who-inbox");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const p = await createProject(w.ctx, { title: "Inbox World", key: "IW" });
    const open = await ok(bob.ctx, "handoff_create", { title: "Review the schema", kind: "review", to_actor_ids: [w.id.actorId] });
    const mine = await ok(bob.ctx, "handoff_create", { title: "Which index?", kind: "question", to_actor_ids: [w.id.actorId, carol.id.actorId] });
    const carols = await ok(bob.ctx, "handoff_create", { title: "Taken by carol", to_actor_ids: [w.id.actorId, carol.id.actorId] });
    await ok(w.ctx, "handoff_claim", { handoff_id: mine.handoff.id });
    await ok(carol.ctx, "handoff_claim", { handoff_id: carols.handoff.id });
    const comment = await ok(bob.ctx, "comment_add", { object_type: "project", object_id: p.id, body: "@agent have a look", mentions: [w.id.actorId] });

    const r = await ok(w.ctx, "whoami", {});
    // Waiting on the caller: the open one and the one it claimed; not the one carol took.
    expect(r.handoffs_waiting.count).toBe(2);
    expect(r.handoffs_waiting.items.map((h: Structured) => h.id).sort()).toEqual([open.handoff.id, mine.handoff.id].sort());
    // A notification per handoff addressed to the caller, and the mention.
    expect(r.notifications.unread_count).toBe(4);
    expect(r.notifications.items).toHaveLength(4);
    expect(r.mentions).toEqual({ open_count: 1, items: [expect.objectContaining({ kind: "mention", object_type: "comment", object_id: comment.comment.id, from_actor_id: bob.id.actorId })] });
    expect(r.hints.next.join(" ")).toContain("handoff_claim");

    // Read notifications and a mention leave; another actor sees only its own (the two handoffs sent to it).
    const read = await ok(w.ctx, "notification_query", { unread_only: true });
    await ok(w.ctx, "notification_mark_read", { ids: read.items.map((n: Structured) => n.id) });
    const after = await ok(w.ctx, "whoami", {});
    expect(after.notifications).toEqual({ unread_count: 0, items: [] });
    expect(after.mentions).toEqual({ open_count: 0, items: [] });
    const carolView = await ok(carol.ctx, "whoami", {});
    expect(carolView.notifications.unread_count).toBe(2);
    expect(carolView.mentions.open_count).toBe(0);
    // Carol waits on the one she claimed, not on the one the caller claimed.
    expect(carolView.handoffs_waiting.items.map((h: Structured) => h.id)).toEqual([carols.handoff.id]);
  });

  it("refuses unknown include values and unknown keys", async () => {
    const w = await world("who-bad");
    await rejects(w.ctx, "whoami", { include: ["everything"] }, "invalid_input");
    await rejects(w.ctx, "whoami", { verbose: true }, "invalid_input");
    // A refused call does not count as being seen.
    expect(await count("SELECT COUNT(*) AS n FROM actors WHERE id = ? AND last_seen_at IS NULL", w.id.actorId)).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------

describe("register_actor", () => {
  it("creates an actor with defaults and writes actor.registered once", async () => {
    const w = await world("reg-create");
    const r = await ok(w.ctx, "register_actor", { external_ref: "reviewer-bot" });
    expect(r.created).toBe(true);
    expect(r.idempotent_replay).toBeUndefined();
    expect(r.actor).toEqual({
      id: expect.stringMatching(UUID_V7),
      external_ref: "reviewer-bot",
      kind: "agent",
      display_name: "reviewer-bot",
      group: "",
      role: "",
      capabilities: [],
      created_at: T0,
      last_seen_at: "",
    });
    const rows = await activityRows(w.id.tenantId, "verb = 'actor.registered'");
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor_id: w.id.actorId, object_type: "actor", object_id: r.actor.id, at: T0, session_id: "sess-1" });

    // Every field given, camelCase aliases accepted.
    const human = await ok(w.ctx, "register_actor", {
      externalRef: "alice@example.com",
      kind: "human",
      displayName: "Alice",
      group: "web",
      role: "lead",
      capabilities: ["typescript", "review"],
    });
    expect(human.created).toBe(true);
    expect(human.actor).toMatchObject({ external_ref: "alice@example.com", kind: "human", display_name: "Alice", group: "web", role: "lead", capabilities: ["typescript", "review"] });
    const stored = await env.DB.prepare("SELECT * FROM actors WHERE id = ?").bind(human.actor.id).first<Structured>();
    expect(stored).toMatchObject({ tenant_id: w.id.tenantId, name: "alice@example.com", kind: "human", display_name: "Alice", group_name: "web", role: "lead" });
    expect(JSON.parse(stored!.capabilities as string)).toEqual(["typescript", "review"]);
  });

  it("re-registering the same external_ref resolves the same actor; update: true replaces only the fields given", async () => {
    const w = await world("reg-again");
    const first = await ok(w.ctx, "register_actor", { external_ref: "ci-bot", kind: "service" });
    w.clock.advance(MINUTE);
    // Differing fields without update: true are refused, leaving the actor as it was.
    await rejects(w.ctx, "register_actor", { external_ref: "ci-bot", kind: "service", display_name: "CI" }, "conflict");
    const second = await ok(w.ctx, "register_actor", {
      external_ref: "ci-bot",
      kind: "service",
      display_name: "CI",
      group: "infra",
      role: "builder",
      capabilities: ["deploy"],
      update: true,
    });
    expect(second.created).toBe(false);
    expect(second.idempotent_replay).toBeUndefined();
    expect(second.actor).toMatchObject({ id: first.actor.id, kind: "service", display_name: "CI", group: "infra", role: "builder", capabilities: ["deploy"], created_at: T0 });

    // Only role given: the rest is kept.
    const third = await ok(w.ctx, "register_actor", { external_ref: "ci-bot", role: "releaser", update: true });
    expect(third.created).toBe(false);
    expect(third.actor).toMatchObject({ id: first.actor.id, display_name: "CI", group: "infra", role: "releaser", capabilities: ["deploy"] });

    // A bare re-registration (another session, so not a replay) changes nothing.
    const bare = await ok(makeCtx(w.id, w.clock, "sess-2"), "register_actor", { external_ref: "ci-bot", kind: "service" });
    expect(bare.created).toBe(false);
    expect(bare.idempotent_replay).toBeUndefined();
    expect(bare.actor).toMatchObject({ id: first.actor.id, display_name: "CI", group: "infra", role: "releaser", capabilities: ["deploy"] });

    expect(await count("SELECT COUNT(*) AS n FROM actors WHERE tenant_id = ? AND name = 'ci-bot'", w.id.tenantId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'actor.registered'", w.id.tenantId)).toBe(1);
    const updates = await activityRows(w.id.tenantId, "verb = 'actor.updated'");
    expect(updates).toHaveLength(2);
    expect(updates.every((u) => u.object_id === first.actor.id)).toBe(true);

    // Re-registering with the values it already has writes nothing.
    const same = await ok(w.ctx, "register_actor", { external_ref: "ci-bot", display_name: "CI", capabilities: ["deploy"] });
    expect(same.actor).toEqual(third.actor);
    expect(await activityRows(w.id.tenantId, "verb = 'actor.updated'")).toHaveLength(2);
  });

  it("a retried request replays; a new identical request re-resolves without writing; A → B → A ends at A", async () => {
    const w = await world("reg-repeat");
    const first = await ok(w.ctx, "register_actor", { external_ref: "twin", display_name: "Twin" });
    // The client resends the call: the first result, created true, flagged as a replay.
    const retried = await ok(w.ctx, "register_actor", { external_ref: "twin", display_name: "Twin" });
    expect(retried.idempotent_replay).toBe(true);
    expect(retried.created).toBe(true);
    expect(retried.actor).toEqual(first.actor);
    // The same arguments once the retry window has passed: re-resolved, not created, nothing written.
    w.clock.advance(DERIVED_WINDOW_MS);
    const again = await ok(w.ctx, "register_actor", { external_ref: "twin", display_name: "Twin" });
    expect(again.idempotent_replay).toBeUndefined();
    expect(again.created).toBe(false);
    expect(again.actor).toEqual(first.actor);
    expect(await count("SELECT COUNT(*) AS n FROM actors WHERE tenant_id = ? AND name = 'twin'", w.id.tenantId)).toBe(1);
    // Nothing differed, so nothing was updated.
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'actor.updated'", w.id.tenantId)).toBe(0);

    for (const name of ["Twin B", "Twin"]) {
      w.clock.advance(MINUTE);
      const r = await ok(w.ctx, "register_actor", { external_ref: "twin", display_name: name, update: true });
      expect(r.idempotent_replay).toBeUndefined();
      expect(r.actor.display_name).toBe(name);
    }
    const row = await env.DB.prepare("SELECT display_name, updated_at FROM actors WHERE id = ?").bind(first.actor.id).first<Structured>();
    expect(row).toEqual({ display_name: "Twin", updated_at: at(DERIVED_WINDOW_MS + 2 * MINUTE) });
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'actor.updated'", w.id.tenantId)).toBe(2);
  });

  it("8 racing registrations of one external_ref converge on one actor, registered once", async () => {
    const w = await world("reg-race");
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => call(w.ctx, "register_actor", { external_ref: "racer", kind: "agent", idempotency_key: `race-${i}` })));
    for (const r of results) expect(r.ok, JSON.stringify(r)).toBe(true);
    expect(results.some((r) => r.idempotent_replay)).toBe(false);
    const ids = new Set(results.map((r) => r.actor.id as string));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.created === true)).toHaveLength(1);
    expect(await count("SELECT COUNT(*) AS n FROM actors WHERE tenant_id = ? AND name = 'racer'", w.id.tenantId)).toBe(1);
    const registered = await activityRows(w.id.tenantId, "verb = 'actor.registered'");
    expect(registered).toHaveLength(1);
    expect(registered[0]!.object_id).toBe([...ids][0]);
  });

  it("refuses bad input and writes nothing", async () => {
    const w = await world("reg-bad");
    for (const args of [
      { external_ref: "has space" },
      { external_ref: "tab\there" },
      { external_ref: "bell\u0007" },
      { external_ref: "line\nbreak" },
      { external_ref: "nul\u0000" },
      { external_ref: "" },
      { external_ref: "x".repeat(201) },
      { external_ref: "fine", kind: "robot" },
      { external_ref: "fine", colour: "red" },
      { external_ref: "fine", capabilities: "review" },
      { external_ref: "fine", capabilities: [""] },
      { kind: "agent" },
    ]) {
      const error = await rejects(w.ctx, "register_actor", args, "invalid_input");
      expect(error.retryable).toBe(false);
    }
    const unknownKey = await rejects(w.ctx, "register_actor", { external_ref: "fine", colour: "red" }, "invalid_input");
    expect(unknownKey.message).toContain("colour");
    expect(unknownKey.hint).toContain("external_ref");
    expect(await count("SELECT COUNT(*) AS n FROM actors WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE tenant_id = ?", w.id.tenantId)).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe("actor_query", () => {
  async function directory(name: string): Promise<World> {
    const w = await world(name);
    const reg = (args: Record<string, unknown>) => ok(w.ctx, "register_actor", args);
    await reg({ external_ref: "reviewer-x", display_name: "Xavier", group: "api", capabilities: ["review"] });
    await reg({ external_ref: "alice", kind: "human", display_name: "Alice Smith", group: "web", role: "Frontend Lead", capabilities: ["typescript", "review"] });
    await reg({ external_ref: "claude-code", group: "web", role: "coder", capabilities: ["typescript"] });
    await reg({ external_ref: "bob", kind: "human", group: "api", role: "backend", capabilities: ["go"] });
    await reg({ external_ref: "ci-bot", kind: "service", group: "infra", capabilities: ["deploy", "review"] });
    return w;
  }
  const query = async (ctx: Ctx, args: Record<string, unknown>) => names((await ok(ctx, "actor_query", args)).items);

  it("lists everyone ordered by external_ref, and filters by kind, group, capability and text", async () => {
    const w = await directory("aq-filters");
    const all = (await ok(w.ctx, "actor_query", {})).items as Structured[];
    expect(names(all)).toEqual(["agent", "alice", "bob", "ci-bot", "claude-code", "reviewer-x"]);
    expect(all.find((a) => a.external_ref === "alice")).toMatchObject({ kind: "human", display_name: "Alice Smith", group: "web", role: "Frontend Lead", capabilities: ["typescript", "review"] });

    expect(await query(w.ctx, { kind: "human" })).toEqual(["alice", "bob"]);
    expect(await query(w.ctx, { kind: "agent" })).toEqual(["agent", "claude-code", "reviewer-x"]);
    expect(await query(w.ctx, { kind: "service" })).toEqual(["ci-bot"]);
    expect(await query(w.ctx, { group: "web" })).toEqual(["alice", "claude-code"]);
    expect(await query(w.ctx, { group: "WEB" })).toEqual([]);
    expect(await query(w.ctx, { capability: "review" })).toEqual(["alice", "ci-bot", "reviewer-x"]);
    // Membership, not substring.
    expect(await query(w.ctx, { capability: "revi" })).toEqual([]);
    expect(await query(w.ctx, { capability: "typescript", kind: "agent" })).toEqual(["claude-code"]);
    // q: case-insensitive in external_ref, display name and role.
    expect(await query(w.ctx, { q: "SMITH" })).toEqual(["alice"]);
    expect(await query(w.ctx, { q: "frontend lead" })).toEqual(["alice"]);
    expect(await query(w.ctx, { q: "BoT" })).toEqual(["ci-bot"]);
    expect(await query(w.ctx, { q: "xavier" })).toEqual(["reviewer-x"]);
    expect(await query(w.ctx, { q: "code" })).toEqual(["claude-code"]);
    expect(await query(w.ctx, { q: "nobody-has-this" })).toEqual([]);
    expect(await query(w.ctx, { q: "b", group: "api" })).toEqual(["bob"]);
    // Strict inputs.
    await rejects(w.ctx, "actor_query", { team: "web" }, "invalid_input");
    await rejects(w.ctx, "actor_query", { kind: "robot" }, "invalid_input");
  });

  it("pages through every actor with no duplicates; a foreign or broken cursor is invalid_input", async () => {
    const w = await directory("aq-pages");
    const full = await query(w.ctx, {});
    for (const limit of [1, 2, 4, 6]) {
      const { items, pages } = await walk(w.ctx, "actor_query", {}, limit);
      expect(names(items)).toEqual(full);
      expect(new Set(names(items)).size).toBe(full.length);
      expect(pages).toBe(Math.ceil(full.length / limit));
    }
    // Filters hold across pages.
    const agents = await walk(w.ctx, "actor_query", { kind: "agent" }, 1);
    expect(names(agents.items)).toEqual(["agent", "claude-code", "reviewer-x"]);
    const last = await ok(w.ctx, "actor_query", { limit: 6 });
    expect(last.next_cursor).toBeUndefined();

    await rejects(w.ctx, "actor_query", { cursor: "not a cursor!" }, "invalid_input");
    await rejects(w.ctx, "actor_query", { cursor: btoa(JSON.stringify({ nope: 1 })) }, "invalid_input");
    // A project_query cursor has another shape.
    for (const title of ["One", "Two"]) await createProject(w.ctx, { title });
    const projectCursor = (await ok(w.ctx, "project_query", { limit: 1 })).next_cursor as string;
    expect(projectCursor).toBeTruthy();
    await rejects(w.ctx, "actor_query", { cursor: projectCursor }, "invalid_input");
    await rejects(w.ctx, "actor_query", { limit: 0 }, "invalid_input");
    await rejects(w.ctx, "actor_query", { limit: 201 }, "invalid_input");
  });
});

// ---------------------------------------------------------------------------------------------

describe("tenant isolation", () => {
  it("tenant B sees none of A's projects or actors, cannot use them, and may reuse A's key", async () => {
    const a = await world("iso-a", "agent-a");
    const b = await world("iso-b", "agent-b");
    const secret = await createProject(a.ctx, { title: "Secret", key: "SEC", owner_actor_id: "me" });
    const aliceA = await ok(a.ctx, "register_actor", { external_ref: "alice-a", capabilities: ["review"] });
    await insertTask(a.id.tenantId, a.id.actorId, secret.id, { seq: 1, assignee: a.id.actorId });

    expect((await ok(b.ctx, "project_query", {})).items).toEqual([]);
    expect((await ok(b.ctx, "project_query", { project_id: secret.id })).items).toEqual([]);
    expect((await ok(b.ctx, "project_query", { project_id: "SEC" })).items).toEqual([]);
    expect((await ok(b.ctx, "project_query", { q: "secret" })).items).toEqual([]);
    await rejects(b.ctx, "project_brief", { project: "SEC" }, "not_found");
    await rejects(b.ctx, "project_brief", { project: secret.id }, "not_found");
    await rejects(b.ctx, "project_update", { project_id: secret.id, patch: { title: "Pwned" } }, "not_found");
    await rejects(b.ctx, "project_create", { title: "Mine", owner_actor_id: a.id.actorId }, "not_found");
    await rejects(b.ctx, "project_create", { title: "Mine", owner_actor_id: aliceA.actor.id }, "not_found");
    await rejects(b.ctx, "project_create", { title: "Mine", owner_actor_id: "alice-a" }, "not_found");
    await rejects(b.ctx, "project_create", { title: "Mine", parent_project_id: secret.id }, "not_found");
    await rejects(b.ctx, "project_query", { owner_actor_id: a.id.actorId }, "not_found");
    expect(names((await ok(b.ctx, "actor_query", {})).items)).toEqual(["agent-b"]);
    expect((await ok(b.ctx, "actor_query", { capability: "review" })).items).toEqual([]);
    expect((await env.DB.prepare("SELECT title FROM projects WHERE id = ?").bind(secret.id).first<Structured>())!.title).toBe("Secret");

    // B's whoami: A's activity never counts; activity in B's own tenant does.
    const bWho = await ok(b.ctx, "whoami", { include: ["delta_items"] });
    expect(bWho.delta).toEqual({ since: "", activity_count: 0, items: [] });
    expect(bWho.open_tasks).toEqual([]);
    expect(bWho.tenant.slug).toBe(b.slug);
    b.clock.advance(MINUTE);
    a.clock.advance(MINUTE);
    await ok(a.ctx, "project_update", { project_id: "SEC", patch: { status: "paused" } });
    const carol = await b.other("carol");
    await createProject(carol.ctx, { title: "Carol's", key: "CAR" });
    b.clock.advance(MINUTE);
    const bWho2 = await ok(b.ctx, "whoami", { include: ["delta_items"] });
    expect(bWho2.delta.activity_count).toBe(1);
    expect(bWho2.delta.items.map((i: Structured) => i.actor_id)).toEqual([carol.id.actorId]);

    // The same key in another tenant is fine; A's key stays taken in A.
    const bsec = await createProject(b.ctx, { title: "Secret too", key: "sec" });
    expect(bsec.key).toBe("SEC");
    await rejects(a.ctx, "project_create", { title: "Again", key: "Sec" }, "key_taken");
    expect((await ok(b.ctx, "project_brief", { project: "SEC" })).project.id).toBe(bsec.id);
    expect((await ok(a.ctx, "project_brief", { project: "SEC" })).project.id).toBe(secret.id);
    expect((await ok(a.ctx, "project_brief", { project: "SEC" })).task_counts.total).toBe(1);
    expect((await ok(b.ctx, "project_brief", { project: "SEC" })).task_counts.total).toBe(0);
  });
});

describe("follow-ups", () => {
  it("register_actor updates kind on a re-registration with update: true that names it, and keeps it otherwise", async () => {
    const w = await world("ra-kind");
    const created = await ok(w.ctx, "register_actor", { external_ref: "alice" });
    expect(created.actor.kind).toBe("agent");
    const human = await ok(w.ctx, "register_actor", { external_ref: "alice", kind: "human", update: true });
    expect(human).toMatchObject({ created: false, actor: { id: created.actor.id, kind: "human" } });
    const same = await ok(w.ctx, "register_actor", { external_ref: "alice", display_name: "Alice", update: true });
    expect(same.actor.kind).toBe("human");
  });

  it("whoami's delta counts activity written in the same millisecond as the previous whoami", async () => {
    const w = await world("who-same-ms", "watcher");
    const slug = (await env.DB.prepare("SELECT slug FROM tenants WHERE id = ?").bind(w.id.tenantId).first<{ slug: string }>())!.slug;
    const other = await seedIdentity(slug, "worker");
    const otherCtx = makeCtx(other, w.clock, "sess-2");
    await ok(w.ctx, "whoami", {});
    // Same clock reading: a timestamp comparison would miss this write.
    await ok(otherCtx, "project_create", { title: "Same Millisecond", key: "SMS" });
    const delta = await ok(w.ctx, "whoami", { include: ["delta_items"] });
    expect(delta.delta.activity_count).toBe(1);
    expect(delta.delta.items[0]).toMatchObject({ verb: "project.created" });
    expect((await ok(w.ctx, "whoami", {})).delta.activity_count).toBe(0);
  });

  it("whoami's inbox counts handoffs addressed to the caller until they are acknowledged", async () => {
    const w = await world("who-inbox", "reviewer");
    expect((await ok(w.ctx, "whoami", {})).inbox.count).toBe(0);
    const insert = (hid: string, status: string) =>
      env.DB.batch([
        env.DB.prepare(`INSERT INTO handoffs (id, tenant_id, kind, title, from_actor_id, status, created_at, updated_at) VALUES (?, ?, 'review', 'Look', ?, ?, ?, ?)`).bind(
          hid,
          w.id.tenantId,
          w.id.actorId,
          status,
          T0,
          T0,
        ),
        env.DB.prepare(`INSERT INTO handoff_recipients (tenant_id, handoff_id, actor_id) VALUES (?, ?, ?)`).bind(w.id.tenantId, hid, w.id.actorId),
      ]);
    await insert("h-open", "open");
    await insert("h-done", "resolved");
    const seen = (await ok(w.ctx, "whoami", {})).inbox;
    expect(seen.count).toBe(1);
    expect(seen.items).toEqual([{ id: "h-open", kind: "review", title: "Look", status: "open", from_actor_id: w.id.actorId, created_at: T0 }]);
    await env.DB.prepare(`UPDATE handoff_recipients SET acked_at = ? WHERE handoff_id = 'h-open'`).bind(T0).run();
    expect((await ok(w.ctx, "whoami", {})).inbox.count).toBe(0);
  });
});
