/** review_diff's invariants stage, over real diffs of honojs/hono: inline YAML, or the repository's file at the head commit. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseUnifiedDiff, toChangedFileView } from "../../../src/review/unified-diff/parse";
import { invariantsStage } from "../../../src/review/checks/invariants";
import { updateReviewSettings } from "../../../src/review/settings/model";
import releaseDiff from "../../fixtures/review/invariants/hono-release-oidc.diff?raw";
import requestIdDiff from "../../fixtures/review/invariants/hono-request-id.diff?raw";
import honoYaml from "../../fixtures/review/invariants/hono.review-invariants.yml?raw";
import { errorBody } from "../../support/github/fake";
import { ok } from "../../support/helpers";
import { fileBody, REPO, repoBody, setup, SHA } from "../../support/invariants-rig";

afterEach(() => vi.restoreAllMocks());

/** A diff's files as review_diff hands them to the invariants stage. */
const viewsOf = (diff: string) => parseUnifiedDiff(diff).files.map(toChangedFileView);

describe("review_diff", () => {
  describe("its invariants stage", () => {
    it("runs inline YAML over the files review_diff parsed, with the prompt text", async () => {
      const { ctx } = await setup();
      const files = viewsOf(releaseDiff);
      const r = await invariantsStage(ctx, { files, changedFiles: files.map((f) => f.path), invariantsPath: ".review-invariants.yml", yaml: honoYaml });
      expect(r.executed).toBe(3);
      expect(r.findings.map((f) => f.id)).toEqual(["CI001"]);
      expect(r.warnings).toEqual([
        "Invariant DOC002 dropped: missing or empty paths (paths: a list of globs; the others strings)",
        "Invariant DOC001 has no action; skipping deterministic evaluation",
      ]);
      expect(r.promptText.split("\n")).toEqual([
        "ci:",
        "- [CI001] (HIGH/security) Workflows must not grant id-token: write",
        "- [CI002] (MEDIUM/security) Actions used by workflows are pinned to a full commit SHA",
        "- [CI003] (HIGH/security) npm publish carries provenance",
        "",
        "middleware:",
        "- [MW001] (LOW/maintainability) A middleware's index re-exports its implementation module",
        "- [MW002] (MEDIUM/correctness) Request ids are not made with Math.random()",
        "- [MW003] (LOW/style) No console.log in middleware sources",
        "",
        "docs:",
        "- [DOC001] (INFO/documentation) Middleware docs link to the website",
      ]);
    });

    it("reads the repository's file at the head commit; a missing file or GitHub refusing is a warning, not a failed review", async () => {
      const { gh, ctx } = await setup();
      let answer: () => { status?: number; body: unknown } = () => ({ body: fileBody(honoYaml) });
      gh.on("GET /repos/{owner}/{repo}/contents/{path}", () => answer()).on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }));
      const files = viewsOf(requestIdDiff);
      const req = { files, changedFiles: files.map((f) => f.path), repo: { owner: "octocat", name: "Hello-World" }, headSha: SHA, invariantsPath: ".review-invariants.yml" };
      const r = await invariantsStage(ctx, req);
      expect(r).toMatchObject({ executed: 6, findings: [expect.objectContaining({ id: "MW003" })] });
      expect(gh.requests[0]!.query).toEqual({ ref: SHA });
      answer = () => ({ status: 404, body: errorBody("Not Found") });
      expect(await invariantsStage(ctx, req)).toEqual({
        findings: [],
        executed: 0,
        promptText: "",
        warnings: [`Failed to load/run invariants: Error: Invariants file not found: ${REPO}:.review-invariants.yml@${SHA}`],
      });
      answer = () => ({ status: 401, body: errorBody("Bad credentials") });
      const denied = await invariantsStage(ctx, req);
      expect(denied.warnings[0]).toMatch(/^Failed to load\/run invariants: /);
      expect(await invariantsStage(ctx, { ...req, invariantsPath: "../x.yml" })).toMatchObject({
        warnings: ["Failed to load/run invariants: Error: Invalid invariants_path: path traversal is not allowed."],
      });
      expect(await invariantsStage(ctx, { ...req, repo: undefined })).toEqual({ findings: [], executed: 0, warnings: [], promptText: "" });
      // At the default path, no file means no invariants; anything else there is still worth a warning.
      const byDefault = { ...req, invariantsPathIsDefault: true };
      answer = () => ({ status: 404, body: errorBody("Not Found") });
      expect(await invariantsStage(ctx, byDefault)).toEqual({ findings: [], executed: 0, warnings: [], promptText: "" });
      answer = () => ({ body: [fileBody("x: []")] });
      expect((await invariantsStage(ctx, byDefault)).warnings).toEqual([`Failed to load/run invariants: Error: Invariants file not found: ${REPO}:.review-invariants.yml@${SHA} is a directory`]);
      answer = () => ({ status: 401, body: errorBody("Bad credentials") });
      expect((await invariantsStage(ctx, byDefault)).warnings[0]).toMatch(/^Failed to load\/run invariants: /);
    });

    it("review_diff: a repository without an invariants file is silent at the default path, and warned about at a chosen one", async () => {
      const { gh, ctx } = await setup("inv-default");
      gh.on("GET /repos/{owner}/{repo}/contents/{path}", () => ({ status: 404, body: errorBody("Not Found") })).on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }));
      const review = async (options: Record<string, unknown> = {}) => {
        const r = await ok(ctx, "review_diff", { diff: requestIdDiff, repo: REPO, head_sha: SHA, options });
        expect(r.stats.invariants_executed).toBe(0);
        return r.metadata.warnings as string[];
      };
      const missing = (path: string) => [`Failed to load/run invariants: Error: Invariants file not found: ${REPO}:${path}@${SHA}`];

      expect(await review()).toEqual([]);
      expect(gh.requests.filter((r) => r.path.path === ".review-invariants.yml")).toHaveLength(1);
      expect(await review({ invariants_path: ".review-invariants.yml" })).toEqual(missing(".review-invariants.yml"));
      // A settings row that leaves the path alone (only reactive review turned on) keeps it the default.
      await updateReviewSettings(ctx, REPO, { reactive: true });
      expect(await review()).toEqual([]);
      await updateReviewSettings(ctx, REPO, { invariantsPath: "policy/invariants.yml" });
      expect(await review()).toEqual(missing("policy/invariants.yml"));
    });
  });
});
