/**
 * A keyed write whose answer is known before its batch completes its idempotency record in that
 * batch (ctx.keyed, src/core/idempotency.ts): one D1 round trip fewer, and the record is complete
 * exactly when the write is.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callTool } from "../../src/core/call";
import type { Ctx } from "../../src/core/context";
import { defineTool } from "../../src/core/define-tool";
import { runIdempotent } from "../../src/core/idempotency";
import { call, count, makeCtx, newWorld, ok, seedIdentity, sqlOf } from "../support/helpers";

const T0 = "2030-03-01T00:00:00.000Z";

/** `ctx` whose D1 batches are kept, as the SQL of their statements. */
function recorded(ctx: Ctx): { ctx: Ctx; batches: string[][] } {
  const batches: string[][] = [];
  const d1 = Object.create(env.DB) as D1Database;
  d1.batch = (statements: D1PreparedStatement[]) => {
    batches.push(statements.map(sqlOf));
    return env.DB.batch(statements);
  };
  return { ctx: { ...ctx, d1 }, batches };
}

const stored = (tenantId: string, key: string) =>
  env.DB.prepare(`SELECT status, result FROM idempotency_keys WHERE tenant_id = ? AND key = ?`).bind(tenantId, key).first<{ status: string; result: string }>();

describe("a keyed write's idempotency record", () => {
  it("is completed in log_change's own batch, with the answer the call returned", async () => {
    const w = await newWorld("keyed-log", { start: T0 });
    const { ctx, batches } = recorded(w.ctx);
    const answer = await ok(ctx, "log_change", { entity_path: "svc.keyed", change_type: "add", reasoning: "Keyed write", idempotency_key: "k-1" });
    const write = batches.find((b) => b.some((s) => /INSERT INTO "events"/i.test(s)))!;
    // The key is taken and completed in the write's own batch (log_change is keyedBatch): no
    // reservation before it, nothing after it.
    expect(write.some((s) => /^insert into "idempotency_keys"/i.test(s))).toBe(true);
    expect(write.some((s) => /^update "idempotency_keys"/i.test(s))).toBe(true);
    expect(batches.filter((b) => b.some((s) => /idempotency_keys/i.test(s)))).toEqual([write]);
    const row = await stored(w.id.tenantId, "k-1");
    expect(row?.status).toBe("done");
    expect(JSON.parse(row!.result)).toMatchObject({ id: answer.id, timestamp: answer.timestamp });
    const replay = await ok(w.ctx, "log_change", { entity_path: "svc.keyed", change_type: "add", reasoning: "Keyed write", idempotency_key: "k-1" });
    expect(replay).toMatchObject({ id: answer.id, idempotent_replay: true });
  });

  it("taken in the write's batch: identical calls at once write one event and answer alike", async () => {
    const w = await newWorld("keyed-race", { start: T0 });
    const args = { entity_path: "svc.race", change_type: "add", reasoning: "Raced", idempotency_key: "k-race" };
    const answers = await Promise.all(Array.from({ length: 6 }, () => ok(w.ctx, "log_change", args)));
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    expect(answers.filter((a) => a.idempotent_replay === true)).toHaveLength(5);
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ? AND entity_path = 'svc.race'", w.id.tenantId)).toBe(1);
    expect((await ok(w.ctx, "change_verify", {})).intact).toBe(true);
  });

  it("taken in the write's batch: a held key fails only its own write, the calls beside it land", async () => {
    const w = await newWorld("keyed-held", { start: T0 });
    await ok(w.ctx, "log_change", { entity_path: "svc.held", change_type: "add", reasoning: "First", idempotency_key: "k-held" });
    // The same key for other arguments, in the same group as calls with keys of their own.
    const calls = await Promise.all([
      call(w.ctx, "log_change", { entity_path: "svc.held", change_type: "modify", reasoning: "Other", idempotency_key: "k-held" }),
      ...[1, 2, 3].map((i) => call(w.ctx, "log_change", { entity_path: `svc.beside${i}`, change_type: "add", reasoning: "Beside", idempotency_key: `k-beside${i}` })),
    ]);
    expect(calls[0]).toMatchObject({ isError: true, error: { code: "idempotency_key_reused" } });
    expect(calls.slice(1).every((c) => c.ok === true)).toBe(true);
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ? AND entity_path = 'svc.held'", w.id.tenantId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ? AND entity_path LIKE 'svc.beside%'", w.id.tenantId)).toBe(3);
    // The identical call while the first still holds its key (its record pending): refused as in
    // progress, and nothing written.
    const args = { entity_path: "svc.pending", change_type: "add", reasoning: "Waits", idempotency_key: "k-pending" };
    await ok(w.ctx, "log_change", args);
    await env.DB.prepare("UPDATE idempotency_keys SET status = 'pending', result = NULL WHERE tenant_id = ? AND key = 'k-pending'").bind(w.id.tenantId).run();
    expect(await call(w.ctx, "log_change", args)).toMatchObject({ isError: true, error: { code: "idempotency_in_progress" } });
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE tenant_id = ? AND entity_path = 'svc.pending'", w.id.tenantId)).toBe(1);
    expect((await ok(w.ctx, "change_verify", {})).intact).toBe(true);
  });

  it("taken in the write's batch: an expired key is freed in that batch and written again", async () => {
    const w = await newWorld("keyed-expired", { start: T0 });
    const first = await ok(w.ctx, "log_change", { entity_path: "svc.old", change_type: "add", reasoning: "Old", idempotency_key: "k-old" });
    w.clock.advance(25 * 60 * 60 * 1000);
    const again = await ok(w.ctx, "log_change", { entity_path: "svc.new", change_type: "add", reasoning: "New", idempotency_key: "k-old" });
    expect(again.id).not.toBe(first.id);
    expect(again.idempotent_replay).toBeUndefined();
    expect(JSON.parse((await stored(w.id.tenantId, "k-old"))!.result)).toMatchObject({ id: again.id });
  });

  it("taken in decision_log's batch and completed after its read: one batch fewer, and a retry replays", async () => {
    const w = await newWorld("keyed-decision", { start: T0 });
    const { ctx, batches } = recorded(w.ctx);
    const args = { title: "Queue", choice: "Use the outbox", rationale: "Exactly once" };
    const first = await ok(ctx, "decision_log", args);
    const write = batches.find((b) => b.some((s) => /insert into "decisions"/i.test(s)))!;
    // Taken before the activity row, in the write's batch; no reservation batch before it.
    expect(write.findIndex((s) => /^insert into "idempotency_keys"/i.test(s))).toBeLessThan(write.findIndex((s) => /INSERT INTO activity/i.test(s)));
    expect(batches.filter((b) => b.some((s) => /idempotency_keys/i.test(s)))).toEqual([write]);
    const again = await ok(w.ctx, "decision_log", args);
    expect(again).toMatchObject({ idempotent_replay: true, decision: { id: first.decision.id } });
    expect(await count("SELECT COUNT(*) AS n FROM decisions WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
  });

  describe("the work-ledger writes that take their key in their one batch", () => {
    const cases = [
      { tool: "task_create", table: "tasks", args: { project_id: "KB", title: "Write the outbox" } },
      { tool: "task_create_many", table: "tasks", args: { project_id: "KB", tasks: [{ title: "One" }, { title: "Two" }] } },
      { tool: "comment_add", table: "comments", args: { object_type: "project", object_id: "KB", body: "Looks right" } },
      { tool: "knowledge_write", table: "knowledge_notes", args: { project_id: "KB", title: "Runbook", body: "Rotate the signing key first." } },
    ];
    for (const c of cases) {
      it(`${c.tool}: the key rides in the write's batch, and the identical retry replays without writing`, async () => {
        const w = await newWorld(`keyed-${c.tool}`, { start: T0 });
        await ok(w.ctx, "project_create", { title: "Keyed batch", key: "KB" });
        const before = await count(`SELECT COUNT(*) AS n FROM ${c.table} WHERE tenant_id = ?`, w.id.tenantId);
        const { ctx, batches } = recorded(w.ctx);
        const first = await ok(ctx, c.tool, c.args);
        const keyed = batches.filter((b) => b.some((q) => /idempotency_keys/i.test(q)));
        // Taken in the write itself (the batch with its activity row), never in a batch of its own.
        expect(keyed.length).toBeGreaterThan(0);
        expect(keyed[0]!.some((q) => /^insert into "idempotency_keys"/i.test(q)) && keyed[0]!.some((q) => /INSERT INTO activity/i.test(q))).toBe(true);
        const written = (await count(`SELECT COUNT(*) AS n FROM ${c.table} WHERE tenant_id = ?`, w.id.tenantId)) - before;
        expect(written).toBeGreaterThan(0);
        const again = await ok(w.ctx, c.tool, c.args);
        expect(again.idempotent_replay).toBe(true);
        const { ok: _a, idempotent_replay: _b, rate_limit: _c, ...firstPayload } = first;
        expect(again).toMatchObject(firstPayload);
        expect(await count(`SELECT COUNT(*) AS n FROM ${c.table} WHERE tenant_id = ?`, w.id.tenantId)).toBe(before + written);
      });
    }
  });

  it("takes the key with the answer when a keyedBatch handler wrote nothing", async () => {
    const id = await seedIdentity("keyed-unopened", "agent");
    const ctx = makeCtx(id);
    const first = await runIdempotent(ctx, "test_tool", "k-4", { a: 1 }, async () => ({ answer: "late" }), undefined, true);
    expect(first).toEqual({ result: { answer: "late" }, replay: false });
    expect(await stored(id.tenantId, "k-4")).toMatchObject({ status: "done" });
    // The handler runs before its key is known to be held (that is what taking it in the batch
    // means), and a path that writes nothing has nothing to lose: the first call's answer stands.
    expect(await runIdempotent(ctx, "test_tool", "k-4", { a: 1 }, async () => ({ answer: "second" }), undefined, true)).toEqual({ result: { answer: "late" }, replay: true });
  });

  it("keeps the answer a handler returned when it recorded another", async () => {
    const id = await seedIdentity("keyed-other", "agent");
    const ctx = makeCtx(id);
    const first = await runIdempotent(ctx, "test_tool", "k-2", { a: 1 }, async (keyed) => {
      await ctx.d1.batch([keyed.done({ answer: "recorded" })]);
      return { answer: "returned" };
    });
    expect(first).toEqual({ result: { answer: "returned" }, replay: false });
    expect(JSON.parse((await stored(id.tenantId, "k-2"))!.result)).toEqual({ answer: "returned" });
    expect(await runIdempotent(ctx, "test_tool", "k-2", { a: 1 }, () => Promise.reject(new Error("must not run again")))).toEqual({ result: { answer: "returned" }, replay: true });
  });

  it("is handed to the call's own handler only, never to a tool that handler runs without a key of its own", async () => {
    const id = await seedIdentity("keyed-nested", "agent");
    const seen: Array<boolean> = [];
    const probe = defineTool({
      name: "probe",
      title: "Probe",
      toolset: "changes",
      description: "Says whether it was handed a keyed record.",
      input: z.object({ idempotency_key: z.string().optional().describe("key") }),
      output: z.object({}),
      annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
      run: async (ctx) => {
        seen.push(ctx.keyed !== undefined);
        return {};
      },
    });
    const outer = { ...makeCtx(id), keyed: { open: () => [], done: () => env.DB.prepare("SELECT 1") } };
    await callTool(probe, outer, {});
    await callTool(probe, outer, { idempotency_key: "k-3" });
    expect(seen).toEqual([false, true]);
  });
});
