/**
 * execute_plan over a real change: hono's fix for params on unmatched requests (commit 79677607,
 * test/fixtures/review/llm), planned as steps. The model is the Workers AI stand-in answering what
 * a model answers for each step; GitHub is the in-memory repository behind the fake that checks
 * every request against GitHub's OpenAPI description.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AiChatInput } from "../../src/llm/workers-ai";
import { InputNeeded } from "../../src/core/confirm";
import type { Ctx } from "../../src/core/context";
import { findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { planBranch } from "../../src/plans/execution/run";
import requestAtHead from "../fixtures/review/llm/hono-request-79677607.ts.txt?raw";
import { errorBody, FakeGitHub } from "../support/github/fake";
import { FakeRepo } from "../support/github/fake-repo";
import { connectGitHub } from "../support/github/tenant";
import { ScriptedAi, withAi } from "../support/llm-stand-in";
import { call, count, fails, newWorld, ok, refusedWithoutWrites, type World } from "../support/helpers";

const START = "2026-07-20T09:00:00.000Z";
const REPO = "honojs/hono";

/** src/request.ts before the fix: the two lookups without optional chaining. */
const requestBefore = requestAtHead
  .replace("const paramKey = this.#matchResult[0][this.routeIndex]?.[1][key]", "const paramKey = this.#matchResult[0][this.routeIndex][1][key]")
  .replace("const keys = Object.keys(this.#matchResult[0][this.routeIndex]?.[1] ?? {})", "const keys = Object.keys(this.#matchResult[0][this.routeIndex][1])");
/** Step 4's change on top of the fix: a line in param()'s documentation. */
const requestDocumented = requestAtHead.replace(
  "   * const { id, comment_id } = c.req.param()\n",
  "   * const { id, comment_id } = c.req.param()\n   * // a request no route matched has no params: undefined, or {} for all\n",
);
const unmatchedTest = `import { HonoRequest } from './request'

describe('Param', () => {
  test('req.param() on an unmatched request', () => {
    const req = new HonoRequest(new Request('http://localhost/'))

    expect(req.param('id')).toBeUndefined()
    expect(req.param()).toEqual({})
  })
})
`;
const changeset = "---\n'hono': patch\n---\n\nfix(request): handle params on unmatched requests\n";

const PLAN = {
  id: "hono-params",
  goal: "Make HonoRequest.param() safe on requests that no route matched",
  steps: [
    {
      step_number: 1,
      title: "Guard param lookups against a missing route match",
      description: "#getDecodedParam and #getAllDecodedParams index this.#matchResult[0][this.routeIndex] without checking it; on an unmatched request it is undefined and param() throws.",
      files_to_modify: [{ path: "src/request.ts", reason: "the two private param helpers" }],
      acceptance_criteria: ["req.param('id') is undefined on an unmatched request", "req.param() is {} on an unmatched request"],
    },
    { step_number: 2, title: "Test param() on an unmatched request", depends_on: [1], files_to_create: [{ path: "src/request-unmatched.test.ts", change_type: "create" }] },
    { step_number: 3, title: "Add a changeset", files_to_create: [{ path: ".changeset/params-unmatched.md", change_type: "create" }] },
    { step_number: 4, title: "Document param() on unmatched requests", depends_on: [1], files_to_modify: [{ path: "src/request.ts", reason: "param()'s JSDoc" }] },
  ],
};

type Answer = Record<string, unknown> | string;

/** What the model answers for each step: the real change of that step. */
const ANSWERS: Record<number, Answer> = {
  1: {
    reasoning: "The route index may point past the match result when no route matched; optional chaining makes both lookups yield nothing instead of throwing.",
    changes: [{ path: "src/request.ts", change_type: "modify", content: requestAtHead, explanation: "Use ?.[1] in #getDecodedParam and fall back to {} in #getAllDecodedParams." }],
  },
  // A string, as an OpenAI-compatible endpoint answers; Workers AI hands over parsed objects.
  2: JSON.stringify({
    reasoning: "A unit test for both forms of param() on a request without a match.",
    changes: [{ path: "src/request-unmatched.test.ts", change_type: "create", content: unmatchedTest, explanation: "Covers param(key) and param() on an unmatched request." }],
  }),
  3: { reasoning: "A patch changeset for the release notes.", changes: [{ path: "./.changeset/params-unmatched.md", change_type: "create", content: changeset, explanation: "Release note." }] },
  4: {
    reasoning: "Say what param() gives when nothing matched.",
    changes: [{ path: "src/request.ts", change_type: "modify", content: requestDocumented, explanation: "One line in the JSDoc example." }],
  },
};

const stepOf = (input: AiChatInput) => Number(/## Step (\d+):/.exec(input.messages[1]!.content)![1]);

interface Setup {
  w: World;
  ctx: Ctx;
  gh: FakeGitHub;
  repo: FakeRepo;
  main: string;
  ai: ScriptedAi;
}

async function setup(answers: Record<number, Answer> = ANSWERS): Promise<Setup> {
  const w = await newWorld("plans-exec", { start: START });
  const gh = new FakeGitHub();
  const repo = new FakeRepo(gh);
  const main = repo.write("main", { "src/request.ts": requestBefore, "README.md": "# Hono\n" }, "initial");
  const ai = new ScriptedAi((input) => answers[stepOf(input)] ?? "{}");
  const ctx = withAi(await connectGitHub(w.ctx, gh), ai);
  return { w, ctx, gh, repo, main, ai };
}

const writes = (gh: FakeGitHub) => gh.requests.filter((r) => r.method !== "GET");
const stepRows = (ctx: Ctx) =>
  env.DB.prepare(`SELECT step_number, status, repo, branch, commit_sha, files_modified, finished_by FROM plan_steps WHERE tenant_id = ? ORDER BY step_number`)
    .bind(ctx.tenantId)
    .all()
    .then((r) => r.results);
const planStatus = (ctx: Ctx, id: string) =>
  env.DB.prepare(`SELECT status FROM plans WHERE tenant_id = ? AND id = ?`)
    .bind(ctx.tenantId, id)
    .first<{ status: string }>()
    .then((r) => r?.status);
const text = async (ctx: Ctx, args: unknown) => ((await callTool(findTool("execute_plan")!, ctx, args)).content[0] as { text: string }).text;

describe("execute_plan", () => {
  describe("preview", () => {
    it("writes step 1 over the real file read at base, and writes nothing anywhere", async () => {
      const { ctx, gh, repo, main, ai } = await setup();
      const saved = await ok(ctx, "save_plan", { plan: PLAN });
      const r = await ok(ctx, "execute_plan", { plan_id: saved.plan_id, step_number: 1, repo: REPO, additional_context: "Keep the public types unchanged." });

      expect(r).toMatchObject({ success: true, plan_id: "hono-params", saved_plan: true, mode: "single_step", apply_changes: false, recorded_steps: [], plan_status: "ready" });
      expect(r.step_results).toHaveLength(1);
      expect(r.step_results[0]).toMatchObject({
        step_number: 1,
        success: true,
        reasoning: expect.stringContaining("optional chaining"),
        generated_code: [{ path: "src/request.ts", change_type: "modify", content: requestAtHead, explanation: expect.stringContaining("?.[1]") }],
      });
      expect(r.github).toMatchObject({ repo: REPO, branch: "plan/hono-params", base: "main", start_sha: main, branch_existed: false, branch_created: false, head_sha: null, commits: [] });
      // A preview leaves the plan where it was: step 1 still ready.
      expect(r.next_ready_steps).toEqual([1, 3]);
      expect(r.progress).toMatchObject({ total_steps: 4, completed_steps: 0, ready_steps: 2, percentage: 0 });

      // The model saw the goal, the step, the file as it is at base, and the caller's context.
      expect(ai.inputs).toHaveLength(1);
      const prompt = ai.inputs[0]!.messages[1]!.content;
      expect(ai.inputs[0]!.messages[0]!.role).toBe("system");
      expect(prompt).toContain(PLAN.goal);
      expect(prompt).toContain("## Step 1: Guard param lookups against a missing route match");
      expect(prompt).toContain("- src/request.ts (write): the two private param helpers");
      expect(prompt).toContain("const paramKey = this.#matchResult[0][this.routeIndex][1][key]");
      expect(prompt).toContain("Keep the public types unchanged.");
      expect(ai.inputs[0]!.response_format).toEqual({ type: "json_object" });

      expect(writes(gh)).toEqual([]);
      expect(gh.requests.filter((r) => r.op === "GET /repos/{owner}/{repo}/contents/{path}").map((r) => [r.path.path, r.query.ref])).toEqual([["src/request.ts", main]]);
      expect(repo.refs.get("main")).toBe(main);
      expect(repo.refs.has("plan/hono-params")).toBe(false);
      expect(await count(`SELECT COUNT(*) AS n FROM plan_steps WHERE tenant_id = ?`, ctx.tenantId)).toBe(0);
      expect(await planStatus(ctx, "hono-params")).toBe("ready");
    });

    it("answers the seed's Markdown report with the whole JSON result in a <details> block", async () => {
      const { ctx } = await setup();
      const args = { plan: JSON.stringify(PLAN), step_number: 3, repo: REPO };
      const md = await text(ctx, args);
      expect(md).toMatch(/^# Plan Execution Result\n/);
      expect(md).toContain("**Success:** ✅ Yes");
      expect(md).toContain("### Step 3: Add a changeset");
      expect(md).toContain("#### Generated Changes (Preview Only)");
      expect(md).toContain("**CREATE:** `.changeset/params-unmatched.md`");
      expect(md).toContain("fix(request): handle params on unmatched requests");
      const json = /<details>\n<summary>Full JSON Response<\/summary>\n\n```json\n([\s\S]*)\n```\n<\/details>$/.exec(md);
      expect(json).not.toBeNull();
      const parsed = JSON.parse(json![1]!);
      expect(parsed).toMatchObject({
        success: true,
        plan_id: "hono-params",
        saved_plan: false,
        step_results: [{ step_number: 3, generated_code: [{ path: ".changeset/params-unmatched.md", change_type: "create", content: changeset }] }],
      });
    });

    it("previews without a repository, saying the model saw no current content", async () => {
      const { ctx, gh, ai } = await setup();
      const r = await ok(ctx, "execute_plan", { plan: PLAN, step_number: 1 });
      expect(r).toMatchObject({ success: true, github: null, step_results: [{ generated_code: [{ path: "src/request.ts", change_type: "modify" }] }] });
      expect(r.warnings.join(" ")).toContain("No repo given");
      expect(ai.inputs[0]!.messages[1]!.content).toContain("(current content not available: no repository was given)");
      expect(gh.requests).toEqual([]);
    });
  });

  describe("apply_changes", () => {
    it("commits one step per commit on plan/<id> created from base, records the steps, and leaves the default branch alone", async () => {
      const { ctx, gh, repo, main, ai } = await setup();
      await ok(ctx, "save_plan", { plan: PLAN });
      const r = await ok(ctx, "execute_plan", { plan_id: "hono-params", mode: "full_plan", max_steps: 2, apply_changes: true, repo: REPO });

      expect(r).toMatchObject({ success: true, saved_plan: true, apply_changes: true, recorded_steps: [1, 2], plan_status: "executing" });
      expect(r.step_results.map((s: { step_number: number }) => s.step_number)).toEqual([1, 2]);
      expect(r.warnings.join(" ")).toContain("max_steps (2) reached");
      const [c1, c2] = r.github.commits as { step_number: number; sha: string }[];
      expect(r.github).toMatchObject({ branch: "plan/hono-params", base: "main", start_sha: main, branch_existed: false, branch_created: true, head_sha: c2!.sha });
      expect(r.step_results[0].commit).toEqual({ sha: c1!.sha });

      // The branch: two commits on top of main, one per step, with the plan's messages.
      expect(repo.refs.get("main")).toBe(main);
      expect(repo.refs.get("plan/hono-params")).toBe(c2!.sha);
      expect(repo.commits.get(c1!.sha)).toMatchObject({ parents: [main], message: expect.stringMatching(/^plan hono-params step 1: Guard param lookups against a missing route match\n/) });
      expect(repo.commits.get(c2!.sha)).toMatchObject({ parents: [c1!.sha], message: expect.stringMatching(/^plan hono-params step 2: Test param\(\) on an unmatched request\n/) });
      expect(repo.files("plan/hono-params")).toEqual({ "src/request.ts": requestAtHead, "src/request-unmatched.test.ts": unmatchedTest, "README.md": "# Hono\n" });
      expect(repo.files(c1!.sha)["src/request-unmatched.test.ts"]).toBeUndefined();
      // Through batch_commit's own path: blobs inline in one tree per commit, the branch created once, never forced.
      expect(gh.count("POST /repos/{owner}/{repo}/git/refs")).toBe(1);
      expect(gh.count("PATCH /repos/{owner}/{repo}/git/refs/{ref}")).toBe(0);
      expect(gh.count("POST /repos/{owner}/{repo}/git/commits")).toBe(2);
      expect(ai.inputs).toHaveLength(2);

      // The saved plan's steps carry their commits; its status follows them.
      expect(await stepRows(ctx)).toEqual([
        { step_number: 1, status: "completed", repo: REPO, branch: "plan/hono-params", commit_sha: c1!.sha, files_modified: '["src/request.ts"]', finished_by: ctx.actorId },
        { step_number: 2, status: "completed", repo: REPO, branch: "plan/hono-params", commit_sha: c2!.sha, files_modified: '["src/request-unmatched.test.ts"]', finished_by: ctx.actorId },
      ]);
      expect(await planStatus(ctx, "hono-params")).toBe("executing");
      expect(r.next_ready_steps).toEqual([3, 4]);
      expect(r.progress).toMatchObject({ completed_steps: 2, ready_steps: 2, percentage: 50 });

      // The next call picks the ready steps from the stored state and builds on the branch, not on base.
      const next = await ok(ctx, "execute_plan", { plan_id: "hono-params", mode: "all_ready", apply_changes: true, repo: REPO });
      expect(next).toMatchObject({ success: true, recorded_steps: [3, 4], plan_status: "completed", next_ready_steps: [] });
      expect(next.github).toMatchObject({ start_sha: c2!.sha, branch_existed: true, branch_created: false });
      const step4Prompt = ai.inputs.find((i) => stepOf(i) === 4)!.messages[1]!.content;
      expect(step4Prompt).toContain("this.#matchResult[0][this.routeIndex]?.[1][key]");
      expect(repo.files("plan/hono-params")["src/request.ts"]).toBe(requestDocumented);
      expect(repo.files("plan/hono-params")[".changeset/params-unmatched.md"]).toBe(changeset);
      expect(repo.commits.get(repo.refs.get("plan/hono-params")!)!.message).toMatch(/^plan hono-params step 4: /);
      expect(repo.refs.get("main")).toBe(main);
      expect(await planStatus(ctx, "hono-params")).toBe("completed");
      expect((await stepRows(ctx)).map((s) => s.status)).toEqual(["completed", "completed", "completed", "completed"]);

      // Nothing is left to run.
      const none = await ok(ctx, "execute_plan", { plan_id: "hono-params", mode: "full_plan", repo: REPO });
      expect(none).toMatchObject({ success: true, step_results: [] });
      expect(none.warnings.join(" ")).toContain("No steps to execute");
    });

    it("records the commit of a step tracked by a task, which keeps the task's state", async () => {
      const { ctx } = await setup();
      await ok(ctx, "save_plan", { plan: PLAN });
      await ok(ctx, "project_create", { key: "HONO", title: "Hono" });
      await ok(ctx, "plan_to_tasks", { plan_id: "hono-params", project_id: "HONO" });
      const r = await ok(ctx, "execute_plan", { plan_id: "hono-params", step_number: 1, apply_changes: true, repo: REPO });
      expect(r.recorded_steps).toEqual([1]);
      expect(r.warnings.join(" ")).toContain("tracked by tasks");
      const progress = await ok(ctx, "view_progress", { plan_id: "hono-params" });
      const step1 = progress.steps.find((s: { step_number: number }) => s.step_number === 1);
      expect(step1).toMatchObject({ status: "ready", commit: { repo: REPO, branch: "plan/hono-params", sha: r.github.commits[0].sha }, task: { ref: "HONO-1", status: "todo" } });
      // Committed, its task not done yet: all_ready does not generate and commit it a second time.
      const again = await ok(ctx, "execute_plan", { plan_id: "hono-params", mode: "all_ready" });
      expect(again.step_results.map((x: { step_number: number }) => x.step_number)).not.toContain(1);
    });

    it("lets a later step of the same call build on an earlier one", async () => {
      const { ctx, repo, ai } = await setup();
      const r = await ok(ctx, "execute_plan", { plan: PLAN, mode: "full_plan", apply_changes: true, repo: REPO });
      expect(r.step_results.map((s: { step_number: number }) => s.step_number)).toEqual([1, 2, 3, 4]);
      expect(r).toMatchObject({ success: true, saved_plan: false, recorded_steps: [], plan_status: null, next_ready_steps: [] });
      expect(r.progress).toMatchObject({ completed_steps: 4, percentage: 100 });
      // Step 4 was shown step 1's version of src/request.ts, which is only on the branch being built.
      const step4Prompt = ai.inputs.find((i) => stepOf(i) === 4)!.messages[1]!.content;
      expect(step4Prompt).toContain("this.#matchResult[0][this.routeIndex]?.[1][key]");
      expect(repo.files("plan/hono-params")["src/request.ts"]).toBe(requestDocumented);
      expect(r.github.commits).toHaveLength(4);
      // A plan that is not saved writes no step state.
      expect(await count(`SELECT COUNT(*) AS n FROM plan_steps WHERE tenant_id = ?`, ctx.tenantId)).toBe(0);
    });

    it("commits on a branch the caller names, from the base they name; the default branch only when named", async () => {
      const { ctx, repo, main } = await setup();
      const dev = repo.write("develop", { "src/request.ts": requestBefore, "src/extra.ts": "export {}\n" }, "develop work", main);
      const r = await ok(ctx, "execute_plan", { plan: PLAN, step_number: 3, apply_changes: true, repo: REPO, branch: "feat/params", base: "develop" });
      expect(r.github).toMatchObject({ branch: "feat/params", base: "develop", start_sha: dev, branch_created: true });
      expect(repo.commits.get(repo.refs.get("feat/params")!)!.parents).toEqual([dev]);
      expect(repo.refs.get("main")).toBe(main);

      const onMain = await ok(ctx, "execute_plan", { plan: PLAN, step_number: 3, apply_changes: true, repo: REPO, branch: "main" });
      expect(onMain.github).toMatchObject({ branch: "main", branch_existed: true, start_sha: main });
      expect(repo.commits.get(repo.refs.get("main")!)).toMatchObject({ parents: [main], message: expect.stringMatching(/^plan hono-params step 3: Add a changeset/) });
    });

    it("keeps the steps committed before a commit that fails, and reports the rest as not committed", async () => {
      const { ctx, gh, repo, main } = await setup();
      await ok(ctx, "save_plan", { plan: PLAN });
      let commits = 0;
      repo.before = (req) => (req.op === "POST /repos/{owner}/{repo}/git/commits" && ++commits === 2 ? { status: 422, body: errorBody("Invalid tree info") } : undefined);
      const r = await ok(ctx, "execute_plan", { plan_id: "hono-params", mode: "full_plan", apply_changes: true, repo: REPO });
      expect(r.step_results.map((s: { step_number: number; success: boolean; error?: { code: string } }) => [s.step_number, s.success, s.error?.code])).toEqual([
        [1, true, undefined],
        [2, false, "commit_failed"],
        [3, false, "not_committed"],
        [4, false, "not_committed"],
      ]);
      expect(r.step_results[1].error.message).toContain("Invalid tree info");
      expect(r).toMatchObject({ success: false, recorded_steps: [1], plan_status: "executing", next_ready_steps: [2, 3, 4] });
      expect(r.github.commits).toEqual([{ step_number: 1, sha: repo.refs.get("plan/hono-params") }]);
      expect(repo.files("plan/hono-params")["src/request.ts"]).toBe(requestAtHead);
      expect(repo.refs.get("main")).toBe(main);
      expect((await stepRows(ctx)).map((s) => [s.step_number, s.status])).toEqual([[1, "completed"]]);
      expect(gh.count("POST /repos/{owner}/{repo}/git/refs")).toBe(1);
    });

    it("asks before writing the default branch, before the model runs, and stops when declined", async () => {
      const { ctx, gh, repo, main, ai } = await setup();
      const args = { plan: PLAN, step_number: 3, apply_changes: true, repo: REPO, branch: "main" };
      await expect(callTool(findTool("execute_plan")!, { ...ctx, confirmer: { answer: () => "unanswered" } }, args)).rejects.toBeInstanceOf(InputNeeded);
      const declined = await callTool(findTool("execute_plan")!, { ...ctx, confirmer: { answer: () => "declined" } }, args);
      expect((declined.structuredContent as { error: { code: string } }).error.code).toBe("confirmation_declined");
      expect(ai.inputs).toHaveLength(0);
      expect(writes(gh)).toEqual([]);
      const accepted = await callTool(findTool("execute_plan")!, { ...ctx, confirmer: { answer: () => "accepted" } }, args);
      expect(accepted.isError).toBeFalsy();
      expect(repo.refs.get("main")).not.toBe(main);
      // A plan branch is not the default one: no question.
      const own = await callTool(findTool("execute_plan")!, { ...ctx, confirmer: { answer: () => "unanswered" } }, { ...args, step_number: 1, branch: undefined });
      expect(own.isError).toBeFalsy();
      expect(repo.files("plan/hono-params")["src/request.ts"]).toBe(requestAtHead);
    });
  });

  describe("the model's answer", () => {
    it("fails with llm_bad_output on an answer that is not JSON, and commits nothing", async () => {
      const { ctx, gh, repo, main } = await setup({ ...ANSWERS, 1: "Sure! I updated src/request.ts to use optional chaining in both helpers." });
      await ok(ctx, "save_plan", { plan: PLAN });
      const before = await stepRows(ctx);
      const r = await call(ctx, "execute_plan", { plan_id: "hono-params", step_number: 1, apply_changes: true, repo: REPO });
      expect(r.isError).toBe(true);
      expect(r.error).toMatchObject({ code: "llm_bad_output", retryable: true, message: expect.stringMatching(/^Step 1 failed: .*no JSON object/) });
      expect(r.error.hint).toContain("Retry");
      expect(r.step_results).toEqual([expect.objectContaining({ step_number: 1, success: false, error: expect.objectContaining({ code: "llm_bad_output" }) })]);
      expect(writes(gh)).toEqual([]);
      expect(repo.refs.get("main")).toBe(main);
      expect(repo.refs.has("plan/hono-params")).toBe(false);
      expect(await stepRows(ctx)).toEqual(before);
    });

    it("refuses a step whose answer changes a file the step does not name: nothing of the step is kept", async () => {
      const outside = {
        reasoning: "Also harden the router.",
        changes: [
          { path: "src/request.ts", change_type: "modify", content: requestAtHead, explanation: "the fix" },
          { path: "src/hono-base.ts", change_type: "modify", content: "export {}\n", explanation: "unrelated" },
        ],
      };
      const { ctx, gh } = await setup({ ...ANSWERS, 1: outside });
      const err = await call(ctx, "execute_plan", { plan: PLAN, step_number: 1, apply_changes: true, repo: REPO });
      expect(err.error).toMatchObject({ code: "change_outside_step", retryable: true });
      expect(err.error.message).toContain("write src/hono-base.ts");
      expect(writes(gh)).toEqual([]);

      // Deleting a file the step only writes is outside it too.
      const { ctx: ctx2 } = await setup({ ...ANSWERS, 1: { changes: [{ path: "src/request.ts", change_type: "delete", content: null, explanation: "gone" }] } });
      expect((await fails(ctx2, "execute_plan", { plan: PLAN, step_number: 1, repo: REPO })).code).toBe("change_outside_step");
    });

    it("goes on past a failed step without stop_on_failure, skipping what depends on it", async () => {
      const { ctx, repo, main } = await setup({ ...ANSWERS, 1: "I cannot do that." });
      await ok(ctx, "save_plan", { plan: PLAN });
      const stop = await call(ctx, "execute_plan", { plan_id: "hono-params", mode: "full_plan", apply_changes: true, repo: REPO });
      expect(stop.error.code).toBe("llm_bad_output");
      expect(stop.step_results.map((s: { step_number: number }) => s.step_number)).toEqual([1]);

      const go = await ok(ctx, "execute_plan", { plan_id: "hono-params", mode: "full_plan", stop_on_failure: false, apply_changes: true, repo: REPO });
      // 2 and 4 wait on 1, which failed; 3 stands alone.
      expect(go.step_results.map((s: { step_number: number; success: boolean }) => [s.step_number, s.success])).toEqual([
        [1, false],
        [3, true],
      ]);
      expect(go).toMatchObject({ success: false, error: expect.stringMatching(/^Step 1 failed: /), recorded_steps: [3], plan_status: "executing" });
      expect(repo.files("plan/hono-params")).toEqual({ "src/request.ts": requestBefore, "README.md": "# Hono\n", ".changeset/params-unmatched.md": changeset });
      expect(repo.refs.get("main")).toBe(main);
      expect((await stepRows(ctx)).map((s) => [s.step_number, s.status])).toEqual([[3, "completed"]]);
    });

    it("leaves out files whose answer repeats their content, and fails a step that changes nothing", async () => {
      const same = { reasoning: "Already fine.", changes: [{ path: "src/request.ts", change_type: "modify", content: requestBefore, explanation: "no change" }] };
      const { ctx } = await setup({ ...ANSWERS, 1: same });
      const err = await fails(ctx, "execute_plan", { plan: PLAN, step_number: 1, repo: REPO });
      expect(err.code).toBe("no_changes");

      const both = {
        reasoning: "The fix; the README needs nothing.",
        changes: [
          { path: "src/request.ts", content: requestAtHead },
          { path: "README.md", content: "# Hono\n" },
        ],
      };
      const { ctx: ctx2 } = await setup({ ...ANSWERS, 1: both });
      const plan = { ...PLAN, steps: [{ ...PLAN.steps[0]!, files_to_modify: [{ path: "src/request.ts" }, { path: "README.md" }] }] };
      const r = await ok(ctx2, "execute_plan", { plan, step_number: 1, repo: REPO });
      expect(r.step_results[0].generated_code.map((c: { path: string; change_type: string }) => [c.path, c.change_type])).toEqual([["src/request.ts", "modify"]]);
      expect(r.step_results[0].warnings).toEqual(["Left as they are (the answer repeats their content): README.md."]);
    });

    it("never shows a model a file with secret-shaped text that it would rewrite", async () => {
      const { ctx, repo, ai } = await setup();
      const key = ["AKIA", "Z7QW3PLM4XKD2NBT"].join("");
      repo.write("main", { "src/request.ts": `const awsKey = '${key}'\n${requestBefore}` });
      const err = await fails(ctx, "execute_plan", { plan: PLAN, step_number: 1, repo: REPO });
      expect(err.code).toBe("secret_in_file");
      expect(ai.inputs).toHaveLength(0);
      // Secret-shaped text elsewhere (the caller's context) is masked, and the step goes on.
      const r = await ok(ctx, "execute_plan", { plan: PLAN, step_number: 3, repo: REPO, additional_context: `The CI key is ${key}.` });
      expect(ai.seen).not.toContain(key);
      expect(r.step_results[0].warnings.join(" ")).toContain("masked");
    });

    it("fails a step that names no files, or an unsafe path, without asking the model", async () => {
      const { ctx, ai } = await setup();
      const plan = { ...PLAN, steps: [...PLAN.steps, { step_number: 5, title: "Release" }, { step_number: 6, title: "Escape", files_to_modify: [{ path: "../etc/passwd" }] }] };
      expect((await fails(ctx, "execute_plan", { plan, step_number: 5, repo: REPO })).code).toBe("no_files");
      expect((await fails(ctx, "execute_plan", { plan, step_number: 6, repo: REPO })).code).toBe("unsafe_path");
      expect(ai.inputs).toHaveLength(0);
    });
  });

  describe("which steps", () => {
    it("single_step needs step_number (and only it takes one); all_ready runs the steps without dependencies; full_plan follows the order up to max_steps", async () => {
      const { ctx, ai } = await setup();
      expect((await fails(ctx, "execute_plan", { plan: PLAN })).message).toBe('step_number is required when mode is "single_step"');
      expect((await fails(ctx, "execute_plan", { plan: PLAN, mode: "all_ready", step_number: 1 })).code).toBe("invalid_input");
      expect((await fails(ctx, "execute_plan", { plan: PLAN, step_number: 9 })).message).toContain("Step 9 is not in plan hono-params");

      const ready = await ok(ctx, "execute_plan", { plan: PLAN, mode: "all_ready", repo: REPO });
      expect(ready.step_results.map((s: { step_number: number }) => s.step_number)).toEqual([1, 3]);
      const capped = await ok(ctx, "execute_plan", { plan: PLAN, mode: "all_ready", max_steps: 1, repo: REPO });
      expect(capped.step_results.map((s: { step_number: number }) => s.step_number)).toEqual([1]);
      const full = await ok(ctx, "execute_plan", { plan: PLAN, mode: "full_plan", max_steps: 3, repo: REPO });
      expect(full.step_results.map((s: { step_number: number }) => s.step_number)).toEqual([1, 2, 3]);
      // A preview of a full run counts nothing as done.
      expect(full.next_ready_steps).toEqual([1, 3]);
      expect(ai.inputs.map(stepOf)).toEqual([1, 3, 1, 1, 2, 3]);
    });

    it("runs a saved plan's step only once the steps it depends on are done, and previews it with a warning", async () => {
      const { ctx, gh } = await setup();
      await ok(ctx, "save_plan", { plan: PLAN });
      await refusedWithoutWrites(ctx, "execute_plan", { plan_id: "hono-params", step_number: 2, apply_changes: true, repo: REPO }, "step_not_ready", () => stepRows(ctx));
      expect(writes(gh)).toEqual([]);
      const preview = await ok(ctx, "execute_plan", { plan_id: "hono-params", step_number: 2, repo: REPO });
      expect(preview.warnings.join(" ")).toContain("assumes the steps it waits on are done");
      // A plan sent whole with a saved plan's id and content is that plan.
      const sent = await ok(ctx, "execute_plan", { plan: PLAN, step_number: 1, repo: REPO });
      expect(sent.saved_plan).toBe(true);
      const changed = await ok(ctx, "execute_plan", { plan: { ...PLAN, goal: "Something else" }, step_number: 1, repo: REPO });
      expect(changed.saved_plan).toBe(false);
      expect(changed.warnings.join(" ")).toContain("differs from its current version");
    });
  });

  describe("refusals", () => {
    const state = (s: Setup) => async () => ({ steps: await stepRows(s.ctx), writes: writes(s.gh).length, refs: Object.fromEntries(s.repo.refs), asked: s.ai.inputs.length });

    it("refuses without a model, saying what works without one", async () => {
      const s = await setup();
      const err = await refusedWithoutWrites(withAi(s.ctx, undefined), "execute_plan", { plan: PLAN, step_number: 1, apply_changes: true, repo: REPO }, "llm_not_configured", state(s));
      expect(err.hint).toContain("save_plan");
      expect(err.hint).toContain("start_step");
      expect(err.hint).toContain("plan_to_tasks");
    });

    it("refuses apply_changes without GitHub credentials, before the model runs", async () => {
      const w = await newWorld("plans-exec-bare", { start: START });
      const ai = new ScriptedAi((input) => ANSWERS[stepOf(input)]!);
      const ctx = withAi(w.ctx, ai);
      await ok(ctx, "save_plan", { plan: PLAN });
      const err = await refusedWithoutWrites(ctx, "execute_plan", { plan_id: "hono-params", step_number: 1, apply_changes: true, repo: REPO }, "github_not_configured", async () => ({
        steps: await stepRows(ctx),
        status: await planStatus(ctx, "hono-params"),
      }));
      expect(err.message).toContain("no token or GitHub App installation");
      expect(err.hint).toContain("set-token");
      expect(ai.inputs).toHaveLength(0);
    });

    it("refuses bad input before anything runs", async () => {
      const s = await setup();
      await ok(s.ctx, "save_plan", { plan: PLAN });
      const bad: [unknown, string][] = [
        [{ step_number: 1 }, "invalid_input"],
        [{ plan: PLAN, plan_id: "hono-params", step_number: 1 }, "invalid_input"],
        [{ plan: PLAN, step_number: 1, apply_changes: true }, "invalid_input"],
        [{ plan: PLAN, step_number: 1, branch: "feat/x" }, "invalid_input"],
        [{ plan: PLAN, step_number: 1, repo: REPO, branch: "a..b" }, "unsafe_ref_token"],
        [{ plan: "{not json", step_number: 1 }, "invalid_input"],
        [{ plan: { ...PLAN, steps: [{ step_number: 1, title: "x", depends_on: [1] }] }, step_number: 1 }, "invalid_input"],
        [{ plan: PLAN, mode: "all_ready", max_steps: 21 }, "invalid_input"],
        [{ plan: PLAN, mode: "everything" }, "invalid_input"],
        [{ plan: PLAN, step_number: 1, additional_context: "x".repeat(20_001) }, "invalid_input"],
        [{ plan: PLAN, step_number: 1, repo: REPO, base: "ghost" }, "base_not_found"],
      ];
      for (const [args, code] of bad) await refusedWithoutWrites(s.ctx, "execute_plan", args, code, state(s));
      expect(planBranch("hono-params")).toBe("plan/hono-params");
      expect(planBranch("team:Q3..plan.lock")).toBe("plan/team-Q3.plan");
    });

    it("keeps tenants apart: another tenant's plan is not_found, and its id on a sent plan is not that plan", async () => {
      const s = await setup();
      await ok(s.ctx, "save_plan", { plan: PLAN });
      const other = await setup();
      await refusedWithoutWrites(other.ctx, "execute_plan", { plan_id: "hono-params", step_number: 1, repo: REPO }, "not_found", state(s));
      const sent = await ok(other.ctx, "execute_plan", { plan: PLAN, step_number: 1, apply_changes: true, repo: REPO });
      expect(sent).toMatchObject({ saved_plan: false, recorded_steps: [] });
      expect(await stepRows(s.ctx)).toEqual([]);
      expect(await planStatus(s.ctx, "hono-params")).toBe("ready");
    });
  });
});
