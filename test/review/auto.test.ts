/**
 * review_auto (seed 004): review_diff for a diff, review_git_diff on GitHub otherwise, on real
 * diffs (test/fixtures/review/llm). The model is a Workers AI stand-in whose answers the test
 * scripts; GitHub is the fake that checks every request against GitHub's OpenAPI description.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import requestDiff from "../fixtures/review/llm/hono-request-param-79677607.diff?raw";
import { fails, ok } from "../support/helpers";
import { gitWorld, requestFindings, review } from "../support/review-llm-rig";

afterEach(() => vi.restoreAllMocks());

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
