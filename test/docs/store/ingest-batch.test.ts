/**
 * A run of adds in one docs_execute call is stored and indexed together (ingestDocuments): the
 * same documents, chunks, index, graph and answers as the same adds one per call, in a few D1
 * round trips, with each add's failure reported as its own.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { INGEST_BATCH_STATEMENTS } from "../../../src/docs/store/ingest";
import type { Ctx } from "../../../src/core/context";
import { call, count, makeCtx, ok, seedIdentity, settle, TestClock } from "../../support/helpers";

/** A clock a millisecond later at every reading, so a version's created and modified times tell a first version from a later one. */
class TickingClock extends TestClock {
  override now(): Date {
    this.advance(1);
    return super.now();
  }
}

async function freshCtx(): Promise<Ctx> {
  const id = await seedIdentity(`docs-run-${crypto.randomUUID().slice(0, 8)}`, "writer");
  return makeCtx(id, new TickingClock());
}

const x = (...operations: unknown[]) => ({ operations });
const add = (name: string, content: string, extra: Record<string, unknown> = {}) => ({ op: "add", params: { name, content, ...extra } });

/** Adds that lean on each other: links for the graph, repeated content and paths, a collection, a snapshot, binary bytes. */
const RUN = [
  add("notes/alpha.md", "# Alpha\nSee [beta](beta.md) to parse options and return the default value.\n"),
  add("notes/beta.md", "# Beta\nThe default value of every option, and how [alpha](alpha.md) reads it.\n", { tags: ["b", "docs"], metadata: { owner: "jane" }, collection: "handbook" }),
  add("copies/alpha.md", "# Alpha\nSee [beta](beta.md) to parse options and return the default value.\n"),
  add("notes/alpha.md", "# Alpha, second\nParse the options again; [gamma](../gamma.ts) holds the rest.\n", { snapshot_label: "v2" }),
  add("gamma.ts", 'import { beta } from "./notes/beta";\nexport function parseOptions(o: unknown) {\n  return beta(o);\n}\n'),
  { op: "add", params: { name: "blob.bin", content_base64: btoa("\u0000\u0001binary\u0002") } },
  add("notes/beta.md", "# Beta\nThe default value of every option, and how [alpha](alpha.md) reads it.\n", { tags: ["again"] }),
];

/** What the store holds for a tenant, without ids, tenant or times: what must not depend on how the adds were sent. */
async function holdings(ctx: Ctx) {
  const rows = async (sql: string) => (await env.DB.prepare(sql).bind(ctx.tenantId).all()).results;
  const docs = await rows(
    `SELECT id, path, name, hash, size, mime_type, collection, tags, metadata, deleted_at IS NULL AS live, indexed_at IS NOT NULL AS indexed, created_at = modified_at AS first_version
     FROM documents WHERE tenant_id = ? ORDER BY path, deleted_at IS NULL, hash`,
  );
  const idToKey = new Map(docs.map((d) => [d.id as string, `${d.path as string}@${d.hash as string}`]));
  return {
    documents: docs.map(({ id: _, ...d }) => d),
    chunks: await rows(`SELECT hash, size FROM doc_chunks WHERE tenant_id = ? ORDER BY hash`),
    documentChunks: await rows(`SELECT doc_hash, seq, chunk_hash FROM document_chunks WHERE tenant_id = ? ORDER BY doc_hash, seq`),
    texts: await rows(`SELECT hash, status, extractor, text, note FROM doc_texts WHERE tenant_id = ? ORDER BY hash`),
    search: await rows(`SELECT path, hash, title, body FROM doc_search WHERE tenant_id = ? ORDER BY path`),
    terms: await rows(`SELECT term FROM doc_terms WHERE tenant_id = ? ORDER BY term`),
    edges: await rows(`SELECT src_path, src_hash, seq, alt, relation, target, scheme, node_key, node_type, label, kind FROM doc_graph_edges WHERE tenant_id = ? ORDER BY src_path, src_hash, seq, alt`),
    embeddings: (await rows(`SELECT object_id, content_hash, status FROM embeddings WHERE tenant_id = ? AND object_type = 'document'`))
      .map((e) => ({ doc: idToKey.get(e.object_id as string) ?? "gone", content_hash: e.content_hash, status: e.status }))
      .sort((a, b) => (a.doc < b.doc ? -1 : a.doc > b.doc ? 1 : 0)),
    collections: await rows(`SELECT name FROM doc_collections WHERE tenant_id = ? ORDER BY name`),
    snapshots: await rows(`SELECT s.label, e.path, e.doc_hash FROM doc_snapshots s JOIN doc_snapshot_entries e ON e.tenant_id = s.tenant_id AND e.snapshot_id = s.id WHERE s.tenant_id = ?`),
  };
}

/** An add's answer without its version and snapshot ids (new per version), saying only whether it made a snapshot. */
const answerOf = (r: { data: Record<string, unknown> } & Record<string, unknown>) => {
  const { id: _id, snapshot_id: snap, ...data } = r.data;
  const { data: _data, id: _top, snapshot_id: _snap, ...head } = r;
  return { ...head, data, snapshot: snap !== null };
};

/** Search answers reduced to what ranking decides. */
async function ranked(ctx: Ctx, query: string) {
  const r = await ok(ctx, "docs_query", { steps: [{ op: "search", params: { query, type: "keyword", limit: 20 } }] });
  return r.results.map((h: { path: string; hash: string; score: number; title: string; snippet: string }) => [h.path, h.hash, h.score, h.title, h.snippet]);
}

/** ctx whose D1 counts round trips: each batch, and each statement run on its own. */
function countingCtx(ctx: Ctx): { ctx: Ctx; trips: () => number } {
  let trips = 0;
  const real = new WeakMap<object, D1PreparedStatement>();
  const wrap = (s: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(s, {
      get(target, prop) {
        if (prop === "bind") return (...args: unknown[]) => wrap(target.bind(...args));
        const value = Reflect.get(target, prop) as unknown;
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (prop === "all" || prop === "run" || prop === "first" || prop === "raw") trips++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    real.set(proxy, s);
    return proxy;
  };
  const d1 = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "prepare") return (query: string) => wrap(target.prepare(query));
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) => {
          trips++;
          return target.batch(statements.map((s) => real.get(s) ?? s));
        };
      }
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { ctx: { ...ctx, d1 }, trips: () => trips };
}

describe("docs_execute: a run of adds", () => {
  it("stores and indexes exactly what the same adds one per call do, and answers the same", async () => {
    const one = await freshCtx();
    const many = await freshCtx();
    // Content already in the store before the run: the run dedupes against it.
    for (const ctx of [one, many]) await ok(ctx, "docs_execute", x(add("before.md", "# Alpha\nSee [beta](beta.md) to parse options and return the default value.\n")));

    const singly = [];
    for (const op of RUN) singly.push((await ok(one, "docs_execute", x(op))).results[0]);
    const together = await ok(many, "docs_execute", x(...RUN));
    await settle(one);
    await settle(many);

    expect(together).toMatchObject({ totalOps: RUN.length, succeeded: RUN.length, failed: 0 });
    expect(together.results.map(answerOf)).toEqual(singly.map((r, i) => ({ ...answerOf(r), stepIndex: i })));
    // The copy was deduplicated against the earlier version, the repeated path kept its first created_at.
    expect(together.results[2].bytes_stored).toBe(0);
    const a = await holdings(one);
    const b = await holdings(many);
    expect(b).toEqual(a);
    expect(a.edges.length).toBeGreaterThan(0);
    expect(a.documents.filter((d) => d.live === 1 && d.indexed === 1)).toHaveLength(6);
    for (const query of ["parse options default value", "alpha", "optoins"]) expect(await ranked(many, query)).toEqual(await ranked(one, query));
  });

  it("commits a run in a few round trips, in batches of bounded size", async () => {
    const base = await freshCtx();
    const { ctx, trips } = countingCtx(base);
    const ops = Array.from({ length: 40 }, (_, i) => add(`run/doc-${i}.md`, `# Doc ${i}\nWords of document ${i}, with [a link](doc-${(i + 1) % 40}.md).\n`));
    const before = trips();
    const r = await ok(ctx, "docs_execute", x(...ops));
    const used = trips() - before;
    await settle(base);
    expect(r.succeeded).toBe(40);
    // Read the store once, read stored extractions once, then commit about ten statements a
    // document in batches of at most INGEST_BATCH_STATEMENTS, besides the call's own bookkeeping.
    // One add per call took about ten round trips a document.
    expect(used).toBeLessThanOrEqual(Math.ceil((40 * 12) / INGEST_BATCH_STATEMENTS) + 10);
    expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND deleted_at IS NULL AND indexed_at IS NOT NULL`, base.tenantId)).toBe(40);
    expect(await count(`SELECT COUNT(*) AS n FROM doc_graph_edges WHERE tenant_id = ?`, base.tenantId)).toBeGreaterThanOrEqual(40);
  });

  it("reports each add's own failure: stops at it without continue_on_error, stores the others with it", async () => {
    const ctx = await freshCtx();
    const bad = add("../escape.md", "climbs out");
    const noContent = { op: "add", params: { name: "empty.md" } };
    const ops = [add("a.md", "# A\none"), bad, add("b.md", "# B\ntwo"), { op: "add", params: { name: "c.md", content: "x", content_base64: "eA==" } }, add("d.md", "# D\nfour"), noContent];

    const stopped = await call(ctx, "docs_execute", x(...ops));
    expect(stopped).toMatchObject({ isError: true, totalOps: 6, succeeded: 1, failed: 1, skipped: 4 });
    expect(stopped.results.map((r: { success: boolean }) => r.success)).toEqual([true, false]);
    expect(stopped.results[1].error.code).toBe("invalid_input");
    expect(stopped.results[1].error.message).toContain("'..'");
    expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ?`, ctx.tenantId)).toBe(1);

    const went = await call(ctx, "docs_execute", { ...x(...ops), continue_on_error: true });
    expect(went).toMatchObject({ isError: true, totalOps: 6, succeeded: 3, failed: 3, skipped: 0 });
    expect(went.results.map((r: { stepIndex: number; success: boolean }) => [r.stepIndex, r.success])).toEqual([
      [0, true],
      [1, false],
      [2, true],
      [3, false],
      [4, true],
      [5, false],
    ]);
    expect(went.results[3].error.message).toContain("not both");
    expect(went.results[5].error.message).toContain("content");
    expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND deleted_at IS NULL AND indexed_at IS NOT NULL`, ctx.tenantId)).toBe(3);
  });

  it("answers a failed commit for the adds it held, and keeps those committed before it", async () => {
    const base = await freshCtx();
    // The third write batch of the call fails, as a D1 error would.
    let batches = 0;
    const d1 = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === "batch") {
          return (statements: D1PreparedStatement[]) => {
            const isCommit = statements.some((s) => /insert into "documents"/i.test((s as unknown as { statement: string }).statement));
            if (isCommit && ++batches === 2) return Promise.reject(new Error("D1_ERROR: injected"));
            return target.batch(statements);
          };
        }
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const ctx = { ...base, d1 };
    const ops = Array.from({ length: 30 }, (_, i) => add(`f/doc-${i}.md`, `# Doc ${i}\ntext ${i}\n`));
    const r = await call(ctx, "docs_execute", { ...x(...ops), continue_on_error: true });
    await settle(base);
    const okSteps = r.results.filter((s: { success: boolean }) => s.success).map((s: { stepIndex: number }) => s.stepIndex);
    const failedSteps = r.results.filter((s: { success: boolean }) => !s.success);
    expect(failedSteps.length).toBeGreaterThan(0);
    expect(r.succeeded + r.failed).toBe(30);
    for (const f of failedSteps) expect(f.error.code).toBe("internal_error");
    // Exactly the adds answered ok are stored, each indexed.
    const stored = (await env.DB.prepare(`SELECT path FROM documents WHERE tenant_id = ? AND deleted_at IS NULL AND indexed_at IS NOT NULL`).bind(base.tenantId).all<{ path: string }>()).results.map(
      (d) => d.path,
    );
    expect(stored.sort()).toEqual(okSteps.map((i: number) => `f/doc-${i}.md`).sort());

    // Without continue_on_error the call stops at the first failed add.
    batches = 0;
    const stop = await call(ctx, "docs_execute", x(...ops.map((o, i) => add(`g/doc-${i}.md`, o.params.content))));
    expect(stop.results.at(-1).success).toBe(false);
    expect(stop.skipped).toBe(30 - stop.results.length);
    const storedG = await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND path LIKE 'g/%'`, base.tenantId);
    expect(storedG).toBe(stop.succeeded);
  });

  it("runs an add that uses $prev, and one of another op, in their place", async () => {
    const ctx = await freshCtx();
    const r = await ok(
      ctx,
      "docs_execute",
      x(add("p.md", "# P\npipe"), { op: "update", params: { hash: "$prev.hash", tags: ["piped"] } }, add("q.md", "# Q\nnext"), { op: "add", params: { name: "$prev.path", content: "# R" } }),
    );
    expect(r.results.map((s: { op: string; success: boolean }) => [s.op, s.success])).toEqual([
      ["add", true],
      ["update", true],
      ["add", true],
      ["add", true],
    ]);
    // The last add's name came from the add before it, so it replaced q.md.
    expect(r.results[3].data.path).toBe("q.md");
    expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND path = 'q.md'`, ctx.tenantId)).toBe(2);
  });
});
