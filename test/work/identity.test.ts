/**
 * The work ledger's first rooms (seed 001): identity & directory (whoami, register_actor,
 * actor_query) and projects (project_create, project_update, project_query, project_brief),
 * through the registry, against real local D1. Tasks are inserted with SQL until the task
 * tools exist. Each test has its own tenant because D1 keeps rows between tests in a file.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { keyFromTitle } from "../../src/work/projects/model";
import { DERIVED_WINDOW_MS } from "../../src/core/idempotency";
import { call, count, makeCtx, MINUTE, ok, seedIdentity, TestClock, type Structured, type TestIdentity, refusedWithoutWrites } from "../support/helpers";

const T0 = "2026-06-01T12:00:00.000Z";
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const KEY_RULE = /^[A-Za-z][A-Za-z0-9]{1,15}$/;

interface World {
  slug: string;
  id: TestIdentity;
  clock: TestClock;
  ctx: Ctx;
  /** Another actor of the same tenant, sharing the clock. */
  other(name: string, sessionId?: string): Promise<{ id: TestIdentity; ctx: Ctx }>;
}

/** A fresh tenant with one caller and a clock at T0. */
async function world(name: string, actor = "agent", sessionId = "sess-1"): Promise<World> {
  const slug = `wip-${name}-${crypto.randomUUID().slice(0, 8)}`;
  const id = await seedIdentity(slug, actor);
  const clock = new TestClock(new Date(T0));
  return {
    slug,
    id,
    clock,
    ctx: makeCtx(id, clock, sessionId),
    other: async (n, s = "sess-other") => {
      const oid = await seedIdentity(slug, n);
      return { id: oid, ctx: makeCtx(oid, clock, s) };
    },
  };
}

/** Asserts a failed call with `code`, a full error body, and nothing written anywhere in the tenant. */
const rejects = (ctx: Ctx, tool: string, args: unknown, code: string): Promise<Structured> => refusedWithoutWrites(ctx, tool, args, code, () => tenantRows(ctx.tenantId));

/** Row counts (and the latest change) of everything the tools in this file write, for one tenant. */
async function tenantRows(tenantId: string) {
  return {
    actors: await count("SELECT COUNT(*) AS n FROM actors WHERE tenant_id = ?", tenantId),
    projects: await count("SELECT COUNT(*) AS n FROM projects WHERE tenant_id = ?", tenantId),
    activity: await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", tenantId),
    pendingKeys: await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE tenant_id = ? AND status = 'pending'", tenantId),
    projectState: await env.DB.prepare(
      "SELECT group_concat(id || ':' || key || ':' || title || ':' || status || ':' || ifnull(parent_project_id, '-') || ':' || updated_at, '|') AS s FROM (SELECT * FROM projects WHERE tenant_id = ? ORDER BY id)",
    )
      .bind(tenantId)
      .first<{ s: string | null }>()
      .then((r) => r?.s ?? ""),
  };
}

async function activityRows(tenantId: string, where = "1 = 1", ...params: unknown[]) {
  const rows = await env.DB.prepare(`SELECT * FROM activity WHERE tenant_id = ? AND ${where} ORDER BY seq`)
    .bind(tenantId, ...params)
    .all<Structured>();
  return rows.results;
}

async function createProject(ctx: Ctx, args: Record<string, unknown>): Promise<Structured> {
  return (await ok(ctx, "project_create", args)).project as Structured;
}

interface TaskSpec {
  seq: number;
  title?: string;
  status?: "todo" | "in_progress" | "in_review" | "done" | "cancelled";
  priority?: number;
  assignee?: string | null;
  createdAt?: string;
  labels?: string[];
  dueOn?: string | null;
  dependsOn?: string[];
}

/** Inserts a task (and its dependency edges) the way the task tools will store one. */
async function insertTask(tenantId: string, createdBy: string, projectId: string, t: TaskSpec): Promise<string> {
  const id = crypto.randomUUID();
  const created = t.createdAt ?? at(t.seq * 1000);
  await env.DB.prepare(
    `INSERT INTO tasks (id, tenant_id, project_id, seq, title, status, priority, assignee_actor_id, due_on, labels, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(
      id,
      tenantId,
      projectId,
      t.seq,
      t.title ?? `task ${t.seq}`,
      t.status ?? "todo",
      t.priority ?? 2,
      t.assignee ?? null,
      t.dueOn ?? null,
      JSON.stringify(t.labels ?? []),
      createdBy,
      created,
      created,
    )
    .run();
  for (const dep of t.dependsOn ?? []) {
    await env.DB.prepare(`INSERT INTO task_deps (tenant_id, task_id, depends_on_task_id, created_at) VALUES (?, ?, ?, ?)`).bind(tenantId, id, dep, created).run();
  }
  return id;
}

/** The context of a session whose run is `run` (the registry derives keys within a run). */
const inRun = (ctx: Ctx, run: string): Ctx => ({ ...ctx, ensureRun: async () => run });

const refs = (tasks: Structured[]) => tasks.map((t) => t.ref as string);
const keys = (items: Structured[]) => items.map((p) => p.key as string);
const names = (items: Structured[]) => items.map((a) => a.external_ref as string);

/** Walks every page of a list tool and returns all items, asserting each page's size. */
async function walk(ctx: Ctx, tool: string, args: Record<string, unknown>, limit: number): Promise<{ items: Structured[]; pages: number }> {
  const items: Structured[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await ok(ctx, tool, { ...args, limit, ...(cursor ? { cursor } : {}) });
    pages++;
    expect(r.items.length).toBeLessThanOrEqual(limit);
    if (r.next_cursor !== undefined) expect(r.items.length).toBe(limit);
    items.push(...(r.items as Structured[]));
    cursor = r.next_cursor as string | undefined;
    expect(pages).toBeLessThan(50);
  } while (cursor);
  return { items, pages };
}

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

describe("project_create", () => {
  it("creates with an explicit key and every field, and writes project.created in the same call", async () => {
    const w = await world("pc-explicit");
    const r = await ok(w.ctx, "project_create", {
      title: "Agent Ledger",
      key: "LEDG",
      summary: "The ledger",
      description: "Long text",
      status: "planned",
      start_on: "2026-06-01",
      target_on: "2028-02-29",
    });
    expect(r.idempotent_replay).toBeUndefined();
    expect(r.project).toEqual({
      id: expect.stringMatching(UUID_V7),
      key: "LEDG",
      title: "Agent Ledger",
      summary: "The ledger",
      description: "Long text",
      status: "planned",
      parent_project_id: null,
      owner_actor_id: null,
      start_on: "2026-06-01",
      target_on: "2028-02-29",
      created_by: w.id.actorId,
      created_at: T0,
      updated_at: T0,
    });
    const activity = await activityRows(w.id.tenantId);
    expect(activity).toHaveLength(1);
    expect(activity[0]).toMatchObject({
      verb: "project.created",
      object_type: "project",
      object_id: r.project.id,
      project_id: r.project.id,
      actor_id: w.id.actorId,
      at: T0,
      session_id: "sess-1",
    });
    expect(activity[0]!.summary).toContain("LEDG");

    // Defaults.
    const d = await createProject(w.ctx, { title: "  Plain  " });
    expect(d).toMatchObject({ title: "Plain", summary: "", description: "", status: "active", start_on: null, target_on: null, parent_project_id: null, owner_actor_id: null });
  });

  it("derives a key from the title, and suffixes it when taken", async () => {
    const w = await world("pc-derived");
    expect((await createProject(w.ctx, { title: "Agent Ledger" })).key).toBe("AL");
    expect((await createProject(w.ctx, { title: "Audit Log" })).key).toBe("AL2");
    expect((await createProject(w.ctx, { title: "another lab" })).key).toBe("AL3");
    expect((await createProject(w.ctx, { title: "Ledger" })).key).toBe("LEDGER");
    expect((await createProject(w.ctx, { title: "Ledgerize" })).key).toBe("LEDGER2");
    // Suffixes fill the first free slot, skipping ones taken explicitly.
    expect((await createProject(w.ctx, { title: "X", key: "AL5" })).key).toBe("AL5");
    expect((await createProject(w.ctx, { title: "Active Lane" })).key).toBe("AL4");
    expect((await createProject(w.ctx, { title: "Any Lake" })).key).toBe("AL6");
    expect(await count("SELECT COUNT(*) AS n FROM projects WHERE tenant_id = ?", w.id.tenantId)).toBe(8);
  });

  it("keyFromTitle always yields a valid key", () => {
    expect(keyFromTitle("Agent Ledger")).toBe("AL");
    expect(keyFromTitle("the quick brown fox jumps over the lazy dog")).toBe("TQBFJO");
    expect(keyFromTitle("Ledgerized")).toBe("LEDGER");
    expect(keyFromTitle("Über Café")).toBe("UC");
    for (const title of ["x", "42", "!!!", "日本語", "42 Things", "a-b", "9 lives 9 cats"]) {
      expect(keyFromTitle(title), title).toMatch(KEY_RULE);
    }
  });

  it("an explicit key already taken, in any case, is key_taken and writes nothing", async () => {
    const w = await world("pc-taken");
    await createProject(w.ctx, { title: "Agent Ledger", key: "AL" });
    const e1 = await rejects(w.ctx, "project_create", { title: "Other", key: "al" }, "key_taken");
    expect(e1.message).toContain("AL");
    await rejects(w.ctx, "project_create", { title: "Other", key: "Al" }, "key_taken");
    await rejects(w.ctx, "project_create", { title: "Other", key: "AL" }, "key_taken");
    expect(await count("SELECT COUNT(*) AS n FROM projects WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
    // A failed call is not remembered: after the key is freed, the same call succeeds.
    await env.DB.prepare("UPDATE projects SET deleted_at = ? WHERE tenant_id = ? AND key = 'AL'").bind(T0, w.id.tenantId).run();
    const again = await ok(w.ctx, "project_create", { title: "Other", key: "al" });
    expect(again.idempotent_replay).toBeUndefined();
    expect(again.project.key).toBe("AL");
  });

  it("refuses bad keys, bad dates, bad statuses and unknown keys", async () => {
    const w = await world("pc-bad");
    for (const key of ["A", "1AB", "A-B", "AB_C", "A B", "ABCDEFGHIJKLMNOPQ", "", "ÄB"]) {
      await rejects(w.ctx, "project_create", { title: "T", key }, "invalid_input");
    }
    for (const date of ["2026-02-30", "2026-13-01", "2026-6-1", "2026-06-01T00:00:00Z", "tomorrow", "2027-02-29"]) {
      await rejects(w.ctx, "project_create", { title: "T", target_on: date }, "invalid_input");
      await rejects(w.ctx, "project_create", { title: "T", start_on: date }, "invalid_input");
    }
    await rejects(w.ctx, "project_create", { title: "" }, "invalid_input");
    await rejects(w.ctx, "project_create", { title: "   " }, "invalid_input");
    await rejects(w.ctx, "project_create", { key: "OK" }, "invalid_input");
    await rejects(w.ctx, "project_create", { title: "T", status: "done" }, "invalid_input");
    await rejects(w.ctx, "project_create", { title: "T", owner: "me" }, "invalid_input");
    await rejects(w.ctx, "project_create", { title: "T", repository_id: "x" }, "invalid_input");
    expect(await count("SELECT COUNT(*) AS n FROM projects WHERE tenant_id = ?", w.id.tenantId)).toBe(0);
  });

  it('resolves owner "me" and external refs; an unknown owner or parent is not_found', async () => {
    const w = await world("pc-refs");
    const alice = await ok(w.ctx, "register_actor", { external_ref: "alice", kind: "human" });
    const mine = await createProject(w.ctx, { title: "Mine", owner_actor_id: "me" });
    expect(mine.owner_actor_id).toBe(w.id.actorId);
    const hers = await createProject(w.ctx, { title: "Hers", owner_actor_id: "alice", parent_project_id: "mine" });
    expect(hers.owner_actor_id).toBe(alice.actor.id);
    expect(hers.parent_project_id).toBe(mine.id);
    const byId = await createProject(w.ctx, { title: "By Id", owner_actor_id: alice.actor.id, parent_project_id: hers.id });
    expect(byId).toMatchObject({ owner_actor_id: alice.actor.id, parent_project_id: hers.id });

    const noOwner = await rejects(w.ctx, "project_create", { title: "T", owner_actor_id: "nobody" }, "not_found");
    expect(noOwner.message).toContain("nobody");
    await rejects(w.ctx, "project_create", { title: "T", owner_actor_id: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "project_create", { title: "T", parent_project_id: "NOPE" }, "not_found");
    await rejects(w.ctx, "project_create", { title: "T", parent_project_id: crypto.randomUUID() }, "not_found");
  });
});

// ---------------------------------------------------------------------------------------------

describe("project_update", () => {
  async function setup(name: string) {
    const w = await world(name);
    const parent = await createProject(w.ctx, { title: "Parent", key: "PAR" });
    const p = await createProject(w.ctx, {
      title: "Child",
      key: "CHI",
      summary: "s",
      target_on: "2026-09-01",
      start_on: "2026-06-01",
      owner_actor_id: "me",
      parent_project_id: parent.id,
    });
    w.clock.advance(MINUTE);
    return { w, parent, p };
  }
  const updates = (w: World, id: string) => activityRows(w.id.tenantId, "verb = 'project.updated' AND object_id = ?", id);

  it("changes only the named fields, reports them in changed, and records project.updated", async () => {
    const { w, p } = await setup("pu-patch");
    const r = await ok(w.ctx, "project_update", { project_id: p.id, patch: { title: "Child, renamed", status: "paused" } });
    expect(r.changed.sort()).toEqual(["status", "title"]);
    expect(r.project).toEqual({ ...p, title: "Child, renamed", status: "paused", updated_at: at(MINUTE) });
    const rows = await updates(w, p.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor_id: w.id.actorId, project_id: p.id, at: at(MINUTE), object_type: "project" });
    expect(JSON.parse(rows[0]!.metadata as string).changed.sort()).toEqual(["status", "title"]);

    // By key, case-insensitively; a field that already has the value is not "changed".
    w.clock.advance(MINUTE);
    const r2 = await ok(w.ctx, "project_update", { project_id: "chi", patch: { summary: "s", description: "now described", target_on: "2026-10-01" } });
    expect(r2.changed.sort()).toEqual(["description", "target_on"]);
    expect(r2.project).toMatchObject({ summary: "s", description: "now described", target_on: "2026-10-01", title: "Child, renamed", updated_at: at(2 * MINUTE) });
    expect(await updates(w, p.id)).toHaveLength(2);
  });

  it("explicit null clears target_on, owner and parent", async () => {
    const { w, p } = await setup("pu-null");
    const r = await ok(w.ctx, "project_update", { project_id: p.id, patch: { target_on: null, owner_actor_id: null, parent_project_id: null } });
    expect(r.changed.sort()).toEqual(["owner_actor_id", "parent_project_id", "target_on"]);
    expect(r.project).toMatchObject({ target_on: null, owner_actor_id: null, parent_project_id: null, start_on: "2026-06-01", summary: "s" });
    const row = await env.DB.prepare("SELECT target_on, owner_actor_id, parent_project_id, start_on FROM projects WHERE id = ?").bind(p.id).first<Structured>();
    expect(row).toEqual({ target_on: null, owner_actor_id: null, parent_project_id: null, start_on: "2026-06-01" });

    // And set again: owner "me", parent by key.
    const back = await ok(w.ctx, "project_update", { project_id: p.id, patch: { owner_actor_id: "me", parent_project_id: "PAR", start_on: null } });
    expect(back.changed.sort()).toEqual(["owner_actor_id", "parent_project_id", "start_on"]);
    expect(back.project).toMatchObject({ owner_actor_id: w.id.actorId, parent_project_id: p.parent_project_id, start_on: null });
  });

  it("a no-op patch reports changed [] and writes no activity", async () => {
    const { w, p } = await setup("pu-noop");
    const before = await tenantRows(w.id.tenantId);
    const r = await ok(w.ctx, "project_update", { project_id: p.id, patch: { title: "Child", summary: "s", owner_actor_id: "me", parent_project_id: "par" } });
    expect(r.changed).toEqual([]);
    expect(r.project).toEqual(p);
    const after = await tenantRows(w.id.tenantId);
    expect(after).toEqual(before);
  });

  it("a patch set back and forth in one session applies every time; an identical retry changes nothing", async () => {
    const { w, p } = await setup("pu-toggle");
    const paused = await ok(w.ctx, "project_update", { project_id: p.id, patch: { status: "paused" } });
    expect(paused.project.status).toBe("paused");
    // The client resends the call: a replay.
    const resent = await ok(w.ctx, "project_update", { project_id: p.id, patch: { status: "paused" } });
    expect(resent.idempotent_replay).toBe(true);
    expect(resent.changed).toEqual(["status"]);
    // The same patch after the retry window: nothing to change, no activity.
    w.clock.advance(DERIVED_WINDOW_MS);
    const retry = await ok(w.ctx, "project_update", { project_id: p.id, patch: { status: "paused" } });
    expect(retry.idempotent_replay).toBeUndefined();
    expect(retry.changed).toEqual([]);
    expect(retry.project).toEqual(paused.project);
    expect(await updates(w, p.id)).toHaveLength(1);

    // Paused, active, paused again within a minute or two: the third is a new call, not a retry of the first.
    w.clock.advance(MINUTE);
    const active = await ok(w.ctx, "project_update", { project_id: p.id, patch: { status: "active" } });
    expect(active.project.status).toBe("active");
    w.clock.advance(MINUTE);
    const pausedAgain = await ok(w.ctx, "project_update", { project_id: p.id, patch: { status: "paused" } });
    expect(pausedAgain.idempotent_replay).toBeUndefined();
    expect(pausedAgain.changed).toEqual(["status"]);
    expect(pausedAgain.project).toMatchObject({ status: "paused", updated_at: at(DERIVED_WINDOW_MS + 3 * MINUTE) });
    expect(await count("SELECT COUNT(*) AS n FROM projects WHERE id = ? AND status = 'paused'", p.id)).toBe(1);
    expect(await updates(w, p.id)).toHaveLength(3);
  });

  it("refuses an empty patch, unknown patch keys and bad values, changing nothing", async () => {
    const { w, p } = await setup("pu-bad");
    await rejects(w.ctx, "project_update", { project_id: p.id, patch: {} }, "invalid_input");
    await rejects(w.ctx, "project_update", { project_id: p.id }, "invalid_input");
    const unknown = await rejects(w.ctx, "project_update", { project_id: p.id, patch: { title: "ok", colour: "red" } }, "invalid_input");
    expect(unknown.message).toContain("colour");
    await rejects(w.ctx, "project_update", { project_id: p.id, patch: { key: "NEW" } }, "invalid_input");
    await rejects(w.ctx, "project_update", { project_id: p.id, patch: { status: "done" } }, "invalid_input");
    await rejects(w.ctx, "project_update", { project_id: p.id, patch: { target_on: "2026-02-30" } }, "invalid_input");
    await rejects(w.ctx, "project_update", { project_id: p.id, patch: { title: null } }, "invalid_input");
    await rejects(w.ctx, "project_update", { project_id: p.id, patch: { title: "" } }, "invalid_input");
    await rejects(w.ctx, "project_update", { project_id: p.id, patch: { title: "x" }, extra: 1 }, "invalid_input");
    await rejects(w.ctx, "project_update", { project_id: "NOPE", patch: { title: "x" } }, "not_found");
    await rejects(w.ctx, "project_update", { project_id: p.id, patch: { owner_actor_id: "ghost" } }, "not_found");
    await rejects(w.ctx, "project_update", { project_id: p.id, patch: { parent_project_id: "GHOST" } }, "not_found");
  });

  it("refuses a parent cycle (self, direct or deeper) with code cycle and changes nothing", async () => {
    const w = await world("pu-cycle");
    const a = await createProject(w.ctx, { title: "A", key: "AAA" });
    const b = await createProject(w.ctx, { title: "B", key: "BBB" });
    const c = await createProject(w.ctx, { title: "C", key: "CCC" });
    w.clock.advance(MINUTE);
    const self = await rejects(w.ctx, "project_update", { project_id: a.id, patch: { parent_project_id: a.id } }, "cycle");
    expect(self.hint.length).toBeGreaterThan(0);
    await rejects(w.ctx, "project_update", { project_id: "aaa", patch: { parent_project_id: "AAA" } }, "cycle");

    // A under B: fine. Then B under A: a cycle.
    expect((await ok(w.ctx, "project_update", { project_id: a.id, patch: { parent_project_id: b.id } })).changed).toEqual(["parent_project_id"]);
    await rejects(w.ctx, "project_update", { project_id: b.id, patch: { parent_project_id: a.id } }, "cycle");
    // B under C: fine. Then C under A (A → B → C → A): a cycle, even in a patch with other fields.
    await ok(w.ctx, "project_update", { project_id: b.id, patch: { parent_project_id: c.id } });
    await rejects(w.ctx, "project_update", { project_id: c.id, patch: { parent_project_id: a.id, title: "C2" } }, "cycle");
    const c2 = await env.DB.prepare("SELECT title, parent_project_id FROM projects WHERE id = ?").bind(c.id).first<Structured>();
    expect(c2).toEqual({ title: "C", parent_project_id: null });
    // A sibling move stays allowed: C under a new root D.
    const d = await createProject(w.ctx, { title: "D", key: "DDD" });
    expect((await ok(w.ctx, "project_update", { project_id: c.id, patch: { parent_project_id: d.id } })).project.parent_project_id).toBe(d.id);
  });
});

// ---------------------------------------------------------------------------------------------

describe("project_query", () => {
  async function catalogue(name: string) {
    const w = await world(name);
    await ok(w.ctx, "register_actor", { external_ref: "alice", kind: "human" });
    const made: Structured[] = [];
    const specs: Array<Record<string, unknown>> = [
      { title: "Alpha Service", owner_actor_id: "me" },
      { title: "Beta Tools", status: "paused" },
      { title: "Gamma", summary: "Full text SEARCH for everything", status: "planned", owner_actor_id: "alice" },
      { title: "Delta Works", status: "completed" },
      { title: "Epsilon Ledger" },
    ];
    for (const spec of specs) {
      made.push(await createProject(w.ctx, spec));
      w.clock.advance(MINUTE);
    }
    return { w, made };
  }

  it("lists newest first and filters by status, q, owner and project id or key", async () => {
    const { w, made } = await catalogue("pq-filters");
    const [alpha, beta] = made as [Structured, Structured];
    const q = async (args: Record<string, unknown>) => keys((await ok(w.ctx, "project_query", args)).items);
    expect(keys(made)).toEqual(["AS", "BT", "GAMMA", "DW", "EL"]);
    const all = await ok(w.ctx, "project_query", {});
    expect(keys(all.items)).toEqual(["EL", "DW", "GAMMA", "BT", "AS"]);
    expect(all.items[4]).toEqual(alpha);
    expect(all.next_cursor).toBeUndefined();
    expect(all.items.every((p: Structured) => !("task_counts" in p))).toBe(true);

    expect(await q({ status: ["paused", "planned"] })).toEqual(["GAMMA", "BT"]);
    expect(await q({ status: ["completed"] })).toEqual(["DW"]);
    expect(await q({ status: ["archived"] })).toEqual([]);
    expect(await q({ q: "search" })).toEqual(["GAMMA"]);
    expect(await q({ q: "LEDGER" })).toEqual(["EL"]);
    expect(await q({ q: "dw" })).toEqual(["DW"]);
    // "a" is in every title but Epsilon Ledger's.
    expect(await q({ q: "a" })).toEqual(["DW", "GAMMA", "BT", "AS"]);
    expect(await q({ owner_actor_id: "me" })).toEqual(["AS"]);
    expect(await q({ owner_actor_id: "alice" })).toEqual(["GAMMA"]);
    expect(await q({ owner_actor_id: "alice", status: ["active"] })).toEqual([]);
    await rejects(w.ctx, "project_query", { owner_actor_id: "ghost" }, "not_found");
    expect(await q({ project_id: beta.id })).toEqual(["BT"]);
    expect(await q({ project_id: "bt" })).toEqual(["BT"]);
    expect(await q({ project_id: "nope" })).toEqual([]);
    await rejects(w.ctx, "project_query", { status: ["done"] }, "invalid_input");
    await rejects(w.ctx, "project_query", { detail: "everything" }, "invalid_input");
  });

  it("leaves out soft-deleted projects, whose key is free again", async () => {
    const { w, made } = await catalogue("pq-deleted");
    const beta = made[1]!;
    await env.DB.prepare("UPDATE projects SET deleted_at = ? WHERE id = ?").bind(T0, beta.id).run();
    expect(keys((await ok(w.ctx, "project_query", {})).items)).toEqual(["EL", "DW", "GAMMA", "AS"]);
    expect((await ok(w.ctx, "project_query", { project_id: beta.id })).items).toEqual([]);
    await rejects(w.ctx, "project_brief", { project: "BT" }, "not_found");
    const reborn = await createProject(w.ctx, { title: "Beta Again", key: "bt" });
    expect(reborn.key).toBe("BT");
    expect((await ok(w.ctx, "project_brief", { project: "BT" })).project.id).toBe(reborn.id);
  });

  it("detail full adds task_counts from the project's tasks", async () => {
    const { w, made } = await catalogue("pq-full");
    const alpha = made[0]!;
    const { tenantId, actorId } = w.id;
    const blocker = await insertTask(tenantId, actorId, alpha.id, { seq: 1, status: "in_progress" });
    await insertTask(tenantId, actorId, alpha.id, { seq: 2 });
    await insertTask(tenantId, actorId, alpha.id, { seq: 3, dependsOn: [blocker] });
    const done = await insertTask(tenantId, actorId, alpha.id, { seq: 4, status: "done" });
    await insertTask(tenantId, actorId, alpha.id, { seq: 5, status: "in_review", dependsOn: [done] });
    await insertTask(tenantId, actorId, alpha.id, { seq: 6, status: "cancelled", dependsOn: [blocker] });
    await insertTask(tenantId, actorId, made[1]!.id, { seq: 1, status: "todo" });

    const r = await ok(w.ctx, "project_query", { detail: "full" });
    const byKey = new Map((r.items as Structured[]).map((p) => [p.key as string, p]));
    expect(byKey.get("AS")!.task_counts).toEqual({
      total: 6,
      by_status: { todo: 2, in_progress: 1, in_review: 1, done: 1, cancelled: 1 },
      ready: 3,
      blocked: 1,
    });
    expect(byKey.get("BT")!.task_counts).toEqual({ total: 1, by_status: { todo: 1, in_progress: 0, in_review: 0, done: 0, cancelled: 0 }, ready: 1, blocked: 0 });
    expect(byKey.get("EL")!.task_counts).toEqual({ total: 0, by_status: { todo: 0, in_progress: 0, in_review: 0, done: 0, cancelled: 0 }, ready: 0, blocked: 0 });
    // The rest of the row is the summary row.
    const { task_counts: _tc, ...rest } = byKey.get("AS")!;
    expect(rest).toEqual(alpha);
  });

  it("pages completely and without duplicates, also through projects created in the same instant", async () => {
    const { w } = await catalogue("pq-pages");
    // Four more in the same millisecond: the id breaks the tie.
    for (const title of ["Same One", "Same Two", "Same Three", "Same Four"]) await createProject(w.ctx, { title });
    const full = keys((await ok(w.ctx, "project_query", {})).items);
    expect(full).toHaveLength(9);
    for (const limit of [1, 2, 3, 9]) {
      const { items, pages } = await walk(w.ctx, "project_query", {}, limit);
      expect(keys(items)).toEqual(full);
      expect(new Set(keys(items)).size).toBe(9);
      expect(pages).toBe(Math.ceil(9 / limit));
    }
    const filtered = await walk(w.ctx, "project_query", { status: ["active"], detail: "full" }, 2);
    expect(filtered.items.every((p) => p.status === "active" && p.task_counts)).toBe(true);
    expect(filtered.items).toHaveLength(6);

    await rejects(w.ctx, "project_query", { cursor: "%%%" }, "invalid_input");
    const actorCursor = (await ok(w.ctx, "actor_query", { limit: 1 })).next_cursor as string;
    expect(actorCursor).toBeTruthy();
    await rejects(w.ctx, "project_query", { cursor: actorCursor }, "invalid_input");
  });
});

// ---------------------------------------------------------------------------------------------

describe("project_brief", () => {
  it("orients on a project by key or id: counts, top open tasks, recent activity", async () => {
    const w = await world("pb-brief");
    const bob = await w.other("bob");
    const p = await createProject(w.ctx, { title: "Brief Project", key: "BP", summary: "what it is" });
    const other = await createProject(w.ctx, { title: "Elsewhere", key: "ELSE" });
    const { tenantId, actorId } = w.id;
    const b1 = await insertTask(tenantId, actorId, p.id, { seq: 1, priority: 2 });
    await insertTask(tenantId, actorId, p.id, { seq: 2, priority: 0, dependsOn: [b1] });
    await insertTask(tenantId, actorId, p.id, { seq: 3, priority: 1, status: "in_progress", assignee: bob.id.actorId });
    await insertTask(tenantId, actorId, p.id, { seq: 4, priority: 1 });
    const b5 = await insertTask(tenantId, actorId, p.id, { seq: 5, priority: 0, status: "done" });
    await insertTask(tenantId, actorId, p.id, { seq: 6, priority: 3, status: "cancelled" });
    await insertTask(tenantId, actorId, p.id, { seq: 7, priority: 4, status: "in_review", dependsOn: [b5] });
    await insertTask(tenantId, actorId, other.id, { seq: 1, priority: 0 });

    for (const [i, status] of (["paused", "active", "completed"] as const).entries()) {
      w.clock.advance(MINUTE);
      await ok(i === 1 ? bob.ctx : w.ctx, "project_update", { project_id: "BP", patch: { status } });
    }
    await ok(w.ctx, "project_update", { project_id: "ELSE", patch: { summary: "noise" } });

    const brief = await ok(w.ctx, "project_brief", { project: "bp" });
    expect(brief.project).toMatchObject({ id: p.id, key: "BP", status: "completed", summary: "what it is" });
    expect(brief.task_counts).toEqual({ total: 7, by_status: { todo: 3, in_progress: 1, in_review: 1, done: 1, cancelled: 1 }, ready: 4, blocked: 1 });
    expect(refs(brief.top_open_tasks)).toEqual(["BP-3", "BP-4", "BP-1", "BP-7", "BP-2"]);
    expect(brief.top_open_tasks.map((t: Structured) => t.state)).toEqual(["ready", "ready", "ready", "ready", "blocked"]);
    expect(brief.top_open_tasks[0]).toMatchObject({ status: "in_progress", assignee_actor_id: bob.id.actorId, project_id: p.id });
    expect(brief.recent_decisions).toEqual([]);
    expect(brief.knowledge).toEqual([]);
    expect(brief.repositories).toEqual([]);
    expect(brief.recent_activity.map((a: Structured) => [a.verb, a.at, a.actor_id])).toEqual([
      ["project.updated", at(3 * MINUTE), actorId],
      ["project.updated", at(2 * MINUTE), bob.id.actorId],
      ["project.updated", at(MINUTE), actorId],
      ["project.created", T0, actorId],
    ]);
    expect(brief.recent_activity.every((a: Structured) => a.object_id === p.id)).toBe(true);

    const byId = await ok(w.ctx, "project_brief", { project: p.id });
    expect(byId).toEqual(brief);

    const small = await ok(w.ctx, "project_brief", { project: "BP", max_tasks: 2, max_activity: 1 });
    expect(refs(small.top_open_tasks)).toEqual(["BP-3", "BP-4"]);
    expect(small.recent_activity).toEqual([brief.recent_activity[0]]);
    expect(small.task_counts).toEqual(brief.task_counts);
    const none = await ok(w.ctx, "project_brief", { project: "BP", max_tasks: 0, max_activity: 0 });
    expect(none.top_open_tasks).toEqual([]);
    expect(none.recent_activity).toEqual([]);
    expect(none.task_counts.total).toBe(7);

    await rejects(w.ctx, "project_brief", { project: "BP", max_tasks: 51 }, "invalid_input");
    await rejects(w.ctx, "project_brief", { project: "BP", max_activity: -1 }, "invalid_input");
  });

  it("a project with no tasks has zero counts; an unknown project is not_found", async () => {
    const w = await world("pb-empty");
    await createProject(w.ctx, { title: "Empty", key: "EMPTY" });
    const brief = await ok(w.ctx, "project_brief", { project: "Empty" });
    expect(brief.task_counts).toEqual({ total: 0, by_status: { todo: 0, in_progress: 0, in_review: 0, done: 0, cancelled: 0 }, ready: 0, blocked: 0 });
    expect(brief.top_open_tasks).toEqual([]);
    expect(brief.recent_activity).toHaveLength(1);
    const e = await rejects(w.ctx, "project_brief", { project: "NOPE" }, "not_found");
    expect(e.hint).toContain("project_query");
    await rejects(w.ctx, "project_brief", { project: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "project_brief", { project: "" }, "invalid_input");
    await rejects(w.ctx, "project_brief", {}, "invalid_input");
  });
});

// ---------------------------------------------------------------------------------------------

describe("derived idempotency keys", () => {
  it("an identical call without a key replays within the window, with or without a session, however spelled", async () => {
    const w = await world("idem-create");
    const first = await ok(w.ctx, "project_create", { title: "Replay Me", key: "RM" });
    expect(first.idempotent_replay).toBeUndefined();
    w.clock.advance(MINUTE);
    const replay = await ok(w.ctx, "project_create", { title: "Replay Me", key: "RM" });
    expect(replay.idempotent_replay).toBe(true);
    expect(replay.project).toEqual(first.project);
    // A stateless request (no session) is the same call from the same actor.
    const stateless = await ok(makeCtx(w.id, w.clock, ""), "project_create", { title: "Replay Me", key: "RM" });
    expect(stateless.idempotent_replay).toBe(true);
    expect(await count("SELECT COUNT(*) AS n FROM projects WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'project.created'", w.id.tenantId)).toBe(1);

    // The camelCase spelling of a call is the same call; different arguments are another call.
    const owned = await createProject(w.ctx, { title: "Owned", ownerActorId: "me" });
    const ownedAgain = await ok(w.ctx, "project_create", { title: "Owned", owner_actor_id: "me" });
    expect(ownedAgain.idempotent_replay).toBe(true);
    expect(ownedAgain.project.id).toBe(owned.id);
    const notOwned = await createProject(w.ctx, { title: "Owned" });
    expect(notOwned.id).not.toBe(owned.id);

    // Once the window has passed, the same call is a new one: its explicit project key is taken.
    w.clock.advance(DERIVED_WINDOW_MS);
    await rejects(w.ctx, "project_create", { title: "Replay Me", key: "RM" }, "key_taken");
    expect(await count("SELECT COUNT(*) AS n FROM projects WHERE tenant_id = ?", w.id.tenantId)).toBe(3);
  });

  it("an identical call is a new one after another call of the tool, after the window, or in another run", async () => {
    const w = await world("idem-new");
    const d1 = await createProject(w.ctx, { title: "Replay Derived" });
    w.clock.advance(DERIVED_WINDOW_MS);
    const d2 = await createProject(w.ctx, { title: "Replay Derived" });
    await createProject(w.ctx, { title: "Between" });
    const d3 = await createProject(w.ctx, { title: "Replay Derived" });
    expect([d1.key, d2.key, d3.key]).toEqual(["RD", "RD2", "RD3"]);
    // A retry of the newest replays it.
    expect((await ok(w.ctx, "project_create", { title: "Replay Derived" })).project.id).toBe(d3.id);

    // Each session's run derives its own keys; a run's retry replays within it.
    const runA = await createProject(inRun(w.ctx, "run-a"), { title: "Per Run" });
    const runB = await createProject(inRun(w.ctx, "run-b"), { title: "Per Run" });
    expect(runB.id).not.toBe(runA.id);
    const retryA = await ok(inRun(w.ctx, "run-a"), "project_create", { title: "Per Run" });
    expect(retryA).toMatchObject({ idempotent_replay: true, project: { id: runA.id } });
    expect(await count("SELECT COUNT(*) AS n FROM projects WHERE tenant_id = ?", w.id.tenantId)).toBe(6);
  });

  it("an identical call after anyone wrote to what the first one touched is a new call, not a stale replay", async () => {
    const w = await world("idem-touched");
    const bob = await w.other("bob");
    const p = await createProject(w.ctx, { title: "Touched" });
    const paused = { project_id: p.id, patch: { status: "paused" } };
    await ok(w.ctx, "project_update", paused);
    await ok(bob.ctx, "project_update", { project_id: p.id, patch: { status: "active" } });
    const again = await ok(w.ctx, "project_update", paused);
    expect(again.idempotent_replay).toBeUndefined();
    expect(again.project.status).toBe("paused");
    expect(await count("SELECT COUNT(*) AS n FROM projects WHERE id = ? AND status = 'paused'", p.id)).toBe(1);
    // A write elsewhere in the tenant leaves the retry a retry.
    await createProject(bob.ctx, { title: "Elsewhere" });
    expect((await ok(w.ctx, "project_update", paused)).idempotent_replay).toBe(true);
  });

  it("an explicit idempotency_key replays across sessions, and a different call with it is refused", async () => {
    const w = await world("idem-explicit");
    const first = await ok(w.ctx, "project_create", { title: "Keyed", idempotency_key: "k-1" });
    const other = await ok(makeCtx(w.id, w.clock, "sess-2"), "project_create", { title: "Keyed", idempotency_key: "k-1" });
    expect(other.idempotent_replay).toBe(true);
    expect(other.project.id).toBe(first.project.id);
    await rejects(w.ctx, "project_create", { title: "Something else", idempotency_key: "k-1" }, "idempotency_key_reused");
    // Another actor's key space is its own.
    const bob = await w.other("bob");
    const bobs = await ok(bob.ctx, "project_create", { title: "Keyed", idempotency_key: "k-1" });
    expect(bobs.idempotent_replay).toBeUndefined();
    expect(bobs.project.key).toBe("KEYED2");
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

  it("refuses a start date after the target date, on create and on update", async () => {
    const w = await world("pc-dates-order");
    await rejects(w.ctx, "project_create", { title: "Backwards", key: "BW", start_on: "2026-09-01", target_on: "2026-08-01" }, "invalid_dates");
    const p = await ok(w.ctx, "project_create", { title: "Forwards", key: "FW", start_on: "2026-08-01", target_on: "2026-09-01" });
    await rejects(w.ctx, "project_update", { project_id: p.project.id, patch: { start_on: "2026-10-01" } }, "invalid_dates");
    const moved = await ok(w.ctx, "project_update", { project_id: p.project.id, patch: { start_on: "2026-10-01", target_on: null } });
    expect(moved.project).toMatchObject({ start_on: "2026-10-01", target_on: null });
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
