/** plan_to_tasks: a plan's steps as work-ledger tasks, the steps' state following the tasks, the step tools going through them. */
import { describe, expect, it } from "vitest";
import { DERIVED_WINDOW_MS } from "../../src/core/idempotency";
import { plan, saved, statuses, stepRows } from "../support/plan-steps";
import { call, count, fails, MINUTE, newWorld, ok, refusedWithoutWrites, type World } from "../support/helpers";

const START = "2026-07-01T09:00:00.000Z";

describe("plan_to_tasks", () => {
  async function withProject(w: World) {
    await saved(w);
    await ok(w.ctx, "project_create", { key: "API", title: "Public API" });
  }

  it("creates a task per step atomically: dependencies, criteria, priority, labels and a link back to the plan", async () => {
    const w = await newWorld("p2t", { start: START });
    await withProject(w);
    const r = await ok(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API", labels: ["q3"] });
    expect(r).toMatchObject({ plan_id: "rl", plan_version: 1, project_key: "API", already_linked: [], not_needed: [], warnings: [] });
    expect(r.created.map((c: { step_number: number; ref: string }) => `${c.step_number}=${c.ref}`)).toEqual(["1=API-1", "2=API-2", "3=API-3", "4=API-4", "5=API-5"]);
    const id = (n: number) => r.created.find((c: { step_number: number }) => c.step_number === n).task_id as string;

    const t4 = (await ok(w.ctx, "task_get", { task_id: id(4) })).task;
    expect(t4).toMatchObject({ title: "Tests", status: "todo", state: "blocked", priority: 2, labels: ["plan", "q3"], assignee_actor_id: null });
    expect([...t4.depends_on].sort()).toEqual([id(2), id(3)].sort());
    expect(t4.acceptance_criteria).toEqual([
      { text: "429 after the limit", met: false },
      { text: "headers carry the remaining budget", met: false },
    ]);
    expect(t4.body).toContain("Plan: Add Rate Limiting To The Public Api (plan_id rl, version 1), step 4 (step_4).");
    const t1 = (await ok(w.ctx, "task_get", { task_id: id(1) })).task;
    expect(t1).toMatchObject({ priority: 1, state: "ready" });
    expect(t1.body).toContain("- create `src/http/limit.ts`");
    expect((await ok(w.ctx, "task_get", { task_id: id(3) })).task.priority).toBe(3);

    const p = await ok(w.ctx, "view_progress", { plan_id: "rl" });
    expect(p.steps[0].task).toEqual({ id: id(1), ref: "API-1", status: "todo", assignee_actor_id: null, lease_expires_at: null });
  });

  it("step state follows the tasks: claimed, finished and cancelled by the task tools", async () => {
    const w = await newWorld("p2t", { start: START });
    await withProject(w);
    const r = await ok(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API" });
    const ref = (n: number) => r.created.find((c: { step_number: number }) => c.step_number === n).ref as string;
    const claimed = await ok(w.ctx, "task_claim", { task_id: ref(1) });
    expect(claimed.claimed).toBe(true);
    expect((await statuses(w.ctx, "rl"))[1]).toBe("in_progress");
    await ok(w.ctx, "task_update", { task_id: ref(1), patch: { acceptance_criteria: [{ text: "limit.ts exports a token bucket", met: true }] } });
    await ok(w.ctx, "task_update", { task_id: ref(1), patch: { status: "done" } });
    await ok(w.ctx, "task_update", { task_id: ref(5), patch: { status: "cancelled" } });
    expect(await statuses(w.ctx, "rl")).toEqual({ 1: "completed", 2: "ready", 3: "ready", 4: "pending", 5: "skipped" });
    const p = await ok(w.ctx, "view_progress", { plan_id: "rl" });
    expect(p.progress.percentage).toBe(40);
    // The plan's stored status follows its tasks: list_plans finds it by what the tasks did.
    expect(p).toMatchObject({ plan_status: "executing", implied_status: "executing" });
    for (const n of [2, 3]) await ok(w.ctx, "task_update", { task_id: ref(n), patch: { status: "done" } });
    await ok(w.ctx, "task_update", {
      task_id: ref(4),
      patch: {
        acceptance_criteria: [
          { text: "429 after the limit", met: true },
          { text: "headers carry the remaining budget", met: true },
        ],
      },
    });
    await ok(w.ctx, "task_update", { task_id: ref(4), patch: { status: "done" } });
    expect((await ok(w.ctx, "list_plans", { status: "completed" })).items.map((x: { id: string }) => x.id)).toEqual(["rl"]);
    expect((await ok(w.ctx, "view_progress", { plan_id: "rl" })).progress.percentage).toBe(100);
  });

  it("step tools on linked steps go through the tasks: start claims under a lease, another actor cannot take it, complete respects the criteria", async () => {
    const w = await newWorld("p2t", { start: START });
    await withProject(w);
    await ok(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API" });
    const started = await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 1, lease_seconds: 600 });
    expect(started.lease).toMatchObject({ task_ref: "API-1", lease_expires_at: "2026-07-01T09:10:00.000Z" });
    expect(typeof started.lease.fencing_token).toBe("number");
    expect(started.step.task).toMatchObject({ status: "in_progress", assignee_actor_id: w.id.actorId });

    const b = await w.other("b");
    const taken = await fails(b.ctx, "start_step", { plan_id: "rl", step_number: 1 });
    expect(taken.code).toBe("invalid_transition");
    const stolen = await fails(b.ctx, "complete_step", { plan_id: "rl", step_number: 1 });
    expect(stolen.code).toBe("lease_held");
    expect((await statuses(w.ctx, "rl"))[1]).toBe("in_progress");

    const unmet = await fails(w.ctx, "complete_step", { plan_id: "rl", step_number: 1, fencing_token: started.lease.fencing_token });
    expect(unmet).toMatchObject({ code: "criteria_unmet", message: 'Acceptance criterion not met: "limit.ts exports a token bucket"' });
    await ok(w.ctx, "task_update", { task_id: "API-1", patch: { acceptance_criteria: [{ text: "limit.ts exports a token bucket", met: true }] } });
    const done = await ok(w.ctx, "complete_step", { plan_id: "rl", step_number: 1, fencing_token: started.lease.fencing_token, notes: "done" });
    expect(done.step).toMatchObject({ status: "completed", notes: "done", task: { status: "done" } });
    expect(done.plan_status).toBe("executing");
  });

  it("fail_step on a linked step releases its task (the step shows failed) and skip cancels the task", async () => {
    const w = await newWorld("p2t", { start: START });
    await withProject(w);
    await ok(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API" });
    await ok(w.ctx, "start_step", { plan_id: "rl", step_number: 1 });
    const failed = await ok(w.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: "tests red", skip_dependents: true });
    expect(failed.step).toMatchObject({ status: "failed", task: { status: "todo", assignee_actor_id: null } });
    expect(failed.skipped_dependents).toEqual([2, 3, 4]);
    for (const ref of ["API-2", "API-3", "API-4"]) expect((await ok(w.ctx, "task_get", { task_id: ref })).task.status).toBe("cancelled");
    expect((await ok(w.ctx, "task_get", { task_id: "API-5" })).task.status).toBe("todo");
    // Claiming the task again moves the step on: the failure was before the task's last move.
    w.clock.advance(MINUTE);
    await ok(w.ctx, "task_claim", { task_id: "API-1" });
    expect((await statuses(w.ctx, "rl"))[1]).toBe("in_progress");

    const skip = await ok(w.ctx, "fail_step", { plan_id: "rl", step_number: 1, error: "dropped", skip: true });
    expect(skip.step).toMatchObject({ status: "skipped", task: { status: "cancelled" } });
  });

  it("is idempotent over linked steps, links only a new version's new steps, and gives finished steps no task", async () => {
    const w = await newWorld("p2t", { start: START });
    await withProject(w);
    await ok(w.ctx, "complete_step", { plan_id: "rl", step_number: 5 });
    const first = await ok(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API" });
    expect(first.created.map((c: { step_number: number }) => c.step_number)).toEqual([1, 2, 3, 4]);
    expect(first.not_needed).toEqual([5]);
    // Past the retry window the identical call is a new one (within it, it would replay the first).
    w.clock.advance(DERIVED_WINDOW_MS);
    const again = await ok(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API" });
    expect(again.idempotent_replay).toBeUndefined();
    expect(again.created).toEqual([]);
    expect(again.already_linked.map((c: { step_number: number }) => c.step_number)).toEqual([1, 2, 3, 4]);

    const next = plan("rl");
    next.steps.push({ step_number: 6, title: "Load test", depends_on: [4, 5] });
    await ok(w.ctx, "save_plan", { plan: next, overwrite: true });
    const more = await ok(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API" });
    expect(more.created).toEqual([{ step_number: 6, task_id: expect.any(String), ref: "API-5" }]);
    const t6 = (await ok(w.ctx, "task_get", { task_id: "API-5" })).task;
    expect(t6.depends_on).toEqual([first.created.find((c: { step_number: number }) => c.step_number === 4).task_id]);
    expect(await count(`SELECT COUNT(*) AS n FROM tasks WHERE tenant_id = ?`, w.id.tenantId)).toBe(5);
  });

  it("two racing calls create each step's task once", async () => {
    const w = await newWorld("p2t", { start: START });
    await withProject(w);
    const b = await w.other("b");
    const results = await Promise.all([call(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API" }), call(b.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API" })]);
    expect(await count(`SELECT COUNT(*) AS n FROM tasks WHERE tenant_id = ?`, w.id.tenantId)).toBe(5);
    expect(await count(`SELECT COUNT(*) AS n FROM plan_step_tasks WHERE tenant_id = ?`, w.id.tenantId)).toBe(5);
    for (const r of results) if (r.isError) expect(r.error).toMatchObject({ code: "conflict", retryable: true });
  });

  it("refuses bad input and foreign projects without writing anything", async () => {
    const w = await newWorld("p2t", { start: START });
    await withProject(w);
    const state = stepRows(w.ctx);
    await refusedWithoutWrites(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "NOPE" }, "not_found", state);
    await refusedWithoutWrites(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API", labels: ["two words"] }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "plan_to_tasks", { plan_id: "rl", project_id: "API", assignee_actor_id: "ghost" }, "not_found", state);
    await refusedWithoutWrites(w.ctx, "plan_to_tasks", { plan_id: "rl" }, "invalid_input", state);
    await ok(w.ctx, "save_plan", { plan: { id: "empty", goal: "Nothing yet" } });
    await refusedWithoutWrites(w.ctx, "plan_to_tasks", { plan_id: "empty", project_id: "API" }, "invalid_input", state);
    const them = await newWorld("p2t", { start: START });
    await ok(them.ctx, "project_create", { key: "API", title: "Theirs" });
    await saved(them, "theirs");
    // Their project key resolves in their tenant only: ours is untouched by their call.
    await ok(them.ctx, "plan_to_tasks", { plan_id: "theirs", project_id: "API" });
    expect(await count(`SELECT COUNT(*) AS n FROM tasks WHERE tenant_id = ?`, w.id.tenantId)).toBe(0);
  });
});
