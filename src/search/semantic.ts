/**
 * The semantic layer as the rest of the server sees it: which embedder and index are active,
 * queuing an object for embedding in the same batch as its write, embedding what is pending
 * (after the response, and from the scheduled backfill), and nearest-neighbour queries.
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { compiled, dbOf, jsonValues, statementOf } from "../db/client";
import { fitting, GroupCommit } from "../core/group-commit";
import { sha256Hex } from "../db/ids";
import { embeddings } from "../db/schema";
import { iso } from "../core/time";
import type { Env } from "../env";
import { DEFAULT_AI_MODEL, EmbeddingError, LocalHashEmbedder, WorkersAiEmbedder, type Embedder } from "./embedder";
import { EMBED_SOURCES, parseVectorId, vectorId, type EmbedObjectType } from "./sources";
import { type CachedAnswer, D1VectorIndex, type VectorIndex, type VectorMatch, VectorizeVectorIndex } from "./vector-index";

export interface SemanticLayer {
  embedder: Embedder;
  index: VectorIndex;
}

export type SemanticSelection = { layer: SemanticLayer; reason: "" } | { layer: null; reason: string };

/**
 * Production when both Workers AI and Vectorize are bound; the local embedder and D1 index when
 * neither is; off when switched off or half-configured (a model without its index, or the reverse,
 * would write vectors nobody can read).
 */
export function selectSemantic(env: Env): SemanticSelection {
  if (env.SEMANTIC_SEARCH === "off") return { layer: null, reason: "semantic search is switched off on this server (SEMANTIC_SEARCH=off)" };
  if (env.AI && env.VECTORS) {
    try {
      return { layer: { embedder: new WorkersAiEmbedder(env.AI, env.EMBEDDING_MODEL || DEFAULT_AI_MODEL), index: new VectorizeVectorIndex(env.VECTORS) }, reason: "" };
    } catch (err) {
      // An unknown EMBEDDING_MODEL: search stays up (lexically) and the reason reaches the caller.
      return { layer: null, reason: `semantic search is misconfigured: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
  if (env.AI || env.VECTORS) return { layer: null, reason: "semantic search is misconfigured: bind both AI and VECTORS, or neither for the local embedder" };
  return { layer: { embedder: new LocalHashEmbedder(), index: new D1VectorIndex(env.DB) }, reason: "" };
}

export interface EmbedRef {
  tenantId: string;
  type: EmbedObjectType;
  id: string;
}

/**
 * Marks an object as needing a vector for `text`, to go in the write's own batch. Unchanged text
 * keeps its state, so a tags-only edit does not re-embed.
 */
// Compiled once: every decision, note and change queues its embedding.
const queueRow = compiled(["tenant", "type", "id", "hash", "at"], (db, v) => {
  const e = embeddings;
  return (
    db
      .insert(e)
      // drizzle writes null for a column left out (SQLite has no DEFAULT in VALUES): model's default is spelled out.
      .values({ tenantId: v.tenant, objectType: v.type, objectId: v.id, contentHash: v.hash, status: "pending", model: "", attempts: 0, lastError: "", updatedAt: v.at })
      .onConflictDoUpdate({
        target: [e.tenantId, e.objectType, e.objectId],
        set: { contentHash: sql`excluded.content_hash`, status: "pending", attempts: 0, lastError: "", updatedAt: sql`excluded.updated_at` },
        setWhere: sql`${e.contentHash} <> excluded.content_hash`,
      })
  );
});

export async function queueEmbedding(d1: D1Database, ref: EmbedRef, text: string, now: Date): Promise<D1PreparedStatement> {
  return queueRow(d1, { tenant: ref.tenantId, type: ref.type, id: ref.id, hash: await sha256Hex(text), at: iso(now) });
}

/** A pending row's fields, keyed by SQL column name as embedRows takes them. */
const pendingFields = {
  tenant_id: embeddings.tenantId,
  object_type: embeddings.objectType,
  object_id: embeddings.objectId,
  content_hash: embeddings.contentHash,
};

/** `status = 'pending'` as a literal: embeddings_pending_idx and embeddings_tenant_pending_idx are partial (WHERE status = 'pending'). */
const isPending = sql`${embeddings.status} = 'pending'`;

/** How many of a tenant's objects of one type still wait for an embedding, as `n` (read through embeddings_tenant_pending_idx). */
export function pendingEmbeddings(d1: D1Database, tenantId: string, type: EmbedObjectType) {
  const e = embeddings;
  return dbOf({ d1 })
    .select({ n: sql<number>`COUNT(*)`.as("n") })
    .from(e)
    .where(and(eq(e.tenantId, tenantId), eq(e.objectType, type), isPending));
}

interface PendingRow {
  tenant_id: string;
  object_type: EmbedObjectType;
  object_id: string;
  content_hash: string;
}

export interface EmbedReport {
  embedded: number;
  failed: number;
  gone: number;
  error?: string;
}

/** Items grouped by tenant and object type, in order of first appearance. */
function byTenantAndType<T>(items: readonly T[], keyOf: (item: T) => [string, string]): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item).join("\u0000");
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  return [...groups.values()];
}

/**
 * Embeds the given pending rows; on failure the rows stay pending with the error recorded, for
 * the backfill. Never throws: it runs after the response.
 */
export async function embedRows(d1: D1Database, layer: SemanticLayer, rows: PendingRow[], now: Date): Promise<EmbedReport> {
  const report: EmbedReport = { embedded: 0, failed: 0, gone: 0 };
  for (const group of byTenantAndType(rows, (r) => [r.tenant_id, r.object_type])) await embedGroup(d1, layer, group, now, report);
  return report;
}

/** The source rows of `ids` (one tenant, one type), from which their texts and metadata are made. */
function sourceRead(d1: D1Database, tenantId: string, type: EmbedObjectType, ids: readonly string[]): D1PreparedStatement {
  // Hand SQL: each source's select is SQL text its module keeps for every object type.
  return d1.prepare(EMBED_SOURCES[type].select()).bind(tenantId, JSON.stringify(ids));
}

/**
 * One tenant's rows of one type, embedded in one call. `read` is their source rows when the
 * caller already has them (read with the pending rows, in one batch).
 */
async function embedGroup(d1: D1Database, layer: SemanticLayer, group: PendingRow[], now: Date, report: EmbedReport, read?: Array<Record<string, unknown>>): Promise<void> {
  const { tenant_id: tenantId, object_type: type } = group[0]!;
  const source = EMBED_SOURCES[type];
  let live: PendingRow[] = group;
  const db = dbOf({ d1 });
  const e = embeddings;
  const rowOf = (objectId: string) => and(eq(e.tenantId, tenantId), eq(e.objectType, type), eq(e.objectId, objectId));
  try {
    const found =
      read ??
      (
        await sourceRead(
          d1,
          tenantId,
          type,
          group.map((r) => r.object_id),
        ).all<Record<string, unknown>>()
      ).results;
    const wanted = new Set(group.map((r) => r.object_id));
    const byId = new Map(found.filter((r) => wanted.has(String(r.id))).map((r) => [String(r.id), r]));
    const gone = group.filter((r) => !byId.has(r.object_id));
    if (gone.length > 0) {
      await d1.batch(gone.map((r) => statementOf(d1, db.delete(e).where(rowOf(r.object_id)))));
      report.gone += gone.length;
    }
    live = group.filter((r) => byId.has(r.object_id));
    if (live.length === 0) return;
    const texts = live.map((r) => source.text(byId.get(r.object_id)!));
    const vectors = await layer.embedder.embed(texts);
    const hashes = await Promise.all(texts.map((t) => sha256Hex(t)));
    // The vector is of the object's current text, so that text's hash is recorded. The compare
    // on the hash read above leaves a row re-queued meanwhile pending for the next pass.
    const ready = live.map((r, i) =>
      statementOf(
        d1,
        db
          .update(e)
          .set({ status: "ready", contentHash: hashes[i], model: layer.embedder.model, lastError: "", updatedAt: iso(now) })
          .where(and(rowOf(r.object_id), eq(e.contentHash, r.content_hash))),
      ),
    );
    await layer.index.upsert(
      tenantId,
      live.map((r, i) => ({ id: vectorId(type, r.object_id), values: vectors[i]!, metadata: source.metadata(byId.get(r.object_id)!) })),
      { d1, statements: ready },
    );
    report.embedded += live.length;
  } catch (err) {
    // A refused input (not an outage) may be one bad text: embed the rows one by one, so a single
    // poisoned row fails alone instead of holding back its tenant's whole batch forever.
    if (err instanceof EmbeddingError && !err.transient && live.length > 1) {
      for (const row of live) await embedGroup(d1, layer, [row], now, report);
      return;
    }
    const message = (err instanceof Error ? err.message : String(err)).slice(0, 500);
    report.failed += live.length;
    report.error = message;
    try {
      await d1.batch(
        live.map((r) =>
          statementOf(
            d1,
            db
              .update(e)
              .set({ attempts: sql`${e.attempts} + 1`, lastError: message, updatedAt: iso(now) })
              .where(and(rowOf(r.object_id), isPending)),
          ),
        ),
      );
    } catch (inner) {
      console.error(`[embed] could not record failure: ${inner instanceof Error ? inner.message : String(inner)}`);
    }
  }
}

/**
 * Which of some objects (one tenant, one type) are pending, and their sources: two statements,
 * sent as one round trip. The sources of any no longer pending (embedded meanwhile) are read for
 * nothing, which costs less than a second trip.
 */
function pendingReads(d1: D1Database, tenantId: string, type: EmbedObjectType, ids: readonly string[]): [D1PreparedStatement, D1PreparedStatement] {
  const e = embeddings;
  const pending = statementOf(
    d1,
    dbOf({ d1 })
      .select(pendingFields)
      .from(e)
      .where(and(eq(e.tenantId, tenantId), eq(e.objectType, type), inArray(e.objectId, jsonValues(ids)), isPending)),
  );
  return [pending, sourceRead(d1, tenantId, type, ids)];
}

/** What pendingReads found for objects of one tenant and type, keyed as byTenantAndType groups them. */
interface KnownReads {
  ids: Set<string>;
  pending: PendingRow[];
  sources: Array<Record<string, unknown>>;
}

export type PrefetchedReads = Map<string, KnownReads>;

const kindKey = (tenantId: string, type: string) => `${tenantId}\u0000${type}`;

/**
 * The reads embedding `refs` starts with, as statements for the end of the write's own batch: they
 * then see exactly what it committed, and the embedding after the response skips a round trip.
 * `take` turns those statements' results (in order) into what embedAfterResponse accepts.
 */
export function embedReads(d1: D1Database, refs: readonly EmbedRef[]): { statements: D1PreparedStatement[]; take(results: D1Result[]): PrefetchedReads } {
  const kinds = byTenantAndType(refs, (r) => [r.tenantId, r.type]);
  return {
    statements: kinds.flatMap((kind) => pendingReads(d1, kind[0]!.tenantId, kind[0]!.type, [...new Set(kind.map((r) => r.id))])),
    take: (results) =>
      new Map(
        kinds.map((kind, i) => [
          kindKey(kind[0]!.tenantId, kind[0]!.type),
          { ids: new Set(kind.map((r) => r.id)), pending: results[2 * i]!.results as unknown as PendingRow[], sources: results[2 * i + 1]!.results as Array<Record<string, unknown>> },
        ]),
      ),
  };
}

/**
 * Several writes' prefetched reads as one. embedNow uses a kind's merged reads only when they cover
 * every object of that kind it embeds; otherwise it reads them all again.
 */
function mergeReads(parts: ReadonlyArray<PrefetchedReads | undefined>): PrefetchedReads {
  const merged: PrefetchedReads = new Map();
  for (const part of parts) {
    for (const [key, known] of part ?? []) {
      const into = merged.get(key) ?? { ids: new Set<string>(), pending: [], sources: [] };
      known.ids.forEach((id) => into.ids.add(id));
      into.pending.push(...known.pending);
      into.sources.push(...known.sources);
      merged.set(key, into);
    }
  }
  return merged;
}

/**
 * Embeds the named objects if they are pending: the after-response half of a write. `known` holds
 * what the write's own batch already read (embedReads); any other objects are read here.
 */
export async function embedNow(env: Env, refs: EmbedRef[], now: Date, known?: PrefetchedReads): Promise<EmbedReport | null> {
  const { layer } = selectSemantic(env);
  if (!layer || refs.length === 0) return null;
  const report: EmbedReport = { embedded: 0, failed: 0, gone: 0 };
  const d1 = env.DB;
  for (const kind of byTenantAndType(refs, (r) => [r.tenantId, r.type])) {
    const { tenantId, type } = kind[0]!;
    const ids = kind.map((r) => r.id);
    const read = known?.get(kindKey(tenantId, type));
    let rows: PendingRow[];
    let sources: Array<Record<string, unknown>>;
    if (read && ids.every((id) => read.ids.has(id))) ({ pending: rows, sources } = read);
    else {
      const [pending, found] = await d1.batch<Record<string, unknown>>(pendingReads(d1, tenantId, type, ids));
      rows = pending!.results as unknown as PendingRow[];
      sources = found!.results;
    }
    if (rows.length > 0) await embedGroup(d1, layer, rows, now, report, sources);
  }
  if (report.error) console.warn(`[embed] ${report.failed} object(s) left pending: ${report.error}`);
  return report;
}

interface Embedding {
  env: Env;
  refs: EmbedRef[];
  now: Date;
  known?: PrefetchedReads;
  resolve(): void;
  reject(err: unknown): void;
}

/** Objects embedded together at most: one embedder call and one index write per tenant and type among them. */
const EMBED_GROUP_REFS = 100;

/**
 * The isolate's writes waiting to be embedded after their responses. Writes that land while a
 * group is being embedded go together in the next group: one read of what is pending, one embedder
 * call and one index write for all of them, instead of each its own (group commit, as the chain's).
 */
const embedding = new GroupCommit<Embedding>({
  take: (waiting) =>
    fitting(
      waiting,
      (e) => e.refs.length,
      EMBED_GROUP_REFS,
      (e, first) => e.env === first.env,
    ),
  commit: async (_, group) => {
    await embedNow(
      group[0]!.env,
      group.flatMap((e) => e.refs),
      group[0]!.now,
      mergeReads(group.map((e) => e.known)),
    );
    for (const e of group) e.resolve();
  },
  fail: (group, err) => group.forEach((e) => e.reject(err)),
  stallMs: 10_000,
  groupsPerLeader: 10,
});

/**
 * Embeds the refs after the response; call once the write's batch has committed. `known` is what
 * that batch read for them (embedReads), if it did.
 */
export function embedAfterResponse(ctx: { env: Env; waitUntil(p: Promise<unknown>): void; clock: { now(): Date } }, refs: EmbedRef[], known?: PrefetchedReads): void {
  const done = new Promise<void>((resolve, reject) => ctx.waitUntil(embedding.put("embeddings", { env: ctx.env, refs, now: ctx.clock.now(), known, resolve, reject })));
  ctx.waitUntil(done.catch((err) => console.error(`[embed] ${refs.map((r) => `${r.type} ${r.id}`).join(", ")}: ${String(err)}`)));
}

/** Rows per backfill run; the cron runs every five minutes, so a large backlog drains over several runs. */
export const BACKFILL_BATCH = 200;

/**
 * The scheduled half: re-queues vectors made by another model (after a model change), then
 * embeds the oldest pending rows, least-tried first so one poisoned row cannot starve the rest.
 */
export async function backfillEmbeddings(env: Env, now: Date, limit = BACKFILL_BATCH): Promise<string> {
  const { layer, reason } = selectSemantic(env);
  if (!layer) return `skipped: ${reason}`;
  // Hand SQL: a bounded update picks its rows by rowid, which the schema does not declare.
  const requeued = await env.DB.prepare(
    `UPDATE embeddings SET status = 'pending', attempts = 0, updated_at = ?
     WHERE rowid IN (SELECT rowid FROM embeddings WHERE status = 'ready' AND model <> ? LIMIT ?)`,
  )
    .bind(iso(now), layer.embedder.model, limit)
    .run();
  const pending = (await dbOf({ d1: env.DB }).select(pendingFields).from(embeddings).where(isPending).orderBy(asc(embeddings.attempts), asc(embeddings.updatedAt)).limit(limit)) as PendingRow[];
  const report = await embedRows(env.DB, layer, pending, now);
  const parts = [`${report.embedded} embedded`, `${report.failed} still pending`, `${report.gone} dropped (object gone)`];
  if (requeued.meta.changes) parts.push(`${requeued.meta.changes} re-queued for ${layer.embedder.model}`);
  if (report.error) parts.push(`last error: ${report.error}`);
  return parts.join(", ");
}

export interface NearestOptions {
  type: EmbedObjectType;
  topK: number;
  filter?: Record<string, string>;
  minSimilarity: number;
}

/** The tenant's objects of one type nearest to `q`, best first, at or above minSimilarity. */
export async function nearest(layer: SemanticLayer, tenantId: string, q: string, opts: NearestOptions): Promise<Near[]> {
  return nearestTo(layer, tenantId, await embedQuery(layer, q), opts);
}

export interface Near {
  id: string;
  similarity: number;
}

/** The query's vector, made once whether the cached vectors or the index answer it. */
export async function embedQuery(layer: SemanticLayer, q: string): Promise<number[]> {
  const [values] = await layer.embedder.embed([q]);
  return values!;
}

/** `nearest` for a query already embedded. */
export async function nearestTo(layer: SemanticLayer, tenantId: string, values: number[], opts: NearestOptions): Promise<Near[]> {
  return nearOf(await layer.index.query(tenantId, values, queryOf(opts)), opts);
}

/**
 * `nearestTo` answered from the vectors this isolate holds, without I/O: null when the index holds
 * none here. The answer stands only when `check`, run in the caller's D1 batch, is `confirmed`.
 */
export function cachedNearest(layer: SemanticLayer, tenantId: string, values: number[], opts: NearestOptions): ({ near: Near[] } & Omit<CachedAnswer, "matches">) | null {
  const answer = layer.index.cached?.(tenantId, values, queryOf(opts));
  return answer ? { near: nearOf(answer.matches, opts), check: answer.check, confirmed: answer.confirmed } : null;
}

const queryOf = (opts: NearestOptions) => ({ topK: opts.topK, filter: { object_type: opts.type, ...opts.filter } });

function nearOf(matches: VectorMatch[], opts: NearestOptions): Near[] {
  const out: Near[] = [];
  for (const m of matches) {
    const parsed = parseVectorId(m.id);
    if (parsed?.type === opts.type && m.score >= opts.minSimilarity) out.push({ id: parsed.objectId, similarity: m.score });
  }
  return out;
}
