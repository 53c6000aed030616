/**
 * The language-model review tools (seed 004 §8–9) and review_diff's LLM stage, on real diffs
 * (test/fixtures/review/llm). The model is a stand-in: a Workers AI binding whose answers the
 * test scripts (for the tools, chosen through completionModel as in production) or a
 * CompletionModel double (for the stage). GitHub is the fake that checks every request against
 * GitHub's OpenAPI description.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Completion, CompletionModel, CompletionRequest } from "../../src/llm/types";
import type { AiChatInput } from "../../src/llm/workers-ai";
import { findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { llmStage, planContext, runLlmStage } from "../../src/review/llm-review/passes";
import { fileStatus, MAX_DIFF_FILES, MISSING_DIFF_MESSAGE, NO_SCOPE_MESSAGE, parseUnifiedDiff, toChangedFileView } from "../../src/review/unified-diff/parse";
import type { ChangedFileView, LlmRequest } from "../../src/review/pipeline/stages";
import { findingSchema } from "../../src/review/pipeline/types";
import benchDeno from "../fixtures/review/llm/hono-bench-deno-fbd7ed70.diff?raw";
import etagDiff from "../fixtures/review/llm/hono-etag-f8b7847d.diff?raw";
import jwtDiff from "../fixtures/review/llm/hono-jwt-bun-1749f6a9.diff?raw";
import requestDiff from "../fixtures/review/llm/hono-request-param-79677607.diff?raw";
import requestAtHead from "../fixtures/review/llm/hono-request-79677607.ts.txt?raw";
import renameDiff from "../fixtures/review/llm/hono-workerd-rename-f634c824.diff?raw";
import { errorBody, example, exampleItem, FakeGitHub } from "../support/github/fake";
import { connectGitHub } from "../support/github/tenant";
import { MODEL, ScriptedAi, withAi } from "../support/llm-stand-in";
import { call, fails, newWorld, ok } from "../support/helpers";
import { withStandIns } from "../support/env-stand-ins";

afterEach(() => vi.restoreAllMocks());

const JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJtZXNzYWdlIjoiaGVsbG8gd29ybGQifQ.B54pAqIiLbu170tGQ1rY06Twv__0qSHTA0ioQPIOvFE";
const HEAD = "29f1ed97".padEnd(40, "0");

interface ModelFinding {
  id: string;
  priority: number;
  category: string;
  file: string;
  start: number;
  end?: number;
  confidence?: number;
}
const finding = (f: ModelFinding) => ({
  id: f.id,
  title: `Finding ${f.id}`,
  body: "Why it matters.",
  confidence_score: f.confidence ?? 0.9,
  priority: f.priority,
  category: f.category,
  code_location: { file_path: f.file, line_range: { start: f.start, end: f.end ?? f.start } },
  suggestion: { description: "Guard the access.", can_auto_fix: false },
});
const review = (findings: unknown[], verdict = "needs attention") => JSON.stringify({ findings, overall_correctness: verdict, overall_explanation: "Reviewed.", overall_confidence_score: 0.8 });

/** On hono 79677607: src/request.ts changed lines 104 and 112; line 114 keeps the unguarded access. */
const requestFindings = [
  finding({ id: "F1", priority: 1, category: "correctness", file: "src/request.ts", start: 114 }),
  finding({ id: "F2", priority: 0, category: "correctness", file: "src/request.ts", start: 114 }),
  finding({ id: "F3", priority: 2, category: "style", file: "src/request.ts", start: 103, end: 105 }),
  finding({ id: "F4", priority: 3, category: "documentation", file: "src/request.ts", start: 112, confidence: 0.5 }),
  finding({ id: "F5", priority: 1, category: "maintainability", file: "src/request.test.ts", start: 42, end: 48 }),
  { id: "F6", title: "no category or location", priority: 1, confidence_score: 0.9 },
];

async function world(prefix: string, reply: (input: AiChatInput) => unknown = () => review([], "patch is correct")) {
  const w = await newWorld(prefix, { start: "2026-06-01T12:00:00.000Z" });
  const ai = new ScriptedAi(reply);
  return { w, ai, ctx: withAi(w.ctx, ai) };
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------

describe("review_changes", () => {
  it("reviews a real diff: the model's findings filtered, located against the diff, ordered and summarized", async () => {
    const { ai, ctx } = await world("rvc", () => `Here is the review:\n\`\`\`json\n${review(requestFindings)}\n\`\`\``);
    const r = await ok(ctx, "review_changes", { diff: requestDiff, base_ref: "main" });
    // F1 is off the changed lines and not P0; F4 is under the threshold; F6 is malformed.
    expect(r.findings.map((f: { id: string }) => f.id)).toEqual(["F2", "F5", "F3"]);
    expect(r.findings[0]).toMatchObject({ priority: 0, is_on_changed_line: false, code_location: { file_path: "src/request.ts", line_range: { start: 114, end: 114 } } });
    expect(r.findings[2]).toMatchObject({ id: "F3", is_on_changed_line: true, suggestion: { description: "Guard the access.", can_auto_fix: false } });
    expect(r).toMatchObject({
      overall_correctness: "needs attention",
      overall_explanation: "Reviewed.",
      overall_confidence_score: 0.8,
      changes_summary: { files_changed: 2, lines_added: 9, lines_removed: 2 },
      metadata: {
        reviewed_at: "2026-06-01T12:00:00.000Z",
        model_used: `workers-ai:${MODEL}`,
        tool_version: "1.0.0",
        findings_filtered: 2,
        confidence_threshold: 0.7,
        categories_reviewed: ["correctness", "security", "performance", "maintainability", "style", "documentation"],
      },
    });
    expect(r.metadata.warnings).toEqual(["1 finding(s) in the model's answer were malformed and left out."]);
    const [sent] = ai.inputs;
    expect(sent).toMatchObject({ response_format: { type: "json_object" }, temperature: 0 });
    expect(sent!.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(sent!.messages[1]!.content).toContain(requestDiff.trimEnd());
    expect(sent!.messages[1]!.content).toContain("(against main)");
  });

  it("applies categories, changed_lines_only, max_findings, confidence_threshold and exclude_patterns", async () => {
    const { ai, ctx } = await world("rvc-opts", () => review(requestFindings));
    const only = async (args: Record<string, unknown>) => (await ok(ctx, "review_changes", { diff: requestDiff, ...args })).findings.map((f: { id: string }) => f.id);
    expect(await only({ categories: "style, documentation" })).toEqual(["F3"]);
    expect(await only({ changed_lines_only: false })).toEqual(["F2", "F1", "F5", "F3"]);
    expect(await only({ changed_lines_only: false, max_findings: 2 })).toEqual(["F2", "F1"]);
    expect(await only({ confidence_threshold: 0.5 })).toEqual(["F2", "F5", "F3", "F4"]);
    const excluded = await ok(ctx, "review_changes", { diff: requestDiff, exclude_patterns: "*.test.ts, docs/**" });
    expect(excluded.findings.map((f: { id: string }) => f.id)).toEqual(["F2", "F3"]);
    expect(excluded.changes_summary).toEqual({ files_changed: 1, lines_added: 2, lines_removed: 2 });
    expect(excluded.metadata.warnings[0]).toBe("1 file(s) excluded by exclude_patterns: src/request.test.ts.");
    expect(ai.inputs.at(-1)!.messages[1]!.content).not.toContain("request.test.ts");
    expect(ai.inputs.at(-1)!.messages[1]!.content).toContain("diff --git a/src/request.ts b/src/request.ts");
  });

  it("never lets a secret in the diff, the file contexts or the instructions reach the model", async () => {
    const { ai, ctx } = await world("rvc-secret");
    const token = `ghp_${"A1b2C3d4E5".repeat(4)}`;
    const r = await ok(ctx, "review_changes", {
      diff: jwtDiff,
      file_contexts: JSON.stringify({ "bun_test/setup.ts": `process.env.TOKEN = "${token}"\n` }),
      custom_instructions: `Use ${token} if you must.`,
    });
    expect(ai.seen).not.toContain(JWT);
    expect(ai.seen).not.toContain(token);
    // Masked the reference's way: the first 4 characters, then asterisks.
    expect(ai.seen).toContain(`${JWT.slice(0, 4)}****`);
    expect(ai.seen).toContain("ghp_****");
    expect(ai.seen).toContain("### bun_test/setup.ts");
    expect(r.metadata.warnings).toContain("Secret-shaped text was masked before the model saw it: jwt, github-pat.");
    expect(JSON.stringify(r)).not.toContain(token);
  });

  it("an unusable answer is llm_bad_output (retryable), not a crash or an empty review", async () => {
    const answers = [
      "I could not review this.",
      '{"findings": []}',
      JSON.stringify({ findings: [], overall_correctness: "looks fine", overall_explanation: "", overall_confidence_score: 0.5 }),
      review([], "patch is correct").replace("0.8", "1.7"),
    ];
    const { ai, ctx } = await world("rvc-bad", () => answers[ai.inputs.length - 1]);
    for (const expected of ["no JSON object", "overall_correctness", "overall_correctness", "overall_confidence_score"]) {
      const err = await fails(ctx, "review_changes", { diff: etagDiff });
      expect(err).toMatchObject({ code: "llm_bad_output", retryable: true });
      expect(err.message).toContain(expected);
      expect(err.hint).toContain("LLM_MODEL");
    }
    expect(ai.inputs).toHaveLength(4);
  });

  it("answers llm_not_configured without a model, naming what to configure", async () => {
    const { w } = await world("rvc-none");
    const err = await fails(withAi(w.ctx, undefined), "review_changes", { diff: etagDiff });
    expect(err).toMatchObject({ code: "llm_not_configured", retryable: false });
    expect(err.hint).toMatch(/AI binding/);
    expect(err.hint).toMatch(/LLM_API_KEY/);
    expect(err.hint).toMatch(/LLM_BASE_URL/);
    const off = await fails({ ...withAi(w.ctx, new ScriptedAi(() => "")), env: withStandIns(w.ctx.env, { AI: new ScriptedAi(() => ""), LLM_PROVIDER: "off" }) }, "review_changes", { diff: etagDiff });
    expect(off.code).toBe("llm_not_configured");
  });

  it("refuses bad input with the reference's messages, before the model is asked", async () => {
    const { ai, ctx } = await world("rvc-input");
    const refused = async (args: Record<string, unknown>, code = "invalid_input") => {
      const err = await fails(ctx, "review_changes", args);
      expect(err.code, JSON.stringify(err)).toBe(code);
      expect(err.hint.length).toBeGreaterThan(0);
      return err;
    };
    expect((await refused({ diff: "  \n " })).message).toBe(MISSING_DIFF_MESSAGE);
    expect((await refused({ diff: "please review my code" })).message).toBe(NO_SCOPE_MESSAGE);
    expect((await refused({ diff: etagDiff, categories: "correctness,bugs" })).message).toBe(
      'Invalid category: "bugs". Valid: correctness, security, performance, maintainability, style, documentation',
    );
    expect((await refused({ diff: etagDiff, file_contexts: "{not json" })).message).toBe('Invalid "file_contexts" JSON format');
    expect((await refused({ diff: etagDiff, file_contexts: "[]" })).message).toContain("expected an object map");
    expect((await refused({ diff: etagDiff, file_contexts: '{"a.ts": 1}' })).message).toContain("all values must be strings");
    await refused({ diff: etagDiff, confidence_threshold: 1.5 });
    await refused({ diff: etagDiff, max_findings: 0 });
    await refused({ diff: etagDiff, max_findings: 101 });
    await refused({ diff: etagDiff, llm_timeout_ms: 10 });
    await refused({ diff: etagDiff, verbose: true });
    await refused({ diff: "x".repeat(1_000_001) });
    await refused({ diff: etagDiff, exclude_patterns: "src/**" }, "no_reviewable_changes");
    // Reviewing the first files of a wider diff would pass the rest off as reviewed.
    const wide = Array.from({ length: MAX_DIFF_FILES + 1 }, (_, i) => `diff --git a/f${i}.ts b/f${i}.ts`).join("\n");
    expect((await refused({ diff: wide })).message).toBe(`The diff changes more than ${MAX_DIFF_FILES} files.`);
    expect(ai.inputs).toHaveLength(0);
  });

  it("takes camelCase aliases and renders a one-line summary", async () => {
    const { ctx } = await world("rvc-alias", () => review(requestFindings));
    const r = await call(ctx, "review_changes", { diff: requestDiff, maxFindings: 1, changedLinesOnly: false });
    expect(r.findings.map((f: { id: string }) => f.id)).toEqual(["F2"]);
    const result = await callTool(findTool("review_changes")!, ctx, { diff: requestDiff });
    expect((result.content[0] as { text: string }).text.split("\n")[0]).toBe("needs attention: 3 finding(s) (P0 1, P1 1, P2 1) in 2 file(s), +9/-2.");
  });
});

// ---------------------------------------------------------------------------------------------

/** GitHub's file entries for a diff's files, as the pull request, commit and compare APIs list them. */
function githubFiles(diff: string, op: "pulls" | "compare") {
  const base =
    op === "pulls"
      ? exampleItem<Record<string, unknown>>("GET /repos/{owner}/{repo}/pulls/{pull_number}/files")
      : example<{ files: Record<string, unknown>[] }>("GET /repos/{owner}/{repo}/compare/{basehead}").files[0]!;
  return parseUnifiedDiff(diff).files.map((f) => {
    const at = f.section.indexOf("\n@@");
    const { patch: _p, previous_filename: _prev, ...rest } = base;
    const status = fileStatus(f);
    return {
      ...rest,
      filename: f.newPath,
      status: status === "deleted" ? "removed" : status,
      additions: f.additions,
      deletions: f.deletions,
      changes: f.additions + f.deletions,
      ...(at >= 0 ? { patch: f.section.slice(at + 1) } : {}),
      ...(status === "renamed" ? { previous_filename: f.oldPath } : {}),
    };
  });
}

const repoBody = (over: Record<string, unknown> = {}) => example("GET /repos/{owner}/{repo}", { default_branch: "trunk", language: "TypeScript", source: { language: "TypeScript" }, ...over });

async function gitWorld(prefix: string, reply?: (input: AiChatInput) => unknown) {
  const { w, ai, ctx } = await world(prefix, reply);
  const gh = new FakeGitHub();
  const connected = await connectGitHub(ctx, gh);
  gh.on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }))
    .on("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", () => ({ body: githubFiles(requestDiff, "pulls") }))
    .on("GET /repos/{owner}/{repo}/commits/{ref}", (req) => ({ body: example("GET /repos/{owner}/{repo}/commits/{ref}", { sha: req.path.ref, files: githubFiles(requestDiff, "compare") }) }))
    .on("GET /repos/{owner}/{repo}/compare/{basehead}", () => ({ body: example("GET /repos/{owner}/{repo}/compare/{basehead}", { files: githubFiles(requestDiff, "compare") }) }));
  return { w, ai, gh, ctx: connected };
}

describe("review_git_diff", () => {
  it("reviews a pull request: #N, pr:N and N name the same one; the diff is rebuilt from GitHub's patches", async () => {
    const { ai, gh, ctx } = await gitWorld("rgd-pr", () => review(requestFindings));
    const r = await ok(ctx, "review_git_diff", { repo: "honojs/hono", target: "#5268" });
    expect(gh.requests.map((q) => q.op)).toEqual(["GET /repos/{owner}/{repo}/pulls/{pull_number}/files"]);
    expect(gh.requests[0]!.path.pull_number).toBe("5268");
    expect(r.git_info).toEqual({
      repo: "honojs/hono",
      target: "#5268",
      resolved: "pull request #5268",
      command: "GET /repos/honojs/hono/pulls/5268/files",
      files_changed: ["src/request.test.ts", "src/request.ts"],
      stats: { additions: 9, deletions: 2, files_count: 2 },
    });
    expect(r.review.findings.map((f: { id: string }) => f.id)).toEqual(["F2", "F5", "F3"]);
    expect(r.review.changes_summary).toEqual({ files_changed: 2, lines_added: 9, lines_removed: 2 });
    // The rebuilt diff is the one git printed, less the index lines GitHub does not give.
    const rebuilt = requestDiff
      .trimEnd()
      .split("\n")
      .filter((l) => !l.startsWith("index "))
      .join("\n");
    expect(ai.inputs[0]!.messages[1]!.content).toContain(rebuilt);
    for (const target of ["pr:5268", "5268"]) {
      await ok(ctx, "review_git_diff", { repo: "honojs/hono", target });
      expect(gh.requests.at(-1)!.path.pull_number).toBe("5268");
    }
  });

  it("compares a branch with base, or with the default branch when base is absent", async () => {
    const { gh, ctx } = await gitWorld("rgd-branch");
    const r = await ok(ctx, "review_git_diff", { repo: "honojs/hono", target: "fix/unmatched-params" });
    expect(gh.requests.map((q) => q.op)).toEqual(["GET /repos/{owner}/{repo}", "GET /repos/{owner}/{repo}/compare/{basehead}"]);
    expect(gh.requests[1]!.path.basehead).toBe("trunk...fix/unmatched-params");
    expect(r.git_info).toMatchObject({ resolved: "trunk...fix/unmatched-params", command: "GET /repos/honojs/hono/compare/trunk...fix/unmatched-params" });
    const withBase = await ok(ctx, "review_git_diff", { repo: "honojs/hono", target: "fix/unmatched-params", base: "v4" });
    expect(gh.requests.at(-1)!.path.basehead).toBe("v4...fix/unmatched-params");
    expect(withBase.git_info.base).toBe("v4");
    expect(gh.count("GET /repos/{owner}/{repo}")).toBe(1);
  });

  it("reviews a commit against its parent (or base), and head as the default branch's last commit", async () => {
    const { gh, ctx } = await gitWorld("rgd-commit");
    const sha = "7967760748503b50de7c315fe3aa76666a8e6cab";
    const commit = await ok(ctx, "review_git_diff", { repo: "honojs/hono", target: sha });
    expect(gh.requests.at(-1)).toMatchObject({ op: "GET /repos/{owner}/{repo}/commits/{ref}", path: { ref: sha } });
    expect(commit.git_info).toMatchObject({ resolved: sha, command: `GET /repos/honojs/hono/commits/${sha}` });
    // hono's own short SHA is all digits: seven or more digits are a commit, fewer a pull request.
    await ok(ctx, "review_git_diff", { repo: "honojs/hono", target: "7967760" });
    expect(gh.requests.at(-1)!.path.ref).toBe("7967760");
    await ok(ctx, "review_git_diff", { repo: "honojs/hono", target: "7967760", base: "0293343d" });
    expect(gh.requests.at(-1)).toMatchObject({ op: "GET /repos/{owner}/{repo}/compare/{basehead}", path: { basehead: "0293343d...7967760" } });
    const head = await ok(ctx, "review_git_diff", { repo: "honojs/hono", target: "head" });
    expect(gh.requests.slice(-2).map((q) => [q.op, q.path.ref])).toEqual([
      ["GET /repos/{owner}/{repo}", undefined],
      ["GET /repos/{owner}/{repo}/commits/{ref}", "trunk"],
    ]);
    expect(head.git_info.resolved).toBe("HEAD");
    await ok(ctx, "review_git_diff", { repo: "honojs/hono", target: "v4.13.2...v4.13.3" });
    expect(gh.requests.at(-1)!.path.basehead).toBe("v4.13.2...v4.13.3");
  });

  it("without repo: the tenant's only registered repository; the seed's default target still answers what to pass instead", async () => {
    const { gh, ctx } = await gitWorld("rgd-default", () => review(requestFindings));
    await ok(ctx, "repo_register", { remote_url: "https://api.github.test/honojs/hono" });
    const r = await ok(ctx, "review_git_diff", { target: "#5268" });
    expect(r.git_info.repo).toBe("honojs/hono");
    expect(gh.requests[0]!.path).toMatchObject({ owner: "honojs", repo: "hono", pull_number: "5268" });
    expect((await ok(ctx, "review_auto", { target: "#5268" })).output.git_info.repo).toBe("honojs/hono");
    const staged = await fails(ctx, "review_git_diff", {});
    expect(staged.code).toBe("unsupported_target");
    expect(staged.message).toContain("'staged'");
    expect(staged.hint).toMatch(/pull request .*branch.*commit/);
  });

  it("refuses staged and unstaged (the default), and other bad targets, before GitHub or the model is asked", async () => {
    const { ai, gh, ctx } = await gitWorld("rgd-staged");
    for (const args of [{}, { target: "staged" }, { target: "unstaged" }, { target: "STAGED" }]) {
      const err = await fails(ctx, "review_git_diff", { repo: "honojs/hono", ...args });
      expect(err.code).toBe("unsupported_target");
      expect(err.hint).toContain("review_changes");
    }
    expect((await fails(ctx, "review_git_diff", { repo: "honojs/hono", target: "HEAD~1" })).code).toBe("unsafe_ref_token");
    expect((await fails(ctx, "review_git_diff", { repo: "honojs/hono", target: "main", base: "-x" })).code).toBe("unsafe_ref_token");
    expect((await fails(ctx, "review_git_diff", { repo: "honojs/hono", target: "#12", base: "main" })).code).toBe("invalid_input");
    expect((await fails(ctx, "review_git_diff", { repo: "honojs/hono", target: "head", base: "main" })).code).toBe("invalid_input");
    // No repo and none registered: refused by the default's resolution, not by the schema.
    expect((await fails(ctx, "review_git_diff", { target: "#12" })).code).toBe("repo_required");
    expect((await fails(ctx, "review_git_diff", { repo: "honojs/hono", target: "#12", options: { categories: ["bugs"] } })).code).toBe("invalid_input");
    expect((await fails(ctx, "review_git_diff", { repo: "honojs/hono", target: "#12", options: { extra: 1 } })).code).toBe("invalid_input");
    expect(gh.requests).toHaveLength(0);
    expect(ai.inputs).toHaveLength(0);
  });

  it("include_patterns keeps only matching files; an empty scope is refused, saying why", async () => {
    const { ai, gh, ctx } = await gitWorld("rgd-include");
    const r = await ok(ctx, "review_git_diff", { repo: "honojs/hono", target: "#5268", include_patterns: ["src/request.ts"], options: { changed_lines_only: false } });
    expect(r.git_info.files_changed).toEqual(["src/request.ts"]);
    expect(r.git_info.stats).toEqual({ additions: 2, deletions: 2, files_count: 1 });
    expect(ai.inputs[0]!.messages[1]!.content).not.toContain("request.test.ts");
    const none = await fails(ctx, "review_git_diff", { repo: "honojs/hono", target: "#5268", include_patterns: ["docs/**"] });
    expect(none).toMatchObject({ code: "empty_review_scope" });
    expect(none.message).toBe('No changes found for review_git_diff target "#5268". Review scope is empty (path_scope_excluded_all_changes), so review is blocked.');
    gh.on("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", () => ({ body: [] }));
    expect((await fails(ctx, "review_git_diff", { repo: "honojs/hono", target: "#1" })).message).toContain("(no_changes_for_target)");
    expect(ai.inputs).toHaveLength(1);
  });

  it("maps GitHub's answers: a missing pull request, a missing repository", async () => {
    const { gh, ctx } = await gitWorld("rgd-missing");
    gh.on("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", () => ({ status: 404, body: errorBody("Not Found") }));
    expect((await fails(ctx, "review_git_diff", { repo: "honojs/hono", target: "#999999" })).code).toBe("git_diff_failed");
    gh.on("GET /repos/{owner}/{repo}", () => ({ status: 404, body: errorBody("Not Found") }));
    expect((await fails(ctx, "review_git_diff", { repo: "honojs/gone", target: "#1" })).code).toBe("repo_not_found");
  });

  it("resolves a registered repository only within its tenant, and needs a model before it reads GitHub", async () => {
    const { w, gh, ctx } = await gitWorld("rgd-tenant");
    const registered = (await ok(ctx, "repo_register", { remote_url: "https://api.github.test/acme/api" })).repository;
    await ok(ctx, "review_git_diff", { repo: registered.id, target: "#7" });
    expect(gh.requests.at(-1)!.path).toMatchObject({ owner: "acme", repo: "api", pull_number: "7" });
    const other = await gitWorld("rgd-tenant-b");
    const before = other.gh.requests.length + gh.requests.length;
    const err = await fails(other.ctx, "review_git_diff", { repo: registered.id, target: "#7" });
    expect(err.code).toBe("invalid_repo");
    expect(other.gh.requests.length + gh.requests.length).toBe(before);
    const unconfigured = await fails(withAi(ctx, undefined), "review_git_diff", { repo: "honojs/hono", target: "#7" });
    expect(unconfigured.code).toBe("llm_not_configured");
    expect(gh.requests.length + other.gh.requests.length).toBe(before);
    expect(w.id.tenantId).not.toBe(other.w.id.tenantId);
  });
});

// ---------------------------------------------------------------------------------------------
// review_diff's LLM stage

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
      const { llmUnavailable } = await import("../../src/llm/common");
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

describe("review_auto", () => {
  it("with a diff runs review_diff; without one, review_git_diff on GitHub; tool forces either", async () => {
    const { ai, gh, ctx } = await gitWorld("rauto-pick", () => review(requestFindings));
    const byDiff = await ok(ctx, "review_auto", { diff: requestDiff });
    expect(byDiff).toMatchObject({ selected_tool: "review_diff", rationale: "diff provided -> using review_diff" });
    expect(byDiff.output).toMatchObject({ classification: expect.any(String), risk_score: expect.any(Number), stats: { files_changed: 2 } });
    expect(byDiff.skipped_steps).toBeUndefined();
    expect(ai.inputs).toHaveLength(0);
    expect(gh.requests).toHaveLength(0);

    const byGit = await ok(ctx, "review_auto", { repo: "honojs/hono", target: "#5268" });
    expect(byGit).toMatchObject({ selected_tool: "review_git_diff", rationale: "no diff provided -> using review_git_diff" });
    expect(byGit.output.git_info).toMatchObject({ resolved: "pull request #5268", files_changed: ["src/request.test.ts", "src/request.ts"] });
    expect(byGit.output.review.findings.map((f: { id: string }) => f.id)).toEqual(["F2", "F5", "F3"]);

    const forced = await ok(ctx, "review_auto", { tool: "review_git_diff", repo: "honojs/hono", target: "#5268", review_git_diff_options: { max_findings: 1 } });
    expect(forced.rationale).toBe("Forced tool: review_git_diff");
    expect(forced.output.review.findings.map((f: { id: string }) => f.id)).toEqual(["F2"]);
  });

  it("refuses arguments meant for the other tool, a forced review_diff without a diff, and a git review with no repository to default to", async () => {
    const { gh, ctx } = await gitWorld("rauto-refuse");
    const msg = async (args: Record<string, unknown>) => (await fails(ctx, "review_auto", args)).message;
    expect(await msg({ diff: requestDiff, target: "#1" })).toBe("review_diff selected; git args (target/base/include_patterns) are not applicable");
    expect(await msg({ diff: requestDiff, review_git_diff_options: { max_findings: 3 } })).toBe("review_diff selected; review_git_diff_options is not applicable");
    expect(await msg({ tool: "review_git_diff", repo: "honojs/hono", diff: requestDiff })).toBe("review_git_diff selected; diff argument is not applicable");
    expect(await msg({ repo: "honojs/hono", target: "#1", changed_files: ["a.ts"] })).toBe("review_git_diff selected; changed_files is not applicable");
    expect(await msg({ repo: "honojs/hono", target: "#1", review_diff_options: {} })).toBe("review_git_diff selected; review_diff_options is not applicable");
    expect(await msg({ tool: "review_diff" })).toBe("review_diff selected but no valid diff provided");
    expect((await fails(ctx, "review_auto", { target: "#1" })).code).toBe("repo_required");
    const bad = await fails(ctx, "review_auto", { diff: requestDiff, review_diff_options: { confidence_threshold: 2 } });
    expect(bad.code).toBe("invalid_input");
    // The seed's default target needs a working tree; the refusal is review_git_diff's own.
    expect((await fails(ctx, "review_auto", { repo: "honojs/hono" })).code).toBe("unsupported_target");
    expect(gh.requests).toHaveLength(0);
  });

  it("v2 says which review_diff stages were left off, and whether by default or by the caller", async () => {
    const { ctx } = await gitWorld("rauto-v2");
    const byDefault = await ok(ctx, "review_auto", { diff: requestDiff, response_version: "v2" });
    expect(byDefault.skipped_steps).toEqual([
      { step: "llm_pass", reason: "Skipped because review_diff options.enable_llm is disabled." },
      { step: "static_analysis", reason: "Skipped because review_diff options.enable_static_analysis is disabled." },
    ]);
    expect(byDefault.requested_by).toBe("default");
    const byUser = await ok(ctx, "review_auto", { diff: requestDiff, response_version: "v2", review_diff_options: { enable_llm: false } });
    expect(byUser.requested_by).toBe("user");
    const git = await ok(ctx, "review_auto", { repo: "honojs/hono", target: "#5268", response_version: "v2" });
    expect(git).toMatchObject({ skipped_steps: [], requested_by: "config" });
  });
});
