/**
 * review_diff's LLM stage on real diffs (test/fixtures/review/llm): the noise gate, the two passes,
 * finding validation, context read at head_sha within the budget, and secrets scrubbed before any
 * pass. The model is a CompletionModel double; GitHub is the fake that checks every request
 * against GitHub's OpenAPI description.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Completion, CompletionModel, CompletionRequest } from "../../../src/llm/types";
import { llmStage, planContext, runLlmStage } from "../../../src/review/llm-review/passes";
import { parseUnifiedDiff, toChangedFileView } from "../../../src/review/unified-diff/parse";
import type { ChangedFileView, LlmRequest } from "../../../src/review/pipeline/stages";
import { findingSchema } from "../../../src/review/pipeline/types";
import benchDeno from "../../fixtures/review/llm/hono-bench-deno-fbd7ed70.diff?raw";
import jwtDiff from "../../fixtures/review/llm/hono-jwt-bun-1749f6a9.diff?raw";
import requestDiff from "../../fixtures/review/llm/hono-request-param-79677607.diff?raw";
import requestAtHead from "../../fixtures/review/llm/hono-request-79677607.ts.txt?raw";
import renameDiff from "../../fixtures/review/llm/hono-workerd-rename-f634c824.diff?raw";
import { errorBody, example, FakeGitHub } from "../../support/github/fake";
import { connectGitHub } from "../../support/github/tenant";
import { withAi } from "../../support/llm-stand-in";
import { JWT, world } from "../../support/review-llm-rig";

afterEach(() => vi.restoreAllMocks());

const HEAD = "29f1ed97".padEnd(40, "0");

/** A CompletionModel double: answers each call from `reply`, records every request. */
class ScriptedModel implements CompletionModel {
  readonly provider = "scripted";
  readonly model = "scripted-reviewer-1";
  readonly requests: CompletionRequest[] = [];
  constructor(private readonly reply: (req: CompletionRequest, n: number) => string | Error) {}
  complete(req: CompletionRequest): Promise<Completion> {
    this.requests.push(req);
    const out = this.reply(req, this.requests.length);
    return out instanceof Error ? Promise.reject(out) : Promise.resolve({ text: out, model: this.model });
  }
  prompt(n: number): string {
    return this.requests[n]!.messages.map((m) => m.content).join("\n");
  }
}

/** The stage's view of a diff's files (what review_diff hands it). */
const views = (diff: string): ChangedFileView[] => parseUnifiedDiff(diff).files.map(toChangedFileView);

function llmRequest(diff: string, over: Partial<LlmRequest> = {}, options: Partial<LlmRequest["options"]> = {}): LlmRequest {
  return {
    diff,
    files: views(diff),
    riskScore: 3,
    testsTouched: true,
    classification: "bugfix",
    hotspots: [],
    invariantsForPrompt: "(none)",
    ...over,
    options: { llmForce: false, twoPass: true, riskThreshold: 3, tokenBudget: 8000, maxContextFiles: 5, ...options },
  };
}

const llmFinding = (id: string, severity: string, over: Record<string, unknown> = {}) => ({
  id,
  severity,
  category: "correctness",
  confidence: 0.85,
  title: `Unguarded route lookup (${id})`,
  location: { file: "src/request.ts", startLine: 114 },
  evidence: ["this.#matchResult[0][this.routeIndex][1][key]", 42],
  impact: "Throws on an unmatched request.",
  recommendation: "Use optional chaining here too.",
  ...over,
});

describe("review_diff", () => {
  describe("its LLM stage", () => {
    it("skips without a model (llm_not_configured) and through the noise gate for low-risk tested changes", async () => {
      const { w } = await world("stage-skip");
      const none = await runLlmStage(w.ctx, llmRequest(requestDiff), null);
      expect(none).toMatchObject({ findings: [], passesExecuted: 0, skippedReason: "llm_not_configured" });
      expect(none.warnings[0]).toContain("LLM_API_KEY");
      // The exported stage asks the environment: no AI binding and no key here.
      expect((await llmStage(withAi(w.ctx, undefined), llmRequest(requestDiff))).skippedReason).toBe("llm_not_configured");
      const model = new ScriptedModel(() => JSON.stringify({ findings: [] }));
      const gated = await runLlmStage(w.ctx, llmRequest(requestDiff, { riskScore: 2, testsTouched: true }), model);
      expect(gated).toMatchObject({ passesExecuted: 0, skippedReason: "noise_gate_low_risk", model: "scripted-reviewer-1" });
      expect(model.requests).toHaveLength(0);
      // Untested, or forced, or riskier: the passes run.
      expect((await runLlmStage(w.ctx, llmRequest(requestDiff, { riskScore: 2, testsTouched: false }), model)).passesExecuted).toBe(1);
      expect((await runLlmStage(w.ctx, llmRequest(requestDiff, { riskScore: 1, testsTouched: true }, { llmForce: true }), model)).passesExecuted).toBe(1);
      expect((await runLlmStage(w.ctx, llmRequest(requestDiff, { riskScore: 3, testsTouched: true }, { twoPass: false }), model)).passesExecuted).toBe(1);
    });

    it("runs the detailed pass for risky changes or serious structural findings, handing it the structural findings", async () => {
      const { w } = await world("stage-two");
      const medium = llmFinding("F001", "MEDIUM");
      const high = llmFinding("F002", "HIGH");
      const model = new ScriptedModel((req, n) => JSON.stringify({ findings: n % 2 === 1 ? [medium] : [llmFinding("D001", "LOW")] }));
      const risky = await runLlmStage(w.ctx, llmRequest(requestDiff, { riskScore: 3 }), model);
      expect(risky.passesExecuted).toBe(2);
      expect(risky.findings.map((f) => f.id)).toEqual(["F001", "D001"]);
      expect(model.prompt(1)).toContain("STRUCTURAL FINDINGS:");
      expect(model.prompt(1)).toContain('"id":"F001"');
      expect(model.requests[1]).toMatchObject({ json: true, temperature: 0 });
      // Below the threshold and nothing serious: one pass.
      const calm = await runLlmStage(w.ctx, llmRequest(requestDiff, { riskScore: 2, testsTouched: false }), new ScriptedModel(() => JSON.stringify({ findings: [medium] })));
      expect(calm.passesExecuted).toBe(1);
      // Below the threshold, but the structural pass found something HIGH: the detailed pass runs.
      const serious = new ScriptedModel((_req, n) => JSON.stringify({ findings: n === 1 ? [high] : [] }));
      expect((await runLlmStage(w.ctx, llmRequest(requestDiff, { riskScore: 2, testsTouched: false }), serious)).passesExecuted).toBe(2);
      for (const f of risky.findings) expect(findingSchema.parse(f)).toEqual(f);
      expect(risky.findings[0]).toMatchObject({ location: { file: "src/request.ts", startLine: 114, endLine: 114 }, evidence: ["this.#matchResult[0][this.routeIndex][1][key]"] });
      expect(risky.model).toBe("scripted-reviewer-1");
      expect(risky.timings.structural).toBeGreaterThanOrEqual(0);
    });

    it("validates findings: malformed ones are dropped with a warning, an unreadable answer is a warning, a failed call a skipped reason", async () => {
      const { w } = await world("stage-bad");
      const mixed = new ScriptedModel(() => JSON.stringify({ findings: [llmFinding("F1", "high"), llmFinding("F2", "URGENT"), llmFinding("F3", "LOW", { confidence: 3 }), "text"] }));
      const r = await runLlmStage(w.ctx, llmRequest(requestDiff, { riskScore: 1, testsTouched: false }, { twoPass: false }), mixed);
      expect(r.findings.map((f) => [f.id, f.severity])).toEqual([["F1", "HIGH"]]);
      expect(r.warnings).toContain("3 LLM finding(s) did not match the finding schema and were left out.");
      const prose = await runLlmStage(w.ctx, llmRequest(requestDiff, { riskScore: 1, testsTouched: false }), new ScriptedModel(() => "Looks good to me!"));
      expect(prose).toMatchObject({ findings: [], passesExecuted: 1 });
      expect(prose.warnings).toEqual(["Failed to extract JSON from LLM response"]);
      const noList = await runLlmStage(w.ctx, llmRequest(requestDiff, { riskScore: 1, testsTouched: false }), new ScriptedModel(() => '{"issues": []}'));
      expect(noList.warnings).toEqual(["LLM response missing findings[]"]);
      const { llmUnavailable } = await import("../../../src/llm/common");
      const down = await runLlmStage(w.ctx, llmRequest(requestDiff), new ScriptedModel(() => llmUnavailable("scripted", "HTTP 503")));
      expect(down).toMatchObject({ findings: [], passesExecuted: 0, skippedReason: "llm_unavailable" });
      expect(down.warnings[0]).toContain("LLM structural pass failed (llm_unavailable)");
    });

    it("reads context around the hunks at head_sha through the contents API, within max_context_files and the token budget", async () => {
      const { w } = await world("stage-context");
      const gh = new FakeGitHub();
      const ctx = await connectGitHub(w.ctx, gh);
      gh.on("GET /repos/{owner}/{repo}/contents/{path}", (req) =>
        req.path.path === "src/request.ts"
          ? {
              body: example("GET /repos/{owner}/{repo}/contents/{path}", {
                type: "file",
                encoding: "base64",
                path: req.path.path,
                name: "request.ts",
                size: requestAtHead.length,
                content: btoa(requestAtHead),
              }),
            }
          : { status: 404, body: errorBody("Not Found") },
      );
      const model = new ScriptedModel(() => JSON.stringify({ findings: [] }));
      const r = await runLlmStage(ctx, llmRequest(requestDiff, { repo: { owner: "honojs", name: "hono" }, headSha: HEAD }), model);
      expect(gh.requests.map((q) => [q.path.path, q.query.ref])).toEqual([
        ["src/request.test.ts", HEAD],
        ["src/request.ts", HEAD],
      ]);
      expect(r.warnings).toEqual([`Context: src/request.test.ts could not be read at ${HEAD.slice(0, 12)} (github_not_found); left out.`]);
      const prompt = model.prompt(0);
      // Lines 85–131 (16 either side of the hunks at 101–107 and 109–115, merged), numbered from the file at head.
      expect(prompt).toContain("Path: src/request.ts\nLines 85-131");
      expect(prompt).toContain("  114        const value = this.#getParamValue(this.#matchResult[0][this.routeIndex][1][key])");
      expect(prompt).not.toContain(`${String(84).padStart(5)}  `);
      // One file allowed: the planner's pick (equal priority: path order) is the only read.
      gh.requests.length = 0;
      await runLlmStage(ctx, llmRequest(requestDiff, { repo: { owner: "honojs", name: "hono" }, headSha: HEAD }, { maxContextFiles: 1 }), model);
      expect(gh.requests).toHaveLength(1);
      // Without head_sha nothing is read, and the warning says why.
      gh.requests.length = 0;
      const blind = await runLlmStage(ctx, llmRequest(requestDiff, { repo: { owner: "honojs", name: "hono" } }), model);
      expect(gh.requests).toHaveLength(0);
      expect(blind.warnings[0]).toContain("head_sha");
    });

    it("plans context by priority within the token budget (new files and hotspot paths first; deleted and binary files never)", () => {
      const plan = planContext([...views(benchDeno), ...views(renameDiff)], ["runtime_tests"], 1000, 3);
      expect(plan.map((a) => [a.file.path, a.priority])).toEqual([
        ["benchmarks/deno/fast.ts", 7],
        ["benchmarks/deno/hono.ts", 5],
        ["package.json", 5],
      ]);
      expect(plan.reduce((n, a) => n + a.chars, 0)).toBeLessThanOrEqual(1000 * 4);
      const hot = planContext(views(renameDiff), ["runtime_tests/workerd"], 50_000, 20);
      expect(hot.map((a) => a.file.path)).toEqual(["runtime_tests/workerd/index.test.ts", "runtime_tests/workerd/index.ts", "runtime_tests/workerd/vitest.config.ts", "package.json"]);
    });

    it("scrubs secrets from the diff, the context and the invariants before any pass", async () => {
      const { w } = await world("stage-secret");
      const gh = new FakeGitHub();
      const ctx = await connectGitHub(w.ctx, gh);
      const key = "AKIALALEMEL33243OLIA"; // gitleaks allowlists AWS's documented AKIA…EXAMPLE key, so a key from its own samples
      const file = requestAtHead.replace("export class HonoRequest", `const awsKey = '${key}'\nexport class HonoRequest`);
      gh.on("GET /repos/{owner}/{repo}/contents/{path}", (req) => ({
        body: example("GET /repos/{owner}/{repo}/contents/{path}", { type: "file", encoding: "base64", path: req.path.path, size: file.length, content: btoa(file) }),
      }));
      const model = new ScriptedModel(() => JSON.stringify({ findings: [llmFinding("F1", "HIGH")] }));
      const r = await runLlmStage(
        ctx,
        llmRequest(jwtDiff, { repo: { owner: "honojs", name: "hono" }, headSha: HEAD, invariantsForPrompt: `security:\n- [SEC1] (HIGH/security) never log ${key}` }),
        model,
      );
      expect(model.requests).toHaveLength(2);
      for (const n of [0, 1]) {
        expect(model.prompt(n)).not.toContain(JWT);
        expect(model.prompt(n)).not.toContain(key);
        expect(model.prompt(n)).toContain(`${JWT.slice(0, 4)}****`);
      }
      expect(r.warnings).toContain("Secret-shaped text was masked before the LLM passes: jwt, aws-access-token.");
    });
  });
});
