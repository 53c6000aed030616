/**
 * The claims object's queue (src/durable/commit-queue.ts) with a stand-in commit: which members go
 * into one group, in what order, and how work of its own turn keeps its place in the line.
 */
import { describe, expect, it } from "vitest";
import { CommitQueue } from "../../src/durable/commit-queue";
import type { BatchMember } from "../../src/work/claims/group";

/** A member answering `name`; the stand-in commit never runs its statements. */
const member = (name: string): BatchMember<string> => ({ statements: () => [], settle: async () => name });

/** A queue whose commit records each group's members and answers them (or fails the ones named). */
function recorder(opts: { maxGroup?: number; failing?: Set<string>; throwing?: Set<string> } = {}) {
  const log: string[][] = [];
  const queue = new CommitQueue(async (members) => {
    const names = await Promise.all(members.map((m) => m.settle([])));
    log.push(names as string[]);
    if ((names as string[]).some((n) => opts.throwing?.has(n))) throw new Error("commit failed");
    return (names as string[]).map((n) => (opts.failing?.has(n) ? { status: "rejected" as const, reason: new Error(`${n} failed`) } : { status: "fulfilled" as const, value: n }));
  }, opts.maxGroup);
  return { log, queue };
}

describe("CommitQueue", () => {
  it("commits claims queued in the same tick as one group, and the ones arriving during its commit as the next", async () => {
    const { log, queue } = recorder();
    const first = [queue.join(member("a")), queue.join(member("b")), queue.join(member("c"))];
    // Arrives while the first group is being committed.
    await Promise.resolve();
    await Promise.resolve();
    const later = [queue.join(member("d")), queue.join(member("e"))];
    expect(await Promise.all([...first, ...later])).toEqual(["a", "b", "c", "d", "e"]);
    expect(log).toEqual([
      ["a", "b", "c"],
      ["d", "e"],
    ]);
  });

  it("work of its own turn splits the line where it stands: nothing before it waits for it, nothing after it runs before it", async () => {
    const { log, queue } = recorder();
    const order: string[] = [];
    const results = await Promise.all([
      queue.join(member("a")).then((v) => (order.push(v), v)),
      queue.join(member("b")).then((v) => (order.push(v), v)),
      queue
        .alone(async () => {
          log.push(["alone"]);
          return "x";
        })
        .then((v) => (order.push(v), v)),
      queue.join(member("c")).then((v) => (order.push(v), v)),
    ]);
    expect(results).toEqual(["a", "b", "x", "c"]);
    expect(log).toEqual([["a", "b"], ["alone"], ["c"]]);
    expect(order).toEqual(["a", "b", "x", "c"]);
  });

  it("bounds a group at maxGroup members", async () => {
    const { log, queue } = recorder({ maxGroup: 2 });
    await Promise.all(["a", "b", "c", "d", "e"].map((n) => queue.join(member(n))));
    expect(log).toEqual([["a", "b"], ["c", "d"], ["e"]]);
  });

  it("a member the commit failed gets its own error; a commit that throws fails its group only, and the line goes on", async () => {
    const { queue } = recorder({ failing: new Set(["b"]) });
    const settled = await Promise.allSettled([queue.join(member("a")), queue.join(member("b")), queue.join(member("c"))]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((settled[1] as PromiseRejectedResult).reason.message).toBe("b failed");

    const broken = recorder({ throwing: new Set(["y"]) });
    const group = Promise.allSettled([broken.queue.join(member("x")), broken.queue.join(member("y"))]);
    const alone = broken.queue.alone(async () => {
      throw new Error("alone failed");
    });
    await expect(alone).rejects.toThrow("alone failed");
    expect((await group).map((s) => s.status)).toEqual(["rejected", "rejected"]);
    expect(await broken.queue.join(member("z"))).toBe("z");
    expect(broken.log).toEqual([["x", "y"], ["z"]]);
  });
});
