/**
 * The semantic layer's adapters: the local and Workers AI embedders, the D1 and Vectorize vector
 * indexes, rank fusion, adapter selection, and the write → outage → backfill path through the
 * real tools. Workers AI and Vectorize have no local simulator, so they are played by stand-ins
 * that follow the documented binding API (and refuse what the real services refuse).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runMaintenance } from "../../src/cron/maintenance";
import type { Env } from "../../src/env";
import type { Ctx } from "../../src/core/context";
import type { AiBinding } from "../../src/llm/workers-ai";
import { EmbeddingError, LocalHashEmbedder, MAX_EMBED_CHARS, WorkersAiEmbedder } from "../../src/search/embedder";
import { reciprocalRankFusion, RRF_K } from "../../src/search/hybrid";
import { backfillEmbeddings, selectSemantic } from "../../src/search/semantic";
import { D1VectorIndex, decodeVector, encodeVector, VectorizeVectorIndex, type VectorizeBinding, type VectorRecord } from "../../src/search/vector-index";
import { newWorld, ok, settle, type Structured, type World } from "../support/helpers";
import { withStandIns } from "../support/env-stand-ins";

const T0 = "2030-03-01T00:00:00.000Z";
const world = (name: string) => newWorld(`sad-${name}`, { start: T0 });
const ids = (items: Structured[]) => items.map((i) => i.id as string);
const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const norm = (v: number[]) => Math.sqrt(dot(v, v));
const unit = (...xs: number[]) => xs.map((x) => x / norm(xs));
const unitOf = (xs: number[]) => (norm(xs) === 0 ? xs : unit(...xs));
const BGE_BASE = "@cf/baai/bge-base-en-v1.5";
const CAPACITY = "3040: Capacity temporarily exceeded, please try again.";

// ---------------------------------------------------------------------------------------------
// Stand-ins for the Workers AI and Vectorize bindings, following the documented API
// (reference: workers-platform.md, "Vectorize and Workers AI").
// ---------------------------------------------------------------------------------------------

/** Dimensions of the Workers AI BGE text-embedding models, as documented (kept apart from src on purpose). */
const STANDIN_MODELS: Record<string, number> = {
  "@cf/baai/bge-small-en-v1.5": 384,
  "@cf/baai/bge-base-en-v1.5": 768,
  "@cf/baai/bge-large-en-v1.5": 1024,
};

/**
 * A tiny "meaning" for the stand-in model: synonyms share a concept, so related texts with no
 * word in common get similar vectors (what a real model does, and what lexical search cannot).
 */
const CONCEPTS: Record<string, string> = {
  automobile: "car",
  vehicle: "car",
  cars: "car",
  motor: "engine",
  engines: "engine",
  servicing: "maintenance",
  upkeep: "maintenance",
  service: "maintenance",
};

function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Deterministic bag-of-concepts vector, deliberately not unit length (the adapter normalizes). */
function conceptVector(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const w of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const h = fnv(CONCEPTS[w] ?? w);
    v[h % dims]! += h & 0x80000000 ? -3 : 3;
  }
  return v;
}

/** `env.AI` for text embeddings: `run(model, { text: string[] })` → `{ shape: [n, dims], data }`. */
class WorkersAiStandIn implements AiBinding {
  readonly calls: { model: string; texts: string[] }[] = [];
  /** While set, every call fails with this message (an outage). */
  down: string | null = null;
  /** The next calls fail with these messages, one each. */
  readonly failNext: string[] = [];
  /** Replaces a healthy response (to play a misbehaving model). */
  respond: ((texts: string[], dims: number) => unknown) | null = null;

  async run(model: string, input: { text: string[] }): Promise<unknown> {
    const texts = input.text;
    this.calls.push({ model, texts: [...texts] });
    const dims = STANDIN_MODELS[model];
    if (!dims) throw new Error(`5007: No such model ${model} or task`);
    if (this.down) throw new Error(this.down);
    const next = this.failNext.shift();
    if (next) throw new Error(next);
    if (!Array.isArray(texts) || texts.length === 0 || texts.length > 100) throw new Error(`5006: Invalid input: text must hold 1 to 100 strings, got ${texts.length}`);
    if (texts.some((t) => typeof t !== "string" || t.length === 0)) throw new Error("5006: Invalid input: text must not be empty");
    if (this.respond) return this.respond(texts, dims);
    return { shape: [texts.length, dims], data: texts.map((t) => conceptVector(t, dims)) };
  }
}

type MetaValue = string | number | boolean;
type FilterOp = { $eq?: MetaValue; $ne?: MetaValue; $in?: MetaValue[]; $nin?: MetaValue[] };
interface StoredVector {
  id: string;
  values: number[];
  namespace?: string;
  metadata: Record<string, MetaValue>;
}
interface StandInQueryOptions {
  topK?: number;
  namespace?: string;
  filter?: Record<string, MetaValue | FilterOp>;
  returnValues?: boolean;
  returnMetadata?: boolean | "none" | "indexed" | "all";
}

const bytes = (s: string) => new TextEncoder().encode(s).length;

/**
 * A Vectorize (V2) index: ids are unique across the index (deleteByIds takes no namespace),
 * namespaces and metadata filters apply before topK, topK ≤ 100 and ≤ 20 with values or all
 * metadata, ≤ 1,000 vectors per upsert, dimensions fixed by the index config, and a filter only
 * sees properties that have a metadata index.
 */
class VectorizeStandIn implements VectorizeBinding {
  readonly vectors = new Map<string, StoredVector>();
  readonly upserts: StoredVector[][] = [];
  readonly queries: StandInQueryOptions[] = [];
  readonly deletes: string[][] = [];

  constructor(readonly config: { dimensions: number; metadataIndexes: string[] } = { dimensions: 768, metadataIndexes: ["object_type", "project_id", "kind"] }) {}

  async upsert(vectors: { id: string; values: number[]; namespace?: string; metadata?: Record<string, MetaValue> }[]): Promise<{ mutationId: string }> {
    if (vectors.length > 1000) throw new Error(`VECTOR_UPSERT_ERROR: ${vectors.length} vectors in one call; a Worker may upsert at most 1000`);
    for (const v of vectors) {
      if (v.values.length !== this.config.dimensions) throw new Error(`VECTOR_UPSERT_ERROR: vector ${v.id} has ${v.values.length} dimensions; the index has ${this.config.dimensions}`);
      if (bytes(v.id) > 64) throw new Error(`VECTOR_UPSERT_ERROR: id over 64 bytes`);
      if (v.namespace !== undefined && bytes(v.namespace) > 64) throw new Error(`VECTOR_UPSERT_ERROR: namespace over 64 bytes`);
      if (bytes(JSON.stringify(v.metadata ?? {})) > 10 * 1024) throw new Error(`VECTOR_UPSERT_ERROR: metadata over 10 KiB`);
    }
    const stored = vectors.map((v) => ({ id: v.id, values: [...v.values], namespace: v.namespace, metadata: { ...(v.metadata ?? {}) } }));
    this.upserts.push(stored);
    for (const v of stored) this.vectors.set(v.id, v);
    return { mutationId: crypto.randomUUID() };
  }

  async query(
    vector: number[],
    options: StandInQueryOptions,
  ): Promise<{ matches: { id: string; score: number; namespace?: string; values?: number[]; metadata?: Record<string, MetaValue> }[]; count: number }> {
    this.queries.push(structuredClone(options));
    const topK = options.topK ?? 5;
    const returnValues = options.returnValues ?? false;
    const returnMetadata = options.returnMetadata ?? "none";
    if (vector.length !== this.config.dimensions) throw new Error(`VECTOR_QUERY_ERROR: query has ${vector.length} dimensions; the index has ${this.config.dimensions}`);
    if (!Number.isInteger(topK) || topK < 1 || topK > 100) throw new Error(`VECTOR_QUERY_ERROR: topK must be 1 to 100, got ${topK}`);
    if ((returnValues || returnMetadata === "all" || returnMetadata === true) && topK > 20) {
      throw new Error(`VECTOR_QUERY_ERROR: topK must be at most 20 when returnValues is true or returnMetadata is "all", got ${topK}`);
    }
    const qn = norm(vector);
    const matches = [...this.vectors.values()]
      .filter((v) => options.namespace === undefined || v.namespace === options.namespace)
      .filter((v) => this.matchesFilter(v, options.filter ?? {}))
      .map((v) => ({ v, score: qn === 0 || norm(v.values) === 0 ? 0 : dot(vector, v.values) / (qn * norm(v.values)) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, topK)
      .map(({ v, score }) => ({
        id: v.id,
        score,
        namespace: v.namespace,
        ...(returnValues ? { values: v.values } : {}),
        ...(returnMetadata === "all" || returnMetadata === true ? { metadata: v.metadata } : {}),
        ...(returnMetadata === "indexed" ? { metadata: Object.fromEntries(Object.entries(v.metadata).filter(([k]) => this.config.metadataIndexes.includes(k))) } : {}),
      }));
    return { matches, count: matches.length };
  }

  async deleteByIds(ids: string[]): Promise<{ mutationId: string }> {
    if (ids.length > 1000) throw new Error(`VECTOR_DELETE_ERROR: ${ids.length} ids in one call; at most 1000`);
    this.deletes.push([...ids]);
    for (const id of ids) this.vectors.delete(id);
    return { mutationId: crypto.randomUUID() };
  }

  private matchesFilter(v: StoredVector, filter: Record<string, MetaValue | FilterOp>): boolean {
    return Object.entries(filter).every(([key, cond]) => {
      // A property without a metadata index is invisible to filters.
      if (!this.config.metadataIndexes.includes(key)) return false;
      const value = v.metadata[key];
      const op: FilterOp = typeof cond === "object" ? cond : { $eq: cond };
      if (op.$eq !== undefined && value !== op.$eq) return false;
      if (op.$ne !== undefined && value === op.$ne) return false;
      if (op.$in !== undefined && !op.$in.includes(value as MetaValue)) return false;
      if (op.$nin !== undefined && op.$nin.includes(value as MetaValue)) return false;
      return true;
    });
  }
}

/** The ctx's env with both production bindings: selectSemantic picks Workers AI + Vectorize. */
function production(ctx: Ctx, ai: AiBinding, vectors: VectorizeBinding): Ctx {
  return { ...ctx, env: withStandIns(ctx.env, { AI: ai, VECTORS: vectors }) };
}

const embeddingRow = (tenantId: string, id: string) =>
  env.DB.prepare(`SELECT status, model, attempts, last_error FROM embeddings WHERE tenant_id = ? AND object_type = 'note' AND object_id = ?`)
    .bind(tenantId, id)
    .first<{ status: string; model: string; attempts: number; last_error: string }>();

// ---------------------------------------------------------------------------------------------

describe("LocalHashEmbedder", () => {
  const local = new LocalHashEmbedder();

  it("is deterministic, 512-dimensional and unit length", async () => {
    expect(local).toMatchObject({ model: "local-hash-512", dims: 512 });
    const text = "Deploy the worker with wrangler from CI after every merge.";
    const [a, b] = await local.embed([text, text]);
    const [c] = await new LocalHashEmbedder().embed([text]);
    expect(a).toHaveLength(512);
    expect(a).toEqual(b);
    expect(a).toEqual(c);
    for (const v of await local.embed([text, "x", "Ünïcödé and 123 numbers", "a ".repeat(5000)])) {
      expect(Math.abs(norm(v) - 1)).toBeLessThan(1e-6);
    }
  });

  it("embeds empty (or wordless) text as the zero vector, similar to nothing", async () => {
    const [empty, punctuation, other] = await local.embed(["", " ...!? ", "anything at all"]);
    expect(empty).toHaveLength(512);
    expect(empty!.every((x) => x === 0)).toBe(true);
    expect(punctuation!.every((x) => x === 0)).toBe(true);
    expect(dot(empty!, other!)).toBe(0);
  });

  it("puts inflections of the same words closer than unrelated text", async () => {
    const [deploying, deployment, banana] = await local.embed(["deploying to production", "deployment to prod", "banana smoothie recipe"]);
    const kin = dot(deploying!, deployment!);
    const unrelated = dot(deploying!, banana!);
    expect(kin).toBeGreaterThan(unrelated + 0.2);
    expect(kin).toBeGreaterThan(local.minSimilarity);
    expect(Math.abs(unrelated)).toBeLessThan(local.minSimilarity);
  });

  it("folds accents and case: Café and cafe are the same word", async () => {
    const [accented, plain, shouted] = await local.embed(["Café crème", "cafe creme", "CAFE CREME"]);
    expect(accented).toEqual(plain);
    expect(shouted).toEqual(plain);
  });

  it("embeds only the first MAX_EMBED_CHARS characters", async () => {
    const head = "word ".repeat(MAX_EMBED_CHARS / 5);
    const [cut, longer] = await local.embed([head, `${head}completely different tail`]);
    expect(longer).toEqual(cut);
  });
});

describe("WorkersAiEmbedder", () => {
  const noSleep = () => Promise.resolve();

  it("embeds in calls of at most 100 texts, keeping order, and returns unit vectors", async () => {
    const ai = new WorkersAiStandIn();
    const embedder = new WorkersAiEmbedder(ai, BGE_BASE, noSleep);
    expect(embedder).toMatchObject({ model: BGE_BASE, dims: 768 });
    const texts = Array.from({ length: 250 }, (_, i) => `ticket ${i} about item${i}`);
    const vectors = await embedder.embed(texts);
    expect(ai.calls.map((c) => c.texts.length)).toEqual([100, 100, 50]);
    expect(ai.calls.every((c) => c.model === BGE_BASE)).toBe(true);
    expect(ai.calls.flatMap((c) => c.texts)).toEqual(texts);
    expect(vectors).toHaveLength(250);
    vectors.forEach((v, i) => {
      expect(v).toHaveLength(768);
      expect(Math.abs(norm(v) - 1)).toBeLessThan(1e-9);
      // In order: each vector is its own text's vector, normalized.
      const raw = conceptVector(texts[i]!, 768);
      expect(dot(v, raw) / norm(raw)).toBeCloseTo(1, 9);
    });
  });

  it("uses the configured model's dimensions", async () => {
    const ai = new WorkersAiStandIn();
    const small = new WorkersAiEmbedder(ai, "@cf/baai/bge-small-en-v1.5", noSleep);
    expect(small.dims).toBe(384);
    const [v] = await small.embed(["hello"]);
    expect(v).toHaveLength(384);
    expect(ai.calls[0]!.model).toBe("@cf/baai/bge-small-en-v1.5");
  });

  it("sends an empty text as a blank, which the model accepts, instead of failing the batch", async () => {
    const ai = new WorkersAiStandIn();
    const vectors = await new WorkersAiEmbedder(ai, BGE_BASE, noSleep).embed(["", "car"]);
    expect(vectors).toHaveLength(2);
    expect(ai.calls[0]!.texts[0]).toBe(" ");
    expect(ai.calls[0]!.texts[0]!.length).toBeGreaterThan(0);
  });

  it("retries a transient error, backing off, then succeeds", async () => {
    const ai = new WorkersAiStandIn();
    ai.failNext.push(CAPACITY);
    const sleeps: number[] = [];
    const embedder = new WorkersAiEmbedder(ai, BGE_BASE, async (ms) => void sleeps.push(ms));
    const [v] = await embedder.embed(["automobile upkeep"]);
    expect(ai.calls).toHaveLength(2);
    expect(sleeps).toEqual([250]);
    expect(dot(v!, unit(...conceptVector("car maintenance", 768)))).toBeCloseTo(1, 9);
  });

  it("gives up after 3 attempts with a transient EmbeddingError", async () => {
    const ai = new WorkersAiStandIn();
    ai.down = CAPACITY;
    const sleeps: number[] = [];
    const embedder = new WorkersAiEmbedder(ai, BGE_BASE, async (ms) => void sleeps.push(ms));
    const err = await embedder.embed(["a", "b"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbeddingError);
    expect(err).toMatchObject({ transient: true });
    expect((err as Error).message).toContain("3040");
    expect(ai.calls).toHaveLength(3);
    expect(sleeps).toEqual([250, 1000]);
  });

  it("does not retry an input error", async () => {
    const ai = new WorkersAiStandIn();
    ai.failNext.push("5006: Invalid input: text too long");
    const sleeps: number[] = [];
    const err = await new WorkersAiEmbedder(ai, BGE_BASE, async (ms) => void sleeps.push(ms)).embed(["x"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbeddingError);
    expect(err).toMatchObject({ transient: false });
    expect(ai.calls).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it("rejects a response of the wrong shape, without retrying", async () => {
    const ai = new WorkersAiStandIn();
    const embedder = new WorkersAiEmbedder(ai, BGE_BASE, noSleep);
    // Vectors of another model's size.
    ai.respond = (texts) => ({ shape: [texts.length, 384], data: texts.map((t) => conceptVector(t, 384)) });
    const wrongDims = await embedder.embed(["a", "b"]).catch((e: unknown) => e);
    expect(wrongDims).toBeInstanceOf(EmbeddingError);
    expect(wrongDims).toMatchObject({ transient: false });
    expect(ai.calls).toHaveLength(1);
    // One row short.
    ai.respond = (texts, dims) => ({ shape: [texts.length - 1, dims], data: texts.slice(1).map((t) => conceptVector(t, dims)) });
    await expect(embedder.embed(["a", "b"])).rejects.toBeInstanceOf(EmbeddingError);
    // Not an embeddings response at all.
    ai.respond = () => ({ response: "hello" });
    await expect(embedder.embed(["a"])).rejects.toThrow(/unexpected shape/);
    expect(ai.calls).toHaveLength(3);
  });

  it("refuses an unknown model when constructed", () => {
    const make = () => new WorkersAiEmbedder(new WorkersAiStandIn(), "@cf/openai/text-embedding-3", noSleep);
    expect(make).toThrow(EmbeddingError);
    expect(make).toThrow(/Unknown embedding model.*bge-base-en-v1\.5/);
  });
});

describe("the local index's stored form", () => {
  it("round-trips a vector through int8 quantization within 1% of its largest component", async () => {
    const [v] = await new LocalHashEmbedder().embed(["Deploy the worker with wrangler from CI after every merge."]);
    const back = decodeVector(encodeVector(v!));
    const max = Math.max(...v!.map(Math.abs));
    expect(back).toHaveLength(512);
    v!.forEach((x, i) => expect(Math.abs(back[i]! - x)).toBeLessThanOrEqual(max / 127 / 2 + 1e-7));
    expect(Math.abs(dot(Array.from(back), v!) - 1)).toBeLessThan(0.01);
    expect(encodeVector(v!).length).toBeLessThan(700); // 4 + 512 bytes as base64
    expect(Array.from(decodeVector(encodeVector([0, 0, 0])))).toEqual([0, 0, 0]);
  });
});

describe("D1VectorIndex (local D1)", () => {
  const index = new D1VectorIndex(env.DB);
  const ns = () => `ns-${crypto.randomUUID()}`;
  const rec = (id: string, values: number[], metadata: Record<string, string> = {}): VectorRecord => ({ id, values, metadata });
  const stored = (namespace: string) =>
    env.DB.prepare(`SELECT COUNT(*) AS n FROM local_vectors WHERE namespace = ?`)
      .bind(namespace)
      .first<{ n: number }>()
      .then((r) => r?.n ?? 0);

  it("upserts, queries by cosine similarity best first, and deletes", async () => {
    const n = ns();
    await index.upsert(n, [rec("c", unit(0, 1, 0)), rec("a", unit(1, 0, 0)), rec("d", unit(-1, 0, 0)), rec("b", unit(1, 1, 0))]);
    const matches = await index.query(n, unit(1, 0, 0), { topK: 10 });
    expect(matches.map((m) => m.id)).toEqual(["a", "b", "c", "d"]);
    const scores = matches.map((m) => m.score);
    [1, Math.SQRT1_2, 0, -1].forEach((s, i) => expect(scores[i]).toBeCloseTo(s, 6));
    expect((await index.query(n, unit(1, 0, 0), { topK: 2 })).map((m) => m.id)).toEqual(["a", "b"]);

    await index.deleteByIds(n, ["a", "c", "never-there"]);
    expect((await index.query(n, unit(1, 0, 0), { topK: 10 })).map((m) => m.id)).toEqual(["b", "d"]);
  });

  it("writes what the caller runs after the vectors in the same batch: both land, or neither", async () => {
    const n = ns();
    const mark = (id: string) => env.DB.prepare("INSERT INTO local_vector_generations (namespace, generation) VALUES (?, 0)").bind(`${n}-${id}`);
    const trips: number[] = [];
    const d1 = Object.create(env.DB) as D1Database;
    d1.batch = (statements: D1PreparedStatement[]) => (trips.push(statements.length), env.DB.batch(statements));
    const counted = new D1VectorIndex(d1);
    await counted.upsert(n, [rec("a", unit(1, 0, 0))], { d1, statements: [mark("a")] });
    // Its row, the generation and the caller's statement: one round trip.
    expect(trips).toEqual([3]);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM local_vector_generations WHERE namespace = ?").bind(`${n}-a`).first("n")).toBe(1);
    // A failing statement of the caller's takes the vector with it.
    await expect(counted.upsert(n, [rec("b", unit(0, 1, 0))], { d1, statements: [mark("a")] })).rejects.toThrow();
    expect(await stored(n)).toBe(1);
    // Nothing to write: the caller's statements still run.
    await counted.upsert(n, [], { d1, statements: [mark("c")] });
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM local_vector_generations WHERE namespace = ?").bind(`${n}-c`).first("n")).toBe(1);
  });

  it("caps topK at 100", async () => {
    const n = ns();
    await index.upsert(
      n,
      Array.from({ length: 120 }, (_, i) => rec(`v${i}`, unit(1, i / 120, 0))),
    );
    expect(await index.query(n, unit(1, 0, 0), { topK: 500 })).toHaveLength(100);
    expect(await index.query(n, unit(1, 0, 0), { topK: 7 })).toHaveLength(7);
  });

  it("filters by metadata equality on every key given", async () => {
    const n = ns();
    await index.upsert(n, [
      rec("note:1", unit(1, 0.1), { object_type: "note", project_id: "p1", kind: "note" }),
      rec("note:2", unit(1, 0.2), { object_type: "note", project_id: "p2", kind: "runbook" }),
      rec("decision:3", unit(1, 0), { object_type: "decision", project_id: "p1", kind: "" }),
      rec("note:4", unit(1, 0.3), { object_type: "note", project_id: "", kind: "note" }),
    ]);
    const q = (filter: Record<string, string>) => index.query(n, unit(1, 0), { topK: 10, filter }).then((ms) => ms.map((m) => m.id));
    expect(await q({ object_type: "note" })).toEqual(["note:1", "note:2", "note:4"]);
    expect(await q({ object_type: "note", project_id: "p1" })).toEqual(["note:1"]);
    expect(await q({ project_id: "p1" })).toEqual(["decision:3", "note:1"]);
    expect(await q({ object_type: "note", project_id: "" })).toEqual(["note:4"]);
    expect(await q({ object_type: "task" })).toEqual([]);
    // The filter is applied before topK: the best p2 note is found though three vectors score higher.
    expect((await index.query(n, unit(1, 0), { topK: 1, filter: { project_id: "p2" } })).map((m) => m.id)).toEqual(["note:2"]);
  });

  it("refuses a filter key that is not an identifier (it would reach the SQL json path)", async () => {
    await expect(index.query(ns(), unit(1, 0), { topK: 5, filter: { "x') OR 1=1 --": "y" } })).rejects.toThrow(/bad filter key/);
  });

  it("keeps tenants apart: a query never returns another namespace's vectors, even identical ones", async () => {
    const a = ns();
    const b = ns();
    const query = unit(0.3, 0.4, 0.5);
    await index.upsert(a, [rec("note:a1", unit(0, 1, 0), { object_type: "note" })]);
    await index.upsert(b, [rec("note:b1", query, { object_type: "note" }), rec("note:a1", query, { object_type: "note" })]);
    const fromA = await index.query(a, query, { topK: 100, filter: { object_type: "note" } });
    expect(fromA.map((m) => m.id)).toEqual(["note:a1"]);
    expect(fromA[0]!.score).toBeLessThan(0.9);
    // Same id in both namespaces: deleting in B leaves A's.
    await index.deleteByIds(b, ["note:a1"]);
    expect((await index.query(a, query, { topK: 10 })).map((m) => m.id)).toEqual(["note:a1"]);
    expect((await index.query(b, query, { topK: 10 })).map((m) => m.id)).toEqual(["note:b1"]);
    expect(await index.query(ns(), query, { topK: 10 })).toEqual([]);
  });

  it("replaces a vector and its metadata on re-upsert", async () => {
    const n = ns();
    await index.upsert(n, [rec("x", unit(1, 0), { project_id: "old" })]);
    await index.upsert(n, [rec("x", unit(0, 1), { project_id: "new" })]);
    expect(await stored(n)).toBe(1);
    const [m] = await index.query(n, unit(0, 1), { topK: 5 });
    expect(m!.id).toBe("x");
    expect(m!.score).toBeCloseTo(1, 6);
    expect(await index.query(n, unit(0, 1), { topK: 5, filter: { project_id: "old" } })).toEqual([]);
    expect(await index.query(n, unit(0, 1), { topK: 5, filter: { project_id: "new" } })).toHaveLength(1);
  });

  it("skips vectors of another dimension (made by another embedder)", async () => {
    const n = ns();
    await index.upsert(n, [rec("three", unit(1, 0, 0)), rec("four", unit(1, 0, 0, 0)), rec("two", unit(1, 0))]);
    expect((await index.query(n, unit(1, 0, 0), { topK: 10 })).map((m) => m.id)).toEqual(["three"]);
    expect((await index.query(n, unit(1, 0, 0, 0), { topK: 10 })).map((m) => m.id)).toEqual(["four"]);
  });

  it("enforces Vectorize's limits before writing anything", async () => {
    const n = ns();
    const good = rec("good", unit(1, 0));
    const cases: [string, string, VectorRecord][] = [
      [n, "id over 64 bytes", rec("é".repeat(33), unit(1, 0))],
      ["n".repeat(65), "namespace over 64 bytes", rec("fine", unit(1, 0))],
      [n, "metadata over 10240 bytes", rec("big", unit(1, 0), { text: "x".repeat(10 * 1024) })],
      [n, "bad metadata key", rec("key", unit(1, 0), { "Project-Id": "p" })],
    ];
    for (const [namespace, message, bad] of cases) {
      await expect(index.upsert(namespace, [good, bad]), message).rejects.toThrow(message);
      expect(await stored(namespace)).toBe(0);
    }
    // At the limits exactly, it writes.
    await index.upsert("n".repeat(64), [rec("i".repeat(64), unit(1, 0), { text: "x".repeat(10 * 1024 - 20) })]);
    expect(await stored("n".repeat(64))).toBe(1);
  });
});

describe("VectorizeVectorIndex (against a Vectorize stand-in)", () => {
  const dims = 4;
  const setup = () => {
    const binding = new VectorizeStandIn({ dimensions: dims, metadataIndexes: ["object_type", "project_id", "kind"] });
    return { binding, index: new VectorizeVectorIndex(binding) };
  };
  const rec = (id: string, values: number[], metadata: Record<string, string> = { object_type: "note" }): VectorRecord => ({ id, values, metadata });

  it("the stand-in refuses what Vectorize refuses", async () => {
    const { binding } = setup();
    await binding.upsert([{ id: "a", values: unit(1, 0, 0, 0), namespace: "t" }]);
    await expect(binding.query(unit(1, 0, 0, 0), { topK: 101, namespace: "t", returnValues: false, returnMetadata: "none" })).rejects.toThrow(/topK/);
    await expect(binding.query(unit(1, 0, 0, 0), { topK: 21, namespace: "t", returnValues: true })).rejects.toThrow(/at most 20/);
    await expect(binding.query(unit(1, 0, 0, 0), { topK: 21, namespace: "t", returnMetadata: "all" })).rejects.toThrow(/at most 20/);
    await expect(binding.query(unit(1, 0, 0), { topK: 5, namespace: "t" })).rejects.toThrow(/dimensions/);
    await expect(binding.upsert([{ id: "b", values: unit(1, 0, 0) }])).rejects.toThrow(/dimensions/);
    await expect(binding.upsert(Array.from({ length: 1001 }, (_, i) => ({ id: `v${i}`, values: unit(1, 0, 0, 0) })))).rejects.toThrow(/at most 1000/);
    expect((await binding.query(unit(1, 0, 0, 0), { topK: 100, namespace: "t", returnValues: false, returnMetadata: "none" })).count).toBe(1);
  });

  it("runs the caller's D1 statements once the upserts are accepted, and not when they are refused", async () => {
    const { binding, index } = setup();
    const namespace = `after-${crypto.randomUUID()}`;
    const mark = () => env.DB.prepare("INSERT INTO local_vector_generations (namespace, generation) VALUES (?, 0)").bind(namespace);
    const marked = () => env.DB.prepare("SELECT COUNT(*) AS n FROM local_vector_generations WHERE namespace = ?").bind(namespace).first("n");
    await expect(index.upsert("t", [rec("bad", unit(1, 0, 0))], { d1: env.DB, statements: [mark()] })).rejects.toThrow(/dimensions/);
    expect(await marked()).toBe(0);
    await index.upsert("t", [rec("good", unit(1, 0, 0, 0))], { d1: env.DB, statements: [mark()] });
    expect(binding.upserts).toHaveLength(1);
    expect(await marked()).toBe(1);
  });

  it("passes the tenant as the namespace on every upsert and query", async () => {
    const { binding, index } = setup();
    await index.upsert("tenant-a", [rec("note:1", unit(1, 0, 0, 0), { object_type: "note", project_id: "p1", kind: "note" })]);
    expect(binding.upserts).toEqual([[{ id: "note:1", values: unit(1, 0, 0, 0), namespace: "tenant-a", metadata: { object_type: "note", project_id: "p1", kind: "note" } }]]);
    const matches = await index.query("tenant-a", unit(1, 0, 0, 0), { topK: 5 });
    expect(matches).toEqual([{ id: "note:1", score: expect.closeTo(1, 9) }]);
    expect(binding.queries.at(-1)).toMatchObject({ namespace: "tenant-a" });
  });

  it("upserts 2,500 vectors in three calls of at most 1,000", async () => {
    const { binding, index } = setup();
    await index.upsert(
      "tenant-a",
      Array.from({ length: 2500 }, (_, i) => rec(`note:${i}`, unit(1, i, 0, 0))),
    );
    expect(binding.upserts.map((u) => u.length)).toEqual([1000, 1000, 500]);
    expect(binding.upserts.flat().every((v) => v.namespace === "tenant-a")).toBe(true);
    expect(binding.vectors.size).toBe(2500);
  });

  it("asks for ids and scores only, so up to 100 neighbours come back, and caps topK at 100", async () => {
    const { binding, index } = setup();
    await index.upsert(
      "tenant-a",
      Array.from({ length: 150 }, (_, i) => rec(`note:${i}`, unit(1, i / 150, 0, 0))),
    );
    const fifty = await index.query("tenant-a", unit(1, 0, 0, 0), { topK: 50 });
    expect(fifty).toHaveLength(50);
    expect(binding.queries.at(-1)).toMatchObject({ topK: 50, returnValues: false, returnMetadata: "none" });
    const capped = await index.query("tenant-a", unit(1, 0, 0, 0), { topK: 1000 });
    expect(capped).toHaveLength(100);
    expect(binding.queries.at(-1)!.topK).toBe(100);
    expect(capped[0]).toEqual({ id: "note:0", score: expect.closeTo(1, 9) });
    // Only ids and scores are handed on.
    expect(Object.keys(capped[1]!).sort()).toEqual(["id", "score"]);
  });

  it("keeps tenants apart: tenant A never sees tenant B's vectors, even one identical to the query", async () => {
    const { binding, index } = setup();
    const query = unit(0.1, 0.2, 0.3, 0.4);
    await index.upsert("tenant-a", [rec("note:a1", unit(0, 0, 0, 1))]);
    await index.upsert("tenant-b", [rec("note:b1", query), rec("note:b2", query)]);
    const fromA = await index.query("tenant-a", query, { topK: 100, filter: { object_type: "note" } });
    expect(fromA.map((m) => m.id)).toEqual(["note:a1"]);
    expect(binding.queries.at(-1)).toMatchObject({ namespace: "tenant-a" });
    expect(await index.query("tenant-c", query, { topK: 100 })).toEqual([]);
  });

  it("passes metadata filters through, applied before topK", async () => {
    const { binding, index } = setup();
    await index.upsert("t", [
      rec("note:1", unit(1, 0, 0, 0), { object_type: "note", project_id: "p1", kind: "note" }),
      rec("note:2", unit(1, 0.5, 0, 0), { object_type: "note", project_id: "p2", kind: "runbook" }),
      rec("decision:3", unit(1, 0, 0, 0), { object_type: "decision", project_id: "p2", kind: "" }),
    ]);
    const got = await index.query("t", unit(1, 0, 0, 0), { topK: 1, filter: { object_type: "note", project_id: "p2" } });
    expect(got.map((m) => m.id)).toEqual(["note:2"]);
    expect(binding.queries.at(-1)).toEqual({ topK: 1, namespace: "t", filter: { object_type: "note", project_id: "p2" }, returnValues: false, returnMetadata: "none" });
    // No filter keys: no filter is sent.
    await index.query("t", unit(1, 0, 0, 0), { topK: 3, filter: {} });
    expect(binding.queries.at(-1)).not.toHaveProperty("filter");
    await expect(index.query("t", unit(1, 0, 0, 0), { topK: 3, filter: { "bad key": "x" } })).rejects.toThrow(/bad filter key/);
  });

  it("checks Vectorize's limits before calling the binding", async () => {
    const { binding, index } = setup();
    await expect(index.upsert("t", [rec("ok", unit(1, 0, 0, 0)), rec("x".repeat(65), unit(1, 0, 0, 0))])).rejects.toThrow(/id over 64 bytes/);
    await expect(index.upsert("t".repeat(65), [rec("ok", unit(1, 0, 0, 0))])).rejects.toThrow(/namespace over 64 bytes/);
    await expect(index.upsert("t", [rec("ok", unit(1, 0, 0, 0), { body: "x".repeat(10 * 1024) })])).rejects.toThrow(/metadata over/);
    expect(binding.upserts).toEqual([]);
  });

  it("deletes by id in calls of at most 1,000", async () => {
    const { binding, index } = setup();
    await index.upsert(
      "t",
      Array.from({ length: 1500 }, (_, i) => rec(`note:${i}`, unit(1, 0, 0, 0))),
    );
    await index.deleteByIds(
      "t",
      Array.from({ length: 1200 }, (_, i) => `note:${i}`),
    );
    expect(binding.deletes.map((d) => d.length)).toEqual([1000, 200]);
    expect(binding.vectors.size).toBe(300);
  });
});

describe("reciprocalRankFusion", () => {
  it("scores 1/(60+rank) summed over the lists", () => {
    const fused = reciprocalRankFusion([
      ["a", "b", "c"],
      ["c", "d"],
    ]);
    const byId = Object.fromEntries(fused.map((f) => [f.id, f]));
    expect(RRF_K).toBe(60);
    expect(byId.a!.score).toBeCloseTo(1 / 61, 12);
    expect(byId.b!.score).toBeCloseTo(1 / 62, 12);
    expect(byId.c!.score).toBeCloseTo(1 / 63 + 1 / 61, 12);
    expect(byId.d!.score).toBeCloseTo(1 / 62, 12);
    expect(byId.c!.ranks).toEqual([3, 1]);
    expect(byId.d!.ranks).toEqual([null, 2]);
    expect(reciprocalRankFusion([["x"]], 0)[0]!.score).toBe(1);
  });

  it("puts an item found by both lists ahead of items found by one", () => {
    const fused = reciprocalRankFusion([
      ["lex1", "lex2", "both"],
      ["vec1", "both", "vec2"],
    ]);
    expect(fused[0]!.id).toBe("both");
    expect(fused[0]!.ranks).toEqual([3, 2]);
  });

  it("breaks ties by the first list's order", () => {
    expect(
      reciprocalRankFusion([
        ["a", "b"],
        ["x", "y"],
      ]).map((f) => f.id),
    ).toEqual(["a", "x", "b", "y"]);
    // Equal sums: the one ranked higher in the first list wins.
    expect(
      reciprocalRankFusion([
        ["p", "q"],
        ["q", "p"],
      ]).map((f) => f.id),
    ).toEqual(["p", "q"]);
    expect(
      reciprocalRankFusion([
        ["m", "n"],
        ["n", "m"],
      ]).map((f) => f.id),
    ).toEqual(["m", "n"]);
  });

  it("keeps an id's best rank when a list repeats it", () => {
    const [only] = reciprocalRankFusion([["a", "a", "a"]]);
    expect(only).toMatchObject({ id: "a", ranks: [1] });
    expect(only!.score).toBeCloseTo(1 / 61, 12);
    const fused = reciprocalRankFusion([["b", "a", "b"], ["a"]]);
    expect(fused.find((f) => f.id === "b")!.ranks).toEqual([1, null]);
    expect(fused.find((f) => f.id === "a")!.score).toBeCloseTo(1 / 62 + 1 / 61, 12);
  });

  it("fuses nothing into nothing", () => {
    expect(reciprocalRankFusion([[], []])).toEqual([]);
    expect(reciprocalRankFusion([])).toEqual([]);
  });
});

describe("selectSemantic", () => {
  const base = env as unknown as Env;
  const ai = new WorkersAiStandIn();
  const vectors = new VectorizeStandIn();

  it("uses the local embedder and D1 index when neither AI nor VECTORS is bound", () => {
    const { layer, reason } = selectSemantic(base);
    expect(reason).toBe("");
    expect(layer!.index.kind).toBe("local");
    expect(layer!.index).toBeInstanceOf(D1VectorIndex);
    expect(layer!.embedder).toMatchObject({ model: "local-hash-512", dims: 512 });
  });

  it("uses Workers AI and Vectorize when both are bound, with EMBEDDING_MODEL when set", () => {
    const { layer, reason } = selectSemantic(withStandIns(base, { AI: ai, VECTORS: vectors }));
    expect(reason).toBe("");
    expect(layer!.index.kind).toBe("vectorize");
    expect(layer!.embedder).toBeInstanceOf(WorkersAiEmbedder);
    expect(layer!.embedder).toMatchObject({ model: BGE_BASE, dims: 768 });
    const small = selectSemantic(withStandIns(base, { AI: ai, VECTORS: vectors, EMBEDDING_MODEL: "@cf/baai/bge-small-en-v1.5" }));
    expect(small.layer!.embedder).toMatchObject({ model: "@cf/baai/bge-small-en-v1.5", dims: 384 });
  });

  it("turns semantic search off, saying why, when only one of the two is bound", () => {
    for (const half of [{ AI: ai }, { VECTORS: vectors }]) {
      const { layer, reason } = selectSemantic(withStandIns(base, half));
      expect(layer).toBeNull();
      expect(reason).toMatch(/misconfigured/);
      expect(reason).toContain("AI");
      expect(reason).toContain("VECTORS");
    }
  });

  it("turns semantic search off, saying why, when EMBEDDING_MODEL names an unknown model", () => {
    const { layer, reason } = selectSemantic(withStandIns(base, { AI: ai, VECTORS: vectors, EMBEDDING_MODEL: "@cf/nobody/no-model" }));
    expect(layer).toBeNull();
    expect(reason).toMatch(/misconfigured/);
    expect(reason).toContain("@cf/nobody/no-model");
  });

  it("is off when SEMANTIC_SEARCH is off, whatever is bound", () => {
    for (const bound of [{}, { AI: ai, VECTORS: vectors }]) {
      const { layer, reason } = selectSemantic(withStandIns(base, { ...bound, SEMANTIC_SEARCH: "off" }));
      expect(layer).toBeNull();
      expect(reason).toMatch(/SEMANTIC_SEARCH=off/);
    }
  });
});

describe("semantic search in production mode (Workers AI and Vectorize stand-ins)", () => {
  // Shares no word (nor stem, nor substring) with the note; the stand-in model knows they mean the same.
  const MEANING_QUERY = "car engine maintenance";
  const NOTE = { title: "Automobile upkeep", body: "Motor servicing for the fleet automobile every spring." };

  it("a note written while the embedder fails is saved and becomes searchable after the backfill", { timeout: 30_000 }, async () => {
    const w = await world("outage");
    const ai = new WorkersAiStandIn();
    const vectors = new VectorizeStandIn();
    const prod = production(w.ctx, ai, vectors);
    ai.down = CAPACITY;

    const written = await ok(prod, "knowledge_write", NOTE);
    expect(written.embedding_status).toBe("pending");
    const distractor = await ok(prod, "knowledge_write", { title: "Banana smoothie recipe", body: "Blend two bananas with oat milk." });
    await settle(prod);
    expect(ai.calls.length).toBeGreaterThanOrEqual(3); // the after-response embedding ran, and retried
    const failed = await embeddingRow(w.id.tenantId, written.note.id);
    expect(failed).toMatchObject({ status: "pending", model: "" });
    expect(failed!.attempts).toBeGreaterThanOrEqual(1);
    expect(failed!.last_error).toContain("3040");
    expect(vectors.vectors.size).toBe(0);

    // The model is back, the backfill has not run: the note is found by its words only.
    ai.down = null;
    const byWords = await ok(prod, "knowledge_search", { q: "automobile" });
    expect(byWords).toMatchObject({ mode: "hybrid", embedder: BGE_BASE });
    expect(ids(byWords.items)).toEqual([written.note.id]);
    expect(byWords.items[0]).toMatchObject({ embedding_status: "pending", similarity: null, lexical_rank: 1 });
    expect(byWords.note).toMatch(/2 note\(s\) still waiting for an embedding/);
    const byMeaning = await ok(prod, "knowledge_search", { q: MEANING_QUERY });
    expect(byMeaning).toMatchObject({ mode: "hybrid", match: "none", items: [] });

    w.clock.advance(5 * 60_000);
    const reports = await runMaintenance(prod.env, w.clock.now());
    const backfill = reports.find((r) => r.job === "embedding_backfill");
    expect(backfill).toMatchObject({ ok: true });
    expect(backfill!.detail).toMatch(/\b[1-9]\d* embedded, 0 still pending/);
    expect(await embeddingRow(w.id.tenantId, written.note.id)).toMatchObject({ status: "ready", model: BGE_BASE, last_error: "" });
    expect(vectors.vectors.get(`note:${written.note.id}`)).toMatchObject({ namespace: w.id.tenantId, metadata: { object_type: "note", project_id: "", kind: "note" } });

    const found = await ok(prod, "knowledge_search", { q: MEANING_QUERY });
    expect(found).toMatchObject({ mode: "hybrid", match: "none", embedder: BGE_BASE, note: "" });
    expect(ids(found.items)).toEqual([written.note.id]);
    expect(found.items[0]).toMatchObject({ embedding_status: "ready", lexical_rank: null });
    expect(found.items[0].similarity).toBeGreaterThan(0.5);
    expect(ids(found.items)).not.toContain(distractor.note.id);
    expect(vectors.queries.at(-1)).toMatchObject({ namespace: w.id.tenantId, filter: { object_type: "note" }, returnValues: false, returnMetadata: "none" });
  });

  it("when the embedder is down at query time, search still answers by words and says why", { timeout: 30_000 }, async () => {
    const w = await world("query-outage");
    const ai = new WorkersAiStandIn();
    const prod = production(w.ctx, ai, new VectorizeStandIn());
    const { note } = await ok(prod, "knowledge_write", NOTE);
    await settle(prod);
    expect((await embeddingRow(w.id.tenantId, note.id))?.status).toBe("ready");

    ai.down = CAPACITY;
    const r = await ok(prod, "knowledge_search", { q: "automobile servicing" });
    expect(r).toMatchObject({ mode: "lexical", match: "words", embedder: "" });
    expect(r.note).toMatch(/embedder is unavailable/);
    expect(r.note).toContain("3040");
    expect(ids(r.items)).toEqual([note.id]);
    expect(r.items[0]).toMatchObject({ similarity: null, lexical_rank: 1 });
    // A meaning-only query has nothing to fall back on, but is still answered.
    expect(await ok(prod, "knowledge_search", { q: MEANING_QUERY })).toMatchObject({ mode: "lexical", items: [] });
  });

  it("never returns another tenant's note, even to an identical query against an identical note", async () => {
    const a = await world("prod-iso-a");
    const b = await world("prod-iso-b");
    const ai = new WorkersAiStandIn();
    const vectors = new VectorizeStandIn(); // one index, one namespace per tenant
    const prodA = production(a.ctx, ai, vectors);
    const prodB = production(b.ctx, ai, vectors);
    const noteA = (await ok(prodA, "knowledge_write", NOTE)).note.id as string;
    await settle(prodA);
    expect(ids((await ok(prodA, "knowledge_search", { q: MEANING_QUERY })).items)).toEqual([noteA]);

    for (const q of [MEANING_QUERY, "automobile", NOTE.title]) expect((await ok(prodB, "knowledge_search", { q })).items, q).toEqual([]);
    expect(vectors.queries.at(-1)!.namespace).toBe(b.id.tenantId);

    const noteB = (await ok(prodB, "knowledge_write", NOTE)).note.id as string;
    await settle(prodB);
    const fromB = await ok(prodB, "knowledge_search", { q: MEANING_QUERY });
    expect(ids(fromB.items)).toEqual([noteB]);
    expect(fromB.items[0].similarity).toBeGreaterThan(0.5);
    expect(ids((await ok(prodA, "knowledge_search", { q: MEANING_QUERY })).items)).toEqual([noteA]);
  });

  it("with an unknown EMBEDDING_MODEL, search answers lexically and says why, and the backfill skips", async () => {
    const w = await world("bad-model");
    const prod = production(w.ctx, new WorkersAiStandIn(), new VectorizeStandIn());
    const bad = { ...prod, env: { ...prod.env, EMBEDDING_MODEL: "@cf/nobody/no-model" } };
    const { note } = await ok(bad, "knowledge_write", NOTE);
    await settle(bad);
    const r = await ok(bad, "knowledge_search", { q: "automobile" });
    expect(r).toMatchObject({ mode: "lexical", embedder: "" });
    expect(r.note).toContain("@cf/nobody/no-model");
    expect(ids(r.items)).toEqual([note.id]);
    expect(await backfillEmbeddings(bad.env, w.clock.now())).toMatch(/^skipped: .*misconfigured/);
    expect((await embeddingRow(w.id.tenantId, note.id))?.status).toBe("pending");
  });

  it("a text the model refuses fails alone: the rest of its tenant's batch is embedded", { timeout: 30_000 }, async () => {
    const w = await world("poison");
    const ai = new WorkersAiStandIn();
    const prod = production(w.ctx, ai, new VectorizeStandIn());
    ai.down = CAPACITY;
    const good1 = (await ok(prod, "knowledge_write", { title: "Fleet servicing", body: "Every spring." })).note.id as string;
    const poison = (await ok(prod, "knowledge_write", { title: "POISON", body: "the model refuses this one" })).note.id as string;
    const good2 = (await ok(prod, "knowledge_write", { title: "Engine upkeep", body: "Oil twice a year." })).note.id as string;
    await settle(prod);
    ai.down = null;
    // The stand-in model refuses any batch holding this text, as a model refuses an input it cannot take.
    ai.respond = (texts, dims) => {
      if (texts.some((t) => t.includes("POISON"))) throw new Error("5006: Invalid input: unsupported text");
      return { shape: [texts.length, dims], data: texts.map((t) => conceptVector(t, dims)) };
    };
    // The backfill serves every tenant; in this file only this test leaves a refused text behind.
    const report = await backfillEmbeddings(prod.env, w.clock.now());
    expect(report).toMatch(/^[2-9]\d* embedded, 1 still pending/);
    expect((await embeddingRow(w.id.tenantId, good1))?.status).toBe("ready");
    expect((await embeddingRow(w.id.tenantId, good2))?.status).toBe("ready");
    const stuck = await embeddingRow(w.id.tenantId, poison);
    expect(stuck).toMatchObject({ status: "pending" });
    expect(stuck!.last_error).toContain("5006");
  });

  it("re-queues vectors made by another model and re-embeds them with the production model", { timeout: 30_000 }, async () => {
    const w = await world("requeue");
    const { note } = await ok(w.ctx, "knowledge_write", NOTE); // local layer: no bindings
    await settle(w.ctx);
    expect(await embeddingRow(w.id.tenantId, note.id)).toMatchObject({ status: "ready", model: "local-hash-512" });

    const ai = new WorkersAiStandIn();
    const vectors = new VectorizeStandIn();
    const prod = production(w.ctx, ai, vectors);
    // First backfill with the model down: the row is re-queued and stays pending.
    ai.down = CAPACITY;
    w.clock.advance(60_000);
    const downReport = await backfillEmbeddings(prod.env, w.clock.now());
    expect(downReport).toMatch(/re-queued for @cf\/baai\/bge-base-en-v1\.5/);
    expect(downReport).toContain("3040");
    const requeued = await embeddingRow(w.id.tenantId, note.id);
    expect(requeued).toMatchObject({ status: "pending" });
    expect(requeued!.last_error).toContain("3040");
    // A search meanwhile says the note waits for its embedding.
    ai.down = null;
    expect((await ok(prod, "knowledge_search", { q: "automobile" })).note).toMatch(/1 note\(s\) still waiting/);

    w.clock.advance(5 * 60_000);
    const report = await backfillEmbeddings(prod.env, w.clock.now());
    expect(report).toMatch(/\b[1-9]\d* embedded, 0 still pending/);
    expect(await embeddingRow(w.id.tenantId, note.id)).toMatchObject({ status: "ready", model: BGE_BASE, last_error: "" });
    expect(vectors.vectors.get(`note:${note.id}`)).toMatchObject({ namespace: w.id.tenantId });
    const found = await ok(prod, "knowledge_search", { q: MEANING_QUERY });
    expect(ids(found.items)).toEqual([note.id]);
    expect(found.items[0].similarity).toBeGreaterThan(0.5);
    // A second run has nothing of this tenant left to do.
    expect(await backfillEmbeddings(prod.env, w.clock.now())).not.toMatch(/re-queued/);
  });
});

describe("semantic search in local mode", () => {
  it("never returns another tenant's note, even to an identical query against an identical note", async () => {
    const a: World = await world("local-iso-a");
    const b: World = await world("local-iso-b");
    const noteA = (await ok(a.ctx, "knowledge_write", { title: "Deploying to production", body: "Run the deploy pipeline from CI." })).note.id as string;
    await settle(a.ctx);
    const q = "deployment to prod";
    const fromA = await ok(a.ctx, "knowledge_search", { q });
    expect(fromA).toMatchObject({ mode: "hybrid", embedder: "local-hash-512" });
    expect(ids(fromA.items)).toEqual([noteA]);
    expect(fromA.items[0].similarity).toBeGreaterThan(0.2);
    expect((await ok(b.ctx, "knowledge_search", { q })).items).toEqual([]);

    const noteB = (await ok(b.ctx, "knowledge_write", { title: "Deploying to production", body: "Run the deploy pipeline from CI." })).note.id as string;
    await settle(b.ctx);
    expect(ids((await ok(b.ctx, "knowledge_search", { q })).items)).toEqual([noteB]);
    expect(ids((await ok(a.ctx, "knowledge_search", { q })).items)).toEqual([noteA]);
  });
});

/** A stored vector's int8 values and scale, read back from its text as the index stores it. */
function storedForm(values: number[]): { scale: number; q: Int8Array } {
  const bytes = Uint8Array.from(atob(encodeVector(values)), (c) => c.charCodeAt(0));
  return { scale: new DataView(bytes.buffer).getFloat32(0, true), q: new Int8Array(bytes.buffer, 4) };
}

describe("D1VectorIndex's scan", () => {
  it("ranks a seeded corpus exactly as the full scan and sort did: same ids, same scores, ties by id", async () => {
    const index = new D1VectorIndex(env.DB);
    const n = `scan-${crypto.randomUUID().slice(0, 8)}`;
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
    const dims = 64;
    // Mostly zeros, as the local embedder's vectors are; a few duplicates, so scores tie.
    const sparseVector = () => unitOf(Array.from({ length: dims }, () => (next() < 0.3 ? next() - 0.5 : 0)));
    const base = Array.from({ length: 300 }, (_, i) => ({ id: `v${String(i).padStart(3, "0")}`, values: sparseVector(), metadata: { scope: i % 3 === 0 ? "g1" : "g2" } }));
    const twins = base.slice(0, 20).map((v, i) => ({ ...v, id: `w${String(i).padStart(3, "0")}` }));
    const corpus = [...base, ...twins];
    await index.upsert(n, corpus);
    for (let round = 0; round < 5; round++) {
      const query = sparseVector();
      const q32 = Float32Array.from(query);
      for (const filter of [undefined, { scope: "g1" }, { scope: "g2" }]) {
        const expected = corpus
          .filter((v) => !filter || v.metadata.scope === filter.scope)
          .map((v) => {
            const { scale, q } = storedForm(v.values);
            let dot = 0;
            for (let j = 0; j < q32.length; j++) dot += q[j]! * q32[j]!;
            return { id: v.id, score: dot * scale };
          })
          .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
          .slice(0, 40);
        expect(await index.query(n, query, { topK: 40, ...(filter ? { filter } : {}) }), `round ${round}, filter ${JSON.stringify(filter)}`).toEqual(expected);
      }
    }
  });

  it("finds a filter's rows again after the generation moves: metadata changed by an upsert, rows deleted", async () => {
    const index = new D1VectorIndex(env.DB);
    const n = `scan-${crypto.randomUUID().slice(0, 8)}`;
    const axis = (i: number) => Array.from({ length: 8 }, (_, k) => (k === i ? 1 : 0.1));
    await index.upsert(n, [
      { id: "a", values: axis(0), metadata: { scope: "g1" } },
      { id: "b", values: axis(1), metadata: { scope: "g1" } },
      { id: "c", values: axis(2), metadata: { scope: "g2" } },
    ]);
    const ids = async (scope: string) => (await index.query(n, axis(0), { topK: 10, filter: { scope } })).map((m) => m.id);
    expect(await ids("g1")).toEqual(["a", "b"]);
    expect(await ids("g2")).toEqual(["c"]);
    // "b" moves to g2: a kept list of g1's rows would still return it.
    await index.upsert(n, [{ id: "b", values: axis(1), metadata: { scope: "g2" } }]);
    expect(await ids("g1")).toEqual(["a"]);
    expect(await ids("g2")).toEqual(["b", "c"]);
    await index.deleteByIds(n, ["a"]);
    expect(await ids("g1")).toEqual([]);
    // More filters than the namespace keeps lists for: the first is still answered right.
    for (let i = 0; i < 20; i++) expect(await ids(`other-${i}`)).toEqual([]);
    expect(await ids("g2")).toEqual(["b", "c"]);
  });
});

describe("D1VectorIndex's per-isolate cache", () => {
  it("sees every upsert and delete at once (the generation moves in the same batch), and keeps namespaces apart", async () => {
    const index = new D1VectorIndex(env.DB);
    const ns = `cache-${crypto.randomUUID().slice(0, 8)}`;
    const other = `${ns}-other`;
    const unit = (i: number, dims = 8) => Array.from({ length: dims }, (_, k) => (k === i ? 1 : 0));
    await index.upsert(ns, [{ id: "a", values: unit(0), metadata: { kind: "x" } }]);
    await index.upsert(other, [{ id: "z", values: unit(1), metadata: { kind: "x" } }]);
    expect((await index.query(ns, unit(1), { topK: 5 })).map((m) => m.id)).toEqual(["a"]);
    // Served from the cache now; the next upsert must still show up.
    await index.upsert(ns, [{ id: "b", values: unit(1), metadata: { kind: "y" } }]);
    expect((await index.query(ns, unit(1), { topK: 5 }))[0]!.id).toBe("b");
    expect((await index.query(ns, unit(1), { topK: 5, filter: { kind: "x" } })).map((m) => m.id)).toEqual(["a"]);
    await index.deleteByIds(ns, ["b"]);
    expect((await index.query(ns, unit(1), { topK: 5 })).map((m) => m.id)).toEqual(["a"]);
    expect((await index.query(other, unit(1), { topK: 5 })).map((m) => m.id)).toEqual(["z"]);
    // A row written behind the index's back (no generation bump) is not seen until the next change: the counter is the contract.
    const gen = await env.DB.prepare(`SELECT generation FROM local_vector_generations WHERE namespace = ?`).bind(ns).first<{ generation: number }>();
    expect(gen!.generation).toBe(3);
  });
});
