/**
 * Embedding after the response, grouped: the writes that land while a group is being embedded go
 * together in the next one (src/search/semantic.ts, src/core/group-commit.ts).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { embedAfterResponse } from "../../src/search/semantic";
import { count, newWorld, ok, settle, sqlOf } from "../support/helpers";

const T0 = "2030-04-01T00:00:00.000Z";

describe("embedding after the response", () => {
  it("embeds the writes that arrive while a group is in flight together, and every one of them", async () => {
    const w = await newWorld("embed-group", { start: T0 });
    // Written with the semantic layer off, so each note stays queued for the calls below.
    const off = { ...w.ctx, env: { ...env, SEMANTIC_SEARCH: "off" } };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(((await ok(off, "knowledge_write", { title: `Runbook ${i}`, body: `Rotate the signing key, step ${i}` })).note as { id: string }).id);
    await settle(off);
    expect(await count("SELECT COUNT(*) AS n FROM embeddings WHERE tenant_id = ? AND status = 'pending'", w.id.tenantId)).toBe(5);

    const readyBatches: number[] = [];
    const d1 = Object.create(env.DB) as D1Database;
    d1.batch = (statements: D1PreparedStatement[]) => {
      if (statements.some((s) => /^update "embeddings" set .*"model"/i.test(sqlOf(s)))) readyBatches.push(statements.length);
      return env.DB.batch(statements);
    };
    const kept: Promise<unknown>[] = [];
    const ctx = { env: { ...env, DB: d1 }, clock: w.ctx.clock, waitUntil: (p: Promise<unknown>) => void kept.push(p) };
    for (const id of ids) embedAfterResponse(ctx, [{ tenantId: w.id.tenantId, type: "note", id }]);
    await Promise.all(kept);
    // The first went alone (nothing else was waiting); the four put meanwhile went as one group.
    expect(readyBatches).toEqual([1, 4]);
    // Each call's own completion, and its share of leading the queue.
    expect(kept).toHaveLength(10);
    expect(await count("SELECT COUNT(*) AS n FROM embeddings WHERE tenant_id = ? AND status = 'ready'", w.id.tenantId)).toBe(5);
  });
});
