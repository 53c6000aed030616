/**
 * The tasks room of the work ledger (seed 001): task_create, task_create_many, task_update (state
 * machine, optimistic concurrency, done gates, review handoffs), task_assign, task_query,
 * task_get, task_link, task_claim and task_release, the ClaimsDO lease alarm, and the cron
 * maintenance jobs, through the registry against real local D1 and Durable Objects.
 *
 * Time: the default clock sits in the future (T0, 2030), so leases handed out by these tests
 * never run out in real time and no Durable Object alarm fires under them. Tests about expiry
 * place the clock in the past on purpose. Each test has its own tenant because D1 keeps rows
 * between the tests of this file.
 */
import { createExecutionContext, createScheduledController, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { FREQUENT_CRON, jobsFor, runMaintenance } from "../../../src/cron/maintenance";
import type { Env } from "../../../src/env";
import worker from "../../../src/index";
import type { Ctx } from "../../../src/core/context";
import { DERIVED_WINDOW_MS } from "../../../src/core/idempotency";
import { claimCandidate, type ClaimScope } from "../../../src/work/claims/model";
import { listTaskSummaries, type TaskFilter } from "../../../src/work/tasks/model";
import { count, DAY, MINUTE, ok, type Structured, refusedWithoutWrites, newWorld, type World } from "../../support/helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const at = (ms: number, base = T0) => new Date(Date.parse(base) + ms).toISOString();
const SECOND = 1000;
const HOUR = 60 * MINUTE;
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A fresh tenant with one caller and a clock at `start`. */
const world = (name: string, start = T0, actor = "agent"): Promise<World> => newWorld(`wt-${name}`, { start, actor });

async function project(ctx: Ctx, key: string, extra: Record<string, unknown> = {}): Promise<Structured> {
  return (await ok(ctx, "project_create", { title: `Project ${key}`, key, ...extra })).project as Structured;
}

async function create(ctx: Ctx, projectId: string, args: Record<string, unknown> = {}): Promise<Structured> {
  return (await ok(ctx, "task_create", { project_id: projectId, title: "a task", ...args })).task as Structured;
}

async function many(ctx: Ctx, projectId: string, tasks: Array<Record<string, unknown>>): Promise<Structured> {
  return ok(ctx, "task_create_many", { project_id: projectId, tasks });
}

async function get(ctx: Ctx, ref: string): Promise<Structured> {
  return (await ok(ctx, "task_get", { task_id: ref })).task as Structured;
}

async function update(ctx: Ctx, ref: string, patch: Record<string, unknown>): Promise<Structured> {
  return ok(ctx, "task_update", { task_id: ref, patch });
}

async function query(ctx: Ctx, args: Record<string, unknown>): Promise<Structured[]> {
  return (await ok(ctx, "task_query", { limit: 200, ...args })).items as Structured[];
}

async function claim(ctx: Ctx, args: Record<string, unknown> = {}): Promise<Structured> {
  return ok(ctx, "task_claim", args);
}

async function taskRow(id: string): Promise<Structured> {
  const row = await env.DB.prepare("SELECT * FROM tasks WHERE id = ?").bind(id).first<Structured>();
  if (!row) throw new Error(`no task row ${id}`);
  return row;
}

async function activityRows(tenantId: string, where = "1 = 1", ...params: unknown[]): Promise<Structured[]> {
  const rows = await env.DB.prepare(`SELECT * FROM activity WHERE tenant_id = ? AND ${where} ORDER BY seq`)
    .bind(tenantId, ...params)
    .all<Structured>();
  return rows.results;
}

const verbsOf = async (tenantId: string, taskId: string) => (await activityRows(tenantId, "object_id = ?", taskId)).map((a) => a.verb as string);
const refs = (items: Structured[]) => items.map((t) => t.ref as string);
const ids = (items: Structured[]) => items.map((t) => t.id as string);
const sorted = (xs: string[]) => [...xs].sort();

/** Everything the task tools write for one tenant, so a refused call can be shown to write nothing. */
async function tenantState(tenantId: string) {
  const text = (sql: string) =>
    env.DB.prepare(sql)
      .bind(tenantId)
      .first<{ s: string | null }>()
      .then((r) => r?.s ?? "");
  return {
    tasks: await text(
      `SELECT group_concat(id || ':' || seq || ':' || title || ':' || status || ':' || priority || ':' || ifnull(assignee_actor_id, '-') || ':' ||
         ifnull(reviewer_actor_id, '-') || ':' || ifnull(due_on, '-') || ':' || ifnull(parent_task_id, '-') || ':' || labels || ':' ||
         ifnull(lease_expires_at, '-') || ':' || ifnull(done_at, '-') || ':' || updated_at, '|') AS s FROM (SELECT * FROM tasks WHERE tenant_id = ? ORDER BY id)`,
    ),
    deps: await text(`SELECT group_concat(task_id || '>' || depends_on_task_id, '|') AS s FROM (SELECT * FROM task_deps WHERE tenant_id = ? ORDER BY task_id, depends_on_task_id)`),
    counters: await text(`SELECT group_concat(key || ':' || task_seq, '|') AS s FROM (SELECT * FROM projects WHERE tenant_id = ? ORDER BY id)`),
    activity: await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", tenantId),
    handoffs: await count("SELECT COUNT(*) AS n FROM handoffs WHERE tenant_id = ?", tenantId),
    recipients: await count("SELECT COUNT(*) AS n FROM handoff_recipients WHERE tenant_id = ?", tenantId),
    pendingKeys: await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE tenant_id = ? AND status = 'pending'", tenantId),
  };
}

/** Asserts a failed call with `code`, a full error body, and nothing written anywhere in the tenant. */
const rejects = (ctx: Ctx, tool: string, args: unknown, code: string): Promise<Structured> => refusedWithoutWrites(ctx, tool, args, code, () => tenantState(ctx.tenantId));

/** A D1 that answers every statement with its query plan (EXPLAIN QUERY PLAN) instead of running it. */
const explaining = { prepare: (q: string) => env.DB.prepare(`EXPLAIN QUERY PLAN ${q}`) } as unknown as D1Database;
const steps = (plan: unknown[]) => (plan as Array<{ detail: string }>).map((r) => r.detail);

const claimsStub = (tenantId: string, projectId: string | null) => env.CLAIMS.get(env.CLAIMS.idFromName(`${tenantId}:${projectId ?? "*"}`));

async function insertCodeRef(tenantId: string, taskId: string, createdBy: string, deletedAt: string | null = null, objectType = "task"): Promise<void> {
  await env.DB.prepare(`INSERT INTO code_refs (id, tenant_id, object_type, object_id, ref_type, sha, created_by, created_at, deleted_at) VALUES (?, ?, ?, ?, 'commit', 'abc123', ?, ?, ?)`)
    .bind(crypto.randomUUID(), tenantId, objectType, taskId, createdBy, T0, deletedAt)
    .run();
}

async function insertAttachment(tenantId: string, taskId: string, createdBy: string, deletedAt: string | null = null): Promise<void> {
  await env.DB.prepare(
    `INSERT INTO attachments (id, tenant_id, object_type, object_id, kind, url, created_by, created_at, deleted_at) VALUES (?, ?, 'task', ?, 'link', 'https://example.test/ci', ?, ?, ?)`,
  )
    .bind(crypto.randomUUID(), tenantId, taskId, createdBy, T0, deletedAt)
    .run();
}

// ---------------------------------------------------------------------------------------------

describe("task_create", () => {
  it("numbers tasks per project (across task_create_many too), applies the defaults and records task.created", async () => {
    const w = await world("create-basic");
    const api = await project(w.ctx, "API");
    const web = await project(w.ctx, "WEB");

    const first = await create(w.ctx, api.id as string, { title: "First" });
    expect(first).toEqual({
      id: expect.stringMatching(UUID_V7),
      ref: "API-1",
      project_id: api.id,
      title: "First",
      body: "",
      status: "todo",
      state: "ready",
      priority: 2,
      assignee_actor_id: null,
      reviewer_actor_id: null,
      due_on: null,
      parent_task_id: null,
      labels: [],
      acceptance_criteria: [],
      requires_evidence: false,
      depends_on: [],
      lease_expires_at: null,
      claimed_at: null,
      created_by: w.id.actorId,
      created_at: T0,
      updated_at: T0,
      done_at: null,
    });
    expect((await create(w.ctx, "api", { title: "Second" })).ref).toBe("API-2");
    expect((await create(w.ctx, "WEB", { title: "Web one" })).ref).toBe("WEB-1");
    const batch = await many(w.ctx, api.id as string, [{ title: "Third" }, { title: "Fourth" }]);
    expect(batch.refs).toEqual(["API-3", "API-4"]);
    expect((await create(w.ctx, api.id as string, { title: "Fifth" })).ref).toBe("API-5");
    expect((await many(w.ctx, web.id as string, [{ title: "Web two" }])).refs).toEqual(["WEB-2"]);

    // Every creation left exactly one task.created row, attributed and placed in its project.
    const created = await activityRows(w.id.tenantId, "verb = 'task.created'");
    expect(created).toHaveLength(7);
    const firstRow = created.find((a) => a.object_id === first.id)!;
    expect(firstRow).toMatchObject({ object_type: "task", project_id: api.id, actor_id: w.id.actorId, at: T0, session_id: "sess-1" });
    expect(new Set(created.map((a) => a.object_id)).size).toBe(7);
    expect(await count("SELECT task_seq AS n FROM projects WHERE id = ?", api.id)).toBe(5);
  });

  it('resolves "me" and external_refs, wires depends_on (state blocked) and parent_task_id, accepts camelCase', async () => {
    const w = await world("create-refs");
    const bob = await w.other("bob");
    const p = await project(w.ctx, "CORE");
    const dep = await create(w.ctx, "CORE", { title: "Dependency" });
    const parent = await create(w.ctx, "CORE", { title: "Parent" });

    const t = await create(w.ctx, "CORE", {
      title: "  Child  ",
      body: "details",
      assignee_actor_id: "me",
      reviewerActorId: "bob",
      priority: 0,
      due_on: "2030-02-28",
      labels: ["api", "db", "api"],
      depends_on: ["core-1"],
      parent_task_id: parent.id,
      acceptance_criteria: [{ text: "It works" }, { text: "It is fast", met: true }],
      requires_evidence: true,
    });
    expect(t).toMatchObject({
      ref: "CORE-3",
      title: "Child",
      body: "details",
      assignee_actor_id: w.id.actorId,
      reviewer_actor_id: bob.id.actorId,
      priority: 0,
      due_on: "2030-02-28",
      labels: ["api", "db"],
      depends_on: [dep.id],
      parent_task_id: parent.id,
      state: "blocked",
      acceptance_criteria: [
        { text: "It works", met: false },
        { text: "It is fast", met: true },
      ],
      requires_evidence: true,
      project_id: p.id,
    });
    expect(await count("SELECT COUNT(*) AS n FROM task_deps WHERE task_id = ? AND depends_on_task_id = ?", t.id, dep.id)).toBe(1);

    // Dependencies by id, and an actor by id, resolve too; a done dependency does not block.
    await update(w.ctx, dep.id as string, { status: "done" });
    const t2 = await create(w.ctx, "CORE", { title: "Other", depends_on: [dep.id, parent.ref], assignee_actor_id: bob.id.actorId });
    expect(t2.depends_on).toEqual(sorted([dep.id as string, parent.id as string]));
    expect(t2.assignee_actor_id).toBe(bob.id.actorId);
    expect(t2.state).toBe("blocked");
    await update(w.ctx, parent.id as string, { status: "cancelled" });
    expect((await get(w.ctx, t2.id as string)).state).toBe("ready");
  });

  it("refuses bad input and unknown references with clear errors, writing nothing", async () => {
    const w = await world("create-bad");
    await project(w.ctx, "BAD");
    const existing = await create(w.ctx, "BAD");
    const base = { project_id: "BAD", title: "x" };

    expect((await rejects(w.ctx, "task_create", { ...base, priority: 5 }, "invalid_input")).message).toMatch(/priority/);
    expect((await rejects(w.ctx, "task_create", { ...base, priority: -1 }, "invalid_input")).message).toMatch(/priority/);
    expect((await rejects(w.ctx, "task_create", { ...base, due_on: "2030-02-30" }, "invalid_input")).message).toMatch(/due_on/);
    await rejects(w.ctx, "task_create", { ...base, due_on: "next friday" }, "invalid_input");
    await rejects(w.ctx, "task_create", { ...base, title: "   " }, "invalid_input");
    await rejects(w.ctx, "task_create", { ...base, labels: ["two words"] }, "invalid_input");
    await rejects(w.ctx, "task_create", { ...base, acceptance_criteria: [{ text: "" }] }, "invalid_input");
    expect((await rejects(w.ctx, "task_create", { ...base, title: "nul\u0000here" }, "invalid_input")).message).toMatch(/NUL/);
    const unknown = await rejects(w.ctx, "task_create", { ...base, colour: "red" }, "invalid_input");
    expect(unknown.message).toContain("colour");
    expect(unknown.hint).toContain("depends_on");
    expect(unknown.hint).toContain("acceptance_criteria");

    expect((await rejects(w.ctx, "task_create", { ...base, project_id: "NOPE" }, "not_found")).message).toContain("NOPE");
    expect((await rejects(w.ctx, "task_create", { ...base, assignee_actor_id: "ghost" }, "not_found")).message).toContain("ghost");
    await rejects(w.ctx, "task_create", { ...base, reviewer_actor_id: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "task_create", { ...base, depends_on: [existing.id, crypto.randomUUID()] }, "not_found");
    await rejects(w.ctx, "task_create", { ...base, depends_on: ["BAD-99"] }, "not_found");
    await rejects(w.ctx, "task_create", { ...base, parent_task_id: "BAD-2" }, "not_found");

    // The counter did not move: the next task is BAD-2 (another title: the same one again would
    // be a retry of the first create, answered with BAD-1).
    expect((await create(w.ctx, "BAD", { title: "the next one" })).ref).toBe("BAD-2");
  });
});

describe("task_create_many", () => {
  it("is atomic: an unknown dependency on item 3 writes nothing, and numbering does not skip", async () => {
    const w = await world("many-atomic");
    await project(w.ctx, "ATOM");
    const err = await rejects(
      w.ctx,
      "task_create_many",
      {
        project_id: "ATOM",
        tasks: [{ title: "one" }, { title: "two", depends_on: [{ batch_index: 0 }] }, { title: "three", depends_on: ["ATOM-7"] }],
      },
      "not_found",
    );
    expect(err.message).toContain("ATOM-7");
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE tenant_id = ?", w.id.tenantId)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM task_deps WHERE tenant_id = ?", w.id.tenantId)).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'task.created'", w.id.tenantId)).toBe(0);
    expect((await many(w.ctx, "ATOM", [{ title: "one" }])).refs).toEqual(["ATOM-1"]);
  });

  it("wires {batch_index} and existing dependencies and returns ids and refs in input order", async () => {
    const w = await world("many-wire");
    await project(w.ctx, "PLAN");
    const existing = await create(w.ctx, "PLAN", { title: "Existing" });
    const r = await many(w.ctx, "PLAN", [
      { title: "Design" },
      { title: "Build", depends_on: [{ batch_index: 0 }] },
      { title: "Ship", priority: 0, depends_on: [{ batch_index: 0 }, { batch_index: 1 }, "plan-1", { batch_index: 1 }] },
      { title: "Announce", labels: ["comms"], assignee_actor_id: "me" },
    ]);
    expect(r.count).toBe(4);
    expect(r.refs).toEqual(["PLAN-2", "PLAN-3", "PLAN-4", "PLAN-5"]);
    expect(r.task_ids).toHaveLength(4);
    const got = await Promise.all((r.task_ids as string[]).map((id) => get(w.ctx, id)));
    expect(got.map((t) => t.title)).toEqual(["Design", "Build", "Ship", "Announce"]);
    expect(refs(got)).toEqual(r.refs);
    const [design, build, ship, announce] = got as [Structured, Structured, Structured, Structured];
    expect(design).toMatchObject({ depends_on: [], state: "ready" });
    expect(build).toMatchObject({ depends_on: [design.id], state: "blocked" });
    expect(ship.depends_on).toEqual(sorted([design.id, build.id, existing.id] as string[]));
    expect(ship.priority).toBe(0);
    expect(announce).toMatchObject({ labels: ["comms"], assignee_actor_id: w.id.actorId, state: "ready" });
    expect(await count("SELECT COUNT(*) AS n FROM task_deps WHERE tenant_id = ?", w.id.tenantId)).toBe(4);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'task.created'", w.id.tenantId)).toBe(5);
  });

  it("refuses a batch_index that is not an earlier item, and more than 100 items, writing nothing", async () => {
    const w = await world("many-bad");
    await project(w.ctx, "BAT");
    const self = await rejects(w.ctx, "task_create_many", { project_id: "BAT", tasks: [{ title: "a", depends_on: [{ batch_index: 0 }] }] }, "invalid_input");
    expect(self.message).toContain("batch_index 0");
    const later = await rejects(
      w.ctx,
      "task_create_many",
      {
        project_id: "BAT",
        tasks: [{ title: "a" }, { title: "b", depends_on: [{ batch_index: 2 }] }, { title: "c" }],
      },
      "invalid_input",
    );
    expect(later.message).toContain("tasks[1]");
    await rejects(w.ctx, "task_create_many", { project_id: "BAT", tasks: [{ title: "a" }, { title: "b", depends_on: [{ batch_index: 0, extra: 1 }] }] }, "invalid_input");
    const tooMany = await rejects(w.ctx, "task_create_many", { project_id: "BAT", tasks: Array.from({ length: 101 }, (_, i) => ({ title: `t${i}` })) }, "invalid_input");
    expect(tooMany.message).toContain("tasks");
    await rejects(w.ctx, "task_create_many", { project_id: "BAT", tasks: [] }, "invalid_input");
    await rejects(w.ctx, "task_create_many", { project_id: "BAT", tasks: [{ title: "ok" }, { title: "bad", priority: 9 }] }, "invalid_input");
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE tenant_id = ?", w.id.tenantId)).toBe(0);
  });
});

describe("task_update", () => {
  const MOVES: Array<[string, string, boolean]> = [
    ["todo", "in_progress", false],
    ["todo", "in_review", false],
    ["todo", "done", false],
    ["todo", "cancelled", false],
    ["in_progress", "todo", false],
    ["in_progress", "in_review", false],
    ["in_progress", "done", false],
    ["in_progress", "cancelled", false],
    ["in_review", "todo", false],
    ["in_review", "in_progress", false],
    ["in_review", "done", false],
    ["in_review", "cancelled", false],
    ["done", "todo", true],
    ["done", "in_progress", true],
    ["cancelled", "todo", true],
  ];

  it("makes every allowed status move, recording task.<status> with from and to", async () => {
    const w = await world("upd-moves");
    await project(w.ctx, "SM");
    const r = await many(
      w.ctx,
      "SM",
      MOVES.map(([from, to]) => ({ title: `${from} to ${to}` })),
    );
    for (const [i, [from, to, reopen]] of MOVES.entries()) {
      const id = (r.task_ids as string[])[i]!;
      if (from !== "todo") await update(w.ctx, id, { status: from });
      const moved = await update(w.ctx, id, { status: to, ...(reopen ? { allow_reopen: true } : {}) });
      expect(moved.task.status, `${from} → ${to}`).toBe(to);
      expect(moved.changed).toEqual(["status"]);
      const last = (await activityRows(w.id.tenantId, "object_id = ?", id)).at(-1)!;
      expect(last.verb).toBe(`task.${to}`);
      expect(JSON.parse(last.metadata as string)).toMatchObject({ from, to, changed: ["status"] });
    }
  });

  it("refuses moves out of done and cancelled with invalid_transition naming the allowed moves; same-status is a no-op", async () => {
    const w = await world("upd-refuse");
    await project(w.ctx, "SM");
    const done = await create(w.ctx, "SM", { title: "finished" });
    const cancelled = await create(w.ctx, "SM", { title: "dropped" });
    await update(w.ctx, done.id as string, { status: "done" });
    await update(w.ctx, cancelled.id as string, { status: "cancelled" });

    for (const to of ["todo", "in_progress", "in_review", "cancelled"]) {
      const e = await rejects(w.ctx, "task_update", { task_id: done.id, patch: { status: to } }, "invalid_transition");
      expect(e.message).toBe(`A done task cannot move to ${to}.`);
      expect(e.hint).toContain("allow_reopen");
      expect(e.hint).toContain("todo or in_progress");
    }
    for (const to of ["in_review", "cancelled"]) {
      const e = await rejects(w.ctx, "task_update", { task_id: done.id, patch: { status: to, allow_reopen: true } }, "invalid_transition");
      expect(e.hint).toBe("From done it may move to: todo, in_progress.");
    }
    for (const to of ["in_progress", "in_review", "done"]) {
      const e = await rejects(w.ctx, "task_update", { task_id: cancelled.id, patch: { status: to, allow_reopen: true } }, "invalid_transition");
      expect(e.hint).toBe("From cancelled it may move to: todo.");
    }
    const plain = await rejects(w.ctx, "task_update", { task_id: cancelled.ref, patch: { status: "todo" } }, "invalid_transition");
    expect(plain.hint).toContain("With allow_reopen: true it may move to todo");
    await rejects(w.ctx, "task_update", { task_id: done.id, patch: { status: "finished" } }, "invalid_input");

    // todo → todo changes nothing and records nothing.
    const todo = await create(w.ctx, "SM", { title: "idle" });
    const before = await tenantState(w.id.tenantId);
    w.clock.advance(MINUTE);
    const same = await update(w.ctx, todo.id as string, { status: "todo" });
    expect(same.changed).toEqual([]);
    expect(same.task.updated_at).toBe(T0);
    expect(await tenantState(w.id.tenantId)).toEqual(before);
  });

  it("allow_reopen reopens a done task and clears done_at", async () => {
    const w = await world("upd-reopen");
    await project(w.ctx, "RO");
    const t = await create(w.ctx, "RO");
    w.clock.advance(MINUTE);
    const done = await update(w.ctx, t.id as string, { status: "done" });
    expect(done.task).toMatchObject({ status: "done", state: "closed", done_at: at(MINUTE) });
    expect((await taskRow(t.id as string)).done_at).toBe(at(MINUTE));
    w.clock.advance(MINUTE);
    const reopened = await update(w.ctx, t.ref as string, { status: "in_progress", allow_reopen: true });
    expect(reopened.task).toMatchObject({ status: "in_progress", done_at: null, updated_at: at(2 * MINUTE) });
    expect((await taskRow(t.id as string)).done_at).toBeNull();
    // Done again stamps a new done_at.
    w.clock.advance(MINUTE);
    expect((await update(w.ctx, t.id as string, { status: "done" })).task.done_at).toBe(at(3 * MINUTE));
    expect(await verbsOf(w.id.tenantId, t.id as string)).toEqual(["task.created", "task.done", "task.in_progress", "task.done"]);
  });

  it("expected_status that no longer holds fails with conflict and changes nothing", async () => {
    const w = await world("upd-expected");
    await project(w.ctx, "EX");
    const t = await create(w.ctx, "EX");
    await update(w.ctx, t.id as string, { status: "in_progress" });
    w.clock.advance(MINUTE);
    const e = await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done", title: "renamed", expected_status: "todo" } }, "conflict");
    expect(e.message).toContain("in_progress");
    expect(e.hint).toContain("task_get");
    expect(await taskRow(t.id as string)).toMatchObject({ status: "in_progress", title: "a task", updated_at: T0 });
    const okay = await update(w.ctx, t.id as string, { status: "in_review", expected_status: "in_progress" });
    expect(okay.task.status).toBe("in_review");
    // A patch with only preconditions names nothing to change.
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { expected_status: "in_review" } }, "invalid_input");
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: {} }, "invalid_input");
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { title: "x", colour: "red" } }, "invalid_input");
    await rejects(w.ctx, "task_update", { task_id: crypto.randomUUID(), patch: { title: "x" } }, "not_found");
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { assignee_actor_id: "ghost" } }, "not_found");
  });

  it("explicit null clears assignee, due_on and reviewer; other fields stay; a patch that changes nothing writes nothing", async () => {
    const w = await world("upd-null");
    const bob = await w.other("bob");
    await project(w.ctx, "NUL");
    const t = await create(w.ctx, "NUL", { assignee_actor_id: "me", reviewer_actor_id: "bob", due_on: "2030-03-01", labels: ["keep"], priority: 1 });
    expect(t).toMatchObject({ assignee_actor_id: w.id.actorId, reviewer_actor_id: bob.id.actorId, due_on: "2030-03-01" });
    w.clock.advance(MINUTE);
    const r = await update(w.ctx, t.id as string, { assignee_actor_id: null, due_on: null, reviewer_actor_id: null });
    expect(sorted(r.changed as string[])).toEqual(["assignee_actor_id", "due_on", "reviewer_actor_id"]);
    expect(r.task).toMatchObject({ assignee_actor_id: null, due_on: null, reviewer_actor_id: null, labels: ["keep"], priority: 1, title: "a task", updated_at: at(MINUTE) });
    expect(await taskRow(t.id as string)).toMatchObject({ assignee_actor_id: null, due_on: null, reviewer_actor_id: null });
    const last = (await activityRows(w.id.tenantId, "object_id = ?", t.id)).at(-1)!;
    expect(last.verb).toBe("task.updated");
    expect(sorted(JSON.parse(last.metadata as string).changed as string[])).toEqual(["assignee_actor_id", "due_on", "reviewer_actor_id"]);

    // Same values again (and null on already-null fields): nothing changes, nothing recorded.
    const before = await tenantState(w.id.tenantId);
    w.clock.advance(MINUTE);
    const noop = await update(w.ctx, t.id as string, { title: "a task", priority: 1, labels: ["keep"], assignee_actor_id: null, due_on: null });
    expect(noop.changed).toEqual([]);
    expect(await tenantState(w.id.tenantId)).toEqual(before);

    // Other patch fields apply and are named.
    const more = await update(w.ctx, t.ref as string, { title: "Renamed", body: "b", priority: 4, labels: ["x", "x", "y"], requires_evidence: true });
    expect(sorted(more.changed as string[])).toEqual(["body", "labels", "priority", "requires_evidence", "title"]);
    expect(more.task).toMatchObject({ title: "Renamed", body: "b", priority: 4, labels: ["x", "y"], requires_evidence: true });
  });

  it("marks checklist items one by one, by index or text, leaving the rest; refuses a missing item, both forms at once and a stale checklist", async () => {
    const w = await world("upd-items");
    await project(w.ctx, "ITEM");
    const t = await create(w.ctx, "ITEM", { acceptance_criteria: [{ text: "Tests pass" }, { text: "Docs updated" }, { text: "Bench run", met: true }] });
    const id = t.id as string;
    const one = await update(w.ctx, id, { criteria_updates: [{ index: 0, met: true }] });
    expect(one.changed).toEqual(["acceptance_criteria"]);
    expect(one.task.acceptance_criteria).toEqual([
      { text: "Tests pass", met: true },
      { text: "Docs updated", met: false },
      { text: "Bench run", met: true },
    ]);
    const two = await update(w.ctx, id, {
      criteria_updates: [
        { text: "Bench run", met: false },
        { text: "Docs updated", met: true },
      ],
    });
    expect(two.task.acceptance_criteria.map((c: Structured) => c.met)).toEqual([true, true, false]);
    // The last item, marked in the same patch that moves to done, passes the gate.
    await update(w.ctx, id, { status: "in_progress" });
    const done = await update(w.ctx, id, { status: "done", criteria_updates: [{ index: 2, met: true }] });
    expect(done.task.status).toBe("done");

    const u = await create(w.ctx, "ITEM", { acceptance_criteria: [{ text: "Only item" }] });
    const state = async () => (await ok(w.ctx, "task_get", { task_id: u.id })).task.acceptance_criteria;
    const missing = await refusedWithoutWrites(w.ctx, "task_update", { task_id: u.id, patch: { criteria_updates: [{ index: 3, met: true }] } }, "invalid_input", state);
    expect(missing.hint).toContain("index 0–0");
    await refusedWithoutWrites(w.ctx, "task_update", { task_id: u.id, patch: { criteria_updates: [{ text: "Not there", met: true }] } }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "task_update", { task_id: u.id, patch: { criteria_updates: [{ index: 0, text: "Only item", met: true }] } }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "task_update", { task_id: u.id, patch: { criteria_updates: [{ index: 0, met: true }], acceptance_criteria: [] } }, "invalid_input", state);
    // A checklist changed between the read and the write is a conflict, not a lost update.
    const { updateTask } = await import("../../../src/work/tasks/update");
    const racing = env.DB.prepare("UPDATE tasks SET acceptance_criteria = ? WHERE id = ?").bind(
      JSON.stringify([
        { text: "Only item", met: false },
        { text: "Added meanwhile", met: false },
      ]),
      u.id,
    );
    const raced = {
      ...w.ctx,
      d1: new Proxy(w.ctx.d1, {
        get: (d1, k) =>
          k === "batch"
            ? async (stmts: D1PreparedStatement[]) => {
                await racing.run();
                return d1.batch(stmts);
              }
            : (Reflect.get(d1, k).bind?.(d1) ?? Reflect.get(d1, k)),
      }),
    };
    await expect(updateTask(raced, u.id as string, { criteria_updates: [{ index: 0, met: true }] })).rejects.toMatchObject({ code: "conflict" });
    expect(await state()).toEqual([
      { text: "Only item", met: false },
      { text: "Added meanwhile", met: false },
    ]);
  });

  it("done gates refuse in order: criteria (quoting the first unmet one verbatim), evidence, review", async () => {
    const w = await world("upd-gates");
    const bob = await w.other("bob");
    await project(w.ctx, "GATE");
    const first = `README's "Work ledger" section lists task_claim & task_release`;
    const t = await create(w.ctx, "GATE", {
      acceptance_criteria: [{ text: "Race test passes", met: true }, { text: first }, { text: "Bench prints double_claims=0" }],
      requires_evidence: true,
      reviewer_actor_id: "bob",
    });
    const id = t.id as string;

    const criteria = await rejects(w.ctx, "task_update", { task_id: id, patch: { status: "done" } }, "criteria_unmet");
    expect(criteria.message).toBe(`Acceptance criterion not met: "${first}"`);
    expect(criteria.hint).toContain("acceptance_criteria");
    // The criteria checked are the patch's own when it replaces them.
    const second = await rejects(
      w.ctx,
      "task_update",
      {
        task_id: id,
        patch: { status: "done", acceptance_criteria: [{ text: first, met: true }, { text: "Bench prints double_claims=0" }] },
      },
      "criteria_unmet",
    );
    expect(second.message).toBe(`Acceptance criterion not met: "Bench prints double_claims=0"`);

    // All met (in the same patch): next gate is evidence.
    const allMet = [
      { text: "Race test passes", met: true },
      { text: first, met: true },
      { text: "Bench prints double_claims=0", met: true },
    ];
    const evidence = await rejects(w.ctx, "task_update", { task_id: id, patch: { status: "done", acceptance_criteria: allMet } }, "evidence_required");
    expect(evidence.hint).toMatch(/task_code_ref|attach_add/);
    await update(w.ctx, id, { acceptance_criteria: allMet });
    // Removed evidence, and evidence on another object, do not count.
    await insertCodeRef(w.id.tenantId, id, w.id.actorId, at(MINUTE));
    await insertAttachment(w.id.tenantId, id, w.id.actorId, at(MINUTE));
    await insertCodeRef(w.id.tenantId, id, w.id.actorId, null, "decision");
    await rejects(w.ctx, "task_update", { task_id: id, patch: { status: "done" } }, "evidence_required");
    await insertAttachment(w.id.tenantId, id, w.id.actorId);

    // Evidence satisfied: the reviewer has not answered (there is not even a handoff yet).
    const review = await rejects(w.ctx, "task_update", { task_id: id, patch: { status: "done" } }, "review_pending");
    expect(review.hint).toMatch(/in_review/);
    await update(w.ctx, id, { status: "in_review" });
    const handoff = await env.DB.prepare("SELECT * FROM handoffs WHERE tenant_id = ? AND related_task_id = ?").bind(w.id.tenantId, id).first<Structured>();
    expect(handoff).toMatchObject({ kind: "review", status: "open" });
    await rejects(w.ctx, "task_update", { task_id: id, patch: { status: "done" } }, "review_pending");
    // An answer from someone other than the reviewer does not count; an unanswered row neither.
    await env.DB.prepare("UPDATE handoffs SET responded_by = ?, responded_at = ? WHERE id = ?").bind(w.id.actorId, at(MINUTE), handoff!.id).run();
    await rejects(w.ctx, "task_update", { task_id: id, patch: { status: "done" } }, "review_pending");
    await env.DB.prepare("UPDATE handoffs SET responded_by = ?, responded_at = NULL WHERE id = ?").bind(bob.id.actorId, handoff!.id).run();
    await rejects(w.ctx, "task_update", { task_id: id, patch: { status: "done" } }, "review_pending");
    // An answer without a verdict (as before verdicts existed) does not count either; bob's approval does.
    await env.DB.prepare("UPDATE handoffs SET responded_by = ?, responded_at = ?, status = 'responded' WHERE id = ?").bind(bob.id.actorId, at(MINUTE), handoff!.id).run();
    await rejects(w.ctx, "task_update", { task_id: id, patch: { status: "done" } }, "review_pending");
    await env.DB.prepare("UPDATE handoffs SET verdict = 'approved', status = 'resolved' WHERE id = ?").bind(handoff!.id).run();

    w.clock.advance(2 * MINUTE);
    const done = await update(w.ctx, id, { status: "done" });
    expect(done.task).toMatchObject({ status: "done", done_at: at(2 * MINUTE) });
    expect((await verbsOf(w.id.tenantId, id)).at(-1)).toBe("task.done");
  });

  it("a code ref alone satisfies evidence, and clearing the reviewer lifts the review gate", async () => {
    const w = await world("upd-gates2");
    await w.other("rita");
    await project(w.ctx, "GATE");
    const t = await create(w.ctx, "GATE", { requires_evidence: true, reviewer_actor_id: "rita" });
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } }, "evidence_required");
    await insertCodeRef(w.id.tenantId, t.id as string, w.id.actorId);
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" } }, "review_pending");
    const done = await update(w.ctx, t.id as string, { status: "done", reviewer_actor_id: null });
    expect(done.task).toMatchObject({ status: "done", reviewer_actor_id: null });
    // Dropping requires_evidence in the same patch lifts that gate too.
    const u = await create(w.ctx, "GATE", { requires_evidence: true });
    expect((await update(w.ctx, u.id as string, { status: "done", requires_evidence: false })).task.status).toBe("done");
  });

  it("moving to in_review with a reviewer opens exactly one review handoff to them while it stays open", async () => {
    const w = await world("upd-review");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const p = await project(w.ctx, "REV");
    const t = await create(w.ctx, "REV", { title: "Needs eyes", reviewer_actor_id: "bob" });
    const id = t.id as string;
    const handoffsOf = () =>
      env.DB.prepare("SELECT * FROM handoffs WHERE tenant_id = ? AND related_task_id = ? ORDER BY created_at, id")
        .bind(w.id.tenantId, id)
        .all<Structured>()
        .then((r) => r.results);
    const recipientsOf = (hid: string) =>
      env.DB.prepare("SELECT actor_id FROM handoff_recipients WHERE tenant_id = ? AND handoff_id = ?")
        .bind(w.id.tenantId, hid)
        .all<{ actor_id: string }>()
        .then((r) => r.results.map((x) => x.actor_id));

    // Other moves open nothing.
    await update(w.ctx, id, { status: "in_progress" });
    expect(await handoffsOf()).toEqual([]);

    await update(w.ctx, id, { status: "in_review" });
    let hs = await handoffsOf();
    expect(hs).toHaveLength(1);
    expect(hs[0]).toMatchObject({
      kind: "review",
      status: "open",
      from_actor_id: w.id.actorId,
      related_task_id: id,
      related_project_id: p.id,
      responded_by: null,
      responded_at: null,
    });
    expect(hs[0]!.title).toContain("REV-1");
    expect(await recipientsOf(hs[0]!.id as string)).toEqual([bob.id.actorId]);

    // Out and back in, twice, while it is open: still one.
    for (let i = 0; i < 2; i++) {
      await update(w.ctx, id, { status: "in_progress" });
      await update(w.ctx, id, { status: "in_review" });
    }
    expect(await handoffsOf()).toHaveLength(1);
    expect(await count("SELECT COUNT(*) AS n FROM handoff_recipients WHERE tenant_id = ?", w.id.tenantId)).toBe(1);

    // A different reviewer set with the move gets their own handoff.
    w.clock.advance(MINUTE);
    await update(w.ctx, id, { status: "todo" });
    await update(w.ctx, id, { status: "in_review", reviewer_actor_id: "carol" });
    hs = await handoffsOf();
    expect(hs).toHaveLength(2);
    expect(await recipientsOf(hs[1]!.id as string)).toEqual([carol.id.actorId]);

    // Once bob's is resolved, moving in again with bob as reviewer opens a new one.
    await env.DB.prepare("UPDATE handoffs SET status = 'resolved' WHERE id = ?").bind(hs[0]!.id).run();
    w.clock.advance(MINUTE);
    await update(w.ctx, id, { status: "todo", reviewer_actor_id: "bob" });
    await update(w.ctx, id, { status: "in_review" });
    expect(await handoffsOf()).toHaveLength(3);

    // No reviewer, no handoff.
    const plain = await create(w.ctx, "REV");
    await update(w.ctx, plain.id as string, { status: "in_review" });
    expect(await count("SELECT COUNT(*) AS n FROM handoffs WHERE related_task_id = ?", plain.id)).toBe(0);
  });

  it("leaving in_progress clears the lease and claimed_at", async () => {
    const w = await world("upd-lease");
    await project(w.ctx, "LS");
    const a = await create(w.ctx, "LS");
    const b = await create(w.ctx, "LS");
    await claim(w.ctx, { task_id: a.id });
    await claim(w.ctx, { task_id: b.id });
    expect((await taskRow(a.id as string)).lease_expires_at).toBe(at(HOUR));
    const moved = await update(w.ctx, a.id as string, { status: "in_review" });
    expect(moved.task).toMatchObject({ status: "in_review", lease_expires_at: null, claimed_at: null, assignee_actor_id: w.id.actorId });
    expect(moved.changed).toEqual(["status"]);
    expect((await update(w.ctx, b.id as string, { status: "todo" })).task).toMatchObject({ lease_expires_at: null, claimed_at: null });
    // Staying in progress (a title change) keeps the lease.
    const c = await create(w.ctx, "LS");
    await claim(w.ctx, { task_id: c.id });
    expect((await update(w.ctx, c.id as string, { title: "still going" })).task.lease_expires_at).toBe(at(HOUR));
  });
});

describe("task_update: the lease through review", () => {
  it("in_review releases the lease and says so; the claim's token finishes the task, and moves it back to review after changes_requested", async () => {
    const w = await world("lease-review");
    const bob = await w.other("bob");
    await project(w.ctx, "LR");
    const t = await create(w.ctx, "LR", { reviewer_actor_id: "bob" });
    const token = (await claim(w.ctx, { task_id: t.id })).fencing_token as number;

    const kept = await ok(w.ctx, "task_update", { task_id: t.id, patch: { title: "still going" }, fencing_token: token });
    expect(kept).toMatchObject({ lease: "held", review_handoff: null });
    const moved = await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_review" }, fencing_token: token });
    expect(moved).toMatchObject({ lease: "released", task: { status: "in_review", lease_expires_at: null, assignee_actor_id: w.id.actorId } });
    expect(moved.review_handoff).toMatchObject({ to: [bob.id.actorId], opened: true });

    // Sent back: the same token (nobody claimed since) moves it to review again, which opens a fresh review.
    w.clock.advance(MINUTE);
    await ok(bob.ctx, "handoff_respond", { handoff_id: moved.review_handoff.id, response: { verdict: "changes_requested", text: "add a test" } });
    expect((await get(w.ctx, t.id as string)).status).toBe("in_progress");
    w.clock.advance(MINUTE);
    const again = await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_review" }, fencing_token: token });
    expect(again).toMatchObject({ lease: "none", review_handoff: { opened: true } });
    expect(again.review_handoff.id).not.toBe(moved.review_handoff.id);
    // Back and forth while it is open: the answer names the review already open.
    await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_progress" }, fencing_token: token });
    const same = await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_review" }, fencing_token: token });
    expect(same.review_handoff).toEqual({ id: again.review_handoff.id, to: [bob.id.actorId], opened: false });

    await ok(bob.ctx, "handoff_respond", { handoff_id: again.review_handoff.id, response: { verdict: "approved" } });
    const done = await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" }, fencing_token: token });
    expect(done).toMatchObject({ lease: "none", task: { status: "done" } });
  });

  it("a token stops working once the task changes hands or is claimed again, and the hint for a task in review leads to a write that works", async () => {
    const w = await world("lease-review-stale");
    const bob = await w.other("bob");
    await project(w.ctx, "LS2");
    const t = await create(w.ctx, "LS2");
    const token = (await claim(w.ctx, { task_id: t.id })).fencing_token as number;
    await ok(w.ctx, "task_update", { task_id: t.id, patch: { status: "in_review" }, fencing_token: token });

    // A token that was never this task's lease's: not re-claim (an in_review task cannot be claimed) but write without it.
    const wrong = await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" }, fencing_token: token + 1 }, "stale_fencing_token");
    expect(wrong.hint).not.toMatch(/task_claim/);
    expect(wrong.hint).toMatch(/without fencing_token/);
    // Re-claiming says why there is nothing to claim, rather than "held" by the caller itself.
    expect(await claim(w.ctx, { task_id: t.id })).toMatchObject({ claimed: false, reason: "in_review", holder_actor_id: w.id.actorId, fencing_token: null });

    // Handed to bob: the token is no longer the caller's.
    await ok(bob.ctx, "task_assign", { task_id: t.id, actor_id: "me" });
    await rejects(w.ctx, "task_update", { task_id: t.id, patch: { status: "done" }, fencing_token: token }, "stale_fencing_token");
    // Back to in progress and claimed again by bob: a new lease, a new token; the old one is refused.
    await ok(bob.ctx, "task_update", { task_id: t.id, patch: { status: "in_progress" } });
    const bobs = await claim(bob.ctx, { task_id: t.id });
    expect(bobs.fencing_token).toBe(token + 1);
    await ok(bob.ctx, "task_update", { task_id: t.id, patch: { status: "in_review" }, fencing_token: bobs.fencing_token });
    await rejects(bob.ctx, "task_update", { task_id: t.id, patch: { title: "x" }, fencing_token: token }, "stale_fencing_token");
    expect((await ok(bob.ctx, "task_update", { task_id: t.id, patch: { status: "done" }, fencing_token: bobs.fencing_token })).task.status).toBe("done");
  });
});

describe("task_assign", () => {
  it("assigns to me, to an external_ref and to no one, recording task.assigned each time", async () => {
    const w = await world("assign");
    const bob = await w.other("bob");
    await project(w.ctx, "ASG");
    const t = await create(w.ctx, "ASG");
    const id = t.id as string;
    expect((await ok(w.ctx, "task_assign", { task_id: id, actor_id: "me" })).task.assignee_actor_id).toBe(w.id.actorId);
    expect((await ok(w.ctx, "task_assign", { task_id: "asg-1", actor_id: "bob" })).task.assignee_actor_id).toBe(bob.id.actorId);
    // The same assignee again changes nothing and records nothing.
    const same = await ok(w.ctx, "task_assign", { task_id: id, actor_id: bob.id.actorId });
    expect(same.changed).toEqual([]);
    expect((await ok(w.ctx, "task_assign", { taskId: id, actorId: null })).task.assignee_actor_id).toBeNull();
    expect((await taskRow(id)).assignee_actor_id).toBeNull();
    expect(await verbsOf(w.id.tenantId, id)).toEqual(["task.created", "task.assigned", "task.assigned", "task.assigned"]);

    await rejects(w.ctx, "task_assign", { task_id: id, actor_id: "ghost" }, "not_found");
    await rejects(w.ctx, "task_assign", { task_id: id }, "invalid_input");
    await rejects(w.ctx, "task_assign", { task_id: "ASG-9", actor_id: "me" }, "not_found");
  });
});

describe("task_query", () => {
  it("derives state: blocked while a dependency is open, ready once it is done or cancelled; closed tasks are left out", async () => {
    const w = await world("q-state");
    await project(w.ctx, "ST");
    const r = await many(w.ctx, "ST", [{ title: "A" }, { title: "B", depends_on: [{ batch_index: 0 }] }, { title: "C", depends_on: [{ batch_index: 1 }] }, { title: "D" }, { title: "E" }]);
    const [a, b, c, d, e] = r.task_ids as [string, string, string, string, string];
    await update(w.ctx, d, { status: "done" });
    await update(w.ctx, e, { status: "cancelled" });
    const titles = (items: Structured[]) => sorted(items.map((t) => t.title as string));

    expect(titles(await query(w.ctx, { state: "ready" }))).toEqual(["A"]);
    expect(titles(await query(w.ctx, { state: "blocked" }))).toEqual(["B", "C"]);
    const all = await query(w.ctx, {});
    expect(Object.fromEntries(all.map((t) => [t.title, t.state]))).toEqual({ A: "ready", B: "blocked", C: "blocked", D: "closed", E: "closed" });

    await update(w.ctx, a, { status: "done" });
    expect(titles(await query(w.ctx, { state: "ready" }))).toEqual(["B"]);
    expect(titles(await query(w.ctx, { state: "blocked" }))).toEqual(["C"]);
    await update(w.ctx, b, { status: "cancelled" });
    expect(titles(await query(w.ctx, { state: "ready" }))).toEqual(["C"]);
    expect(await query(w.ctx, { state: "blocked" })).toEqual([]);
    // In progress still counts as not done: a dependency in progress blocks.
    await update(w.ctx, c, { status: "in_progress" });
    const f = await create(w.ctx, "ST", { title: "F", depends_on: [c] });
    expect(titles(await query(w.ctx, { state: "blocked" }))).toEqual(["F"]);
    expect(titles(await query(w.ctx, { state: "ready" }))).toEqual(["C"]);
    // A state filter with a status filter that only names closed statuses is empty.
    expect(await query(w.ctx, { state: "ready", status: ["done", "cancelled"] })).toEqual([]);
    expect(f.state).toBe("blocked");
  });

  it("filters by project, assignee (me, unassigned, external_ref), status, label, due_before and q", async () => {
    const w = await world("q-filter");
    const bob = await w.other("bob");
    await project(w.ctx, "ONE");
    await project(w.ctx, "TWO");
    await create(w.ctx, "ONE", { title: "Mine api", assignee_actor_id: "me", labels: ["api"], due_on: "2030-01-10" });
    await create(w.ctx, "ONE", { title: "Bobs db", assignee_actor_id: "bob", labels: ["db", "api"], due_on: "2030-02-01", body: "Touches the LEDGER schema" });
    await create(w.ctx, "ONE", { title: "Nobody", labels: ["db"] });
    const two = await create(w.ctx, "TWO", { title: "Other project ledger", due_on: "2030-01-05" });
    await update(w.ctx, two.id as string, { status: "in_review" });
    const titles = (items: Structured[]) => sorted(items.map((t) => t.title as string));

    expect(titles(await query(w.ctx, { project_id: "one" }))).toEqual(["Bobs db", "Mine api", "Nobody"]);
    expect(titles(await query(w.ctx, { project_id: "TWO" }))).toEqual(["Other project ledger"]);
    expect(titles(await query(w.ctx, { assignee_actor_id: "me" }))).toEqual(["Mine api"]);
    expect(titles(await query(bob.ctx, { assignee_actor_id: "me" }))).toEqual(["Bobs db"]);
    expect(titles(await query(w.ctx, { assignee_actor_id: "bob" }))).toEqual(["Bobs db"]);
    expect(titles(await query(w.ctx, { assignee_actor_id: "unassigned" }))).toEqual(["Nobody", "Other project ledger"]);
    expect(titles(await query(w.ctx, { status: ["in_review"] }))).toEqual(["Other project ledger"]);
    expect(titles(await query(w.ctx, { status: ["todo", "in_review"], project_id: "ONE" }))).toEqual(["Bobs db", "Mine api", "Nobody"]);
    expect(titles(await query(w.ctx, { label: "db" }))).toEqual(["Bobs db", "Nobody"]);
    expect(titles(await query(w.ctx, { label: "api", assignee_actor_id: "me" }))).toEqual(["Mine api"]);
    expect(titles(await query(w.ctx, { label: "ap" }))).toEqual([]);
    expect(titles(await query(w.ctx, { due_before: "2030-01-10" }))).toEqual(["Other project ledger"]);
    expect(titles(await query(w.ctx, { due_before: "2030-02-02" }))).toEqual(["Bobs db", "Mine api", "Other project ledger"]);
    expect(titles(await query(w.ctx, { q: "ledger" }))).toEqual(["Bobs db", "Other project ledger"]);
    expect(titles(await query(w.ctx, { q: "NOBODY" }))).toEqual(["Nobody"]);

    await rejects(w.ctx, "task_query", { project_id: "NOPE" }, "not_found");
    await rejects(w.ctx, "task_query", { assignee_actor_id: "ghost" }, "not_found");
    await rejects(w.ctx, "task_query", { state: "closed" }, "invalid_input");
    await rejects(w.ctx, "task_query", { due_before: "2030-13-01" }, "invalid_input");
    await rejects(w.ctx, "task_query", { order_by: "title" }, "invalid_input");
  });

  it("orders by priority (then oldest), created and updated (newest first) and due (soonest, undated last)", async () => {
    const w = await world("q-order");
    await project(w.ctx, "ORD");
    const mk = async (title: string, priority: number, due?: string) => {
      const t = await create(w.ctx, "ORD", { title, priority, ...(due ? { due_on: due } : {}) });
      w.clock.advance(MINUTE);
      return t;
    };
    const a = await mk("a", 2, "2030-03-01");
    await mk("b", 0);
    await mk("c", 2, "2030-01-15");
    await mk("d", 1, "2030-02-01");
    await mk("e", 0, "2030-01-15");
    await update(w.ctx, a.id as string, { body: "touched" });
    const order = async (order_by: string) => (await query(w.ctx, { order_by })).map((t) => t.title);
    expect(await order("priority")).toEqual(["b", "e", "d", "a", "c"]);
    expect(await query(w.ctx, {}).then((r) => r.map((t) => t.title))).toEqual(["b", "e", "d", "a", "c"]);
    expect(await order("created")).toEqual(["e", "d", "c", "b", "a"]);
    expect(await order("updated")).toEqual(["a", "e", "d", "c", "b"]);
    const due = await order("due");
    expect(due.slice(0, 2).sort()).toEqual(["c", "e"]);
    expect(due.slice(2)).toEqual(["d", "a", "b"]);
  });

  it("pages a project's tasks in priority order from an index, without sorting them", async () => {
    const ctx = { tenantId: "t", d1: explaining } as Ctx;
    const filters: TaskFilter[] = [{ projectId: "p" }, { projectId: "p", state: "ready" }, { projectId: "p", statuses: ["todo", "in_progress"] }];
    for (const f of filters) {
      for (const after of [null, [1, T0, "x"]]) {
        const plan = steps(await listTaskSummaries(ctx, f, "priority", after, 51)).join(" | ");
        expect(plan).toContain("USING INDEX tasks_project_order_idx (tenant_id=? AND project_id=?)");
        expect(plan).not.toContain("TEMP B-TREE");
      }
    }
  });

  it("keeps the label index in step with every write of labels, priority and tasks, and queries by label the same", async () => {
    const w = await world("q-label-index");
    const lb = await project(w.ctx, "LB");
    await project(w.ctx, "LC");
    const made = await many(w.ctx, lb.id as string, [
      { title: "a", labels: ["db", "ops"], priority: 3 },
      { title: "b", labels: ["db"], priority: 0 },
      { title: "c" },
      { title: "d", labels: ["ops", "ops"], priority: 1 },
    ]);
    const [a, b, c, d] = made.refs as string[];
    const other = await create(w.ctx, "LC", { title: "e", labels: ["db"], priority: 2 });
    await update(w.ctx, a!, { labels: ["ui"] });
    await update(w.ctx, c!, { labels: ["db"] });
    await update(w.ctx, d!, { priority: 4 });
    // A claim and a status change move the label rows' copy of the status.
    expect((await claim(w.ctx, { project_id: "LB", label: "db" })).task.ref).toBe(b);
    await update(w.ctx, a!, { status: "cancelled" });
    // A direct write too: the index follows the table, not the tools.
    await env.DB.prepare("UPDATE tasks SET priority = 1 WHERE id = ?")
      .bind((await get(w.ctx, b!)).id)
      .run();
    const indexed = await env.DB.prepare("SELECT task_id, label, project_id, status, priority, created_at FROM task_labels WHERE tenant_id = ? ORDER BY task_id, label").bind(w.id.tenantId).all();
    const derived = await env.DB.prepare(
      "SELECT t.id AS task_id, l.value AS label, t.project_id, t.status, t.priority, t.created_at FROM tasks t, json_each(t.labels) l WHERE t.tenant_id = ? ORDER BY t.id, l.value",
    )
      .bind(w.id.tenantId)
      .all();
    expect(indexed.results).toEqual(derived.results);
    expect(indexed.results.map((r) => r.label)).toEqual(expect.arrayContaining(["db", "ui", "ops"]));
    expect(indexed.results).toHaveLength(5);

    expect(refs(await query(w.ctx, { project_id: "LB", label: "db" }))).toEqual([b, c]);
    expect(refs(await query(w.ctx, { label: "db" })).sort()).toEqual([b, c, other.ref].sort());
    // Under every order, a label's page is the unfiltered page's tasks that carry the label.
    for (const order_by of ["priority", "created", "updated", "due"]) {
      for (const scope of [{}, { project_id: "LB" }]) {
        const all = await query(w.ctx, { ...scope, order_by });
        for (const label of ["db", "ops", "ui"]) {
          expect(refs(await query(w.ctx, { ...scope, order_by, label }))).toEqual(refs(all.filter((t) => (t.labels as string[]).includes(label))));
        }
      }
    }
    expect(refs(await query(w.ctx, { project_id: "LB", label: "ops" }))).toEqual([d]);
    expect(refs(await query(w.ctx, { project_id: "LB", label: "ui", status: ["cancelled"] }))).toEqual([a]);
    expect(await query(w.ctx, { project_id: "LB", label: "ui", state: "ready" })).toEqual([]);
    expect(await query(w.ctx, { project_id: "LB", label: "none" })).toEqual([]);

    await env.DB.prepare("DELETE FROM tasks WHERE tenant_id = ?").bind(w.id.tenantId).run();
    expect(await count("SELECT COUNT(*) AS n FROM task_labels WHERE tenant_id = ?", w.id.tenantId)).toBe(0);
  });

  it("pages a label's tasks in priority order from the label index, in a project or across the tenant, without sorting them", async () => {
    const ctx = { tenantId: "t", d1: explaining } as Ctx;
    const cases: Array<[TaskFilter, string]> = [
      [{ projectId: "p", label: "db" }, "COVERING INDEX task_labels_project_order_idx (tenant_id=? AND project_id=? AND label=?)"],
      [{ projectId: "p", label: "db", state: "ready" }, "COVERING INDEX task_labels_project_order_idx (tenant_id=? AND project_id=? AND label=?)"],
      [{ label: "db" }, "COVERING INDEX task_labels_tenant_order_idx (tenant_id=? AND label=?)"],
    ];
    for (const [f, index] of cases) {
      for (const after of [null, [1, T0, "x"]]) {
        const plan = steps(await listTaskSummaries(ctx, f, "priority", after, 51)).join(" | ");
        expect(plan).toContain(index);
        expect(plan).not.toContain("TEMP B-TREE");
      }
    }
  });

  it("pages 120 tasks with a keyset cursor under every order_by, each task exactly once, in order", async () => {
    const w = await world("q-pages");
    await project(w.ctx, "PG");
    const item = (i: number) => ({ title: `t${i}`, priority: (i * 7) % 5, ...(i % 3 === 0 ? {} : { due_on: `2030-0${1 + (i % 9)}-${String(1 + (i % 27)).padStart(2, "0")}` }) });
    await many(
      w.ctx,
      "PG",
      Array.from({ length: 100 }, (_, i) => item(i)),
    );
    w.clock.advance(MINUTE);
    const second = await many(
      w.ctx,
      "PG",
      Array.from({ length: 20 }, (_, i) => item(100 + i)),
    );
    for (const [i, id] of (second.task_ids as string[]).slice(0, 6).entries()) {
      w.clock.advance(MINUTE);
      await update(w.ctx, id, { title: `t${100 + i} edited` });
    }
    const rows = (await env.DB.prepare("SELECT id, priority, created_at, updated_at, due_on FROM tasks WHERE tenant_id = ?").bind(w.id.tenantId).all<Structured>()).results;
    expect(rows).toHaveLength(120);
    const cmp = (x: unknown, y: unknown) => ((x as string | number) < (y as string | number) ? -1 : (x as string | number) > (y as string | number) ? 1 : 0);
    const by = (keys: Array<[string, 1 | -1]>) => (p: Structured, q: Structured) => {
      for (const [k, dir] of keys) {
        const c = cmp(p[k], q[k]) * dir;
        if (c !== 0) return c;
      }
      return 0;
    };
    const withDue = rows.map((r) => ({ ...r, due_key: r.due_on ?? "9999-12-31" }));
    const expected: Record<string, string[]> = {
      priority: ids(
        [...withDue].sort(
          by([
            ["priority", 1],
            ["created_at", 1],
            ["id", 1],
          ]),
        ),
      ),
      created: ids(
        [...withDue].sort(
          by([
            ["created_at", -1],
            ["id", -1],
          ]),
        ),
      ),
      updated: ids(
        [...withDue].sort(
          by([
            ["updated_at", -1],
            ["id", -1],
          ]),
        ),
      ),
      due: ids(
        [...withDue].sort(
          by([
            ["due_key", 1],
            ["id", 1],
          ]),
        ),
      ),
    };
    // created last: it adds a task mid-walk, which the other orders would then (rightly) list.
    for (const order_by of ["priority", "updated", "due", "created"]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const r = await ok(w.ctx, "task_query", { order_by, limit: 7, ...(cursor ? { cursor } : {}) });
        pages++;
        expect(r.items.length).toBeLessThanOrEqual(7);
        if (r.next_cursor !== undefined) expect(r.items).toHaveLength(7);
        seen.push(...ids(r.items as Structured[]));
        cursor = r.next_cursor as string | undefined;
        // A task created mid-walk (newest) lands before the cursor of a newest-first walk: never repeated, never shifting pages.
        if (order_by === "created" && pages === 1) {
          w.clock.advance(MINUTE);
          await create(w.ctx, "PG", { title: "late" });
        }
      } while (cursor && pages < 40);
      expect(pages, order_by).toBe(18);
      expect(new Set(seen).size, order_by).toBe(120);
      expect(seen, order_by).toEqual(expected[order_by]);
    }
  });

  it("refuses a cursor it did not issue, or one issued for another order", async () => {
    const w = await world("q-cursor");
    await project(w.ctx, "CUR");
    await many(w.ctx, "CUR", [{ title: "a" }, { title: "b" }, { title: "c" }]);
    const page = await ok(w.ctx, "task_query", { order_by: "created", limit: 1 });
    expect(page.next_cursor).toEqual(expect.any(String));
    for (const cursor of ["not-a-cursor", "!!!", btoa(JSON.stringify({ k: [1] })), btoa(JSON.stringify({ x: [1, 2, 3] })), btoa(JSON.stringify({ k: [{}, 1, 2] }))]) {
      const e = await rejects(w.ctx, "task_query", { cursor }, "invalid_input");
      expect(e.message).toContain("cursor");
      expect(e.hint).toContain("next_cursor");
    }
    // A created-order cursor (two keys) does not fit the priority order (three).
    await rejects(w.ctx, "task_query", { cursor: page.next_cursor }, "invalid_input");
    expect((await ok(w.ctx, "task_query", { order_by: "created", limit: 1, cursor: page.next_cursor })).items).toHaveLength(1);
  });
});

describe("task_get", () => {
  it("returns blockers, dependents, subtasks, evidence, activity newest first and project context, by ref or id", async () => {
    const w = await world("get");
    const p = await project(w.ctx, "CORE", { summary: "core work" });
    const r = await many(w.ctx, "CORE", [
      { title: "Open dep", priority: 1 },
      { title: "Done dep" },
      { title: "Subject", depends_on: [{ batch_index: 0 }, { batch_index: 1 }] },
      { title: "Waiter", depends_on: [{ batch_index: 2 }] },
    ]);
    const [openDep, doneDep, subject, waiter] = r.task_ids as [string, string, string, string];
    await update(w.ctx, doneDep, { status: "done" });
    const sub1 = await create(w.ctx, "CORE", { title: "Sub one", parent_task_id: subject, priority: 3 });
    const sub2 = await create(w.ctx, "CORE", { title: "Sub two", parent_task_id: "CORE-3", priority: 1 });
    await insertCodeRef(w.id.tenantId, subject, w.id.actorId);
    await insertCodeRef(w.id.tenantId, subject, w.id.actorId);
    await insertCodeRef(w.id.tenantId, subject, w.id.actorId, at(MINUTE));
    await insertAttachment(w.id.tenantId, subject, w.id.actorId, at(MINUTE));
    w.clock.advance(MINUTE);
    await update(w.ctx, subject, { title: "Subject renamed" });
    w.clock.advance(MINUTE);
    await ok(w.ctx, "task_assign", { task_id: subject, actor_id: "me" });

    const g = await ok(w.ctx, "task_get", { task_id: "core-3" });
    expect(g.task).toMatchObject({ id: subject, ref: "CORE-3", title: "Subject renamed", state: "blocked", depends_on: sorted([openDep, doneDep]) });
    expect(g.ready).toBe(false);
    expect(ids(g.blockers)).toEqual([openDep]);
    expect(ids(g.dependents)).toEqual([waiter]);
    expect(ids(g.subtasks)).toEqual([sub2.id, sub1.id]);
    expect(g.project).toEqual({ id: p.id, key: "CORE", title: "Project CORE", status: "active" });
    expect(g.evidence).toEqual({ code_refs: 2, attachments: 0 });
    expect(g.activity.map((a: Structured) => a.verb)).toEqual(["task.assigned", "task.updated", "task.created"]);
    expect(g.activity[0]).toMatchObject({ at: at(2 * MINUTE), actor_id: w.id.actorId });
    expect(g.brief).toBeUndefined();

    // By id, the same task; with the brief attached.
    const byId = await ok(w.ctx, "task_get", { task_id: subject, include: ["brief"] });
    expect(byId.task).toEqual(g.task);
    expect(byId.brief).toMatchObject({ project: { id: p.id, key: "CORE", summary: "core work" } });
    expect((byId.brief as Structured).top_open_tasks.map((t: Structured) => t.ref)).toContain("CORE-1");
    expect((byId.brief as Structured).recent_activity.length).toBeGreaterThan(0);

    // Once the open dependency is done, it is ready and has no blockers.
    await update(w.ctx, openDep, { status: "done" });
    const after = await ok(w.ctx, "task_get", { task_id: "Core-3" });
    expect(after.ready).toBe(true);
    expect(after.blockers).toEqual([]);

    await rejects(w.ctx, "task_get", { task_id: "CORE-99" }, "not_found");
    await rejects(w.ctx, "task_get", { task_id: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "task_get", { task_id: subject, include: ["everything"] }, "invalid_input");
  });
});

describe("task_link", () => {
  it("adds and removes dependencies, recording each edge change", async () => {
    const w = await world("link-basic");
    await project(w.ctx, "LK");
    const r = await many(w.ctx, "LK", [{ title: "A" }, { title: "B" }, { title: "C" }]);
    const [a, b, c] = r.task_ids as [string, string, string];
    const added = await ok(w.ctx, "task_link", { task_id: "LK-1", add_depends_on: [b, "lk-3", b] });
    expect(added.added).toEqual([b, c]);
    expect(added.cycle_rejected).toEqual([]);
    expect(added.task).toMatchObject({ id: a, depends_on: sorted([b, c]), state: "blocked" });
    // Re-adding an existing edge is neither added nor rejected.
    const again = await ok(w.ctx, "task_link", { task_id: a, add_depends_on: [c] });
    expect(again).toMatchObject({ added: [], removed: [], cycle_rejected: [] });
    const removed = await ok(w.ctx, "task_link", { task_id: a, remove_depends_on: [b, "LK-2"] });
    expect(removed.removed).toEqual([b]);
    expect(removed.task.depends_on).toEqual([c]);
    expect(await verbsOf(w.id.tenantId, a)).toEqual(["task.created", "task.dependency_added", "task.dependency_added", "task.dependency_removed"]);
    // Unknown references fail the whole call before anything is written.
    await rejects(w.ctx, "task_link", { task_id: a, add_depends_on: [b, crypto.randomUUID()] }, "not_found");
    await rejects(w.ctx, "task_link", { task_id: a, remove_depends_on: ["LK-77"], add_depends_on: [b] }, "not_found");
  });

  it("rejects edges that would close a cycle (direct, longer, self) while the call's other edges still apply", async () => {
    const w = await world("link-cycle");
    await project(w.ctx, "CY");
    const r = await many(w.ctx, "CY", [{ title: "A" }, { title: "B" }, { title: "C" }, { title: "D" }]);
    const [a, b, c, d] = r.task_ids as [string, string, string, string];
    await ok(w.ctx, "task_link", { task_id: a, add_depends_on: [b] });

    const direct = await ok(w.ctx, "task_link", { task_id: b, add_depends_on: [a, d] });
    expect(direct.added).toEqual([d]);
    expect(direct.cycle_rejected).toEqual([{ depends_on: a, reason: expect.stringContaining("cycle") }]);
    expect(await count("SELECT COUNT(*) AS n FROM task_deps WHERE task_id = ? AND depends_on_task_id = ?", b, a)).toBe(0);

    // A → B → C, then C → A closes a longer loop.
    await ok(w.ctx, "task_link", { task_id: b, add_depends_on: [c] });
    const before = await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", w.id.tenantId);
    const longer = await ok(w.ctx, "task_link", { task_id: c, add_depends_on: [a] });
    expect(longer.added).toEqual([]);
    expect(longer.cycle_rejected.map((x: Structured) => x.depends_on)).toEqual([a]);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", w.id.tenantId)).toBe(before);

    // D is B's dependency; D → A would close A → B → D → A. And a task cannot wait on itself.
    const mixed = await ok(w.ctx, "task_link", { task_id: d, add_depends_on: [d, a, c] });
    expect(mixed.added).toEqual([c]);
    expect(sorted(mixed.cycle_rejected.map((x: Structured) => x.depends_on))).toEqual(sorted([a, d]));
    expect(mixed.cycle_rejected.find((x: Structured) => x.depends_on === d).reason).toContain("itself");
    expect(await count("SELECT COUNT(*) AS n FROM task_deps WHERE tenant_id = ?", w.id.tenantId)).toBe(4);
  });

  it("sets and clears the parent with cycle checks; set and clear together is invalid", async () => {
    const w = await world("link-parent");
    await project(w.ctx, "PA");
    const r = await many(w.ctx, "PA", [{ title: "Root" }, { title: "Mid" }, { title: "Leaf" }]);
    const [root, mid, leaf] = r.task_ids as [string, string, string];
    expect((await ok(w.ctx, "task_link", { task_id: mid, set_parent_task_id: "PA-1" })).task.parent_task_id).toBe(root);
    expect((await ok(w.ctx, "task_link", { task_id: leaf, set_parent_task_id: mid })).task.parent_task_id).toBe(mid);

    const direct = await ok(w.ctx, "task_link", { task_id: mid, set_parent_task_id: leaf });
    expect(direct.cycle_rejected).toEqual([{ depends_on: leaf, reason: expect.stringContaining("cycle") }]);
    expect(direct.task.parent_task_id).toBe(root);
    const longer = await ok(w.ctx, "task_link", { task_id: root, set_parent_task_id: leaf });
    expect(longer.cycle_rejected.map((x: Structured) => x.depends_on)).toEqual([leaf]);
    expect((await taskRow(root)).parent_task_id).toBeNull();
    const self = await ok(w.ctx, "task_link", { task_id: root, set_parent_task_id: root });
    expect(self.cycle_rejected).toEqual([{ depends_on: root, reason: expect.stringContaining("own parent") }]);

    await rejects(w.ctx, "task_link", { task_id: leaf, set_parent_task_id: root, clear_parent: true }, "invalid_input");
    expect((await taskRow(leaf)).parent_task_id).toBe(mid);
    const cleared = await ok(w.ctx, "task_link", { task_id: leaf, clear_parent: true });
    expect(cleared.task.parent_task_id).toBeNull();
    expect(await verbsOf(w.id.tenantId, leaf)).toEqual(["task.created", "task.parent_set", "task.parent_cleared"]);
    // Now the old chain is broken, root may sit under leaf.
    expect((await ok(w.ctx, "task_link", { task_id: root, set_parent_task_id: leaf })).cycle_rejected).toEqual([]);
    await rejects(w.ctx, "task_link", { task_id: leaf, set_parent_task_id: "PA-9" }, "not_found");
  });
});

describe("task_claim", () => {
  it("answers from what the claim already knows: the project it was scoped to and the status it set are not read again", async () => {
    const w = await world("claim-reads");
    await project(w.ctx, "CR", { summary: "reads" });
    const first = await create(w.ctx, "CR", { title: "first", priority: 0 });
    await create(w.ctx, "CR", { title: "second", priority: 1 });
    // Every statement the call prepares, in the Worker (the claims object has its own binding).
    const sent: string[] = [];
    const d1 = new Proxy(w.ctx.d1, {
      get(target, prop) {
        if (prop === "prepare") return (query: string) => (sent.push(query.replace(/\s+/g, " ")), target.prepare(query));
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const r = await claim({ ...w.ctx, d1 }, { project_id: "CR" });
    expect(r).toMatchObject({ claimed: true, task: { id: first.id, ref: first.ref, status: "in_progress", assignee_actor_id: w.id.actorId }, project_context: { key: "CR", summary: "reads" } });
    const projectReads = sent.filter((q) => /^select .* from "projects"/i.test(q));
    expect(projectReads).toHaveLength(1);
    // The reservations' follower is told the status (in progress, its holder's) instead of reading it.
    expect(sent.filter((q) => /^select "status", "assignee_actor_id" from "tasks"/i.test(q))).toEqual([]);
    // Its prior attempts are looked up by the reference the claim returned, on the task's changeset.
    expect(sent.some((q) => /from "events"/.test(q))).toBe(true);

    // A release still lets the task's reserved paths go, told the status rather than reading it.
    const released = await ok(w.ctx, "task_release", { task_id: first.ref });
    expect(released.task).toMatchObject({ id: first.id, status: "todo", assignee_actor_id: null });
  });

  it("scopes claim-next to projects linked to the given repositories, and the brief lists the links", async () => {
    const w = await world("claim-repos");
    const api = await project(w.ctx, "API");
    const web = await project(w.ctx, "WEB");
    await create(w.ctx, "WEB", { title: "web task", priority: 0 });
    const apiTask = await create(w.ctx, "API", { title: "api task", priority: 3 });
    const repo = { id: crypto.randomUUID(), slug: "acme/api" };
    await env.DB.batch([
      env.DB.prepare(`INSERT INTO repositories (id, tenant_id, owner, name, slug, remote_url, created_by, created_at) VALUES (?, ?, 'acme', 'api', ?, 'https://github.com/acme/api', ?, ?)`).bind(
        repo.id,
        w.id.tenantId,
        repo.slug,
        w.id.actorId,
        T0,
      ),
      env.DB.prepare(`INSERT INTO project_repositories (tenant_id, project_id, repository_id, role, created_at) VALUES (?, ?, ?, 'primary', ?)`).bind(w.id.tenantId, api.id, repo.id, T0),
    ]);
    // The web task has the higher priority, but only the api project is linked to acme/api.
    const bySlug = await claim(w.ctx, { repository_ids: ["ACME/api"] });
    expect(bySlug.task).toMatchObject({ id: apiTask.id });
    expect(await claim(w.ctx, { repository_ids: [repo.id] })).toMatchObject({ claimed: false, reason: "pool_empty" });
    await rejects(w.ctx, "task_claim", { repository_ids: ["acme/unknown"] }, "not_found");
    expect((await ok(w.ctx, "project_brief", { project: "API" })).repositories).toEqual([{ id: repo.id, slug: "acme/api", role: "primary" }]);
    expect((await ok(w.ctx, "project_brief", { project: web.id })).repositories).toEqual([]);
    // Another tenant cannot name this repository.
    const other = await world("claim-repos-b");
    await rejects(other.ctx, "task_claim", { repository_ids: [repo.id] }, "not_found");
  });

  it("claim-next takes the highest-priority ready unassigned task, oldest first on ties, and leases it", async () => {
    const w = await world("claim-next");
    const bob = await w.other("bob");
    const p = await project(w.ctx, "CN", { summary: "claims" });
    const mk = async (title: string, args: Record<string, unknown> = {}) => {
      const t = await create(w.ctx, "CN", { title, ...args });
      w.clock.advance(MINUTE);
      return t;
    };
    const p2 = await mk("p2 old", { priority: 2 });
    const p0old = await mk("p0 old", { priority: 0 });
    const p0new = await mk("p0 new", { priority: 0 });
    const p1 = await mk("p1", { priority: 1 });
    const bobs = await mk("bob's", { priority: 0, assignee_actor_id: "bob" });
    await mk("blocked", { priority: 0, depends_on: [bobs.id] });
    const review = await mk("in review", { priority: 0 });
    await update(w.ctx, review.id as string, { status: "in_review" });
    const now = w.clock.now().toISOString();

    const first = await claim(w.ctx, { project_id: "CN" });
    expect(first).toMatchObject({
      claimed: true,
      reason: "",
      extended: false,
      holder_actor_id: w.id.actorId,
      lease_expires_at: at(HOUR, now),
      project_context: { id: p.id, key: "CN", title: "Project CN", status: "active", summary: "claims" },
    });
    expect(first.task).toMatchObject({ id: p0old.id, status: "in_progress", assignee_actor_id: w.id.actorId, lease_expires_at: at(HOUR, now), claimed_at: now });
    expect(await taskRow(p0old.id as string)).toMatchObject({ status: "in_progress", assignee_actor_id: w.id.actorId, lease_expires_at: at(HOUR, now) });

    // Same caller, same instant: each claim is recorded against the task it took. Each is a new
    // claim, not a retry of the one before, so each carries its own idempotency key.
    const got = [first.task.id];
    for (let i = 0; i < 3; i++) got.push((await claim(w.ctx, { project_id: p.id, idempotency_key: `claim-next-${i}` })).task.id);
    expect(got).toEqual([p0old.id, p0new.id, p1.id, p2.id]);
    for (const id of got) {
      const claimed = await activityRows(w.id.tenantId, "verb = 'task.claimed' AND object_id = ?", id);
      expect(claimed, `task.claimed for ${id}`).toHaveLength(1);
      expect(claimed[0]).toMatchObject({ actor_id: w.id.actorId, project_id: p.id, at: now });
    }

    // What is left: assigned elsewhere, blocked, in review — none claimable.
    const empty = await claim(w.ctx, { project_id: "CN" });
    expect(empty).toMatchObject({ claimed: false, reason: "pool_empty", task: null, project_context: null, lease_expires_at: null, extended: false, holder_actor_id: null });
    expect((await claim(bob.ctx, {})).reason).toBe("pool_empty");
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'task.claimed'", w.id.tenantId)).toBe(4);

    // Once the blocker is done, the blocked task is claimable.
    await update(bob.ctx, bobs.id as string, { status: "done" });
    expect((await claim(bob.ctx, { project_id: "CN" })).task).toMatchObject({ title: "blocked", assignee_actor_id: bob.id.actorId });
  });

  it("claim-next orders both claimable states together: priority, then oldest, then id; blocked tasks are skipped", async () => {
    const w = await world("claim-order");
    const bob = await w.other("bob");
    await project(w.ctx, "CO");
    const mk = async (title: string, args: Record<string, unknown> = {}) => {
      const t = await create(w.ctx, "CO", { title, ...args });
      w.clock.advance(MINUTE);
      return t;
    };
    // Bob takes these by id on short leases that have run out by the time the agent claims.
    const expiring = async (title: string, priority: number) => {
      const t = await mk(title, { priority });
      expect(await claim(bob.ctx, { task_id: t.id, lease_seconds: 60 })).toMatchObject({ claimed: true });
      return t;
    };
    const blocker = await mk("assigned blocker", { priority: 4, assignee_actor_id: "bob" });
    await mk("blocked, oldest of the best", { priority: 0, depends_on: [blocker.id] });
    const lapsedLow = await expiring("lapsed, low", 3);
    const lapsedBest = await expiring("lapsed, best", 0);
    const twins = (
      await many(w.ctx, "CO", [
        { title: "twin", priority: 0 },
        { title: "twin", priority: 0 },
      ])
    ).task_ids as string[];
    w.clock.advance(MINUTE);
    const todoP1 = await mk("todo, p1", { priority: 1 });
    w.clock.advance(MINUTE);

    const got: unknown[] = [];
    for (let i = 0; i < 5; i++) got.push((await claim(w.ctx, { project_id: "CO", idempotency_key: `order-${i}` })).task?.id);
    // The lapsed lease of the best priority beats the todo tasks of that priority (it is older); twins
    // created at the same instant go by id; a lapsed lease of a worse priority waits its turn.
    expect(got).toEqual([lapsedBest.id, ...twins.sort(), todoP1.id, lapsedLow.id]);
    expect((await claim(w.ctx, { project_id: "CO", idempotency_key: "order-last" })).reason).toBe("pool_empty");
  });

  it("claim-next walks an index in claim order for each claimable state instead of sorting the tasks in scope", async () => {
    const scope = { tenantId: "t", actorId: "a", sessionId: "s", leaseSeconds: 60, now: new Date(T0) };
    const perProject = "USING INDEX tasks_project_status_order_idx (tenant_id=? AND project_id=? AND status=?)";
    const perTenant = "USING INDEX tasks_status_order_idx (tenant_id=? AND status=?)";
    const cases: Array<[Partial<ClaimScope>, string]> = [
      [{ projectId: "p" }, perProject],
      [{ projectId: "p", label: "db" }, "INDEX task_labels_project_status_order_idx (tenant_id=? AND project_id=? AND label=? AND status=?)"],
      [{}, perTenant],
      [{ label: "db", repositoryIds: ["r"] }, "INDEX task_labels_tenant_status_order_idx (tenant_id=? AND label=? AND status=?)"],
    ];
    for (const [narrow, index] of cases) {
      const c = claimCandidate({ ...scope, ...narrow });
      const plan = steps(
        (
          await explaining
            .prepare(c.sql)
            .bind(...c.params)
            .all()
        ).results,
      );
      expect(
        plan.filter((d) => d.includes(index)),
        plan.join(" | "),
      ).toHaveLength(2);
      // Only the two states' picks are sorted, against each other.
      expect(
        plan.filter((d) => d.includes("TEMP B-TREE")),
        plan.join(" | "),
      ).toEqual(["USE TEMP B-TREE FOR ORDER BY"]);
    }
  });

  it("checks lease_seconds (60–86400) and leases from the caller's clock", async () => {
    const w = await world("claim-lease");
    await project(w.ctx, "LZ");
    await many(w.ctx, "LZ", [{ title: "a" }, { title: "b" }]);
    await rejects(w.ctx, "task_claim", { lease_seconds: 59 }, "invalid_input");
    await rejects(w.ctx, "task_claim", { lease_seconds: 86_401 }, "invalid_input");
    await rejects(w.ctx, "task_claim", { lease_seconds: 600.5 }, "invalid_input");
    await rejects(w.ctx, "task_claim", { project_id: "NOPE" }, "not_found");
    await rejects(w.ctx, "task_claim", { task_id: "LZ-9" }, "not_found");
    expect((await claim(w.ctx, { lease_seconds: 60 })).lease_expires_at).toBe(at(60 * SECOND));
    w.clock.advance(MINUTE);
    expect((await claim(w.ctx, { lease_seconds: 86_400 })).lease_expires_at).toBe(at(MINUTE + DAY));
  });

  it("scopes claim-next by project and label", async () => {
    const w = await world("claim-scope");
    await project(w.ctx, "API");
    await project(w.ctx, "WEB");
    const apiPlain = await create(w.ctx, "API", { title: "api plain", priority: 0 });
    const apiDb = await create(w.ctx, "API", { title: "api db", labels: ["db"], priority: 3 });
    const webDb = await create(w.ctx, "WEB", { title: "web db", labels: ["db", "ui"], priority: 1 });
    expect((await claim(w.ctx, { project_id: "API", label: "db" })).task.id).toBe(apiDb.id);
    expect((await claim(w.ctx, { label: "db" })).task.id).toBe(webDb.id);
    // Claiming again on purpose (not a retry of the claim just answered) carries its own key.
    expect((await claim(w.ctx, { label: "db", idempotency_key: "db-again" })).reason).toBe("pool_empty");
    expect((await claim(w.ctx, { project_id: "WEB" })).reason).toBe("pool_empty");
    expect((await claim(w.ctx, { project_id: "API" })).task.id).toBe(apiPlain.id);
  });

  it("with task_id: a compare-and-swap claim; the holder extends; others learn why not", async () => {
    const w = await world("claim-cas");
    const bob = await w.other("bob");
    await project(w.ctx, "CAS");
    const t = await create(w.ctx, "CAS", { title: "target" });
    const dep = await create(w.ctx, "CAS", { title: "dep" });
    const blocked = await create(w.ctx, "CAS", { title: "blocked", depends_on: [dep.id] });
    const done = await create(w.ctx, "CAS", { title: "done" });
    await update(w.ctx, done.id as string, { status: "done" });
    const bobsTodo = await create(w.ctx, "CAS", { title: "bob's", assignee_actor_id: "bob" });
    const mine = await create(w.ctx, "CAS", { title: "mine", assignee_actor_id: "me" });

    const first = await claim(w.ctx, { task_id: "cas-1" });
    expect(first).toMatchObject({ claimed: true, extended: false, lease_expires_at: at(HOUR) });
    expect(first.task).toMatchObject({ id: t.id, status: "in_progress", assignee_actor_id: w.id.actorId, claimed_at: T0 });

    w.clock.advance(10 * MINUTE);
    const again = await claim(w.ctx, { task_id: t.id, lease_seconds: 7200 });
    expect(again).toMatchObject({ claimed: true, extended: true, lease_expires_at: at(10 * MINUTE + 2 * HOUR) });
    expect(again.task).toMatchObject({ claimed_at: T0, lease_expires_at: at(10 * MINUTE + 2 * HOUR) });
    expect(await taskRow(t.id as string)).toMatchObject({ claimed_at: T0, lease_expires_at: at(10 * MINUTE + 2 * HOUR) });

    const held = await claim(bob.ctx, { task_id: t.id });
    expect(held).toMatchObject({ claimed: false, reason: "held", holder_actor_id: w.id.actorId, lease_expires_at: at(10 * MINUTE + 2 * HOUR), task: null });
    expect(await taskRow(t.id as string)).toMatchObject({ assignee_actor_id: w.id.actorId });

    expect(await claim(bob.ctx, { task_id: blocked.id })).toMatchObject({ claimed: false, reason: "blocked" });
    expect(await claim(bob.ctx, { task_id: done.id })).toMatchObject({ claimed: false, reason: "closed" });
    expect(await claim(w.ctx, { task_id: bobsTodo.id })).toMatchObject({ claimed: false, reason: "assigned_elsewhere", holder_actor_id: bob.id.actorId });
    // A task already assigned to you (not yet claimed) is yours to claim.
    expect(await claim(w.ctx, { task_id: mine.id })).toMatchObject({ claimed: true, extended: false, task: { id: mine.id, status: "in_progress" } });
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'task.claimed' AND object_id = ?", w.id.tenantId, t.id)).toBe(2);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'task.claimed' AND object_id = ?", w.id.tenantId, blocked.id)).toBe(0);
  });

  async function race(name: string, tasksPerProject: number[], scoped: boolean, racers = 12) {
    const w = await world(name);
    const projects: Structured[] = [];
    const taskIds: string[] = [];
    for (const [i, n] of tasksPerProject.entries()) {
      const p = await project(w.ctx, `RACE${i}`);
      projects.push(p);
      taskIds.push(
        ...((
          await many(
            w.ctx,
            p.id as string,
            Array.from({ length: n }, (_, j) => ({ title: `r${i}-${j}`, priority: j % 3 })),
          )
        ).task_ids as string[]),
      );
    }
    const agents = await Promise.all(Array.from({ length: racers }, (_, i) => w.other(`racer-${i}`)));
    const results = await Promise.all(agents.map((a) => claim(a.ctx, scoped ? { project_id: projects[0]!.id } : {})));
    const won = results.filter((r) => r.claimed);
    const lost = results.filter((r) => !r.claimed);
    expect(won).toHaveLength(taskIds.length);
    expect(lost).toHaveLength(racers - taskIds.length);
    expect(lost.every((r) => r.reason === "pool_empty")).toBe(true);
    const claimedIds = won.map((r) => r.task.id as string);
    expect(new Set(claimedIds).size).toBe(claimedIds.length);
    expect(sorted(claimedIds)).toEqual(sorted(taskIds));
    // Each winner is the task's assignee in D1, and each task has exactly one task.claimed, by its assignee.
    const rows = (await env.DB.prepare("SELECT id, status, assignee_actor_id FROM tasks WHERE tenant_id = ?").bind(w.id.tenantId).all<Structured>()).results;
    expect(rows.every((r) => r.status === "in_progress")).toBe(true);
    expect(new Set(rows.map((r) => r.assignee_actor_id)).size).toBe(taskIds.length);
    for (const [i, r] of results.entries()) {
      if (r.claimed) expect(rows.find((x) => x.id === r.task.id)!.assignee_actor_id).toBe(agents[i]!.id.actorId);
    }
    const claimedActs = await activityRows(w.id.tenantId, "verb = 'task.claimed'");
    expect(claimedActs).toHaveLength(taskIds.length);
    for (const row of rows) expect(claimedActs.filter((a) => a.object_id === row.id).map((a) => a.actor_id)).toEqual([row.assignee_actor_id]);
  }

  it("THE RACE: 12 concurrent claim-next calls over 8 ready tasks in a project hand each task out exactly once", async () => {
    await race("race-project", [8], true);
  });

  it("THE RACE, tenant-wide: 12 concurrent claim-next calls over 8 ready tasks in two projects, no project scope", async () => {
    await race("race-tenant", [5, 3], false);
  });

  it("THE RACE, wide: 64 concurrent claim-next calls over 50 ready tasks never double-claim and leave none behind", async () => {
    await race("race-wide", [50], true, 64);
  }, 60_000);

  it("12 concurrent claims of one task by id: exactly one wins, the others see it held", async () => {
    const w = await world("race-cas");
    await project(w.ctx, "ONE");
    const t = await create(w.ctx, "ONE");
    const agents = await Promise.all(Array.from({ length: 12 }, (_, i) => w.other(`cas-${i}`)));
    const results = await Promise.all(agents.map((a) => claim(a.ctx, { task_id: t.id })));
    const winners = results.filter((r) => r.claimed);
    expect(winners).toHaveLength(1);
    const holder = winners[0]!.holder_actor_id as string;
    expect(results.filter((r) => !r.claimed).every((r) => r.reason === "held" && r.holder_actor_id === holder)).toBe(true);
    expect((await taskRow(t.id as string)).assignee_actor_id).toBe(holder);
  });
});

describe("leases", () => {
  it("the scope's ClaimsDO alarm returns an expired lease to the pool and records task.lease_expired", async () => {
    // Claimed at a time in the past: the lease has already run out in real time, so the alarm the
    // ClaimsDO arms is due at once (the runtime may fire it on its own; runDurableObjectAlarm makes sure).
    const PAST = new Date(Date.now() - 3 * HOUR).toISOString();
    const w = await world("lease-alarm", PAST);
    const p = await project(w.ctx, "ALM");
    const t = await create(w.ctx, "ALM");
    const stub = claimsStub(w.id.tenantId, p.id as string);
    const r = await claim(w.ctx, { project_id: p.id, lease_seconds: 60 });
    expect(r).toMatchObject({ claimed: true, lease_expires_at: at(60 * SECOND, PAST), task: { id: t.id } });

    await runDurableObjectAlarm(stub);
    await vi.waitFor(async () => expect((await taskRow(t.id as string)).status).toBe("todo"), { timeout: 5000, interval: 50 });
    expect(await taskRow(t.id as string)).toMatchObject({ status: "todo", assignee_actor_id: null, lease_expires_at: null, claimed_at: null });
    const expired = await activityRows(w.id.tenantId, "verb = 'task.lease_expired'");
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ object_id: t.id, actor_id: w.id.actorId, project_id: p.id, severity: "warn" });
    expect(await stub.tracked()).toEqual([]);
    expect(await runInDurableObject(stub, async (_o, state) => state.storage.getAlarm())).toBeNull();
    // Back in the pool: another claim takes it.
    expect((await claim(w.ctx, { project_id: p.id })).task.id).toBe(t.id);
  });

  it("runDurableObjectAlarm releases the leases that have run out by then, keeps the others and re-arms for them", async () => {
    const w = await world("lease-alarm-run");
    const p = await project(w.ctx, "ALR");
    const a = await create(w.ctx, "ALR", { title: "a" });
    w.clock.advance(SECOND);
    const b = await create(w.ctx, "ALR", { title: "b" });
    w.clock.set(T0);
    expect((await claim(w.ctx, { project_id: p.id, lease_seconds: 60 })).task.id).toBe(a.id);
    expect((await claim(w.ctx, { project_id: p.id, lease_seconds: 3600 })).task.id).toBe(b.id);
    const stub = claimsStub(w.id.tenantId, p.id as string);
    // Time passes for a only: its lease now ends in the real past, in D1 and in the object's own
    // table, while the alarm stays where it was armed (2030), so it cannot fire by itself.
    const past = new Date(Date.now() - MINUTE).toISOString();
    await env.DB.prepare("UPDATE tasks SET lease_expires_at = ? WHERE id = ?").bind(past, a.id).run();
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec("UPDATE leases SET expires_at = ? WHERE task_id = ?", past, a.id);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await taskRow(a.id as string)).toMatchObject({ status: "todo", assignee_actor_id: null, lease_expires_at: null, claimed_at: null });
    expect(await taskRow(b.id as string)).toMatchObject({ status: "in_progress", assignee_actor_id: w.id.actorId, lease_expires_at: at(HOUR) });
    expect((await activityRows(w.id.tenantId, "verb = 'task.lease_expired'")).map((x) => x.object_id)).toEqual([a.id]);
    expect(await stub.tracked()).toEqual([{ task_id: b.id, expires_at: at(HOUR) }]);
    expect(await runInDurableObject(stub, async (_o, state) => state.storage.getAlarm())).toBe(Date.parse(at(HOUR)));
  });

  it("the ClaimsDO tracks each lease it hands out and arms its alarm at the earliest", async () => {
    const w = await world("lease-track");
    const p = await project(w.ctx, "TRK");
    const a = await create(w.ctx, "TRK", { title: "a" });
    w.clock.advance(SECOND);
    const b = await create(w.ctx, "TRK", { title: "b" });
    w.clock.set(T0);
    await claim(w.ctx, { project_id: p.id, lease_seconds: 7200 });
    await claim(w.ctx, { project_id: p.id, lease_seconds: 600 });
    const stub = claimsStub(w.id.tenantId, p.id as string);
    expect(await stub.tracked()).toEqual([
      { task_id: b.id, expires_at: at(600 * SECOND) },
      { task_id: a.id, expires_at: at(2 * HOUR) },
    ]);
    expect(await runInDurableObject(stub, async (_o, state) => state.storage.getAlarm())).toBe(Date.parse(at(600 * SECOND)));
    // A claim by id queues in its task's project scope too, not in the tenant-wide one.
    const c = await create(w.ctx, "TRK", { title: "c" });
    await claim(w.ctx, { task_id: c.id, lease_seconds: 3000 });
    expect((await stub.tracked()).map((l) => l.task_id)).toEqual([b.id, c.id, a.id]);
    expect(await claimsStub(w.id.tenantId, null).tracked()).toEqual([]);
    // Run early (real time is long before these leases end), the alarm leaves them alone and re-arms.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.tracked()).toHaveLength(3);
    expect((await taskRow(a.id as string)).status).toBe("in_progress");
    expect(await runInDurableObject(stub, async (_o, state) => state.storage.getAlarm())).toBe(Date.parse(at(600 * SECOND)));
  });

  it("an expired lease makes the task claimable by another actor before any alarm runs", async () => {
    const w = await world("lease-steal");
    const bob = await w.other("bob");
    await project(w.ctx, "STL");
    const t = await create(w.ctx, "STL");
    await claim(w.ctx, { project_id: "STL", lease_seconds: 60 });
    w.clock.advance(30 * SECOND);
    expect((await claim(bob.ctx, { project_id: "STL" })).reason).toBe("pool_empty");
    expect((await claim(bob.ctx, { task_id: t.id })).reason).toBe("held");
    w.clock.advance(31 * SECOND);
    const stolen = await claim(bob.ctx, { project_id: "STL" });
    expect(stolen).toMatchObject({ claimed: true, extended: false, lease_expires_at: at(61 * SECOND + HOUR) });
    expect(stolen.task).toMatchObject({ id: t.id, status: "in_progress", assignee_actor_id: bob.id.actorId, claimed_at: at(61 * SECOND) });
    expect((await activityRows(w.id.tenantId, "verb = 'task.claimed'")).map((a) => a.actor_id)).toEqual([w.id.actorId, bob.id.actorId]);
    // The first holder lost it: release is refused (bob's live lease), a claim by id sees bob holding it.
    expect((await rejects(w.ctx, "task_release", { task_id: t.id }, "lease_held")).message).toContain("bob");
    expect(await claim(w.ctx, { task_id: t.id })).toMatchObject({ claimed: false, reason: "held", holder_actor_id: bob.id.actorId });

    // By id, too: after bob's lease runs out, the first agent takes it back directly.
    w.clock.advance(HOUR + MINUTE);
    expect(await claim(w.ctx, { task_id: t.id })).toMatchObject({ claimed: true, extended: false, task: { assignee_actor_id: w.id.actorId } });
  });

  it("runMaintenance releases expired leases (the cron safety net) but not one extended in time, and reports each job", async () => {
    const w = await world("lease-cron");
    const bob = await w.other("bob");
    await project(w.ctx, "CRN");
    const r = await many(w.ctx, "CRN", [{ title: "lapses" }, { title: "extended" }, { title: "long" }]);
    const [lapses, extended, long] = r.task_ids as [string, string, string];
    await claim(w.ctx, { task_id: lapses, lease_seconds: 60 });
    await claim(bob.ctx, { task_id: extended, lease_seconds: 60 });
    await claim(w.ctx, { task_id: long, lease_seconds: 3600 });
    w.clock.advance(45 * SECOND);
    expect((await claim(bob.ctx, { task_id: extended, lease_seconds: 600 })).extended).toBe(true);

    // Before anything expires, the reaper leaves all three alone.
    await runMaintenance(env as unknown as Env, new Date(at(30 * SECOND)));
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE tenant_id = ? AND status = 'in_progress'", w.id.tenantId)).toBe(3);

    const reports = await runMaintenance(env as unknown as Env, new Date(at(2 * MINUTE)));
    expect(reports.map((x) => x.job)).toEqual(jobsFor(FREQUENT_CRON));
    expect(reports.every((x) => x.ok)).toBe(true);
    expect(reports[0]!.detail).toMatch(/^[1-9]\d* expired lease\(s\) released$/);
    expect(await taskRow(lapses)).toMatchObject({ status: "todo", assignee_actor_id: null, lease_expires_at: null, claimed_at: null, updated_at: at(2 * MINUTE) });
    expect(await taskRow(extended)).toMatchObject({ status: "in_progress", assignee_actor_id: bob.id.actorId, lease_expires_at: at(45 * SECOND + 10 * MINUTE) });
    expect(await taskRow(long)).toMatchObject({ status: "in_progress", assignee_actor_id: w.id.actorId });
    const expired = await activityRows(w.id.tenantId, "verb = 'task.lease_expired'");
    expect(expired.map((a) => [a.object_id, a.actor_id])).toEqual([[lapses, w.id.actorId]]);

    // Running it again releases nothing more for this tenant (idempotent).
    await runMaintenance(env as unknown as Env, new Date(at(2 * MINUTE)));
    expect(await activityRows(w.id.tenantId, "verb = 'task.lease_expired'")).toHaveLength(1);

    // The worker's scheduled() runs the same jobs at the controller's time.
    const controller = createScheduledController({ scheduledTime: new Date(at(2 * HOUR)), cron: "*/5 * * * *" });
    const ectx = createExecutionContext();
    await worker.scheduled(controller, env as unknown as Env, ectx);
    await waitOnExecutionContext(ectx);
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE tenant_id = ? AND status = 'in_progress'", w.id.tenantId)).toBe(0);
    expect(sorted((await activityRows(w.id.tenantId, "verb = 'task.lease_expired'")).map((a) => a.object_id as string))).toEqual(sorted([lapses, extended, long]));
  });
});

describe("task_release", () => {
  it("the holder releases to the pool with a note; others get lease_held, repeats not_claimed; it is claimable again", async () => {
    const w = await world("release");
    const bob = await w.other("bob");
    await project(w.ctx, "REL");
    const t = await create(w.ctx, "REL");
    await claim(w.ctx, { project_id: "REL" });

    const notHolder = await rejects(bob.ctx, "task_release", { task_id: t.id }, "lease_held");
    expect(notHolder.message).toContain(`leased to agent (${w.id.actorId}) until ${at(HOUR)}`);
    expect(notHolder.hint).toContain("force");

    w.clock.advance(MINUTE);
    const released = await ok(w.ctx, "task_release", { task_id: "rel-1", note: "blocked on review" });
    expect(released.task).toMatchObject({ id: t.id, status: "todo", assignee_actor_id: null, lease_expires_at: null, claimed_at: null, updated_at: at(MINUTE), state: "ready" });
    const act = (await activityRows(w.id.tenantId, "verb = 'task.released'"))!;
    expect(act).toHaveLength(1);
    expect(act[0]).toMatchObject({ object_id: t.id, actor_id: w.id.actorId, at: at(MINUTE) });
    expect(act[0]!.summary).toContain("blocked on review");
    expect(JSON.parse(act[0]!.metadata as string)).toEqual({ note: "blocked on review" });

    await rejects(w.ctx, "task_release", { task_id: t.id }, "not_claimed");
    await rejects(w.ctx, "task_release", { task_id: "REL-5" }, "not_found");
    await rejects(w.ctx, "task_release", { task_id: t.id, note: "x".repeat(2001) }, "invalid_input");

    const again = await claim(bob.ctx, {});
    expect(again.task).toMatchObject({ id: t.id, assignee_actor_id: bob.id.actorId });
    expect((await ok(bob.ctx, "task_release", { task_id: t.id })).task.status).toBe("todo");
  });
});

describe("idempotency", () => {
  it("replays a write with the same key (explicit or derived from session and request id) and writes once", async () => {
    const w = await world("idem");
    await project(w.ctx, "IDM");
    const first = await ok(w.ctx, "task_create", { project_id: "IDM", title: "once", idempotency_key: "k-1" });
    const replay = await ok(w.ctx, "task_create", { project_id: "IDM", title: "once", idempotency_key: "k-1" });
    expect(replay.idempotent_replay).toBe(true);
    expect(replay.task.id).toBe(first.task.id);
    await rejects(w.ctx, "task_create", { project_id: "IDM", title: "other", idempotency_key: "k-1" }, "idempotency_key_reused");

    const rpc = { ...w.ctx, requestId: 1 };
    const a = await ok(rpc, "task_update", { task_id: first.task.id, patch: { status: "in_progress" } });
    const b = await ok(rpc, "task_update", { task_id: first.task.id, patch: { status: "in_progress" } });
    expect(a.idempotent_replay).toBeUndefined();
    expect(b.idempotent_replay).toBe(true);
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
    expect(await verbsOf(w.id.tenantId, first.task.id)).toEqual(["task.created", "task.in_progress"]);
  });

  it("runMaintenance removes idempotency keys whose expiry has passed and keeps live ones", async () => {
    const w = await world("idem-retention");
    await project(w.ctx, "RET");
    await ok(w.ctx, "task_create", { project_id: "RET", title: "old", idempotency_key: "k-old" });
    w.clock.advance(2 * DAY);
    await ok(w.ctx, "task_create", { project_id: "RET", title: "new", idempotency_key: "k-new" });
    const keys = () =>
      env.DB.prepare("SELECT key, expires_at FROM idempotency_keys WHERE tenant_id = ? ORDER BY key")
        .bind(w.id.tenantId)
        .all<Structured>()
        .then((r) => r.results);
    // project_create passed no key: it got one derived from its content, held for the window only.
    expect(await keys()).toEqual([
      { key: expect.stringMatching(/^content:/), expires_at: at(DERIVED_WINDOW_MS) },
      { key: "k-new", expires_at: at(3 * DAY) },
      { key: "k-old", expires_at: at(DAY) },
    ]);

    const reports = await runMaintenance(env as unknown as Env, new Date(at(2 * DAY + HOUR)));
    const retention = reports.find((x) => x.job === "idempotency_retention")!;
    expect(retention.ok).toBe(true);
    expect(retention.detail).toMatch(/^[1-9]\d* expired idempotency key\(s\) removed$/);
    expect((await keys()).map((k) => k.key)).toEqual(["k-new"]);

    // The live key still replays; the swept one is forgotten, so reusing it is a new write.
    expect((await ok(w.ctx, "task_create", { project_id: "RET", title: "new", idempotency_key: "k-new" })).idempotent_replay).toBe(true);
    const reused = await ok(w.ctx, "task_create", { project_id: "RET", title: "old", idempotency_key: "k-old" });
    expect(reused.idempotent_replay).toBeUndefined();
    expect(reused.task.ref).toBe("RET-3");
  });
});

describe("tenant isolation", () => {
  it("another tenant's tasks are not_found to every task tool, and never claimed", async () => {
    const a = await world("iso-a");
    const b = await world("iso-b");
    const pa = await project(a.ctx, "ISO");
    await project(b.ctx, "ISO");
    const ta = await create(a.ctx, "ISO", { title: "A's secret" });
    const tb = await create(b.ctx, "ISO", { title: "B's own" });
    expect(tb.ref).toBe("ISO-1");
    const ta2 = await create(a.ctx, "ISO", { title: "A's second" });
    expect(ta2.ref).toBe("ISO-2");
    await claim(a.ctx, { task_id: ta2.id });
    const aBefore = await tenantState(a.id.tenantId);
    const id = ta.id as string;

    await rejects(b.ctx, "task_get", { task_id: id }, "not_found");
    await rejects(b.ctx, "task_get", { task_id: "ISO-2" }, "not_found");
    await rejects(b.ctx, "task_update", { task_id: id, patch: { title: "pwned" } }, "not_found");
    await rejects(b.ctx, "task_update", { task_id: "iso-2", patch: { status: "done" } }, "not_found");
    await rejects(b.ctx, "task_assign", { task_id: id, actor_id: "me" }, "not_found");
    await rejects(b.ctx, "task_assign", { task_id: tb.id, actor_id: a.id.actorId }, "not_found");
    await rejects(b.ctx, "task_update", { task_id: tb.id, patch: { reviewer_actor_id: a.id.actorId } }, "not_found");
    await rejects(b.ctx, "task_link", { task_id: id, add_depends_on: [tb.id] }, "not_found");
    await rejects(b.ctx, "task_link", { task_id: tb.id, add_depends_on: [id] }, "not_found");
    await rejects(b.ctx, "task_link", { task_id: tb.id, set_parent_task_id: id }, "not_found");
    await rejects(b.ctx, "task_claim", { task_id: id }, "not_found");
    await rejects(b.ctx, "task_claim", { project_id: pa.id }, "not_found");
    await rejects(b.ctx, "task_release", { task_id: ta2.id }, "not_found");
    await rejects(b.ctx, "task_create", { project_id: pa.id, title: "x" }, "not_found");
    await rejects(b.ctx, "task_create", { project_id: "ISO", title: "x", depends_on: [id] }, "not_found");
    await rejects(b.ctx, "task_create", { project_id: "ISO", title: "x", parent_task_id: id }, "not_found");
    await rejects(b.ctx, "task_create", { project_id: "ISO", title: "x", assignee_actor_id: a.id.actorId }, "not_found");
    await rejects(b.ctx, "task_create_many", { project_id: "ISO", tasks: [{ title: "x" }, { title: "y", depends_on: [id] }] }, "not_found");
    await rejects(b.ctx, "task_query", { project_id: pa.id }, "not_found");
    await rejects(b.ctx, "task_query", { assignee_actor_id: a.id.actorId }, "not_found");

    // B's lists hold only B's task; B's claim-next takes only B's task, then finds the pool empty.
    expect(ids(await query(b.ctx, {}))).toEqual([tb.id]);
    expect(ids(await query(b.ctx, { q: "secret" }))).toEqual([]);
    expect((await claim(b.ctx, {})).task.id).toBe(tb.id);
    // A second claim on purpose, not a retry of the first: its own key.
    expect(await claim(b.ctx, { idempotency_key: "b-again" })).toMatchObject({ claimed: false, reason: "pool_empty" });
    expect(await claim(b.ctx, { project_id: "ISO" })).toMatchObject({ claimed: false, reason: "pool_empty" });
    // None of the above touched A's rows.
    expect(await tenantState(a.id.tenantId)).toEqual(aBefore);
    expect(ids(await query(a.ctx, {})).sort()).toEqual(sorted([id, ta2.id as string]));
  }, 30_000); // every task tool, one after another: slow on a loaded machine
});

describe("task_claim retries", () => {
  it("a retried claim-next returns the task it claimed instead of taking another; after any other write it claims the next", async () => {
    const w = await world("claim-retry");
    await project(w.ctx, "RTY");
    await create(w.ctx, "RTY", { title: "one" });
    await create(w.ctx, "RTY", { title: "two" });
    const first = await ok(w.ctx, "task_claim", { project_id: "RTY" });
    const retry = await ok(w.ctx, "task_claim", { project_id: "RTY" });
    expect(retry).toMatchObject({ idempotent_replay: true, task: { id: first.task.id } });
    expect(await count("SELECT COUNT(*) AS n FROM tasks WHERE tenant_id = ? AND status = 'in_progress'", w.id.tenantId)).toBe(1);
    // Finishing the first task is another write: the same claim-next is a new claim.
    await ok(w.ctx, "task_update", { task_id: first.task.id, patch: { status: "done" } });
    const next = await ok(w.ctx, "task_claim", { project_id: "RTY" });
    expect(next.idempotent_replay).toBeUndefined();
    expect(next.task.id).not.toBe(first.task.id);
  });

  it("an empty pool is answered afresh on every poll, and re-claiming by id extends the lease every time", async () => {
    const w = await world("claim-poll");
    await project(w.ctx, "POL");
    expect(await ok(w.ctx, "task_claim", { project_id: "POL" })).toMatchObject({ claimed: false, reason: "pool_empty" });
    const t = await create(w.ctx, "POL", { title: "arrives" });
    const polled = await ok(w.ctx, "task_claim", { project_id: "POL" });
    expect(polled).toMatchObject({ claimed: true, task: { id: t.id } });
    expect(polled.idempotent_replay).toBeUndefined();
    const byId = { task_id: t.id, lease_seconds: 60 };
    const a = await ok(w.ctx, "task_claim", byId);
    w.clock.advance(30_000);
    const b = await ok(w.ctx, "task_claim", byId);
    expect(b.idempotent_replay).toBeUndefined();
    expect(b).toMatchObject({ extended: true, fencing_token: a.fencing_token });
    expect(Date.parse(b.lease_expires_at)).toBe(Date.parse(a.lease_expires_at) + 30_000);
  });
});
