/**
 * Reciprocal rank fusion (Cormack, Clarke & Büttcher, 2009): each ranked list gives an item
 * 1 / (k + rank); the sums order the fused list. It needs no score calibration, which matters
 * because bm25 and cosine similarity live on unrelated scales.
 */

/** The constant from the paper; it damps the weight of the very top ranks. */
export const RRF_K = 60;

export interface Fused {
  id: string;
  score: number;
  /** 1-based rank in each input list, or null where the item was absent. */
  ranks: (number | null)[];
}

export function reciprocalRankFusion(lists: readonly (readonly string[])[], k = RRF_K): Fused[] {
  const byId = new Map<string, Fused>();
  lists.forEach((list, li) => {
    list.forEach((id, i) => {
      let f = byId.get(id);
      if (!f) {
        f = { id, score: 0, ranks: lists.map(() => null) };
        byId.set(id, f);
      }
      if (f.ranks[li] !== null) return; // a repeated id keeps its best rank
      f.ranks[li] = i + 1;
      f.score += 1 / (k + i + 1);
    });
  });
  // Ties (e.g. rank 1 in one list vs rank 1 in the other) keep the first list's order.
  return [...byId.values()].sort((a, b) => b.score - a.score || firstRank(a) - firstRank(b));
}

function firstRank(f: Fused): number {
  for (const r of f.ranks) if (r !== null) return r;
  return Number.MAX_SAFE_INTEGER;
}
