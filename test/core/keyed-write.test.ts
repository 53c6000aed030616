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
import { makeCtx, newWorld, ok, seedIdentity, sqlOf } from "../support/helpers";

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
    expect(write.some((s) => /^update "idempotency_keys"/i.test(s))).toBe(true);
    // Nothing after the write's batch: the reservation before it is the record's only other batch.
    expect(batches.at(-1)).toBe(write);
    const row = await stored(w.id.tenantId, "k-1");
    expect(row?.status).toBe("done");
    expect(JSON.parse(row!.result)).toMatchObject({ id: answer.id, timestamp: answer.timestamp });
    const replay = await ok(w.ctx, "log_change", { entity_path: "svc.keyed", change_type: "add", reasoning: "Keyed write", idempotency_key: "k-1" });
    expect(replay).toMatchObject({ id: answer.id, idempotent_replay: true });
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
    const outer = { ...makeCtx(id), keyed: { done: () => env.DB.prepare("SELECT 1") } };
    await callTool(probe, outer, {});
    await callTool(probe, outer, { idempotency_key: "k-3" });
    expect(seen).toEqual([false, true]);
  });
});
