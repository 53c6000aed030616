/**
 * The claims object's queue. Work runs one turn at a time in arrival order; a run of claims queued
 * back to back is one turn, committed together (a group commit), so while one D1 batch is in flight
 * the claims arriving meanwhile gather for the next. Work that reads before it writes (path
 * reservations, the lease alarm) takes a turn of its own, in its place in the line.
 */
import type { BatchMember } from "../work/claims/group";

type Entry =
  | { kind: "alone"; run: () => Promise<unknown>; resolve: (v: unknown) => void; reject: (e: unknown) => void }
  | { kind: "member"; member: BatchMember<unknown>; resolve: (v: unknown) => void; reject: (e: unknown) => void };

type Member = Extract<Entry, { kind: "member" }>;

export class CommitQueue {
  private readonly line: Entry[] = [];
  private draining = false;

  /**
   * `commit` commits a group and answers each member (in order); `maxGroup` bounds a group, so one
   * batch stays well inside D1's per-batch limits.
   */
  constructor(
    private readonly commit: (members: ReadonlyArray<BatchMember<unknown>>) => Promise<Array<PromiseSettledResult<unknown>>>,
    private readonly maxGroup = 32,
  ) {}

  /** Runs `run` by itself, after everything queued before it. */
  alone<T>(run: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => this.push({ kind: "alone", run, resolve: resolve as (v: unknown) => void, reject }));
  }

  /** Queues a claim; it commits with the claims queued right before and after it. */
  join<R>(member: BatchMember<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => this.push({ kind: "member", member: member as BatchMember<unknown>, resolve: resolve as (v: unknown) => void, reject }));
  }

  private push(entry: Entry): void {
    this.line.push(entry);
    if (!this.draining) {
      this.draining = true;
      void this.drain();
    }
  }

  private async drain(): Promise<void> {
    // One microtask first, so callers queuing in the same tick already share the first group.
    await Promise.resolve();
    try {
      while (this.line.length > 0) {
        const head = this.line[0]!;
        if (head.kind === "alone") {
          this.line.shift();
          await Promise.resolve().then(head.run).then(head.resolve, head.reject);
          continue;
        }
        let n = 1;
        while (n < this.line.length && n < this.maxGroup && this.line[n]!.kind === "member") n++;
        const group = this.line.splice(0, n) as Member[];
        try {
          const settled = await this.commit(group.map((e) => e.member));
          group.forEach((e, i) => {
            const s = settled[i]!;
            if (s.status === "fulfilled") e.resolve(s.value);
            else e.reject(s.reason);
          });
        } catch (err) {
          for (const e of group) e.reject(err);
        }
      }
    } finally {
      this.draining = false;
    }
  }
}
