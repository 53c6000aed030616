/** check_invariants (seed 004 §12, with repo/ref/invariants): the YAML invariants alone, no LLM. */
import { z } from "zod";
import { repoField, resolveRepo } from "../../git/repo";
import { assertSafeRef } from "../../git/tokens";
import type { Ctx } from "../../core/context";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput, notFound, ToolError } from "../../core/errors";
import { looksLikeUnifiedDiff, MISSING_DIFF_MESSAGE, NO_SCOPE_MESSAGE, parseUnifiedDiff, toChangedFileView } from "../unified-diff/parse";
import { MAX_INVARIANTS_BYTES, normalizeRepoPath, parseInvariants, PathRefused, readInvariantsFile, runInvariants } from "../checks/invariants";
import { DEFAULT_INVARIANTS_PATH, reviewSettingsFor } from "../settings/model";
import { findingSchema } from "../pipeline/types";
import { DEFAULT_REPO_NOTE, repoOrDefault } from "../target/repo-default";

/** The largest diff one call reads. */
export const MAX_DIFF_CHARS = 2_000_000;
const MAX_CHANGED_FILES = 1000;
/** What invariants_path reports when the YAML came inline. */
export const INLINE_PATH = "(inline)";

const refusedPath = (err: unknown) => (err instanceof PathRefused ? invalidInput(err.message, "Pass repository-relative paths (e.g. src/app.ts), without ../ or a leading - or /.") : err);

/** A repository of this tenant; a slug another tenant registered is simply not found. */
async function tenantRepo(ctx: Ctx, ref: string) {
  try {
    return await resolveRepo(ctx, ref);
  } catch (err) {
    if (err instanceof ToolError && err.code === "invalid_repo") {
      throw notFound("Repository", ref.slice(0, 100), "Pass owner/name, or the id or slug of a repository registered with repo_register (repo_query lists them).");
    }
    throw err;
  }
}

export const checkInvariantsTool = defineTool({
  name: "check_invariants",
  title: "Check invariants",
  description:
    "Runs YAML review invariants deterministically (no LLM) against a unified diff: each rule names path globs and a regex check over the lines the diff adds to matching files (deny: must not match; require: must match; when_require: if `when` matches, `require` must). The YAML is `invariants` (inline text), or the repository's file (invariants_path, default from the repository's review settings or .review-invariants.yml) at head_sha / ref / the default branch. Regexes run in linear time (RE2: no lookaround or backreferences). YAML: section → list of rules {id, rule, paths: [globs], severity: CRITICAL|HIGH|MEDIUM|LOW|INFO, category, action: deny|require|when_require, deny|require|when: {regex: {pattern, flags?}}}, e.g. `{security: [{id: SEC1, rule: no eval, paths: [src/**], severity: HIGH, category: security, action: deny, deny: {regex: {pattern: eval\\(}}}]}`. A rule dropped or unable to run is named in warnings; a finding is at the added line where it shows.",
  toolset: "review",
  input: z.object({
    diff: z.string().max(MAX_DIFF_CHARS).describe(`The unified diff (git diff output), at most ${MAX_DIFF_CHARS} characters.`),
    changed_files: z.array(z.string().max(1024)).max(MAX_CHANGED_FILES).optional().describe("Repository-relative paths to check instead of the files the diff names."),
    invariants_path: z.string().max(1024).optional().describe(`Where the YAML lives in the repository (default: the repository's review setting, else ${DEFAULT_INVARIANTS_PATH}).`),
    invariants: z.string().max(MAX_INVARIANTS_BYTES).optional().describe(`The invariants YAML itself (at most ${MAX_INVARIANTS_BYTES} bytes); wins over repo.`),
    repo: repoField.optional().describe(`The repository whose invariants file is read (when invariants is not given): owner/name, or a registered repository's id or slug. ${DEFAULT_REPO_NOTE}`),
    head_sha: z.string().max(256).optional().describe("Read the file at this commit (the diff's head); wins over ref."),
    ref: z.string().max(256).optional().describe("Read the file at this branch or tag (default: the default branch)."),
  }),
  output: z.object({
    success: z.boolean().describe("False when the invariants could not be loaded (see error)."),
    invariants_path: z.string().describe(`The file read, or ${INLINE_PATH} for inline YAML.`),
    checked_invariants: z.number().int().describe("(invariant, file) pairs evaluated."),
    warnings: z.array(z.string()).describe("Invariants skipped or dropped, evaluation failures."),
    findings: z.array(findingSchema).describe("One per invariant violated in a file."),
    error: z.string().optional().describe("Why loading failed."),
  }),
  annotations: { ...READ_ONLY, openWorld: true },
  async run(ctx, input) {
    const diff = input.diff.trim();
    if (!diff) throw invalidInput(MISSING_DIFF_MESSAGE, "Pass the output of git diff (or a pull request's .diff).");
    let changedFiles: string[] | undefined;
    try {
      changedFiles = input.changed_files?.map((p, i) => normalizeRepoPath(p, `changed_files[${i}]`, { rejectOptionLike: true }));
    } catch (err) {
      throw refusedPath(err);
    }
    const files = parseUnifiedDiff(diff).files.map(toChangedFileView);
    if (files.length === 0 && !changedFiles?.length && !looksLikeUnifiedDiff(diff)) {
      throw invalidInput(NO_SCOPE_MESSAGE, "Pass a unified diff with file headers (diff --git / --- / +++) and hunks, or changed_files.");
    }
    const scope = changedFiles?.length ? changedFiles : files.map((f) => f.path);
    const failed = (invariantsPath: string, error: string) => ({ success: false, invariants_path: invariantsPath, checked_invariants: 0, warnings: [], findings: [], error });

    let text: string;
    let invariantsPath: string;
    if (input.invariants !== undefined) {
      text = input.invariants;
      invariantsPath = INLINE_PATH;
    } else {
      const ref = input.head_sha ?? input.ref;
      assertSafeRef(input.head_sha !== undefined ? "head_sha" : "ref", ref);
      const repo = input.repo !== undefined ? await tenantRepo(ctx, input.repo) : await repoOrDefault(ctx, undefined);
      invariantsPath = input.invariants_path ?? (await reviewSettingsFor(ctx, `${repo.owner}/${repo.name}`)).invariantsPath;
      let path: string;
      try {
        path = normalizeRepoPath(invariantsPath, "invariants_path");
      } catch (err) {
        if (err instanceof PathRefused) return failed(invariantsPath, String(err));
        throw err;
      }
      const source = await readInvariantsFile(ctx, repo, path, ref);
      if (!source.ok) return failed(invariantsPath, source.error);
      text = source.text;
    }

    let config;
    try {
      config = parseInvariants(text);
    } catch (err) {
      return failed(invariantsPath, String(err));
    }
    const r = runInvariants(files, scope, config);
    return { success: true, invariants_path: invariantsPath, checked_invariants: r.checked, warnings: r.warnings, findings: r.findings };
  },
  summarize: (r) =>
    r.success ? `${r.findings.length} invariant violation(s) in ${r.checked_invariants} check(s)${r.warnings.length ? `, ${r.warnings.length} warning(s)` : ""}.` : `Invariants not loaded: ${r.error}`,
});
