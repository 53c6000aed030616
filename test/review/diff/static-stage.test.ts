/** review_diff's static stage: the head commit's results from GitHub, filtered to the diff's files. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { staticStage } from "../../../src/review/checks/static-analysis";
import tscRun from "../../fixtures/review/github/hono-d4853a8-tsc.json";
import { newWorld } from "../../support/helpers";
import { HONO_SHA, honoTypecheck, RUNS, setup } from "../../support/static-analysis-rig";

afterEach(() => vi.restoreAllMocks());

describe("review_diff", () => {
  describe("its static stage", () => {
    it("executes nothing without a repository or head sha", async () => {
      const { gh, ctx } = await setup();
      const out = await staticStage(ctx, { changedFiles: [], analyzers: ["tsc"], timeoutMs: 60_000, maxFindingsPerAnalyzer: 20 });
      expect(out).toEqual({ findings: [], analyzersExecuted: 0, warnings: [expect.stringContaining("needs the repository and head_sha")], results: [] });
      expect(gh.requests).toHaveLength(0);
    });

    it("reads the head commit's results, filtered to the diff's files", async () => {
      const { gh, ctx } = await setup();
      honoTypecheck(gh);
      const out = await staticStage(ctx, {
        repo: { owner: "honojs", name: "hono" },
        headSha: HONO_SHA,
        changedFiles: tscRun.changed_files,
        analyzers: ["tsc"],
        timeoutMs: 60_000,
        maxFindingsPerAnalyzer: 5,
      });
      expect(out.analyzersExecuted).toBe(1);
      expect(out.findings.map((f) => f.id)).toEqual(["TSCTS1323-1", "TSCTS1323-2", "TSCTS1323-3", "TSCTS1323-4", "TSCTS1323-5"]);
      expect(gh.requests.find((q) => q.op === RUNS)!.path.ref).toBe(HONO_SHA);
    });

    it("turns missing credentials into a warning, not a failed review", async () => {
      const w = await newWorld("rvstatic-stage", { start: "2026-06-01T12:00:00.000Z" });
      const out = await staticStage(w.ctx, { repo: { owner: "honojs", name: "hono" }, headSha: HONO_SHA, changedFiles: [], analyzers: ["tsc"], timeoutMs: 60_000, maxFindingsPerAnalyzer: 20 });
      expect(out.analyzersExecuted).toBe(0);
      expect(out.warnings).toEqual([expect.stringContaining("static analysis was skipped: GitHub is not configured")]);
    });
  });
});
