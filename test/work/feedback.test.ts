/** Product feedback: feature_request_create and feature_request_query. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DERIVED_WINDOW_MS } from "../../src/core/idempotency";
import { call, count, MINUTE, newWorld, ok, refusedWithoutWrites, type Structured } from "../support/helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const world = (name: string) => newWorld(`wfb-${name}`, { start: T0 });
const rows = (tenantId: string) => count("SELECT COUNT(*) AS n FROM feature_requests WHERE tenant_id = ?", tenantId);

describe("feature_request_create", () => {
  it("files a request with its defaults and every field", async () => {
    const w = await world("create");
    const r = await ok(w.ctx, "feature_request_create", { title: "blame is slow on long paths", kind: "bug", tool_name: "blame", error_code: "internal_error", context: "looking up a file" });
    expect(r.deduplicated).toBe(false);
    expect(r.request).toMatchObject({
      title: "blame is slow on long paths",
      body: "",
      kind: "bug",
      severity: "medium",
      tool_name: "blame",
      error_code: "internal_error",
      context: "looking up a file",
      fingerprint: null,
      status: "open",
      resolution_note: "",
      occurrences: 1,
      actor_id: w.id.actorId,
      created_at: T0,
    });
    expect(await rows(w.id.tenantId)).toBe(1);
  });

  it("counts a live duplicate by fingerprint instead of filing it again, and files anew once it is closed", async () => {
    const w = await world("fingerprint");
    const bob = await w.other("bob");
    const first = await ok(w.ctx, "feature_request_create", { title: "No bulk ack", kind: "capability", fingerprint: "inbox:bulk" });
    w.clock.advance(MINUTE);
    const again = await ok(bob.ctx, "feature_request_create", { title: "Bulk ack please", kind: "capability", fingerprint: "inbox:bulk" });
    expect(again).toMatchObject({ deduplicated: true, request: { id: first.request.id, occurrences: 2, title: "No bulk ack" } });
    expect(await rows(w.id.tenantId)).toBe(1);
    await env.DB.prepare("UPDATE feature_requests SET status = 'shipped', resolution_note = 'in 0.2' WHERE id = ?").bind(first.request.id).run();
    // Filed again later (past the retry window, so the identical call is a new one, not a retry of the first).
    w.clock.advance(DERIVED_WINDOW_MS);
    const fresh = await ok(w.ctx, "feature_request_create", { title: "No bulk ack", kind: "capability", fingerprint: "inbox:bulk" });
    expect(fresh.deduplicated).toBe(false);
    expect(fresh.request.id).not.toBe(first.request.id);
  });

  it("refuses secret-looking text and bad input, filing nothing", async () => {
    const w = await world("refuse");
    const state = () => rows(w.id.tenantId);
    const token = `ghp_${"a".repeat(36)}`;
    const err = await refusedWithoutWrites(w.ctx, "feature_request_create", { title: "auth fails", body: `my token ${token} is rejected`, kind: "bug" }, "secret_in_feedback", state);
    expect(JSON.stringify(err)).not.toContain(token);
    expect(err.message).toContain("GitHub token");
    await refusedWithoutWrites(w.ctx, "feature_request_create", { title: "", kind: "bug" }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "feature_request_create", { title: "x", kind: "wish" }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "feature_request_create", { title: "x", kind: "bug", severity: "urgent" }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "feature_request_create", { title: "x", kind: "bug", colour: "red" }, "invalid_input", state);
  });
});

describe("feature_request_query", () => {
  it("lists the tenant's requests newest first with status and notes, filters, and pages", async () => {
    const w = await world("query");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await ok(w.ctx, "feature_request_create", { title: `Item ${i}`, body: i === 2 ? "mentions Turbo mode" : "", kind: i % 2 ? "docs" : "bug" })).request.id);
      w.clock.advance(MINUTE);
    }
    await env.DB.prepare("UPDATE feature_requests SET status = 'declined', resolution_note = 'works as designed' WHERE id = ?").bind(ids[0]).run();
    const all = (await ok(w.ctx, "feature_request_query", {})).items as Structured[];
    expect(all.map((r) => r.id)).toEqual([...ids].reverse());
    expect(all.at(-1)).toMatchObject({ status: "declined", resolution_note: "works as designed" });
    expect(((await ok(w.ctx, "feature_request_query", { kind: "docs" })).items as Structured[]).map((r) => r.id)).toEqual([ids[3], ids[1]]);
    expect(((await ok(w.ctx, "feature_request_query", { status: ["declined"] })).items as Structured[]).map((r) => r.id)).toEqual([ids[0]]);
    expect(((await ok(w.ctx, "feature_request_query", { q: "turbo" })).items as Structured[]).map((r) => r.id)).toEqual([ids[2]]);
    expect((await ok(w.ctx, "feature_request_query", { id: ids[4] })).items as Structured[]).toHaveLength(1);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(w.ctx, "feature_request_query", { limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...(page.items as Structured[]).map((r) => r.id as string));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    expect((await call(w.ctx, "feature_request_query", { cursor: "junk" })).error?.code).toBe("invalid_input");
  });

  it("never shows another tenant's requests", async () => {
    const a = await world("iso-a");
    const b = await world("iso-b");
    const filed = await ok(a.ctx, "feature_request_create", { title: "A's request", kind: "bug", fingerprint: "same" });
    expect((await ok(b.ctx, "feature_request_query", {})).items).toEqual([]);
    expect((await ok(b.ctx, "feature_request_query", { id: filed.request.id })).items).toEqual([]);
    // The same fingerprint in another tenant is another request.
    expect((await ok(b.ctx, "feature_request_create", { title: "B's request", kind: "bug", fingerprint: "same" })).deduplicated).toBe(false);
  });
});

describe("feature_request_set_status", () => {
  describe("the seed's lifecycle", () => {
    const history = (tenantId: string) => count("SELECT COUNT(*) AS n FROM feature_request_events WHERE tenant_id = ?", tenantId);

    it("moves a request open → accepted → in_progress → shipped with notes, keeps every move, and tells the filer", async () => {
      const w = await world("life");
      const op = await w.other("ops", { operator: true });
      const filed = await ok(w.ctx, "feature_request_create", { title: "No bulk ack", kind: "capability", fingerprint: "inbox:bulk" });
      const id = filed.request.id;
      w.clock.advance(MINUTE);
      const accepted = await ok(op.ctx, "feature_request_set_status", { id, status: "accepted", note: "Planned for 0.3" });
      expect(accepted).toMatchObject({ changed: true, request: { status: "accepted", resolution_note: "Planned for 0.3" } });
      w.clock.advance(MINUTE);
      await ok(op.ctx, "feature_request_set_status", { id, status: "in_progress", expected_status: "accepted" });
      w.clock.advance(MINUTE);
      const shipped = await ok(op.ctx, "feature_request_set_status", { id, status: "shipped", note: "In 0.3: inbox ack takes a list" });
      expect(shipped.request).toMatchObject({ status: "shipped", resolution_note: "In 0.3: inbox ack takes a list" });
      expect(shipped.history.map((h: Structured) => [h.from_status, h.to_status, h.actor_id])).toEqual([
        ["open", "accepted", op.id.actorId],
        ["accepted", "in_progress", op.id.actorId],
        ["in_progress", "shipped", op.id.actorId],
      ]);
      // The filer reads the outcome and how it got there, and was notified of each move.
      const [read] = (await ok(w.ctx, "feature_request_query", { id })).items as Structured[];
      expect(read!.status).toBe("shipped");
      expect(read!.history.map((h: Structured) => h.to_status)).toEqual(["accepted", "in_progress", "shipped"]);
      expect(read!.history[0]).toMatchObject({ note: "Planned for 0.3", at: "2030-01-01T00:01:00.000Z" });
      const notes = await ok(w.ctx, "notification_query", {});
      expect(notes.items.filter((n: Structured) => n.kind === "feedback" && n.object_id === id)).toHaveLength(3);
      // Setting the status it has is a no-op; a shipped request is closed, so its fingerprint files anew.
      expect((await ok(op.ctx, "feature_request_set_status", { id, status: "shipped" })).changed).toBe(false);
      expect((await ok(w.ctx, "feature_request_create", { title: "No bulk ack", kind: "capability", fingerprint: "inbox:bulk" })).deduplicated).toBe(false);
    });

    it("declines from any live status; refuses backward moves, moves out of a final status, a stale expected_status and non-operators, writing nothing", async () => {
      const w = await world("life-bad");
      const op = await w.other("ops", { operator: true });
      const a = (await ok(w.ctx, "feature_request_create", { title: "A", kind: "bug" })).request.id;
      const b = (await ok(w.ctx, "feature_request_create", { title: "B", kind: "bug" })).request.id;
      await ok(op.ctx, "feature_request_set_status", { id: a, status: "in_progress" });
      const state = async () => [await history(w.id.tenantId), await count("SELECT COUNT(*) AS n FROM feature_requests WHERE tenant_id = ? AND status = 'open'", w.id.tenantId)];
      const back = await refusedWithoutWrites(op.ctx, "feature_request_set_status", { id: a, status: "accepted" }, "invalid_transition", state);
      expect(back.hint).toContain("declined");
      await refusedWithoutWrites(op.ctx, "feature_request_set_status", { id: b, status: "shipped", expected_status: "accepted" }, "conflict", state);
      const filer = await refusedWithoutWrites(w.ctx, "feature_request_set_status", { id: b, status: "accepted" }, "operator_required", state);
      expect(filer.hint).toContain("feature_request_query");
      await refusedWithoutWrites(op.ctx, "feature_request_set_status", { id: b, status: "open" }, "invalid_input", state);
      expect((await ok(op.ctx, "feature_request_set_status", { id: b, status: "declined", note: "works as designed" })).request.status).toBe("declined");
      const final = await refusedWithoutWrites(op.ctx, "feature_request_set_status", { id: b, status: "accepted" }, "invalid_transition", state);
      expect(final.hint).toContain("feature_request_create");
      // Another tenant's operator cannot see it.
      const other = await world("life-other");
      const stranger = await other.other("ops", { operator: true });
      await refusedWithoutWrites(stranger.ctx, "feature_request_set_status", { id: a, status: "declined" }, "not_found", state);
    });
  });
});
