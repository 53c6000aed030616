/**
 * Negative knowledge at claim time: task_claim answers, beside the claim, what was tried on the
 * task's paths and undone (change-ledger reverts and rejects) and the decisions about those paths
 * that were rejected or superseded. The task's paths come from its code refs' linked paths, its
 * path reservations and the entities of its changeset.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../../src/core/context";
import { MAX_PRIOR_ENTRIES, priorAttemptsForTask } from "../../../src/work/memory/prior";
import { MINUTE, newWorld, ok, type Structured, type World } from "../../support/helpers";

const REPO = "acme/api";
const T0 = "2026-06-01T12:00:00.000Z";

async function world(prefix: string): Promise<World> {
  const w = await newWorld(prefix, { start: T0 });
  await ok(w.ctx, "repo_register", { slug: REPO, default_branch: "main" });
  await ok(w.ctx, "project_create", { title: "API", key: "API" });
  return w;
}

const newTask = async (ctx: Ctx, title: string) => (await ok(ctx, "task_create", { project_id: "API", title })).task as Structured;

/** An attempt on `path` and its undoing (`revert` or `reject`) a minute later, with the undoing's reason. */
async function undone(w: World, path: string, how: "revert" | "reject", reason: string): Promise<string> {
  const tried = await ok(w.ctx, "log_change", { entity_path: path, change_type: "modify", reasoning: `tried caching in ${path}` });
  w.clock.advance(MINUTE);
  await ok(w.ctx, "log_change", { entity_path: path, change_type: how, reasoning: reason });
  w.clock.advance(MINUTE);
  return tried.id;
}

describe("task_claim", () => {
  it("answers the undone attempts and set-aside decisions on the paths of the task's reservations, newest first", async () => {
    const w = await world("prior-reserved");
    const task = await newTask(w.ctx, "Speed up login");
    const reverted = await undone(w, "src/auth/login.ts::login", "revert", "broke SSO redirects");
    // Kept, not undone: not negative knowledge.
    await ok(w.ctx, "log_change", { entity_path: "src/auth/session.ts", change_type: "modify", reasoning: "shorter sessions" });
    // Outside the task's paths.
    await undone(w, "src/billing/round.ts", "revert", "rounding bug");
    const rejected = await ok(w.ctx, "decision_log", {
      title: "Login cache",
      choice: "Cache sessions in memory",
      status: "rejected",
      rationale: "isolates do not share memory",
      paths: ["src/auth/**"],
    });
    w.clock.advance(MINUTE);
    const old = await ok(w.ctx, "decision_log", { title: "Password hashing", choice: "bcrypt", paths: ["src/auth/hash.ts"] });
    w.clock.advance(MINUTE);
    await ok(w.ctx, "decision_log", { title: "Password hashing", choice: "argon2id", supersedes_decision_id: old.decision.id, paths: ["src/auth/hash.ts"] });
    await ok(w.ctx, "decision_log", { title: "Billing rounding", choice: "half even", status: "rejected", paths: ["src/billing/**"] });
    // A reservation tied to the task, released since: it still says where the work is.
    const other = await w.other("bob");
    await ok(other.ctx, "path_reserve", { repository_id: REPO, paths: ["src/auth/"], task_id: task.ref });
    await ok(other.ctx, "path_release", { repository_id: REPO });

    const claim = await ok(w.ctx, "task_claim", { task_id: task.ref });
    expect(claim.claimed).toBe(true);
    expect(claim.prior_attempts.map((p: Structured) => [p.source, p.id, p.outcome])).toEqual([
      ["decision", old.decision.id, "superseded"],
      ["decision", rejected.decision.id, "rejected"],
      ["change", reverted, "reverted"],
    ]);
    expect(claim.prior_attempts[2]).toEqual({
      source: "change",
      id: reverted,
      path: "src/auth/login.ts::login",
      outcome: "reverted",
      summary: "modify: tried caching in src/auth/login.ts::login",
      reason: "broke SSO redirects",
      at: T0,
    });
    expect(claim.prior_attempts[1]).toMatchObject({ path: "src/auth/**", summary: "Login cache: Cache sessions in memory", reason: "isolates do not share memory" });
    expect(claim.prior_attempts[0].reason).toMatch(/^superseded by decision /);
  });

  it("finds them through the paths linked to the task's code refs and the entities of its changeset", async () => {
    const w = await world("prior-refs");
    const task = await newTask(w.ctx, "Cache headers");
    // A reject that closed no attempt: "we considered it and said no".
    const lru = (await ok(w.ctx, "log_change", { entity_path: "src/cache/lru.ts::get", change_type: "reject", reasoning: "eviction thrashed under load" })).id;
    const billing = await undone(w, "src/billing.ts", "revert", "double charges");
    await ok(w.ctx, "task_code_ref", { task_id: task.id, ref_type: "branch", repository_id: REPO, branch: "cache-headers", paths: ["src/cache/**"] });
    await ok(w.ctx, "log_change", { entity_path: "src/billing.ts", change_type: "modify", reasoning: "this task touches billing", changeset_id: task.ref });
    const claim = await ok(w.ctx, "task_claim", { task_id: task.id });
    expect(claim.prior_attempts.map((p: Structured) => p.id).sort()).toEqual([lru, billing].sort());
    expect(claim.prior_attempts.find((p: Structured) => p.id === lru)).toMatchObject({ outcome: "rejected", reason: "eviction thrashed under load" });
    expect(claim.prior_attempts.find((p: Structured) => p.id === billing)).toMatchObject({ outcome: "reverted", reason: "double charges" });
  });

  it("answers an empty list for a task without paths, and for paths with no history", async () => {
    const w = await world("prior-none");
    await undone(w, "src/auth/login.ts", "revert", "broke SSO");
    const bare = await newTask(w.ctx, "Write the README");
    expect((await ok(w.ctx, "task_claim", { task_id: bare.id })).prior_attempts).toEqual([]);
    const quiet = await newTask(w.ctx, "Tidy the docs");
    await ok(w.ctx, "path_reserve", { repository_id: REPO, paths: ["docs/**"], task_id: quiet.id });
    const claim = await ok(w.ctx, "task_claim", { task_id: quiet.id });
    expect(claim).toMatchObject({ claimed: true, prior_attempts: [] });
    // Not claimed: nothing to answer either.
    const held = await w.other("carol");
    expect(await ok(held.ctx, "task_claim", { task_id: quiet.id })).toMatchObject({ claimed: false, reason: "held", prior_attempts: [] });
  });

  it("reads the changeset's entities through the changeset index, not a walk of every event's path", async () => {
    const w = await world("prior-plan");
    const task = await newTask(w.ctx, "Speed up login");
    // The statements the answer runs, as they are bound, to explain the changeset's afterwards.
    const bound: Array<{ sql: string; params: unknown[] }> = [];
    const recording = {
      prepare: (q: string) => ({ bind: (...params: unknown[]) => (bound.push({ sql: q, params }), env.DB.prepare(q).bind(...params)) }),
      batch: (statements: D1PreparedStatement[]) => env.DB.batch(statements),
    } as unknown as D1Database;
    await priorAttemptsForTask({ ...w.ctx, d1: recording }, { id: task.id, ref: task.ref });
    const changeset = bound.find((b) => b.sql.includes('"changeset_id" in'));
    expect(changeset, bound.map((b) => b.sql).join("\n")).toBeDefined();
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${changeset!.sql}`)
      .bind(...changeset!.params)
      .all<{ detail: string }>();
    const details = plan.results.map((p) => p.detail).join(" | ");
    expect(details).toContain("USING INDEX events_tenant_changeset_idx");
    expect(details).not.toContain("events_tenant_path");
  });

  it(`answers at most ${MAX_PRIOR_ENTRIES}, and never another tenant's`, async () => {
    const w = await world("prior-bound");
    const task = await newTask(w.ctx, "Auth sweep");
    for (let i = 0; i < MAX_PRIOR_ENTRIES + 2; i++) await undone(w, `src/auth/f${i}.ts`, "revert", `undo ${i}`);
    await ok(w.ctx, "path_reserve", { repository_id: REPO, paths: ["src/auth/**"], task_id: task.id });
    const claim = await ok(w.ctx, "task_claim", { task_id: task.id });
    expect(claim.prior_attempts).toHaveLength(MAX_PRIOR_ENTRIES);
    expect(claim.prior_attempts[0].reason).toBe(`undo ${MAX_PRIOR_ENTRIES + 1}`);

    const b = await world("prior-bound-b");
    const theirs = await newTask(b.ctx, "Auth sweep");
    await ok(b.ctx, "path_reserve", { repository_id: REPO, paths: ["src/auth/**"], task_id: theirs.id });
    expect((await ok(b.ctx, "task_claim", { task_id: theirs.id })).prior_attempts).toEqual([]);
  });
});
