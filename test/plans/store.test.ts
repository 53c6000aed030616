/** The plan store: save/load/list/delete, validation of the steps' graph, versions, compare and rollback, tenant isolation. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { dependencyGraph, findCycle } from "../../src/plans/document/schema";
import { getPlan, setPlanStatus } from "../../src/plans/store/model";
import { call, count, fails, MINUTE, newWorld, ok, refusedWithoutWrites, type Structured } from "../support/helpers";

const START = "2026-07-01T09:00:00.000Z";

type Step = Record<string, unknown> & { step_number: number; title: string };

/** A plan as a model writes one: partial, with the fields the store fills left out. */
function draft(id: string, extra: Record<string, unknown> = {}): { steps: Step[] } & Record<string, unknown> {
  return {
    id,
    goal: "Add rate limiting to the public API",
    scope: { included: ["src/http"], excluded: ["admin routes"] },
    steps: [
      { step_number: 1, title: "Add a limiter module", files_to_create: [{ path: "src/http/limit.ts", change_type: "create" }] },
      { step_number: 2, title: "Wire it into the router", depends_on: [1], files_to_modify: [{ path: "src/http/router.ts" }] },
      { step_number: 3, title: "Document the limits", depends_on: [1], priority: "low" },
      { step_number: 4, title: "Tests", depends_on: [2, 3], acceptance_criteria: ["429 after the limit"] },
    ],
    risks: [{ issue: "Legitimate bursts get refused" }],
    ...extra,
  };
}

const rows = (ctx: Ctx) => async () => ({
  plans: (await env.DB.prepare(`SELECT * FROM plans WHERE tenant_id = ? ORDER BY id`).bind(ctx.tenantId).all()).results,
  versions: (await env.DB.prepare(`SELECT * FROM plan_versions WHERE tenant_id = ? ORDER BY plan_id, version`).bind(ctx.tenantId).all()).results,
});

describe("save_plan", () => {
  it("saves a JSON-string plan with defaults filled and the graph computed, and loads it by id and by name in any case", async () => {
    const w = await newWorld("plans", { start: START });
    const saved = await ok(w.ctx, "save_plan", { plan: JSON.stringify(draft("rate-limit")), tags: ["api", "api", "q3"] });
    expect(saved).toMatchObject({ plan_id: "rate-limit", version: 1, created: true, changed: true });
    expect(saved.plan).toMatchObject({ name: "Add Rate Limiting To The Public Api", status: "ready", tags: ["api", "q3"], version: 1, step_count: 4, created_at: START, created_by: w.id.actorId });

    const loaded = await ok(w.ctx, "load_plan", { plan_id: "rate-limit" });
    expect(loaded.meta).toEqual(saved.plan);
    const plan = loaded.plan;
    expect(plan).toMatchObject({ id: "rate-limit", version: 1, created_at: START, updated_at: START, mvp_features: [], questions_for_clarification: [] });
    expect(plan.scope).toEqual({ included: ["src/http"], excluded: ["admin routes"], assumptions: [], constraints: [] });
    expect(plan.steps[0]).toMatchObject({ id: "step_1", description: "", priority: "medium", depends_on: [], files_to_create: [{ path: "src/http/limit.ts", change_type: "create" }] });
    expect(plan.steps[1].files_to_modify).toEqual([{ path: "src/http/router.ts", change_type: "modify" }]);
    expect(plan.risks).toEqual([{ issue: "Legitimate bursts get refused", mitigation: "", likelihood: "medium" }]);
    expect(plan.dependency_graph).toEqual({
      nodes: [1, 2, 3, 4].map((n) => ({ id: `step_${n}`, step_number: n })),
      edges: [
        { from: "step_1", to: "step_2", type: "blocks" },
        { from: "step_1", to: "step_3", type: "blocks" },
        { from: "step_2", to: "step_4", type: "blocks" },
        { from: "step_3", to: "step_4", type: "blocks" },
      ],
      critical_path: [1, 2, 4],
      parallel_groups: [[1], [2, 3], [4]],
      execution_order: [1, 2, 3, 4],
    });

    expect((await ok(w.ctx, "load_plan", { name: "  add RATE limiting to the public api " })).plan).toEqual(plan);
  });

  it("takes the plan as an object too, keeps keys it does not know, replaces a graph sent in, and assigns an id when there is none", async () => {
    const w = await newWorld("plans", { start: START });
    const doc = { goal: "Ship it", steps: [{ step_number: 10, title: "Only step" }], dependency_graph: { nodes: "nonsense" }, x_origin: { by: "hand" } };
    const saved = await ok(w.ctx, "save_plan", { plan: doc, name: "Ship" });
    expect(saved.plan_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    const { plan } = await ok(w.ctx, "load_plan", { name: "ship" });
    expect(plan.x_origin).toEqual({ by: "hand" });
    expect(plan.dependency_graph).toEqual({ nodes: [{ id: "step_10", step_number: 10 }], edges: [], critical_path: [10], parallel_groups: [[10]], execution_order: [10] });
  });

  it("refuses a duplicate id without overwrite with the reference's message, and changes nothing", async () => {
    const w = await newWorld("plans", { start: START });
    await ok(w.ctx, "save_plan", { plan: draft("dup") });
    const err = await refusedWithoutWrites(w.ctx, "save_plan", { plan: draft("dup", { goal: "Something else" }) }, "conflict", rows(w.ctx));
    expect(err.message).toBe("Plan with ID dup already exists. Use overwrite: true to replace.");
  });

  describe("bad plans are refused, naming the step, and change nothing", () => {
    const refuse = async (plan: unknown, pattern: RegExp) => {
      const w = await newWorld("plans", { start: START });
      const err = await refusedWithoutWrites(w.ctx, "save_plan", { plan }, "invalid_input", rows(w.ctx));
      expect(err.message).toMatch(pattern);
    };
    const steps = (...s: Array<[number, number[]]>) => ({ goal: "g", steps: s.map(([n, d]) => ({ step_number: n, title: `s${n}`, depends_on: d })) });

    it("a dependency cycle", () => refuse(steps([1, []], [2, [4]], [3, [2]], [4, [3]]), /Steps 2 → 4 → 3 → 2 form a dependency cycle/));
    it("a step depending on itself", () => refuse(steps([1, [1]]), /Step 1 names itself in depends_on/));
    it("a dangling depends_on", () => refuse(steps([1, []], [3, [2]]), /plan\.steps\.1\.depends_on: Step 3 depends on step 2, which is not in the plan/));
    it("a dangling blocks", () => refuse({ goal: "g", steps: [{ step_number: 1, title: "a", blocks: [7] }] }, /Step 1 names step 7 in blocks, which is not in the plan/));
    it("a milestone naming a missing step", () =>
      refuse({ goal: "g", steps: [{ step_number: 1, title: "a" }], milestones: [{ name: "M1", steps_included: [1, 2] }] }, /Milestone 'M1' includes step 2/));
    it("duplicate step numbers", () => refuse(steps([1, []], [1, []]), /Step number 1 is used by more than one step/));
    it("duplicate step ids", () =>
      refuse(
        {
          goal: "g",
          steps: [
            { step_number: 1, title: "a", id: "x" },
            { step_number: 2, title: "b", id: "x" },
          ],
        },
        /Step id 'x' is used by steps 1 and 2/,
      ));
    it("no goal", () => refuse({ steps: [] }, /plan\.goal/));
    it("a bad enum deep inside", () => refuse({ goal: "g", steps: [{ step_number: 1, title: "a", priority: "urgent" }] }, /plan\.steps\.0\.priority/));
    it("text that is not JSON", () => refuse("{not json", /^plan must be valid JSON$/));
    it("JSON that is not an object", () => refuse("[1,2]", /plan must be a JSON object/));
    it("an id with spaces", () => refuse({ id: "my plan", goal: "g" }, /plan\.id/));
    it("more steps than the bound", () => refuse({ goal: "g", steps: Array.from({ length: 201 }, (_, i) => ({ step_number: i + 1, title: "t" })) }, /plan\.steps/));
    it("a plan string over 256 KB", () => refuse(JSON.stringify({ goal: "g", codebase_insights: Array.from({ length: 30 }, () => "x".repeat(9_000)) }), /plan/));

    it("unknown parameters and bad tags", async () => {
      const w = await newWorld("plans", { start: START });
      await refusedWithoutWrites(w.ctx, "save_plan", { plan: draft("p"), bogus: 1 }, "invalid_input", rows(w.ctx));
      await refusedWithoutWrites(w.ctx, "save_plan", { plan: draft("p"), tags: ["x".repeat(51)] }, "invalid_input", rows(w.ctx));
      await refusedWithoutWrites(w.ctx, "list_plans", { limit: 0 }, "invalid_input", rows(w.ctx));
    });
  });

  it("a retried save or rollback (identical, no key) replays instead of writing twice", async () => {
    const w = await newWorld("plans", { start: START });
    await ok(w.ctx, "save_plan", { plan: draft("i") });
    const args = { plan: draft("i", { goal: "Retried" }), overwrite: true };
    const first = await ok(w.ctx, "save_plan", args);
    const again = await ok(w.ctx, "save_plan", args);
    expect(again.idempotent_replay).toBe(true);
    expect(again.version).toBe(first.version);
    const rollback = await ok(w.ctx, "rollback_plan", { plan_id: "i", target_version: 1 });
    expect((await ok(w.ctx, "rollback_plan", { plan_id: "i", target_version: 1 })).idempotent_replay).toBe(true);
    expect(rollback.new_version).toBe(3);
    // A different call is no retry, and the unchanged plan still adds no version.
    expect(await ok(w.ctx, "save_plan", { plan: draft("i"), overwrite: true })).toMatchObject({ changed: false, version: 3 });
    expect(await count(`SELECT COUNT(*) AS n FROM plan_versions WHERE tenant_id = ? AND plan_id = 'i'`, w.ctx.tenantId)).toBe(3);
  });
});

describe("load_plan", () => {
  it("answers the reference's messages for a missing plan and for neither plan_id nor name", async () => {
    const w = await newWorld("plans", { start: START });
    expect(await fails(w.ctx, "load_plan", {})).toMatchObject({ code: "invalid_input", message: "Either plan_id or name is required" });
    expect(await fails(w.ctx, "load_plan", { plan_id: "nope" })).toMatchObject({ code: "not_found", message: "Plan nope not found" });
    expect((await fails(w.ctx, "load_plan", { name: "Nope" })).code).toBe("not_found");
    expect((await fails(w.ctx, "load_plan", { plan_id: "a", name: "b" })).code).toBe("invalid_input");
  });

  describe("tenant isolation", () => {
    it("another tenant's plan is not_found everywhere, and the same id is free for each tenant", async () => {
      const a = await newWorld("plans-a", { start: START });
      const b = await newWorld("plans-b", { start: START });
      await ok(a.ctx, "save_plan", { plan: draft("shared"), name: "Secret plan" });
      for (const [tool, args] of [
        ["load_plan", { plan_id: "shared" }],
        ["load_plan", { name: "secret plan" }],
        ["view_history", { plan_id: "shared" }],
        ["compare_plan_versions", { plan_id: "shared", from_version: 1, to_version: 1 }],
        ["rollback_plan", { plan_id: "shared", target_version: 1 }],
        ["delete_plan", { plan_id: "shared" }],
      ] as const) {
        const r = await call(b.ctx, tool, args);
        expect(r.error?.code, tool).toBe("not_found");
      }
      expect((await ok(b.ctx, "list_plans", {})).items).toEqual([]);
      // Overwrite in another tenant creates that tenant's own plan, leaving the first one alone.
      expect(await ok(b.ctx, "save_plan", { plan: draft("shared", { goal: "B's" }), overwrite: true })).toMatchObject({ created: true, version: 1 });
      expect((await ok(a.ctx, "load_plan", { plan_id: "shared" })).plan.goal).toBe("Add rate limiting to the public API");
      expect((await ok(b.ctx, "load_plan", { plan_id: "shared" })).plan.goal).toBe("B's");
    });
  });
});

describe("list_plans", () => {
  it("lists newest change first, filters by status and any tag, and pages with a cursor", async () => {
    const w = await newWorld("plans", { start: START });
    for (const [i, tags] of [
      ["a", ["x"]],
      ["b", ["y"]],
      ["c", ["x", "z"]],
    ] as const) {
      await ok(w.ctx, "save_plan", { plan: draft(i), tags: [...tags] });
      w.clock.advance(MINUTE);
    }
    await ok(w.ctx, "save_plan", { plan: draft("a", { goal: "Touched" }), overwrite: true });
    await env.DB.prepare(`UPDATE plans SET status = 'approved' WHERE tenant_id = ? AND id = 'b'`).bind(w.ctx.tenantId).run();
    const ids = (r: Structured) => (r.items as Array<{ id: string }>).map((p) => p.id);
    expect(ids(await ok(w.ctx, "list_plans", {}))).toEqual(["a", "c", "b"]);
    expect(ids(await ok(w.ctx, "list_plans", { tags: ["z", "y"] }))).toEqual(["c", "b"]);
    expect(ids(await ok(w.ctx, "list_plans", { status: "approved" }))).toEqual(["b"]);
    const first = await ok(w.ctx, "list_plans", { limit: 2 });
    expect(ids(first)).toEqual(["a", "c"]);
    const second = await ok(w.ctx, "list_plans", { limit: 2, cursor: first.next_cursor });
    expect(ids(second)).toEqual(["b"]);
    expect(second.next_cursor).toBeUndefined();
    expect((await fails(w.ctx, "list_plans", { status: "done" })).code).toBe("invalid_input");
  });
});

describe("delete_plan", () => {
  it("delete removes the plan and its history; deleting again is not_found", async () => {
    const w = await newWorld("plans", { start: START });
    await ok(w.ctx, "save_plan", { plan: draft("d") });
    await ok(w.ctx, "save_plan", { plan: draft("d", { goal: "v2" }), overwrite: true });
    await ok(w.ctx, "save_plan", { plan: draft("keep") });
    expect(await ok(w.ctx, "delete_plan", { plan_id: "d" })).toMatchObject({ plan_id: "d", deleted: true, versions_deleted: 2 });
    expect((await fails(w.ctx, "load_plan", { plan_id: "d" })).message).toBe("Plan d not found");
    expect(await count(`SELECT COUNT(*) AS n FROM plan_versions WHERE tenant_id = ? AND plan_id = 'd'`, w.ctx.tenantId)).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM plan_versions WHERE tenant_id = ? AND plan_id = 'keep'`, w.ctx.tenantId)).toBe(1);
    const err = await refusedWithoutWrites(w.ctx, "delete_plan", { plan_id: "d", idempotency_key: "other" }, "not_found", rows(w.ctx));
    expect(err.message).toBe("Plan d not found");
    // A new plan may take a deleted plan's id, starting at version 1.
    expect((await ok(w.ctx, "save_plan", { plan: draft("d") })).version).toBe(1);
  });
});

describe("view_history", () => {
  it("an overwrite with a changed plan appends a version; the same plan adds none; name and tags alone relabel", async () => {
    const w = await newWorld("plans", { start: START });
    await ok(w.ctx, "save_plan", { plan: draft("v"), name: "Limits", tags: ["api"] });
    w.clock.advance(MINUTE);
    // The same plan, keys in another order and the graph sent back: no new version.
    const same = await ok(w.ctx, "save_plan", { plan: JSON.stringify({ ...(await ok(w.ctx, "load_plan", { plan_id: "v" })).plan, version: 7 }), overwrite: true });
    expect(same).toMatchObject({ version: 1, created: false, changed: false });
    const relabelled = await ok(w.ctx, "save_plan", { plan: draft("v"), overwrite: true, tags: ["api", "ops"] });
    expect(relabelled).toMatchObject({ version: 1, changed: true, plan: { name: "Limits", tags: ["api", "ops"], updated_at: "2026-07-01T09:01:00.000Z" } });

    const changed = draft("v");
    changed.steps[2] = { step_number: 3, title: "Document the limits in the README", depends_on: [1], priority: "high" };
    changed.steps.push({ step_number: 5, title: "Announce", depends_on: [4] });
    const v2 = await ok(w.ctx, "save_plan", { plan: changed, overwrite: true });
    expect(v2).toMatchObject({ version: 2, created: false, changed: true, plan: { name: "Limits", tags: ["api", "ops"], step_count: 5, version: 2 } });
    const loaded = await ok(w.ctx, "load_plan", { plan_id: "v" });
    expect(loaded.plan).toMatchObject({ version: 2, created_at: START, updated_at: "2026-07-01T09:01:00.000Z" });

    const history = await ok(w.ctx, "view_history", { plan_id: "v" });
    expect(history).toMatchObject({ plan_id: "v", current_version: 2, created_at: START, last_modified_at: "2026-07-01T09:01:00.000Z" });
    expect(history.versions.map((v: { version: number; change_type: string; step_count: number }) => [v.version, v.change_type, v.step_count])).toEqual([
      [2, "modified", 5],
      [1, "created", 4],
    ]);
    expect(history.versions[0].plan).toBeUndefined();
    const full = await ok(w.ctx, "view_history", { plan_id: "v", limit: 1, include_plans: true });
    expect(full.versions).toHaveLength(1);
    expect(full.versions[0].plan).toEqual(loaded.plan);

    const { diff } = await ok(w.ctx, "compare_plan_versions", { plan_id: "v", from_version: 1, to_version: 2 });
    expect(diff).toMatchObject({ from_version: 1, to_version: 2, steps_added: [5], steps_removed: [], files_added: [], files_removed: [], risks_added: [], field_changes: [] });
    expect(diff.steps_modified).toEqual([
      {
        step_number: 3,
        title: "Document the limits in the README",
        changes: [
          { field: "priority", old_value: "low", new_value: "high" },
          { field: "title", old_value: "Document the limits", new_value: "Document the limits in the README" },
        ],
      },
    ]);
    expect(diff.summary).toBe("1 step(s) added, 1 step(s) modified");
    const back = await ok(w.ctx, "compare_plan_versions", { plan_id: "v", from_version: 2, to_version: 1 });
    expect(back.diff.steps_removed).toEqual([5]);
    expect((await ok(w.ctx, "compare_plan_versions", { plan_id: "v", from_version: 2, to_version: 2 })).diff.summary).toBe("No changes");
  });
});

describe("compare_plan_versions", () => {
  it("compares files, scope, risks and top-level fields", async () => {
    const w = await newWorld("plans", { start: START });
    await ok(w.ctx, "save_plan", { plan: draft("f") });
    const next = draft("f", { goal: "Add rate limiting everywhere", scope: { included: ["src/http", "src/ws"], excluded: [] }, risks: [{ issue: "Clock skew" }] });
    next.steps[3] = { ...next.steps[3]!, files_to_create: [{ path: "test/limit.test.ts", change_type: "create" }] };
    await ok(w.ctx, "save_plan", { plan: next, overwrite: true });
    const { diff } = await ok(w.ctx, "compare_plan_versions", { plan_id: "f", from_version: 1, to_version: 2 });
    expect(diff).toMatchObject({
      steps_modified: [{ step_number: 4, changes: [{ field: "files_to_create", old_value: [], new_value: [{ path: "test/limit.test.ts", change_type: "create" }] }] }],
      files_added: ["test/limit.test.ts"],
      scope_changes: { included_added: ["src/ws"], included_removed: [], excluded_added: [], excluded_removed: ["admin routes"] },
      risks_added: ["Clock skew"],
      risks_removed: ["Legitimate bursts get refused"],
      field_changes: [
        { path: "goal", type: "modified", old_value: "Add rate limiting to the public API", new_value: "Add rate limiting everywhere" },
        { path: "risks", type: "modified" },
        { path: "scope", type: "modified" },
      ],
    });
  });
});

describe("rollback_plan", () => {
  it("rollback adds a new version equal to the old one, never rewriting history, and resets the status", async () => {
    const w = await newWorld("plans", { start: START });
    await ok(w.ctx, "save_plan", { plan: draft("r") });
    await ok(w.ctx, "save_plan", { plan: draft("r", { goal: "Second goal" }), overwrite: true });
    await env.DB.prepare(`UPDATE plans SET status = 'approved' WHERE tenant_id = ? AND id = 'r'`).bind(w.ctx.tenantId).run();
    const v1 = (await ok(w.ctx, "view_history", { plan_id: "r", include_plans: true })).versions[1].plan;
    w.clock.advance(5 * MINUTE);
    const r = await ok(w.ctx, "rollback_plan", { plan_id: "r", target_version: 1, reason: "goal was right" });
    expect(r).toMatchObject({ plan_id: "r", restored_version: 1, new_version: 3, plan: { version: 3, status: "ready", goal: "Add rate limiting to the public API" } });
    const now = await ok(w.ctx, "load_plan", { plan_id: "r" });
    expect(now.plan).toEqual({ ...v1, version: 3, updated_at: "2026-07-01T09:05:00.000Z" });
    const history = await ok(w.ctx, "view_history", { plan_id: "r" });
    expect(history.versions.map((v: { version: number; change_type: string; change_summary: string }) => [v.version, v.change_type, v.change_summary])).toEqual([
      [3, "rolled_back", "Rolled back to version 1: goal was right"],
      [2, "modified", "Plan saved with overwrite"],
      [1, "created", "Plan saved"],
    ]);
    expect((await ok(w.ctx, "compare_plan_versions", { plan_id: "r", from_version: 1, to_version: 3 })).diff.summary).toBe("No changes");
    expect((await ok(w.ctx, "compare_plan_versions", { plan_id: "r", from_version: 2, to_version: 3 })).diff.field_changes).toEqual([
      { path: "goal", type: "modified", old_value: "Second goal", new_value: "Add rate limiting to the public API" },
    ]);
  });

  it("refuses a missing version with the reference's message, and bad version numbers", async () => {
    const w = await newWorld("plans", { start: START });
    await ok(w.ctx, "save_plan", { plan: draft("m") });
    const err = await refusedWithoutWrites(w.ctx, "rollback_plan", { plan_id: "m", target_version: 4 }, "not_found", rows(w.ctx));
    expect(err.message).toBe("Version 4 not found for plan m");
    expect((await fails(w.ctx, "compare_plan_versions", { plan_id: "m", from_version: 1, to_version: 2 })).message).toBe("Version 2 not found for plan m");
    await refusedWithoutWrites(w.ctx, "rollback_plan", { plan_id: "m", target_version: 0 }, "invalid_input", rows(w.ctx));
    await refusedWithoutWrites(w.ctx, "rollback_plan", { plan_id: "m", target_version: 1.5 }, "invalid_input", rows(w.ctx));
    expect((await fails(w.ctx, "view_history", { plan_id: "gone" })).message).toBe("Plan gone not found");
  });
});

describe("the dependency graph", () => {
  const s = (n: number, deps: number[] = []) => ({ step_number: n, id: `step_${n}`, depends_on: deps }) as Parameters<typeof dependencyGraph>[0][number];

  it("finds the longest chain, the depth groups and a stable order", () => {
    const g = dependencyGraph([s(5), s(1), s(2, [1]), s(3, [2]), s(4, [5]), s(6, [4, 3])]);
    expect(g.execution_order).toEqual([1, 2, 3, 5, 4, 6]);
    expect(g.parallel_groups).toEqual([[1, 5], [2, 4], [3], [6]]);
    expect(g.critical_path).toEqual([1, 2, 3, 6]);
  });

  it("reports a cycle as the chain that closes it", () => {
    expect(findCycle([s(1, [2]), s(2, [3]), s(3, [1])])).toEqual([1, 2, 3, 1]);
    expect(findCycle([s(1), s(2, [1]), s(3, [1, 2])])).toBeNull();
  });
});

describe("setPlanStatus", () => {
  it("moves the status only from the version and statuses the caller read", async () => {
    const w = await newWorld("plans", { start: START });
    await ok(w.ctx, "save_plan", { plan: draft("st") });
    const meta = await getPlan(w.ctx, "st");
    const approved = await setPlanStatus(w.ctx, meta, "approved");
    expect(approved).toMatchObject({ status: "approved", version: 1 });
    // The status it leaves has moved on: nothing changes.
    expect(await setPlanStatus(w.ctx, meta, "executing")).toBeNull();
    expect(await setPlanStatus(w.ctx, approved!, "executing", ["ready"])).toBeNull();
    // A newer version: a status read at version 1 does not land on version 2.
    await ok(w.ctx, "save_plan", { plan: draft("st", { goal: "Changed" }), overwrite: true });
    expect(await setPlanStatus(w.ctx, approved!, "executing", ["approved", "ready"])).toBeNull();
    expect(await getPlan(w.ctx, "st")).toMatchObject({ status: "ready", version: 2 });
  });
});
