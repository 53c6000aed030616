/**
 * Group commit, per isolate: what is put while a group is being committed waits, and everything
 * waiting then goes in the next group. N writers arriving together cost about as many commits as
 * there are groups, not N, and never race each other. One lane per key (a tenant's chain, the
 * isolate's embeddings).
 *
 * A group is committed in the context of the request whose put started the lane's drain; that
 * request keeps the drain alive (`put` returns it for ctx.waitUntil), since the others' answers
 * depend on it after its own response is sent.
 */
export interface GroupCommitOptions<T> {
  /** How many of the waiting items (in arrival order) the next group takes; at least one is taken. */
  take(waiting: readonly T[]): number;
  /** Commits a group and settles each of its items. */
  commit(key: string, group: T[]): Promise<void>;
  /** Settles each item of a group whose commit threw. */
  fail(group: T[], err: unknown): void;
  /** A group not committed after this long lets the next one go ahead (its own commit still runs). */
  stallMs: number;
}

export class GroupCommit<T> {
  private readonly lanes = new Map<string, T[]>();

  constructor(private readonly opts: GroupCommitOptions<T>) {}

  /** Queues `item`. Returns the drain this put started, for the caller to keep alive, or null when one was running. */
  put(key: string, item: T): Promise<void> | null {
    const waiting = this.lanes.get(key);
    if (waiting) {
      waiting.push(item);
      return null;
    }
    this.lanes.set(key, [item]);
    return this.drain(key);
  }

  private async drain(key: string): Promise<void> {
    for (;;) {
      const waiting = this.lanes.get(key)!;
      if (waiting.length === 0) {
        this.lanes.delete(key);
        return;
      }
      const group = waiting.splice(0, Math.max(1, this.opts.take(waiting)));
      const committed = this.opts.commit(key, group).catch((err: unknown) => this.opts.fail(group, err));
      let stalled: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([committed, new Promise<void>((r) => (stalled = setTimeout(r, this.opts.stallMs)))]);
      clearTimeout(stalled);
    }
  }
}

/**
 * How many of the waiting items fit the next group: those alike with the first (the same binding),
 * up to `budget` units of `size` in all; the first always goes, whatever its size.
 */
export function fitting<T>(waiting: readonly T[], size: (item: T) => number, budget: number, alike: (item: T, first: T) => boolean): number {
  let used = 0;
  let n = 0;
  for (const item of waiting) {
    if (n > 0 && (!alike(item, waiting[0]!) || used + size(item) > budget)) break;
    used += size(item);
    n++;
  }
  return n;
}
