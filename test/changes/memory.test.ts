import { env } from "cloudflare:workers";
/**
 * The change ledger's active memory: prior_attempts (what was tried and undone) and
 * stale_decisions (dated decisions that came due while their entity is still in use).
 * Time is placed with one TestClock per test; nothing sleeps.
 */
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { call, DAY, fails, makeCtx, MINUTE, ok, seedIdentity, TestClock, type Structured, type TestIdentity } from "../support/helpers";

const T0 = "2026-06-01T12:00:00.000Z";
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

const EVENT_KEYS = [
  "id",
  "timestamp",
  "entity_path",
  "entity_type",
  "change_type",
  "diff",
  "reasoning",
  "agent",
  "actor",
  "session_id",
  "git_commit",
  "project",
  "changeset_id",
  "metadata",
  "revisit_after",
  "expires_when",
  "stale_when",
  "supersedes",
  "constraint",
  "superseded_by",
];
const ATTEMPT_KEYS = [...EVENT_KEYS, "outcome", "confidence", "outcome_reasoning", "supersede_reasoning", "current_status", "match_type", "similarity", "note"].sort();
const STALE_KEYS = [
  ...EVENT_KEYS,
  "flag",
  "revisit_due",
  "days_overdue",
  "active_use_signals",
  "matched_terms",
  "matched_event_id",
  "expires_status",
  "expired_pattern",
  "expires_detail",
  "stale_reason",
].sort();

interface World {
  id: TestIdentity;
  clock: TestClock;
  ctx: Ctx;
}

/** A fresh tenant (D1 persists across tests in this file) and one clock starting at T0. */
async function world(name: string, actor = "agent", clock = new TestClock(new Date(T0))): Promise<World> {
  const id = await seedIdentity(`mem-${name}-${crypto.randomUUID().slice(0, 8)}`, actor);
  return { id, clock, ctx: makeCtx(id, clock) };
}

/** Logs a change and returns its id. */
async function log(ctx: Ctx, args: Record<string, unknown>): Promise<string> {
  const r = await ok(ctx, "log_change", args);
  return r.id as string;
}

async function attempts(ctx: Ctx, args: Record<string, unknown>): Promise<Structured[]> {
  return (await ok(ctx, "prior_attempts", args)).items as Structured[];
}

async function stale(ctx: Ctx, args: Record<string, unknown> = {}): Promise<Structured[]> {
  return (await ok(ctx, "stale_decisions", args)).items as Structured[];
}

const paths = (rows: Structured[]) => rows.map((r) => r.entity_path as string);

describe("prior_attempts", () => {
  it("an add then a remove inside the window is one reverted, proximity_high row carrying the removal's reasoning", async () => {
    const { ctx, clock } = await world("pa-basic");
    const addId = await log(ctx, { entity_path: "users.email", change_type: "add", entity_type: "column", reasoning: "add email column so users can log in by email" });
    clock.advance(2 * 60 * MINUTE);
    const removeId = await log(ctx, { entity_path: "users.email", change_type: "remove", reasoning: "email column broke the nightly import job, dropped it" });

    const rows = await attempts(ctx, { entity_path: "users.email" });
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.id).toBe(addId);
    expect(row.change_type).toBe("add");
    expect(row.outcome).toBe("reverted");
    expect(row.confidence).toBe("proximity_high");
    expect(row.outcome_reasoning).toBe("email column broke the nightly import job, dropped it");
    expect(row.superseded_by).toBe("");
    expect(row.supersede_reasoning).toBe("");
    expect(row.current_status).toBe("reverted");
    expect(row.match_type).toBe("exact");
    expect(row.similarity).toBe(0);
    expect(row.note).toBe("");
    expect(Object.keys(row).sort()).toEqual(ATTEMPT_KEYS);
    // The removal is the closing event, never a row of its own.
    expect(rows.map((r) => r.id)).not.toContain(removeId);
  });

  it("a removal 8 days later is proximity_low: hidden by default, shown with min_confidence proximity_low", async () => {
    const { ctx, clock } = await world("pa-far");
    const addId = await log(ctx, { entity_path: "orders.discount", change_type: "add", reasoning: "discount column for the spring promotion" });
    clock.advance(8 * DAY);
    await log(ctx, { entity_path: "orders.discount", change_type: "remove", reasoning: "promotion over, column no longer needed" });

    expect(await attempts(ctx, { entity_path: "orders.discount" })).toEqual([]);
    const low = await attempts(ctx, { entity_path: "orders.discount", min_confidence: "proximity_low" });
    expect(low).toHaveLength(1);
    expect(low[0]).toMatchObject({ id: addId, outcome: "reverted", confidence: "proximity_low" });
    expect(low[0]!.outcome_reasoning).toContain("promotion over");
  });

  it("window_minutes moves the boundary; the default window is 10080 minutes, inclusive", async () => {
    const { ctx, clock } = await world("pa-window");
    // Exactly 7 days apart: inside the default window.
    await log(ctx, { entity_path: "a.seven", change_type: "add", reasoning: "first try at the seven day case" });
    clock.advance(7 * DAY);
    await log(ctx, { entity_path: "a.seven", change_type: "remove", reasoning: "undo the seven day case" });
    // 7 days and a minute: just outside it.
    await log(ctx, { entity_path: "a.longer", change_type: "add", reasoning: "first try at the longer case" });
    clock.advance(7 * DAY + MINUTE);
    await log(ctx, { entity_path: "a.longer", change_type: "remove", reasoning: "undo the longer case" });

    const byDefault = await attempts(ctx, { entity_path: "a" });
    expect(paths(byDefault)).toEqual(["a.seven"]);
    expect(byDefault[0]!.confidence).toBe("proximity_high");

    const wide = await attempts(ctx, { entity_path: "a", window_minutes: 7 * 1440 + 1 });
    expect(paths(wide).sort()).toEqual(["a.longer", "a.seven"]);
    expect(wide.every((r) => r.confidence === "proximity_high")).toBe(true);

    const narrow = await attempts(ctx, { entity_path: "a", window_minutes: 7 * 1440 - 1 });
    expect(narrow).toEqual([]);
    const narrowLow = await attempts(ctx, { entity_path: "a", window_minutes: 7 * 1440 - 1, min_confidence: "proximity_low" });
    expect(narrowLow.map((r) => r.confidence)).toEqual(["proximity_low", "proximity_low"]);

    // camelCase aliases are accepted.
    const alias = await attempts(ctx, { entityPath: "a", windowMinutes: 7 * 1440 + 1 });
    expect(alias).toHaveLength(2);
  });

  it("an explicit revert or reject closing an attempt is exact and shown by default regardless of the gap", async () => {
    const { ctx, clock } = await world("pa-exact");
    const cacheAdd = await log(ctx, { entity_path: "svc.cache", change_type: "add", reasoning: "add a read-through cache to the profile service" });
    const flagAdd = await log(ctx, { entity_path: "svc.flag", change_type: "add", reasoning: "add the beta flag for the new checkout" });
    clock.advance(40 * DAY);
    await log(ctx, { entity_path: "svc.cache", change_type: "revert", reasoning: "cache served stale profiles after writes" });
    const rejectId = await log(ctx, { entity_path: "svc.flag", change_type: "reject", reasoning: "went with a config switch instead of a flag" });

    const rows = await attempts(ctx, { entity_path: "svc" });
    expect(rows).toHaveLength(2);
    const cache = rows.find((r) => r.id === cacheAdd)!;
    expect(cache).toMatchObject({ outcome: "reverted", confidence: "exact", current_status: "reverted" });
    expect(cache.outcome_reasoning).toContain("cache served stale profiles after writes");
    const flag = rows.find((r) => r.id === flagAdd)!;
    expect(flag).toMatchObject({ outcome: "reverted", confidence: "exact" });
    expect(flag.outcome_reasoning).toContain("went with a config switch instead of a flag");
    // The reject closed an attempt, so it is not also a standalone row.
    expect(rows.map((r) => r.id)).not.toContain(rejectId);
  });

  it("a standalone reject (closing no attempt) is its own rejected, exact row", async () => {
    const { ctx, clock } = await world("pa-reject");
    const rejectId = await log(ctx, { entity_path: "deps.leftpad", change_type: "reject", entity_type: "dependency", reasoning: "considered leftpad; chose a two-line helper instead" });
    clock.advance(MINUTE);
    // A later add/remove pair on the same entity does not swallow the earlier reject.
    const addId = await log(ctx, { entity_path: "deps.leftpad", change_type: "add", reasoning: "tried leftpad after all for the report padding" });
    clock.advance(MINUTE);
    await log(ctx, { entity_path: "deps.leftpad", change_type: "remove", reasoning: "helper was enough after all" });

    const rows = await attempts(ctx, { entity_path: "deps.leftpad" });
    expect(rows.map((r) => r.id)).toEqual([addId, rejectId]);
    const reject = rows[1]!;
    expect(reject).toMatchObject({ change_type: "reject", outcome: "rejected", confidence: "exact", superseded_by: "", match_type: "exact" });
    expect(reject.outcome_reasoning).toContain("chose a two-line helper instead");
    expect(Object.keys(reject).sort()).toEqual(ATTEMPT_KEYS);

    // A superseded standalone reject is reopened, still exact.
    clock.advance(MINUTE);
    const lone = await log(ctx, { entity_path: "deps.moment", change_type: "reject", reasoning: "chose date-fns instead of moment" });
    clock.advance(MINUTE);
    const sup = await ok(ctx, "log_change", { entity_path: "deps.moment", change_type: "supersede", reasoning: "need moment-timezone parity for the importer" });
    const reopened = await attempts(ctx, { entity_path: "deps.moment" });
    expect(reopened).toHaveLength(1);
    expect(reopened[0]).toMatchObject({
      id: lone,
      outcome: "reopened",
      confidence: "exact",
      superseded_by: sup.id,
      supersede_reasoning: "need moment-timezone parity for the importer",
      current_status: "reopened",
    });
  });

  it("a supersede after a revert reopens the attempt, with superseded_by and supersede_reasoning", async () => {
    const { ctx, clock } = await world("pa-supersede");
    const addId = await log(ctx, { entity_path: "search.index", change_type: "add", reasoning: "add trigram index for name search" });
    clock.advance(60 * MINUTE);
    const revertId = await log(ctx, { entity_path: "search.index", change_type: "revert", reasoning: "writes got too slow with the index" });

    const before = await attempts(ctx, { entity_path: "search.index" });
    expect(before).toHaveLength(1);
    expect(before[0]).toMatchObject({ outcome: "reverted", current_status: "reverted", superseded_by: "" });

    clock.advance(2 * DAY);
    const sup = await ok(ctx, "log_change", { entity_path: "search.index", change_type: "supersede", reasoning: "batched writes now, the index cost is fine" });
    expect(sup.supersedes).toBe(revertId);

    const rows = await attempts(ctx, { entity_path: "search.index" });
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.id).toBe(addId);
    expect(row.outcome).toBe("reopened");
    expect(row.confidence).toBe("exact");
    expect(row.superseded_by).toBe(sup.id);
    expect(row.supersede_reasoning).toBe("batched writes now, the index cost is fine");
    expect(row.outcome_reasoning).toContain("writes got too slow with the index");
    expect(row.current_status).toBe("reopened");
  });

  it("a supersede logged on a parent path still reports its reasoning on the child's attempt", async () => {
    const { ctx, clock } = await world("pa-supersede-parent");
    const addId = await log(ctx, { entity_path: "users.email", change_type: "add", reasoning: "unique constraint on users.email" });
    clock.advance(MINUTE);
    const revertId = await log(ctx, { entity_path: "users.email", change_type: "revert", reasoning: "duplicates in legacy data broke the migration" });
    clock.advance(MINUTE);
    // A supersede may name a removal on a dotted child of its own path.
    const sup = await ok(ctx, "log_change", { entity_path: "users", change_type: "supersede", supersedes: revertId, reasoning: "legacy duplicates merged, constraint is safe now" });
    expect(sup.supersedes).toBe(revertId);

    for (const args of [{ entity_path: "users.email" }, { entity_path: "users" }, { description: "unique constraint" }]) {
      const rows = await attempts(ctx, args);
      expect(rows.map((r) => r.id)).toEqual([addId]);
      expect(rows[0]).toMatchObject({ outcome: "reopened", superseded_by: sup.id, supersede_reasoning: "legacy duplicates merged, constraint is safe now" });
    }
  });

  it("an id-less supersede reopens only the most recent removal", async () => {
    const { ctx, clock } = await world("pa-supersede-latest");
    const add1 = await log(ctx, { entity_path: "jobs.retry", change_type: "add", reasoning: "retry failed jobs three times" });
    clock.advance(10 * MINUTE);
    await log(ctx, { entity_path: "jobs.retry", change_type: "remove", reasoning: "retries duplicated charges" });
    clock.advance(10 * MINUTE);
    const add2 = await log(ctx, { entity_path: "jobs.retry", change_type: "add", reasoning: "retry with idempotency keys this time" });
    clock.advance(10 * MINUTE);
    const remove2 = await log(ctx, { entity_path: "jobs.retry", change_type: "remove", reasoning: "queue backlog during the incident" });
    clock.advance(10 * MINUTE);
    const sup = await ok(ctx, "log_change", { entity_path: "jobs.retry", change_type: "supersede", reasoning: "incident over, bring retries back" });
    expect(sup.supersedes).toBe(remove2);

    const rows = await attempts(ctx, { entity_path: "jobs.retry" });
    expect(rows.map((r) => r.id)).toEqual([add2, add1]);
    expect(rows[0]).toMatchObject({ outcome: "reopened", superseded_by: sup.id, supersede_reasoning: "incident over, bring retries back" });
    expect(rows[1]).toMatchObject({ outcome: "reverted", superseded_by: "", supersede_reasoning: "" });
    expect(rows[1]!.outcome_reasoning).toContain("retries duplicated charges");
    expect(rows.every((r) => r.current_status === "reopened")).toBe(true);
  });

  it("active attempts are proximity_low: hidden by default (an empty list is the normal answer), shown with proximity_low", async () => {
    const { ctx } = await world("pa-active");
    const addId = await log(ctx, { entity_path: "billing.currency", change_type: "add", reasoning: "store the invoice currency explicitly" });

    const def = await ok(ctx, "prior_attempts", { entity_path: "billing.currency" });
    expect(def.items).toEqual([]);
    expect(def.isError).toBe(false);

    const low = await attempts(ctx, { entity_path: "billing.currency", min_confidence: "proximity_low" });
    expect(low).toHaveLength(1);
    expect(low[0]).toMatchObject({ id: addId, outcome: "active", confidence: "proximity_low", outcome_reasoning: "", current_status: "active", superseded_by: "" });
  });

  it("entity_path matches exactly or as a dotted prefix: users covers users.email, not usersX or users_x", async () => {
    const { ctx, clock } = await world("pa-prefix");
    for (const p of ["users.email", "usersX", "users_x.email", "users"]) {
      await log(ctx, { entity_path: p, change_type: "add", reasoning: `trying a change on ${p}` });
      clock.advance(MINUTE);
      await log(ctx, { entity_path: p, change_type: "remove", reasoning: `backing out the change on ${p}` });
      clock.advance(MINUTE);
    }
    const rows = await attempts(ctx, { entity_path: "users" });
    expect(paths(rows)).toEqual(["users", "users.email"]);
    expect(rows.every((r) => r.match_type === "exact")).toBe(true);

    expect(paths(await attempts(ctx, { entity_path: "users.email" }))).toEqual(["users.email"]);
    expect(paths(await attempts(ctx, { entity_path: "usersX" }))).toEqual(["usersX"]);
    // A leading ./ is canonicalized away.
    expect(paths(await attempts(ctx, { entity_path: "./users.email" }))).toEqual(["users.email"]);
  });

  it("description is a substring over reasoning, diff and path (match_type substring); entity_path wins when both are given", async () => {
    const { ctx, clock } = await world("pa-description");
    const pairs: Array<[string, Record<string, unknown>]> = [
      ["billing.invoice", { reasoning: "switch invoices to Stripe hosted pages" }],
      ["orders.total", { reasoning: "include the processing fee in totals", diff: "+ stripe_fee INTEGER NOT NULL" }],
      ["misc.banner", { reasoning: "holiday banner on the landing page" }],
    ];
    const ids: Record<string, string> = {};
    for (const [p, extra] of pairs) {
      ids[p] = await log(ctx, { entity_path: p, change_type: "add", ...extra });
      clock.advance(MINUTE);
      await log(ctx, { entity_path: p, change_type: "remove", reasoning: `rolled back ${p}` });
      clock.advance(MINUTE);
    }

    const byText = await attempts(ctx, { description: "stripe" });
    expect(paths(byText)).toEqual(["orders.total", "billing.invoice"]);
    expect(byText.every((r) => r.match_type === "substring")).toBe(true);
    expect(byText.map((r) => r.id)).toEqual([ids["orders.total"], ids["billing.invoice"]]);

    // The path itself is searched too.
    expect(paths(await attempts(ctx, { description: "banner" }))).toEqual(["misc.banner"]);
    // Nothing matches: an empty list, not an error.
    expect(await attempts(ctx, { description: "kubernetes" })).toEqual([]);

    const both = await attempts(ctx, { entity_path: "misc", description: "stripe" });
    expect(paths(both)).toEqual(["misc.banner"]);
    expect(both[0]!.match_type).toBe("exact");
  });

  it("description finds candidates past many newer matches, with short texts, and ignores agent-name matches", async () => {
    const { id, ctx, clock } = await world("pa-description-walk", "stripe-bot");
    await log(ctx, { entity_path: "old.flag", change_type: "add", reasoning: "gate the beta behind a flag" });
    clock.advance(MINUTE);
    await log(ctx, { entity_path: "old.flag", change_type: "revert", reasoning: "flag confused users, went with a banner instead" });
    // 450 newer events that mention "flag" only in passing on one busy path: the walk must
    // page through several FTS batches to reach old.flag.
    const stmts = Array.from({ length: 450 }, (_, i) =>
      env.DB.prepare(`INSERT INTO events (id, tenant_id, timestamp, entity_path, change_type, reasoning) VALUES (?, ?, ?, 'busy.path', 'modify', 'flag tweak')`).bind(
        `walk-${i}-${crypto.randomUUID()}`,
        id.tenantId,
        at(DAY + i * MINUTE),
      ),
    );
    for (let i = 0; i < stmts.length; i += 100) await env.DB.batch(stmts.slice(i, i + 100));
    expect(paths(await attempts(ctx, { description: "the beta" }))).toEqual(["old.flag"]);
    const low = await attempts(ctx, { description: "flag", min_confidence: "proximity_low", limit: 1000, fields: ["entity_path"] });
    expect(new Set(paths(low))).toEqual(new Set(["busy.path", "old.flag"]));
    // Two characters take the scanning path.
    expect(paths(await attempts(ctx, { description: "ta" }))).toEqual(["old.flag"]);
    // The agent name "stripe-bot" is on every event, but agent names are not descriptions.
    expect(await attempts(ctx, { description: "stripe-bot" })).toEqual([]);
  });

  it("returns attempts newest first, respects limit, and every row carries every field", async () => {
    const { ctx, clock } = await world("pa-order");
    const ids: string[] = [];
    for (const p of ["p.a", "p.b", "p.c"]) {
      ids.push(await log(ctx, { entity_path: p, change_type: "modify", reasoning: `tune ${p} for the load test` }));
      clock.advance(MINUTE);
    }
    // Removals in the opposite order: rows follow the attempt's order, not the removal's.
    for (const p of ["p.c", "p.b", "p.a"]) {
      await log(ctx, { entity_path: p, change_type: "revert", reasoning: `load test regressed on ${p}` });
      clock.advance(MINUTE);
    }
    const all = await attempts(ctx, { entity_path: "p" });
    expect(all.map((r) => r.id)).toEqual([ids[2], ids[1], ids[0]]);
    for (const row of all) {
      expect(Object.keys(row).sort()).toEqual(ATTEMPT_KEYS);
      expect(row).toMatchObject({ outcome: "reverted", confidence: "exact", superseded_by: "", supersede_reasoning: "", match_type: "exact", similarity: 0, note: "" });
      expect(row.current_status).toBe("reverted");
    }
    const two = await attempts(ctx, { entity_path: "p", limit: 2 });
    expect(two.map((r) => r.id)).toEqual([ids[2], ids[1]]);
  });

  it("removals and renames never appear as rows of their own", async () => {
    const { ctx, clock } = await world("pa-rename");
    const addOld = await log(ctx, { entity_path: "accounts.nick", change_type: "add", reasoning: "nickname column for the forum" });
    clock.advance(MINUTE);
    const createNew = await log(ctx, { entity_path: "accounts.handle", change_type: "rename", rename_from: "accounts.nick", reasoning: "handle is the product's word for it" });
    clock.advance(MINUTE);
    await log(ctx, { entity_path: "accounts.handle", change_type: "delete", reasoning: "forum shut down, handle column no longer read" });
    clock.advance(MINUTE);
    await log(ctx, { entity_path: "accounts.gone", change_type: "remove", reasoning: "remove with nothing before it" });

    const rows = await attempts(ctx, { entity_path: "accounts", min_confidence: "proximity_low" });
    expect(rows.map((r) => r.change_type).sort()).toEqual(["add", "create"]);
    expect(rows.some((r) => ["rename", "remove", "delete"].includes(r.change_type as string))).toBe(false);
    const handle = rows.find((r) => r.id === createNew)!;
    expect(handle).toMatchObject({ entity_path: "accounts.handle", outcome: "reverted", confidence: "proximity_high" });
    expect(handle.metadata).toMatchObject({ renamed_from: "accounts.nick" });
    // A rename is no removal, but the old name's add was undone under the new name: reverted.
    expect(rows.find((r) => r.id === addOld)).toMatchObject({ outcome: "reverted", note: expect.stringContaining("accounts.handle") });
  });

  it("follows renames and moves: an attempt under an old path, undone under the new one, is reverted", async () => {
    const { ctx, clock } = await world("pa-moved");
    const added = await log(ctx, { entity_path: "src/auth.py::login_rate_limit", change_type: "add", entity_type: "function", reasoning: "throttle logins per IP to stop credential stuffing" });
    clock.advance(MINUTE);
    await log(ctx, {
      entity_path: "lib/auth.py::login_rate_limit",
      change_type: "rename",
      rename_from: "src/auth.py::login_rate_limit",
      reasoning: "moved auth into lib/ with the rest of the shared code",
    });
    clock.advance(MINUTE);
    await log(ctx, { entity_path: "lib/security.py::login_rate_limit", change_type: "rename", rename_from: "lib/auth.py::login_rate_limit", reasoning: "security helpers get their own module" });
    clock.advance(MINUTE);
    await log(ctx, { entity_path: "lib/security.py::login_rate_limit", change_type: "revert", reasoning: "per-IP throttling locked out whole offices behind one NAT" });
    // Asked about the newest path only: the attempt made two names ago comes back, undone.
    const rows = await attempts(ctx, { entity_path: "lib/security.py::login_rate_limit" });
    const original = rows.find((r) => r.id === added);
    expect(original).toMatchObject({ entity_path: "src/auth.py::login_rate_limit", outcome: "reverted", confidence: "exact", current_status: "reverted" });
    expect(original!.outcome_reasoning).toContain("whole offices behind one NAT");
    expect(original!.note).toContain("lib/security.py::login_rate_limit");
    // A later, unrelated use of the old name keeps its own timeline.
    clock.advance(MINUTE);
    const reused = await log(ctx, { entity_path: "src/auth.py::login_rate_limit", change_type: "add", reasoning: "a new, per-account limiter under the freed name" });
    const old = await attempts(ctx, { entity_path: "src/auth.py::login_rate_limit", min_confidence: "proximity_low" });
    expect(old.find((r) => r.id === reused)).toMatchObject({ outcome: "active", note: "" });
    // Asked by the first name, the attempt made under it is followed forward to its undoing.
    expect(old.find((r) => r.id === added)).toMatchObject({ outcome: "reverted", confidence: "exact" });
  });

  it("rejects a call with no target, a bad min_confidence, a bad window and unknown keys", async () => {
    const { ctx } = await world("pa-errors");
    const none = await fails(ctx, "prior_attempts", {});
    expect(none.code).toBe("missing_target");
    expect(none.hint).not.toBe("");
    expect((await fails(ctx, "prior_attempts", { entity_path: "   ", description: "  " })).code).toBe("missing_target");

    const conf = await fails(ctx, "prior_attempts", { entity_path: "users", min_confidence: "high" });
    expect(conf.code).toBe("invalid_input");
    expect(conf.message).toContain("min_confidence");

    for (const window_minutes of [0, "60", -5, 1.5]) {
      const e = await fails(ctx, "prior_attempts", { entity_path: "users", window_minutes });
      expect(e.code).toBe("invalid_input");
      expect(e.message).toContain("window_minutes");
    }
    const unknown = await call(ctx, "prior_attempts", { entity_path: "users", fuzz: "email" });
    expect(unknown.isError).toBe(true);
    expect(unknown.error.code).toBe("invalid_input");
    expect(unknown.error.hint).toContain("entity_path");
    expect((await fails(ctx, "prior_attempts", { entity_path: "users", limit: 0 })).code).toBe("invalid_input");
  });
});

describe("stale_decisions", () => {
  it("pure age never surfaces a due decision; a blame on the entity after the decision does", async () => {
    const { ctx, clock } = await world("sd-queried");
    // A query made before the decision does not count.
    await ok(ctx, "blame", { entity_path: "users.email" });
    clock.advance(MINUTE);
    const decisionAt = clock.now().getTime();
    const id = await log(ctx, { entity_path: "users.email", change_type: "add", entity_type: "column", reasoning: "email as the login key for now", revisit_after: "30d" });
    const due = new Date(decisionAt + 30 * DAY).toISOString();

    clock.advance(29 * DAY);
    expect(await stale(ctx)).toEqual([]);

    clock.advance(DAY + 12 * 60 * MINUTE); // 30.5 days after the decision, nobody has looked
    expect(await stale(ctx)).toEqual([]);
    // Calling stale_decisions itself, or tools that are not query signals, or queries on unrelated paths: still nothing.
    expect(await stale(ctx, { entity_path: "users.email" })).toEqual([]);
    await ok(ctx, "change_history", { entity_path: "users.email" });
    await ok(ctx, "blame", { entity_path: "usersX.email" });
    await ok(ctx, "blame", { entity_path: "users.emailX" });
    await ok(ctx, "change_diff", { entity_path: "orders" });
    await ok(ctx, "prior_attempts", { description: "email" });
    expect(await stale(ctx)).toEqual([]);

    await ok(ctx, "blame", { entity_path: "users.email" });
    const rows = await stale(ctx);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.id).toBe(id);
    expect(row.flag).toBe("revisit_due");
    expect(row.active_use_signals).toEqual(["queried"]);
    expect(row.revisit_due).toBe(due);
    expect(row.revisit_after).toBe("30d");
    expect(row.days_overdue).toBe(0);
    expect(row.stale_reason).toContain("past its revisit date");
    expect(row.stale_reason).toContain("queried");
    expect(row.matched_terms).toEqual([]);
    expect(row.matched_event_id).toBe("");
    expect(row.expires_status).toBe("");
    expect(row.expired_pattern).toBe("");
    expect(Object.keys(row).sort()).toEqual(STALE_KEYS);

    // days_overdue counts whole days.
    clock.advance(DAY);
    expect((await stale(ctx))[0]!.days_overdue).toBe(1);
    clock.advance(9 * DAY + 23 * 60 * MINUTE);
    expect((await stale(ctx))[0]!.days_overdue).toBe(11);
  });

  it("a query before the revisit date counts once the date has passed (due exactly at the boundary)", async () => {
    const { ctx, clock } = await world("sd-early-query");
    await log(ctx, { entity_path: "cfg.timeout", change_type: "modify", reasoning: "timeout 30s until the upstream fix ships", revisit_after: "30d" });
    clock.advance(10 * DAY);
    await ok(ctx, "change_diff", { entity_path: "cfg.timeout" });
    clock.advance(20 * DAY - MINUTE);
    expect(await stale(ctx)).toEqual([]);
    clock.advance(MINUTE); // exactly 30 days: due
    const rows = await stale(ctx);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ flag: "revisit_due", days_overdue: 0, revisit_due: at(30 * DAY), active_use_signals: ["queried"] });
  });

  it("a query on a dotted relative counts (parent or child), through blame, change_diff and prior_attempts", async () => {
    const { ctx, clock } = await world("sd-relatives");
    const email = await log(ctx, { entity_path: "users.email", change_type: "add", reasoning: "email as the login key for now", revisit_after: "30d" });
    const billing = await log(ctx, { entity_path: "billing", change_type: "create", entity_type: "table", reasoning: "billing table, one row per invoice", revisit_after: "30d" });
    const orders = await log(ctx, { entity_path: "orders.total", change_type: "modify", reasoning: "totals in cents as integers", revisit_after: "30d" });
    clock.advance(31 * DAY);
    expect(await stale(ctx)).toEqual([]);

    await ok(ctx, "prior_attempts", { entity_path: "users" }); // parent of users.email
    await ok(ctx, "change_diff", { entity_path: "billing.invoice" }); // child of billing
    await ok(ctx, "blame", { entity_path: "orders.totals" }); // not related to orders.total
    const rows = await stale(ctx);
    expect(rows.map((r) => r.id).sort()).toEqual([email, billing].sort());
    expect(rows.every((r) => r.flag === "revisit_due" && r.active_use_signals[0] === "queried")).toBe(true);
    expect(rows.map((r) => r.id)).not.toContain(orders);
  });

  it("later sibling activity in the changeset is an active-use signal; earlier or foreign activity is not", async () => {
    const { ctx, clock } = await world("sd-changeset");
    await log(ctx, { entity_path: "jobs.cleanup", change_type: "add", reasoning: "cleanup job for expired sessions", changeset_id: "cs-retention" });
    clock.advance(MINUTE);
    const id = await log(ctx, { entity_path: "retention.days", change_type: "modify", reasoning: "keep sessions 30 days", changeset_id: "cs-retention", revisit_after: "30d" });
    clock.advance(MINUTE);
    await log(ctx, { entity_path: "jobs.other", change_type: "add", reasoning: "an unrelated job in another changeset", changeset_id: "cs-other" });
    clock.advance(31 * DAY);
    expect(await stale(ctx)).toEqual([]);

    await log(ctx, { entity_path: "jobs.archive", change_type: "add", reasoning: "archive sessions before cleanup", changeset_id: "cs-retention" });
    const rows = await stale(ctx);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, flag: "revisit_due", active_use_signals: ["changeset_activity"], days_overdue: 1 });
    expect(rows[0]!.stale_reason).toContain("changeset");

    await ok(ctx, "blame", { entity_path: "retention.days" });
    expect((await stale(ctx))[0]!.active_use_signals).toEqual(["queried", "changeset_activity"]);
  });

  it("revisit_after as an ISO date works the same way", async () => {
    const { ctx, clock } = await world("sd-iso");
    const id = await log(ctx, { entity_path: "deps.stripe", change_type: "add", entity_type: "dependency", reasoning: "pin stripe 8.x until the API migration", revisit_after: "2026-07-01" });
    await ok(ctx, "blame", { entity_path: "deps.stripe" });
    clock.set("2026-06-30T23:59:59.000Z");
    expect(await stale(ctx)).toEqual([]);
    clock.set("2026-07-03T06:00:00.000Z");
    const rows = await stale(ctx);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, flag: "revisit_due", revisit_due: "2026-07-01T00:00:00.000Z", revisit_after: "2026-07-01T00:00:00.000Z", days_overdue: 2, active_use_signals: ["queried"] });
  });

  it("expires_when date: in the past is expired, without any activity", async () => {
    const { ctx, clock } = await world("sd-date");
    const id = await log(ctx, { entity_path: "flags.beta", change_type: "add", reasoning: "beta flag for the new checkout", expires_when: "date:2026-06-10" });
    clock.set("2026-06-09T23:00:00.000Z");
    expect(await stale(ctx)).toEqual([]);
    clock.set("2026-06-11T00:00:00.000Z");
    const rows = await stale(ctx);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, flag: "expired", expires_status: "expired", expired_pattern: "date:2026-06-10T00:00:00.000Z", revisit_due: "", days_overdue: 0, active_use_signals: [] });
    expect(rows[0]!.stale_reason).toContain("expiry condition fired");
  });

  it("expires_when entity:PATH:changes fires on a later change to PATH or a dotted child, not on earlier or unrelated changes", async () => {
    const { ctx, clock } = await world("sd-entity");
    await log(ctx, { entity_path: "users.email", change_type: "add", reasoning: "email column exists before the decision" });
    clock.advance(MINUTE);
    const id = await log(ctx, { entity_path: "api.login", change_type: "modify", reasoning: "login looks users up by email", expires_when: "entity:users.email:changes" });
    clock.advance(MINUTE);
    expect(await stale(ctx)).toEqual([]);
    await log(ctx, { entity_path: "users.emails", change_type: "add", reasoning: "a sibling column that is not the watched one" });
    clock.advance(MINUTE);
    expect(await stale(ctx)).toEqual([]);

    const childId = await log(ctx, { entity_path: "users.email.domain", change_type: "add", reasoning: "split out the domain part" });
    const rows = await stale(ctx);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, flag: "expired", expires_status: "expired", expired_pattern: "entity:users.email:changes" });
    expect(rows[0]!.expires_detail).toContain(childId);

    // The exact path fires too.
    const other = await log(ctx, { entity_path: "api.orders", change_type: "modify", reasoning: "orders endpoint assumes cents", expires_when: "entity:orders.total:changes" });
    clock.advance(MINUTE);
    expect((await stale(ctx)).map((r) => r.id)).toEqual([id]);
    await log(ctx, { entity_path: "orders.total", change_type: "retype", reasoning: "totals become decimals" });
    expect((await stale(ctx)).map((r) => r.id).sort()).toEqual([id, other].sort());
  });

  it("expires_when library: needs manual review; manual: never fires", async () => {
    const { ctx, clock } = await world("sd-library");
    const lib = await log(ctx, { entity_path: "deps.react", change_type: "add", reasoning: "stay on react 18 until 19 is out of rc", expires_when: "library:react>=19.0" });
    await log(ctx, { entity_path: "auth.sso", change_type: "add", reasoning: "SSO off until legal signs off", expires_when: "manual:legal approves SSO" });
    clock.advance(365 * DAY);
    await ok(ctx, "blame", { entity_path: "auth.sso" });
    const rows = await stale(ctx);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: lib, flag: "manual_review", expires_status: "manual_review", expired_pattern: "" });
    expect(rows[0]!.expires_detail).toContain("react");
    expect(rows[0]!.stale_reason).toContain("person");
  });

  it("stale_when fires on a later event sharing two keywords; one keyword, stopwords or earlier events do not", async () => {
    const { ctx, clock } = await world("sd-stale-when");
    // Echo before the decision: ignored.
    await log(ctx, { entity_path: "svc.pay", change_type: "modify", reasoning: "stripe pricing page copy" });
    clock.advance(MINUTE);
    const id = await log(ctx, { entity_path: "svc.fee", change_type: "modify", reasoning: "flat fee per order", stale_when: "rethink this fee when stripe pricing changes" });
    clock.advance(MINUTE);
    expect(await stale(ctx)).toEqual([]);

    // One shared keyword ("stripe"): "this" and "when" are stopwords, "fee" is under four characters.
    await log(ctx, { entity_path: "svc.web", change_type: "modify", reasoning: "this is when stripe webhooks retry the fee" });
    clock.advance(MINUTE);
    expect(await stale(ctx)).toEqual([]);

    const echo = await log(ctx, { entity_path: "svc.api", change_type: "modify", reasoning: "Stripe announced new PRICING tiers" });
    const rows = await stale(ctx);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, flag: "review_suggested", matched_terms: ["pricing", "stripe"], matched_event_id: echo, revisit_due: "", days_overdue: 0 });
    expect(rows[0]!.stale_reason).toContain("stale_when");
  });

  it("flag precedence: expired > revisit_due > review_suggested > manual_review", async () => {
    const { ctx, clock } = await world("sd-precedence");
    const expired = await log(ctx, { entity_path: "p.expired", change_type: "add", reasoning: "short-lived cache ttl", revisit_after: "30d", expires_when: "date:2026-06-20" });
    const due = await log(ctx, { entity_path: "p.due", change_type: "add", reasoning: "queue depth limit", revisit_after: "30d", stale_when: "kafka migration finished" });
    const review = await log(ctx, { entity_path: "p.review", change_type: "add", reasoning: "vendored parser", expires_when: "library:parser>=3.0", stale_when: "upstream parser rewrite lands" });
    clock.advance(MINUTE);
    await log(ctx, { entity_path: "q.notes", change_type: "modify", reasoning: "kafka migration finished; upstream parser rewrite lands next week" });
    clock.advance(31 * DAY);
    await ok(ctx, "blame", { entity_path: "p.expired" });
    await ok(ctx, "blame", { entity_path: "p.due" });

    const rows = await stale(ctx, { entity_path: "p" });
    const byId = new Map(rows.map((r) => [r.id as string, r]));
    expect(rows).toHaveLength(3);
    expect(byId.get(expired)).toMatchObject({ flag: "expired", active_use_signals: ["queried"], days_overdue: 1, expired_pattern: "date:2026-06-20T00:00:00.000Z" });
    expect(byId.get(due)).toMatchObject({ flag: "revisit_due", matched_terms: ["finished", "kafka", "migration"] });
    expect(byId.get(review)).toMatchObject({ flag: "review_suggested", expires_status: "manual_review", matched_terms: ["lands", "parser", "rewrite", "upstream"] });
  });

  it("orders date-due rows most overdue first, then condition-only rows by decision time; limit applies after ordering", async () => {
    const { ctx, clock } = await world("sd-order");
    const c = await log(ctx, { entity_path: "c.cfg", change_type: "modify", reasoning: "sqlite for now", stale_when: "when we migrate billing to postgres" });
    clock.advance(MINUTE);
    const e = await log(ctx, { entity_path: "e.dep", change_type: "add", reasoning: "stripe 8", expires_when: "library:stripe>=9.0" });
    clock.advance(MINUTE);
    const a = await log(ctx, { entity_path: "a.col", change_type: "add", reasoning: "nullable for the backfill", revisit_after: "10d" });
    clock.advance(MINUTE);
    const b = await log(ctx, { entity_path: "b.col", change_type: "add", reasoning: "text until the enum settles", revisit_after: "5d" });
    clock.advance(MINUTE);
    await log(ctx, { entity_path: "db.main", change_type: "modify", reasoning: "postgres migration for billing planned" });
    clock.set(at(20 * DAY));
    await ok(ctx, "blame", { entity_path: "a.col" });
    await ok(ctx, "blame", { entity_path: "b.col" });

    const rows = await stale(ctx);
    expect(rows.map((r) => r.id)).toEqual([b, a, c, e]);
    expect(rows.map((r) => r.flag)).toEqual(["revisit_due", "revisit_due", "review_suggested", "manual_review"]);
    // b fell due at T0+3m+5d, a at T0+2m+10d.
    expect(rows.map((r) => r.days_overdue)).toEqual([14, 9, 0, 0]);
    expect((await stale(ctx, { limit: 2 })).map((r) => r.id)).toEqual([b, a]);
    expect((await stale(ctx, { limit: 3 })).map((r) => r.id)).toEqual([b, a, c]);
  });

  it("filters by entity_path (dotted prefix), project and agent (exact; 'me' is the caller)", async () => {
    const clock = new TestClock(new Date(T0));
    const tenant = `mem-sd-filters-${crypto.randomUUID().slice(0, 8)}`;
    const alice = makeCtx(await seedIdentity(tenant, "alice"), clock);
    const bob = makeCtx(await seedIdentity(tenant, "bob"), clock);
    const cond = { change_type: "add", reasoning: "waiting on the next major", expires_when: "library:react>=19" };
    await log(alice, { ...cond, entity_path: "users.email", project: "web" });
    clock.advance(MINUTE);
    await log(alice, { ...cond, entity_path: "usersX.name", project: "api" });
    clock.advance(MINUTE);
    await log(bob, { ...cond, entity_path: "users.id", project: "api" });
    clock.advance(MINUTE);
    await log(bob, { ...cond, entity_path: "orders.total", project: "web" });
    clock.advance(MINUTE);

    expect(paths(await stale(alice))).toEqual(["users.email", "usersX.name", "users.id", "orders.total"]);
    expect(paths(await stale(alice, { entity_path: "users" }))).toEqual(["users.email", "users.id"]);
    expect(paths(await stale(alice, { entity_path: "users.id" }))).toEqual(["users.id"]);
    expect(paths(await stale(alice, { project: "api" }))).toEqual(["usersX.name", "users.id"]);
    expect(await stale(alice, { project: "ap" })).toEqual([]);
    expect(paths(await stale(bob, { agent: "alice" }))).toEqual(["users.email", "usersX.name"]);
    expect(paths(await stale(bob, { agent: "me" }))).toEqual(["users.id", "orders.total"]);
    expect(paths(await stale(alice, { agent: "me" }))).toEqual(["users.email", "usersX.name"]);
    expect(await stale(alice, { agent: "carol" })).toEqual([]);
    expect(paths(await stale(alice, { agent: "me", project: "web", entity_path: "users" }))).toEqual(["users.email"]);
  });

  it("a newer decision on the same entity replaces the older one; a plain later change does not", async () => {
    const { ctx, clock } = await world("sd-replace");
    const oldId = await log(ctx, { entity_path: "cfg.pool", change_type: "modify", reasoning: "pool of 10 connections", revisit_after: "30d" });
    clock.advance(DAY);
    await log(ctx, { entity_path: "cfg.pool", change_type: "modify", reasoning: "log the pool size at boot" }); // no decision fields
    clock.advance(30 * DAY);
    await ok(ctx, "blame", { entity_path: "cfg.pool" });
    expect((await stale(ctx)).map((r) => r.id)).toEqual([oldId]);

    const newId = await log(ctx, { entity_path: "cfg.pool", change_type: "modify", reasoning: "pool of 25 after the load test", revisit_after: "90d" });
    expect(await stale(ctx)).toEqual([]);
    clock.advance(91 * DAY);
    await ok(ctx, "blame", { entity_path: "cfg.pool" });
    expect((await stale(ctx)).map((r) => r.id)).toEqual([newId]);
  });

  it("a superseded decision does not surface", async () => {
    const { ctx, clock } = await world("sd-superseded");
    const id = await log(ctx, { entity_path: "auth.mfa", change_type: "reject", reasoning: "went with email codes instead of TOTP for now", revisit_after: "30d" });
    clock.advance(31 * DAY);
    await ok(ctx, "blame", { entity_path: "auth.mfa" });
    expect((await stale(ctx)).map((r) => r.id)).toEqual([id]);

    const sup = await ok(ctx, "log_change", { entity_path: "auth.mfa", change_type: "supersede", supersedes: id, reasoning: "TOTP is back on the table after the audit" });
    expect(sup.supersedes).toBe(id);
    expect(await stale(ctx)).toEqual([]);
  });

  it("rejects unknown keys and a limit of 0", async () => {
    const { ctx } = await world("sd-errors");
    const unknown = await fails(ctx, "stale_decisions", { since: "7d" });
    expect(unknown.code).toBe("invalid_input");
    expect(unknown.message).toContain("since");
    expect(unknown.hint).toContain("entity_path");
    const zero = await fails(ctx, "stale_decisions", { limit: 0 });
    expect(zero.code).toBe("invalid_input");
    expect(zero.message).toContain("limit");
    expect((await fails(ctx, "stale_decisions", { limit: "5" })).code).toBe("invalid_input");
    // The empty answer is a success, not an error.
    const empty = await ok(ctx, "stale_decisions", {});
    expect(empty).toMatchObject({ ok: true, items: [], isError: false });
  });

  describe("tenant isolation of active memory", () => {
    it("tenant B never sees A's attempts or decisions, and B's queries do not count as A's active use", async () => {
      const clock = new TestClock(new Date(T0));
      const A = (await world("iso-a", "agent", clock)).ctx;
      const B = (await world("iso-b", "agent", clock)).ctx;

      const addId = await log(A, { entity_path: "users.email", change_type: "add", reasoning: "email login for tenant a" });
      clock.advance(MINUTE);
      await log(A, { entity_path: "users.email", change_type: "revert", reasoning: "tenant a reverted email login" });
      const decision = await log(A, { entity_path: "cfg.flag", change_type: "add", reasoning: "feature flag for the pilot", revisit_after: "30d", stale_when: "pilot customers onboarded" });
      await log(A, { entity_path: "cfg.lib", change_type: "add", reasoning: "old sdk", expires_when: "library:sdk>=2.0" });
      clock.advance(31 * DAY);

      // B does what would surface A's decisions, on A's paths.
      await ok(B, "blame", { entity_path: "cfg.flag" });
      await ok(B, "change_diff", { entity_path: "cfg" });
      await log(B, { entity_path: "notes", change_type: "modify", reasoning: "pilot customers onboarded last week" });

      expect(await attempts(B, { entity_path: "users.email", min_confidence: "proximity_low" })).toEqual([]);
      expect(await attempts(B, { description: "email" })).toEqual([]);
      expect(await stale(B)).toEqual([]);

      // A sees its own manual_review row only: B's blame and B's echo did not count for A.
      const aRows = await stale(A);
      expect(aRows.map((r) => r.flag)).toEqual(["manual_review"]);
      expect(aRows.map((r) => r.id)).not.toContain(decision);

      // Positive control: A's own blame does count.
      await ok(A, "blame", { entity_path: "cfg.flag" });
      const after = await stale(A);
      expect(after.find((r) => r.id === decision)).toMatchObject({ flag: "revisit_due", active_use_signals: ["queried"] });
      expect((await attempts(A, { entity_path: "users.email" })).map((r) => r.id)).toEqual([addId]);
    });
  });
});
