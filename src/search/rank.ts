/**
 * Hybrid ranking for any embedded object type: the caller's full-text ranking and vector
 * similarity, fused by reciprocal rank. Falls back to the full-text ranking, and says why, when
 * semantic search is off, misconfigured or its embedder is failing: search keeps working.
 */
import type { Env } from "../env";
import { reciprocalRankFusion } from "./hybrid";
import { failureText } from "../core/errors";
import { nearest, pendingEmbeddings, selectSemantic } from "./semantic";
import type { EmbedObjectType } from "./sources";

export interface RankRequest {
  env: Env;
  tenantId: string;
  type: EmbedObjectType;
  q: string;
  /** False forces lexical ranking (lexical_only, semantic: false). */
  semantic: boolean;
  /** Defaults to the active embedder's own threshold. */
  minSimilarity?: number;
  /** How many vector neighbours to fetch; over-fetch when the caller filters afterwards. */
  candidates: number;
  /** Equality filters on vector metadata (object_type is added). */
  filter?: Record<string, string>;
  /** Ids best first, from full-text search over the same filters. */
  lexical: () => Promise<string[]>;
}

export interface Ranked {
  id: string;
  score: number;
  lexical_rank: number | null;
  similarity: number | null;
}

export interface RankResult {
  mode: "hybrid" | "lexical";
  /** The embedder that ranked by meaning, or "". */
  embedder: string;
  note: string;
  items: Ranked[];
}

function lexicalOnly(ids: string[], note: string): RankResult {
  return { mode: "lexical", embedder: "", note, items: ids.map((id, i) => ({ id, score: 1 / (i + 1), lexical_rank: i + 1, similarity: null })) };
}

export async function rankHybrid(req: RankRequest): Promise<RankResult> {
  const lexicalIds = req.lexical();
  if (!req.semantic) return lexicalOnly(await lexicalIds, "");
  const { layer, reason } = selectSemantic(req.env);
  if (!layer) return lexicalOnly(await lexicalIds, `${reason}; these are lexical results`);
  let near: { id: string; similarity: number }[];
  try {
    near = await nearest(layer, req.tenantId, req.q, {
      type: req.type,
      topK: req.candidates,
      filter: req.filter,
      minSimilarity: req.minSimilarity ?? layer.embedder.minSimilarity,
    });
  } catch (err) {
    const message = failureText(err, "search vector query");
    console.warn(`[search] vector query failed, serving lexical results: ${message}`);
    return lexicalOnly(await lexicalIds, `the embedder is unavailable (${message.slice(0, 200)}); these are lexical results`);
  }
  const lexical = await lexicalIds;
  const similarity = new Map(near.map((n) => [n.id, n.similarity]));
  const fused = reciprocalRankFusion([lexical, near.map((n) => n.id)]);
  const pending = await pendingEmbeddings(req.env.DB, req.tenantId, req.type).get();
  const note = pending && pending.n > 0 ? `${pending.n} ${req.type}(s) still waiting for an embedding are matched by words only until the backfill runs` : "";
  return {
    mode: "hybrid",
    embedder: layer.embedder.model,
    note,
    items: fused.map((f) => ({ id: f.id, score: f.score, lexical_rank: f.ranks[0] ?? null, similarity: similarity.get(f.id) ?? null })),
  };
}
