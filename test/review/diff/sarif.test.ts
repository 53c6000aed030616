/**
 * review_diff's outputs: the SARIF 2.1.0 log, validated against OASIS's published schema
 * (vendored in test/fixtures/review, see its README) with @cfworker/json-schema, and the
 * GitHub-flavoured markdown summary.
 */
import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { reviewMarkdown } from "../../../src/review/pipeline/markdown";
import { reviewDiff, reviewDiffInput } from "../../../src/review/pipeline/review-diff";
import { FINGERPRINT_KEY, SARIF_SCHEMA_URI, toSarif } from "../../../src/review/pipeline/sarif";
import type { ReviewStages } from "../../../src/review/pipeline/stages";
import type { Finding } from "../../../src/review/pipeline/types";
import binaryLockfile from "../../fixtures/review/diff/binary-lockfile.diff?raw";
import jwtHotspot from "../../fixtures/review/diff/jwt-hotspot.diff?raw";
import publicApiIndex from "../../fixtures/review/diff/public-api-index.diff?raw";
import refactorChurn from "../../fixtures/review/diff/refactor-churn.diff?raw";
import schemaText from "../../fixtures/review/sarif-schema-2.1.0.json?raw";
import { newWorld, ok } from "../../support/helpers";

const schema = JSON.parse(schemaText) as Record<string, unknown>;
const validator = new Validator(schema, "4", false);

function sarifErrors(log: unknown): string[] {
  const r = validator.validate(log);
  return r.errors.map((e) => `${e.instanceLocation}: ${e.error}`);
}

function finding(id: string, severity: Finding["severity"], over: Partial<Finding> = {}): Finding {
  return {
    id,
    severity,
    category: "security",
    confidence: 0.9,
    title: `${id} title`,
    location: { file: "src/app.ts", startLine: 10, endLine: 12 },
    evidence: ["evidence"],
    impact: "impact",
    recommendation: "recommendation",
    ...over,
  };
}

const llmWith = (findings: Finding[]): ReviewStages => ({
  llm: async () => ({ findings, passesExecuted: 1, model: "m", warnings: [], timings: { contextFetch: 0, secretsScrub: 0, structural: 0, detailed: 0 } }),
});

type Log = { $schema: string; version: string; runs: Record<string, any>[] };

describe("review_diff", () => {
  describe("SARIF 2.1.0", () => {
    it("the validator is not vacuous: the schema refuses broken logs", () => {
      expect(sarifErrors({ version: "2.1.0", runs: [] })).toEqual([]);
      expect(sarifErrors({ version: "2.0.0", runs: [] }).length).toBeGreaterThan(0);
      expect(sarifErrors({ version: "2.1.0", runs: [{ tool: { driver: {} }, results: [] }] }).length).toBeGreaterThan(0);
      expect(sarifErrors({ version: "2.1.0", runs: [{ tool: { driver: { name: "x" } }, results: [{ message: { text: "m" }, level: "fatal" }] }] }).length).toBeGreaterThan(0);
    });

    it.each([
      ["public API change", publicApiIndex],
      ["binary and config", binaryLockfile],
      ["hotspot", jwtHotspot],
    ])("a review's log is valid (%s), one result per finding", async (_what, diff) => {
      const w = await newWorld("rvsarif", { start: "2026-11-20T12:00:00.000Z" });
      const r = await ok(w.ctx, "review_diff", { diff, options: { include_sarif: true } });
      expect(sarifErrors(r.sarif)).toEqual([]);
      const log = r.sarif as Log;
      expect(log.$schema).toBe(SARIF_SCHEMA_URI);
      expect(log.version).toBe("2.1.0");
      expect(log.runs).toHaveLength(1);
      const run = log.runs[0]!;
      expect(run.tool.driver).toMatchObject({ name: "agent-ledger-review", version: "1.9.0" });
      expect(run.automationDetails).toEqual({ id: `review_diff/${r.run_id}`, guid: r.run_id });
      expect(run.results.map((x: { ruleId: string }) => x.ruleId)).toEqual(r.findings.map((f: Finding) => f.id));
      expect(run.versionControlProvenance).toBeUndefined();
    });

    it("levels, rules, regions, URIs and fingerprints", async () => {
      const w = await newWorld("rvsarif", { start: "2026-11-20T12:00:00.000Z" });
      const findings = [
        finding("semgrep/js eval: no-eval", "CRITICAL", { location: { file: "src/my dir/a#b.ts", startLine: 0 } }),
        finding("TS2345", "HIGH"),
        finding("INV-1", "MEDIUM", { category: "architecture" }),
        finding("L1", "LOW"),
        finding("semgrep/js_eval:_no-eval", "INFO", { title: "same rule id once sanitized" }),
      ];
      const r = await reviewDiff(
        w.ctx,
        reviewDiffInput.parse({
          diff: refactorChurn,
          repo: "honojs/hono",
          head_sha: "61bee9f65115771c307519a1dee1281365850b45",
          options: { enable_llm: true, include_sarif: true, allowlist_finding_ids: ["PRE001"] },
        }),
        llmWith(findings),
      );
      expect(sarifErrors(r.sarif)).toEqual([]);
      const run = (r.sarif as Log).runs[0]!;
      expect(run.results.map((x: { level: string }) => x.level)).toEqual(["error", "error", "warning", "note", "note"]);
      // Two ids that sanitize alike share one rule.
      expect(run.tool.driver.rules.map((x: { id: string }) => x.id)).toEqual(["semgrep_js_eval__no-eval", "TS2345", "INV-1", "L1"]);
      expect(run.results.map((x: { ruleIndex: number }) => x.ruleIndex)).toEqual([0, 1, 2, 3, 0]);
      expect(run.tool.driver.rules[2]).toMatchObject({
        shortDescription: { text: "INV-1 title" },
        fullDescription: { text: "recommendation" },
        defaultConfiguration: { level: "warning" },
        properties: { category: "architecture", severity: "MEDIUM", confidence: 0.9 },
      });
      const first = run.results[0];
      expect(first.locations[0].physicalLocation).toEqual({ artifactLocation: { uri: "src/my%20dir/a%23b.ts", uriBaseId: "%SRCROOT%" }, region: { startLine: 1, endLine: 1 } });
      expect(run.results[1].locations[0].physicalLocation.region).toEqual({ startLine: 10, endLine: 12 });
      expect(first.message.text).toBe("semgrep/js eval: no-eval title\n\nImpact: impact\n\nRecommendation: recommendation");
      expect(first.properties).toMatchObject({ id: "semgrep/js eval: no-eval", severity: "CRITICAL" });
      expect(run.versionControlProvenance).toEqual([{ repositoryUri: "https://github.com/honojs/hono", revisionId: "61bee9f65115771c307519a1dee1281365850b45" }]);

      const prints = run.results.map((x: { partialFingerprints: Record<string, string> }) => x.partialFingerprints[FINGERPRINT_KEY]);
      expect(new Set(prints).size).toBe(5);
      for (const p of prints) expect(p).toMatch(/^[0-9a-f]{32}$/);
      // The same finding moved down the file keeps its fingerprint; in another file it does not.
      const moved = await toSarif({
        findings: [finding("TS2345", "HIGH", { location: { file: "src/app.ts", startLine: 40, endLine: 41 } }), finding("TS2345", "HIGH", { location: { file: "src/other.ts", startLine: 10 } })],
        runId: r.run_id,
        toolVersion: "1.9.0",
      });
      const movedPrints = (moved as Log).runs[0]!.results.map((x: { partialFingerprints: Record<string, string> }) => x.partialFingerprints[FINGERPRINT_KEY]);
      expect(movedPrints[0]).toBe(prints[1]);
      expect(movedPrints[1]).not.toBe(prints[1]);
      expect(sarifErrors(moved)).toEqual([]);
    });

    it("a review with no findings is a valid log with no results", async () => {
      const log = await toSarif({ findings: [], runId: "0190a1b2-c3d4-4e5f-8a9b-0c1d2e3f4a5b", toolVersion: "1.9.0" });
      expect(sarifErrors(log)).toEqual([]);
      expect((log as Log).runs[0]!.results).toEqual([]);
      expect((log as Log).runs[0]!.tool.driver.rules).toEqual([]);
    });
  });

  describe("markdown", () => {
    const base = { risk_score: 4, classification: "feature" as const, hotspots: ["auth", "src/mcp"], summary: "Classified as feature. Risk 4/5.", should_fail: false, fail_reasons: [] };

    it("the summary, findings by severity, and the gate's reasons", async () => {
      const w = await newWorld("rvmd", { start: "2026-11-20T12:00:00.000Z" });
      const r = await ok(w.ctx, "review_diff", { diff: publicApiIndex, options: { include_markdown: true, fail_on_severity: "HIGH" } });
      expect(r.markdown.split("\n")).toEqual([
        "## Code Review Summary",
        "",
        "- Risk: **4/5**",
        "- Classification: **feature**",
        "- CI gate: **FAIL**",
        "",
        "Classified as feature. Risk 4/5. 1 files changed (+2/-1). 2 deterministic findings.",
        "",
        "## Findings",
        "",
        "- **HIGH** `PRE002` (architecture) at `src/index.ts:1`: Possible public API surface change detected",
        "- **MEDIUM** `PRE001` (reliability) at `src/index.ts:1`: No tests appear to be touched by this change",
        "",
        "## CI Gate Reasons",
        "",
        "- HIGH PRE002: Possible public API surface change detected",
      ]);
    });

    it("hotspots, no findings, escaping, backticks, and the 20-finding limit", () => {
      const empty = reviewMarkdown({ ...base, findings: [] });
      expect(empty).toContain("- Hotspots: `auth`, `src/mcp`");
      expect(empty).toContain("- CI gate: **PASS**");
      expect(empty.endsWith("No findings.")).toBe(true);

      const odd = reviewMarkdown({ ...base, findings: [finding("x`y", "LOW", { title: "<script>alert(1)</script> & co", location: { file: "`tick`.ts", startLine: 2 } })] });
      expect(odd).toContain("- **LOW** ``x`y`` (security) at `` `tick`.ts:2 ``: &lt;script&gt;alert(1)&lt;/script&gt; &amp; co");

      const many = Array.from({ length: 23 }, (_, i) => finding(`F${i}`, i === 22 ? "CRITICAL" : "INFO"));
      const md = reviewMarkdown({ ...base, findings: many, should_fail: true, fail_reasons: ["CRITICAL F22: F22 title"] });
      const listed = md.split("\n").filter((l) => l.startsWith("- **"));
      expect(listed).toHaveLength(20);
      expect(listed[0]).toContain("`F22`");
      expect(listed[1]).toContain("`F0`");
      expect(md).toContain("(Showing first 20 of 23 findings.)");
      expect(md.endsWith("## CI Gate Reasons\n\n- CRITICAL F22: F22 title")).toBe(true);
    });
  });
});
