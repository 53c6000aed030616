/** check_invariants over real diffs of honojs/hono. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_DIFF_FILES } from "../../src/review/unified-diff/parse";
import { MAX_INVARIANTS, normalizeRepoPath } from "../../src/review/checks/invariants";
import { updateReviewSettings } from "../../src/review/settings/model";
import type { Ctx } from "../../src/core/context";
import releaseDiff from "../fixtures/review/invariants/hono-release-oidc.diff?raw";
import requestIdDiff from "../fixtures/review/invariants/hono-request-id.diff?raw";
import websocketDiff from "../fixtures/review/invariants/hono-websocket-refactor.diff?raw";
import honoYaml from "../fixtures/review/invariants/hono.review-invariants.yml?raw";
import { errorBody, example } from "../support/github/fake";
import { fails, newWorld, ok } from "../support/helpers";
import { fileBody, REPO, repoBody, setup, SHA } from "../support/invariants-rig";
import { findTool } from "../../src/server/registry";

afterEach(() => vi.restoreAllMocks());

const check = (ctx: Ctx, args: Record<string, unknown>) => ok(ctx, "check_invariants", args);

describe("check_invariants", () => {
  describe("check_invariants: rules that are dropped or cannot run are named", () => {
    const rule = (over: string) => `{id: R1, rule: r, paths: ["src/**"], severity: LOW, category: style, action: deny, deny: {regex: {pattern: "x"}}${over}}`;

    it("a malformed rule (paths written as a string) is a warning naming it, not a silent checked_invariants: 0", async () => {
      const { ctx } = await setup("inv-drop");
      const r = await check(ctx, { diff: requestIdDiff, invariants: `style:\n  - {id: R1, rule: r, paths: "src/**", severity: LOW, category: style, action: deny, deny: {regex: {pattern: "x"}}}\n` });
      expect(r).toMatchObject({ success: true, checked_invariants: 0, findings: [] });
      expect(r.warnings).toEqual(["Invariant R1 dropped: missing or empty paths (paths: a list of globs; the others strings)"]);
    });

    it("an entry without an id is named by its section and position; a section that is not a list is named", async () => {
      const { ctx } = await setup("inv-drop");
      const yaml = `style:\n  - ${rule("")}\n  - {rule: r, paths: ["src/**"]}\n  - just text\nsecurity:\n  id: S1\n  rule: not in a list\n`;
      const r = await check(ctx, { diff: requestIdDiff, invariants: yaml });
      expect(r.warnings).toEqual([
        "Invariant style[1] dropped: missing or empty id, severity, category (paths: a list of globs; the others strings)",
        "Invariant style[2] dropped: expected a mapping with id, rule, paths, severity, category",
        "Section security dropped: expected a list of invariants (security:\n  - id: …)",
      ]);
      expect(r.checked_invariants).toBe(3);
    });

    it("a rule that cannot run is named even when no changed file matches its paths", async () => {
      const { ctx } = await setup("inv-drop");
      const yaml = `style:\n  - {id: R2, rule: r, paths: ["docs/**"], severity: LOW, category: style, action: deny, deny: {regex: {pattern: "a(?=b)"}}}\n`;
      const r = await check(ctx, { diff: requestIdDiff, invariants: yaml });
      expect(r.checked_invariants).toBe(0);
      expect(r.warnings).toEqual([
        "Invariant R2 cannot run (no changed file matched its paths yet): Error: Invalid regex: /a(?=b)/ (uses lookahead, lookbehind or a backreference, which RE2 (linear-time matching) does not support)",
      ]);
    });

    it("review_diff reports the dropped rule and the finding at the line the diff adds", async () => {
      const { ctx } = await setup("inv-drop");
      const yaml = `style:\n  - {id: MW3, rule: no console.log, paths: ["src/middleware/**"], severity: LOW, category: style, action: deny, deny: {regex: {pattern: "console\\\\.log\\\\("}}}\n  - {id: BAD, rule: r}\n`;
      const r = await ok(ctx, "review_diff", { diff: requestIdDiff, invariants: yaml });
      expect(r.metadata.warnings).toContain("Invariant BAD dropped: missing or empty paths, severity, category (paths: a list of globs; the others strings)");
      expect(r.findings).toContainEqual(expect.objectContaining({ id: "MW3", location: { file: "src/middleware/request-id/request-id.ts", startLine: 36, endLine: 36 } }));
    });
  });

  describe("check_invariants: evaluation", () => {
    it("deny over a dot directory, when_require and require satisfied (the OIDC release workflow)", async () => {
      const { ctx } = await setup();
      const r = await check(ctx, { diff: releaseDiff, invariants: honoYaml });
      expect(r).toMatchObject({ success: true, invariants_path: "(inline)", checked_invariants: 3 });
      expect(r.warnings).toEqual([
        "Invariant DOC002 dropped: missing or empty paths (paths: a list of globs; the others strings)",
        "Invariant DOC001 has no action; skipping deterministic evaluation",
      ]);
      expect(r.findings).toEqual([
        {
          id: "CI001",
          severity: "HIGH",
          category: "security",
          confidence: 0.95,
          title: "Workflows must not grant id-token: write",
          // The added line that grants it (line 18 of the new workflow).
          location: { file: ".github/workflows/release.yml", startLine: 18, endLine: 18 },
          evidence: ["deny.regex matched: /id-token:\\s*write/"],
          impact: "A project invariant was violated by newly added code.",
          recommendation: "Refactor the change to comply with the invariant or update the policy intentionally.",
        },
      ]);
    });

    it("when_require fails when the trigger is added without its safeguard; require fails when absent", async () => {
      const { ctx } = await setup();
      const noProvenance = releaseDiff.replace("npm publish --provenance --access public", "npm publish --access public");
      const unpinned = noProvenance.replace(/@[0-9a-f]{40} # (v\d)/g, "@$1");
      const r = await check(ctx, { diff: unpinned, invariants: honoYaml });
      expect(r.findings.map((f: { id: string }) => f.id)).toEqual(["CI001", "CI002", "CI003"]);
      // A when_require finding is at the added line its `when` matched: the first `uses:` (21) and `npm publish` (33).
      expect(r.findings.map((f: { location: { startLine: number; endLine: number } }) => [f.location.startLine, f.location.endLine])).toEqual([
        [18, 18],
        [21, 21],
        [33, 33],
      ]);
      expect(r.findings[1].evidence).toEqual(["when.regex matched but require.regex missing: when=/uses:/ require=/uses: [\\w./-]+@[0-9a-f]{40}/"]);
      expect(r.findings[2]).toMatchObject({
        severity: "HIGH",
        impact: "Conditional invariant triggered; required safeguard appears missing.",
        recommendation: "Add the required safeguard or remove the triggering behavior.",
      });
      // The websocket refactor adds no `export { … } from './…'` line to an index.ts: nothing to check there.
      const ws = await check(ctx, { diff: websocketDiff, invariants: honoYaml });
      expect(ws).toMatchObject({ success: true, checked_invariants: 0, findings: [] });
      const req = await check(ctx, { diff: websocketDiff, invariants: honoYaml.replace('"src/middleware/*/index.ts"', '"src/adapter/*/websocket.ts"') });
      expect(req.findings).toEqual([
        // A missing require is reported at the file's first added line.
        expect.objectContaining({
          id: "MW001",
          location: { file: "src/adapter/cloudflare-workers/websocket.ts", startLine: 31, endLine: 31 },
          evidence: ["require.regex not found: /^export \\{ \\w+ \\} from '\\.//m"],
        }),
        expect.objectContaining({ id: "MW001", location: { file: "src/adapter/deno/websocket.ts", startLine: 24, endLine: 24 } }),
      ]);
      expect(req.findings[0]).toMatchObject({
        impact: "A required pattern was not found in newly added code for affected files.",
        recommendation: "Add the required construct (or adjust the policy if it is no longer appropriate).",
      });
    });

    it("globs: ** and braces, flags, comments count as added lines, one check per (invariant, file)", async () => {
      const { ctx } = await setup();
      const r = await check(ctx, { diff: requestIdDiff, invariants: honoYaml });
      // MW001: index.ts; MW002: {request-id,index}.ts; MW003: src/middleware/** (3 files).
      expect(r.checked_invariants).toBe(6);
      expect(r.findings).toEqual([
        expect.objectContaining({ id: "MW003", severity: "LOW", category: "style", location: { file: "src/middleware/request-id/request-id.ts", startLine: 36, endLine: 36 } }),
      ]);
      // The case-insensitive deny fires once Math.random appears in an added line of a matched file.
      const random = requestIdDiff.replace("generator = () => crypto.randomUUID(),", "generator = () => String(Math.random()),");
      const withRandom = await check(ctx, { diff: random, invariants: honoYaml });
      expect(withRandom.findings.map((f: { id: string }) => f.id)).toEqual(["MW002", "MW003"]);
      expect(withRandom.findings[0].evidence).toEqual(["deny.regex matched: /math\\.random\\(/i"]);
    });

    it("glob semantics of the reference's minimatch (dot: true, no basename matching)", async () => {
      const { ctx } = await setup();
      const yaml = (paths: string[]) => `g:\n  - {id: G1, rule: r, paths: ${JSON.stringify(paths)}, severity: LOW, category: style, action: deny, deny: {regex: {pattern: "x"}}}\n`;
      const checked = async (paths: string[], files: string[]) => (await check(ctx, { diff: "not a diff", changed_files: files, invariants: yaml(paths) })).checked_invariants;
      expect(await checked(["**/*.yml"], [".github/workflows/ci.yml", "a/.hidden/b.yml", "c.yml"])).toBe(3);
      expect(await checked(["*.yml"], [".github/workflows/ci.yml", "c.yml", ".env.yml"])).toBe(2);
      expect(await checked(["src/**"], ["src/a.ts", "src/deep/er/b.ts", "test/src/c.ts"])).toBe(2);
      expect(await checked(["src/*.{ts,tsx}"], ["src/a.ts", "src/b.tsx", "src/c.js", "src/d/e.ts"])).toBe(2);
      expect(await checked(["!src/**"], ["src/a.ts", "docs/b.md"])).toBe(1);
      expect(await checked(["SRC/**"], ["src/a.ts"])).toBe(0);
    });

    it("warnings: every evaluation failure with the reference's texts, RE2's missing features named", async () => {
      const { ctx } = await setup();
      const deno = '["src/adapter/deno/websocket.ts"]';
      const yaml = [
        "w:",
        `  - {id: W1, rule: r, paths: ${deno}, severity: LOW, category: style, action: deny, deny: {regex: {pattern: "(unclosed"}}}`,
        `  - {id: W2, rule: r, paths: ${deno}, severity: LOW, category: style, action: deny, deny: {regex: {pattern: "on(?=open)"}}}`,
        `  - {id: W3, rule: r, paths: ${deno}, severity: LOW, category: style, action: deny, deny: {regex: {pattern: "(evt)\\\\1"}}}`,
        `  - {id: W4, rule: r, paths: ${deno}, severity: LOW, category: style, action: deny}`,
        `  - {id: W5, rule: r, paths: ${deno}, severity: LOW, category: style, action: require, require: {}}`,
        `  - {id: W6, rule: r, paths: ${deno}, severity: LOW, category: style, action: when_require, require: {regex: {pattern: "x"}}}`,
        `  - {id: W7, rule: r, paths: ${deno}, severity: LOW, category: style, action: forbid}`,
        `  - {id: W8, rule: r, paths: ${deno}, severity: LOW, category: style, action: deny, deny: {regex: {pattern: "${"a".repeat(1001)}"}}}`,
        `  - {id: W9, rule: r, paths: ${deno}, severity: LOW, category: style, action: deny, deny: {regex: {pattern: "x", flags: "y"}}}`,
        `  - {id: W10, rule: r, paths: ${deno}, severity: urgent, category: style, action: deny, deny: {regex: {pattern: "x"}}}`,
        `  - {id: W11, rule: r, paths: ${deno}, severity: LOW, category: vibes, action: deny, deny: {regex: {pattern: "x"}}}`,
        `  - {id: W12, rule: "${"long rule ".repeat(12)}", paths: ${deno}, severity: critical, category: security, action: deny, deny: {regex: {pattern: "ONOPEN", flags: "i"}}}`,
      ].join("\n");
      const r = await check(ctx, { diff: websocketDiff, invariants: yaml });
      expect(r.success).toBe(true);
      const failed = (id: string) => r.warnings.find((w: string) => w.startsWith(`Invariant ${id} `));
      expect(failed("W1")).toMatch(/^Invariant W1 evaluation failed: Error: Invalid regex: \/\(unclosed\/ \(.*missing closing \)/);
      expect(failed("W2")).toBe(
        "Invariant W2 evaluation failed: Error: Invalid regex: /on(?=open)/ (uses lookahead, lookbehind or a backreference, which RE2 (linear-time matching) does not support)",
      );
      expect(failed("W3")).toBe("Invariant W3 evaluation failed: Error: Invalid regex: /(evt)\\1/ (uses lookahead, lookbehind or a backreference, which RE2 (linear-time matching) does not support)");
      expect(failed("W4")).toBe("Invariant W4 evaluation failed: Error: deny action requires deny.regex");
      expect(failed("W5")).toBe("Invariant W5 evaluation failed: Error: require action requires require.regex");
      expect(failed("W6")).toBe("Invariant W6 evaluation failed: Error: when_require action requires when.regex and require.regex");
      expect(failed("W7")).toBe("Invariant W7 has unknown action 'forbid' (deny, require or when_require); skipping deterministic evaluation");
      expect(failed("W8")).toMatch(/^Invariant W8 evaluation failed: Error: Invalid regex: \/a+\/ \(longer than 1000 characters\)$/);
      expect(failed("W9")).toBe("Invariant W9 evaluation failed: Error: Invalid regex: /x/y (unsupported flag 'y'; i, m, s, g and u are)");
      expect(failed("W10")).toBe("Invariant W10 dropped: severity 'urgent' is not one of CRITICAL, HIGH, MEDIUM, LOW, INFO");
      expect(failed("W11")).toMatch(/^Invariant W11 dropped: category 'vibes' is not one of correctness, security/);
      // W1–W6, W8, W9 and W12 were evaluated against the one file.
      expect(r.checked_invariants).toBe(9);
      expect(r.findings).toEqual([expect.objectContaining({ id: "W12", severity: "CRITICAL", category: "security", title: "long rule ".repeat(8), evidence: ["deny.regex matched: /ONOPEN/i"] })]);
    });

    it("changed_files narrows (or widens) the files checked; files absent from the diff have no added lines", async () => {
      const { ctx } = await setup();
      const r = await check(ctx, { diff: releaseDiff, invariants: honoYaml, changed_files: ["./.github/workflows/release.yml", "src/middleware/x/index.ts"] });
      // CI001–CI003 on release.yml; MW001 (require) and MW003 on an index.ts the diff does not touch.
      expect(r.checked_invariants).toBe(5);
      expect(r.findings.map((f: { id: string; location: { file: string } }) => `${f.id} ${f.location.file}`)).toEqual(["CI001 .github/workflows/release.yml", "MW001 src/middleware/x/index.ts"]);
    });
  });

  describe("check_invariants: loading", () => {
    it("fails to load: bad YAML, not a mapping, too many invariants, too large", async () => {
      const { ctx } = await setup();
      const failed = async (invariants: string) => {
        const r = await check(ctx, { diff: releaseDiff, invariants });
        expect(r).toMatchObject({ success: false, invariants_path: "(inline)", checked_invariants: 0, warnings: [], findings: [] });
        return r.error as string;
      };
      expect(await failed("a: [unclosed")).toMatch(/^Error: Invalid invariants YAML: /);
      expect(await failed("- just\n- a list\n")).toBe("Error: Invalid invariants config: expected a mapping object");
      const many = `s:\n${Array.from({ length: MAX_INVARIANTS + 1 }, (_, i) => `  - {id: I${i}, rule: r, paths: ["x"], severity: LOW, category: style}`).join("\n")}\n`;
      expect(await failed(many)).toBe(`Error: Invalid invariants config: more than ${MAX_INVARIANTS} invariants`);
      expect(await failed(`# ${"é".repeat(40_000)}\ns: []\n`)).toBe("Error: Invariants file is larger than 65536 bytes");
      const bomb = `a: &a ["x","x","x","x","x","x","x","x","x","x"]\n${Array.from({ length: 120 }, (_, i) => `k${i}: [*a, *a, *a]`).join("\n")}\n`;
      expect(await failed(bomb)).toMatch(/^Error: Invalid invariants YAML: .*alias/i);
    });

    it("without invariants or repo, and no repository to default to: repo_required, saying what to pass", async () => {
      const { gh, ctx } = await setup();
      const err = await fails(ctx, "check_invariants", { diff: releaseDiff });
      expect(err.code).toBe("repo_required");
      expect(err.hint).toContain("repo_register");
      expect(gh.requests.length).toBe(0);
    });

    it("refuses bad input before anything is read", async () => {
      const { gh, ctx } = await setup();
      const refused = async (args: Record<string, unknown>, message: RegExp | string) => {
        const err = await fails(ctx, "check_invariants", args);
        expect(err.code).toBe("invalid_input");
        if (typeof message === "string") expect(err.message).toBe(message);
        else expect(err.message).toMatch(message);
        expect(err.hint.length).toBeGreaterThan(0);
      };
      await refused({ diff: "  \n " }, 'Missing or invalid "diff" argument. Provide a unified diff string.');
      await refused({ diff: "just some words", invariants: honoYaml }, "No reviewable changes found in diff scope. Provide a unified diff with at least one changed file.");
      // Checking the first files of a wider diff would pass the rest off as checked.
      await refused(
        { diff: Array.from({ length: MAX_DIFF_FILES + 1 }, (_, i) => `diff --git a/f${i}.ts b/f${i}.ts`).join("\n"), invariants: honoYaml },
        `The diff changes more than ${MAX_DIFF_FILES} files.`,
      );
      await refused({ diff: releaseDiff, changed_files: ["--config"] }, "Invalid changed_files[0]: option-like paths are not allowed.");
      await refused({ diff: releaseDiff, changed_files: ["ok.ts", "../etc/passwd"] }, "Invalid changed_files[1]: path traversal is not allowed.");
      await refused({ diff: releaseDiff, changed_files: ["/etc/passwd"] }, "Invalid changed_files[0]: absolute or drive-qualified paths are not allowed. Use paths relative to the workspace.");
      await refused({}, /diff/);
      await refused({ diff: releaseDiff, invariant: "x" }, /invariant/);
      await refused({ diff: "x".repeat(2_000_001) }, /diff/);
      expect((await fails(ctx, "check_invariants", { diff: releaseDiff, repo: REPO, ref: "a..b" })).code).toBe("unsafe_ref_token");
      expect(gh.requests.length).toBe(0);
    });

    it("path safety of invariants_path, with the reference's messages; nothing is read", async () => {
      const { gh, ctx } = await setup();
      const refusal = async (invariants_path: string) => {
        const r = await check(ctx, { diff: releaseDiff, repo: REPO, invariants_path });
        expect(r).toMatchObject({ success: false, invariants_path, checked_invariants: 0, findings: [] });
        return r.error;
      };
      const absolute = "Error: Invalid invariants_path: absolute or drive-qualified paths are not allowed. Use paths relative to the workspace.";
      expect(await refusal("/etc/invariants.yml")).toBe(absolute);
      expect(await refusal("C:\\repo\\inv.yml")).toBe(absolute);
      expect(await refusal("\\\\server\\share\\inv.yml")).toBe(absolute);
      expect(await refusal("../other/.review-invariants.yml")).toBe("Error: Invalid invariants_path: path traversal is not allowed.");
      expect(await refusal("config/../../x.yml")).toBe("Error: Invalid invariants_path: path traversal is not allowed.");
      expect(await refusal("./")).toBe("Error: Invalid invariants_path: path must reference a file or nested workspace path.");
      expect(gh.requests.length).toBe(0);
      expect(normalizeRepoPath("config/../policy\\inv.yml", "p")).toBe("policy/inv.yml");
    });
  });

  describe("check_invariants: the repository's file", () => {
    it("reads the file at head_sha (or ref, or the default branch), at the settings' path", async () => {
      const { gh, ctx } = await setup();
      gh.on("GET /repos/{owner}/{repo}/contents/{path}", (req) => ({ body: fileBody(honoYaml, req.path.path) }));
      const r = await check(ctx, { diff: releaseDiff, repo: REPO, head_sha: SHA, ref: "ignored" });
      expect(r).toMatchObject({ success: true, invariants_path: ".review-invariants.yml", checked_invariants: 3 });
      expect(r.findings.map((f: { id: string }) => f.id)).toEqual(["CI001"]);
      expect(gh.requests[0]).toMatchObject({ path: { owner: "octocat", repo: "Hello-World", path: ".review-invariants.yml" }, query: { ref: SHA } });

      await updateReviewSettings(ctx, "octocat/hello-world", { invariantsPath: "policy/invariants.yml" });
      expect((await check(ctx, { diff: releaseDiff, repo: REPO, ref: "release" })).invariants_path).toBe("policy/invariants.yml");
      expect(gh.requests[1]).toMatchObject({ path: { path: "policy/invariants.yml" }, query: { ref: "release" } });
      // An explicit invariants_path wins over the setting; a normalized path is what is read.
      await check(ctx, { diff: releaseDiff, repo: REPO, invariants_path: "ci/../ci/inv.yml" });
      expect(gh.requests[2]).toMatchObject({ path: { path: "ci/inv.yml" }, query: {} });
      // Inline YAML wins over the repository: nothing more is read.
      await check(ctx, { diff: releaseDiff, repo: REPO, invariants: honoYaml });
      expect(gh.requests.length).toBe(3);
    });

    it("a missing file is success false; a missing repository, a symlink or a directory are told apart", async () => {
      const { gh, ctx } = await setup();
      let answer: () => { status?: number; body: unknown } = () => ({ status: 404, body: errorBody("Not Found") });
      let repo: () => { status?: number; body: unknown } = () => ({ body: repoBody() });
      gh.on("GET /repos/{owner}/{repo}/contents/{path}", () => answer()).on("GET /repos/{owner}/{repo}", () => repo());
      expect(await check(ctx, { diff: releaseDiff, repo: REPO, head_sha: SHA })).toMatchObject({
        success: false,
        invariants_path: ".review-invariants.yml",
        checked_invariants: 0,
        warnings: [],
        findings: [],
        error: `Error: Invariants file not found: ${REPO}:.review-invariants.yml@${SHA}`,
      });
      answer = () => ({ body: example("GET /repos/{owner}/{repo}/contents/{path}", { type: "symlink", target: "../../etc/passwd", content: undefined, encoding: undefined }) });
      expect((await check(ctx, { diff: releaseDiff, repo: REPO })).error).toBe("Error: Invalid invariants_path: path must be within workspace.");
      answer = () => ({ body: [example("GET /repos/{owner}/{repo}/contents/{path}", { type: "file" })] });
      expect((await check(ctx, { diff: releaseDiff, repo: REPO })).error).toBe(`Error: Invariants file not found: ${REPO}:.review-invariants.yml is a directory`);
      answer = () => ({ body: { ...fileBody("x"), size: 70_000, content: "", encoding: "none" } });
      expect((await check(ctx, { diff: releaseDiff, repo: REPO })).error).toBe("Error: Invariants file is larger than 65536 bytes");
      answer = () => ({ status: 404, body: errorBody("Not Found") });
      repo = () => ({ status: 404, body: errorBody("Not Found") });
      expect((await fails(ctx, "check_invariants", { diff: releaseDiff, repo: REPO })).code).toBe("repo_not_found");
      answer = () => ({ status: 403, body: errorBody("Resource not accessible by integration") });
      expect((await fails(ctx, "check_invariants", { diff: releaseDiff, repo: REPO })).code).toBe("github_forbidden");
    });

    it("tenants: GitHub must be configured, and another tenant's registered repository is not found", async () => {
      const { gh, ctx } = await setup("inv-a");
      gh.on("GET /repos/{owner}/{repo}/contents/{path}", (req) => ({ body: fileBody(honoYaml, req.path.path) }));
      const b = await setup("inv-b");
      const theirs = (await ok(b.ctx, "repo_register", { remote_url: `${b.gh.apiBase}/acme/api` })).repository;
      b.gh.on("GET /repos/{owner}/{repo}/contents/{path}", (req) => ({ body: fileBody(honoYaml, req.path.path) }));
      vi.spyOn(globalThis, "fetch").mockImplementation(b.gh.fetch);
      expect((await check(b.ctx, { diff: releaseDiff, repo: theirs.id })).success).toBe(true);
      expect(b.gh.requests[0]!.path).toMatchObject({ owner: "acme", repo: "api" });
      vi.spyOn(globalThis, "fetch").mockImplementation(gh.fetch);
      const err = await fails(ctx, "check_invariants", { diff: releaseDiff, repo: theirs.id });
      expect(err.code).toBe("not_found");
      expect(gh.requests.length).toBe(0);
      const unconfigured = await newWorld("inv-c", { start: "2026-06-01T12:00:00.000Z" });
      expect((await fails({ ...unconfigured.ctx, env: ctx.env }, "check_invariants", { diff: releaseDiff, repo: REPO })).code).toBe("github_not_configured");
    });
  });

  describe("check_invariants' description", () => {
    it("documents the YAML format with an example that runs as written", async () => {
      const { ctx } = await setup("inv-doc");
      const description = findTool("check_invariants")!.description;
      for (const field of ["id", "rule", "paths", "severity", "category", "action", "deny", "require", "when", "regex", "pattern", "flags"]) expect(description).toContain(field);
      const example = /e\.g\. `([^`]+)`/.exec(description)![1]!;
      const diff = "diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,2 +1,3 @@\n const a = 1;\n+const b = eval(input);\n const c = 3;\n";
      const r = await check(ctx, { diff, invariants: example });
      expect(r).toMatchObject({ success: true, checked_invariants: 1, warnings: [] });
      expect(r.findings).toEqual([expect.objectContaining({ id: "SEC1", severity: "HIGH", location: { file: "src/a.ts", startLine: 2, endLine: 2 } })]);
    });
  });
});
