/** Group commit's queue (src/core/group-commit.ts), on its own: groups, stalls and the hand-over between leaders. */
import { describe, expect, it } from "vitest";
import { fitting, GroupCommit } from "../../src/core/group-commit";

/** A queue whose commits are held until released, recording each group. */
function held(groupsPerLeader: number, stallMs = 10_000) {
  const groups: string[][] = [];
  const releases: Array<() => void> = [];
  const queue = new GroupCommit<string>({
    take: (waiting) => waiting.length,
    commit: async (_, group) => {
      groups.push(group);
      await new Promise<void>((r) => releases.push(r));
    },
    fail: () => {},
    stallMs,
    groupsPerLeader,
  });
  const releaseNext = async () => {
    await waitUntilTrue(() => releases.length > 0);
    releases.shift()!();
  };
  return { queue, groups, releaseNext };
}

async function waitUntilTrue(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ready(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(ready()).toBe(true);
}

describe("group commit", () => {
  it("commits what waited during a commit as the next group, in arrival order", async () => {
    const { queue, groups, releaseNext } = held(20);
    const a = queue.put("k", "a");
    const rest = ["b", "c", "d"].map((x) => queue.put("k", x));
    await releaseNext();
    await releaseNext();
    await Promise.all([a, ...rest]);
    expect(groups).toEqual([["a"], ["b", "c", "d"]]);
  });

  it("hands the lane to the first one waiting once a leader has committed its share, and that one's promise carries the rest", async () => {
    const { queue, groups, releaseNext } = held(1);
    let aDone = false;
    let bDone = false;
    const a = queue.put("k", "a").then(() => (aDone = true));
    const b = queue.put("k", "b").then(() => (bDone = true));
    const c = queue.put("k", "c");
    await releaseNext();
    // a led one group and handed over: it is free while b's group is still being written.
    await a;
    expect(groups[0]).toEqual(["a"]);
    expect(bDone).toBe(false);
    await releaseNext();
    await Promise.all([b, c]);
    expect(aDone && bDone).toBe(true);
    expect(groups).toEqual([["a"], ["b", "c"]]);
  });

  it("lets the next group go ahead when a commit stalls", async () => {
    const { queue, groups, releaseNext } = held(20, 30);
    void queue.put("k", "stuck");
    const next = queue.put("k", "next");
    await waitUntilTrue(() => groups.length === 2);
    expect(groups).toEqual([["stuck"], ["next"]]);
    await releaseNext();
    await releaseNext();
    await next;
  });

  it("fits a group within its budget, the first item always", () => {
    const size = (x: number) => x;
    const alike = () => true;
    expect(fitting([5, 3, 2, 1], size, 8, alike)).toBe(2);
    expect(fitting([12, 1], size, 8, alike)).toBe(1);
    expect(fitting([1, 1, 1], size, 8, (x, first) => x === first)).toBe(3);
    expect(fitting([1, 2, 1], size, 8, (x, first) => x === first)).toBe(1);
  });
});
