/**
 * create_plan and refine_plan over a real code index of the shop repository (indexed through the
 * Workflow from the fake GitHub), with the model a Workers AI stand-in answering the plans in
 * test/fixtures/plans; and get_context_for_prompt's active-plan handoff.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { PackedFile } from "../../src/code/context";
import type { CompletionModel } from "../../src/llm/types";
import type { AiChatInput } from "../../src/llm/workers-ai";
import type { Ctx } from "../../src/core/context";
import { findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { draftPlan, redraftPlan } from "../../src/plans/drafting/prompt";
import type { Plan } from "../../src/plans/document/schema";
import { indexed, rig, workflowsUseFakeGitHub } from "../support/code-rig";
import { REPO } from "../fixtures/code/shop";
import discountAnswer from "../fixtures/plans/discount.answer.json?raw";
import lockoutAnswer from "../fixtures/plans/lockout.answer.txt?raw";
import refinedAnswer from "../fixtures/plans/lockout-refined.answer.json?raw";
import { call, fails, newWorld, ok, refusedWithoutWrites, type Structured } from "../support/helpers";
import { MODEL, ScriptedAi, withAi } from "../support/llm-stand-in";

workflowsUseFakeGitHub();
afterEach(() => vi.restoreAllMocks());

const LOCKOUT_TASK = "Lock a user's account for 15 minutes after five failed sign-in attempts to login.";
const DISCOUNT_TASK = "Let customers apply a percentage discount code to the cart total.";
/** Secret-shaped, as a careless task might quote one (the gitleaks rule github-pat). */
const TOKEN = `ghp_${"Z9y8X7w6V5".repeat(4)}`;

const discount = () => JSON.parse(discountAnswer) as { steps: Array<Record<string, unknown> & { step_number: number; depends_on?: number[] }> } & Record<string, unknown>;

/** The plan tables of the ctx's tenant: what a refused call must leave as it was. */
const rows = (ctx: Ctx) => async () => ({
  plans: (await env.DB.prepare(`SELECT * FROM plans WHERE tenant_id = ? ORDER BY id`).bind(ctx.tenantId).all()).results,
  versions: (await env.DB.prepare(`SELECT * FROM plan_versions WHERE tenant_id = ? ORDER BY plan_id, version`).bind(ctx.tenantId).all()).results,
});

/** An indexed shop, and a ctx whose model answers with `reply`. */
async function shop(prefix: string, reply: (input: AiChatInput) => unknown = () => lockoutAnswer) {
  const r = await rig(prefix);
  await indexed(r);
  const ai = new ScriptedAi(reply);
  return { ...r, ai, llm: withAi(r.ctx, ai) };
}

const user = (ai: ScriptedAi, call = -1) => ai.inputs.at(call)!.messages.find((m) => m.role === "user")!.content;
const system = (ai: ScriptedAi) => ai.inputs.at(-1)!.messages.find((m) => m.role === "system")!.content;

describe("create_plan", () => {
  it("plans a task from the indexed code: the model's fenced answer validated, completed by the server, saved, and reported as Markdown with the JSON", async () => {
    const s = await shop("plan-create");
    const res = await call(s.llm, "create_plan", { task: LOCKOUT_TASK });
    expect(res.ok, JSON.stringify(res.error)).toBe(true);
    const plan = res.plan;
    // What the server sets: a fresh id (not the model's), version 1, times, step ids, the graph; no model diagrams.
    expect(plan.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(plan).toMatchObject({ version: 1, created_at: "2026-11-20T12:00:00.000Z", updated_at: "2026-11-20T12:00:00.000Z" });
    expect(plan.steps.map((x: Structured) => [x.step_number, x.id])).toEqual([
      [1, "step_1"],
      [2, "step_2"],
      [3, "step_3"],
      [4, "step_4"],
      [5, "step_5"],
    ]);
    expect(plan.dependency_graph).toMatchObject({ critical_path: [1, 2, 3, 4], parallel_groups: [[1], [2], [3], [4, 5]], execution_order: [1, 2, 3, 4, 5] });
    // generate_diagrams (default true): visualize_plan's three diagrams of the finished plan.
    expect(plan.architecture.diagrams.map((d: Structured) => [d.type, d.title])).toEqual([
      ["flowchart", "Step dependencies"],
      ["architecture", "Files the steps change"],
      ["gantt", "Schedule"],
    ]);
    for (const [i, kind] of (["dependencies", "architecture", "gantt"] as const).entries()) {
      const drawn = await call(s.llm, "visualize_plan", { plan_id: plan.id, diagram_type: kind });
      expect(plan.architecture.diagrams[i].mermaid).toBe(drawn.mermaid);
    }
    expect(plan.steps[2].files_to_modify).toEqual([expect.objectContaining({ path: "src/auth/login.ts", change_type: "modify" })]);
    // context_files are the files the model was shown, not the ones it claims.
    expect(res.context.files.map((f: Structured) => f.path)).toContain("src/auth/login.ts");
    expect(plan.context_files).toEqual(res.context.files.map((f: Structured) => f.path));
    expect(res.context).toMatchObject({ token_budget: 12_000, indexes: [{ repo: REPO, ref: "main", commit: s.sha }] });
    expect(res.context.warning).toBeUndefined();
    expect(res).toMatchObject({ status: "needs_clarification", model: `workers-ai:${MODEL}`, warnings: [] });
    expect(res.saved).toMatchObject({
      plan_id: plan.id,
      version: 1,
      created: true,
      changed: true,
      plan: { name: "Lock A Users Account For 15 Minutes After Five Co", status: "ready", step_count: 5 },
    });
    expect((await ok(s.ctx, "load_plan", { plan_id: plan.id })).plan).toEqual(plan);

    // What the model was asked: JSON mode, the schema, the task and the code.
    const sent = s.ai.inputs[0]!;
    expect(sent).toMatchObject({ response_format: { type: "json_object" }, temperature: 0, max_tokens: 8192 });
    expect(system(s.ai)).toContain('"step_number"');
    expect(system(s.ai)).not.toContain('"dependency_graph"');
    expect(user(s.ai)).toContain(LOCKOUT_TASK);
    expect(user(s.ai)).toContain("function checkPassword(user: string, hashed: string): boolean");
    expect(user(s.ai)).not.toContain("Plan the MVP only");

    // The seed's answer: a Markdown report, the whole plan JSON in a <details> block.
    const text = await textOf(s.llm, "create_plan", { task: LOCKOUT_TASK, auto_save: false });
    expect(text).toMatch(/^# Implementation Plan\n/);
    expect(text).toContain("**Status:** needs_clarification");
    expect(text).toContain("## Steps (5 total)");
    expect(text).toContain("### 3. Enforce the lockout in login() 🔴\n");
    expect(text).toContain("- Steps 4, 5 can run in parallel");
    expect(text).toContain("## Critical Path\nSteps 1 → 2 → 3 → 4");
    expect(text).toContain("## ⚠️ Questions Needing Clarification");
    expect(text).toContain("Not saved (auto_save: false)");
    const json = /<details>\n<summary>Full Plan JSON<\/summary>\n\n```json\n([\s\S]*)\n```\n<\/details>\n$/.exec(text);
    expect(JSON.parse(json![1]!)).toMatchObject({ goal: plan.goal, version: 1, steps: expect.any(Array) });
  });

  it("keeps secrets out of the prompt, plans the MVP only when asked, and drops keys the server owns", async () => {
    const s = await shop("plan-secret", () => ({ ...discount(), id: "model-id", status: "approved", version: 7 }));
    const res = await ok(s.llm, "create_plan", { task: `${DISCOUNT_TASK} The payment API key is ${TOKEN}.`, mvp_only: true, auto_save: false });
    expect(s.ai.seen).not.toContain(TOKEN);
    expect(user(s.ai)).toContain("ghp_****");
    expect(user(s.ai)).toContain("Plan the MVP only");
    expect(res.warnings).toEqual(["Secret-shaped text was masked before the model saw it: github-pat."]);
    expect(res.plan.id).not.toBe("model-id");
    expect(res.plan.version).toBe(1);
    expect(res.plan.status).toBeUndefined();
    expect(res.status).toBe("ready");
    expect(res.context.files.map((f: Structured) => f.path)).toContain("src/cart/total.ts");
  });

  it("auto_save: false saves nothing; save_name and save_tags label the saved plan; a taken save_name is refused before the model is asked, unless save_overwrite", async () => {
    const s = await shop("plan-save", () => discount());
    const unsaved = await ok(s.llm, "create_plan", { task: DISCOUNT_TASK, auto_save: false });
    expect(unsaved.saved).toBeUndefined();
    expect((await rows(s.ctx)()).plans).toEqual([]);

    const first = await ok(s.llm, "create_plan", { task: DISCOUNT_TASK, save_name: "Discount codes", save_tags: ["cart", "q4"] });
    expect(first.saved).toMatchObject({ created: true, version: 1, plan: { name: "Discount codes", tags: ["cart", "q4"] } });
    expect((await ok(s.ctx, "list_plans", { tags: ["q4"] })).items.map((p: Structured) => p.id)).toEqual([first.plan.id]);

    const asked = s.ai.inputs.length;
    const err = await refusedWithoutWrites(s.llm, "create_plan", { task: DISCOUNT_TASK, save_name: "discount CODES" }, "conflict", rows(s.ctx));
    expect(err.message).toBe(`A plan named 'discount CODES' already exists (plan_id ${first.plan.id}, v1).`);
    expect(err.hint).toContain("save_overwrite: true");
    expect(s.ai.inputs.length).toBe(asked);

    s.ai.reply = () => ({ ...discount(), goal: "Percentage discount codes, case-insensitive, on the cart total." });
    const second = await ok(s.llm, "create_plan", { task: DISCOUNT_TASK, save_name: "Discount codes", save_overwrite: true });
    expect(second.plan).toMatchObject({ id: first.plan.id, version: 2, created_at: first.plan.created_at });
    expect(second.saved).toMatchObject({ plan_id: first.plan.id, version: 2, created: false, changed: true, plan: { tags: ["cart", "q4"] } });
    const history = await ok(s.ctx, "view_history", { plan_id: first.plan.id });
    expect(history.versions.map((v: Structured) => [v.version, v.change_type])).toEqual([
      [2, "modified"],
      [1, "created"],
    ]);
  });

  it.each([
    ["an answer that is not JSON", () => "I'm sorry, but I need more details about the authentication system before I can write a plan.", /no JSON object in it/],
    [
      "a plan with a dependency cycle",
      () => {
        const d = discount();
        d.steps[0]!.depends_on = [3];
        return d;
      },
      /Steps 1 → 3 → 2 → 1 form a dependency cycle/,
    ],
    [
      "a plan with a dangling depends_on",
      () => {
        const d = discount();
        d.steps[2]!.depends_on = [2, 7];
        return d;
      },
      /steps\.2\.depends_on: Step 3 depends on step 7, which is not in the plan/,
    ],
    ["a plan without steps", () => ({ ...discount(), steps: [], milestones: [], mvp_features: [] }), /it has no steps/],
  ])("refuses %s as llm_bad_output (retryable, the validation in the hint) and saves nothing", async (_what, reply, why) => {
    const s = await shop("plan-bad", reply);
    const err = await refusedWithoutWrites(s.llm, "create_plan", { task: DISCOUNT_TASK, save_name: "Discounts" }, "llm_bad_output", rows(s.ctx));
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/^The model's answer is not a usable plan: /);
    expect(err.message).toMatch(why);
    expect(err.hint).toContain("save_plan");
    if (!/JSON|no steps/.test(String(why))) expect(err.hint).toMatch(why);
  });

  it("without a code index still plans, from the task alone, and says so; a named repository that is not indexed is the code tools' error", async () => {
    const w = await newWorld("plan-noindex", { start: "2026-11-20T12:00:00.000Z" });
    const ai = new ScriptedAi(() => discount());
    const ctx = withAi(w.ctx, ai);
    const res = await ok(ctx, "create_plan", { task: DISCOUNT_TASK });
    expect(res.context).toEqual({ files: [], tokens_used: 0, token_budget: 12_000, indexes: [], warning: expect.stringContaining("No repository of this tenant has a code index") });
    expect(res.warnings[0]).toContain("the plan was made from the task alone");
    expect(res.plan.context_files).toEqual([]);
    expect(user(ai)).toContain("## Code context\nNone: no repository has a code index.");
    expect(res.saved.created).toBe(true);

    const r = await rig("plan-notindexed");
    const ai2 = new ScriptedAi(() => discount());
    expect((await fails(withAi(r.ctx, ai2), "create_plan", { task: DISCOUNT_TASK, repo: REPO })).code).toBe("index_not_found");
    expect(ai2.inputs).toHaveLength(0);
  });

  it("reads only the caller's tenant's index", async () => {
    await shop("plan-iso-a");
    const b = await newWorld("plan-iso-b", { start: "2026-11-20T12:00:00.000Z" });
    const ai = new ScriptedAi(() => discount());
    const res = await ok(withAi(b.ctx, ai), "create_plan", { task: DISCOUNT_TASK, auto_save: false });
    expect(res.context.files).toEqual([]);
    expect(ai.seen).not.toContain("cartTotal");
  });

  it("without a model refuses with llm_not_configured, and the hint's save_plan example is one save_plan takes", async () => {
    const w = await newWorld("plan-nomodel", { start: "2026-11-20T12:00:00.000Z" });
    const err = await refusedWithoutWrites(w.ctx, "create_plan", { task: DISCOUNT_TASK }, "llm_not_configured", rows(w.ctx));
    expect(err.hint).toContain("save_plan");
    expect(err.hint).toContain("LLM_API_KEY");
    const example = /e\.g\. save_plan (\{.*\})\./.exec(err.hint)![1]!;
    expect((await ok(w.ctx, "save_plan", JSON.parse(example))).created).toBe(true);
    const refine = await fails(w.ctx, "refine_plan", { current_plan: { goal: "g", steps: [{ step_number: 1, title: "t" }] }, feedback: "more" });
    expect(refine.code).toBe("llm_not_configured");
    expect(refine.hint).toContain('"overwrite": true');
  });

  it("validates its bounds before any work", async () => {
    const w = await newWorld("plan-bounds", { start: "2026-11-20T12:00:00.000Z" });
    const ai = new ScriptedAi(() => discount());
    const ctx = withAi(w.ctx, ai);
    for (const [args, message] of [
      [{ task: "   " }, "Task is required and must be a non-empty string"],
      [{ task: "x".repeat(10_001) }, "task"],
      [{ task: "t", max_context_files: 21 }, "Invalid max_context_files parameter: must be a number between 1 and 20"],
      [{ task: "t", max_context_files: 0 }, "Invalid max_context_files parameter: must be a number between 1 and 20"],
      [{ task: "t", context_token_budget: 499 }, "Invalid context_token_budget parameter: must be a number between 500 and 100000"],
      [{ task: "t", context_token_budget: 100_001 }, "Invalid context_token_budget parameter: must be a number between 500 and 100000"],
      [{ task: "t", save_tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, "save_tags"],
      [{ task: "t", surprise: true }, "surprise"],
    ] as const) {
      const e = await refusedWithoutWrites(ctx, "create_plan", args, "invalid_input", rows(w.ctx));
      expect(e.message).toContain(message);
    }
    expect(ai.inputs).toHaveLength(0);
  });
});

/** The text content of a successful call (the plan tools' Markdown report). */
async function textOf(ctx: Ctx, tool: string, args: Record<string, unknown>): Promise<string> {
  const result = await callTool(findTool(tool)!, ctx, args);
  expect(result.isError).toBeFalsy();
  return (result.content as { type: string; text: string }[])[0]!.text;
}

describe("refine_plan", () => {
  /** A saved lockout plan (it asks one question), and a model that answers with the refinement. */
  async function saved(prefix: string) {
    const s = await shop(prefix);
    const created = await ok(s.llm, "create_plan", { task: LOCKOUT_TASK });
    s.ai.reply = () => refinedAnswer;
    return { ...s, created, id: created.plan.id as string };
  }

  it("refines a saved plan by plan_id: the answers and feedback go to the model, the plan keeps its id and step ids, and the refinement is the next version", async () => {
    const s = await saved("refine-id");
    s.clock.advance(60_000);
    const question = s.created.plan.questions_for_clarification[0];
    const res = await ok(s.llm, "refine_plan", {
      plan_id: s.id,
      feedback: "Tell the user why sign-in was refused.",
      clarifications: JSON.stringify({ [question]: "Yes: say the account is locked." }),
    });
    expect(res.plan).toMatchObject({ id: s.id, version: 2, created_at: s.created.plan.created_at, updated_at: "2026-11-20T12:01:00.000Z", questions_for_clarification: [] });
    expect(res.plan.steps.map((x: Structured) => x.id)).toEqual(["step_1", "step_2", "step_3", "step_4", "step_5"]);
    expect(res.plan.context_files).toEqual(s.created.plan.context_files);
    expect(res.status).toBe("ready");
    expect(res.saved).toMatchObject({ plan_id: s.id, version: 2, created: false, changed: true, plan: { status: "ready", version: 2 } });
    expect(res.changes).toMatchObject({ steps_added: [], steps_removed: [], steps_modified: [3, 4] });
    expect(res.changes.summary).toContain("2 step(s) modified");
    expect(res.context).toBeUndefined();

    const prompt = user(s.ai);
    expect(prompt).toContain("## Current plan");
    expect(prompt).toContain('"title":"Enforce the lockout in login()"');
    expect(prompt).not.toContain("dependency_graph");
    expect(prompt).not.toContain(s.id);
    expect(prompt).toContain("## Feedback\nTell the user why sign-in was refused.");
    expect(prompt).toContain(`- Q: ${question}\n  A: Yes: say the account is locked.`);

    const history = await ok(s.ctx, "view_history", { plan_id: s.id });
    expect(history.versions[0]).toMatchObject({ version: 2, change_type: "modified", change_summary: "Refined: Tell the user why sign-in was refused.; 1 clarification(s) answered" });
    expect((await ok(s.ctx, "load_plan", { plan_id: s.id })).plan).toEqual(res.plan);
    expect(await textOf(s.llm, "refine_plan", { plan_id: s.id, auto_save: false })).toContain("## Changes\nNo changes.");
  });

  it("focus_steps: named in the prompt, a warning for steps changed outside them, and steps not in the plan refused before the model is asked", async () => {
    const s = await saved("refine-focus");
    const res = await ok(s.llm, "refine_plan", { plan_id: s.id, focus_steps: [3], feedback: "Report why sign-in failed." });
    expect(user(s.ai)).toContain("## Focus\nChange steps 3 (and what must change with them)");
    expect(res.warnings).toEqual(["The model also changed step(s) outside focus_steps: 4."]);

    const asked = s.ai.inputs.length;
    const err = await refusedWithoutWrites(s.llm, "refine_plan", { plan_id: s.id, focus_steps: [2, 9, 12] }, "invalid_input", rows(s.ctx));
    expect(err.message).toBe("focus_steps names step(s) 9, 12, not in the plan.");
    expect(err.hint).toBe("The plan's steps are 1, 2, 3, 4, 5.");
    expect(s.ai.inputs.length).toBe(asked);
  });

  it("refines a plan passed in: unsaved stays unsaved; one carrying a saved plan's id becomes its next version, unless it is an older version or auto_save: false", async () => {
    const s = await saved("refine-current");
    const loaded = (await ok(s.ctx, "load_plan", { plan_id: s.id })).plan;

    const { id: _id, ...unsavedPlan } = loaded;
    const free = await ok(s.llm, "refine_plan", { current_plan: JSON.stringify(unsavedPlan), feedback: "Say why." });
    expect(free.saved).toBeUndefined();
    expect(free.plan.id).not.toBe(s.id);
    expect(free.plan.version).toBe(2);

    const before = await rows(s.ctx)();
    const off = await ok(s.llm, "refine_plan", { current_plan: loaded, auto_save: false });
    expect(off.saved).toBeUndefined();
    expect(off.plan).toMatchObject({ id: s.id, version: 2 });
    expect(await rows(s.ctx)()).toEqual(before);
    expect(user(s.ai)).toContain("Add detail where the plan is thin");

    const on = await ok(s.llm, "refine_plan", { current_plan: loaded, feedback: "Say why." });
    expect(on.saved).toMatchObject({ plan_id: s.id, version: 2, changed: true });

    const stale = await refusedWithoutWrites(s.llm, "refine_plan", { current_plan: loaded, feedback: "Again." }, "conflict", rows(s.ctx));
    expect(stale.message).toBe(`current_plan is version 1 of plan ${s.id}, whose current version is 2.`);
  });

  it("an answer equal to the plan adds no version", async () => {
    const s = await saved("refine-same");
    s.ai.reply = () => lockoutAnswer;
    const res = await ok(s.llm, "refine_plan", { plan_id: s.id });
    expect(res.saved).toMatchObject({ version: 1, changed: false });
    expect(res.changes.summary).toBe("No changes");
    expect((await ok(s.ctx, "view_history", { plan_id: s.id })).versions).toHaveLength(1);
  });

  it("refuses a bad answer, bad arguments and another tenant's plan without writing or asking the model", async () => {
    const s = await saved("refine-bad");
    s.ai.reply = () => {
      const d = discount();
      d.steps[1]!.depends_on = [3];
      return d;
    };
    const bad = await refusedWithoutWrites(s.llm, "refine_plan", { plan_id: s.id, feedback: "x" }, "llm_bad_output", rows(s.ctx));
    expect(bad.message).toContain("Steps 2 → 3 → 2 form a dependency cycle");

    const asked = s.ai.inputs.length;
    const plan = { goal: "g", steps: [{ step_number: 1, title: "t" }] };
    for (const [args, message] of [
      [{ feedback: "x" }, "Pass exactly one of current_plan and plan_id."],
      [{ plan_id: s.id, current_plan: plan }, "Pass exactly one of current_plan and plan_id."],
      [{ current_plan: "{nope" }, "current_plan must be valid JSON"],
      [{ current_plan: { goal: "g", steps: [{ step_number: 1, title: "t", depends_on: [2] }] } }, "current_plan.steps.0.depends_on: Step 1 depends on step 2"],
      [{ current_plan: plan, clarifications: "not json" }, "clarifications must be valid JSON"],
      [{ current_plan: plan, clarifications: "[1, 2]" }, "clarifications must be a JSON object of question → answer strings"],
      [{ current_plan: plan, clarifications: { q: 1 } }, "clarifications must be a JSON object of question → answer strings"],
      [{ current_plan: plan, focus_steps: [] }, "focus_steps"],
    ] as const) {
      const e = await refusedWithoutWrites(s.llm, "refine_plan", args, "invalid_input", rows(s.ctx));
      expect(e.message).toContain(message);
    }

    const other = await newWorld("refine-other", { start: "2026-11-20T12:00:00.000Z" });
    const err = await refusedWithoutWrites(withAi(other.ctx, s.ai), "refine_plan", { plan_id: s.id, feedback: "mine now" }, "not_found", rows(s.ctx));
    expect(err.message).toBe(`Plan ${s.id} not found`);
    expect(s.ai.inputs.length).toBe(asked);
  });
});

describe("the diagrams hook", () => {
  const stub: CompletionModel = { provider: "stub", model: "m", complete: () => Promise.resolve({ text: discountAnswer, model: "m" }) };
  const stamp = { id: "p1", version: 1, created_at: "2026-11-20T12:00:00.000Z", updated_at: "2026-11-20T12:00:00.000Z" };
  const files: PackedFile[] = [];

  it("gets the finished plan when diagrams are asked for, and its diagrams are the plan's; never the model's", async () => {
    const seen: Plan[] = [];
    const diagrams = (p: Plan) => (seen.push(p), [{ type: "flowchart" as const, title: "Steps", mermaid: `flowchart TD\n  s1 --> s2` }]);
    const on = await draftPlan(stub, { task: DISCOUNT_TASK, mvpOnly: false, generateDiagrams: true, files, contextNote: "", stamp }, diagrams);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.dependency_graph.execution_order).toEqual([1, 2, 3]);
    expect(on.plan.architecture.diagrams).toEqual([{ type: "flowchart", title: "Steps", mermaid: "flowchart TD\n  s1 --> s2" }]);
    const off = await draftPlan(stub, { task: DISCOUNT_TASK, mvpOnly: false, generateDiagrams: false, files, contextNote: "", stamp }, diagrams);
    expect(seen).toHaveLength(1);
    expect(off.plan.architecture.diagrams).toEqual([]);

    // A refinement redraws the diagrams of a plan that had them, and adds none to one that had none.
    const again = await redraftPlan(stub, { current: on.plan, stamp: { ...stamp, version: 2 } }, diagrams);
    expect(seen).toHaveLength(2);
    expect(again.plan.architecture.diagrams).toHaveLength(1);
    await redraftPlan(stub, { current: off.plan, stamp: { ...stamp, version: 2 } }, diagrams);
    expect(seen).toHaveLength(2);
  });
});

describe("get_context_for_prompt with handoff_mode", () => {
  it("answers the seed's validation messages", async () => {
    const w = await newWorld("handoff-args", { start: "2026-11-20T12:00:00.000Z" });
    for (const [args, message] of [
      [{ query: "q", handoff_mode: "plan" }, 'Invalid handoff_mode parameter: must be "none" or "active_plan"'],
      [{ query: "q", handoff_mode: "active_plan" }, "plan_id is required when handoff_mode is active_plan"],
      [{ query: "q", handoff_mode: "active_plan", plan_id: "   " }, "Invalid plan_id parameter: must be a non-empty string when provided"],
      [{ query: "q", plan_id: 42 }, "Invalid plan_id parameter: must be a non-empty string when provided"],
    ] as const) {
      const e = await fails(w.ctx, "get_context_for_prompt", args);
      expect(e.code).toBe("invalid_input");
      expect(e.message).toContain(message);
    }
  });

  it("active_plan: the plan's goal, step status and next step, its ready steps' files first in the context; another tenant's plan is not_found", async () => {
    const s = await shop("handoff");
    // The discount plan touches the cart; the question is about sign-in, so the cart code is there because of the plan.
    const saved = await ok(s.ctx, "save_plan", { plan: { ...discount(), id: "discounts" }, name: "Discounts" });
    expect(saved.created).toBe(true);
    await ok(s.ctx, "save_plan", {
      plan: { ...discount(), id: "discounts", steps: discount().steps.map((x) => (x.step_number === 1 ? { ...x, files_to_modify: [{ path: "src/cart/total.ts" }] } : x)) },
      overwrite: true,
    });

    const res = await ok(s.ctx, "get_context_for_prompt", { query: "login checkPassword", handoff_mode: "active_plan", plan_id: "discounts", max_files: 4 });
    expect(res.handoff).toMatchObject({
      mode: "active_plan",
      plan_id: "discounts",
      plan_name: "Discounts",
      plan_version: 2,
      plan_status: "ready",
      objective: discount().goal,
      scope_out: ["Stacking several codes", "Fixed-amount discounts", "Code expiry"],
      unresolved_risks: ["Rounding makes totals off by a cent"],
      steps: { total: 3, ready: 1, pending: 2, in_progress: 0, completed: 0, failed: 0, skipped: 0, blocked: 0 },
      current_step: { step_number: 1, title: "Add discount codes", status: "ready", files: ["src/cart/total.ts", "src/cart/discount.ts"] },
      completed_steps: [],
      active_files: ["src/cart/total.ts", "src/cart/discount.ts"],
      linked_files: ["src/cart/discount.ts", "src/cart/total.ts", "tests/cart.test.ts"],
      next_actions: ["Start step 1: Add discount codes"],
    });
    // The plan's file the index has comes first (a file it will create is not there yet); the question's matches follow.
    expect(res.files[0]).toMatchObject({ path: "src/cart/total.ts", reason: "pinned", whole: true });
    expect(res.files.map((f: Structured) => f.path)).not.toContain("src/cart/discount.ts");
    expect(res.files.find((f: Structured) => f.path === "src/auth/login.ts")).toMatchObject({ reason: "match" });

    const text = await textOf(s.ctx, "get_context_for_prompt", { query: "login checkPassword", handoff_mode: "active_plan", plan_id: "discounts" });
    expect(text).toContain("## Active plan: Discounts (discounts v2, ready)");
    expect(text).toContain("### Next actions\n- Start step 1: Add discount codes");
    expect(text).toContain("## octo/shop: src/cart/total.ts · in the active plan");

    const plain = await ok(s.ctx, "get_context_for_prompt", { query: "login checkPassword", max_files: 4 });
    expect(plain.handoff).toBeUndefined();
    expect(plain.files.map((f: Structured) => f.path)).not.toContain("src/cart/total.ts");

    const other = await rig("handoff-other");
    await indexed(other);
    const err = await fails(other.ctx, "get_context_for_prompt", { query: "login", handoff_mode: "active_plan", plan_id: "discounts" });
    expect(err).toMatchObject({ code: "not_found", message: "Plan discounts not found" });
  });
});
