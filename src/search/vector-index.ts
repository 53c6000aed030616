/**
 * Where vectors live and how the nearest are found. Production uses a Vectorize index with one
 * namespace per tenant; locally vectors sit in D1 (`local_vectors`) and a query scores the
 * tenant's vectors by cosine similarity. Both take the tenant as the namespace on every call, so
 * a query can only ever see the calling tenant's vectors.
 */
import { and, eq, sql } from "drizzle-orm";
import { dbOf, statementOf } from "../db/client";
import { bindingOf } from "../db/coalesce";
import { localVectorGenerations, localVectors } from "../db/schema";
import { TopK } from "./top-k";

/** Metadata kept with a vector and usable as an equality filter. */
export type VectorMetadata = Record<string, string>;

export interface VectorRecord {
  id: string;
  values: number[];
  metadata: VectorMetadata;
}

export interface VectorMatch {
  id: string;
  /** Cosine similarity, -1…1 (vectors are unit length, so this is their dot product). */
  score: number;
}

export interface VectorQuery {
  topK: number;
  /** Every key must equal its value. */
  filter?: VectorMetadata;
}

export interface VectorIndex {
  readonly kind: "local" | "vectorize";
  /**
   * Writes the vectors, then `then`'s statements: the local index sends those in the batch of its
   * last rows (one round trip, and the rows and the statements land together); Vectorize, whose
   * writes are not D1's, runs them once its upserts are accepted.
   */
  upsert(namespace: string, vectors: VectorRecord[], then?: AfterUpsert): Promise<void>;
  query(namespace: string, values: number[], q: VectorQuery): Promise<VectorMatch[]>;
  /**
   * The answer `query` would give from vectors this isolate already holds, without any I/O, or
   * null when none are held. It stands only if `check`, run in the caller's own D1 batch, shows
   * the vectors unchanged (`confirmed` on its result); otherwise `query` gives the answer.
   */
  cached?(namespace: string, values: number[], q: VectorQuery): CachedAnswer | null;
  deleteByIds(namespace: string, ids: string[]): Promise<void>;
}

/** D1 statements a caller runs once its vectors are written (the embeddings' status rows). */
export interface AfterUpsert {
  d1: D1Database;
  statements: D1PreparedStatement[];
}

export interface CachedAnswer {
  matches: VectorMatch[];
  check: D1PreparedStatement;
  confirmed(result: D1Result): boolean;
}

/** Vectorize limits (Cloudflare's published limits), enforced before a call so errors are ours. */
export const VECTORIZE_LIMITS = {
  maxTopK: 100,
  upsertBatch: 1000,
  deleteBatch: 1000,
  idBytes: 64,
  namespaceBytes: 64,
  metadataBytes: 10 * 1024,
} as const;

const byteLength = (s: string) => new TextEncoder().encode(s).length;

/** Metadata keys are code-chosen; keeping them to identifiers lets the local index filter in SQL. */
const METADATA_KEY = /^[a-z_][a-z0-9_]*$/;

function checkRecord(namespace: string, v: VectorRecord): void {
  if (byteLength(namespace) > VECTORIZE_LIMITS.namespaceBytes) throw new Error(`vector namespace over ${VECTORIZE_LIMITS.namespaceBytes} bytes`);
  if (byteLength(v.id) > VECTORIZE_LIMITS.idBytes) throw new Error(`vector id over ${VECTORIZE_LIMITS.idBytes} bytes: ${v.id.slice(0, 80)}`);
  if (byteLength(JSON.stringify(v.metadata)) > VECTORIZE_LIMITS.metadataBytes) throw new Error(`vector metadata over ${VECTORIZE_LIMITS.metadataBytes} bytes`);
  for (const key of Object.keys(v.metadata)) if (!METADATA_KEY.test(key)) throw new Error(`bad metadata key ${key}`);
}

function checkFilter(filter: VectorMetadata | undefined): void {
  for (const key of Object.keys(filter ?? {})) if (!METADATA_KEY.test(key)) throw new Error(`bad filter key ${key}`);
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Vectors are stored as text: base64 of a float32 scale followed by one signed byte per
 * dimension (value ≈ byte × scale). The scan is bound by how many bytes D1 hands back, so a
 * quarter of float32's size makes it about four times faster, at a cosine error near 0.005.
 * Text, not a BLOB, because D1 returns BLOBs as arrays of byte numbers, slower still to read.
 */
export function encodeVector(values: number[]): string {
  let max = 0;
  for (const x of values) max = Math.max(max, Math.abs(x));
  const scale = max / 127 || 1;
  const bytes = new Uint8Array(4 + values.length);
  new DataView(bytes.buffer).setFloat32(0, scale, true);
  for (let i = 0; i < values.length; i++) bytes[4 + i] = Math.round(values[i]! / scale) & 0xff;
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function decodeBytes(text: string): { scale: number; q: Int8Array } {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return { scale: new DataView(bytes.buffer).getFloat32(0, true), q: new Int8Array(bytes.buffer, 4) };
}

/** The stored vector, dequantized. */
export function decodeVector(text: string): Float32Array {
  const { scale, q } = decodeBytes(text);
  return Float32Array.from(q, (x) => x * scale);
}

/** A namespace's vectors decoded once: int8 values back to back, with each vector's scale and span. */
interface LoadedNamespace {
  generation: number;
  ids: string[];
  metadata: VectorMetadata[];
  scales: Float32Array;
  offsets: Int32Array;
  lengths: Int32Array;
  values: Int8Array;
  /** Rows a filter keeps at a query length, found once per generation (a code search asks for one scope on every query). */
  candidates: Map<string, Int32Array>;
  bytes: number;
}

/**
 * Decoded namespaces kept in this isolate, least recently used first. Reading and decoding every
 * vector of a tenant is what made a local query linear in D1 traffic (about 25 us a vector); with
 * the vectors in memory a query costs one small read (the generation) and the dot products.
 */
const loaded = new Map<string, LoadedNamespace>();
let loadedBytes = 0;
/** Workers give an isolate 128 MB; the cache keeps well under half of it. */
export const LOCAL_VECTOR_CACHE_BYTES = 48 * 1024 * 1024;

function remember(namespace: string, entry: LoadedNamespace): void {
  const old = loaded.get(namespace);
  if (old) {
    loadedBytes -= old.bytes;
    loaded.delete(namespace);
  }
  if (entry.bytes > LOCAL_VECTOR_CACHE_BYTES) return;
  loaded.set(namespace, entry);
  loadedBytes += entry.bytes;
  evictOverBudget();
}

/** Drops least recently used namespaces until the cache is within its budget. */
function evictOverBudget(): void {
  for (const [key, value] of loaded) {
    if (loadedBytes <= LOCAL_VECTOR_CACHE_BYTES) break;
    loaded.delete(key);
    loadedBytes -= value.bytes;
  }
}

/** Candidate lists kept per namespace; past this the oldest goes (each is 4 bytes a matching row). */
const MAX_CANDIDATE_LISTS = 16;

/** The rows of `ns` of this length whose metadata has every key of `filter`, in row order. */
function candidatesOf(namespace: string, ns: LoadedNamespace, filter: [string, string][], length: number): Int32Array {
  const key = JSON.stringify([length, [...filter].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
  const kept = ns.candidates.get(key);
  if (kept) return kept;
  const rows: number[] = [];
  for (let i = 0; i < ns.ids.length; i++) {
    // A vector of another length was made by another embedder; the backfill replaces it.
    if (ns.lengths[i] !== length) continue;
    const metadata = ns.metadata[i]!;
    if (filter.every(([k, v]) => metadata[k] === v)) rows.push(i);
  }
  const list = Int32Array.from(rows);
  for (const [oldKey, old] of ns.candidates) {
    if (ns.candidates.size < MAX_CANDIDATE_LISTS) break;
    ns.candidates.delete(oldKey);
    ns.bytes -= old.byteLength;
    if (loaded.get(namespace) === ns) loadedBytes -= old.byteLength;
  }
  ns.candidates.set(key, list);
  ns.bytes += list.byteLength;
  if (loaded.get(namespace) === ns) {
    loadedBytes += list.byteLength;
    evictOverBudget();
  }
  return list;
}

/**
 * The query's nonzero components (dimension, value). The local embedder's vectors are mostly
 * zeros (a question hashes to a hundred or two of 512 dimensions), so the scan multiplies only
 * these. Every sum comes out exactly as the dense loop makes it: the skipped products are ±0, and
 * adding ±0 to a sum that starts at +0 changes nothing.
 */
function sparse(query: Float32Array): { dims: Int32Array; weights: Float64Array } {
  const dims: number[] = [];
  for (let j = 0; j < query.length; j++) if (query[j] !== 0) dims.push(j);
  return { dims: Int32Array.from(dims), weights: Float64Array.from(dims, (j) => query[j]!) };
}

const runAfter = async ({ d1, statements }: AfterUpsert): Promise<void> => {
  if (statements.length > 0) await d1.batch(statements);
};

/** Vectors in D1, scored in the Worker: exact search, linear in the tenant's filtered vectors, cached per isolate. */
export class D1VectorIndex implements VectorIndex {
  readonly kind = "local" as const;
  constructor(private readonly d1: D1Database) {}

  /** Moves the namespace's generation, in the same batch as the rows it changes. */
  private bump(namespace: string): D1PreparedStatement {
    const g = localVectorGenerations;
    return statementOf(
      this.d1,
      dbOf({ d1: this.d1 })
        .insert(g)
        .values({ namespace, generation: 1 })
        .onConflictDoUpdate({ target: g.namespace, set: { generation: sql`${g.generation} + 1` } }),
    );
  }

  async upsert(namespace: string, vectors: VectorRecord[], then?: AfterUpsert): Promise<void> {
    vectors.forEach((v) => checkRecord(namespace, v));
    // Hand SQL: INSERT OR REPLACE, which drizzle cannot say.
    const stmt = this.d1.prepare(`INSERT OR REPLACE INTO local_vectors (namespace, id, vector, metadata) VALUES (?, ?, ?, ?)`);
    const batches = chunks(vectors, VECTORIZE_LIMITS.upsertBatch);
    const joined = then !== undefined && bindingOf(then.d1) === bindingOf(this.d1);
    for (const [i, batch] of batches.entries()) {
      const last = i === batches.length - 1;
      await this.d1.batch([...batch.map((v) => stmt.bind(namespace, v.id, encodeVector(v.values), JSON.stringify(v.metadata))), this.bump(namespace), ...(last && joined ? then.statements : [])]);
    }
    if (then && (!joined || batches.length === 0)) await runAfter(then);
  }

  private generationQuery(namespace: string) {
    return dbOf({ d1: this.d1 }).select({ generation: localVectorGenerations.generation }).from(localVectorGenerations).where(eq(localVectorGenerations.namespace, namespace));
  }

  private async load(namespace: string): Promise<LoadedNamespace> {
    // One batch, so the generation read describes exactly the rows read with it.
    const [gen, rows] = await this.d1.batch<Record<string, unknown>>([
      statementOf(this.d1, this.generationQuery(namespace)),
      statementOf(
        this.d1,
        dbOf({ d1: this.d1 }).select({ id: localVectors.id, vector: localVectors.vector, metadata: localVectors.metadata }).from(localVectors).where(eq(localVectors.namespace, namespace)),
      ),
    ]);
    const list = rows!.results as { id: string; vector: string; metadata: string }[];
    const decoded = list.map((r) => decodeBytes(r.vector));
    const total = decoded.reduce((n, d) => n + d.q.length, 0);
    const entry: LoadedNamespace = {
      generation: Number((gen!.results[0] as { generation?: number } | undefined)?.generation ?? 0),
      ids: list.map((r) => r.id),
      metadata: list.map((r) => JSON.parse(r.metadata) as VectorMetadata),
      scales: new Float32Array(list.length),
      offsets: new Int32Array(list.length),
      lengths: new Int32Array(list.length),
      values: new Int8Array(total),
      candidates: new Map(),
      bytes: 0,
    };
    let at = 0;
    decoded.forEach((d, i) => {
      entry.scales[i] = d.scale;
      entry.offsets[i] = at;
      entry.lengths[i] = d.q.length;
      entry.values.set(d.q, at);
      at += d.q.length;
    });
    entry.bytes = total + list.length * 12 + list.reduce((n, r) => n + r.id.length * 2 + r.metadata.length * 2 + 64, 0);
    remember(namespace, entry);
    return entry;
  }

  async query(namespace: string, values: number[], q: VectorQuery): Promise<VectorMatch[]> {
    checkFilter(q.filter);
    const gen = await this.generationQuery(namespace).get();
    let ns = loaded.get(namespace);
    if (ns && ns.generation === (gen?.generation ?? 0)) touch(namespace, ns);
    else ns = await this.load(namespace);
    return scan(namespace, ns, values, q);
  }

  cached(namespace: string, values: number[], q: VectorQuery): CachedAnswer | null {
    checkFilter(q.filter);
    const ns = loaded.get(namespace);
    if (!ns) return null;
    touch(namespace, ns);
    return {
      matches: scan(namespace, ns, values, q),
      check: statementOf(this.d1, this.generationQuery(namespace)),
      confirmed: (result) => Number((result.results[0] as { generation?: number } | undefined)?.generation ?? 0) === ns.generation,
    };
  }

  async deleteByIds(namespace: string, ids: string[]): Promise<void> {
    const db = dbOf({ d1: this.d1 });
    for (const batch of chunks(ids, VECTORIZE_LIMITS.deleteBatch)) {
      await this.d1.batch([...batch.map((id) => statementOf(this.d1, db.delete(localVectors).where(and(eq(localVectors.namespace, namespace), eq(localVectors.id, id))))), this.bump(namespace)]);
    }
  }
}

/** Most recently used goes to the back of the eviction order. */
function touch(namespace: string, ns: LoadedNamespace): void {
  loaded.delete(namespace);
  loaded.set(namespace, ns);
}

/** The best `q.topK` of a loaded namespace's vectors for the query, by dot product. */
function scan(namespace: string, ns: LoadedNamespace, values: number[], q: VectorQuery): VectorMatch[] {
  // Stored scores were always of the float32 query: rounding it keeps every score as it was.
  const query = Float32Array.from(values);
  const rows = candidatesOf(namespace, ns, Object.entries(q.filter ?? {}), query.length);
  const { dims, weights } = sparse(query);
  const { ids, offsets, scales, values: stored } = ns;
  const best = new TopK(Math.min(q.topK, VECTORIZE_LIMITS.maxTopK), (row) => ids[row]!);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    const off = offsets[row]!;
    let dot = 0;
    for (let k = 0; k < dims.length; k++) dot += stored[off + dims[k]!]! * weights[k]!;
    best.offer(row, dot * scales[row]!);
  }
  return best.take().map((m) => ({ id: ids[m.ref]!, score: m.score }));
}

/** The slice of the Vectorize (V2) binding this adapter uses. */
export interface VectorizeBinding {
  upsert(vectors: { id: string; values: number[]; namespace?: string; metadata?: Record<string, string> }[]): Promise<unknown>;
  query(
    vector: number[],
    options: { topK: number; namespace: string; filter?: Record<string, string>; returnValues: boolean; returnMetadata: "none" },
  ): Promise<{ matches: { id: string; score: number }[]; count: number }>;
  deleteByIds(ids: string[]): Promise<unknown>;
}

/**
 * Vectorize, one namespace per tenant. Namespaces filter before topK is taken, so a tenant's
 * query ranks only its own vectors. Other filters need metadata indexes created before vectors
 * are inserted (docs/operations.md: Deploying). Writes become queryable a few seconds after upsert.
 */
export class VectorizeVectorIndex implements VectorIndex {
  readonly kind = "vectorize" as const;
  constructor(private readonly index: VectorizeBinding) {}

  async upsert(namespace: string, vectors: VectorRecord[], then?: AfterUpsert): Promise<void> {
    vectors.forEach((v) => checkRecord(namespace, v));
    for (const batch of chunks(vectors, VECTORIZE_LIMITS.upsertBatch)) {
      await this.index.upsert(batch.map((v) => ({ id: v.id, values: v.values, namespace, metadata: v.metadata })));
    }
    if (then) await runAfter(then);
  }

  async query(namespace: string, values: number[], q: VectorQuery): Promise<VectorMatch[]> {
    checkFilter(q.filter);
    const filter = q.filter && Object.keys(q.filter).length > 0 ? q.filter : undefined;
    const res = await this.index.query(values, {
      topK: Math.min(q.topK, VECTORIZE_LIMITS.maxTopK),
      namespace,
      ...(filter ? { filter } : {}),
      // Values or metadata would cap topK at 20; ids and scores are all the ranking needs.
      returnValues: false,
      returnMetadata: "none",
    });
    return res.matches.map((m) => ({ id: m.id, score: m.score }));
  }

  /** Vector ids embed the object's UUID, unique across tenants, so deleting by id cannot reach another tenant's vector. */
  async deleteByIds(_namespace: string, ids: string[]): Promise<void> {
    for (const batch of chunks(ids, VECTORIZE_LIMITS.deleteBatch)) await this.index.deleteByIds(batch);
  }
}
