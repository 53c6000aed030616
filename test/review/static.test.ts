/** run_static_analysis: what GitHub ran for a commit, as review findings. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { findingSchema } from "../../src/review/pipeline/types";
import scanning from "../fixtures/review/github/code-scanning-express.json";
import { errorBody, example, type FakeRequest } from "../support/github/fake";
import { connectGitHub } from "../support/github/tenant";
import { call, fails, newWorld, ok } from "../support/helpers";
import { ALERTS, alertList, ANNOTATIONS, checkRun, COMMIT, EXPRESS_SHA, honoTypecheck, HONO_SHA, type Json, REPO, RUNS, runsReply, setup, tscAnnotations } from "../support/static-analysis-rig";

afterEach(() => vi.restoreAllMocks());

describe("run_static_analysis", () => {
  describe("run_static_analysis: tsc from check runs", () => {
    it("maps a TypeScript check run's annotations to findings, capped and most severe first", async () => {
      const { gh, ctx } = await setup();
      honoTypecheck(gh);
      const r = await ok(ctx, "run_static_analysis", { repo: "honojs/hono" });
      expect(r.success).toBe(true);
      expect(r.analyzers).toEqual(["tsc"]);
      expect(r.findings).toHaveLength(20);
      for (const f of r.findings) expect(findingSchema.safeParse(f).success).toBe(true);
      expect(r.findings[0]).toMatchObject({
        id: "TSCTS1323-1",
        severity: "HIGH",
        category: "correctness",
        confidence: 0.95,
        location: { file: "src/jsx/context-isolation.test.ts", startLine: 35, endLine: 35 },
      });
      expect(r.findings[0].title).toBe(
        "TypeScript TS1323: Dynamic imports are only supported when the '--module' flag is set to 'es2020', 'es2022', 'esnext', 'commonjs', 'amd', 'system', 'umd', 'node16', 'node18', 'node20', or 'nodenext'.",
      );
      expect(r.findings.map((f: Json) => f.id)).toEqual(Array.from({ length: 20 }, (_, i) => `TSCTS1323-${i + 1}`));
      const tsc = r.results.find((x: Json) => x.analyzer === "tsc");
      expect(tsc).toEqual({
        analyzer: "tsc",
        included: true,
        available: true,
        sources: ["check_run:typecheck"],
        commit_sha: HONO_SHA,
        findings: 20,
        matched: 37,
        truncated: true,
      });
      // The spell checker's annotations are not TypeScript's: listed under their own name, not included.
      expect(r.results.find((x: Json) => x.analyzer === "github:mighty_readme")).toMatchObject({ included: false, available: true, findings: 0, matched: 1 });
      expect(r.findings.some((f: Json) => String(f.title).includes("spelling"))).toBe(false);
      // Only tsc was asked for: code scanning is not read.
      expect(gh.count(ALERTS)).toBe(0);
      const runsReq = gh.requests.find((q) => q.op === RUNS)!;
      expect(runsReq.path.ref).toBe(HONO_SHA);
      expect(runsReq.query).toMatchObject({ filter: "latest", per_page: "100", page: "1" });
    });

    it("recognizes tsc annotations in a job not named for TypeScript by their TS code", async () => {
      const { gh, ctx } = await setup();
      const build = checkRun("build (ubuntu-latest)", 3);
      gh.on(RUNS, () => runsReply([build]));
      const spelling = example<Json[]>(ANNOTATIONS)[0]!;
      const exitCode = { ...spelling, path: ".github", start_line: 1, end_line: 1, annotation_level: "failure", title: "", message: "Process completed with exit code 2." };
      gh.on(ANNOTATIONS, () => ({ body: [tscAnnotations()[0], spelling, exitCode] }));
      const r = await ok(ctx, "run_static_analysis", { repo: "honojs/hono", options: { analyzers: ["tsc", "github:build (ubuntu-latest)"] } });
      expect(r.findings.map((f: Json) => f.id)).toEqual(["TSCTS1323-1", "GH-build-ubuntu-latest-1"]);
      expect(r.results.find((x: Json) => x.analyzer === "tsc")).toMatchObject({ available: true, sources: ["check_run:build (ubuntu-latest)"], findings: 1 });
      const other = r.findings[1];
      expect(other).toMatchObject({ severity: "MEDIUM", category: "correctness", location: { file: "README.md", startLine: 2 } });
      expect(other.title).toBe("Spell Checker: Check your spelling for 'banaas'.");
      // The runner's note about the job's exit code is not a finding in code.
      expect(r.findings.some((f: Json) => f.location.file === ".github")).toBe(false);
    });

    it("filters by changed_files (paths normalized)", async () => {
      const { gh, ctx } = await setup();
      honoTypecheck(gh);
      const none = await ok(ctx, "run_static_analysis", { repo: "honojs/hono", changed_files: ["src/jsx/index.test.tsx", "src/jsx/components.test.tsx"] });
      expect(none.findings).toEqual([]);
      expect(none.results[0]).toMatchObject({ analyzer: "tsc", available: true, matched: 0, findings: 0, truncated: false });
      const some = await ok(ctx, "run_static_analysis", { repo: "honojs/hono", changed_files: ["./src/jsx/context-isolation.test.ts"], options: { max_findings_per_analyzer: 50 } });
      expect(some.findings).toHaveLength(37);
      expect(some.results[0]).toMatchObject({ matched: 37, findings: 37, truncated: false });
    });

    it("maps annotation levels failure, warning, notice to HIGH, MEDIUM, LOW and keeps the most severe under the cap", async () => {
      const { gh, ctx } = await setup();
      const [first, second, third] = tscAnnotations();
      gh.on(RUNS, () => runsReply([checkRun("tsc", 3)]));
      gh.on(ANNOTATIONS, () => ({
        body: [
          { ...first, annotation_level: "notice" },
          { ...second, annotation_level: "warning" },
          { ...third, annotation_level: "failure" },
        ],
      }));
      const all = await ok(ctx, "run_static_analysis", { repo: "honojs/hono" });
      expect(all.findings.map((f: Json) => [f.severity, f.location.startLine])).toEqual([
        ["HIGH", 121],
        ["MEDIUM", 102],
        ["LOW", 35],
      ]);
      const capped = await ok(ctx, "run_static_analysis", { repo: "honojs/hono", options: { max_findings_per_analyzer: 1 } });
      expect(capped.findings.map((f: Json) => f.severity)).toEqual(["HIGH"]);
      expect(capped.results[0]).toMatchObject({ matched: 3, findings: 1, truncated: true });
    });

    it("warns about a TypeScript check still running", async () => {
      const { gh, ctx } = await setup();
      gh.on(RUNS, () => runsReply([checkRun("typecheck", 0, { status: "in_progress", conclusion: null, completed_at: null })]));
      const r = await ok(ctx, "run_static_analysis", { repo: "honojs/hono" });
      expect(r.results[0]).toMatchObject({ analyzer: "tsc", available: true, findings: 0 });
      expect(r.warnings).toEqual([expect.stringContaining('check run "typecheck" is in_progress')]);
    });
  });

  describe("run_static_analysis: semgrep and other tools from code scanning", () => {
    it("maps Semgrep alerts of the ref to security findings; other tools only when asked", async () => {
      const { gh, ctx } = await setup();
      gh.on(RUNS, () => runsReply([]));
      gh.on(ALERTS, () => ({ body: alertList() }));
      const r = await ok(ctx, "run_static_analysis", { repo: "expressjs/express", ref: "master", options: { analyzers: ["semgrep"] } });
      expect(r.success).toBe(true);
      expect(gh.requests.find((q) => q.op === ALERTS)!.query).toMatchObject({ ref: "master", state: "open", per_page: "100", page: "1" });
      const rule = scanning.semgrep_alerts[0]!.rule.id;
      expect(r.findings.map((f: Json) => f.id)).toEqual([1, 2, 3].map((n) => `SEMGREP-${rule}-${n}`));
      expect(r.findings[0]).toMatchObject({
        severity: "MEDIUM",
        category: "security",
        confidence: 0.85,
        location: { file: "examples/cookies/index.js", startLine: 36, endLine: 36 },
        title: scanning.semgrep_alerts[0]!.most_recent_instance.message.text,
      });
      expect(r.findings[0].evidence[0]).toBe(`Semgrep OSS rule ${rule} (code-scanning alert #12)`);
      expect(r.results).toEqual([
        { analyzer: "semgrep", included: true, available: true, sources: ["code_scanning:Semgrep OSS"], commit_sha: EXPRESS_SHA, findings: 3, matched: 3, truncated: false },
        { analyzer: "github:CodeQL", included: false, available: true, sources: ["code_scanning:CodeQL"], commit_sha: EXPRESS_SHA, findings: 0, matched: 1, truncated: false },
      ]);

      // Named, CodeQL's open alert is included; the dismissed one never is.
      const both = await ok(ctx, "run_static_analysis", { repo: "expressjs/express", ref: "master", options: { analyzers: ["semgrep", "github:codeql"] } });
      const codeql = both.findings.filter((f: Json) => String(f.id).startsWith("CODEQL-"));
      expect(codeql).toEqual([
        expect.objectContaining({ id: "CODEQL-js/zipslip-1", severity: "HIGH", category: "security", location: { file: "spec-main/api-session-spec.ts", startLine: 917, endLine: 917 } }),
      ]);
      expect(both.analyzers).toEqual(["semgrep", "github:CodeQL"]);

      const all = await ok(ctx, "run_static_analysis", { repo: "expressjs/express", ref: "master", options: { analyzers: ["all"] } });
      expect(all.analyzers).toEqual(["semgrep", "github:CodeQL"]);
      expect(all.findings).toHaveLength(4);
    });

    it("maps code-scanning severities: security severity first, then the rule's severity; category from tags", async () => {
      const { gh, ctx } = await setup();
      gh.on(RUNS, () => runsReply([]));
      const base = example<Json[]>(ALERTS)[0]!;
      const alert = (n: number, rule: Json) => ({ ...base, number: n, rule: { ...(base.rule as Json), id: `r${n}`, ...rule } });
      gh.on(ALERTS, () => ({
        body: [
          alert(1, { security_severity_level: "critical", severity: "warning" }),
          alert(2, { security_severity_level: "low", severity: "error" }),
          alert(3, { severity: "error", tags: ["maintainability"] }),
          alert(4, { severity: "warning", tags: ["reliability", "correctness"] }),
          alert(5, { severity: "note", tags: ["performance"] }),
          alert(6, { severity: "none", tags: [] }),
        ],
      }));
      const r = await ok(ctx, "run_static_analysis", { repo: "expressjs/express", ref: "master", options: { analyzers: ["github:CodeQL"] } });
      const byRule = Object.fromEntries(r.findings.map((f: Json) => [String(f.id).split("-")[1], [f.severity, f.category]]));
      expect(byRule).toEqual({
        r1: ["CRITICAL", "security"],
        r2: ["LOW", "security"],
        r3: ["HIGH", "maintainability"],
        r4: ["MEDIUM", "correctness"],
        r5: ["LOW", "performance"],
        r6: ["INFO", "correctness"],
      });
    });

    it("reads a pull request's head check runs and its merge ref's alerts", async () => {
      const { gh, ctx } = await setup();
      const head = "9".repeat(40);
      // GitHub's example team lacks `type`, which its schema requires; a real answer has none here.
      gh.on("GET /repos/{owner}/{repo}/pulls/{pull_number}", () => ({ body: example("GET /repos/{owner}/{repo}/pulls/{pull_number}", { head: { sha: head }, requested_teams: [] }) }));
      gh.on(RUNS, () => runsReply([]));
      gh.on(ALERTS, () => ({ body: [] }));
      const r = await ok(ctx, "run_static_analysis", { repo: "expressjs/express", ref: "pull/6", options: { analyzers: ["semgrep"] } });
      expect(gh.requests.find((q) => q.op === "GET /repos/{owner}/{repo}/pulls/{pull_number}")!.path.pull_number).toBe("6");
      expect(gh.requests.find((q) => q.op === RUNS)!.path.ref).toBe(head);
      expect(gh.requests.find((q) => q.op === ALERTS)!.query.ref).toBe("refs/pull/6/merge");
      expect(r.results[0]).toMatchObject({ analyzer: "semgrep", available: false, commit_sha: head, skipped_reason: "no_github_results" });
      expect(r.warnings).toEqual([expect.stringContaining("semgrep: GitHub has no Semgrep check run or open Semgrep code-scanning alert for pull request #6")]);
    });

    it("for a bare sha keeps only the default branch's alerts last seen at that commit", async () => {
      const { gh, ctx } = await setup();
      gh.on(RUNS, () => runsReply([]));
      gh.on(ALERTS, () => ({ body: alertList() }));
      const here = await ok(ctx, "run_static_analysis", { repo: "expressjs/express", ref: EXPRESS_SHA, options: { analyzers: ["semgrep"] } });
      expect("ref" in gh.requests.find((q) => q.op === ALERTS)!.query).toBe(false);
      expect(here.findings).toHaveLength(3);
      const elsewhere = "1234567".padEnd(40, "0");
      const there = await ok(ctx, "run_static_analysis", { repo: "expressjs/express", ref: elsewhere, options: { analyzers: ["semgrep"] } });
      expect(there.findings).toEqual([]);
      expect(there.warnings.some((w: string) => w.includes(`last seen at ${EXPRESS_SHA.slice(0, 12)}, not ${elsewhere.slice(0, 12)}`))).toBe(true);
    });

    it("says semgrep_args are not applicable", async () => {
      const { gh, ctx } = await setup();
      gh.on(RUNS, () => runsReply([]));
      gh.on(ALERTS, () => ({ body: alertList() }));
      const r = await ok(ctx, "run_static_analysis", { repo: "expressjs/express", ref: "master", options: { analyzers: ["semgrep"], semgrep_args: ["--config", "p/ci"] } });
      expect(r.warnings[0]).toMatch(/semgrep_args are not applicable/);
      expect(r.findings).toHaveLength(3);
    });
  });

  describe("run_static_analysis: analyzers GitHub has nothing from", () => {
    it.each([
      [404, "no analysis found"],
      [403, "Advanced Security must be enabled for this repository to use code scanning."],
    ])("no check runs and code scanning answering %i: warnings, not a failure", async (status, message) => {
      const { gh, ctx } = await setup();
      gh.on(RUNS, () => runsReply([]));
      gh.on(ALERTS, () => ({ status, body: errorBody(message) }));
      const r = await ok(ctx, "run_static_analysis", { repo: "honojs/hono", options: { analyzers: ["tsc", "semgrep"] } });
      expect(r.success).toBe(true);
      expect(r.findings).toEqual([]);
      expect(r.results).toEqual([
        { analyzer: "tsc", included: true, available: false, sources: [], commit_sha: HONO_SHA, findings: 0, matched: 0, truncated: false, skipped_reason: "no_github_results" },
        { analyzer: "semgrep", included: true, available: false, sources: [], commit_sha: HONO_SHA, findings: 0, matched: 0, truncated: false, skipped_reason: "code_scanning_unavailable" },
      ]);
      expect(r.warnings).toEqual([
        expect.stringContaining(`code scanning is not available for honojs/hono (${message})`),
        expect.stringContaining("tsc: GitHub has no TypeScript check run or tsc annotation for main (the default branch); this server cannot run tsc itself"),
      ]);
    });

    it("a check-run list GitHub cannot serve is a warning and success false", async () => {
      const { gh, ctx } = await setup();
      gh.on(RUNS, () => ({ status: 502, body: errorBody("Bad Gateway") }));
      const r = await ok(ctx, "run_static_analysis", { repo: "honojs/hono", options: { timeout_ms: 1000 } });
      expect(r.success).toBe(false);
      expect(r.results[0]).toMatchObject({ analyzer: "tsc", available: false, skipped_reason: "incomplete" });
      expect(r.warnings[0]).toMatch(/^Check runs of main \(the default branch\) could not be read: GitHub answered 502/);
    });
  });

  describe("run_static_analysis: bounds", () => {
    it("reads at most three pages of check runs, and says so", async () => {
      const { gh, ctx } = await setup();
      gh.on(RUNS, (r: FakeRequest) =>
        runsReply(
          Array.from({ length: 100 }, (_, i) => checkRun(`job ${r.query.page}-${i}`, 0)),
          450,
        ),
      );
      const r = await ok(ctx, "run_static_analysis", { repo: "honojs/hono" });
      expect(gh.requests.filter((q) => q.op === RUNS).map((q) => q.query.page)).toEqual(["1", "2", "3"]);
      expect(r.warnings).toContain("check runs: read the first 300 of 450 for main (the default branch); the rest were not read.");
      expect(r.results.filter((x: Json) => String(x.analyzer).startsWith("github:"))).toHaveLength(300);
    });

    it("reads at most three pages of one run's annotations", async () => {
      const { gh, ctx } = await setup();
      gh.on(RUNS, () => runsReply([checkRun("typecheck", 350)]));
      const lines = tscAnnotations();
      gh.on(ANNOTATIONS, () => ({ body: Array.from({ length: 100 }, (_, i) => lines[i % lines.length]) }));
      const r = await ok(ctx, "run_static_analysis", { repo: "honojs/hono" });
      expect(gh.requests.filter((q) => q.op === ANNOTATIONS).map((q) => q.query.page)).toEqual(["1", "2", "3"]);
      expect(r.warnings).toContain('check run "typecheck": read 300 of its 350 annotations.');
      expect(r.results[0]).toMatchObject({ matched: 300, findings: 20 });
    });

    it("reads at most three pages of alerts", async () => {
      const { gh, ctx } = await setup();
      gh.on(RUNS, () => runsReply([]));
      const one = alertList()[0]!;
      gh.on(ALERTS, () => ({ body: Array.from({ length: 100 }, () => one) }));
      const r = await ok(ctx, "run_static_analysis", { repo: "expressjs/express", ref: "master", options: { analyzers: ["semgrep"], max_findings_per_analyzer: 50 } });
      expect(gh.count(ALERTS)).toBe(3);
      expect(r.warnings).toContain("code scanning: read the first 300 open alerts; later ones were not read.");
      expect(r.findings).toHaveLength(50);
      expect(r.results[0]).toMatchObject({ matched: 300, findings: 50, truncated: true });
    });

    it("stops reading at timeout_ms, keeps what it read, and reports success false", async () => {
      const { w, gh, ctx } = await setup();
      const { typecheck } = honoTypecheck(gh);
      const slow = (ms: number, reply: () => { body: unknown }) => () => {
        w.clock.advance(ms);
        return reply();
      };
      gh.on(
        RUNS,
        slow(30_000, () => runsReply([typecheck])),
      );
      gh.on(
        ANNOTATIONS,
        slow(40_000, () => ({ body: tscAnnotations() })),
      );
      gh.on(ALERTS, () => ({ body: alertList() }));
      const r = await ok(ctx, "run_static_analysis", { repo: "honojs/hono", options: { analyzers: ["tsc", "semgrep"], timeout_ms: 60_000 } });
      expect(r.success).toBe(false);
      expect(gh.count(ALERTS)).toBe(0);
      expect(r.findings).toHaveLength(20);
      expect(r.results.map((x: Json) => [x.analyzer, x.available, x.skipped_reason])).toEqual([
        ["tsc", true, undefined],
        ["semgrep", false, "incomplete"],
      ]);
      expect(r.warnings).toContain("timeout_ms (60000 ms) was reached before GitHub's results were all read; what was read is reported.");
    });
  });

  describe("run_static_analysis: errors and bad input", () => {
    it.each([
      [{ repo: "honojs/hono", options: { analyzers: ["eslint"] } }, "invalid_input"],
      [{ repo: "honojs/hono", options: { analyzers: [] } }, "invalid_input"],
      [{ repo: "honojs/hono", options: { timeout_ms: 0 } }, "invalid_input"],
      [{ repo: "honojs/hono", options: { timeout_ms: 300_001 } }, "invalid_input"],
      [{ repo: "honojs/hono", options: { max_findings_per_analyzer: 0 } }, "invalid_input"],
      [{ repo: "honojs/hono", options: { max_findings_per_analyzer: 201 } }, "invalid_input"],
      [{ repo: "honojs/hono", options: { colour: "red" } }, "invalid_input"],
      [{ repo: "honojs/hono", changed_files: ["../secrets.ts"] }, "invalid_input"],
      [{ repo: "honojs/hono", changed_files: ["--config=x"] }, "invalid_input"],
      [{ repo: "honojs/hono", changed_files: ["/etc/passwd"] }, "invalid_input"],
      [{ repo: "honojs/hono", ref: "main..dev" }, "unsafe_ref_token"],
      [{ repo: "not a repo" }, "invalid_repo"],
      [{ repo: "honojs/hono", extra: 1 }, "invalid_input"],
    ])("refuses %j before asking GitHub", async (args, code) => {
      const { gh, ctx } = await setup();
      const err = await fails(ctx, "run_static_analysis", args);
      expect(err.code).toBe(code);
      expect(err.hint.length).toBeGreaterThan(0);
      expect(gh.requests).toHaveLength(0);
    });

    it("names the bad changed_files entry as the seed does", async () => {
      const { ctx } = await setup();
      expect((await fails(ctx, "run_static_analysis", { repo: "honojs/hono", changed_files: ["src/a.ts", "../x"] })).message).toContain("changed_files[1] '../x': path traversal is not allowed");
      expect((await fails(ctx, "run_static_analysis", { repo: "honojs/hono", changed_files: ["--config"] })).message).toContain("option-like paths are not allowed");
    });

    it("answers repo_not_found and ref_not_found", async () => {
      const { gh, ctx } = await setup();
      gh.on(COMMIT, () => ({ status: 404, body: errorBody("No commit found for SHA: nope") }));
      expect((await fails(ctx, "run_static_analysis", { repo: "honojs/hono", ref: "nope" })).code).toBe("ref_not_found");
      gh.on(REPO, () => ({ status: 404, body: errorBody("Not Found") }));
      expect((await fails(ctx, "run_static_analysis", { repo: "honojs/gone" })).code).toBe("repo_not_found");
    });

    it("refuses with github_not_configured when the tenant has no credentials, and reads with each tenant's own", async () => {
      const w = await newWorld("rvstatic-none", { start: "2026-06-01T12:00:00.000Z" });
      const err = await fails(w.ctx, "run_static_analysis", { repo: "honojs/hono" });
      expect(err.code).toBe("github_not_configured");

      const a = await setup("rvstatic-a");
      honoTypecheck(a.gh);
      const b = await newWorld("rvstatic-b", { start: "2026-06-01T12:00:00.000Z" });
      const bctx = await connectGitHub(b.ctx, a.gh, "ghp_tenant_b");
      await ok(a.ctx, "run_static_analysis", { repo: "honojs/hono" });
      const seenA = a.gh.requests.length;
      await ok(bctx, "run_static_analysis", { repo: "honojs/hono" });
      const tokens = a.gh.requests.map((q) => q.headers.get("authorization"));
      expect(new Set(tokens.slice(0, seenA))).toEqual(new Set(["Bearer ghp_test_token"]));
      expect(new Set(tokens.slice(seenA))).toEqual(new Set(["Bearer ghp_tenant_b"]));
    });

    it("takes no idempotency_key (it is read-only)", async () => {
      const { ctx } = await setup();
      const r = await call(ctx, "run_static_analysis", { repo: "honojs/hono", options: { analyzers: ["tsc"] }, idempotency_key: "k" });
      expect(r.error.code).toBe("invalid_input");
    });
  });
});
