/**
 * The work ledger's decisions room (seed 001): decision_log, decision_set_status and decision_query
 * (append-only decisions, supersede, lexical search), through the registry against real local D1;
 * tenant isolation across the decisions and collab rooms. The collab room's tests are in collab.test.ts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ALL_TOOLS } from "../../src/server/registry";
import { toolListing } from "../../src/core/listing";
import { DERIVED_WINDOW_MS } from "../../src/core/idempotency";
import { call, count, DAY, MINUTE, ok, settle, type Structured } from "../support/helpers";
import { mintRun } from "../support/run-helpers";
import { activityRows, allPages, at, comment, decide, HOUR, ids, insertHandoff, project, rejects, sorted, T0, task, tenantState, UUID_V7, world } from "../support/decisions-collab";

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
      stale: null,
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

  it("ids looks decisions up, newest first, within the other filters; another tenant's ids find nothing; q or cursor with ids is refused", async () => {
    const w = await world("query-ids");
    const other = await world("query-ids-other");
    const a = await decide(w.ctx, { title: "Queue", choice: "Queues" });
    const b = await decide(w.ctx, { title: "Queue again", choice: "Workflows", supersedesDecisionId: a.id });
    const c = await decide(w.ctx, { title: "Unrelated", choice: "Nothing", status: "proposed" });
    const theirs = await decide(other.ctx, { title: "Theirs", choice: "Secret" });
    const found = async (args: Record<string, unknown>) => {
      const r = await ok(w.ctx, "decision_query", args);
      expect(r.mode).toBe("list");
      return r.items as Structured[];
    };
    const both = await found({ ids: [a.id, b.id, a.id] });
    expect(ids(both)).toEqual([b.id, a.id]);
    expect(both[1]).toMatchObject({ id: a.id, superseded_by: b.id });
    expect(ids(await found({ ids: [a.id, c.id], status: ["proposed"] }))).toEqual([c.id]);
    expect(ids(await found({ ids: [a.id, b.id, c.id], limit: 2 }))).toEqual([c.id, b.id]);
    expect(await found({ ids: [theirs.id] })).toEqual([]);
    expect(await found({ ids: ["no-such-id"] })).toEqual([]);
    await rejects(w.ctx, "decision_query", { ids: [a.id], q: "queue" }, "invalid_input");
    await rejects(w.ctx, "decision_query", { ids: [] }, "invalid_input");
    await rejects(w.ctx, "decision_query", { ids: Array.from({ length: 101 }, (_, i) => `d${i}`) }, "invalid_input");
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
