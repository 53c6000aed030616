/**
 * Embedding after the response, grouped: the writes that land while a group is being embedded go
 * together in the next one (src/search/semantic.ts, src/core/group-commit.ts).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { embedAfterResponse, embedNow, embedReads, type EmbedRef } from "../../src/search/semantic";
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
      const ready = statements.filter((s) => /^update "embeddings" set .*"model"/i.test(sqlOf(s))).length;
      if (ready > 0) readyBatches.push(ready);
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

  it("a logged change's write reads what its embedding needs, so the embedding after the response reads nothing more", async () => {
    const w = await newWorld("embed-prefetch", { start: T0 });
    const trips: string[][] = [];
    const d1 = Object.create(env.DB) as D1Database;
    d1.batch = (statements: D1PreparedStatement[]) => {
      trips.push(statements.map(sqlOf));
      return env.DB.batch(statements);
    };
    const ctx = { ...w.ctx, d1, env: { ...env, DB: d1 } };
    const { id } = await ok(ctx, "log_change", { entity_path: "src/a.ts", change_type: "modify", reasoning: "guard the nightly import" });
    await settle(ctx);
    const write = trips.findIndex((t) => t.some((q) => /^insert into "events"/i.test(q)));
    expect(write).toBeGreaterThanOrEqual(0);
    // The pending row and the event's source are read in the write's own batch.
    expect(trips[write]!.filter((q) => /^select .* from "embeddings"/i.test(q) || /^SELECT .* FROM events/.test(q))).toHaveLength(2);
    // After it, one round trip: the vector and its status, and no read.
    expect(trips.slice(write + 1)).toHaveLength(1);
    expect(trips[write + 1]!.some((q) => /INTO local_vectors/.test(q))).toBe(true);
    expect(await count("SELECT COUNT(*) AS n FROM embeddings WHERE tenant_id = ? AND object_id = ? AND status = 'ready'", w.id.tenantId, id)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM local_vectors WHERE namespace = ?", w.id.tenantId)).toBe(1);
  });

  it("trusts reads made beforehand only for the objects they cover", async () => {
    const w = await newWorld("embed-known", { start: T0 });
    const off = { ...w.ctx, env: { ...env, SEMANTIC_SEARCH: "off" } };
    const note = async (body: string) => ({ tenantId: w.id.tenantId, type: "note" as const, id: ((await ok(off, "knowledge_write", { title: body, body })).note as { id: string }).id });
    const [a, b, c] = [await note("Rotate the signing key"), await note("Pin the toolchain"), await note("Drain the queue first")];
    await settle(off);
    const readBefore = async (refs: EmbedRef[]) => {
      const reads = embedReads(env.DB, refs);
      return reads.take(await env.DB.batch(reads.statements));
    };
    const trips: string[][] = [];
    const d1 = Object.create(env.DB) as D1Database;
    d1.batch = (statements: D1PreparedStatement[]) => (trips.push(statements.map(sqlOf)), env.DB.batch(statements));
    const readTrips = () => trips.filter((t) => t.some((q) => /^select .* from "embeddings"/i.test(q))).length;
    // b was not read beforehand: both are read here.
    expect(await embedNow({ ...env, DB: d1 }, [a, b], new Date(T0), await readBefore([a]))).toMatchObject({ embedded: 2 });
    expect(readTrips()).toBe(1);
    expect(await embedNow({ ...env, DB: d1 }, [c], new Date(T0), await readBefore([c]))).toMatchObject({ embedded: 1 });
    expect(readTrips()).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM embeddings WHERE tenant_id = ? AND status = 'ready'", w.id.tenantId)).toBe(3);
  });

  it("reads which objects are pending and their sources in one round trip, and skips what is no longer pending", async () => {
    const w = await newWorld("embed-reads", { start: T0 });
    const off = { ...w.ctx, env: { ...env, SEMANTIC_SEARCH: "off" } };
    const write = async (body: string) => ((await ok(off, "knowledge_write", { title: body, body })).note as { id: string }).id;
    const queued = await write("Rotate the signing key");
    const done = await write("Pin the toolchain");
    await settle(off);
    await env.DB.prepare("UPDATE embeddings SET status = 'ready' WHERE tenant_id = ? AND object_id = ?").bind(w.id.tenantId, done).run();

    const trips: string[][] = [];
    const d1 = Object.create(env.DB) as D1Database;
    d1.batch = (statements: D1PreparedStatement[]) => {
      trips.push(statements.map(sqlOf));
      return env.DB.batch(statements);
    };
    // Every statement run alone is a round trip of its own, bound or not.
    const track = (statement: D1PreparedStatement, query: string): D1PreparedStatement => {
      const own = statement as unknown as Record<string, (...a: unknown[]) => unknown>;
      for (const run of ["all", "first", "run", "raw"]) {
        const original = own[run]!.bind(statement);
        own[run] = (...a: unknown[]) => (trips.push([query]), original(...a));
      }
      const bind = own.bind!.bind(statement);
      own.bind = (...a: unknown[]) => track(bind(...a) as D1PreparedStatement, query);
      return statement;
    };
    d1.prepare = (query: string) => track(env.DB.prepare(query), query);
    const refs = [queued, done].map((id) => ({ tenantId: w.id.tenantId, type: "note" as const, id }));
    const report = await embedNow({ ...env, DB: d1 }, refs, new Date(T0));
    expect(report).toMatchObject({ embedded: 1, failed: 0, gone: 0 });
    const reads = trips.filter((t) => t.some((q) => /from "embeddings"/i.test(q) && /^select/i.test(q)) || t.some((q) => /FROM knowledge_notes/.test(q)));
    expect(reads).toHaveLength(1);
    expect(reads[0]).toHaveLength(2);
    // The rest is one more: the vector, and the status that says it is there, written together.
    expect(trips).toHaveLength(2);
    expect(trips[1]!.some((q) => /INTO local_vectors/.test(q)) && trips[1]!.some((q) => /^update "embeddings" set/i.test(q))).toBe(true);
    expect(await count("SELECT COUNT(*) AS n FROM embeddings WHERE tenant_id = ? AND status = 'ready'", w.id.tenantId)).toBe(2);
  });
});
