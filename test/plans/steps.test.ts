/** Step tracking (start/complete/fail/view_progress): readiness, retries, races, tasks as the steps' state, tenants. */
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { DERIVED_WINDOW_MS } from "../../src/core/idempotency";
import { plan, saved, statuses, stepRows } from "../support/plan-steps";
import { call, count, fails, interleaved, MINUTE, newWorld, ok, refusedWithoutWrites, sqlOf } from "../support/helpers";

const START = "2026-07-01T09:00:00.000Z";

describe("start_step", () => {
  it("starts a pending step with a warning, and refuses to start one that is not pending or ready", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    const early = await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 4 });
    expect(early.warnings).toEqual(["Step 4 depends on step(s) 2, 3, not completed yet."]);
    // Within the retry window the identical call is a retry of the first and gets its success back;
    // once the window has passed it is a new call, and the step is no longer pending or ready.
    expect((await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 4 })).idempotent_replay).toBe(true);
    w.clock.advance(DERIVED_WINDOW_MS);
    const again = await refusedWithoutWrites(w.ctx, "start_step", { plan_id: "rl", step_number: 4 }, "invalid_transition", stepRows(w.ctx));
    expect(again.message).toBe("Step 4 is in_progress; only pending or ready steps can be started.");
    await ok(w.ctx, "complete_step", { plan_id: "rl", step_number: 5 });
    const finished = await fails(w.ctx, "start_step", { plan_id: "rl", step_number: 5 });
    expect(finished).toMatchObject({ code: "invalid_transition", message: "Step 5 is completed; only pending or ready steps can be started." });
  });

  it("start, fail with retry, start again at once: the second start is a new call that starts the step, not a replay", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 1 });
    await ok(w.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: "flaky", retry: true });
    const restarted = await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 1 });
    expect(restarted.idempotent_replay).toBeUndefined();
    expect((await statuses(w.ctx, "rl"))[1]).toBe("in_progress");
  });

  it("two agents starting the same step at once: exactly one wins, the other is told", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    const b = await w.other("b");
    const [x, y] = await Promise.all([call(w.ctx, "start_step", { plan_id: "rl", step_number: 1 }), call(b.ctx, "start_step", { plan_id: "rl", step_number: 1 })]);
    expect([x.isError, y.isError].sort()).toEqual([false, true]);
    const loser = x.isError ? x : y;
    expect(["conflict", "invalid_transition"]).toContain(loser.error.code);
    expect(await count(`SELECT COUNT(*) AS n FROM plan_steps WHERE tenant_id = ? AND plan_id = 'rl' AND status = 'in_progress'`, w.id.tenantId)).toBe(1);
  });
});

describe("complete_step", () => {
  it("walks a plan to completed: readiness recomputed after every move, the plan executing then completed", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    const s1 = await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 1 });
    expect(s1).toMatchObject({ plan_status: "executing", current_steps: [1], ready_steps: [5], warnings: [] });
    expect(s1.step).toMatchObject({ status: "in_progress", started_at: START, started_by: w.id.actorId });

    w.clock.advance(MINUTE);
    const c1 = await ok(w.ctx, "complete_step", { plan_id: "rl", step_number: 1, notes: "bucket in place", files_modified: ["src/http/limit.ts"] });
    expect(c1.step).toMatchObject({ status: "completed", notes: "bucket in place", files_modified: ["src/http/limit.ts"], finished_by: w.id.actorId });
    expect(c1.ready_steps).toEqual([2, 3, 5]);
    expect(c1.progress.percentage).toBe(20);

    // A ready step may be completed without being started first.
    for (const n of [2, 3, 4, 5]) await ok(w.ctx, "complete_step", { plan_id: "rl", step_number: n });
    const done = await ok(w.ctx, "view_progress", { plan_id: "rl" });
    expect(done).toMatchObject({ plan_status: "completed", implied_status: "completed", ready_steps: [], current_steps: [] });
    expect(done.progress).toMatchObject({ completed_steps: 5, percentage: 100 });
    expect((await ok(w.ctx, "list_plans", { status: "completed" })).items.map((p: { id: string }) => p.id)).toEqual(["rl"]);
  });

  it("refuses to complete a step whose dependencies are not done, and one already finished", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    const err = await refusedWithoutWrites(w.ctx, "complete_step", { plan_id: "rl", step_number: 2 }, "invalid_transition", stepRows(w.ctx));
    expect(err.message).toBe("Step 2 is pending; only in_progress or ready steps can be completed.");
    expect(err.hint).toContain("(1)");
    await ok(w.ctx, "complete_step", { plan_id: "rl", step_number: 1 });
    // Past the retry window the identical call is a new one, not a retry of the first.
    w.clock.advance(DERIVED_WINDOW_MS);
    expect((await fails(w.ctx, "complete_step", { plan_id: "rl", step_number: 1 })).message).toBe("Step 1 is completed; only in_progress or ready steps can be completed.");
  });
});

describe("fail_step", () => {
  it("fail_step with skip_dependents lands whole or not at all: a dependent moved meanwhile stores none of its moves", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    const b = await w.other("b");
    await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 1 });
    const before = await statuses(w.ctx, "rl");
    const movesSteps = (st: D1PreparedStatement[]) => st.some((x) => /INSERT INTO plan_steps/.test(sqlOf(x)));
    // Between fail_step's reads and its write, another agent starts step 2 (a dependent of step 1).
    const racing = interleaved(w.ctx, () => ok(b.ctx, "start_step", { plan_id: "rl", step_number: 2 }), movesSteps);
    const lost = await call(racing, "fail_step", { plan_id: "rl", step_number: 1, error: "broken", skip_dependents: true });
    expect(lost.error).toMatchObject({ code: "conflict", retryable: true });
    expect(lost.error.message).toContain("Step 2");
    // Step 1 is still in progress, and no other dependent was skipped: only b's start landed.
    expect(await statuses(w.ctx, "rl")).toEqual({ ...before, 2: "in_progress" });
    expect(await count(`SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb IN ('plan.step_failed', 'plan.step_skipped')`, w.id.tenantId)).toBe(0);
  });

  it("fail_step: a failure blocks the dependents, retry re-queues it at most three times, then it stays failed", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 1 });
    const failed = await ok(w.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: "the bucket leaks" });
    expect(failed.step).toMatchObject({ status: "failed", error: "the bucket leaks", retries: 0 });
    expect(await statuses(w.ctx, "rl")).toEqual({ 1: "failed", 2: "blocked", 3: "blocked", 4: "blocked", 5: "ready" });
    expect(failed.progress).toMatchObject({ failed_steps: 1, blocked_steps: 3 });

    for (let i = 1; i <= 3; i++) {
      const r = await ok(w.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: `try ${i}`, retry: true });
      expect(r.step).toMatchObject({ status: "ready", retries: i, error: `try ${i}` });
      expect(r.warnings).toEqual([]);
      await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 1 });
    }
    const last = await ok(w.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: "try 4", retry: true });
    expect(last.step).toMatchObject({ status: "failed", retries: 3 });
    expect(last.warnings).toEqual(["Step 1 was retried 3 times, the most allowed: it stays failed."]);
  });

  it("fail_step skip lets dependents go on; skip_dependents skips every step waiting on it, and the plan ends failed or completed as the reference says", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    const skipped = await ok(w.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: "not needed", skip: true });
    expect(skipped.step).toMatchObject({ status: "skipped", notes: "Skipped after failure: not needed" });
    expect(skipped.ready_steps).toEqual([2, 3, 5]);

    const w2 = await newWorld("steps", { start: START });
    await saved(w2);
    await ok(w2.ctx, "complete_step", { plan_id: "rl", step_number: 5 });
    const cascade = await ok(w2.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: "design rejected", skip_dependents: true });
    expect(cascade.skipped_dependents).toEqual([2, 3, 4]);
    expect(await statuses(w2.ctx, "rl")).toEqual({ 1: "failed", 2: "skipped", 3: "skipped", 4: "skipped", 5: "completed" });
    expect(cascade.plan_status).toBe("failed");
    expect(cascade.progress.percentage).toBe(80);
    const s4 = (await ok(w2.ctx, "view_progress", { plan_id: "rl" })).steps[3];
    expect(s4.notes).toBe("Skipped due to failure of step 1");
  });

  it("bad input changes nothing: unknown plan and step, retry with skip, a missing error, a finished step failing", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    const state = stepRows(w.ctx);
    expect((await refusedWithoutWrites(w.ctx, "start_step", { plan_id: "nope", step_number: 1 }, "not_found", state)).message).toBe("Plan nope not found");
    const missing = await refusedWithoutWrites(w.ctx, "start_step", { plan_id: "rl", step_number: 9 }, "not_found", state);
    expect(missing.message).toBe("Step 9 not found in plan rl");
    expect(missing.hint).toBe("The plan's steps are 1, 2, 3, 4, 5.");
    await refusedWithoutWrites(w.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: "x", retry: true, skip: true }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "fail_step", { plan_id: "rl", step_number: 1 }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: "   " }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "start_step", { plan_id: "rl", step_number: 0 }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "complete_step", { plan_id: "rl", step_number: 1, files_modified: "src/a.ts" }, "invalid_input", state);
    await ok(w.ctx, "complete_step", { plan_id: "rl", step_number: 1 });
    const done = await refusedWithoutWrites(w.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: "late" }, "invalid_transition", stepRows(w.ctx));
    expect(done.message).toBe("Step 1 is completed; only pending or ready or in_progress or blocked or failed steps can be failed.");
  });
});

describe("view_progress", () => {
  it("derives ready and pending from depends_on before anything moved", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    const p = await ok(w.ctx, "view_progress", { plan_id: "rl" });
    expect(p).toMatchObject({ plan_id: "rl", plan_version: 1, plan_status: "ready", implied_status: "ready", ready_steps: [1, 5], current_steps: [] });
    expect(p.progress).toEqual({ total_steps: 5, completed_steps: 0, failed_steps: 0, skipped_steps: 0, in_progress_steps: 0, blocked_steps: 0, ready_steps: 2, pending_steps: 3, percentage: 0 });
    expect(p.steps[3]).toMatchObject({ step_number: 4, id: "step_4", title: "Tests", status: "pending", depends_on: [2, 3], retries: 0, started_at: null, commit: null, task: null });
  });

  it("follows the current version: a step added by a new version is tracked, a removed step's state is ignored", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    await ok(w.ctx, "complete_step", { plan_id: "rl", step_number: 5 });
    const next = plan("rl");
    next.steps = [...next.steps.slice(0, 4), { step_number: 6, title: "Load test", depends_on: [4] }];
    await ok(w.ctx, "save_plan", { plan: next, overwrite: true });
    const p = await ok(w.ctx, "view_progress", { plan_id: "rl" });
    expect(p.plan_version).toBe(2);
    expect(p.steps.map((s: { step_number: number; status: string }) => `${s.step_number}:${s.status}`)).toEqual(["1:ready", "2:pending", "3:pending", "4:pending", "6:pending"]);
  });

  it("keeps tenants apart: another tenant's plan is not found for every step tool", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    const them = await newWorld("steps", { start: START });
    for (const [tool, args] of [
      ["start_step", { plan_id: "rl", step_number: 1 }],
      ["complete_step", { plan_id: "rl", step_number: 1 }],
      ["fail_step", { plan_id: "rl", step_number: 1, error: "x" }],
      ["view_progress", { plan_id: "rl" }],
      ["plan_to_tasks", { plan_id: "rl", project_id: "X" }],
    ] as const) {
      expect(await fails(them.ctx, tool, args), tool).toMatchObject({ code: "not_found", message: "Plan rl not found" });
    }
    expect(await count(`SELECT COUNT(*) AS n FROM plan_steps WHERE plan_id = 'rl' AND tenant_id = ?`, w.id.tenantId)).toBe(0);
  });

  describe("a new version of a plan whose steps have moved", () => {
    const progressOf = async (ctx: Ctx, id = "rl") => {
      const p = await ok(ctx, "view_progress", { plan_id: id });
      return { version: p.plan_version, plan_status: p.plan_status, implied_status: p.implied_status };
    };

    it("save_plan overwriting an executing plan keeps its progress, and its status says what the steps say", async () => {
      const w = await newWorld("steps-overwrite", { start: START });
      await saved(w);
      await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 1 });
      await ok(w.ctx, "save_plan", { plan: plan("rl", { goal: "Add rate limiting to the public and admin APIs" }), overwrite: true });
      expect(await progressOf(w.ctx)).toEqual({ version: 2, plan_status: "executing", implied_status: "executing" });
      expect((await ok(w.ctx, "list_plans", { status: "executing" })).items.map((p: { id: string }) => p.id)).toEqual(["rl"]);
      // A rollback is a new version too.
      await ok(w.ctx, "rollback_plan", { plan_id: "rl", target_version: 1 });
      expect(await progressOf(w.ctx)).toEqual({ version: 3, plan_status: "executing", implied_status: "executing" });
    });

    it("a plan whose every step is done stays completed through an overwrite; one with nothing moved is ready again", async () => {
      const w = await newWorld("steps-overwrite-done", { start: START });
      await ok(w.ctx, "save_plan", { plan: { id: "one", goal: "One step", steps: [{ step_number: 1, title: "Do it" }] } });
      await ok(w.ctx, "start_step", { plan_id: "one", step_number: 1 });
      await ok(w.ctx, "complete_step", { plan_id: "one", step_number: 1 });
      await ok(w.ctx, "save_plan", { plan: { id: "one", goal: "One step, described", steps: [{ step_number: 1, title: "Do it" }] }, overwrite: true });
      expect(await progressOf(w.ctx, "one")).toEqual({ version: 2, plan_status: "completed", implied_status: "completed" });
      await saved(w, "idle");
      await ok(w.ctx, "save_plan", { plan: plan("idle", { goal: "Changed" }), overwrite: true });
      expect(await progressOf(w.ctx, "idle")).toEqual({ version: 2, plan_status: "ready", implied_status: "ready" });
    });
  });

  describe("the timeline", () => {
    it("records plan writes and step moves as activity, and nothing for a refused move", async () => {
      const w = await newWorld("steps", { start: START });
      await saved(w);
      await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 1 });
      // Past the retry window, so the identical call is a new one and is refused.
      w.clock.advance(DERIVED_WINDOW_MS);
      await fails(w.ctx, "start_step", { plan_id: "rl", step_number: 1 });
      await ok(w.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: "red", retry: true });
      await ok(w.ctx, "save_plan", { plan: plan("rl", { goal: "Add rate limiting, per key" }), overwrite: true });
      await ok(w.ctx, "rollback_plan", { plan_id: "rl", target_version: 1 });
      await ok(w.ctx, "delete_plan", { plan_id: "rl" });
      const items = (await ok(w.ctx, "activity_query", { object_type: "plan" })).items as Array<{ verb: string; object_id: string; summary: string }>;
      expect(items.map((i) => i.verb).reverse()).toEqual(["plan.created", "plan.step_in_progress", "plan.step_pending", "plan.updated", "plan.rolled_back", "plan.deleted"]);
      expect(items.every((i) => i.object_id === "rl")).toBe(true);
      expect(items.find((i) => i.verb === "plan.step_pending")!.summary).toBe("plan Add Rate Limiting To The Public Api: step 1 pending: red");
    });
  });
});

describe("delete_plan", () => {
  it("delete_plan takes the steps' state and task links with it, and leaves the tasks", async () => {
    const w = await newWorld("steps", { start: START });
    await saved(w);
    await ok(w.ctx, "project_create", { key: "API", title: "API" });
    await ok(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API" });
    await ok(w.ctx, "complete_step", { plan_id: "rl", step_number: 5 });
    await ok(w.ctx, "delete_plan", { plan_id: "rl" });
    const after = await stepRows(w.ctx)();
    expect(after.steps).toEqual([]);
    expect(after.links).toEqual([]);
    expect(after.tasks).toHaveLength(5);
  });
});
