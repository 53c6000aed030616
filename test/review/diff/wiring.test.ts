/**
 * review_diff with the stages this server wires (src/review/pipeline/wiring.ts), through the registry:
 * invariants from inline YAML merged ahead of the deterministic findings and able to force a
 * failure, and static analysis saying plainly when it has nothing to read.
 */
import { describe, expect, it } from "vitest";
import releaseDiff from "../../fixtures/review/invariants/hono-release-oidc.diff?raw";
import honoYaml from "../../fixtures/review/invariants/hono.review-invariants.yml?raw";
import { newWorld, ok } from "../../support/helpers";

describe("review_diff", () => {
  describe("review_diff with the wired stages", () => {
    it("runs inline invariants first in the merge, and fail_on_invariant_ids forces a failure", async () => {
      const w = await newWorld("rv-wire-inv", { start: "2026-06-01T12:00:00.000Z" });
      // The release workflow of hono grants id-token: write (CI001); its actions are pinned and it publishes with provenance.
      const r = await ok(w.ctx, "review_diff", { diff: releaseDiff, invariants: honoYaml, options: { fail_on_invariant_ids: ["CI001"], fail_on_severity: "CRITICAL" } });
      // Invariants come before the deterministic findings (a workflow file is config: PRE003).
      expect(r.findings.map((f: { id: string }) => f.id)).toEqual(["CI001", "PRE003"]);
      expect(r.findings[0]).toMatchObject({ severity: "HIGH", category: "security", location: { file: ".github/workflows/release.yml" } });
      expect(r.classification).toBe("infra");
      expect(r.stats.invariants_executed).toBe(3);
      expect(r.should_fail).toBe(true);
      expect(r.fail_reasons).toEqual(["Invariant CI001 forced-fail"]);
      expect(r.metadata.warnings).toEqual([
        "Invariant DOC002 dropped: missing or empty paths (paths: a list of globs; the others strings)",
        "Invariant DOC001 has no action; skipping deterministic evaluation",
      ]);
      // Without the forced id, a HIGH finding does not trip a CRITICAL gate.
      const soft = await ok(w.ctx, "review_diff", { diff: releaseDiff, invariants: honoYaml });
      expect(soft.should_fail).toBe(false);
    });

    it("static analysis without a repository and head sha executes nothing and says why", async () => {
      const w = await newWorld("rv-wire-static", { start: "2026-06-01T12:00:00.000Z" });
      const r = await ok(w.ctx, "review_diff", { diff: releaseDiff, options: { enable_static_analysis: true } });
      expect(r.stats.static_analyzers_executed).toBe(0);
      expect(r.metadata.warnings).toEqual(["static analysis needs the repository and head_sha to read what GitHub ran; nothing was executed."]);
      expect(r.static_analysis).toMatchObject({ analyzers_requested: ["tsc"], analyzers_executed: 0 });
    });

    it("enable_llm without a configured model skips the passes with llm_not_configured; the deterministic review still answers", async () => {
      const w = await newWorld("rv-wire-llm", { start: "2026-06-01T12:00:00.000Z" });
      const env = { ...w.ctx.env, AI: undefined, LLM_API_KEY: undefined, LLM_BASE_URL: undefined };
      const r = await ok({ ...w.ctx, env }, "review_diff", { diff: releaseDiff, options: { enable_llm: true, llm_force: true } });
      expect(r.stats).toMatchObject({ llm_passes_executed: 0, llm_findings_added: 0, llm_skipped_reason: "llm_not_configured" });
      expect(r.findings.map((f: { id: string }) => f.id)).toEqual(["PRE003"]);
      expect(r.metadata.llm_model).toBeUndefined();
    });
  });
});
