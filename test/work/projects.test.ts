/**
 * The work ledger's projects room (seed 001): project_create, project_update, project_query and
 * project_brief, and derived idempotency keys on them, through the registry, against real local D1.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { keyFromTitle } from "../../src/work/projects/model";
import { DERIVED_WINDOW_MS } from "../../src/core/idempotency";
import { count, makeCtx, MINUTE, ok, type Structured } from "../support/helpers";
import { T0, at, UUID_V7, KEY_RULE, type World, world, rejects, tenantRows, activityRows, createProject, insertTask, inRun, refs, keys, walk } from "../support/identity-projects";

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

describe("follow-ups", () => {
  it("refuses a start date after the target date, on create and on update", async () => {
    const w = await world("pc-dates-order");
    await rejects(w.ctx, "project_create", { title: "Backwards", key: "BW", start_on: "2026-09-01", target_on: "2026-08-01" }, "invalid_dates");
    const p = await ok(w.ctx, "project_create", { title: "Forwards", key: "FW", start_on: "2026-08-01", target_on: "2026-09-01" });
    await rejects(w.ctx, "project_update", { project_id: p.project.id, patch: { start_on: "2026-10-01" } }, "invalid_dates");
    const moved = await ok(w.ctx, "project_update", { project_id: p.project.id, patch: { start_on: "2026-10-01", target_on: null } });
    expect(moved.project).toMatchObject({ start_on: "2026-10-01", target_on: null });
  });
});
