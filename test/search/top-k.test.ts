/** TopK, the bounded heap behind the local vector index's scan: the same k items, in the same order, as a full sort. */
import { describe, expect, it } from "vitest";
import { TopK } from "../../src/search/top-k";

/** A small deterministic generator (mulberry32), so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("TopK", () => {
  it("keeps the k best, best first, ties by the smaller key, exactly as sorting everything would", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const next = random(seed);
      // Few distinct scores, so ties are common and the tie-break is exercised.
      const items = Array.from({ length: 2_000 }, (_, i) => ({ key: `id-${Math.floor(next() * 1e6)}-${i}`, score: Math.round(next() * 40) / 40 - 0.5 }));
      const sorted = [...items].sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1));
      for (const k of [1, 7, 100, 2_000, 5_000]) {
        const top = new TopK(k, (ref) => items[ref]!.key);
        items.forEach((item, ref) => top.offer(ref, item.score));
        const got = top.take().map((m) => ({ key: items[m.ref]!.key, score: m.score }));
        expect(got, `seed ${seed}, k ${k}`).toEqual(sorted.slice(0, k));
      }
    }
  });

  it("keeps nothing for k = 0 and everything (sorted) when there are fewer than k", () => {
    const keys = ["b", "a", "c"];
    const none = new TopK(0, (ref) => keys[ref]!);
    keys.forEach((_, ref) => none.offer(ref, 1));
    expect(none.take()).toEqual([]);
    const all = new TopK(10, (ref) => keys[ref]!);
    [0.5, 0.5, 0.9].forEach((score, ref) => all.offer(ref, score));
    expect(all.take().map((m) => keys[m.ref])).toEqual(["c", "a", "b"]);
  });
});
