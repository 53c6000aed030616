/**
 * The language-model review tools (seed 004 §8–9), review_changes and review_git_diff, on real
 * diffs (test/fixtures/review/llm). The model is a stand-in: a Workers AI binding whose answers the
 * test scripts, chosen through completionModel as in production. GitHub is the fake that checks
 * every request against GitHub's OpenAPI description.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { MAX_DIFF_FILES, MISSING_DIFF_MESSAGE, NO_SCOPE_MESSAGE } from "../../src/review/unified-diff/parse";
import etagDiff from "../fixtures/review/llm/hono-etag-f8b7847d.diff?raw";
import jwtDiff from "../fixtures/review/llm/hono-jwt-bun-1749f6a9.diff?raw";
import requestDiff from "../fixtures/review/llm/hono-request-param-79677607.diff?raw";
import { errorBody } from "../support/github/fake";
import { MODEL, ScriptedAi, withAi } from "../support/llm-stand-in";
import { call, fails, ok } from "../support/helpers";
import { withStandIns } from "../support/env-stand-ins";
import { gitWorld, JWT, requestFindings, review, world } from "../support/review-llm-rig";

afterEach(() => vi.restoreAllMocks());

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
