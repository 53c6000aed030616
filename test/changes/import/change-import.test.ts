/** change_import: change events from elsewhere, at their original time, once per import_key. */
import { describe, expect, it } from "vitest";
import { call, count, DAY, newWorld, ok, refusedWithoutWrites, type Structured, type World } from "../../support/helpers";

const START = "2026-06-01T12:00:00.000Z";
const WHY = "Users need to sign in with their email address";

const eventsOf = (w: World) => () => count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ?", w.id.tenantId);

/** An imported event with the fields every test repeats. */
const ev = (key: string, over: Record<string, unknown> = {}) => ({
  entity_path: "users.email",
  change_type: "add",
  entity_type: "column",
  reasoning: WHY,
  timestamp: "2024-03-01T09:30:00Z",
  import_key: key,
  ...over,
});

const ids = (page: Structured) => page.items.map((e: Structured) => e.id);

describe("change_import", () => {
  it("writes each event at its original time, with its fields, and answers ids and per-event results", async () => {
    const w = await newWorld("imp-happy", { start: START });
    const r = await ok(w.ctx, "change_import", {
      events: [
        ev("migration:0001_users.sql:1", { change_type: "create", entity_path: "users", entity_type: "table", git_commit: "abc1234", changeset_id: "users-v1", project: "api" }),
        ev("migration:0001_users.sql:2", { timestamp: "2024-03-01T11:30:00+02:00", agent: "migrations" }),
        ev("migration:0002_rename.sql:1", { change_type: "rename", entity_path: "users.mail", rename_from: "users.email", timestamp: "2024-04-01" }),
      ],
    });
    expect(r).toMatchObject({ imported: 3, skipped: 0 });
    expect(r.ids).toHaveLength(3);
    expect(r.items.map((i: Structured) => [i.index, i.status])).toEqual([
      [0, "imported"],
      [1, "imported"],
      [2, "imported"],
    ]);
    expect(r.items.map((i: Structured) => i.id)).toEqual(r.ids);
    // The rename writes both halves, as log_change does.
    expect(await eventsOf(w)()).toBe(4);

    const history = await ok(w.ctx, "change_history", {});
    expect(history.items.map((e: Structured) => [e.timestamp, e.change_type, e.entity_path])).toEqual([
      ["2024-04-01T00:00:00.000Z", "create", "users.mail"],
      ["2024-04-01T00:00:00.000Z", "rename", "users.email"],
      // 11:30+02:00 is 09:30Z: offsets are read and stored as UTC.
      ["2024-03-01T09:30:00.000Z", "add", "users.email"],
      ["2024-03-01T09:30:00.000Z", "create", "users"],
    ]);
    const table = history.items.find((e: Structured) => e.entity_path === "users")!;
    expect(table).toMatchObject({ id: r.ids[0], git_commit: "abc1234", changeset_id: "users-v1", project: "api", reasoning: WHY, agent: "agent" });
    expect(history.items.find((e: Structured) => e.agent === "migrations")?.id).toBe(r.ids[1]);
    expect(history.items[0]).toMatchObject({ id: r.ids[2], metadata: { renamed_from: "users.email" } });
    // History, not news: the feed stays quiet.
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'change.logged'", w.id.tenantId)).toBe(0);
  });

  it("orders imported events among live ones by time: an old import does not become blame's latest", async () => {
    const w = await newWorld("imp-order", { start: START });
    const live = await ok(w.ctx, "log_change", { entity_path: "users.email", change_type: "modify", reasoning: "Widen the column for long addresses" });
    w.clock.advance(DAY);
    const imported = await ok(w.ctx, "change_import", { events: [ev("git:acme/api:aaaa:users.email", { timestamp: "2025-01-01T00:00:00Z" })] });

    expect((await ok(w.ctx, "blame", { entity_path: "users.email" })).id).toBe(live.id);
    expect(ids(await ok(w.ctx, "change_diff", { entity_path: "users.email" }))).toEqual([live.id, imported.ids[0]]);
    expect(ids(await ok(w.ctx, "change_history", {}))).toEqual([live.id, imported.ids[0]]);

    // A newer import does take over.
    const newer = await ok(w.ctx, "change_import", { events: [ev("git:acme/api:bbbb:users.email", { change_type: "modify", timestamp: "2026-06-01T18:00:00Z" })] });
    expect((await ok(w.ctx, "blame", { entity_path: "users.email" })).id).toBe(newer.ids[0]);
    const diff = await ok(w.ctx, "change_diff", { entity_path: "users.email", limit: 1 });
    expect(ids(diff)).toEqual([newer.ids[0]]);
    // Pages follow the same order, across the cursor.
    const rest = await ok(w.ctx, "change_diff", { entity_path: "users.email", limit: 1, cursor: diff.next_cursor });
    expect(ids(rest)).toEqual([live.id]);
    expect(ids(await ok(w.ctx, "change_diff", { entity_path: "users.email", limit: 5, cursor: rest.next_cursor }))).toEqual([imported.ids[0]]);
  });

  it("prior_attempts reads the timeline in time order: an old removal imported later does not close a newer attempt", async () => {
    const w = await newWorld("imp-prior", { start: START });
    const attempt = await ok(w.ctx, "log_change", { entity_path: "cache.redis", change_type: "add", entity_type: "dependency", reasoning: "Cache sessions in Redis to cut database load" });
    await ok(w.ctx, "change_import", {
      events: [
        ev("old:1", { entity_path: "cache.redis", change_type: "add", timestamp: "2025-01-01T00:00:00Z", reasoning: "First try at caching sessions in Redis" }),
        ev("old:2", { entity_path: "cache.redis", change_type: "revert", timestamp: "2025-01-02T00:00:00Z", reasoning: "Redis ran out of memory under load; went back to the database" }),
      ],
    });
    const found = await ok(w.ctx, "prior_attempts", { entity_path: "cache.redis", min_confidence: "proximity_low" });
    const byReason = Object.fromEntries(found.items.map((a: Structured) => [a.reasoning, a.outcome]));
    expect(byReason).toEqual({ "Cache sessions in Redis to cut database load": "active", "First try at caching sessions in Redis": "reverted" });
    expect(found.items[0].id).toBe(attempt.id);
    expect(found.items.every((a: Structured) => a.current_status === "active")).toBe(true);
  });

  it("skips events whose import_key was imported before: a re-run writes nothing twice", async () => {
    const w = await newWorld("imp-rerun", { start: START });
    const batch = [ev("k:1"), ev("k:2", { entity_path: "users.name" }), ev("k:3", { change_type: "rename", entity_path: "users.login", rename_from: "users.nick" })];
    const first = await ok(w.ctx, "change_import", { events: batch });
    expect(first).toMatchObject({ imported: 3, skipped: 0 });
    const rows = await eventsOf(w)();
    const again = await ok(w.ctx, "change_import", { events: batch });
    expect(again).toMatchObject({ imported: 0, skipped: 3, ids: [] });
    expect(again.items.map((i: Structured) => [i.status, i.id])).toEqual([
      ["skipped", ""],
      ["skipped", ""],
      ["skipped", ""],
    ]);
    expect(await eventsOf(w)()).toBe(rows);
    // A later run with one new event writes just that one.
    const more = await ok(w.ctx, "change_import", { events: [...batch, ev("k:4", { entity_path: "users.phone" })] });
    expect(more).toMatchObject({ imported: 1, skipped: 3 });
    expect(more.items[3]).toMatchObject({ index: 3, import_key: "k:4", status: "imported", id: more.ids[0] });
    expect(await eventsOf(w)()).toBe(rows + 1);
  });

  it("replays a call made with the same idempotency_key", async () => {
    const w = await newWorld("imp-idem", { start: START });
    const first = await ok(w.ctx, "change_import", { events: [ev("i:1")], idempotency_key: "import-run-1" });
    const replay = await ok(w.ctx, "change_import", { events: [ev("i:1")], idempotency_key: "import-run-1" });
    expect(replay).toMatchObject({ idempotent_replay: true, imported: 1, ids: first.ids });
    expect(await eventsOf(w)()).toBe(1);
  });

  it("keeps change_verify intact with imports between live writes", async () => {
    const w = await newWorld("imp-verify", { start: START });
    await ok(w.ctx, "log_change", { entity_path: "orders.total", change_type: "add", reasoning: "Orders need a stored total for reports" });
    await ok(w.ctx, "change_import", { events: [ev("v:1"), ev("v:2", { change_type: "rename", entity_path: "users.mail", rename_from: "users.email", timestamp: "2024-05-01T00:00:00Z" })] });
    await ok(w.ctx, "log_change", { entity_path: "orders.total", change_type: "modify", reasoning: "Totals include tax now, as finance asked" });
    const verified = await ok(w.ctx, "change_verify", {});
    expect(verified).toMatchObject({ intact: true, checked: 5, first_break: null });
  });

  describe("refuses bad input, writing nothing", () => {
    it("a timestamp in the future, or unreadable, names the event", async () => {
      const w = await newWorld("imp-bad-time", { start: START });
      const future = await refusedWithoutWrites(w.ctx, "change_import", { events: [ev("t:1"), ev("t:2", { timestamp: "2026-06-02T00:00:00Z" })] }, "invalid_timestamp", eventsOf(w));
      expect(future.message).toMatch(/^events\[1\]: .*future/);
      // A few minutes ahead is clock drift, not the future.
      expect((await ok(w.ctx, "change_import", { events: [ev("t:3", { timestamp: "2026-06-01T12:04:00Z" })] })).imported).toBe(1);
      const unreadable = await refusedWithoutWrites(w.ctx, "change_import", { events: [ev("t:4", { timestamp: "last tuesday" })] }, "invalid_timestamp", eventsOf(w));
      expect(unreadable.message).toMatch(/^events\[0\]: /);
    });

    it("a missing import_key or timestamp, and more than 100 events", async () => {
      const w = await newWorld("imp-bad-shape", { start: START });
      const { import_key: _k, ...keyless } = ev("x");
      const missingKey = await refusedWithoutWrites(w.ctx, "change_import", { events: [ev("s:1"), keyless] }, "invalid_input", eventsOf(w));
      expect(missingKey.message).toContain("import_key");
      const { timestamp: _t, ...timeless } = ev("s:2");
      expect((await refusedWithoutWrites(w.ctx, "change_import", { events: [timeless] }, "invalid_input", eventsOf(w))).message).toContain("timestamp");
      const many = Array.from({ length: 101 }, (_, i) => ev(`s:${i}`));
      await refusedWithoutWrites(w.ctx, "change_import", { events: many }, "invalid_input", eventsOf(w));
      await refusedWithoutWrites(w.ctx, "change_import", { events: [] }, "invalid_input", eventsOf(w));
      await refusedWithoutWrites(w.ctx, "change_import", { events: [ev("k".repeat(201))] }, "invalid_input", eventsOf(w));
      await refusedWithoutWrites(w.ctx, "change_import", { events: [ev("s:3", { surprise: 1 })] }, "invalid_input", eventsOf(w));
      // Exactly 100 fit.
      expect((await ok(w.ctx, "change_import", { events: Array.from({ length: 100 }, (_, i) => ev(`ok:${i}`, { entity_path: `t.c${i}` })) })).imported).toBe(100);
    });

    it("a bad change_type at index k refuses the whole call, naming k", async () => {
      const w = await newWorld("imp-bad-type", { start: START });
      const err = await refusedWithoutWrites(w.ctx, "change_import", { events: [ev("c:0"), ev("c:1"), ev("c:2", { change_type: "ad" })] }, "invalid_input", eventsOf(w));
      expect(err.message).toContain("events.2.change_type");
      expect(err.message).toContain("did you mean 'add'");
      const supersede = await refusedWithoutWrites(w.ctx, "change_import", { events: [ev("c:3"), ev("c:4", { change_type: "supersede" })] }, "invalid_change_type", eventsOf(w));
      expect(supersede.message).toMatch(/^events\[1\]: /);
    });

    it("log_change's own refusals, and a key repeated within the call, name the event", async () => {
      const w = await newWorld("imp-bad-rule", { start: START });
      const rename = await refusedWithoutWrites(w.ctx, "change_import", { events: [ev("r:0"), ev("r:1", { change_type: "modify", rename_from: "users.old" })] }, "invalid_rename", eventsOf(w));
      expect(rename.message).toBe("events[1]: rename_from is only valid with change_type='rename'");
      const blank = await refusedWithoutWrites(w.ctx, "change_import", { events: [ev("r:2", { entity_path: "   " })] }, "invalid_entity_path", eventsOf(w));
      expect(blank.message).toMatch(/^events\[0\]: /);
      const twice = await refusedWithoutWrites(w.ctx, "change_import", { events: [ev("r:3"), ev("r:4"), ev("r:3", { entity_path: "users.name" })] }, "duplicate_import_key", eventsOf(w));
      expect(twice.message).toBe("events[2]: import_key 'r:3' is also used by events[0]");
    });
  });

  it("keeps tenants apart: the same import_key imports in each, and neither sees the other's", async () => {
    const a = await newWorld("imp-tenant-a", { start: START });
    const b = await newWorld("imp-tenant-b", { start: START });
    const inA = await ok(a.ctx, "change_import", { events: [ev("shared:1", { reasoning: "Tenant A's reason for the email column" })] });
    const inB = await ok(b.ctx, "change_import", { events: [ev("shared:1", { reasoning: "Tenant B's reason for the email column" })] });
    expect(inA.imported).toBe(1);
    expect(inB.imported).toBe(1);
    expect(ids(await ok(a.ctx, "change_history", {}))).toEqual(inA.ids);
    expect(ids(await ok(b.ctx, "change_history", {}))).toEqual(inB.ids);
    expect((await ok(b.ctx, "blame", { entity_path: "users.email" })).reasoning).toBe("Tenant B's reason for the email column");
    // Each tenant's re-run skips only its own key.
    expect(await ok(a.ctx, "change_import", { events: [ev("shared:1")] })).toMatchObject({ imported: 0, skipped: 1 });
    const later = await call(b.ctx, "change_import", { events: [ev("shared:2")] });
    expect(later).toMatchObject({ ok: true, imported: 1 });
    expect(ids(await ok(a.ctx, "change_history", {}))).toEqual(inA.ids);
  });
});
