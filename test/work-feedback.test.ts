/** Product feedback: feature_request_create and feature_request_query. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, count, MINUTE, newWorld, ok, refusedWithoutWrites, type Structured } from "./helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const world = (name: string) => newWorld(`wfb-${name}`, { start: T0 });
const rows = (tenantId: string) => count("SELECT COUNT(*) AS n FROM feature_requests WHERE tenant_id = ?", tenantId);

describe("feature_request_create", () => {
  it("files a request with its defaults and every field", async () => {
    const w = await world("create");
    const r = await ok(w.ctx, "feature_request_create", { title: "blame is slow on long paths", kind: "bug", tool_name: "blame", error_code: "internal_error", context: "looking up a file" });
    expect(r.deduplicated).toBe(false);
    expect(r.request).toMatchObject({
      title: "blame is slow on long paths", body: "", kind: "bug", severity: "medium", tool_name: "blame", error_code: "internal_error",
      context: "looking up a file", fingerprint: null, status: "open", resolution_note: "", occurrences: 1, actor_id: w.id.actorId, created_at: T0,
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
    expect(((await ok(w.ctx, "feature_request_query", { id: ids[4] })).items as Structured[])).toHaveLength(1);
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
