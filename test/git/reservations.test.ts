/**
 * Path reservations where the write happens: batch_commit, git_merge and git_cherry_pick refuse
 * another actor's write to a reserved path and leave the branch as it was; a holder's write under a
 * fencing token that is no longer live is refused; the holder's own writes go through.
 */
import { describe, expect, it } from "vitest";
import { callTool } from "../../src/core/call";
import { InputNeeded } from "../../src/core/confirm";
import type { Ctx } from "../../src/core/context";
import { findTool } from "../../src/server/registry";
import { FakeGitHub } from "../support/github/fake";
import { FakeRepo } from "../support/github/fake-repo";
import { connectGitHub } from "../support/github/tenant";
import { fails, makeCtx, ok, seedIdentity, TestClock } from "../support/helpers";

const REPO = "octocat/Hello-World";
let n = 0;

async function setup(): Promise<{ alice: Ctx; bob: Ctx; clock: TestClock; repo: FakeRepo; main: string }> {
  const tenant = `git-rsv-${++n}-${crypto.randomUUID().slice(0, 6)}`;
  const a = await seedIdentity(tenant, "alice");
  const b = await seedIdentity(tenant, "bob");
  const gh = new FakeGitHub();
  const repo = new FakeRepo(gh);
  const main = repo.write("main", { "README.md": "hello\n", "src/auth/login.ts": "v1\n", "src/app.ts": "app\n" }, "initial");
  const clock = new TestClock();
  const alice = await connectGitHub(makeCtx(a, clock), gh);
  const bob = { ...alice, actorId: b.actorId, actorName: b.actorName };
  // Registered on the host the fake GitHub serves, as the git tools require.
  await ok(alice, "repo_register", { remote_url: `https://api.github.test/${REPO}` });
  return { alice, bob, clock, repo, main };
}

const notices = async (ctx: Ctx) => (await ok(ctx, "notification_query", {})).items as { kind: string; summary: string }[];

const commit = (path: string, content: string, more: Record<string, unknown> = {}) => ({ repo: REPO, commits: [{ message: `edit ${path}`, files: [{ path, content }] }], format: "json", ...more });

describe("path reservations at the write", () => {
  it("refuses another actor's batch_commit to a reserved path, naming the holder, and leaves the branch unchanged", async () => {
    const { alice, bob, repo, main } = await setup();
    const held = await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/**"], reason: "login rewrite" });
    expect(held.reserved).toBe(true);
    const e = await fails(bob, "batch_commit", commit("src/auth/login.ts", "bob\n"));
    expect(e.code).toBe("path_reserved");
    expect(e.message).toContain("src/auth/login.ts (held by alice as src/auth/** until");
    expect(e.message).toContain("src/auth/**");
    expect(e.hint).toMatch(/path_reservations/);
    expect(e.retryable).toBe(true);
    expect(repo.refs.get("main")).toBe(main);
    // Paths nobody holds are free, and the holder writes its own.
    expect((await ok(bob, "batch_commit", commit("src/app.ts", "bob\n"))).committed).toBe(1);
    const mine = await ok(alice, "batch_commit", commit("src/auth/login.ts", "alice\n", { fencing_token: held.fencing_token }));
    expect(mine.committed).toBe(1);
    expect(repo.files("main")["src/auth/login.ts"]).toBe("alice\n");
  });

  it("refuses a write under a fencing token whose lease ran out or was released", async () => {
    const { alice, clock, repo } = await setup();
    const held = await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/"], lease_seconds: 60 });
    clock.advance(61_000);
    const head = repo.refs.get("main");
    const e = await fails(alice, "batch_commit", commit("src/auth/login.ts", "late\n", { fencing_token: held.fencing_token }));
    expect(e.code).toBe("stale_fencing_token");
    expect(e.hint).toMatch(/path_reserve/);
    expect(repo.refs.get("main")).toBe(head);
    const again = await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/"] });
    expect(again.fencing_token).toBeGreaterThan(held.fencing_token);
    await ok(alice, "path_release", { repository_id: REPO });
    expect((await fails(alice, "batch_commit", commit("src/auth/login.ts", "x\n", { fencing_token: again.fencing_token }))).code).toBe("stale_fencing_token");
  });

  it("refuses git_merge and git_cherry_pick whose result changes a reserved path, before the branch moves", async () => {
    const { alice, bob, repo, main } = await setup();
    const touching = repo.write("feature/auth", { "src/auth/login.ts": "bob's\n" }, "bob edits login", main);
    const clean = repo.write("feature/app", { "src/app.ts": "app2\n" }, "bob edits app", main);
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/*.ts"] });
    expect((await fails(bob, "git_merge", { repo: REPO, sources: ["feature/auth"] })).code).toBe("path_reserved");
    expect((await fails(bob, "git_cherry_pick", { repo: REPO, sources: [touching] })).code).toBe("path_reserved");
    expect(repo.refs.get("main")).toBe(main);
    expect((await ok(bob, "git_merge", { repo: REPO, sources: ["feature/app"] })).headSha).toBe(clean);
    // Released: the same merge goes through.
    await ok(alice, "path_release", { repository_id: REPO, paths: ["src/auth/*.ts"] });
    expect((await ok(bob, "git_merge", { repo: REPO, sources: ["feature/auth"] })).ok).toBe(true);
    expect(repo.files("main")["src/auth/login.ts"]).toBe("bob's\n");
  });

  it("asks the person behind a client that can be asked; a confirmed override is logged and told to the holder", async () => {
    const { alice, bob, repo, main } = await setup();
    await ok(alice, "path_reserve", { repository_id: REPO, paths: ["src/auth/**"] });
    const asking = (answer: "unanswered" | "declined" | "accepted" | "unavailable"): Ctx => ({ ...bob, confirmer: { answer: () => answer } });
    // A 2026-07-28 round: the call ends with a question, and nothing is written.
    await expect(callTool(findTool("batch_commit")!, asking("unanswered"), commit("src/auth/login.ts", "bob\n"))).rejects.toBeInstanceOf(InputNeeded);
    expect((await fails(asking("declined"), "batch_commit", commit("src/auth/login.ts", "bob\n"))).code).toBe("confirmation_declined");
    // An agent's own confirm: true is no override where nobody can be asked.
    expect((await fails(asking("unavailable"), "batch_commit", commit("src/auth/login.ts", "bob\n", { confirm: true }))).code).toBe("path_reserved");
    expect(repo.refs.get("main")).toBe(main);
    expect((await notices(alice)).filter((x) => x.kind === "paths.overridden")).toEqual([]);

    const done = await ok(asking("accepted"), "batch_commit", commit("src/auth/login.ts", "bob\n"));
    expect(done.committed).toBe(1);
    expect(repo.files("main")["src/auth/login.ts"]).toBe("bob\n");
    const told = (await notices(alice)).filter((x) => x.kind === "paths.overridden");
    expect(told).toHaveLength(1);
    expect(told[0]!.summary).toContain("bob wrote src/auth/login.ts");
    expect(told[0]!.summary).toContain("src/auth/**");
    const logged = (await ok(alice, "activity_query", { verb: "paths.override" })).items as { actor_id: string; severity: string; summary: string }[];
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ actor_id: bob.actorId, severity: "warn" });
    // The holder's own notices stay theirs: bob was told nothing.
    expect((await notices(bob)).filter((x) => x.kind === "paths.overridden")).toEqual([]);
  });

  it("holds nothing in a repository nobody registered, and a fencing token there is refused", async () => {
    const { alice } = await setup();
    const other = "octocat/Spoon-Knife";
    await ok(alice, "repo_register", { slug: "octocat/another" });
    const e = await fails(alice, "batch_commit", { ...commit("x.txt", "y"), repo: other, fencing_token: 1 });
    expect(e.code).toBe("stale_fencing_token");
  });
});
