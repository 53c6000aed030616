/**
 * Group commit, per isolate: what is put while a group is being committed waits, and everything
 * waiting then goes in the next group. N writers arriving together cost about as many commits as
 * there are groups, not N, and never race each other. One lane per key (a tenant's chain, the
 * isolate's embeddings).
 *
 * Whoever's put finds a lane idle leads it: the groups are committed in its request's context, which
 * `put`'s promise keeps alive (the caller hands it to ctx.waitUntil). A leader commits at most
 * `groupsPerLeader` groups; then the first one waiting takes over, in its own request's context (a
 * promise resolved from another request's context continues in the context that awaits it), so no
 * request's invocation carries an unbounded share of the others' work.
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
  /** Groups one leader commits before the next one waiting takes over. */
  groupsPerLeader: number;
}

interface Entry<T> {
  item: T;
  /** Settles this entry's put: true makes its caller the lane's next leader. */
  lead(leads: boolean): void;
}

export class GroupCommit<T> {
  private readonly lanes = new Map<string, Entry<T>[]>();

  constructor(private readonly opts: GroupCommitOptions<T>) {}

  /**
   * Queues `item`. The promise ends once the item's group was handed to the database and, if this
   * caller came to lead the lane, once it has handed over; keep it alive for as long (waitUntil).
   */
  put(key: string, item: T): Promise<void> {
    let lead!: (leads: boolean) => void;
    const led = new Promise<boolean>((r) => (lead = r));
    const waiting = this.lanes.get(key);
    if (!waiting) {
      this.lanes.set(key, [{ item, lead }]);
      return this.lead(key);
    }
    waiting.push({ item, lead });
    return led.then((leads) => (leads ? this.lead(key) : undefined));
  }

  private async lead(key: string): Promise<void> {
    for (let groups = 0; ; groups++) {
      const waiting = this.lanes.get(key)!;
      if (waiting.length === 0) {
        this.lanes.delete(key);
        return;
      }
      if (groups === this.opts.groupsPerLeader) {
        // The first one waiting leads from here on, in its own request; it stays first in line.
        waiting[0]!.lead(true);
        return;
      }
      const group = waiting.splice(0, Math.max(1, this.opts.take(waiting.map((e) => e.item))));
      const items = group.map((e) => e.item);
      const committed = this.opts.commit(key, items).catch((err: unknown) => this.opts.fail(items, err));
      let stalled: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([committed, new Promise<void>((r) => (stalled = setTimeout(r, this.opts.stallMs)))]);
      clearTimeout(stalled);
      for (const e of group) e.lead(false);
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
