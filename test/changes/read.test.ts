/** The change ledger's reads: change_diff, blame, change_history, changeset, change_search (and tenant isolation). */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../src/db/ids";
import type { Ctx } from "../../src/core/context";
import { call, DAY, fails, makeCtx, MINUTE, ok, seedIdentity, TestClock, type Structured, type TestIdentity } from "../support/helpers";

const WHY = "Recorded by the read tests with enough words";
const HOUR = 60 * MINUTE;

interface Setup {
  id: TestIdentity;
  clock: TestClock;
  ctx: Ctx;
}

async function setup(tenant: string, actor = "reader-agent"): Promise<Setup> {
  const id = await seedIdentity(tenant, actor);
  const clock = new TestClock();
  return { id, clock, ctx: makeCtx(id, clock, "read-session") };
}

/** Logs one change through the registry, a millisecond after the previous one. */
async function log(s: Setup, args: Record<string, unknown>): Promise<Structured> {
  s.clock.advance(1);
  return ok(s.ctx, "log_change", { reasoning: WHY, change_type: "modify", ...args });
}

const paths = (r: Structured): string[] => r.items.map((e: Structured) => e.entity_path as string);
const ids = (r: Structured): string[] => r.items.map((e: Structured) => e.id as string);
const sorted = (xs: string[]) => [...xs].sort();

/** Bulk rows straight into D1 (the FTS triggers index them as log_change's rows are). */
async function insertEvents(tenantId: string, rows: Array<{ entity_path: string; timestamp: string; reasoning?: string; diff?: string; change_type?: string; agent?: string }>): Promise<string[]> {
  const out: string[] = [];
  const stmts = rows.map((r) => {
    const id = uuidv7(Date.parse(r.timestamp));
    out.push(id);
    return env.DB.prepare(
      `INSERT INTO events (id, tenant_id, timestamp, entity_path, entity_type, change_type, diff, reasoning, agent)
       VALUES (?, ?, ?, ?, 'other', ?, ?, ?, ?)`,
    ).bind(id, tenantId, r.timestamp, r.entity_path, r.change_type ?? "modify", r.diff ?? "", r.reasoning ?? "", r.agent ?? "bulk-agent");
  });
  for (let i = 0; i < stmts.length; i += 100) await env.DB.batch(stmts.slice(i, i + 100));
  return out;
}

/** Follows next_cursor until the last page, returning every item and the number of pages. */
async function walk(ctx: Ctx, tool: string, args: Record<string, unknown>): Promise<{ items: Structured[]; pages: number }> {
  const items: Structured[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await ok(ctx, tool, { ...args, ...(cursor ? { cursor } : {}) });
    items.push(...r.items);
    cursor = r.next_cursor;
    pages++;
    if (pages > 100) throw new Error("pagination did not end");
  } while (cursor);
  return { items, pages };
}

const long = `${"segment_".repeat(120)}end`; // 963 characters, with LIKE metacharacters

describe("change_diff", () => {
  describe("dotted-prefix semantics", () => {
    const stored = [
      "users",
      "users.email",
      "users.email.domain",
      "Users.name",
      "usersX",
      "usersX.email",
      "users_email",
      "users-archive",
      "src/auth.py",
      "src/auth.py::login",
      "src/utils.py",
      "user_tier",
      "user_tier.v2",
      "userXtier",
      "userXtier.v2",
      "promo.50%",
      "promo.50%.code",
      "promo.500.code",
      "a%b",
      "a%b.c",
      "aXb.c",
      "dir/sub",
      "dir/sub.leaf",
    ];
    let s: Setup;
    beforeAll(async () => {
      s = await setup("r-prefix");
      for (const entity_path of stored) await log(s, { entity_path });
    });

    it("covers the path itself and its dotted descendants only", async () => {
      expect(sorted(paths(await ok(s.ctx, "change_diff", { entity_path: "users" })))).toEqual(sorted(["users", "users.email", "users.email.domain", "Users.name"]));
      expect(paths(await ok(s.ctx, "change_diff", { entity_path: "users.email" }))).toEqual(["users.email.domain", "users.email"]);
      expect(paths(await ok(s.ctx, "change_diff", { entity_path: "usersX" }))).toEqual(["usersX.email", "usersX"]);
    });

    it("does not treat '/' or '::' as a prefix separator", async () => {
      expect((await ok(s.ctx, "change_diff", { entity_path: "src/" })).items).toEqual([]);
      expect((await ok(s.ctx, "change_diff", { entity_path: "src" })).items).toEqual([]);
      expect(paths(await ok(s.ctx, "change_diff", { entity_path: "src/auth.py" }))).toEqual(["src/auth.py"]);
      expect(paths(await ok(s.ctx, "change_diff", { entity_path: "src/auth.py::login" }))).toEqual(["src/auth.py::login"]);
    });

    it("matches _, % and \\ literally", async () => {
      expect(paths(await ok(s.ctx, "change_diff", { entity_path: "user_tier" }))).toEqual(["user_tier.v2", "user_tier"]);
      expect(paths(await ok(s.ctx, "change_diff", { entity_path: "userXtier" }))).toEqual(["userXtier.v2", "userXtier"]);
      expect(paths(await ok(s.ctx, "change_diff", { entity_path: "a%b" }))).toEqual(["a%b.c", "a%b"]);
      expect(paths(await ok(s.ctx, "change_diff", { entity_path: "promo.50%" }))).toEqual(["promo.50%.code", "promo.50%"]);
      for (const wild of ["user%", "users%", "user_", "%", "_", "users_", "a_b", "promo.50_"]) {
        expect((await ok(s.ctx, "change_diff", { entity_path: wild })).items, wild).toEqual([]);
      }
      // A backslash is a path separator spelling: the query is canonicalized like the write was.
      expect(paths(await ok(s.ctx, "change_diff", { entity_path: "dir\\sub" }))).toEqual(["dir/sub.leaf", "dir/sub"]);
      expect((await ok(s.ctx, "change_diff", { entity_path: "dir\\%" })).items).toEqual([]);
    });

    it("is case-insensitive on the prefix half and case-sensitive on the exact half", async () => {
      // USERS is not users (exact half), but users.* are USERS.* (prefix half).
      expect(sorted(paths(await ok(s.ctx, "change_diff", { entity_path: "USERS" })))).toEqual(sorted(["users.email", "users.email.domain", "Users.name"]));
      const miss = await ok(s.ctx, "blame", { entity_path: "Users.email" });
      expect(miss.status).toBe("no_history");
      expect(miss.error).toBe("No history found for 'Users.email'");
      expect((await ok(s.ctx, "blame", { entity_path: "users.email" })).entity_path).toBe("users.email");
      expect((await ok(s.ctx, "blame", { entity_path: "Users.name" })).entity_path).toBe("Users.name");
      expect((await ok(s.ctx, "blame", { entity_path: "users.name" })).status).toBe("no_history");
    });

    it("applies the same semantics to change_history's entity_path", async () => {
      expect(sorted(paths(await ok(s.ctx, "change_history", { entity_path: "users" })))).toEqual(sorted(["users", "users.email", "users.email.domain", "Users.name"]));
      expect(paths(await ok(s.ctx, "change_history", { entity_path: "user_tier" }))).toEqual(["user_tier.v2", "user_tier"]);
      expect((await ok(s.ctx, "change_history", { entity_path: "src/" })).items).toEqual([]);
      expect(paths(await ok(s.ctx, "change_history", { entity_path: " ./src//auth.py " }))).toEqual(["src/auth.py"]);
      // No entity_path: everything.
      expect((await ok(s.ctx, "change_history", { limit: 1000 })).items).toHaveLength(stored.length);
    });
  });

  describe("ordering, limits and cursors", () => {
    it("change_diff is newest first, defaults to 20, and pages through every event exactly once", async () => {
      const s = await setup("r-diff-page");
      const logged: string[] = [];
      for (let i = 0; i < 25; i++) {
        s.clock.advance(MINUTE);
        logged.push((await log(s, { entity_path: `orders.col${i}` })).id);
      }
      await log(s, { entity_path: "ordersX.col" });
      const first = await ok(s.ctx, "change_diff", { entity_path: "orders" });
      expect(first.items).toHaveLength(20);
      expect(typeof first.next_cursor).toBe("string");
      expect(ids(first)).toEqual([...logged].reverse().slice(0, 20));
      const times = first.items.map((e: Structured) => e.timestamp as string);
      expect(times).toEqual([...times].sort().reverse());

      const { items, pages } = await walk(s.ctx, "change_diff", { entity_path: "orders", limit: 7 });
      expect(pages).toBe(4);
      expect(items.map((e) => e.id)).toEqual([...logged].reverse());
      expect(new Set(items.map((e) => e.id)).size).toBe(25);

      const exact = await ok(s.ctx, "change_diff", { entity_path: "orders", limit: 25 });
      expect(exact.items).toHaveLength(25);
      expect(exact).not.toHaveProperty("next_cursor");
    });

    it("caps limit at 1000 and refuses bad limits and cursors", async () => {
      const s = await setup("r-limits");
      await log(s, { entity_path: "a.b" });
      for (const tool of ["change_diff", "change_history", "changeset", "change_search"]) {
        const base = tool === "change_search" ? { query: "a.b" } : tool === "changeset" ? { changeset_id: "x" } : { entity_path: "a.b" };
        for (const limit of [1001, 0, -1, 2.5, "10"]) {
          const err = await fails(s.ctx, tool, { ...base, limit });
          expect(err.code, `${tool} ${limit}`).toBe("invalid_input");
          expect(err.message).toContain("limit");
        }
        expect((await call(s.ctx, tool, { ...base, limit: 1000 })).ok).toBe(true);
        for (const cursor of ["garbage", btoa(JSON.stringify({ s: -1 })), btoa(JSON.stringify({ s: "5" })), btoa("[]"), "x".repeat(201)]) {
          const err = await fails(s.ctx, tool, { ...base, cursor });
          expect(err.code, `${tool} ${cursor}`).toBe("invalid_input");
        }
      }
    });

    it("newest first breaks timestamp ties by append order", async () => {
      const s = await setup("r-ties");
      const a = await ok(s.ctx, "log_change", { entity_path: "tie.x", change_type: "add", reasoning: WHY });
      const b = await ok(s.ctx, "log_change", { entity_path: "tie.x", change_type: "modify", reasoning: WHY });
      const c = await ok(s.ctx, "log_change", { entity_path: "tie.x", change_type: "remove", reasoning: WHY });
      expect(a.timestamp).toBe(c.timestamp);
      expect(ids(await ok(s.ctx, "change_diff", { entity_path: "tie.x" }))).toEqual([c.id, b.id, a.id]);
      expect((await ok(s.ctx, "blame", { entity_path: "tie.x" })).id).toBe(c.id);
    });
  });

  describe("long paths and queries (D1 refuses LIKE patterns over 50 bytes)", () => {
    const deep = "src/components/dashboard/widgets/RevenueChart.tsx::render"; // 57 characters

    it("change_diff, blame, change_history and prior_attempts work on paths far over 50 bytes", async () => {
      const s = await setup("r-long-paths");
      const a = await log(s, { entity_path: deep, change_type: "add" });
      const child = await log(s, { entity_path: `${long}.child_col`, change_type: "add" });
      const parent = await log(s, { entity_path: long, change_type: "modify" });
      await log(s, { entity_path: `${long}X.other`, change_type: "add" });
      await log(s, { entity_path: `${long.toUpperCase()}.shout`, change_type: "add" });
      s.clock.advance(MINUTE);
      const revert = await log(s, { entity_path: deep, change_type: "revert", reasoning: "Reverted: the chart re-rendered on every websocket tick instead" });

      expect(ids(await ok(s.ctx, "change_diff", { entity_path: deep }))).toEqual([revert.id, a.id]);
      expect(sorted(paths(await ok(s.ctx, "change_diff", { entity_path: long })))).toEqual(sorted([long, `${long}.child_col`, `${long.toUpperCase()}.shout`]));
      expect(ids(await ok(s.ctx, "change_diff", { entity_path: `${long}.child_col` }))).toEqual([child.id]);
      expect((await ok(s.ctx, "blame", { entity_path: long })).id).toBe(parent.id);
      expect(await ok(s.ctx, "blame", { entity_path: deep })).toMatchObject({ id: revert.id, status: "reverted" });
      expect(ids(await ok(s.ctx, "change_history", { entity_path: deep }))).toEqual([revert.id, a.id]);

      const prior = await ok(s.ctx, "prior_attempts", { entity_path: deep });
      expect(prior.items).toHaveLength(1);
      expect(prior.items[0]).toMatchObject({ id: a.id, outcome: "reverted", confidence: "exact" });
      const byDescription = await ok(s.ctx, "prior_attempts", { description: "the chart re-rendered on every websocket tick instead" });
      expect(byDescription.items.map((e: Structured) => e.id)).toEqual([a.id]);
    });
  });

  describe("tenant isolation", () => {
    it("tenant B never sees tenant A's events through any read tool", async () => {
      const a = await setup("r-iso-a", "agent");
      const b = await setup("r-iso-b", "agent");
      const added = await log(a, { entity_path: "shared.path", change_type: "add", changeset_id: "cs-shared", project: "proj", reasoning: "Isolation needle: added the shared column" });
      await log(a, { entity_path: "shared.path.child", change_type: "add", changeset_id: "cs-shared", project: "proj" });
      a.clock.advance(MINUTE);
      await log(a, { entity_path: "shared.path", change_type: "revert", changeset_id: "cs-shared", project: "proj", reasoning: "Isolation needle: reverted, went with a view instead" });
      const own = await log(b, { entity_path: "b.only", change_type: "add", reasoning: "Tenant B's own event for contrast" });

      // A sees its own history (so the empty answers below are meaningful).
      expect((await ok(a.ctx, "change_diff", { entity_path: "shared" })).items).toHaveLength(3);
      expect((await ok(a.ctx, "changeset", { changeset_id: "cs-shared" })).items).toHaveLength(3);
      expect((await ok(a.ctx, "change_search", { query: "isolation needle" })).items).toHaveLength(2);
      expect((await ok(a.ctx, "change_search", { query: "is" })).items.length).toBeGreaterThan(0);
      const priorA = await ok(a.ctx, "prior_attempts", { entity_path: "shared.path" });
      expect(priorA.items.map((e: Structured) => e.id)).toContain(added.id);
      expect((await ok(a.ctx, "prior_attempts", { description: "isolation needle" })).items.length).toBeGreaterThan(0);

      // B sees none of it.
      expect((await ok(b.ctx, "change_diff", { entity_path: "shared.path" })).items).toEqual([]);
      expect((await ok(b.ctx, "change_diff", { entity_path: "shared" })).items).toEqual([]);
      const blame = await ok(b.ctx, "blame", { entity_path: "shared.path" });
      expect(blame).toMatchObject({ id: "", status: "no_history", error: "No history found for 'shared.path'" });
      expect(ids(await ok(b.ctx, "change_history", {}))).toEqual([own.id]);
      expect((await ok(b.ctx, "change_history", { entity_path: "shared" })).items).toEqual([]);
      expect((await ok(b.ctx, "change_history", { project: "proj" })).items).toEqual([]);
      expect((await ok(b.ctx, "change_history", { changeset_id: "cs-shared" })).items).toEqual([]);
      expect(await call(b.ctx, "changeset", { changeset_id: "cs-shared" })).toMatchObject({ items: [], error: "No events found for changeset 'cs-shared'" });
      expect((await ok(b.ctx, "change_search", { query: "isolation needle" })).items).toEqual([]);
      expect((await ok(b.ctx, "change_search", { query: "is" })).items).toEqual([]);
      expect((await ok(b.ctx, "change_search", { query: "shared" })).items).toEqual([]);
      expect((await ok(b.ctx, "prior_attempts", { entity_path: "shared.path", min_confidence: "proximity_low" })).items).toEqual([]);
      expect((await ok(b.ctx, "prior_attempts", { description: "isolation needle", min_confidence: "proximity_low" })).items).toEqual([]);

      // A cursor minted for A's data does not open A's rows for B either.
      const pageA = await ok(a.ctx, "change_diff", { entity_path: "shared", limit: 1 });
      expect(pageA.next_cursor).toBeDefined();
      expect((await ok(b.ctx, "change_diff", { entity_path: "shared", cursor: pageA.next_cursor })).items).toEqual([]);
    });
  });
});

describe("blame", () => {
  it("returns the most recent event on the exact path with its decision status", async () => {
    const s = await setup("r-blame");
    const add = await log(s, { entity_path: "users.email", change_type: "add", diff: "+email" });
    expect(await ok(s.ctx, "blame", { entity_path: "users.email" })).toMatchObject({
      id: add.id,
      change_type: "add",
      diff: "+email",
      status: "active",
      error: "",
      agent: "reader-agent",
      isError: false,
    });
    await log(s, { entity_path: "users.email.domain", change_type: "add" }); // a child does not count
    expect((await ok(s.ctx, "blame", { entity_path: "users.email" })).id).toBe(add.id);
    const removed = await log(s, { entity_path: "users.email", change_type: "remove" });
    expect(await ok(s.ctx, "blame", { entity_path: "users.email" })).toMatchObject({ id: removed.id, status: "reverted" });
    const reverted = await log(s, { entity_path: "users.email", change_type: "revert" });
    expect(await ok(s.ctx, "blame", { entity_path: "users.email" })).toMatchObject({ id: reverted.id, status: "reverted" });
    const sup = await log(s, { entity_path: "users.email", change_type: "supersede" });
    expect(await ok(s.ctx, "blame", { entity_path: "users.email" })).toMatchObject({ id: sup.id, status: "reopened", supersedes: reverted.id });
    await log(s, { entity_path: "users.email", change_type: "modify" });
    expect((await ok(s.ctx, "blame", { entity_path: "./users.email " })).status).toBe("active");
    // Parent blame is exact: the parent has no events of its own.
    expect((await ok(s.ctx, "blame", { entity_path: "users" })).status).toBe("no_history");
  });

  it("on a miss answers ok with every field empty and the no-history message", async () => {
    const s = await setup("r-blame-miss");
    const r = await call(s.ctx, "blame", { entity_path: "./nothing//here" });
    expect(r).toEqual({
      ok: true,
      isError: false,
      id: "",
      timestamp: "",
      entity_path: "",
      entity_type: "",
      change_type: "",
      diff: "",
      reasoning: "",
      agent: "",
      actor: "",
      session_id: "",
      git_commit: "",
      project: "",
      changeset_id: "",
      metadata: {},
      revisit_after: "",
      expires_when: "",
      stale_when: "",
      supersedes: "",
      constraint: "",
      superseded_by: "",
      status: "no_history",
      error: "No history found for 'nothing/here'",
    });
  });

  it("refuses a missing or blank entity_path", async () => {
    const s = await setup("r-blame-bad");
    expect((await fails(s.ctx, "blame", {})).code).toBe("invalid_input");
    expect((await fails(s.ctx, "blame", { entity_path: "" })).code).toBe("invalid_input");
    expect((await fails(s.ctx, "blame", { entity_path: "   " })).code).toBe("invalid_entity_path");
    expect((await fails(s.ctx, "blame", { entity_path: "a", limit: 1 })).code).toBe("invalid_input");
  });
});

describe("change_history", () => {
  it("filters by since: 15m / 24h / 7d / 5mo / 1y (m = minutes, mo = months) and ISO", async () => {
    const s = await setup("r-since");
    const now = Date.parse("2026-06-01T12:00:00.000Z");
    const at = (ms: number) => new Date(now - ms).toISOString();
    const placed: Array<[string, number]> = [
      ["ago.400d", 400 * DAY],
      ["ago.200d", 200 * DAY],
      ["ago.10d", 10 * DAY],
      ["ago.2d", 2 * DAY],
      ["ago.2h", 2 * HOUR],
      ["ago.4m", 4 * MINUTE],
    ];
    for (const [entity_path, ago] of placed) {
      s.clock.set(at(ago));
      await ok(s.ctx, "log_change", { entity_path, change_type: "modify", reasoning: WHY });
    }
    s.clock.set(at(0));
    const since = async (value: string) => paths(await ok(s.ctx, "change_history", { since: value }));
    expect(await since("15m")).toEqual(["ago.4m"]);
    expect(await since("5m")).toEqual(["ago.4m"]);
    expect(await since("3m")).toEqual([]);
    expect(await since("24h")).toEqual(["ago.4m", "ago.2h"]);
    expect(await since("7d")).toEqual(["ago.4m", "ago.2h", "ago.2d"]);
    expect(await since("5mo")).toEqual(["ago.4m", "ago.2h", "ago.2d", "ago.10d"]);
    expect(await since("1y")).toEqual(["ago.4m", "ago.2h", "ago.2d", "ago.10d", "ago.200d"]);
    expect(await since("7D")).toEqual(await since("7d"));
    expect(await since("")).toHaveLength(6);
    expect(await since(at(2 * DAY))).toEqual(["ago.4m", "ago.2h", "ago.2d"]); // inclusive
    expect(await since("2026-05-25")).toEqual(["ago.4m", "ago.2h", "ago.2d"]);
    expect(await since("2026-06-01T11:30:00+02:00")).toEqual(["ago.4m", "ago.2h"]);
    // The window moves with the clock.
    s.clock.advance(20 * MINUTE);
    expect(await since("15m")).toEqual([]);
  });

  it("refuses an unparseable since with invalid_since and the seed's message", async () => {
    const s = await setup("r-since-bad");
    for (const bad of ["yesterday", "7", "7x", "2026-02-30", "m15"]) {
      const err = await fails(s.ctx, "change_history", { since: bad });
      expect(err.code).toBe("invalid_since");
      expect(err.message).toBe(`could not parse '${bad}' as a relative time (e.g. '7d', '24h', '15m', '5mo', '1y') or ISO 8601 timestamp`);
      expect(err.hint).toContain("15m");
    }
  });

  it("filters project and changeset_id exactly, combined with the others", async () => {
    const s = await setup("r-hist-filters");
    await log(s, { entity_path: "p.a", project: "billing", changeset_id: "cs-1" });
    await log(s, { entity_path: "p.b", project: "billing-v2", changeset_id: "cs-1" });
    await log(s, { entity_path: "p.c", project: "Billing", changeset_id: "cs-10" });
    await log(s, { entity_path: "q.a", project: "billing", changeset_id: "cs-2" });
    await log(s, { entity_path: "p.d", project: "bill_ng", changeset_id: "cs_1" });
    expect(paths(await ok(s.ctx, "change_history", { project: "billing" }))).toEqual(["q.a", "p.a"]);
    expect(paths(await ok(s.ctx, "change_history", { project: "bill%" }))).toEqual([]);
    expect(paths(await ok(s.ctx, "change_history", { changeset_id: "cs-1" }))).toEqual(["p.b", "p.a"]);
    expect(paths(await ok(s.ctx, "change_history", { changeset_id: "cs_1" }))).toEqual(["p.d"]);
    expect(paths(await ok(s.ctx, "change_history", { project: "billing", changeset_id: "cs-1" }))).toEqual(["p.a"]);
    expect(paths(await ok(s.ctx, "change_history", { project: "billing", entity_path: "q" }))).toEqual(["q.a"]);
    expect((await ok(s.ctx, "change_history", { project: "nope" })).items).toEqual([]);
  });

  it("change_history defaults to 50 and pages without duplicates", async () => {
    const s = await setup("r-hist-page");
    const base = Date.parse("2026-05-01T00:00:00.000Z");
    const bulk = await insertEvents(
      s.id.tenantId,
      Array.from({ length: 55 }, (_, i) => ({ entity_path: `t.c${i}`, timestamp: new Date(base + i * MINUTE).toISOString() })),
    );
    const first = await ok(s.ctx, "change_history", {});
    expect(first.items).toHaveLength(50);
    expect(ids(first)).toEqual([...bulk].reverse().slice(0, 50));
    const second = await ok(s.ctx, "change_history", { cursor: first.next_cursor });
    expect(ids(second)).toEqual([...bulk].reverse().slice(50));
    expect(second).not.toHaveProperty("next_cursor");
    const { items } = await walk(s.ctx, "change_history", { limit: 10 });
    expect(items.map((e) => e.id)).toEqual([...bulk].reverse());
  });
});

describe("changeset", () => {
  it("returns a changeset's events oldest first, exact slug only", async () => {
    const s = await setup("r-changeset");
    const logged: string[] = [];
    for (let i = 0; i < 5; i++) {
      s.clock.advance(MINUTE);
      logged.push((await log(s, { entity_path: `feature.step${i}`, changeset_id: "feat-login" })).id);
      await log(s, { entity_path: `other.step${i}`, changeset_id: i % 2 ? "feat-login-2" : "feat_login" });
    }
    const r = await call(s.ctx, "changeset", { changeset_id: "feat-login" });
    expect(r).toMatchObject({ ok: true, isError: false, error: "" });
    expect(ids(r)).toEqual(logged);
    const times = r.items.map((e: Structured) => e.timestamp as string);
    expect(times).toEqual([...times].sort());
    const { items, pages } = await walk(s.ctx, "changeset", { changeset_id: "feat-login", limit: 2 });
    expect(pages).toBe(3);
    expect(items.map((e) => e.id)).toEqual(logged);
    expect((await ok(s.ctx, "changeset", { changeset_id: "feat-login", limit: 5 })).next_cursor).toBeUndefined();
  });

  it("answers an unknown slug with ok, no items and the no-events message", async () => {
    const s = await setup("r-changeset-miss");
    await log(s, { entity_path: "x.y", changeset_id: "real" });
    const r = await call(s.ctx, "changeset", { changeset_id: "ghost" });
    expect(r).toEqual({ ok: true, isError: false, items: [], error: "No events found for changeset 'ghost'" });
    expect((await fails(s.ctx, "changeset", {})).code).toBe("invalid_input");
    expect((await fails(s.ctx, "changeset", { changeset_id: "  " })).code).toBe("invalid_changeset_id");
  });
});

describe("change_search", () => {
  let s: Setup;
  let other: Setup;
  beforeAll(async () => {
    s = await setup("r-search", "search-bot");
    other = await setup("r-search", "zeta-agent");
    await log(s, { entity_path: "auth.password_hash", reasoning: "Switched Password hashing to argon2id for OWASP guidance", diff: "- bcrypt\n+ argon2id" });
    await log(s, { entity_path: "pricing.discount", reasoning: "Discount capped at 50% per finance review of margins", diff: "+ max: 50%" });
    await log(s, { entity_path: "pricing.limit", reasoning: "Raised request cap to 500 per minute for big tenants", diff: "+ limit: 500" });
    await log(s, { entity_path: "flags.user_tier", reasoning: "Tiering flag keyed on underscore name for analytics", diff: "tier" });
    await log(s, { entity_path: "flags.userXtier", reasoning: "Legacy tier flag kept around for old mobile clients", diff: "x" });
    await log(s, { entity_path: "win.paths", reasoning: "Normalized C:\\temp paths on windows builders ok", diff: "C:\\temp" });
    await log(s, { entity_path: "quotes.msg", reasoning: 'Greeting now says "hi" AND waves NEAR( the door *', diff: "" });
    await log(s, { entity_path: "db.index_x", change_type: "migrate", reasoning: "Moved the lookup onto the composite key path", diff: "" });
    await log(other, { entity_path: "unrelated.thing", reasoning: "Something else entirely for the team" });
  });

  const search = async (query: string, extra: Record<string, unknown> = {}) => paths(await ok(s.ctx, "change_search", { query, ...extra }));

  it("matches a case-insensitive substring of entity_path, diff, reasoning or agent, newest first", async () => {
    expect(await search("PASSWORD")).toEqual(["auth.password_hash"]); // path and reasoning, one row
    expect(await search("argon2ID")).toEqual(["auth.password_hash"]);
    expect(await search("bcrypt")).toEqual(["auth.password_hash"]); // diff only
    expect(await search("OWASP")).toEqual(["auth.password_hash"]); // reasoning only
    expect(await search("pricing.")).toEqual(["pricing.limit", "pricing.discount"]); // newest first
    expect(await search("zeta-ag")).toEqual(["unrelated.thing"]); // agent only
    expect(await search("search-bot")).toHaveLength(8);
    expect(await search("nothing matches this")).toEqual([]);
  });

  it("works for 1- and 2-character queries (the non-trigram path) too", async () => {
    expect(await search("%")).toEqual(["pricing.discount"]);
    expect(await search("5%")).toEqual([]); // "50%" contains "0%", not "5%"
    expect(await search("0%")).toEqual(["pricing.discount"]);
    expect(await search("\\")).toEqual(["win.paths"]);
    expect(await search("*")).toEqual(["quotes.msg"]);
    expect(await search('"')).toEqual(["quotes.msg"]);
    expect(await search("Xt")).toEqual(["flags.userXtier"]);
    expect(await search("xT")).toEqual(["flags.userXtier"]);
    expect((await search("_")).sort()).toEqual(["auth.password_hash", "db.index_x", "flags.user_tier"]);
    expect(await search("zq")).toEqual([]);
  });

  it("matches %, _ and \\ literally in 3+ character queries", async () => {
    expect(await search("50%")).toEqual(["pricing.discount"]);
    expect(await search("500")).toEqual(["pricing.limit"]);
    expect(await search("user_tier")).toEqual(["flags.user_tier"]);
    expect(await search("userXtier")).toEqual(["flags.userXtier"]);
    expect(await search("r_t")).toEqual(["flags.user_tier"]);
    expect(await search("C:\\temp")).toEqual(["win.paths"]);
    expect(await search("C:%temp")).toEqual([]);
    expect(await search("a%d")).toEqual([]);
  });

  it("treats quotes and FTS syntax as plain text", async () => {
    for (const q of ['"', '""', '"hi"', "*", "AND", "NEAR(", "NEAR(the", "a OR b", "entity_path:auth", "^abc", "-x -y", "(((", "'; --", '"unterminated']) {
      const r = await call(s.ctx, "change_search", { query: q });
      expect(r.ok, q).toBe(true);
    }
    expect(await search('"hi"')).toEqual(["quotes.msg"]);
    expect(await search("NEAR(")).toEqual(["quotes.msg"]);
    expect(await search(" AND ")).toEqual(["quotes.msg"]);
    expect(await search("door *")).toEqual(["quotes.msg"]);
    expect(await search("a OR b")).toEqual([]);
  });

  it("handles unicode, emoji and a maximum-length query", async () => {
    const u = await setup("r-search-unicode");
    await log(u, { entity_path: "i18n.greeting", reasoning: "Greeting now 🚀🚀🚀 says こんにちは to Ünïcödé users" });
    await log(u, { entity_path: "i18n.other", reasoning: "Plain ascii reasoning for contrast only" });
    const q = async (query: string) => paths(await ok(u.ctx, "change_search", { query }));
    expect(await q("🚀")).toEqual(["i18n.greeting"]);
    expect(await q("🚀🚀🚀")).toEqual(["i18n.greeting"]);
    expect(await q("こんにちは")).toEqual(["i18n.greeting"]);
    expect(await q("Ünïcödé")).toEqual(["i18n.greeting"]);
    expect(await q("ï")).toEqual(["i18n.greeting"]); // 1 char: the non-trigram path
    expect(await q("🚀x")).toEqual([]);
    for (const long of ["a".repeat(4096), "%".repeat(4096), "😀".repeat(2048)]) {
      expect((await ok(u.ctx, "change_search", { query: long })).items).toEqual([]);
    }
    expect((await fails(u.ctx, "change_search", { query: "a".repeat(4097) })).code).toBe("invalid_input");
  });

  it("does not match change_type alone", async () => {
    expect(await search("migrate")).toEqual([]);
    expect(await search("modify")).toEqual([]);
  });

  it("refuses an empty or blank query", async () => {
    expect((await fails(s.ctx, "change_search", { query: "" })).code).toBe("invalid_input");
    expect((await fails(s.ctx, "change_search", { query: "   " })).code).toBe("invalid_query");
    expect((await fails(s.ctx, "change_search", {})).code).toBe("invalid_input");
  });

  it("pages through more matches than one FTS batch, every match once, past other tenants' matches", async () => {
    const mine = await setup("r-search-bulk");
    const theirs = await setup("r-search-bulk-other");
    const base = Date.parse("2026-01-01T00:00:00.000Z");
    const t = (i: number) => new Date(base + i * MINUTE).toISOString();
    // Older: 260 of mine that match, with non-matching ones mixed in.
    const rows: Array<{ entity_path: string; timestamp: string; reasoning: string }> = [];
    for (let i = 0; i < 260; i++) {
      rows.push({ entity_path: `bulk.e${i}`, timestamp: t(i), reasoning: `Bulk Needle-Q event ${i}` });
      if (i % 10 === 0) rows.push({ entity_path: `bulk.n${i}`, timestamp: t(i), reasoning: "no match here" });
    }
    const inserted = await insertEvents(mine.id.tenantId, rows);
    const matching = inserted.filter((_, i) => rows[i]!.entity_path.startsWith("bulk.e"));
    expect(matching).toHaveLength(260);
    // Newer: 450 matches in another tenant, which the FTS index returns first.
    await insertEvents(
      theirs.id.tenantId,
      Array.from({ length: 450 }, (_, i) => ({ entity_path: `their.e${i}`, timestamp: t(300 + i), diff: "needle-q elsewhere" })),
    );
    const newestFirst = [...matching].reverse();

    const all = await ok(mine.ctx, "change_search", { query: "needle-q", limit: 1000, fields: ["entity_path"] });
    expect(ids(all)).toEqual(newestFirst);
    expect(all).not.toHaveProperty("next_cursor");

    const { items, pages } = await walk(mine.ctx, "change_search", { query: "NEEDLE-Q", limit: 45 });
    expect(pages).toBe(Math.ceil(260 / 45));
    expect(items.map((e) => e.id)).toEqual(newestFirst);
    expect(new Set(items.map((e) => e.id)).size).toBe(260);

    // The short-query path pages the same way.
    const short = await walk(mine.ctx, "change_search", { query: "q ", limit: 100 });
    expect(short.items.map((e) => e.id)).toEqual(newestFirst);

    const page1 = await ok(mine.ctx, "change_search", { query: "needle-q" });
    expect(page1.items).toHaveLength(20);
    expect(ids(page1)).toEqual(newestFirst.slice(0, 20));
    expect((await ok(theirs.ctx, "change_search", { query: "needle-q", limit: 1000, fields: ["id"] })).items).toHaveLength(450);
  });

  it("change_search finds a match for a query far over 50 bytes, on both paths of the search", async () => {
    const s = await setup("r-long-query");
    const phrase = "Moved the 50%_discount\\rules into pricing/rules.ts so both checkout flows share them";
    await log(s, { entity_path: "pricing.rules", reasoning: `Context first. ${phrase}. Then more.` });
    await log(s, { entity_path: "pricing.other", reasoning: "Moved the 50%Xdiscount rules elsewhere, unrelated to the above" });
    expect(paths(await ok(s.ctx, "change_search", { query: phrase.toUpperCase() }))).toEqual(["pricing.rules"]);
    expect(paths(await ok(s.ctx, "change_search", { query: phrase.replace("%_", "%X") }))).toEqual([]);
  });

  describe("change_search query plan", () => {
    it("walks the FTS index as the outer loop, so a page does not scan the tenant's events", async () => {
      const { FTS_BATCH_SQL } = await import("../../src/changes/substring-walk");
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${FTS_BATCH_SQL}`).bind("abc", '"abc"', Number.MAX_SAFE_INTEGER, 200, "tenant").all<{ id: number; parent: number; detail: string }>();
      const details = plan.results.map((r) => r.detail);
      const fts = details.findIndex((d) => d.includes("events_fts"));
      const events = details.findIndex((d) => /SEARCH e USING INTEGER PRIMARY KEY/.test(d));
      expect(fts, details.join(" | ")).toBeGreaterThanOrEqual(0);
      expect(events, details.join(" | ")).toBeGreaterThan(fts);
      expect(
        details.some((d) => /SEARCH e USING (COVERING )?INDEX events_tenant/.test(d)),
        details.join(" | "),
      ).toBe(false);
    });
  });
});

describe("stale_decisions", () => {
  it("stale_decisions sees a query on a dotted descendant of a long decision path", async () => {
    const s = await setup("r-long-stale");
    const decision = await log(s, { entity_path: long, entity_type: "table", change_type: "modify", revisit_after: "1d" });
    s.clock.advance(2 * DAY);
    expect((await ok(s.ctx, "stale_decisions", {})).items).toEqual([]); // pure age never surfaces
    await ok(s.ctx, "blame", { entity_path: `${long}.child_col` });
    const stale = await ok(s.ctx, "stale_decisions", {});
    expect(stale.items.map((e: Structured) => e.id)).toEqual([decision.id]);
    expect(stale.items[0]).toMatchObject({ flag: "revisit_due", active_use_signals: ["queried"] });
  });
});
