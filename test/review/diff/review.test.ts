/**
 * review_diff (seed 004; seed-behaviour.md §5.3): parsing real diffs, classification (first rule
 * wins), the preflight and its risk formula, PRE001–PRE005, the merge / filter / gate order with
 * stand-in stages, per-repository settings from review_settings, validation messages, and the
 * tool over the registry with the server's own (empty) stage wiring.
 */
import { describe, expect, it } from "vitest";
import { findTool } from "../../../src/server/registry";
import { callTool } from "../../../src/core/call";
import { classifyChange } from "../../../src/review/pipeline/classify";
import { fileStatus, MAX_DIFF_FILES, MISSING_DIFF_MESSAGE, NO_SCOPE_MESSAGE, parseUnifiedDiff, toChangedFileView, type DiffFile } from "../../../src/review/unified-diff/parse";
import { failurePolicy, filterFindings, mergeFindings } from "../../../src/review/pipeline/findings";
import { rawRisk, riskScore } from "../../../src/review/pipeline/preflight";
import { reviewDiff, reviewDiffInput, type ReviewDiffRequest } from "../../../src/review/pipeline/review-diff";
import { updateReviewSettings } from "../../../src/review/settings/model";
import type { InvariantsRequest, LlmRequest, ReviewStages, StaticRequest } from "../../../src/review/pipeline/stages";
import type { Finding } from "../../../src/review/pipeline/types";
import binaryLockfile from "../../fixtures/review/diff/binary-lockfile.diff?raw";
import bugfixClient from "../../fixtures/review/diff/bugfix-client-undefined.diff?raw";
import deletedFile from "../../fixtures/review/diff/deleted-file.diff?raw";
import docsMigration from "../../fixtures/review/diff/docs-migration.diff?raw";
import expressExports from "../../fixtures/review/diff/express-exports.diff?raw";
import featureNewFiles from "../../fixtures/review/diff/feature-new-files.diff?raw";
import formatPatch from "../../fixtures/review/diff/format-patch.diff?raw";
import infraWorkflow from "../../fixtures/review/diff/infra-ci-workflow.diff?raw";
import jwtHotspot from "../../fixtures/review/diff/jwt-hotspot.diff?raw";
import newFileOnly from "../../fixtures/review/diff/new-file-only.diff?raw";
import noNewline from "../../fixtures/review/diff/no-newline.diff?raw";
import publicApiIndex from "../../fixtures/review/diff/public-api-index.diff?raw";
import refactorChurn from "../../fixtures/review/diff/refactor-churn.diff?raw";
import refactorTestsOnly from "../../fixtures/review/diff/refactor-tests-only.diff?raw";
import renameDiff from "../../fixtures/review/diff/rename.diff?raw";
import testsBugWords from "../../fixtures/review/diff/tests-bug-words.diff?raw";
import bench50 from "../../fixtures/review/diff/bench-50-files.diff?raw";
import requestIdDiff from "../../fixtures/review/invariants/hono-request-id.diff?raw";
import benchDeno from "../../fixtures/review/llm/hono-bench-deno-fbd7ed70.diff?raw";
import requestDiff from "../../fixtures/review/llm/hono-request-param-79677607.diff?raw";
import workerdRename from "../../fixtures/review/llm/hono-workerd-rename-f634c824.diff?raw";
import { call, fails, newWorld, ok, refusal, type Structured } from "../../support/helpers";

const START = "2026-11-20T12:00:00.000Z";

/** Files, lines added and removed, and binary files of each fixture, as `git apply --numstat` counts them. */
const NUMSTAT: [string, string, number, number, number, number][] = [
  ["bench-50-files", bench50, 50, 228, 114, 0],
  ["binary-lockfile", binaryLockfile, 2, 4, 4, 1],
  ["bugfix-client-undefined", bugfixClient, 2, 35, 0, 0],
  ["deleted-file", deletedFile, 1, 0, 4, 0],
  ["docs-migration", docsMigration, 1, 1, 1, 0],
  ["express-exports", expressExports, 3, 7, 0, 0],
  ["feature-new-files", featureNewFiles, 3, 43, 0, 0],
  ["format-patch", formatPatch, 1, 1, 1, 0],
  ["infra-ci-workflow", infraWorkflow, 1, 3, 0, 0],
  ["jwt-hotspot", jwtHotspot, 2, 31, 2, 0],
  ["new-file-only", newFileOnly, 1, 15, 0, 0],
  ["no-newline", noNewline, 1, 2, 2, 0],
  ["public-api-index", publicApiIndex, 1, 2, 1, 0],
  ["refactor-churn", refactorChurn, 1, 10, 10, 0],
  ["refactor-tests-only", refactorTestsOnly, 1, 1, 1, 0],
  ["rename", renameDiff, 2, 6, 8, 0],
  ["tests-bug-words", testsBugWords, 1, 6, 6, 0],
];

const addedLineNumbers = (f: DiffFile) => f.hunks.flatMap((h) => h.lines.flatMap((l) => (l.type === "add" ? [l.newLine] : [])));

describe("review_diff", () => {
  describe("parsing unified diffs", () => {
    it.each(NUMSTAT)("%s: files, lines and binary files as git apply --numstat counts them", (_name, text, files, added, removed, binary) => {
      const parsed = parseUnifiedDiff(text.trim());
      expect(parsed.files.length).toBe(files);
      expect(parsed.linesAdded).toBe(added);
      expect(parsed.linesRemoved).toBe(removed);
      expect(parsed.files.filter((f) => f.isBinary).length).toBe(binary);
    });

    it("renames, new and deleted files, and their views for the stages", () => {
      const [index, renamed] = parseUnifiedDiff(renameDiff).files;
      expect(index!.isRename).toBe(false);
      expect(renamed).toMatchObject({
        isRename: true,
        oldPath: "src/adapter/cloudflare-workers/server-static-module.ts",
        newPath: "src/adapter/cloudflare-workers/serve-static-module.ts",
      });
      expect(toChangedFileView(renamed!)).toMatchObject({
        status: "renamed",
        path: "src/adapter/cloudflare-workers/serve-static-module.ts",
        oldPath: "src/adapter/cloudflare-workers/server-static-module.ts",
        binary: false,
      });

      const [gone] = parseUnifiedDiff(deletedFile).files;
      expect(gone).toMatchObject({ isDeleted: true, isNew: false, newPath: "runtime-tests/tsconfig.json", oldPath: "runtime-tests/tsconfig.json" });
      expect(toChangedFileView(gone!)).toMatchObject({ status: "deleted", path: "runtime-tests/tsconfig.json", hunks: [{ newStart: 0, newLines: 0 }], added: [] });

      const [added] = parseUnifiedDiff(newFileOnly).files;
      const view = toChangedFileView(added!);
      expect(view).toMatchObject({ status: "added", oldPath: "", path: "src/adapter/lambda-edge/conninfo.ts", hunks: [{ newStart: 1, newLines: 15 }] });
      expect(view.added).toHaveLength(15);
      expect(view.added[0]).toBe("import type { GetConnInfo } from '../../helper/conninfo'");

      const [lockb, pkg] = parseUnifiedDiff(binaryLockfile).files.map(toChangedFileView);
      expect(lockb).toMatchObject({ path: "bun.lockb", binary: true, hunks: [] });
      expect(pkg).toMatchObject({ path: "package.json", binary: false });
    });

    it("a '\\ No newline at end of file' marker is neither a line nor the end of its hunk", () => {
      const [file] = parseUnifiedDiff(noNewline).files;
      const last = file!.hunks[1]!;
      expect(last.lines.map((l) => `${l.type}:${l.content}`)).toEqual(['context:  "engines": {', 'context:    "node": ">=16.9.0"', "context:  }", "remove:}", "add:}"]);
      expect(last.lines.at(-1)).toMatchObject({ newLine: 678 });
    });

    it("text around the diff (a commit header, a format-patch signature) is not part of it", () => {
      const express = parseUnifiedDiff(expressExports);
      expect(express.files.map((f) => f.newPath)).toEqual(["History.md", "lib/express.js", "test/exports.js"]);
      // The signature's "-- " line follows the last hunk: its line counts end the hunk before it.
      const patch = parseUnifiedDiff(formatPatch);
      expect(patch.linesRemoved).toBe(1);
      expect(patch.files[0]!.hunks[0]!.lines.at(-1)).toMatchObject({ type: "context", content: "        it('GET /foo/bar', () => {" });
    });

    it("a plain diff (no `diff --git` lines) is read from its ---/+++ headers", () => {
      const plain = featureNewFiles
        .split("\n")
        .filter((l) => !/^(diff --git|index |new file mode)/.test(l))
        .join("\n");
      const parsed = parseUnifiedDiff(plain);
      expect(parsed.files.map((f) => [f.newPath, f.isNew])).toEqual([
        ["src/adapter/lambda-edge/conninfo.test.ts", true],
        ["src/adapter/lambda-edge/conninfo.ts", true],
        ["src/adapter/lambda-edge/index.ts", false],
      ]);
      expect([parsed.linesAdded, parsed.linesRemoved]).toEqual([43, 0]);
    });

    it("CRLF line ends read as LF", () => {
      const parsed = parseUnifiedDiff(refactorChurn.replace(/\n/g, "\r\n"));
      expect(parsed.files[0]!.newPath).toBe("src/hono-base.ts");
      expect([parsed.linesAdded, parsed.linesRemoved]).toEqual([10, 10]);
    });

    it("each file's section of the text, its additions and deletions, and the new-side numbers of its added lines (review_changes)", () => {
      const renames = parseUnifiedDiff(workerdRename).files;
      expect(renames.map((f) => [f.oldPath, f.newPath, fileStatus(f), f.isBinary])).toEqual([
        ["bun.lockb", "bun.lockb", "modified", true],
        ["package.json", "package.json", "modified", false],
        ["runtime_tests/wrangler/index.test.ts", "runtime_tests/workerd/index.test.ts", "renamed", false],
        ["runtime_tests/wrangler/index.ts", "runtime_tests/workerd/index.ts", "renamed", false],
        ["runtime_tests/wrangler/vitest.config.ts", "runtime_tests/workerd/vitest.config.ts", "renamed", false],
      ]);
      const deno = parseUnifiedDiff(benchDeno).files;
      expect(deno.map((f) => [toChangedFileView(f).oldPath, f.newPath, fileStatus(f), f.additions, f.deletions])).toEqual([
        ["", "benchmarks/deno/fast.ts", "added", 20, 0],
        ["benchmarks/deno/hono-reg-exp-router.ts", "benchmarks/deno/hono-reg-exp-router.ts", "deleted", 0, 19],
        ["benchmarks/deno/hono.ts", "benchmarks/deno/hono.ts", "modified", 3, 2],
      ]);
      expect(addedLineNumbers(deno[0]!)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const request = parseUnifiedDiff(requestDiff).files;
      expect(addedLineNumbers(request[1]!)).toEqual([104, 112]);
      expect(addedLineNumbers(request[0]!)).toEqual([42, 43, 44, 45, 46, 47, 48]);
      expect(request.map((f) => f.section).join("\n")).toBe(requestDiff);
      // Text before the first file is in no section; CRLF is read as LF there too.
      const express = parseUnifiedDiff(expressExports.replace(/\n/g, "\r\n")).files;
      expect(express.map((f) => f.section).join("\n")).toBe(expressExports.slice(expressExports.indexOf("diff --git ")));
    });

    it("a plain diff (---/+++ without git's header) reads as the same files, lines and sections from its --- line", () => {
      const plain = requestDiff
        .split("\n")
        .filter((l) => !l.startsWith("diff --git ") && !l.startsWith("index "))
        .join("\n");
      const strip = (f: DiffFile) => ({
        ...f,
        section: f.section
          .split("\n")
          .filter((l) => !l.startsWith("diff --git ") && !l.startsWith("index "))
          .join("\n"),
      });
      const files = parseUnifiedDiff(plain).files;
      expect(files).toEqual(parseUnifiedDiff(requestDiff).files.map(strip));
      expect(files[0]!.section.startsWith("--- a/")).toBe(true);
    });

    it("the invariants' view: added lines per file, renames, new and deleted files, lines that look like headers", () => {
      const files = parseUnifiedDiff(requestIdDiff).files.map(toChangedFileView);
      expect(files.map((f) => f.path)).toEqual([
        "jsr.json",
        "package.json",
        "src/middleware/request-id/index.test.ts",
        "src/middleware/request-id/index.ts",
        "src/middleware/request-id/request-id.ts",
      ]);
      expect(files[3]).toMatchObject({ oldPath: "", added: expect.arrayContaining(["export { requestId } from './request-id'"]) });
      expect(files[4]!.added.length).toBe(59);
      const tricky = [
        "diff --git a/old.txt b/new.txt",
        "similarity index 90%",
        "rename from old.txt",
        "rename to new.txt",
        "--- a/old.txt",
        "+++ b/new.txt",
        "@@ -1,2 +1,3 @@",
        " keep",
        "-gone",
        "+++ not a header",
        "+diff --git a/x b/y",
        "\\ No newline at end of file",
        "diff --git a/dead.ts b/dead.ts",
        "deleted file mode 100644",
        "--- a/dead.ts",
        "+++ /dev/null",
        "@@ -1 +0,0 @@",
        "-bye",
      ].join("\n");
      const pick = ({ path, oldPath, status, added }: ReturnType<typeof toChangedFileView>) => ({ path, oldPath, status, added });
      expect(parseUnifiedDiff(tricky).files.map(toChangedFileView).map(pick)).toEqual([
        { path: "new.txt", oldPath: "old.txt", status: "renamed", added: ["++ not a header", "diff --git a/x b/y"] },
        { path: "dead.ts", oldPath: "dead.ts", status: "deleted", added: [] },
      ]);
      const plain = ["--- a/src/a.ts\t2026-01-01", "+++ b/src/a.ts\t2026-01-02", "@@ -1 +1 @@", "-x", "+y", "--- a/src/b.ts", "+++ b/src/b.ts", "@@ -0,0 +1 @@", "+z"].join("\r\n");
      expect(parseUnifiedDiff(plain).files.map(toChangedFileView).map(pick)).toEqual([
        { path: "src/a.ts", oldPath: "src/a.ts", status: "modified", added: ["y"] },
        { path: "src/b.ts", oldPath: "src/b.ts", status: "modified", added: ["z"] },
      ]);
    });

    it("quoted paths, copies, and a header that names no file", () => {
      const quoted = [
        'diff --git "a/docs/caf\\303\\251 menu.md" "b/docs/caf\\303\\251 menu.md"',
        "index 1111111..2222222 100644",
        '--- "a/docs/caf\\303\\251 menu.md"',
        '+++ "b/docs/caf\\303\\251 menu.md"',
        "@@ -1 +1 @@",
        "-a",
        "+b",
        "diff --git a/src/a.ts b/src/b.ts",
        "similarity index 100%",
        "copy from src/a.ts",
        "copy to src/b.ts",
        "diff --git ",
        "@@ -1 +1 @@",
        "-lost",
        "+lost",
      ].join("\n");
      const parsed = parseUnifiedDiff(quoted);
      expect(parsed.files.map((f) => [f.oldPath, f.newPath, fileStatus(f)])).toEqual([
        ["docs/café menu.md", "docs/café menu.md", "modified"],
        ["src/a.ts", "src/b.ts", "added"],
      ]);
      expect(toChangedFileView(parsed.files[1]!).oldPath).toBe("src/a.ts");
      // The nameless header's hunk belongs to no file, and no file's lines count it.
      expect([parsed.linesAdded, parsed.linesRemoved]).toEqual([1, 1]);
    });

    it(`refuses a diff of more than ${MAX_DIFF_FILES} files`, () => {
      const many = Array.from({ length: MAX_DIFF_FILES + 1 }, (_, i) => `diff --git a/f${i}.ts b/f${i}.ts`).join("\n");
      expect(() => parseUnifiedDiff(many)).toThrow(`more than ${MAX_DIFF_FILES} files`);
      expect(parseUnifiedDiff(many.split("\n").slice(0, MAX_DIFF_FILES).join("\n")).files).toHaveLength(MAX_DIFF_FILES);
    });
  });

  describe("classification (first match wins)", () => {
    it.each([
      ["docs: every path is documentation", docsMigration, "docs"],
      ["infra: infra paths are at least half", infraWorkflow, "infra"],
      ["infra: package.json beside a binary lockfile (1 of 2)", binaryLockfile, "infra"],
      ["feature: a new non-doc file", featureNewFiles, "feature"],
      ["bugfix: added lines name undefined", bugfixClient, "bugfix"],
      ["refactor: only tests", refactorTestsOnly, "refactor"],
      ["refactor: 20 lines of churn, evenly both ways", refactorChurn, "refactor"],
      ["feature: nothing else matched", publicApiIndex, "feature"],
      ["feature: nothing else matched (a deleted config file)", deletedFile, "feature"],
    ])("%s", (_what, text, expected) => {
      expect(classifyChange(parseUnifiedDiff(text))).toBe(expected);
    });

    it("earlier rules win over later ones", () => {
      // infra (2 of 3 paths) before feature (a new file).
      expect(classifyChange(parseUnifiedDiff([infraWorkflow, noNewline, newFileOnly].join("\n")))).toBe("infra");
      // feature (a new file) before bugfix (added lines name undefined).
      expect(classifyChange(parseUnifiedDiff([newFileOnly, bugfixClient].join("\n")))).toBe("feature");
      // bugfix (added lines name an error) before refactor (only tests).
      expect(classifyChange(parseUnifiedDiff(testsBugWords))).toBe("bugfix");
      // docs needs every path: one code file among docs is not docs.
      expect(classifyChange(parseUnifiedDiff([docsMigration, refactorChurn].join("\n")))).toBe("refactor");
    });

    it("no files at all is a refactor", () => {
      expect(classifyChange({ files: [], linesAdded: 0, linesRemoved: 0 })).toBe("refactor");
    });
  });

  describe("risk formula", () => {
    it("rounds up and holds the score to 1–5", () => {
      const none = { filesChanged: 1, hotspots: 0, publicApiChanged: false, configChanged: false, testsTouched: true };
      expect(rawRisk(none)).toBe(1);
      expect(rawRisk({ ...none, publicApiChanged: true })).toBe(2.5);
      expect(riskScore(2.5)).toBe(3);
      expect(riskScore(2)).toBe(2);
      expect(riskScore(0.2)).toBe(1);
      expect(rawRisk({ filesChanged: 11, hotspots: 6, publicApiChanged: true, configChanged: true, testsTouched: false })).toBe(8);
      expect(riskScore(8)).toBe(5);
    });
  });

  // ---------------------------------------------------------------------------------------------
  // The pipeline, with stand-in stages

  const request = (diff: string, over: Partial<Record<string, unknown>> = {}): ReviewDiffRequest => reviewDiffInput.parse({ diff, ...over });

  function finding(id: string, severity: Finding["severity"], over: Partial<Finding> = {}): Finding {
    return {
      id,
      severity,
      category: "correctness",
      confidence: 0.9,
      title: `${id} title`,
      location: { file: "src/hono-base.ts", startLine: 3, endLine: 4 },
      evidence: [`${id} evidence`],
      impact: "impact",
      recommendation: "recommendation",
      ...over,
    };
  }

  async function world(prefix = "rvdiff") {
    return newWorld(prefix, { start: START });
  }

  describe("preflight findings and scores on real diffs", () => {
    const cases: [string, string, { classification: string; risk: number; ids: string[]; hotspots?: string[]; summary?: string }][] = [
      ["docs", docsMigration, { classification: "docs", risk: 2, ids: [], summary: "Classified as docs. Risk 2/5. 1 files changed (+1/-1). 0 deterministic findings." }],
      ["infra workflow", infraWorkflow, { classification: "infra", risk: 3, ids: ["PRE003"] }],
      ["bugfix with tests", bugfixClient, { classification: "bugfix", risk: 1, ids: [] }],
      ["refactor without tests", refactorChurn, { classification: "refactor", risk: 2, ids: ["PRE001"] }],
      // raw 1 + 1.5 (exports) = 2.5, rounded up to 3.
      ["new files with tests and exports", featureNewFiles, { classification: "feature", risk: 3, ids: ["PRE002"] }],
      ["src/index.ts", publicApiIndex, { classification: "feature", risk: 4, ids: ["PRE001", "PRE002"] }],
      ["exports. lines (CommonJS)", expressExports, { classification: "feature", risk: 4, ids: ["PRE001", "PRE002"] }],
      ["binary lockfile and package.json", binaryLockfile, { classification: "infra", risk: 3, ids: ["PRE003", "PRE004"] }],
      [
        "jwt hotspot with tests",
        jwtHotspot,
        {
          classification: "feature",
          risk: 2,
          ids: ["PRE005"],
          hotspots: ["auth"],
          summary: "Classified as feature. Risk 2/5. 2 files changed (+31/-2). 1 deterministic findings. Hotspots: auth.",
        },
      ],
    ];

    it.each(cases)("%s", async (_what, diff, expected) => {
      const w = await world();
      const r = await reviewDiff(w.ctx, request(diff), {});
      expect(r.classification).toBe(expected.classification);
      expect(r.risk_score).toBe(expected.risk);
      expect(r.findings.map((f) => f.id)).toEqual(expected.ids);
      expect(r.hotspots).toEqual(expected.hotspots ?? []);
      if (expected.summary) expect(r.summary).toBe(expected.summary);
      expect(r.should_fail).toBe(false);
      expect(r.metadata.warnings).toEqual([]);
    });

    it("each PRE finding: severity, category, confidence, located at the first changed file, lines 1–1", async () => {
      const w = await world();
      const all = [
        ...(await reviewDiff(w.ctx, request(publicApiIndex), {})).findings,
        ...(await reviewDiff(w.ctx, request(binaryLockfile), {})).findings,
        ...(await reviewDiff(w.ctx, request(jwtHotspot), {})).findings,
      ];
      const byId = Object.fromEntries(all.map((f) => [f.id, f]));
      expect(Object.keys(byId).sort()).toEqual(["PRE001", "PRE002", "PRE003", "PRE004", "PRE005"]);
      expect(byId.PRE001).toMatchObject({
        severity: "MEDIUM",
        category: "reliability",
        confidence: 0.95,
        location: { file: "src/index.ts", startLine: 1, endLine: 1 },
        evidence: ["changed_files: src/index.ts"],
      });
      expect(byId.PRE002).toMatchObject({ severity: "HIGH", category: "architecture", confidence: 0.9, location: { file: "src/index.ts", startLine: 1, endLine: 1 } });
      expect(byId.PRE003).toMatchObject({ severity: "MEDIUM", category: "infra", confidence: 0.9, location: { file: "bun.lockb", startLine: 1, endLine: 1 }, evidence: ["hotspots: (none)"] });
      expect(byId.PRE004).toMatchObject({ severity: "LOW", category: "maintainability", confidence: 0.85, location: { file: "bun.lockb", startLine: 1, endLine: 1 } });
      expect(byId.PRE005).toMatchObject({
        severity: "INFO",
        category: "maintainability",
        confidence: 0.9,
        location: { file: "src/middleware/jwt/index.test.ts", startLine: 1, endLine: 1 },
        evidence: ["hotspots: auth"],
      });
      for (const f of all) expect(f.title.length).toBeGreaterThan(0);
    });

    it("PRE001 lists at most 10 changed files", async () => {
      const w = await world();
      const paths = Array.from({ length: 12 }, (_, i) => `lib/m${i}.js`);
      const r = await reviewDiff(w.ctx, request(refactorChurn, { changed_files: paths }), {});
      expect(r.findings[0]!.evidence).toEqual([`changed_files: ${paths.slice(0, 10).join(", ")}, ...`]);
    });

    it("risk: 10 files vs 11, every hotspot id, and the clamp at 5", async () => {
      const w = await world();
      const tests = (n: number) => Array.from({ length: n }, (_, i) => `tests/t${i}.ts`);
      expect((await reviewDiff(w.ctx, request(refactorChurn, { changed_files: tests(10) }), {})).risk_score).toBe(1);
      expect((await reviewDiff(w.ctx, request(refactorChurn, { changed_files: tests(11) }), {})).risk_score).toBe(2);
      const worst = await reviewDiff(
        w.ctx,
        request(refactorChurn, {
          changed_files: ["src/mcp/server.ts", "src/reactive/a.ts", "src/internal/b.ts", "src/http/c.ts", "lib/OAuth/d.ts", "lib/tls", "src/index.ts", "package.json", "x/1.ts", "x/2.ts", "x/3.ts"],
        }),
        {},
      );
      expect(worst.hotspots).toEqual(["auth", "security", "src/http", "src/internal", "src/mcp", "src/reactive"]);
      expect(worst.risk_score).toBe(5);
      expect(worst.findings.map((f) => f.id)).toEqual(["PRE001", "PRE002", "PRE003", "PRE005"]);
      // A segment must be the whole name: crypto.ts and authors/ are not hotspots.
      expect((await reviewDiff(w.ctx, request(refactorChurn, { changed_files: ["src/utils/crypto.ts", "authors/x.md", "src/mcpx/y.ts"] }), {})).hotspots).toEqual([]);
    });

    it("changed_files replace the diff's paths for the preflight; classification still reads the diff", async () => {
      const w = await world();
      const r = await reviewDiff(w.ctx, request(docsMigration, { changed_files: ["./src\\app.ts", "src/a/../b.ts"] }), {});
      expect(r.classification).toBe("docs");
      expect(r.stats.files_changed).toBe(2);
      expect(r.summary).toContain("2 files changed (+1/-1)");
      // Docs and infra never get PRE001: the class is from the diff.
      expect(r.findings.map((f) => f.id)).toEqual([]);
      const pre = await reviewDiff(w.ctx, request(refactorChurn, { changed_files: ["./src\\app.ts", "src/a/../b.ts"] }), {});
      expect(pre.findings[0]!.evidence).toEqual(["changed_files: src/app.ts, src/b.ts"]);
    });
  });

  describe("merge, filter, cap and gate", () => {
    it("merges invariants, static analysis, LLM, then the preflight; the first of an id wins", () => {
      const merged = mergeFindings({
        invariants: [finding("X", "HIGH"), finding("DUP", "HIGH", { title: "from invariants" })],
        staticAnalysis: [finding("DUP", "LOW", { title: "from static" }), finding("S1", "MEDIUM")],
        llm: [finding("PRE001", "CRITICAL", { title: "from llm" }), finding("S1", "LOW", { title: "llm's S1" })],
        deterministic: [finding("PRE001", "MEDIUM", { title: "from preflight" }), finding("PRE005", "INFO")],
      });
      expect(merged.map((f) => `${f.id}:${f.title}`)).toEqual(["X:X title", "DUP:from invariants", "S1:S1 title", "PRE001:from llm", "PRE005:PRE005 title"]);
    });

    it("confidence (≥ threshold), then categories, then the allowlist, then the cap", () => {
      const merged = [
        finding("A", "HIGH", { confidence: 0.55 }),
        finding("B", "HIGH", { confidence: 0.5499 }),
        finding("C", "LOW", { category: "security" }),
        finding("D", "LOW"),
        finding("E", "LOW"),
      ];
      expect(filterFindings(merged, { confidenceThreshold: 0.55, maxFindings: 20 }).filtered.map((f) => f.id)).toEqual(["A", "C", "D", "E"]);
      expect(filterFindings(merged, { confidenceThreshold: 0.55, categories: ["security"], maxFindings: 20 }).filtered.map((f) => f.id)).toEqual(["C"]);
      expect(filterFindings(merged, { confidenceThreshold: 0.55, categories: [], maxFindings: 20 }).filtered).toHaveLength(4);
      const r = filterFindings(merged, { confidenceThreshold: 0.55, allowlistFindingIds: ["D", ""], maxFindings: 2 });
      expect(r.filtered.map((f) => f.id)).toEqual(["A", "C", "E"]);
      expect(r.findings.map((f) => f.id)).toEqual(["A", "C"]);
      expect(filterFindings(merged, { confidenceThreshold: 0, maxFindings: 0 }).findings).toEqual([]);
    });

    it("the gate: forced ids first, then severity at or above the threshold; at most 20 reasons", () => {
      const list = [finding("INV1", "LOW"), finding("H", "HIGH", { title: "high one" }), finding("C", "CRITICAL", { title: "critical one" }), finding("I", "INFO")];
      expect(failurePolicy(list, "CRITICAL", [])).toEqual({ shouldFail: true, reasons: ["CRITICAL C: critical one"] });
      expect(failurePolicy(list, "HIGH", ["INV1", ""])).toEqual({ shouldFail: true, reasons: ["Invariant INV1 forced-fail", "HIGH H: high one", "CRITICAL C: critical one"] });
      expect(failurePolicy(list, "INFO", ["C"]).reasons).toEqual(["LOW INV1: INV1 title", "HIGH H: high one", "Invariant C forced-fail", "INFO I: I title"]);
      expect(failurePolicy([finding("I", "INFO")], "LOW", [])).toEqual({ shouldFail: false, reasons: [] });
      const many = Array.from({ length: 25 }, (_, i) => finding(`C${i}`, "CRITICAL"));
      expect(failurePolicy(many, "CRITICAL", []).reasons).toHaveLength(20);
    });

    it("in the pipeline: stage order, dedupe, filters, and should_fail on the list before the cap", async () => {
      const w = await world();
      const stages: ReviewStages = {
        invariants: async () => ({
          findings: [finding("INV-1", "LOW", { title: "from invariants" }), finding("DUP", "HIGH", { title: "dup from invariants" })],
          executed: 2,
          warnings: ["inv warning"],
          promptText: "rules",
        }),
        staticAnalysis: async () => ({
          findings: [finding("DUP", "LOW", { title: "dup from static" }), finding("TS2345", "MEDIUM", { category: "correctness" })],
          analyzersExecuted: 1,
          warnings: ["static warning"],
          results: [{ analyzer: "tsc" }],
        }),
        llm: async () => ({
          findings: [finding("PRE001", "CRITICAL", { title: "llm took PRE001" }), finding("LLM-low", "LOW", { confidence: 0.3 })],
          passesExecuted: 2,
          model: "test-model",
          warnings: ["llm warning"],
          timings: { contextFetch: 0, secretsScrub: 0, structural: 0, detailed: 0 },
        }),
      };
      const r = await reviewDiff(
        w.ctx,
        request(refactorChurn, {
          invariants: "x: []",
          options: { enable_static_analysis: true, enable_llm: true, max_findings: 2, fail_on_invariant_ids: ["INV-1"] },
        }),
        stages,
      );
      expect(r.findings.map((f) => `${f.id}:${f.title}`)).toEqual(["INV-1:from invariants", "DUP:dup from invariants"]);
      // PRE001 (the LLM's CRITICAL) is past the cap but still fails the gate; LLM-low fell under the threshold.
      expect(r.fail_reasons).toEqual(["Invariant INV-1 forced-fail", "CRITICAL PRE001: llm took PRE001"]);
      expect(r.should_fail).toBe(true);
      expect(r.metadata.warnings).toEqual(["inv warning", "static warning", "llm warning"]);
      expect(r.metadata.llm_model).toBe("test-model");
      expect(r.stats).toMatchObject({ invariants_executed: 2, static_analyzers_executed: 1, llm_passes_executed: 2, llm_findings_added: 2 });
      expect(r.stats.llm_skipped_reason).toBeUndefined();
      expect(r.static_analysis).toEqual({ analyzers_requested: ["tsc"], analyzers_executed: 1, warnings: ["static warning"], results: [{ analyzer: "tsc" }] });
      expect(r.summary).toContain("2 deterministic findings.");

      const allowed = await reviewDiff(
        w.ctx,
        request(refactorChurn, {
          invariants: "x: []",
          options: { enable_static_analysis: true, enable_llm: true, allowlist_finding_ids: ["PRE001", "INV-1"], categories: ["correctness"] },
        }),
        stages,
      );
      expect(allowed.findings.map((f) => f.id)).toEqual(["DUP", "TS2345"]);
      expect(allowed.fail_reasons).toEqual([]);
      expect(allowed.should_fail).toBe(false);
    });

    it("fail_reasons stop at 20 while findings stop at max_findings", async () => {
      const w = await world();
      const r = await reviewDiff(w.ctx, request(refactorChurn, { options: { enable_llm: true, max_findings: 3 } }), {
        llm: async () => ({
          findings: Array.from({ length: 25 }, (_, i) => finding(`L${i}`, "CRITICAL")),
          passesExecuted: 1,
          warnings: [],
          timings: { contextFetch: 0, secretsScrub: 0, structural: 0, detailed: 0 },
        }),
      });
      expect(r.findings).toHaveLength(3);
      expect(r.fail_reasons).toHaveLength(20);
      expect(r.fail_reasons[19]).toBe("CRITICAL L19: L19 title");
    });
  });

  describe("the optional stages", () => {
    interface Seen {
      invariants: InvariantsRequest[];
      static: StaticRequest[];
      llm: LlmRequest[];
    }
    function recording(): { stages: ReviewStages; seen: Seen } {
      const seen: Seen = { invariants: [], static: [], llm: [] };
      return {
        seen,
        stages: {
          invariants: async (_ctx, req) => (seen.invariants.push(req), { findings: [], executed: 1, warnings: [], promptText: "security:\n- [no-eval] (HIGH/security) no eval" }),
          staticAnalysis: async (_ctx, req) => (seen.static.push(req), { findings: [], analyzersExecuted: 0, warnings: [], results: [] }),
          llm: async (_ctx, req) => (
            seen.llm.push(req),
            { findings: [], passesExecuted: 0, skippedReason: "noise_gate_low_risk", warnings: [], timings: { contextFetch: 0, secretsScrub: 0, structural: 0, detailed: 0 } }
          ),
        },
      };
    }

    it("run only when asked: invariants with repo or invariants, static analysis and the LLM when enabled", async () => {
      const w = await world();
      const { stages, seen } = recording();
      await reviewDiff(w.ctx, request(refactorChurn), stages);
      expect([seen.invariants.length, seen.static.length, seen.llm.length]).toEqual([0, 0, 0]);
      const r = await reviewDiff(w.ctx, request(refactorChurn, { options: { invariants_path: "rules.yml" } }), stages);
      expect(seen.invariants).toHaveLength(0);
      expect(r.metadata.warnings).toEqual(["invariants_path was given without repo or invariants, so there is nothing to read it from; skipping invariants"]);

      await reviewDiff(
        w.ctx,
        request(featureNewFiles, {
          repo: "honojs/hono",
          head_sha: "4a4e851d5004848c6713800b8dab6fd9829d4208",
          base_sha: "main",
          options: {
            enable_static_analysis: true,
            static_analyzers: ["tsc", "semgrep"],
            static_analysis_timeout_ms: 5000,
            static_analysis_max_findings_per_analyzer: 7,
            enable_llm: true,
            llm_force: true,
            two_pass: false,
            risk_threshold: 4,
            token_budget: 1000,
            max_context_files: 2,
            custom_instructions: "be brief",
            llm_timeout_ms: 9000,
          },
        }),
        stages,
      );
      expect(seen.invariants).toHaveLength(1);
      const inv = seen.invariants[0]!;
      expect(inv).toMatchObject({
        repo: { owner: "honojs", name: "hono" },
        headSha: "4a4e851d5004848c6713800b8dab6fd9829d4208",
        invariantsPath: ".review-invariants.yml",
        changedFiles: ["src/adapter/lambda-edge/conninfo.test.ts", "src/adapter/lambda-edge/conninfo.ts", "src/adapter/lambda-edge/index.ts"],
      });
      expect(inv.yaml).toBeUndefined();
      expect(inv.files.map((f) => f.status)).toEqual(["added", "added", "modified"]);
      expect(seen.static[0]).toEqual({
        repo: { owner: "honojs", name: "hono" },
        headSha: "4a4e851d5004848c6713800b8dab6fd9829d4208",
        changedFiles: inv.changedFiles,
        analyzers: ["tsc", "semgrep"],
        timeoutMs: 5000,
        maxFindingsPerAnalyzer: 7,
      });
      const llm = seen.llm[0]!;
      expect(llm).toMatchObject({
        riskScore: 3,
        testsTouched: true,
        classification: "feature",
        hotspots: [],
        invariantsForPrompt: "security:\n- [no-eval] (HIGH/security) no eval",
        options: { llmForce: true, twoPass: false, riskThreshold: 4, tokenBudget: 1000, maxContextFiles: 2, customInstructions: "be brief", timeoutMs: 9000 },
      });
      expect(llm.diff).toBe(featureNewFiles.trim());
      expect(llm.files).toEqual(inv.files);

      await reviewDiff(w.ctx, request(refactorChurn, { invariants: "quality:\n  - id: no-todo\n", options: { invariants_path: "custom/inv.yml" } }), stages);
      expect(seen.invariants[1]).toMatchObject({ yaml: "quality:\n  - id: no-todo\n", invariantsPath: "custom/inv.yml", repo: undefined });
    });

    it("the LLM's skipped reason and the stages' timings are reported; duration covers them", async () => {
      const w = await world();
      let now = 1000;
      const stages: ReviewStages = {
        invariants: async () => ((now += 7), { findings: [], executed: 3, warnings: [], promptText: "" }),
        staticAnalysis: async () => ((now += 11), { findings: [], analyzersExecuted: 1, warnings: [], results: [] }),
        llm: async () => ((now += 30), { findings: [], passesExecuted: 2, warnings: [], model: "m", timings: { contextFetch: 4, secretsScrub: 1, structural: 15, detailed: 10 } }),
      };
      const r = await reviewDiff(w.ctx, request(refactorChurn, { invariants: "a: []", options: { enable_static_analysis: true, enable_llm: true } }), stages, () => now);
      expect(r.stats.timings_ms).toEqual({ preflight: 0, invariants: 7, static_analysis: 11, context_fetch: 4, secrets_scrub: 1, llm_structural: 15, llm_detailed: 10 });
      expect(r.stats.duration_ms).toBe(48);

      let ticks = 0;
      const ticking = await reviewDiff(w.ctx, request(refactorChurn), {}, () => ticks++);
      // Two timed pieces of the preflight (parsing; classifying and checking), one tick each.
      expect(ticking.stats.timings_ms.preflight).toBe(2);

      const { stages: rec } = recording();
      const skipped = await reviewDiff(w.ctx, request(refactorChurn, { options: { enable_llm: true } }), rec);
      expect(skipped.stats.llm_skipped_reason).toBe("noise_gate_low_risk");
    });

    it("a failing invariants stage becomes a warning; the review goes on", async () => {
      const w = await world();
      const r = await reviewDiff(w.ctx, request(refactorChurn, { invariants: "a: [" }), {
        invariants: async () => {
          throw new Error("bad YAML at line 1");
        },
      });
      expect(r.metadata.warnings).toHaveLength(1);
      expect(r.metadata.warnings[0]).toMatch(/^Failed to load\/run invariants: /);
      // An unexpected error's own text stays inside the server.
      expect(r.metadata.warnings[0]).not.toContain("bad YAML");
      expect(r.findings.map((f) => f.id)).toEqual(["PRE001"]);
    });
  });

  describe("per-repository review settings", () => {
    it("hotspot and config globs replace the defaults; the invariants path comes from the settings; other tenants keep the defaults", async () => {
      const w = await world("rvset");
      await updateReviewSettings(w.ctx, "Octo/Shop", {
        hotspots: [
          { id: "billing", paths: ["src/billing/**"] },
          { id: "edge", paths: ["**/*.worker.ts"] },
        ],
        configPaths: ["deploy/**", "**/Dockerfile"],
        invariantsPath: "policy/invariants.yml",
      });
      const changed = ["src/Billing/invoice.ts", "src/mcp/server.ts", ".github/workflows/ci.yml", "deploy/prod.toml", "edge/api.worker.ts", "tests/a.test.ts"];
      const seen: InvariantsRequest[] = [];
      const stages: ReviewStages = { invariants: async (_c, req) => (seen.push(req), { findings: [], executed: 0, warnings: [], promptText: "" }) };

      const r = await reviewDiff(w.ctx, request(refactorChurn, { repo: "octo/shop", changed_files: changed }), stages);
      expect(r.hotspots).toEqual(["billing", "edge"]);
      expect(r.findings.map((f) => f.id)).toEqual(["PRE003", "PRE005"]);
      expect(seen[0]!.invariantsPath).toBe("policy/invariants.yml");
      // raw 1 + 2 × 0.5 (hotspots) + 0.5 (config) = 2.5 → 3
      expect(r.risk_score).toBe(3);

      const noConfig = await reviewDiff(w.ctx, request(refactorChurn, { repo: "octo/shop", changed_files: [".github/workflows/ci.yml", "package.json", "tests/a.test.ts"] }), stages);
      expect(noConfig.findings.map((f) => f.id)).toEqual([]);
      const dockerfile = await reviewDiff(w.ctx, request(refactorChurn, { repo: "octo/shop", changed_files: ["ops/dockerfile", "tests/a.test.ts"] }), stages);
      expect(dockerfile.findings.map((f) => f.id)).toEqual(["PRE003"]);
      // Globs mean what they say, as the defaults do: without a globstar, a name is the root's only.
      await updateReviewSettings(w.ctx, "octo/shop", { hotspots: [{ id: "edge", paths: ["*.worker.ts"] }], configPaths: ["Dockerfile"] });
      const rooted = await reviewDiff(w.ctx, request(refactorChurn, { repo: "octo/shop", changed_files: ["ops/dockerfile", "edge/api.worker.ts", "tests/a.test.ts"] }), stages);
      expect(rooted.findings.map((f) => f.id)).toEqual([]);
      expect(rooted.hotspots).toEqual([]);
      const atRoot = await reviewDiff(w.ctx, request(refactorChurn, { repo: "octo/shop", changed_files: ["Dockerfile", "api.worker.ts", "tests/a.test.ts"] }), stages);
      expect(atRoot.hotspots).toEqual(["edge"]);
      expect(atRoot.findings.map((f) => f.id)).toEqual(["PRE003", "PRE005"]);
      await updateReviewSettings(w.ctx, "octo/shop", {
        hotspots: [
          { id: "billing", paths: ["src/billing/**"] },
          { id: "edge", paths: ["**/*.worker.ts"] },
        ],
        configPaths: ["deploy/**", "**/Dockerfile"],
      });

      const option = await reviewDiff(w.ctx, request(refactorChurn, { repo: "octo/shop", options: { invariants_path: "other.yml" } }), stages);
      expect(seen.at(-1)!.invariantsPath).toBe("other.yml");
      expect(option.hotspots).toEqual([]);

      const other = await world("rvset-other");
      const theirs = await reviewDiff(other.ctx, request(refactorChurn, { repo: "octo/shop", changed_files: changed }), stages);
      expect(theirs.hotspots).toEqual(["src/mcp"]);
      expect(theirs.findings.map((f) => f.id)).toEqual(["PRE003", "PRE005"]);
      expect(seen.at(-1)!.invariantsPath).toBe(".review-invariants.yml");
    });

    it("a repository that is neither owner/name nor registered is refused before anything runs", async () => {
      const w = await world();
      let ran = false;
      const err = await refusal(
        reviewDiff(w.ctx, request(refactorChurn, { repo: "not a repo" }), { invariants: async () => ((ran = true), { findings: [], executed: 0, warnings: [], promptText: "" }) }),
      );
      expect(err.code).toBe("invalid_repo");
      expect(ran).toBe(false);
    });
  });

  // ---------------------------------------------------------------------------------------------
  // The tool over the registry

  describe("review_diff over the registry", () => {
    it("answers with the seed's result and a text summary", async () => {
      const w = await world();
      const r = await ok(w.ctx, "review_diff", { diff: publicApiIndex, options: { include_markdown: true } });
      expect(r.run_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(r).toMatchObject({ ok: true, classification: "feature", risk_score: 4, should_fail: false, fail_reasons: [], hotspots: [] });
      expect(r.metadata).toMatchObject({ reviewed_at: START, tool_version: "1.9.0", warnings: [] });
      expect(r.metadata.llm_model).toBeUndefined();
      expect(r.stats).toEqual({
        files_changed: 1,
        lines_added: 2,
        lines_removed: 1,
        duration_ms: expect.any(Number),
        deterministic_checks_executed: 6,
        invariants_executed: 0,
        static_analyzers_executed: 0,
        llm_passes_executed: 0,
        llm_findings_added: 0,
        timings_ms: { preflight: expect.any(Number), invariants: 0, static_analysis: 0, context_fetch: 0, secrets_scrub: 0, llm_structural: 0, llm_detailed: 0 },
      });
      expect(r.static_analysis).toBeUndefined();
      expect(r.markdown).toContain("## Code Review Summary");
      expect(r.sarif).toBeUndefined();

      const raw = await callTool(findTool("review_diff")!, w.ctx, { diff: publicApiIndex, options: { fail_on_severity: "HIGH" } });
      const text = (raw.content as { type: string; text: string }[])[0]!.text;
      expect(text.split("\n")).toEqual([
        "Classified as feature. Risk 4/5. 1 files changed (+2/-1). 2 deterministic findings.",
        "CI gate: FAIL (1 reason)",
        "- MEDIUM PRE001 (reliability) src/index.ts:1: No tests appear to be touched by this change",
        "- HIGH PRE002 (architecture) src/index.ts:1: Possible public API surface change detected",
      ]);
      expect((raw.structuredContent as Structured).fail_reasons).toEqual(["HIGH PRE002: Possible public API surface change detected"]);
    });

    it("camelCase aliases and defaults", async () => {
      const w = await world();
      const r = await ok(w.ctx, "review_diff", { diff: refactorChurn, changedFiles: ["src/hono-base.ts"], options: { maxFindings: 0, failOnSeverity: "MEDIUM" } });
      expect(r.findings).toEqual([]);
      expect(r.fail_reasons).toEqual(["MEDIUM PRE001: No tests appear to be touched by this change"]);
    });

    it("the seed's validation messages", async () => {
      const w = await world();
      for (const diff of [undefined, "", "   \n\t ", 42, null]) {
        const err = await fails(w.ctx, "review_diff", diff === undefined ? {} : { diff });
        expect(err.code).toBe("invalid_input");
        expect(err.message).toContain(MISSING_DIFF_MESSAGE);
      }
      const scope = await fails(w.ctx, "review_diff", { diff: "Please review my change to the router." });
      expect(scope).toMatchObject({ code: "invalid_input", message: NO_SCOPE_MESSAGE });
      expect(scope.hint.length).toBeGreaterThan(0);
      // Shaped like a diff (a hunk) but no file: reviewable, with nothing changed.
      const bare = await ok(w.ctx, "review_diff", { diff: "notes\n@@ -1 +1 @@\n-a\n+b" });
      expect(bare).toMatchObject({ classification: "refactor", risk_score: 2, stats: { files_changed: 0 } });
      expect(bare.findings[0].location.file).toBe("(multiple files)");
      // changed_files make prose reviewable.
      expect((await ok(w.ctx, "review_diff", { diff: "prose", changed_files: ["src/a.ts"] })).stats.files_changed).toBe(1);

      const bad: [unknown, string][] = [
        [["--config"], "Invalid changed_files[0]: option-like paths are not allowed."],
        [["src/a.ts", "../secrets.txt"], "Invalid changed_files[1]: path traversal is not allowed."],
        [["src/../../x"], "Invalid changed_files[0]: path traversal is not allowed."],
        [["/etc/passwd"], "Invalid changed_files[0]: absolute or drive-qualified paths are not allowed. Use paths relative to the workspace."],
        [["C:\\repo\\a.ts"], "Invalid changed_files[0]: absolute or drive-qualified paths are not allowed. Use paths relative to the workspace."],
        [["  "], "Invalid changed_files[0]: path must not be empty."],
        [["a\nb"], "Invalid changed_files[0]: path contains control characters."],
        [["./."], "Invalid changed_files[0]: path must reference a file or nested workspace path."],
      ];
      for (const [changed, message] of bad) {
        const err = await fails(w.ctx, "review_diff", { diff: refactorChurn, changed_files: changed });
        expect(err).toMatchObject({ code: "invalid_input", message });
        expect(err.hint.length).toBeGreaterThan(0);
      }
    });

    it("bounds and strict options", async () => {
      const w = await world();
      const refused: [Record<string, unknown>, string][] = [
        [{ diff: refactorChurn, options: { confidence_threshold: 1.5 } }, "options.confidence_threshold"],
        [{ diff: refactorChurn, options: { max_findings: -1 } }, "options.max_findings"],
        [{ diff: refactorChurn, options: { risk_threshold: 6 } }, "options.risk_threshold"],
        [{ diff: refactorChurn, options: { llm_timeout_ms: 999 } }, "options.llm_timeout_ms"],
        [{ diff: refactorChurn, options: { fail_on_severity: "BLOCKER" } }, "options.fail_on_severity"],
        [{ diff: refactorChurn, options: { static_analyzers: ["eslint"] } }, "options.static_analyzers"],
        [{ diff: refactorChurn, options: { categories: ["vibes"] } }, "options.categories"],
        [{ diff: refactorChurn, options: { invariants_path: "../outside.yml" } }, "options.invariants_path"],
        [{ diff: refactorChurn, head_sha: "main..evil" }, "head_sha"],
        [{ diff: refactorChurn, base_sha: "-x" }, "base_sha"],
        [{ diff: "x".repeat(1_000_001) }, "diff: is longer than 1,000,000 characters"],
        [{ diff: refactorChurn, changed_files: Array.from({ length: 3001 }, (_, i) => `f${i}`) }, "changed_files"],
      ];
      for (const [args, where] of refused) {
        const err = await fails(w.ctx, "review_diff", args);
        expect(err.code, JSON.stringify(args).slice(0, 80)).toBe("invalid_input");
        expect(err.message).toContain(where);
      }
      const unknown = await fails(w.ctx, "review_diff", { diff: refactorChurn, options: { enable_llms: true } });
      expect(unknown.message).toContain("Unknown parameter in options: enable_llms");
      expect(unknown.hint).toContain("confidence_threshold");
      const top = await fails(w.ctx, "review_diff", { diff: refactorChurn, background: true });
      expect(top.message).toContain("Unknown parameter: background");
    });

    it("semgrep_args are accepted and say they are ignored", async () => {
      const w = await world();
      const r = await call(w.ctx, "review_diff", { diff: refactorChurn, options: { semgrep_args: ["--config", "p/ci"] } });
      expect(r.metadata.warnings).toEqual([]);
      const on = await call(w.ctx, "review_diff", { diff: refactorChurn, options: { enable_static_analysis: true, static_analyzers: ["semgrep"], semgrep_args: ["--config", "p/ci"] } });
      expect(on.metadata.warnings[0]).toBe("semgrep_args are ignored: analyzers are not run here; their results are read from GitHub");
      expect(on.static_analysis.analyzers_requested).toEqual(["semgrep"]);
    });

    it("reviews the 50-file diff", async () => {
      const w = await world();
      const r = await ok(w.ctx, "review_diff", { diff: bench50 });
      expect(r.stats).toMatchObject({ files_changed: 50, lines_added: 228, lines_removed: 114 });
      // 50 files (> 10) + exports + the jwt hotspot + no tests: 1 + 1 + 0.5 + 1.5 + 1 = 5.
      expect(r).toMatchObject({ risk_score: 5, hotspots: ["auth"] });
      expect(r.findings.map((f: Finding) => f.id)).toEqual(["PRE001", "PRE002", "PRE005"]);
    });
  });

  describe("secrets on added lines (the detector scrub_secrets uses)", () => {
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    const diff = [
      "diff --git a/src/config.ts b/src/config.ts",
      "--- a/src/config.ts",
      "+++ b/src/config.ts",
      "@@ -10,3 +10,5 @@ export const config = {",
      '   region: "eu",',
      "+  retries: 3,",
      `+  githubToken: "${token}",`,
      "   timeoutMs: 5000,",
      "-  debug: true,",
      " };",
      "",
    ].join("\n");

    it("finds the ghp_ token scrub_secrets finds, at the line the diff adds, masked, and fails the gate", async () => {
      const w = await world("rvsecret");
      const scrubbed = await ok(w.ctx, "scrub_secrets", { content: `  githubToken: "${token}",` });
      const rule = (scrubbed.detected_types as { pattern: string }[])[0]!.pattern;
      const r = await ok(w.ctx, "review_diff", { diff });
      const secrets = (r.findings as Finding[]).filter((f) => f.id.startsWith("SEC001"));
      expect(secrets).toEqual([
        expect.objectContaining({
          id: `SEC001:${rule}:src/config.ts:12`,
          severity: "CRITICAL",
          category: "security",
          location: { file: "src/config.ts", startLine: 12, endLine: 12 },
        }),
      ]);
      expect(JSON.stringify(r)).not.toContain(token);
      expect(secrets[0]!.evidence[0]).toContain("ghp_");
      expect(r.should_fail).toBe(true);
      expect((r.stats as Structured).deterministic_checks_executed).toBe(6);
    });

    it("does not flag a removed secret or a diff without one", async () => {
      const w = await world("rvsecret");
      const removed = diff.replace(`+  githubToken: "${token}",`, `-  githubToken: "${token}",`).replace("+10,5", "+10,3");
      expect((await reviewDiff(w.ctx, request(removed), {})).findings.filter((f) => f.id.startsWith("SEC001"))).toEqual([]);
      expect((await reviewDiff(w.ctx, request(bugfixClient), {})).findings).toEqual([]);
    });
  });
});
