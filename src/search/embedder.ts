/**
 * Turning text into vectors. Production uses a Workers AI embedding model; everywhere else
 * (wrangler dev, tests) a deterministic feature-hashing embedder stands in. The local one is
 * lexical, not semantic: it knows shared words and word pieces, not meaning.
 */
import type { AiBinding } from "../llm/workers-ai";

export interface Embedder {
  /** Recorded with every vector, so a change of model re-embeds everything. */
  readonly model: string;
  readonly dims: number;
  /**
   * The similarity below which a match is more likely noise than kin, for this embedder; the
   * default for min_similarity. Model-specific: BGE scores unrelated text around 0.4.
   */
  readonly minSimilarity: number;
  /** One unit-length vector per text, in order. */
  embed(texts: string[]): Promise<number[][]>;
}

/** Texts beyond this are cut before embedding: BGE models read 512 tokens at most. */
export const MAX_EMBED_CHARS = 4000;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function fnv1a(text: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

export function l2Normalize(v: number[]): number[] {
  let sum = 0;
  for (const x of v) sum += x * x;
  if (sum === 0) return v;
  const norm = Math.sqrt(sum);
  return v.map((x) => x / norm);
}

/**
 * A crude English suffix stripper, enough to make "deploying", "deployment" and "deploys" one
 * feature. Not Porter: it only has to be consistent with itself.
 */
export function stem(word: string): string {
  const base = word.replace(/(ations?|ments?|ings?|ers?|ed|es|ly|s)$/, "");
  const cut = base.length >= 3 ? base : word;
  return cut.length > 3 ? cut.replace(/e$/, "") : cut;
}

/** Lower-case words with accents folded, so "Café" and "cafe" share features. */
export function words(text: string): string[] {
  return (
    text
      .normalize("NFKD")
      .replace(/\p{M}/gu, "")
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * Feature hashing ("the hashing trick") over words, adjacent word pairs and character trigrams
 * of each word. Trigrams make inflections meet ("deploying" and "deployment" share "dep",
 * "epl", "plo", "loy"), which is as close to meaning as a model-free embedder gets.
 */
export class LocalHashEmbedder implements Embedder {
  readonly model: string;
  /** Collision noise between unrelated texts stays within about ±0.12 at 512 dimensions. */
  readonly minSimilarity = 0.2;
  constructor(readonly dims = 512) {
    this.model = `local-hash-${dims}`;
  }

  embed(texts: string[]): Promise<number[][]> {
    return Promise.resolve(texts.map((t) => this.embedOne(t.slice(0, MAX_EMBED_CHARS))));
  }

  private embedOne(text: string): number[] {
    const v = new Array<number>(this.dims).fill(0);
    const add = (feature: string, weight: number) => {
      const h = fnv1a(feature);
      // The top bit picks the sign, so colliding features cancel out on average instead of piling up.
      v[h % this.dims]! += h & 0x80000000 ? -weight : weight;
    };
    const ws = words(text);
    ws.forEach((w, i) => {
      add(`w:${w}`, 0.6);
      add(`s:${stem(w)}`, 1);
      if (i > 0) add(`b:${ws[i - 1]} ${w}`, 0.5);
      const padded = ` ${w} `;
      for (let j = 0; j + 3 <= padded.length; j++) add(`t:${padded.slice(j, j + 3)}`, 0.3);
    });
    return l2Normalize(v);
  }
}

/** Workers AI accepts at most this many texts per embedding call. */
export const AI_BATCH = 100;
const AI_ATTEMPTS = 3;

/** Dimensions of the Workers AI BGE models; the Vectorize index must be created with the same. */
export const AI_MODEL_DIMS: Record<string, number> = {
  "@cf/baai/bge-small-en-v1.5": 384,
  "@cf/baai/bge-base-en-v1.5": 768,
  "@cf/baai/bge-large-en-v1.5": 1024,
};
export const DEFAULT_AI_MODEL = "@cf/baai/bge-base-en-v1.5";

export class EmbeddingError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/** Production embedder: batched Workers AI calls, retried on transient failures. */
export class WorkersAiEmbedder implements Embedder {
  readonly dims: number;
  readonly minSimilarity = 0.5;
  constructor(
    private readonly ai: AiBinding,
    readonly model: string = DEFAULT_AI_MODEL,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    const dims = AI_MODEL_DIMS[model];
    if (!dims) throw new EmbeddingError(`Unknown embedding model ${model}; known: ${Object.keys(AI_MODEL_DIMS).join(", ")}`, false);
    this.dims = dims;
  }

  async embed(texts: string[]): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += AI_BATCH) {
      // An empty string is refused by the model; a single space embeds as "nothing".
      const batch = texts.slice(i, i + AI_BATCH).map((t) => t.slice(0, MAX_EMBED_CHARS) || " ");
      out.push(...(await this.embedBatch(batch)));
    }
    return out;
  }

  private async embedBatch(batch: string[]): Promise<number[][]> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= AI_ATTEMPTS; attempt++) {
      let result: unknown;
      try {
        result = await this.ai.run(this.model, { text: batch });
      } catch (err) {
        lastError = err;
        if (!isTransient(err) || attempt === AI_ATTEMPTS) break;
        await this.sleep(250 * 4 ** (attempt - 1));
        continue;
      }
      return this.checkShape(result, batch.length);
    }
    const message = lastError instanceof Error ? lastError.message : String(lastError);
    throw new EmbeddingError(`Workers AI embedding failed: ${message}`, isTransient(lastError));
  }

  private checkShape(result: unknown, n: number): number[][] {
    const data = (result as { data?: unknown } | null)?.data;
    if (!Array.isArray(data) || data.length !== n || !data.every((row) => Array.isArray(row) && row.length === this.dims)) {
      throw new EmbeddingError(`Workers AI returned an unexpected shape for ${n} text(s) from ${this.model}`, false);
    }
    return (data as number[][]).map(l2Normalize);
  }
}

/**
 * Workers AI reports overload and timeouts as errors whose message carries the cause; input
 * errors (bad model, bad input) will not get better on retry.
 */
function isTransient(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return !/invalid|unknown model|no such model|bad input|too long/i.test(message);
}
