/**
 * The k best of a long stream of scored items, kept in a bounded heap: O(n log k) time and k slots
 * of memory, instead of an object per item and a sort of them all. Items are integer refs (a row
 * number); the order is higher score first, then the smaller key, as a full sort by
 * `b.score - a.score || (a.key < b.key ? -1 : 1)` would give.
 */
export class TopK {
  private readonly k: number;
  private readonly scores: Float64Array;
  private readonly refs: Int32Array;
  private size = 0;

  /** `keyOf` breaks ties between equal scores; it is asked only then. */
  constructor(
    k: number,
    private readonly keyOf: (ref: number) => string,
  ) {
    this.k = Math.max(0, Math.trunc(k));
    this.scores = new Float64Array(this.k);
    this.refs = new Int32Array(this.k);
  }

  /** Whether slot a ranks below slot b. */
  private worse(a: number, b: number): boolean {
    const sa = this.scores[a]!;
    const sb = this.scores[b]!;
    return sa < sb || (sa === sb && this.keyOf(this.refs[a]!) > this.keyOf(this.refs[b]!));
  }

  private swap(a: number, b: number): void {
    const s = this.scores[a]!;
    this.scores[a] = this.scores[b]!;
    this.scores[b] = s;
    const r = this.refs[a]!;
    this.refs[a] = this.refs[b]!;
    this.refs[b] = r;
  }

  offer(ref: number, score: number): void {
    if (this.k === 0) return;
    if (this.size < this.k) {
      // Append, then sift up: the root stays the worst item kept.
      let i = this.size++;
      this.scores[i] = score;
      this.refs[i] = ref;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.worse(i, parent)) break;
        this.swap(i, parent);
        i = parent;
      }
      return;
    }
    const worst = this.scores[0]!;
    if (score < worst || (score === worst && this.keyOf(ref) >= this.keyOf(this.refs[0]!))) return;
    // Replace the root, then sift down.
    this.scores[0] = score;
    this.refs[0] = ref;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && this.worse(right, left) ? right : left;
      if (!this.worse(child, i)) break;
      this.swap(i, child);
      i = child;
    }
  }

  /** What was kept, best first. */
  take(): { ref: number; score: number }[] {
    const out = Array.from({ length: this.size }, (_, i) => ({ ref: this.refs[i]!, score: this.scores[i]! }));
    return out.sort((a, b) => b.score - a.score || (this.keyOf(a.ref) < this.keyOf(b.ref) ? -1 : 1));
  }
}
