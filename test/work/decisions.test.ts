/**
 * The work ledger's decisions and collab rooms (seed 001): decision_log, decision_set_status and
 * decision_query (append-only decisions, supersede, lexical search), comment_add and
 * comment_query (mentions, threads), activity_log and activity_query, notification_query and
 * notification_mark_read, through the registry against real local D1.
 *
 * Time: the clock sits in the future (T0, 2030) so task claims made here never expire in real
 * time. Each test has its own tenant because D1 keeps rows between the tests of this file.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { ALL_TOOLS } from "../../src/server/registry";
import { toolListing } from "../../src/core/listing";
import { DERIVED_WINDOW_MS } from "../../src/core/idempotency";
import { call, count, DAY, MINUTE, ok, refusedWithoutWrites, settle, type Structured, newWorld, type World } from "../support/helpers";
import { mintRun } from "../support/run-helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const HOUR = 60 * MINUTE;
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A fresh tenant with one caller ("agent") and a clock at T0. */
const world = (name: string): Promise<World> => newWorld(`wdc-${name}`, { start: T0 });

async function project(ctx: Ctx, key: string): Promise<Structured> {
  return (await ok(ctx, "project_create", { title: `Project ${key}`, key })).project as Structured;
}

async function task(ctx: Ctx, projectId: string, title = "a task"): Promise<Structured> {
  return (await ok(ctx, "task_create", { project_id: projectId, title })).task as Structured;
}

async function decide(ctx: Ctx, args: Record<string, unknown>): Promise<Structured> {
  return (await ok(ctx, "decision_log", { title: "A decision", choice: "Option A", ...args })).decision as Structured;
}

async function comment(ctx: Ctx, objectType: string, objectId: string, body: string, extra: Record<string, unknown> = {}): Promise<Structured> {
  return ok(ctx, "comment_add", { object_type: objectType, object_id: objectId, body, ...extra });
}

/** A work request (handoff) row; the handoff tools arrive later. */
async function insertHandoff(tenantId: string, fromActorId: string, projectId: string | null): Promise<string> {
  const id = crypto.randomUUID();
  await env.DB.prepare(`INSERT INTO handoffs (id, tenant_id, kind, title, from_actor_id, related_project_id, created_at, updated_at) VALUES (?, ?, 'question', 'Which queue?', ?, ?, ?, ?)`)
    .bind(id, tenantId, fromActorId, projectId, T0, T0)
    .run();
  return id;
}

async function activityRows(tenantId: string, where = "1 = 1", ...params: unknown[]): Promise<Structured[]> {
  const rows = await env.DB.prepare(`SELECT * FROM activity WHERE tenant_id = ? AND ${where} ORDER BY seq`)
    .bind(tenantId, ...params)
    .all<Structured>();
  return rows.results;
}

async function notificationRows(tenantId: string, actorId?: string): Promise<Structured[]> {
  const rows = await env.DB.prepare(`SELECT * FROM notifications WHERE tenant_id = ? AND (? IS NULL OR actor_id = ?) ORDER BY seq`)
    .bind(tenantId, actorId ?? null, actorId ?? null)
    .all<Structured>();
  return rows.results;
}

/** Walks every page of a cursor-paginated list. */
async function allPages(ctx: Ctx, tool: string, args: Record<string, unknown>): Promise<{ items: Structured[]; pages: number }> {
  const items: Structured[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await ok(ctx, tool, { ...args, ...(cursor ? { cursor } : {}) });
    items.push(...(r.items as Structured[]));
    cursor = r.next_cursor as string | undefined;
    pages++;
    if (pages > 50) throw new Error("pagination did not end");
  } while (cursor);
  return { items, pages };
}

const ids = (items: Structured[]) => items.map((x) => x.id as string);
const sorted = (xs: string[]) => [...xs].sort();

/** Everything the tools in this file write for one tenant, so a refused call can be shown to write nothing. */
async function tenantState(tenantId: string) {
  const text = (sql: string) =>
    env.DB.prepare(sql)
      .bind(tenantId)
      .first<{ s: string | null }>()
      .then((r) => r?.s ?? "");
  return {
    decisions: await text(
      `SELECT group_concat(id || ':' || ifnull(project_id, '-') || ':' || title || ':' || choice || ':' || status || ':' || status_changed_at || ':' ||
         ifnull(supersedes_decision_id, '-'), '|') AS s FROM (SELECT * FROM decisions WHERE tenant_id = ? ORDER BY seq)`,
    ),
    comments: await count("SELECT COUNT(*) AS n FROM comments WHERE tenant_id = ?", tenantId),
    notifications: await text(`SELECT group_concat(id || ':' || actor_id || ':' || ifnull(read_at, '-'), '|') AS s FROM (SELECT * FROM notifications WHERE tenant_id = ? ORDER BY seq)`),
    activity: await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", tenantId),
    pendingKeys: await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE tenant_id = ? AND status = 'pending'", tenantId),
  };
}

/** Asserts a failed call with `code`, a full error body, and nothing written anywhere in the tenant. */
const rejects = (ctx: Ctx, tool: string, args: unknown, code: string): Promise<Structured> => refusedWithoutWrites(ctx, tool, args, code, () => tenantState(ctx.tenantId));

// ---------------------------------------------------------------------------------------------

describe("decision_log", () => {
  it("logs the full shape with options normalised, status accepted by default, the project by key, and decision.logged", async () => {
    const w = await world("log-shape");
    const api = await project(w.ctx, "API");

    const r = await ok(w.ctx, "decision_log", {
      title: "Queue backend",
      choice: "Use Cloudflare Queues",
      context: "We need at-least-once delivery.",
      rationale: "Managed, and close to the workers.",
      options: [{ label: "Queues" }, { label: "Kafka", summary: "Self-hosted log", pros: ["mature"], cons: ["ops cost", "latency"] }],
      project_id: "api",
    });
    const d = r.decision as Structured;
    expect(d).toEqual({
      id: expect.stringMatching(UUID_V7),
      project_id: api.id,
      title: "Queue backend",
      choice: "Use Cloudflare Queues",
      context: "We need at-least-once delivery.",
      rationale: "Managed, and close to the workers.",
      options: [
        { label: "Queues", summary: "", pros: [], cons: [] },
        { label: "Kafka", summary: "Self-hosted log", pros: ["mature"], cons: ["ops cost", "latency"] },
      ],
      status: "accepted",
      supersedes_decision_id: null,
      superseded_by: null,
      created_by: w.id.actorId,
      created_at: T0,
      status_changed_at: T0,
    });

    const acts = await activityRows(w.id.tenantId, "object_id = ?", d.id);
    expect(acts).toHaveLength(1);
    expect(acts[0]).toMatchObject({
      verb: "decision.logged",
      object_type: "decision",
      project_id: api.id,
      actor_id: w.id.actorId,
      at: T0,
      summary: "Queue backend: Use Cloudflare Queues",
      session_id: "sess-1",
    });

    // The read path returns the same shape.
    const listed = await ok(w.ctx, "decision_query", {});
    expect(listed.items).toEqual([d]);

    // A tenant-wide decision: no project, empty context/rationale/options, an explicit status.
    const wide = await decide(w.ctx, { title: "Style", choice: "Prettier", status: "proposed" });
    expect(wide).toMatchObject({ project_id: null, context: "", rationale: "", options: [], status: "proposed" });
    expect((await activityRows(w.id.tenantId, "object_id = ?", wide.id))[0]).toMatchObject({ verb: "decision.logged", project_id: null });
  });

  it("supersedes: links both ways, inherits the old project unless one is given, and records decision.superseded", async () => {
    const w = await world("log-supersede");
    const api = await project(w.ctx, "API");
    const web = await project(w.ctx, "WEB");
    const old = await decide(w.ctx, { title: "Database", choice: "MySQL", project_id: api.id, status: "proposed" });

    w.clock.advance(HOUR);
    const next = await decide(w.ctx, { title: "Database", choice: "Postgres", supersedesDecisionId: old.id });
    expect(next).toMatchObject({ supersedes_decision_id: old.id, superseded_by: null, project_id: api.id, created_at: at(HOUR) });

    const acts = await activityRows(w.id.tenantId, "object_id = ?", next.id);
    expect(acts.map((a) => a.verb)).toEqual(["decision.superseded"]);
    expect(acts[0]!.project_id).toBe(api.id);
    expect(JSON.parse(acts[0]!.metadata as string)).toEqual({ supersedes: old.id });

    const byId = async (id: string) => ((await ok(w.ctx, "decision_query", { limit: 200 })).items as Structured[]).find((x) => x.id === id)!;
    // The old decision is untouched except that it now points at its replacement.
    expect(await byId(old.id)).toEqual({ ...old, superseded_by: next.id });

    // Superseded again, with an explicit project: the latest replacement is the one shown.
    w.clock.advance(HOUR);
    const third = await decide(w.ctx, { title: "Database", choice: "SQLite on D1", supersedes_decision_id: old.id, project_id: "WEB" });
    expect(third.project_id).toBe(web.id);
    expect((await byId(old.id)).superseded_by).toBe(third.id);
    expect((await byId(next.id)).superseded_by).toBeNull();
  });

  it("an unknown project or superseded decision is not_found, with nothing written", async () => {
    const w = await world("log-notfound");
    await project(w.ctx, "API");
    await decide(w.ctx, {});

    const e1 = await rejects(w.ctx, "decision_log", { title: "t", choice: "c", project_id: "NOPE" }, "not_found");
    expect(e1.message).toContain("NOPE");
    await rejects(w.ctx, "decision_log", { title: "t", choice: "c", supersedes_decision_id: crypto.randomUUID() }, "not_found");
  });

  it("refuses bad input with a hint and writes nothing", async () => {
    const w = await world("log-bad");
    await decide(w.ctx, {});
    const opts = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `opt ${i}` }));

    await rejects(w.ctx, "decision_log", { title: "   ", choice: "c" }, "invalid_input");
    await rejects(w.ctx, "decision_log", { title: "t", choice: "" }, "invalid_input");
    await rejects(w.ctx, "decision_log", { title: "t" }, "invalid_input");
    await rejects(w.ctx, "decision_log", { title: "t", choice: "c", options: opts(21) }, "invalid_input");
    await rejects(w.ctx, "decision_log", { title: "t", choice: "c", options: [{ summary: "no label" }] }, "invalid_input");
    await rejects(w.ctx, "decision_log", { title: "t", choice: "c", status: "final" }, "invalid_input");
    await rejects(w.ctx, "decision_log", { title: "x".repeat(301), choice: "c" }, "invalid_input");
    const unknown = await rejects(w.ctx, "decision_log", { title: "t", choice: "c", decided_by: "me" }, "invalid_input");
    expect(unknown.message).toContain("decided_by");
    expect(unknown.hint).toContain("supersedes_decision_id");
    await rejects(w.ctx, "decision_log", { title: "t", choice: "c", options: [{ label: "a", weight: 3 }] }, "invalid_input");

    // 20 options is the cap, not over it.
    expect((await decide(w.ctx, { options: opts(20) })).options).toHaveLength(20);
  });

  it("a retried call (identical, no key) replays the first decision instead of logging a second", async () => {
    const w = await world("log-replay");
    const args = { title: "Retry me", choice: "Once" };
    const first = await ok(w.ctx, "decision_log", args);
    const again = await ok(w.ctx, "decision_log", args);
    expect(again.idempotent_replay).toBe(true);
    expect(again.decision).toEqual(first.decision);
    expect(await count("SELECT COUNT(*) AS n FROM decisions WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'decision.logged'", w.id.tenantId)).toBe(1);

    // After another decision, or once the retry window has passed, the same words are a new decision.
    await ok(w.ctx, "decision_log", { title: "Between", choice: "B" });
    const other = await ok(w.ctx, "decision_log", args);
    expect(other.idempotent_replay).toBeUndefined();
    expect((other.decision as Structured).id).not.toBe((first.decision as Structured).id);
    w.clock.advance(DERIVED_WINDOW_MS);
    const later = await ok(w.ctx, "decision_log", args);
    expect(later.idempotent_replay).toBeUndefined();
    expect(await count("SELECT COUNT(*) AS n FROM decisions WHERE tenant_id = ? AND title = 'Retry me'", w.id.tenantId)).toBe(3);
  });
});

describe("decisions are append-only", () => {
  it("no tool can change a decision's content: only decision_set_status writes to an existing decision, and it takes only a status", async () => {
    const w = await world("append-tools");
    const d = await decide(w.ctx, { title: "Frozen", choice: "Keep it" });

    const decisionTools = ALL_TOOLS.filter((t) => t.name.startsWith("decision_")).map((t) => t.name);
    expect(sorted(decisionTools)).toEqual(["decision_log", "decision_query", "decision_set_status"]);
    const props = Object.keys((toolListing(ALL_TOOLS.find((t) => t.name === "decision_set_status")!).inputSchema as Structured).properties as object);
    expect(sorted(props)).toEqual(["decision_id", "idempotency_key", "status"]);

    const e = await rejects(w.ctx, "decision_set_status", { decision_id: d.id, status: "accepted", title: "Edited" }, "invalid_input");
    expect(e.message).toContain("title");
    // decision_log never rewrites the decision it supersedes.
    await decide(w.ctx, { title: "Thawed", choice: "Change it", supersedes_decision_id: d.id });
    const row = await env.DB.prepare("SELECT title, choice, status FROM decisions WHERE id = ?").bind(d.id).first<Structured>();
    expect(row).toEqual({ title: "Frozen", choice: "Keep it", status: "accepted" });
  });

  it("the database itself refuses UPDATEs of content and DELETEs", async () => {
    const w = await world("append-sql");
    const d = await decide(w.ctx, { title: "Immutable record", choice: "Append only", context: "ctx", rationale: "why", options: [{ label: "x" }] });
    const before = await env.DB.prepare("SELECT * FROM decisions WHERE id = ?").bind(d.id).first<Structured>();

    for (const [column, value] of [
      ["title", "Edited"],
      ["choice", "Edited"],
      ["context", "Edited"],
      ["rationale", "Edited"],
      ["options", "[]"],
      ["project_id", "p"],
      ["supersedes_decision_id", "x"],
      ["created_by", "someone"],
      ["created_at", T0],
    ] as const) {
      await expect(env.DB.prepare(`UPDATE decisions SET ${column} = ? WHERE id = ?`).bind(value, d.id).run(), column).rejects.toThrow(/append-only/);
    }
    await expect(env.DB.prepare("DELETE FROM decisions WHERE id = ?").bind(d.id).run()).rejects.toThrow(/append-only/);
    await expect(env.DB.prepare("DELETE FROM decisions WHERE tenant_id = ?").bind(w.id.tenantId).run()).rejects.toThrow(/append-only/);

    expect(await env.DB.prepare("SELECT * FROM decisions WHERE id = ?").bind(d.id).first<Structured>()).toEqual(before);
    // The search index still answers for the original words.
    expect(ids((await ok(w.ctx, "decision_query", { q: "immutable" })).items as Structured[])).toEqual([d.id]);
    expect((await ok(w.ctx, "decision_query", { q: "edited" })).items).toEqual([]);
  });
});

describe("decision_set_status", () => {
  it("moves the status with the clock's time and records decision.<status>; the same status again changes nothing", async () => {
    const w = await world("status-move");
    const api = await project(w.ctx, "API");
    const d = await decide(w.ctx, { project_id: api.id, status: "proposed" });

    w.clock.advance(2 * HOUR);
    const r = await ok(w.ctx, "decision_set_status", { decision_id: d.id, status: "accepted" });
    expect(r.changed).toBe(true);
    expect(r.decision).toEqual({ ...d, status: "accepted", status_changed_at: at(2 * HOUR) });
    let acts = await activityRows(w.id.tenantId, "object_id = ?", d.id);
    expect(acts.map((a) => a.verb)).toEqual(["decision.logged", "decision.accepted"]);
    expect(acts[1]).toMatchObject({ project_id: api.id, at: at(2 * HOUR), actor_id: w.id.actorId });

    w.clock.advance(HOUR);
    const same = await ok(w.ctx, "decision_set_status", { decision_id: d.id, status: "accepted" });
    expect(same.changed).toBe(false);
    expect((same.decision as Structured).status_changed_at).toBe(at(2 * HOUR));
    expect(await activityRows(w.id.tenantId, "object_id = ?", d.id)).toHaveLength(2);

    const rejected = await ok(w.ctx, "decision_set_status", { decisionId: d.id, status: "rejected" });
    expect(rejected.decision).toMatchObject({ status: "rejected", status_changed_at: at(3 * HOUR), title: d.title, choice: d.choice });
    acts = await activityRows(w.id.tenantId, "object_id = ?", d.id);
    expect(acts.map((a) => a.verb)).toEqual(["decision.logged", "decision.accepted", "decision.rejected"]);
  });

  it("an unknown id, another tenant's id, or a status outside the three is refused with nothing written", async () => {
    const a = await world("status-a");
    const b = await world("status-b");
    const mine = await decide(a.ctx, { status: "proposed" });
    const theirs = await decide(b.ctx, { status: "proposed" });

    await rejects(a.ctx, "decision_set_status", { decision_id: crypto.randomUUID(), status: "accepted" }, "not_found");
    const cross = await rejects(a.ctx, "decision_set_status", { decision_id: theirs.id, status: "rejected" }, "not_found");
    expect(cross.message).toContain(theirs.id);
    await rejects(a.ctx, "decision_set_status", { decision_id: mine.id, status: "superseded" }, "invalid_input");
    await rejects(a.ctx, "decision_set_status", { decision_id: mine.id }, "invalid_input");

    const row = await env.DB.prepare("SELECT status, status_changed_at FROM decisions WHERE id = ?").bind(theirs.id).first<Structured>();
    expect(row).toEqual({ status: "proposed", status_changed_at: T0 });
  });
});

describe("decision_query", () => {
  it("q searches title, choice, context and rationale with stemming, every word required, best match first, top_k honoured", async () => {
    const w = await world("query-lexical");
    const migrate = await decide(w.ctx, { title: "Migrate the billing schema", choice: "Expand, then contract" });
    const inChoice = await decide(w.ctx, { title: "Storage", choice: "Adopt Postgres for storage" });
    const inContext = await decide(w.ctx, { title: "Caching", choice: "KV", context: "The dashboard is slow under load" });
    const inRationale = await decide(w.ctx, { title: "Retries", choice: "Exponential backoff", rationale: "Thundering herds took the gateway down" });
    const dense = await decide(w.ctx, { title: "Postgres postgres postgres", choice: "Postgres" });
    const sparse = await decide(w.ctx, {
      title: "Runbook",
      choice: "Write one",
      rationale: `${"words about many other things that matter for operations and people and time ".repeat(8)} postgres once`,
    });

    const q = async (args: Record<string, unknown>) => {
      const r = await ok(w.ctx, "decision_query", args);
      expect(r.mode).toBe("lexical");
      expect(r.note).toBe("");
      expect(r.next_cursor).toBeUndefined();
      return ids(r.items as Structured[]);
    };
    expect(await q({ q: "migrating" })).toEqual([migrate.id]);
    expect(await q({ q: "migrations" })).toEqual([migrate.id]);
    expect(await q({ q: "contract" })).toEqual([migrate.id]);
    expect(await q({ q: "dashboard slow" })).toEqual([inContext.id]);
    expect(await q({ q: "gateway" })).toEqual([inRationale.id]);
    expect(await q({ q: "dashboard gateway" })).toEqual([]);
    expect(await q({ q: "nonexistentword" })).toEqual([]);

    const pg = await q({ q: "postgres" });
    expect(sorted(pg)).toEqual(sorted([inChoice.id, dense.id, sparse.id]));
    expect(pg[0]).toBe(dense.id);
    expect(pg[2]).toBe(sparse.id);
    expect(await q({ q: "postgres", top_k: 2 })).toEqual(pg.slice(0, 2));
    expect(await q({ q: "postgres", top_k: 1 })).toEqual([dense.id]);
    await rejects(w.ctx, "decision_query", { q: "postgres", top_k: 0 }, "invalid_input");
  });

  it("text that looks like FTS syntax (quotes, *, NEAR, AND, parentheses, column filters, unicode) never errors", async () => {
    const w = await world("query-syntax");
    const pg = await decide(w.ctx, { title: "Postgres upgrade", choice: "Go to version 16" });
    const uni = await decide(w.ctx, { title: "Café naïve 数据库", choice: "Ünïcode names 🚀" });

    const inputs = [
      '"postgres',
      'postgres"',
      '""',
      "postgres*",
      "*",
      "NEAR(postgres upgrade)",
      "postgres NEAR upgrade",
      "postgres AND",
      "AND OR NOT",
      "(postgres",
      "postgres)",
      "title:postgres",
      "-postgres",
      "^postgres",
      "+",
      "{title choice}: postgres",
      "'); DROP TABLE decisions; --",
      "\\",
      "%_",
      "café",
      "数据库",
      "🚀",
      "\u0000".slice(1),
      "a".repeat(500),
    ];
    for (const text of inputs) {
      const r = await call(w.ctx, "decision_query", { q: text });
      // Text with no word to search for is refused clearly; everything else is searched as words.
      if (text.trim() === "" || /[\p{L}\p{N}_]/u.test(text)) expect(r.ok, `${JSON.stringify(text)}: ${JSON.stringify(r.error)}`).toBe(true);
      else expect(r.error?.code, JSON.stringify(text)).toBe("invalid_input");
    }
    const found = async (text: string) => ids((await ok(w.ctx, "decision_query", { q: text })).items as Structured[]);
    expect(await found('"postgres')).toEqual([pg.id]);
    expect(await found("postgres*")).toEqual([pg.id]);
    expect(await found("(postgres upgrade)")).toEqual([pg.id]);
    expect(await found("postgres AND upgrade")).toEqual([]); // "and" is a word to find, not an operator
    expect(await found("title:postgres")).toEqual([]); // "title" is a word like any other, not a column filter
    expect(await found("NEAR(postgres upgrade)")).toEqual([]); // "near" must appear too
    expect(await found("café")).toEqual([uni.id]);
    expect(await found("cafe")).toEqual([uni.id]);
    expect(await found("数据库")).toEqual([uni.id]);
    expect(await found("ünïcode")).toEqual([uni.id]);
    expect(await count("SELECT COUNT(*) AS n FROM decisions WHERE tenant_id = ?", w.id.tenantId)).toBe(2);
  });

  it("lists newest first with a complete, duplicate-free cursor; q with a cursor or a foreign cursor is invalid_input", async () => {
    const w = await world("query-list");
    const logged: string[] = [];
    for (let i = 0; i < 7; i++) {
      logged.push((await decide(w.ctx, { title: `Decision ${i}` })).id as string);
      w.clock.advance(MINUTE);
    }
    const first = await ok(w.ctx, "decision_query", { limit: 3 });
    expect(first.mode).toBe("list");
    expect(first.note).toBe("");
    expect(ids(first.items as Structured[])).toEqual([...logged].reverse().slice(0, 3));
    expect(typeof first.next_cursor).toBe("string");

    const { items, pages } = await allPages(w.ctx, "decision_query", { limit: 3 });
    expect(pages).toBe(3);
    expect(ids(items)).toEqual([...logged].reverse());
    expect(new Set(ids(items)).size).toBe(7);
    const exact = await allPages(w.ctx, "decision_query", { limit: 7 });
    expect(exact.pages).toBe(1);

    await rejects(w.ctx, "decision_query", { q: "decision", cursor: first.next_cursor }, "invalid_input");
    await rejects(w.ctx, "decision_query", { cursor: "not-a-cursor" }, "invalid_input");
  });

  it("filters by project (id or key), status and since (relative to the clock, or ISO); a bad since is invalid_input", async () => {
    const w = await world("query-filter");
    const api = await project(w.ctx, "API");
    const web = await project(w.ctx, "WEB");
    const old = await decide(w.ctx, { title: "Old api choice", project_id: api.id, status: "rejected" });
    w.clock.advance(3 * DAY);
    const mid = await decide(w.ctx, { title: "Mid web choice", project_id: web.id, status: "proposed" });
    w.clock.advance(DAY);
    const recent = await decide(w.ctx, { title: "Recent api choice", project_id: api.id });
    const wide = await decide(w.ctx, { title: "Tenant wide choice" });

    const list = async (args: Record<string, unknown>) => ids((await ok(w.ctx, "decision_query", args)).items as Structured[]);
    expect(await list({ project_id: "API" })).toEqual([recent.id, old.id]);
    expect(await list({ project_id: web.id })).toEqual([mid.id]);
    expect(await list({ status: ["accepted"] })).toEqual([wide.id, recent.id]);
    expect(await list({ status: ["proposed", "rejected"] })).toEqual([mid.id, old.id]);
    expect(await list({ since: "2d" })).toEqual([wide.id, recent.id, mid.id]);
    expect(await list({ since: "12h" })).toEqual([wide.id, recent.id]);
    expect(await list({ since: at(3 * DAY) })).toEqual([wide.id, recent.id, mid.id]);
    expect(await list({ since: "2d", project_id: "api" })).toEqual([recent.id]);
    expect(await list({ q: "choice", project_id: "API", status: ["accepted"] })).toEqual([recent.id]);
    expect(await list({ q: "choice", since: "12h" })).toHaveLength(2);

    for (const since of ["yesterday", "5 parsecs", "2030-02-31", "-1d"]) {
      const e = await rejects(w.ctx, "decision_query", { since }, "invalid_input");
      expect(e.hint).toMatch(/24h|ISO/);
    }
    await rejects(w.ctx, "decision_query", { q: "choice", since: "nope" }, "invalid_input");
    await rejects(w.ctx, "decision_query", { project_id: "NOPE" }, "not_found");
    await rejects(w.ctx, "decision_query", { status: ["final"] }, "invalid_input");
  });

  it("semantic: true ranks by embedding similarity fused with words, finding differently worded decisions", async () => {
    const w = await world("query-hybrid");
    const d = await decide(w.ctx, { title: "Deployment pipeline", choice: "Deploy with wrangler from CI on every merge" });
    await decide(w.ctx, { title: "Unrelated", choice: "Tabs over spaces in markdown tables" });
    await settle(w.ctx);

    // "deploying" is not a word of either decision (the FTS index stems it to "deploi"), but its
    // pieces are close to "deployment" and "deploy".
    const lexical = await ok(w.ctx, "decision_query", { q: "deploying releases" });
    expect(lexical.mode).toBe("lexical");
    expect(lexical.items).toEqual([]);
    const sem = await ok(w.ctx, "decision_query", { q: "deploying releases", semantic: true });
    expect(sem.mode).toBe("hybrid");
    expect(ids(sem.items as Structured[])).toEqual([d.id]);
    expect(sem.items[0].similarity).toBeGreaterThan(0.2);
    const strict = await ok(w.ctx, "decision_query", { q: "deploying releases", semantic: true, min_similarity: 0.99 });
    expect(strict.items).toEqual([]);
  });

  it("semantic: true falls back to lexical search and says so in mode and note when semantic search is off", async () => {
    const w = await world("query-semantic");
    const d = await decide(w.ctx, { title: "Observability stack", choice: "OpenTelemetry" });
    await decide(w.ctx, { title: "Unrelated", choice: "Something else" });
    const off = { ...w.ctx, env: { ...w.ctx.env, SEMANTIC_SEARCH: "off" } };

    const sem = await ok(off, "decision_query", { q: "observability", semantic: true, min_similarity: 0.5 });
    expect(sem.mode).toBe("lexical");
    expect(typeof sem.note).toBe("string");
    expect(sem.note.length).toBeGreaterThan(0);
    expect(sem.note).toMatch(/lexical/);
    expect(ids(sem.items as Structured[])).toEqual([d.id]);

    const listed = await ok(off, "decision_query", { semantic: true });
    expect(listed.mode).toBe("list");
    expect(listed.note.length).toBeGreaterThan(0);
    expect(listed.items).toHaveLength(2);
  });
});

// ---------------------------------------------------------------------------------------------

describe("comment_add", () => {
  it("comments on a project, a task, a decision and a work request, each recorded as comment.added on the right project", async () => {
    const w = await world("comment-objects");
    const api = await project(w.ctx, "API");
    const t = await task(w.ctx, api.id as string);
    const d = await decide(w.ctx, { project_id: api.id });
    const wide = await decide(w.ctx, {});
    const handoff = await insertHandoff(w.id.tenantId, w.id.actorId, api.id as string);

    const cases: Array<[string, string, string | null]> = [
      ["project", api.id as string, api.id as string],
      ["task", t.id as string, api.id as string],
      ["decision", d.id as string, api.id as string],
      ["decision", wide.id as string, null],
      ["work_request", handoff, api.id as string],
    ];
    for (const [type, objectId, projectId] of cases) {
      w.clock.advance(MINUTE);
      const r = await comment(w.ctx, type, objectId, `On the ${type}`);
      const c = r.comment as Structured;
      expect(c).toEqual({
        id: expect.stringMatching(UUID_V7),
        object_type: type,
        object_id: objectId,
        body: `On the ${type}`,
        author_actor_id: w.id.actorId,
        parent_comment_id: null,
        mentions: [],
        created_at: w.clock.now().toISOString(),
      });
      expect(r.notified).toEqual([]);
      const thread = await ok(w.ctx, "comment_query", { object_type: type, object_id: objectId });
      expect(thread.items).toEqual([c]);
      const acts = await activityRows(w.id.tenantId, "verb = 'comment.added' AND object_id = ?", objectId);
      expect(acts).toHaveLength(1);
      expect(acts[0]).toMatchObject({ object_type: type, project_id: projectId, summary: `On the ${type}` });
      expect(JSON.parse(acts[0]!.metadata as string)).toEqual({ comment_id: c.id });
    }
    expect(await notificationRows(w.id.tenantId)).toEqual([]);
  });

  it('mentions by "me", external_ref and id notify exactly those actors, once each', async () => {
    const w = await world("comment-mentions");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const dave = await w.other("dave");
    const d = await decide(w.ctx, {});

    const r = await comment(w.ctx, "decision", d.id as string, "@bob @carol please look", {
      mentions: ["me", "bob", carol.id.actorId, w.id.actorId, " bob ", "agent"],
    });
    const c = r.comment as Structured;
    const expected = sorted([w.id.actorId, bob.id.actorId, carol.id.actorId]);
    expect(sorted(r.notified as string[])).toEqual(expected);
    expect(sorted(c.mentions as string[])).toEqual(expected);

    const rows = await notificationRows(w.id.tenantId);
    expect(sorted(rows.map((n) => n.actor_id as string))).toEqual(expected);
    for (const n of rows) {
      expect(n).toMatchObject({ kind: "mention", object_type: "comment", object_id: c.id, from_actor_id: w.id.actorId, summary: "@bob @carol please look", created_at: T0, read_at: null });
    }
    expect(await notificationRows(w.id.tenantId, dave.id.actorId)).toEqual([]);
    const bobsView = await ok(bob.ctx, "notification_query", {});
    expect(bobsView.items).toHaveLength(1);
    expect(bobsView.items[0]).toMatchObject({ kind: "mention", object_id: c.id, from_actor_id: w.id.actorId });
    expect((await ok(dave.ctx, "notification_query", {})).items).toEqual([]);

    // The summary keeps the first 200 characters of a long body.
    const long = "x".repeat(500);
    await comment(w.ctx, "decision", d.id as string, long, { mentions: ["dave"] });
    expect((await notificationRows(w.id.tenantId, dave.id.actorId))[0]!.summary).toBe(long.slice(0, 200));
  });

  it("an unknown mention (or another tenant's actor) is not_found and writes no comment, notification or activity", async () => {
    const w = await world("comment-badmention");
    const stranger = await world("comment-stranger");
    await w.other("bob");
    const api = await project(w.ctx, "API");

    const e = await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "hi", mentions: ["bob", "ghost"] }, "not_found");
    expect(e.message).toContain("ghost");
    expect(e.hint).toMatch(/actor_query/);
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "hi", mentions: [stranger.id.actorId] }, "not_found");
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "hi", mentions: ["bob", "agent2"] }, "not_found");
    expect(await count("SELECT COUNT(*) AS n FROM comments WHERE tenant_id = ?", w.id.tenantId)).toBe(0);
    expect(await notificationRows(w.id.tenantId)).toEqual([]);
    expect(await notificationRows(stranger.id.tenantId)).toEqual([]);
  });

  it("threads replies through parent_comment_id; a parent on another object is invalid_input, an unknown one not_found", async () => {
    const w = await world("comment-threads");
    const bob = await w.other("bob");
    const api = await project(w.ctx, "API");
    const t = await task(w.ctx, api.id as string);

    const root = (await comment(w.ctx, "task", t.id as string, "Root")).comment as Structured;
    w.clock.advance(MINUTE);
    const reply = (await comment(bob.ctx, "task", t.id as string, "Reply", { parent_comment_id: root.id })).comment as Structured;
    w.clock.advance(MINUTE);
    const nested = (await comment(w.ctx, "task", t.id as string, "Reply to reply", { parentCommentId: reply.id })).comment as Structured;
    w.clock.advance(MINUTE);
    const second = (await comment(bob.ctx, "task", t.id as string, "Second root")).comment as Structured;

    const thread = (await ok(w.ctx, "comment_query", { object_type: "task", object_id: t.id })).items as Structured[];
    expect(thread.map((c) => [c.body, c.parent_comment_id, c.author_actor_id])).toEqual([
      ["Root", null, w.id.actorId],
      ["Reply", root.id, bob.id.actorId],
      ["Reply to reply", reply.id, w.id.actorId],
      ["Second root", null, bob.id.actorId],
    ]);
    expect(ids(thread)).toEqual([root.id, reply.id, nested.id, second.id]);

    const onProject = (await comment(w.ctx, "project", api.id as string, "Project note")).comment as Structured;
    const e = await rejects(w.ctx, "comment_add", { object_type: "task", object_id: t.id, body: "x", parent_comment_id: onProject.id }, "invalid_input");
    expect(e.hint).toMatch(/same object/);
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "x", parent_comment_id: root.id }, "invalid_input");
    await rejects(w.ctx, "comment_add", { object_type: "task", object_id: t.id, body: "x", parent_comment_id: crypto.randomUUID() }, "not_found");
  });

  it("unknown objects of every type (notes included) are not_found with a hint; bad object types are refused", async () => {
    const w = await world("comment-objects-bad");
    const api = await project(w.ctx, "API");
    await comment(w.ctx, "project", api.id as string, "first");

    const note = await rejects(w.ctx, "comment_add", { object_type: "note", object_id: crypto.randomUUID(), body: "hi" }, "not_found");
    expect(note.hint).toMatch(/note/i);
    const q = await rejects(w.ctx, "comment_query", { object_type: "note", object_id: "n1" }, "not_found");
    expect(q.hint).toMatch(/note/i);

    for (const type of ["project", "task", "decision", "work_request", "note"]) {
      const e = await rejects(w.ctx, "comment_add", { object_type: type, object_id: "does-not-exist", body: "hi" }, "not_found");
      expect(e.message).toContain("does-not-exist");
      await rejects(w.ctx, "comment_query", { object_type: type, object_id: "does-not-exist" }, "not_found");
    }
    // A project id passed as a task id is not the task it claims to be.
    await rejects(w.ctx, "comment_add", { object_type: "task", object_id: api.id, body: "hi" }, "not_found");
    await rejects(w.ctx, "comment_add", { object_type: "file", object_id: api.id, body: "hi" }, "invalid_input");
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "   " }, "invalid_input");
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "x".repeat(20_001) }, "invalid_input");
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "hi", mentions: Array(21).fill("me") }, "invalid_input");
    await rejects(w.ctx, "comment_add", { object_type: "project", object_id: api.id, body: "hi", author: "me" }, "invalid_input");
  });
});

describe("comment_query", () => {
  it("comment_query pages oldest first with a complete cursor and only the object's own comments", async () => {
    const w = await world("comment-pages");
    const api = await project(w.ctx, "API");
    const web = await project(w.ctx, "WEB");
    const posted: string[] = [];
    for (let i = 0; i < 5; i++) {
      posted.push(((await comment(w.ctx, "project", api.id as string, `c${i}`)).comment as Structured).id as string);
      await comment(w.ctx, "project", web.id as string, `web ${i}`);
      w.clock.advance(MINUTE);
    }
    const first = await ok(w.ctx, "comment_query", { object_type: "project", object_id: api.id, limit: 2 });
    expect(ids(first.items as Structured[])).toEqual(posted.slice(0, 2));
    const { items, pages } = await allPages(w.ctx, "comment_query", { object_type: "project", object_id: api.id, limit: 2 });
    expect(pages).toBe(3);
    expect(ids(items)).toEqual(posted);
    expect(items.map((c) => c.body)).toEqual(["c0", "c1", "c2", "c3", "c4"]);
    await rejects(w.ctx, "comment_query", { object_type: "project", object_id: api.id, cursor: "garbage" }, "invalid_input");
  });
});

describe("comment_add", () => {
  it("a retried comment_add replays: one comment, one notification per mention", async () => {
    const w = await world("comment-replay");
    const bob = await w.other("bob");
    const api = await project(w.ctx, "API");
    const args = { object_type: "project", object_id: api.id, body: "ping", mentions: ["bob"] };
    const first = await ok(w.ctx, "comment_add", args);
    const again = await ok(w.ctx, "comment_add", args);
    expect(again.idempotent_replay).toBe(true);
    expect(again.comment).toEqual(first.comment);
    expect(await count("SELECT COUNT(*) AS n FROM comments WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
    expect(await notificationRows(w.id.tenantId, bob.id.actorId)).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------

describe("activity_log", () => {
  it("appends verb, summary, severity and metadata (status kept in metadata, the run in run_id)", async () => {
    const w = await world("alog-basic");
    const api = await project(w.ctx, "API");
    const t = await task(w.ctx, api.id as string);
    const run = await mintRun(w.ctx);

    w.clock.advance(MINUTE);
    const r = await ok(w.ctx, "activity_log", {
      verb: "deploy.finished",
      summary: "Deployed v1.2 to production",
      severity: "warn",
      status: "green",
      run_id: run.run_key,
      metadata: { version: "1.2", regions: ["eu", "us"] },
    });
    expect(r.deduplicated).toBe(false);
    expect(r.activity).toEqual({
      id: expect.stringMatching(UUID_V7),
      at: at(MINUTE),
      actor_id: w.id.actorId,
      actor_name: "agent",
      verb: "deploy.finished",
      object_type: "",
      object_id: "",
      project_id: null,
      summary: "Deployed v1.2 to production",
      severity: "warn",
      session_id: "sess-1",
      run_id: run.id,
      metadata: { version: "1.2", regions: ["eu", "us"], status: "green" },
    });
    const row = (await activityRows(w.id.tenantId, "id = ?", r.activity.id))[0]!;
    expect(row.content_hash).toMatch(/^[0-9a-f]{64}$/);

    // On an object: the object's project is recorded, severity defaults to info.
    const onTask = await ok(w.ctx, "activity_log", { verb: "review.started", summary: "Looking at it", object_type: "task", object_id: t.id });
    expect(onTask.activity).toMatchObject({ object_type: "task", object_id: t.id, project_id: api.id, severity: "info", metadata: {} });
    const queried = await ok(w.ctx, "activity_query", { limit: 2 });
    expect(queried.items).toEqual([onTask.activity, r.activity]);
  });

  it("the same entry twice is de-duplicated to one row; a different summary, severity, object or actor is a new row", async () => {
    const w = await world("alog-dedup");
    const bob = await w.other("bob");
    const d = await decide(w.ctx, {});
    const entry = { verb: "deploy.finished", summary: "Deployed", metadata: { b: 2, a: 1 } };
    const hashed = () => count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND content_hash IS NOT NULL", w.id.tenantId);

    const first = await ok(w.ctx, "activity_log", entry);
    w.clock.advance(HOUR);
    const again = await ok(w.ctx, "activity_log", { ...entry, metadata: { a: 1, b: 2 } });
    expect(again.deduplicated).toBe(true);
    expect(again.activity).toEqual(first.activity);
    expect(await hashed()).toBe(1);

    const variants = [
      { ...entry, summary: "Deployed again" },
      { ...entry, severity: "critical" },
      { ...entry, object_type: "decision", object_id: d.id },
      { ...entry, metadata: { a: 1 } },
      { ...entry, status: "red" },
    ];
    for (const v of variants) expect((await ok(w.ctx, "activity_log", v)).deduplicated).toBe(false);
    expect((await ok(bob.ctx, "activity_log", entry)).deduplicated).toBe(false);
    expect(await hashed()).toBe(7);
    // And each of those, repeated, is recorded once.
    for (const v of variants) expect((await ok(w.ctx, "activity_log", v)).deduplicated).toBe(true);
    expect(await hashed()).toBe(7);
  });

  it("refuses an object type without an id, a bad verb, oversized metadata and unknown objects, writing nothing", async () => {
    const w = await world("alog-bad");
    const api = await project(w.ctx, "API");
    await ok(w.ctx, "activity_log", { verb: "x.y", summary: "something" });

    const pair = await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", object_type: "project" }, "invalid_input");
    expect(pair.hint).toMatch(/both/i);
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", object_id: api.id }, "invalid_input");
    for (const verb of ["Deploy.Finished", "deploy finished", "deploy.", ".deploy", "deploy..x", "1deploy", "deploy-finished", "", "task.*"]) {
      await rejects(w.ctx, "activity_log", { verb, summary: "s" }, "invalid_input");
    }
    const big = await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", metadata: { blob: "x".repeat(8200) } }, "invalid_input");
    expect(big.message).toMatch(/8KB/);
    // Measured in bytes: 3,000 three-byte characters are 9,000 bytes.
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", metadata: { blob: "€".repeat(3000) } }, "invalid_input");
    expect((await ok(w.ctx, "activity_log", { verb: "x.y", summary: "s", metadata: { blob: "€".repeat(2000) } })).deduplicated).toBe(false);
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", object_type: "task", object_id: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", object_type: "note", object_id: "n" }, "not_found");
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "  " }, "invalid_input");
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", severity: "fatal" }, "invalid_input");
    await rejects(w.ctx, "activity_log", { verb: "x.y", summary: "s", actor_id: "me" }, "invalid_input");
  });
});

describe("activity_query", () => {
  it("filters by project, actor, object, verb (exact and family), run and time window, newest first", async () => {
    const w = await world("aq-filters");
    const bob = await w.other("bob");
    const api = await project(w.ctx, "API");
    const web = await project(w.ctx, "WEB");
    const t1 = await task(w.ctx, api.id as string, "first");
    w.clock.advance(HOUR);
    const claimed = await ok(bob.ctx, "task_claim", { project_id: "API" });
    expect(claimed.claimed).toBe(true);
    w.clock.advance(HOUR);
    const t2 = await task(w.ctx, web.id as string, "second");
    w.clock.advance(HOUR);
    const run9 = await mintRun(w.ctx);
    const tf = await ok(w.ctx, "activity_log", { verb: "taskforce.assembled", summary: "Gathered the team", run_id: run9.run_key });
    const bare = await ok(bob.ctx, "activity_log", { verb: "task", summary: "bare verb" });
    w.clock.advance(HOUR);
    const note = await ok(bob.ctx, "activity_log", { verb: "deploy.finished", summary: "shipped", object_type: "task", object_id: t1.id, run_id: run9.id });

    const all = (await ok(w.ctx, "activity_query", { limit: 200 })).items as Structured[];
    const seqs = await activityRows(w.id.tenantId);
    expect(ids(all)).toEqual(ids(seqs).reverse());

    const q = async (args: Record<string, unknown>) => (await ok(w.ctx, "activity_query", { limit: 200, ...args })).items as Structured[];
    const verbs = async (args: Record<string, unknown>) => (await q(args)).map((a) => a.verb as string);

    expect((await q({ project_id: "API" })).every((a) => a.project_id === api.id)).toBe(true);
    expect(await verbs({ project_id: "api" })).toEqual(["deploy.finished", "task.claimed", "task.created", "project.created"]);
    expect(await verbs({ project_id: web.id })).toEqual(["task.created", "project.created"]);

    const mine = await q({ actor_id: "me" });
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((a) => a.actor_id === w.id.actorId)).toBe(true);
    expect(await verbs({ actor_id: "bob" })).toEqual(["deploy.finished", "task", "task.claimed"]);
    expect(await verbs({ actor_id: bob.id.actorId })).toEqual(["deploy.finished", "task", "task.claimed"]);

    expect(await verbs({ object_type: "task", object_id: t1.id })).toEqual(["deploy.finished", "task.claimed", "task.created"]);
    expect(ids(await q({ object_id: t2.id }))).toHaveLength(1);
    expect(await verbs({ object_type: "project" })).toEqual(["project.created", "project.created"]);

    expect(await verbs({ verb: "task.created" })).toEqual(["task.created", "task.created"]);
    expect(await verbs({ verb: "task.*" })).toEqual(["task.created", "task.claimed", "task.created"]);
    expect(await verbs({ verb: "task" })).toEqual(["task"]);
    expect(await verbs({ verb: "taskforce.*" })).toEqual(["taskforce.assembled"]);
    expect(await verbs({ verb: "task.cr" })).toEqual([]);

    expect(ids(await q({ run_id: run9.run_key }))).toEqual([note.activity.id, tf.activity.id]);
    expect(ids(await q({ run_id: run9.id }))).toEqual([note.activity.id, tf.activity.id]);
    expect(await q({ run_id: "run-0" })).toEqual([]);

    // Windows: the clock is at T0+4h now.
    expect(await verbs({ since: "90m" })).toEqual(["deploy.finished", "task", "taskforce.assembled"]);
    expect(await verbs({ since: at(HOUR), until: at(2 * HOUR) })).toEqual(["task.created", "task.claimed"]);
    expect(await verbs({ until: "3h" })).toEqual(["task.claimed", "task.created", "project.created", "project.created"]);
    expect(ids(await q({ since: "30m" }))).toEqual([note.activity.id]);
    expect(ids(await q({ since: "1h", until: "1h" }))).toEqual([bare.activity.id, tf.activity.id]);
    expect(await verbs({ since: "3h", verb: "task.*", actor_id: "me" })).toEqual(["task.created"]);
    expect(ids(await q({ since: "1h", actor_id: "me" }))).toEqual([tf.activity.id]);
    expect(ids(await q({ since: "30m", actor_id: "me" }))).toEqual([]);
  });

  it("pages newest first with a complete cursor; bad since/until, unknown project or actor are refused", async () => {
    const w = await world("aq-pages");
    const logged: string[] = [];
    for (let i = 0; i < 9; i++) {
      logged.push(((await ok(w.ctx, "activity_log", { verb: "step.done", summary: `step ${i}` })).activity as Structured).id as string);
      w.clock.advance(MINUTE);
    }
    const first = await ok(w.ctx, "activity_query", { limit: 4 });
    expect(ids(first.items as Structured[])).toEqual([...logged].reverse().slice(0, 4));
    const { items, pages } = await allPages(w.ctx, "activity_query", { limit: 4 });
    expect(pages).toBe(3);
    expect(ids(items)).toEqual([...logged].reverse());
    expect(new Set(ids(items)).size).toBe(9);
    const filtered = await allPages(w.ctx, "activity_query", { limit: 2, verb: "step.*", since: "5m" });
    expect(ids(filtered.items)).toEqual([...logged].reverse().slice(0, 5));

    for (const bound of ["since", "until"]) {
      const e = await rejects(w.ctx, "activity_query", { [bound]: "last tuesday" }, "invalid_input");
      expect(e.message).toContain("last tuesday");
    }
    await rejects(w.ctx, "activity_query", { since: "2030-13-01" }, "invalid_input");
    await rejects(w.ctx, "activity_query", { project_id: "NOPE" }, "not_found");
    await rejects(w.ctx, "activity_query", { actor_id: "ghost" }, "not_found");
    await rejects(w.ctx, "activity_query", { cursor: "bogus" }, "invalid_input");
    await rejects(w.ctx, "activity_query", { limit: 201 }, "invalid_input");
  });
});

// ---------------------------------------------------------------------------------------------

describe("notification_query", () => {
  it("notification_query shows only your own, newest first, with unread_only and unread_count; cursor pages them", async () => {
    const w = await world("notif-own");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const api = await project(w.ctx, "API");

    const toBob: string[] = [];
    for (let i = 0; i < 4; i++) {
      toBob.push(((await comment(w.ctx, "project", api.id as string, `for bob ${i}`, { mentions: ["bob"] })).comment as Structured).id as string);
      w.clock.advance(MINUTE);
    }
    await comment(bob.ctx, "project", api.id as string, "for carol", { mentions: ["carol"] });

    const bobs = await ok(bob.ctx, "notification_query", {});
    expect((bobs.items as Structured[]).map((n) => n.object_id)).toEqual([...toBob].reverse());
    expect(bobs.unread_count).toBe(4);
    expect(bobs.next_cursor).toBeUndefined();
    expect(bobs.items[0]).toEqual({
      id: expect.stringMatching(UUID_V7),
      kind: "mention",
      object_type: "comment",
      object_id: toBob[3],
      summary: "for bob 3",
      from_actor_id: w.id.actorId,
      created_at: at(3 * MINUTE),
      read_at: null,
    });

    const carols = await ok(carol.ctx, "notification_query", {});
    expect(carols.items).toHaveLength(1);
    expect(carols.unread_count).toBe(1);
    expect(carols.items[0].from_actor_id).toBe(bob.id.actorId);
    const mine = await ok(w.ctx, "notification_query", {});
    expect(mine.items).toEqual([]);
    expect(mine.unread_count).toBe(0);

    // Read two of bob's; unread_only and unread_count follow.
    w.clock.advance(HOUR);
    const marked = await ok(bob.ctx, "notification_mark_read", { ids: [bobs.items[0].id, bobs.items[2].id] });
    expect(marked.marked).toBe(2);
    const unread = await ok(bob.ctx, "notification_query", { unread_only: true });
    expect(ids(unread.items as Structured[])).toEqual([bobs.items[1].id, bobs.items[3].id]);
    expect(unread.unread_count).toBe(2);
    const after = await ok(bob.ctx, "notification_query", {});
    expect(after.items[0].read_at).toBe(w.clock.now().toISOString());
    expect(after.items[1].read_at).toBeNull();

    const { items, pages } = await allPages(bob.ctx, "notification_query", { limit: 3 });
    expect(pages).toBe(2);
    expect(ids(items)).toEqual(ids(bobs.items as Structured[]));
    const unreadPages = await allPages(bob.ctx, "notification_query", { limit: 1, unread_only: true });
    expect(ids(unreadPages.items)).toEqual(ids(unread.items as Structured[]));
    await rejects(bob.ctx, "notification_query", { recipient: "carol" }, "invalid_input");
  });
});

describe("notification_mark_read", () => {
  it("notification_mark_read marks only your own ids, counts the changed ones, and is idempotent", async () => {
    const w = await world("notif-mark");
    const bob = await w.other("bob");
    const carol = await w.other("carol");
    const api = await project(w.ctx, "API");
    await comment(w.ctx, "project", api.id as string, "hey both", { mentions: ["bob", "carol"] });
    const bobN = (await ok(bob.ctx, "notification_query", {})).items[0].id as string;
    const carolN = (await ok(carol.ctx, "notification_query", {})).items[0].id as string;

    expect((await ok(bob.ctx, "notification_mark_read", { ids: [carolN] })).marked).toBe(0);
    expect((await notificationRows(w.id.tenantId, carol.id.actorId))[0]!.read_at).toBeNull();
    expect((await ok(carol.ctx, "notification_query", {})).unread_count).toBe(1);

    expect((await ok(bob.ctx, "notification_mark_read", { ids: [bobN, carolN, crypto.randomUUID()] })).marked).toBe(1);
    expect((await ok(bob.ctx, "notification_mark_read", { ids: [bobN] })).marked).toBe(0);
    expect((await ok(bob.ctx, "notification_mark_read", { ids: [bobN, bobN] })).marked).toBe(0);
    expect((await notificationRows(w.id.tenantId, bob.id.actorId))[0]!.read_at).toBe(T0);
    expect((await notificationRows(w.id.tenantId, carol.id.actorId))[0]!.read_at).toBeNull();

    await rejects(bob.ctx, "notification_mark_read", { ids: [] }, "invalid_input");
    await rejects(bob.ctx, "notification_mark_read", {}, "invalid_input");
  });
});

// ---------------------------------------------------------------------------------------------

describe("tenant isolation", () => {
  it("another tenant cannot read, comment on, supersede, set the status of, or query A's objects", async () => {
    const a = await world("iso-a");
    const aBob = await a.other("bob");
    const b = await world("iso-b");
    const aApi = await project(a.ctx, "API");
    const bApi = await project(b.ctx, "API");
    const aTask = await task(a.ctx, aApi.id as string);
    const aDec = await decide(a.ctx, { title: "Secret zebra plan", choice: "Zebra", project_id: aApi.id, status: "proposed" });
    const aHandoff = await insertHandoff(a.id.tenantId, a.id.actorId, aApi.id as string);
    const aComment = (await comment(a.ctx, "decision", aDec.id as string, "zebra comment", { mentions: ["bob"] })).comment as Structured;
    const aRun = await mintRun(a.ctx);
    await ok(a.ctx, "activity_log", { verb: "zebra.seen", summary: "zebra", run_id: aRun.run_key });
    const aNotification = (await ok(aBob.ctx, "notification_query", {})).items[0].id as string;
    const bDec = await decide(b.ctx, { title: "Own zebra plan", choice: "Horse", project_id: bApi.id });
    const bTask = await task(b.ctx, bApi.id as string);
    // The same entry as A's is B's own row, not a duplicate of A's.
    const bRun = await mintRun(b.ctx);
    expect((await ok(b.ctx, "activity_log", { verb: "zebra.seen", summary: "zebra", run_id: bRun.run_key })).deduplicated).toBe(false);

    const aBefore = await tenantState(a.id.tenantId);

    // Decisions.
    await rejects(b.ctx, "decision_set_status", { decision_id: aDec.id, status: "accepted" }, "not_found");
    await rejects(b.ctx, "decision_log", { title: "t", choice: "c", supersedes_decision_id: aDec.id }, "not_found");
    await rejects(b.ctx, "decision_log", { title: "t", choice: "c", project_id: aApi.id }, "not_found");
    await rejects(b.ctx, "decision_query", { project_id: aApi.id }, "not_found");
    expect(ids((await ok(b.ctx, "decision_query", { q: "zebra" })).items as Structured[])).toEqual([bDec.id]);
    expect(ids((await ok(b.ctx, "decision_query", { q: "secret" })).items as Structured[])).toEqual([]);
    expect(ids((await ok(b.ctx, "decision_query", { limit: 200 })).items as Structured[])).toEqual([bDec.id]);
    expect(ids((await ok(b.ctx, "decision_query", { project_id: "API" })).items as Structured[])).toEqual([bDec.id]);

    // Comments.
    for (const [type, id] of [
      ["project", aApi.id],
      ["task", aTask.id],
      ["decision", aDec.id],
      ["work_request", aHandoff],
    ] as const) {
      await rejects(b.ctx, "comment_add", { object_type: type, object_id: id, body: "hi" }, "not_found");
      await rejects(b.ctx, "comment_query", { object_type: type, object_id: id }, "not_found");
    }
    await rejects(b.ctx, "comment_add", { object_type: "decision", object_id: bDec.id, body: "hi", parent_comment_id: aComment.id }, "not_found");
    await rejects(b.ctx, "comment_add", { object_type: "decision", object_id: bDec.id, body: "hi", mentions: [a.id.actorId] }, "not_found");

    // Activity.
    await rejects(b.ctx, "activity_log", { verb: "x.y", summary: "s", object_type: "task", object_id: aTask.id }, "not_found");
    await rejects(b.ctx, "activity_log", { verb: "x.y", summary: "s", run_id: aRun.run_key }, "not_found");
    await rejects(b.ctx, "activity_log", { verb: "x.y", summary: "s", run_id: aRun.id }, "not_found");
    await rejects(b.ctx, "activity_query", { project_id: aApi.id }, "not_found");
    await rejects(b.ctx, "activity_query", { actor_id: a.id.actorId }, "not_found");
    const bActivity = (await allPages(b.ctx, "activity_query", { limit: 200 })).items;
    expect(bActivity.length).toBeGreaterThan(0);
    expect(bActivity.every((x) => x.actor_id === b.id.actorId)).toBe(true);
    expect((await ok(b.ctx, "activity_query", { object_id: aTask.id })).items).toEqual([]);
    expect((await ok(b.ctx, "activity_query", { object_id: aDec.id })).items).toEqual([]);
    expect((await ok(b.ctx, "activity_query", { run_id: bRun.run_key })).items).toHaveLength(1);
    expect((await ok(b.ctx, "activity_query", { run_id: aRun.run_key })).items).toEqual([]);
    expect((await ok(b.ctx, "activity_query", { run_id: aRun.id })).items).toEqual([]);
    expect((await ok(b.ctx, "activity_query", { verb: "task.*" })).items.map((x: Structured) => x.object_id)).toEqual([bTask.id]);

    // Notifications.
    expect((await ok(b.ctx, "notification_query", {})).items).toEqual([]);
    expect((await ok(b.ctx, "notification_mark_read", { ids: [aNotification] })).marked).toBe(0);

    expect(await tenantState(a.id.tenantId)).toEqual(aBefore);
    expect((await ok(aBob.ctx, "notification_query", { unread_only: true })).unread_count).toBe(1);
    const aDecNow = ((await ok(a.ctx, "decision_query", { q: "zebra" })).items as Structured[])[0]!;
    expect(aDecNow).toMatchObject({ id: aDec.id, status: "proposed", superseded_by: null });
  });
});

describe("follow-ups", () => {
  it("comments and activity accept task refs and project keys, stored under the canonical id", async () => {
    const w = await world("refs");
    const project = (await ok(w.ctx, "project_create", { title: "Refs", key: "REF" })).project as Structured;
    const task = (await ok(w.ctx, "task_create", { project_id: "REF", title: "t" })).task as Structured;
    const onTask = await ok(w.ctx, "comment_add", { object_type: "task", object_id: "ref-1", body: "by ref" });
    expect(onTask.comment.object_id).toBe(task.id);
    const onProject = await ok(w.ctx, "comment_add", { object_type: "project", object_id: "REF", body: "by key" });
    expect(onProject.comment.object_id).toBe(project.id);
    expect((await ok(w.ctx, "comment_query", { object_type: "task", object_id: task.id })).items).toHaveLength(1);
    const logged = await ok(w.ctx, "activity_log", { verb: "note.taken", summary: "by ref", object_type: "task", object_id: "REF-1" });
    expect(logged.activity).toMatchObject({ object_id: task.id, project_id: project.id });
  });

  it("a decision's identity and tenant cannot be changed even directly in the database", async () => {
    const w = await world("identity-lock");
    const d = await decide(w.ctx, { title: "Locked", choice: "Yes" });
    await expect(env.DB.prepare(`UPDATE decisions SET tenant_id = 'other' WHERE id = ?`).bind(d.id).run()).rejects.toThrow(/append-only/);
    await expect(env.DB.prepare(`UPDATE decisions SET id = 'other' WHERE id = ?`).bind(d.id).run()).rejects.toThrow(/append-only/);
  });

  it("a q with more than 32 words is refused rather than silently cut", async () => {
    const w = await world("q-long");
    const r = await call(w.ctx, "decision_query", { q: Array.from({ length: 33 }, (_, i) => `w${i}`).join(" ") });
    expect(r.error?.code).toBe("invalid_input");
  });

  it("project_brief lists the project's recent decisions, newest first", async () => {
    const w = await world("brief-decisions");
    await ok(w.ctx, "project_create", { title: "Brief", key: "BRF" });
    const first = await decide(w.ctx, { title: "First", choice: "a", project_id: "BRF" });
    w.clock.advance(MINUTE);
    const second = await decide(w.ctx, { title: "Second", choice: "b", project_id: "BRF", status: "proposed" });
    await decide(w.ctx, { title: "Elsewhere", choice: "c" });
    const brief = await ok(w.ctx, "project_brief", { project: "BRF", max_decisions: 5 });
    expect(brief.recent_decisions.map((d: Structured) => d.id)).toEqual([second.id, first.id]);
    expect(brief.recent_decisions[0]).toMatchObject({ title: "Second", status: "proposed" });
    expect((await ok(w.ctx, "project_brief", { project: "BRF", max_decisions: 1 })).recent_decisions).toHaveLength(1);
  });

  it("whoami shows the tenant's newest decisions", async () => {
    const w = await world("whoami-decisions");
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push((await decide(w.ctx, { title: `D${i}`, choice: "x" })).id as string);
      w.clock.advance(MINUTE);
    }
    const me = await ok(w.ctx, "whoami", {});
    expect(me.recent_decisions.map((d: Structured) => d.id)).toEqual(ids.slice(1).reverse());
    const other = await world("whoami-decisions-b");
    expect((await ok(other.ctx, "whoami", {})).recent_decisions).toEqual([]);
  });
});
