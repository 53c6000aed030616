/**
 * The tamper-evident log (seed 000, `selvedge verify`): a per-tenant hash chain over change events
 * and decisions, checked by change_verify and by the nightly sweep.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { appendChained, CHAINED_COLUMNS, chainLegacyRows, TURN_WAIT_MS } from "../../src/changes/chain";
import { coalescingReads } from "../../src/db/coalesce";
import { CHAIN_SWEEP_JOB, sweepChains } from "../../src/cron/chain-sweep";
import { count, newWorld, ok, type Structured, type World } from "../support/helpers";

const T0 = "2030-02-01T00:00:00.000Z";

async function logSome(w: World, n: number, prefix = "svc.flag"): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push((await ok(w.ctx, "log_change", { entity_path: `${prefix}${i}`, change_type: "add", reasoning: `Flag ${i} gates the rollout of feature ${i}` })).id as string);
  }
  return ids;
}

const verify = (w: World, args: Record<string, unknown> = {}) => ok(w.ctx, "change_verify", args);

// First in the file: the sweep walks every tenant, and the tests below leave broken chains behind.
describe("the nightly chain sweep", () => {
  it("verifies every tenant within a bounded budget, resumes from its cursor, and fails loudly on a break", async () => {
    const a = await newWorld("chain-sweep-a", { start: T0 });
    const b = await newWorld("chain-sweep-b", { start: T0 });
    await logSome(a, 3);
    const bIds = await logSome(b, 3);
    const limits = { entries: 2, legacy: 10, tenants: 1000 };
    // A tiny budget: several runs, each resuming where the last stopped, until all tenants are swept.
    const details: string[] = [];
    for (let i = 0; i < 50; i++) {
      const detail = await sweepChains(env.DB, new Date(T0), limits);
      details.push(detail);
      if (detail.endsWith("all tenants swept")) break;
    }
    expect(details.length).toBeGreaterThan(1);
    expect(details.at(-1)).toMatch(/all tenants swept$/);
    expect(await env.DB.prepare(`SELECT cursor FROM cron_cursors WHERE job = ?`).bind(CHAIN_SWEEP_JOB).first()).toEqual({ cursor: "" });

    await env.DB.prepare(`UPDATE events SET reasoning = 'tampered' WHERE id = ?`).bind(bIds[0]).run();
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await expect(sweepChains(env.DB, new Date(T0))).rejects.toThrow(new RegExp(`BROKEN.*${b.id.tenantId} \\(edited event ${bIds[0]}\\)`));
      expect(error.mock.calls.map((c) => String(c[0]))).toContainEqual(expect.stringContaining(`BROKEN tenant ${b.id.tenantId}`));
    } finally {
      error.mockRestore();
    }
    expect(await count(`SELECT COUNT(*) AS n FROM ledger_chain WHERE tenant_id = ?`, a.id.tenantId)).toBe(3);
  });
});

describe("change_verify", () => {
  it("finds an untouched chain intact, over events, renames and decisions", async () => {
    const w = await newWorld("chain-ok", { start: T0 });
    await logSome(w, 3);
    await ok(w.ctx, "log_change", { entity_path: "src/new.ts", rename_from: "src/old.ts", change_type: "rename", reasoning: "Clearer module name for the billing code" });
    await ok(w.ctx, "decision_log", { title: "Queue", choice: "Cloudflare Queues", rationale: "Runs under wrangler dev" });
    const r = await verify(w);
    expect(r).toMatchObject({ intact: true, checked: 6, position: 6, first_break: null, unchained_legacy: 0 });
    expect(r.next_cursor).toBeUndefined();
    // One chain per tenant: another tenant's chain starts at 1 and does not see this one.
    const other = await newWorld("chain-ok-other", { start: T0 });
    await logSome(other, 1);
    expect(await verify(other)).toMatchObject({ intact: true, checked: 1, position: 1 });
  });

  it("names the row whose reasoning was edited with raw SQL", async () => {
    const w = await newWorld("chain-edit", { start: T0 });
    const ids = await logSome(w, 4);
    await env.DB.prepare(`UPDATE events SET reasoning = 'nothing to see here' WHERE id = ?`).bind(ids[2]).run();
    const r = await verify(w);
    expect(r.intact).toBe(false);
    expect(r.first_break).toMatchObject({ position: 3, kind: "event", row_id: ids[2], reason: "edited" });
    expect(r.first_break.message).toContain(ids[2]);
  });

  it("names a deleted row, and a row inserted around the ledger", async () => {
    const w = await newWorld("chain-delete", { start: T0 });
    const ids = await logSome(w, 3);
    await env.DB.prepare(`DELETE FROM events WHERE id = ?`).bind(ids[1]).run();
    expect((await verify(w)).first_break).toMatchObject({ position: 2, kind: "event", row_id: ids[1], reason: "deleted" });

    const v = await newWorld("chain-stray", { start: T0 });
    await logSome(v, 2);
    await env.DB.prepare(`INSERT INTO events (id, tenant_id, timestamp, entity_path, change_type) VALUES ('forged-1', ?, ?, 'svc.x', 'add')`).bind(v.id.tenantId, T0).run();
    expect((await verify(v)).first_break).toMatchObject({ position: null, kind: "event", row_id: "forged-1", reason: "unchained" });
  });

  it("notices a deleted or rewritten chain entry", async () => {
    const w = await newWorld("chain-entry", { start: T0 });
    const ids = await logSome(w, 4);
    await env.DB.prepare(`DELETE FROM ledger_chain WHERE tenant_id = ? AND pos = 2`).bind(w.id.tenantId).run();
    expect((await verify(w)).first_break).toMatchObject({ position: 3, row_id: ids[2], reason: "link_broken" });

    const v = await newWorld("chain-entry-hash", { start: T0 });
    const vids = await logSome(v, 3);
    // A rewritten entry no longer matches its row.
    await env.DB.prepare(`UPDATE ledger_chain SET hash = ? WHERE tenant_id = ? AND pos = 2`).bind("0".repeat(64), v.id.tenantId).run();
    expect((await verify(v)).first_break).toMatchObject({ position: 2, row_id: vids[1], reason: "edited" });
  });

  it("stays one unforked chain under concurrent writers", async () => {
    const w = await newWorld("chain-race", { start: T0 });
    const bob = await w.other("bob");
    const writes = Array.from({ length: 12 }, (_, i) =>
      i % 3 === 2
        ? ok(bob.ctx, "decision_log", { title: `Choice ${i}`, choice: `Option ${i}` })
        : ok(i % 2 ? bob.ctx : w.ctx, "log_change", { entity_path: `race.c${i}`, change_type: "add", reasoning: `Concurrent write number ${i} of the race` }),
    );
    await Promise.all(writes);
    const positions = await env.DB.prepare(`SELECT pos FROM ledger_chain WHERE tenant_id = ? ORDER BY pos`).bind(w.id.tenantId).all<{ pos: number }>();
    expect(positions.results.map((r) => r.pos)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(await verify(w)).toMatchObject({ intact: true, checked: 12 });
  });

  it("appends after the real head when the one this isolate remembers was taken by another writer, or went back", async () => {
    const w = await newWorld("chain-remembered", { start: T0 });
    await logSome(w, 2);
    const chain = async () => (await env.DB.prepare(`SELECT pos, row_id FROM ledger_chain WHERE tenant_id = ? ORDER BY pos`).bind(w.id.tenantId).all<{ pos: number; row_id: string }>()).results;
    // Another isolate appended position 3: this one's remembered head (2) is stale, and its append is refused, re-read and retried.
    await env.DB.prepare(`INSERT INTO ledger_chain (tenant_id, pos, kind, row_id, hash, created_at) VALUES (?, 3, 'event', 'elsewhere', ?, ?)`).bind(w.id.tenantId, "f".repeat(64), T0).run();
    const [third] = await logSome(w, 1, "after.other");
    expect((await chain()).map((r) => [r.pos, r.row_id]).slice(2)).toEqual([
      [3, "elsewhere"],
      [4, third],
    ]);
    // The head went back (a restored database): the remembered head is gone, so the append builds on the one there is, leaving no gap.
    await env.DB.prepare(`DELETE FROM ledger_chain WHERE tenant_id = ? AND pos >= 3`).bind(w.id.tenantId).run();
    const [after] = await logSome(w, 1, "after.restore");
    expect((await chain()).map((r) => r.pos)).toEqual([1, 2, 3]);
    expect((await chain())[2]!.row_id).toBe(after);
  });

  describe("group commit", () => {
    /** The test database, with its batches counted and, while `hold` is set, held until released. */
    function watched() {
      const sizes: number[] = [];
      let release: (() => void) | undefined;
      const d1 = Object.create(env.DB) as D1Database;
      d1.batch = async (statements: D1PreparedStatement[]) => {
        sizes.push(statements.length);
        if (release === undefined) return env.DB.batch(statements);
        const held = new Promise<void>((r) => (release = r));
        await held;
        return env.DB.batch(statements);
      };
      return {
        d1,
        sizes,
        hold: () => void (release = () => {}),
        free: () => {
          const r = release;
          release = undefined;
          r?.();
        },
      };
    }
    // A whole event row, as the chain's entry covers it, and the insert that stores exactly that row.
    const rowOf = (id: string) =>
      Object.fromEntries(CHAINED_COLUMNS.event.map((c) => [c, ({ id, timestamp: T0, entity_path: "grouped.path", change_type: "add" } as Record<string, string>)[c] ?? ""]));
    const eventRow = (tenantId: string, id: string) => {
      const row = rowOf(id);
      const columns = Object.keys(row).map((c) => `"${c}"`);
      return env.DB.prepare(`INSERT INTO events (tenant_id, git_commit, ${columns.join(", ")}) VALUES (?, '', ${columns.map(() => "?").join(", ")}) RETURNING id`).bind(
        tenantId,
        ...Object.values(row),
      );
    };
    const link = (id: string) => ({ kind: "event" as const, row: rowOf(id) });
    // What a request's waitUntil would keep alive: nothing to do in a test, which outlives it.
    const keep = (drain: Promise<void>) => void drain;
    /** The tenant's chain entries' rows, in chain order. */
    const chainRows = async (tenantId: string) =>
      (await env.DB.prepare(`SELECT row_id FROM ledger_chain WHERE tenant_id = ? ORDER BY pos`).bind(tenantId).all<{ row_id: string }>()).results.map((r) => r.row_id);
    /** A fresh tenant whose first append's batch is held in flight (until `db.free()`). */
    async function heldFirst(slug: string, id: string, keepAlive: (drain: Promise<void>) => void = keep) {
      const w = await newWorld(slug, { start: T0 });
      const t = w.id.tenantId;
      const db = watched();
      db.hold();
      const first = appendChained(db.d1, t, T0, [eventRow(t, id)], [link(id)], keepAlive);
      await vi.waitFor(() => expect(db.sizes).toHaveLength(1));
      return { w, t, db, first };
    }

    it("groups appends that came through different requests' bindings over the same database", async () => {
      const { t, db, first } = await heldFirst("chain-group-requests", "r-1");
      // Each request wraps the binding its own way (src/db/coalesce.ts); the database is one.
      const rest = ["r-2", "r-3"].map((id) => appendChained(coalescingReads(db.d1), t, T0, [eventRow(t, id)], [link(id)], keep));
      db.free();
      await Promise.all([first, ...rest]);
      expect(db.sizes).toEqual([3, 1 + 2 * 2]);
      expect(await chainRows(t)).toEqual(["r-1", "r-2", "r-3"]);
    });

    it("writes the appends that arrive while a batch is in flight together, in arrival order, each with its own results", async () => {
      const drains: Promise<void>[] = [];
      const { w, t, db, first } = await heldFirst("chain-group", "g-1", (d) => drains.push(d));
      // Three more arrive while the first batch is held in flight.
      const rest = ["g-2", "g-3", "g-4"].map((id) => appendChained(db.d1, t, T0, [eventRow(t, id)], [link(id)], (d) => drains.push(d)));
      db.free();
      const results = await Promise.all([first, ...rest]);
      // Each request is asked to keep the queue going while it may lead it; none is left hanging.
      expect(drains).toHaveLength(4);
      await Promise.all(drains);
      // The guard and one write and one entry each: the first alone, the other three in one batch.
      expect(db.sizes).toEqual([3, 1 + 3 * 2]);
      expect(results.map((r) => r.map((x) => x.results))).toEqual([[[{ id: "g-1" }]], [[{ id: "g-2" }]], [[{ id: "g-3" }]], [[{ id: "g-4" }]]]);
      expect(await chainRows(t)).toEqual(["g-1", "g-2", "g-3", "g-4"]);
      expect(await verify(w)).toMatchObject({ intact: true, checked: 4 });
    });

    it("lets only the append whose own statement fails fail, and writes the rest of its group", async () => {
      const { w, t, db, first } = await heldFirst("chain-group-fail", "f-1");
      const good = appendChained(db.d1, t, T0, [eventRow(t, "f-2")], [link("f-2")], keep);
      // Its event id is taken by the first append: its insert fails, and with it the group's batch.
      const bad = appendChained(db.d1, t, T0, [eventRow(t, "f-1")], [link("f-1")], keep);
      const last = appendChained(db.d1, t, T0, [eventRow(t, "f-3")], [link("f-3")], keep);
      db.free();
      await first;
      await expect(bad).rejects.toThrow(/UNIQUE constraint failed: events\.id/);
      await Promise.all([good, last]);
      expect(await chainRows(t)).toEqual(["f-1", "f-2", "f-3"]);
      expect(await verify(w)).toMatchObject({ intact: true, checked: 3 });
    });

    it("commits an append whose caller cannot keep a drain alive on its own, beside the queue", async () => {
      const { w, t, db, first: queued } = await heldFirst("chain-group-alone", "a-1");
      // Not queued behind the held batch: it lands first, and the held batch then finds the head moved and builds on it.
      await appendChained(env.DB, t, T0, [eventRow(t, "a-2")], [link("a-2")]);
      db.free();
      await queued;
      expect(await chainRows(t)).toEqual(["a-2", "a-1"]);
      expect(await verify(w)).toMatchObject({ intact: true, checked: 2 });
    });

    it("lets the appends behind a batch that never answers go ahead after TURN_WAIT_MS", async () => {
      const w = await newWorld("chain-group-stuck", { start: T0 });
      const t = w.id.tenantId;
      const stuck = Object.create(env.DB) as D1Database;
      stuck.batch = () => new Promise<never>(() => {});
      void appendChained(stuck, t, T0, [eventRow(t, "s-1")], [link("s-1")], keep);
      const started = Date.now();
      await appendChained(env.DB, t, T0, [eventRow(t, "s-2")], [link("s-2")], keep);
      expect(Date.now() - started).toBeGreaterThanOrEqual(TURN_WAIT_MS - 50);
      expect(await verify(w)).toMatchObject({ intact: true, checked: 1 });
    });
  });

  it("pages with a cursor and reports a break on a later page", async () => {
    const w = await newWorld("chain-page", { start: T0 });
    const ids = await logSome(w, 5);
    await env.DB.prepare(`UPDATE events SET diff = 'x' WHERE id = ?`).bind(ids[4]).run();
    const first = await verify(w, { limit: 2 });
    expect(first).toMatchObject({ intact: true, checked: 2, position: 2 });
    const second = await verify(w, { limit: 2, cursor: first.next_cursor });
    expect(second).toMatchObject({ intact: true, checked: 2, position: 4 });
    const third = await verify(w, { limit: 2, cursor: second.next_cursor });
    expect(third.first_break).toMatchObject({ position: 5, row_id: ids[4], reason: "edited" });
  });

  it("keeps git_commit back-fill and decision status changes outside the chain", async () => {
    const w = await newWorld("chain-mutable", { start: T0 });
    const [id] = await logSome(w, 1);
    const d = (await ok(w.ctx, "decision_log", { title: "Store", choice: "D1", status: "proposed" })).decision as Structured;
    await env.DB.prepare(`UPDATE events SET git_commit = 'abc1234' WHERE id = ?`).bind(id).run();
    await ok(w.ctx, "decision_set_status", { decision_id: d.id, status: "accepted" });
    expect(await verify(w)).toMatchObject({ intact: true, checked: 2 });
  });

  describe("rows from before the chain", () => {
    it("are counted, then chained oldest first by the sweep", async () => {
      const w = await newWorld("chain-legacy", { start: T0 });
      for (const i of [1, 2]) {
        await env.DB.prepare(`INSERT INTO events (id, tenant_id, timestamp, entity_path, change_type, reasoning) VALUES (?, ?, ?, 'old.path', 'add', 'from before')`)
          .bind(`legacy-${w.slug}-${i}`, w.id.tenantId, T0)
          .run();
      }
      const start = await env.DB.prepare(`SELECT events_seq FROM ledger_chain_start WHERE id = 1`).first<{ events_seq: number }>();
      // As if migration 0037 ran now: these two rows predate the chain.
      await env.DB.prepare(`UPDATE ledger_chain_start SET events_seq = (SELECT MAX(seq) FROM events) WHERE id = 1`).run();
      try {
        await logSome(w, 1);
        expect(await verify(w)).toMatchObject({ intact: true, checked: 1, unchained_legacy: 2 });
        expect(await chainLegacyRows(env.DB, w.id.tenantId, T0, 10)).toBe(2);
        expect(await verify(w)).toMatchObject({ intact: true, checked: 3, unchained_legacy: 0 });
        await env.DB.prepare(`UPDATE events SET reasoning = 'rewritten' WHERE id = ?`).bind(`legacy-${w.slug}-1`).run();
        expect((await verify(w)).first_break).toMatchObject({ position: 2, row_id: `legacy-${w.slug}-1`, reason: "edited" });
      } finally {
        await env.DB.prepare(`UPDATE ledger_chain_start SET events_seq = ? WHERE id = 1`).bind(start!.events_seq).run();
      }
    });
  });
});
