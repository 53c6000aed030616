/**
 * Seed 004's review tools take no repository (they run in one workspace): here `repo` defaults to
 * the caller's run's repository, else the tenant's only registered one, and is refused naming the
 * candidates when that is ambiguous.
 */
import { describe, expect, it } from "vitest";
import releaseDiff from "../../fixtures/review/invariants/hono-release-oidc.diff?raw";
import honoYaml from "../../fixtures/review/invariants/hono.review-invariants.yml?raw";
import { fails, ok } from "../../support/helpers";
import { fileBody, setup as connectedWorld } from "../../support/invariants-rig";
import { inSession } from "../../support/run-helpers";

/** A world on the fake GitHub, whose repositories all hold hono's invariants file. */
async function setup(prefix: string) {
  const { gh, ctx } = await connectedWorld(prefix);
  gh.on("GET /repos/{owner}/{repo}/contents/{path}", (req) => ({ body: fileBody(honoYaml, req.path.path ?? "") }));
  return { gh, ctx };
}

/** Each repo-taking tool's arguments without repo. */
const WITHOUT_REPO: Record<string, Record<string, unknown>> = {
  reactive_review_pr: { commit_hash: "0123456789abcdef0123456789abcdef01234567", base_ref: "main", changed_files: "src/a.ts" },
  run_static_analysis: {},
  check_invariants: { diff: releaseDiff },
};
// review_git_diff (and review_auto through it) takes repo the same way, but refuses without a model
// before any repository is looked at, so it has no refusal here.

/** The two refusals every repo-taking tool gives when there is no single repository to default to. */
function refusesWhenNoDefault(tool: string) {
  const args = WITHOUT_REPO[tool]!;
  it("with no registered repository: repo_required, pointing at repo_register, and nothing is asked of GitHub", async () => {
    const { gh, ctx } = await setup("rdef-none");
    const err = await fails(ctx, tool, args);
    expect(err.code, tool).toBe("repo_required");
    expect(err.hint, tool).toContain("repo_register");
    expect(gh.requests).toHaveLength(0);
  });

  it("with several: refused naming every candidate as owner/name", async () => {
    const { gh, ctx } = await setup("rdef-many");
    for (const name of ["web", "api"]) await ok(ctx, "repo_register", { remote_url: `https://api.github.test/acme/${name}` });
    const err = await fails(ctx, tool, args);
    expect(err.code, tool).toBe("repo_required");
    expect(err.message, tool).toContain("2 registered repositories");
    expect(err.hint, tool).toContain("acme/api, acme/web");
    expect(gh.requests).toHaveLength(0);
  });
}

describe("repoOrDefault", () => {
  describe("reactive_review_pr", () => refusesWhenNoDefault("reactive_review_pr"));

  describe("run_static_analysis", () => refusesWhenNoDefault("run_static_analysis"));

  describe("check_invariants", () => {
    refusesWhenNoDefault("check_invariants");

    it("with one: that one (check_invariants reads its invariants file)", async () => {
      const { gh, ctx } = await setup("rdef-one");
      await ok(ctx, "repo_register", { remote_url: "https://api.github.test/acme/api" });
      const r = await ok(ctx, "check_invariants", { diff: releaseDiff });
      expect(r.success).toBe(true);
      expect(r.checked_invariants).toBeGreaterThan(0);
      expect(gh.requests[0]).toMatchObject({ op: "GET /repos/{owner}/{repo}/contents/{path}", path: { owner: "acme", repo: "api", path: ".review-invariants.yml" } });
    });

    it("the caller's run's repository wins over the ambiguity", async () => {
      const { gh, ctx } = await setup("rdef-run");
      for (const name of ["web", "api"]) await ok(ctx, "repo_register", { remote_url: `https://api.github.test/acme/${name}` });
      const s = await inSession(ctx);
      await ok(s, "run_heartbeat", { repository_id: "acme/web" });
      const r = await ok(s, "check_invariants", { diff: releaseDiff });
      expect(r.success).toBe(true);
      expect(gh.requests[0]!.path).toMatchObject({ owner: "acme", repo: "web" });
      // An explicit repo still wins over the run's.
      await ok(s, "check_invariants", { diff: releaseDiff, repo: "acme/api" });
      expect(gh.requests.at(-1)!.path).toMatchObject({ owner: "acme", repo: "api" });
    });
  });
});
