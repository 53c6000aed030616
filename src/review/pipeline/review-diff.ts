/**
 * The review_diff pipeline (seed 004; seed-behaviour.md §5.3 and the reference's
 * reviewer/reviewDiff.ts, context/diffContext.ts, pipeline/*): parse, classify, preflight, the
 * optional stages (invariants, static analysis, the LLM) through ReviewStages, then merge,
 * filter, gate, and render. The stages are a parameter so tests can stand in for them.
 */
import { z } from "zod";
import { iso } from "../../core/time";
import { apiBase } from "../../git/credentials";
import { githubHost, repoField, resolveRepo } from "../../git/repo";
import { isSafeRef, isSafeRepoPath, type RepoName } from "../../git/tokens";
import { repoKey } from "../../code/store";
import type { Ctx } from "../../core/context";
import { invalidInput, toErrorBody } from "../../core/errors";
import { classifyChange } from "./classify";
import { diffSecretFindings } from "./diff-secrets";
import { looksLikeUnifiedDiff, MAX_DIFF_CHARS, MAX_DIFF_FILES, MISSING_DIFF_MESSAGE, NO_SCOPE_MESSAGE, parseUnifiedDiff, toChangedFileView } from "../unified-diff/parse";
import { failurePolicy, filterFindings, MAX_FAIL_REASONS, mergeFindings } from "./findings";
import { reviewMarkdown } from "./markdown";
import { deterministicFindings, DETERMINISTIC_CHECKS, pathRules, runPreflight } from "./preflight";
import { toSarif } from "./sarif";
import { DEFAULT_INVARIANTS_PATH, reviewSettingsFor } from "../settings/model";
import type { InvariantsOutcome, ReviewStages, StaticOutcome } from "./stages";
import { CATEGORIES, CHANGE_TYPES, findingSchema, SEVERITIES, type Finding } from "./types";

/** The reference's version, reported as metadata.tool_version and the SARIF driver's version. */
export const TOOL_VERSION = "1.9.0";

const ANALYZERS = ["tsc", "semgrep"] as const;
const findingIds = (what: string) => z.array(z.string().min(1).max(200)).max(100).default([]).describe(what);

/** review_diff's `options` (seed 004 §7), every default the seed's; review_auto takes the same as review_diff_options. */
export const reviewDiffOptionsSchema = z.object({
  confidence_threshold: z.number().min(0).max(1).default(0.55).describe("Drop findings below this confidence (0–1)."),
  max_findings: z.number().int().min(0).max(500).default(20).describe("Most findings returned (the gate still sees all that pass the filters)."),
  categories: z.array(z.enum(CATEGORIES)).max(CATEGORIES.length).optional().describe("Keep only findings of these categories (empty or absent: all)."),
  invariants_path: z
    .string()
    .min(1)
    .max(300)
    .refine(isSafeRepoPath, "must be a path inside the repository (no leading /, no ..)")
    .optional()
    .describe("Where the invariants YAML lives in `repo` (default: the repository's review settings, else .review-invariants.yml)."),
  enable_static_analysis: z.boolean().default(false).describe("Add what GitHub's checks and code scanning report for head_sha in `repo`."),
  static_analyzers: z.array(z.enum(ANALYZERS)).min(1).max(ANALYZERS.length).default(["tsc"]).describe("Which analyzers' results to read: tsc, semgrep."),
  static_analysis_timeout_ms: z.number().int().min(1000).max(600_000).default(60_000).describe("Time allowed per analyzer (ms)."),
  static_analysis_max_findings_per_analyzer: z.number().int().min(1).max(200).default(20).describe("Most findings kept per analyzer."),
  semgrep_args: z
    .array(z.string().min(1).max(200))
    .max(20)
    .optional()
    .describe("The seed's semgrep command-line arguments; nothing is run here (results are read from GitHub), so they are ignored with a warning."),
  enable_llm: z.boolean().default(false).describe("Run the language-model review passes."),
  llm_force: z.boolean().default(false).describe("Run the LLM even where the low-risk noise gate would skip it."),
  two_pass: z.boolean().default(true).describe("A structural pass, then a detailed one when the risk reaches risk_threshold."),
  risk_threshold: z.number().int().min(1).max(5).default(3).describe("Risk score (1–5) from which the detailed LLM pass runs."),
  token_budget: z.number().int().min(500).max(100_000).default(8000).describe("Tokens of surrounding code given to the LLM."),
  max_context_files: z.number().int().min(1).max(20).default(5).describe("Most files whose surroundings the LLM sees."),
  custom_instructions: z.string().max(4000).optional().describe("Extra instructions for the LLM reviewer."),
  llm_timeout_ms: z.number().int().min(1000).max(1_800_000).optional().describe("Time allowed for the LLM passes (ms)."),
  fail_on_severity: z.enum(SEVERITIES).default("CRITICAL").describe("should_fail when a finding is at or above this severity."),
  fail_on_invariant_ids: findingIds("Finding ids that make should_fail true whatever their severity."),
  allowlist_finding_ids: findingIds("Finding ids removed from the findings and from the gate."),
  include_sarif: z.boolean().default(false).describe("Add `sarif`: the findings as a SARIF 2.1.0 log."),
  include_markdown: z.boolean().default(false).describe("Add `markdown`: a GitHub-flavoured summary."),
});

const sha = (which: string) => z.string().min(1).max(200).refine(isSafeRef, "must be a commit sha or ref ([A-Za-z0-9_./+-], no '..')").optional().describe(which);

/** review_diff's parameters: the seed's, plus `repo` and `invariants` (extensions). */
export const reviewDiffInputShape = {
  diff: z
    .string({ error: MISSING_DIFF_MESSAGE })
    .trim()
    .min(1, MISSING_DIFF_MESSAGE)
    .max(MAX_DIFF_CHARS, `is longer than ${MAX_DIFF_CHARS.toLocaleString("en-US")} characters: review the change in parts`)
    .describe(`Unified diff text (git diff or diff -u; up to ${MAX_DIFF_CHARS.toLocaleString("en-US")} characters and ${MAX_DIFF_FILES} files).`),
  changed_files: z.array(z.string().max(1000)).max(MAX_DIFF_FILES).optional().describe("Repository-relative paths to review instead of those the diff names (no leading -, no ..)."),
  base_sha: sha("The commit the diff starts from."),
  head_sha: sha("The commit the diff ends at: where invariants and static-analysis results are read in `repo`."),
  repo: repoField
    .optional()
    .describe(
      "Extension: the repository the diff belongs to (owner/name or registered). Its review settings apply (hotspot and config globs, invariants path) and the optional stages read from it on GitHub.",
    ),
  invariants: z
    .string()
    .max(65_536)
    .optional()
    .describe("Extension: invariants as inline YAML text (the .review-invariants.yml format, shown in check_invariants' description); wins over the repository's file."),
  options: reviewDiffOptionsSchema.prefault({}).describe("Review options (seed 004); every one has a default."),
};
export const reviewDiffInput = z.object(reviewDiffInputShape);
export type ReviewDiffRequest = z.output<typeof reviewDiffInput>;

const ms = (what: string) => z.number().min(0).describe(what);

export const reviewDiffResultSchema = z.object({
  run_id: z.string().describe("This review's id (a random UUID; the SARIF run's automationDetails.guid)."),
  risk_score: z.number().int().min(1).max(5).describe("1–5: 1 + (files > 10: 1) + 0.5 per hotspot + (public API: 1.5) + (config: 0.5) + (no tests: 1), rounded up."),
  classification: z.enum(CHANGE_TYPES).describe("feature, bugfix, refactor, infra or docs."),
  hotspots: z.array(z.string()).describe("Hotspot ids the changed paths fall in, sorted."),
  summary: z.string().describe("One line: class, risk, files and lines, findings, hotspots."),
  findings: z.array(findingSchema).describe("Findings after the filters, at most max_findings."),
  should_fail: z.boolean().describe("The CI gate: a finding at or above fail_on_severity, or one named in fail_on_invariant_ids."),
  fail_reasons: z.array(z.string()).describe(`Why the gate fails (at most ${MAX_FAIL_REASONS}).`),
  stats: z
    .object({
      files_changed: z.number().int().describe("Changed files reviewed."),
      lines_added: z.number().int().describe("Lines added."),
      lines_removed: z.number().int().describe("Lines removed."),
      duration_ms: ms("Whole review."),
      deterministic_checks_executed: z.number().int().describe("Deterministic checks run (6: the reference's 5 and the secret scan)."),
      invariants_executed: z.number().int().describe("Invariants evaluated."),
      static_analyzers_executed: z.number().int().describe("Analyzers that had results."),
      llm_passes_executed: z.number().int().describe("LLM passes run."),
      llm_findings_added: z.number().int().describe("Findings the LLM returned (before merging)."),
      llm_skipped_reason: z.string().optional().describe("Why the LLM did not run (missing_runtime, llm_not_configured, noise_gate_low_risk, …)."),
      timings_ms: z
        .object({
          preflight: ms("Parse, classify, preflight."),
          invariants: ms("Invariants stage."),
          static_analysis: ms("Static-analysis stage."),
          context_fetch: ms("LLM: reading surrounding code."),
          secrets_scrub: ms("LLM: scrubbing secrets from the prompt."),
          llm_structural: ms("LLM: structural pass."),
          llm_detailed: ms("LLM: detailed pass."),
        })
        .describe("Time per stage (Workers advance the clock only across I/O, so pure computation reads 0)."),
    })
    .describe("Counts and timings."),
  metadata: z
    .object({
      reviewed_at: z.string().describe("When (ISO 8601)."),
      tool_version: z.string().describe("1.9.0 (the reference's version)."),
      warnings: z.array(z.string()).describe("Stages skipped or degraded, and why."),
      llm_model: z.string().optional().describe("The model that reviewed, when the LLM ran."),
    })
    .describe("About the run."),
  static_analysis: z
    .object({
      analyzers_requested: z.array(z.enum(ANALYZERS)).describe("Analyzers asked for."),
      analyzers_executed: z.number().int().describe("How many had results."),
      warnings: z.array(z.string()).describe("Analyzers unavailable, and why."),
      results: z.array(z.unknown()).describe("What each analyzer reported."),
    })
    .optional()
    .describe("With enable_static_analysis."),
  sarif: z.record(z.string(), z.unknown()).optional().describe("With include_sarif: a SARIF 2.1.0 log of the findings."),
  markdown: z.string().optional().describe("With include_markdown: a GitHub-flavoured summary."),
});
export type ReviewDiffResult = z.output<typeof reviewDiffResultSchema>;

const WORKSPACE_HINT = "Pass paths relative to the repository root, e.g. src/app.ts.";

/**
 * The reference's checks on changed_files, with its messages: relative, no traversal, not
 * option-like; backslashes and `.` segments normalized away.
 */
export function normalizeChangedFiles(values: readonly string[]): string[] {
  return values.map((value, i) => {
    const field = `changed_files[${i}]`;
    const fail = (why: string) => invalidInput(`Invalid ${field}: ${why}`, WORKSPACE_HINT);
    const trimmed = value.trim();
    if (trimmed.length === 0) throw fail("path must not be empty.");
    if (/[\0\r\n]/.test(trimmed)) throw fail("path contains control characters.");
    if (/^[A-Za-z]:/.test(trimmed) || /^[\\/]/.test(trimmed)) throw fail("absolute or drive-qualified paths are not allowed. Use paths relative to the workspace.");
    const segments: string[] = [];
    let escapes = false;
    for (const seg of trimmed.replace(/\\/g, "/").split("/")) {
      if (seg === "" || seg === ".") continue;
      if (seg === "..") {
        if (segments.length === 0) escapes = true;
        else segments.pop();
        continue;
      }
      segments.push(seg);
    }
    if (escapes) throw fail("path traversal is not allowed.");
    if (segments.length === 0) throw fail("path must reference a file or nested workspace path.");
    const normalized = segments.join("/");
    if (normalized.startsWith("-")) throw fail("option-like paths are not allowed.");
    return normalized;
  });
}

/** A monotonic-enough millisecond clock; tests pass their own to check where time is counted. */
export type Timer = () => number;

interface StageRun<T> {
  outcome: T | null;
  ms: number;
}

async function timed<T>(timer: Timer, f: () => Promise<T>): Promise<StageRun<T>> {
  const t0 = timer();
  const outcome = await f();
  return { outcome, ms: Math.max(0, timer() - t0) };
}

const summaryLine = (c: string, risk: number, files: number, added: number, removed: number, findings: number, hotspots: string[]) =>
  `Classified as ${c}. Risk ${risk}/5. ${files} files changed (+${added}/-${removed}). ${findings} deterministic findings.${hotspots.length > 0 ? ` Hotspots: ${hotspots.join(", ")}.` : ""}`;

export async function reviewDiff(ctx: Ctx, req: ReviewDiffRequest, stages: ReviewStages, timer: Timer = Date.now): Promise<ReviewDiffResult> {
  const started = timer();
  const opts = req.options;
  const changedFiles = req.changed_files ? normalizeChangedFiles(req.changed_files) : undefined;

  // preflight time is parsing, classifying and the checks; not the settings read between them.
  const parseStart = timer();
  const parsed = parseUnifiedDiff(req.diff);
  let preflightMs = Math.max(0, timer() - parseStart);
  if (parsed.files.length === 0 && !(changedFiles && changedFiles.length > 0) && !looksLikeUnifiedDiff(req.diff)) {
    throw invalidInput(NO_SCOPE_MESSAGE, "Pass the output of git diff (or diff -u), or name the changed files in changed_files.");
  }
  const repo: RepoName | undefined = req.repo ? await resolveRepo(ctx, req.repo) : undefined;
  const settings = repo ? await reviewSettingsFor(ctx, repoKey(repo.owner, repo.name)) : null;
  const checksStart = timer();
  const classification = classifyChange(parsed);
  const preflight = runPreflight(parsed, changedFiles, pathRules(settings));
  preflightMs += Math.max(0, timer() - checksStart);
  const files = parsed.files.map(toChangedFileView);
  // The same detector as scrub_secrets, on the lines the diff adds.
  const secrets = diffSecretFindings(files);
  const deterministic = [...secrets.findings, ...deterministicFindings(preflight, classification)];
  const warnings: string[] = [...secrets.warnings];

  // Invariants: from the repository's file or inline YAML; the reference turns any failure into a warning.
  let invariants: StageRun<InvariantsOutcome> = { outcome: null, ms: 0 };
  const invariantsPath = opts.invariants_path ?? settings?.invariantsPath ?? DEFAULT_INVARIANTS_PATH;
  if (repo || req.invariants !== undefined) {
    const stage = stages.invariants;
    if (!stage) {
      warnings.push("Invariants were asked for (repo or invariants given) but this server has no invariants stage; skipping invariants");
    } else {
      try {
        invariants = await timed(timer, () =>
          stage(ctx, {
            files,
            changedFiles: preflight.changedFiles,
            repo,
            headSha: req.head_sha,
            invariantsPath,
            invariantsPathIsDefault: opts.invariants_path === undefined && invariantsPath === DEFAULT_INVARIANTS_PATH,
            yaml: req.invariants,
          }),
        );
        warnings.push(...invariants.outcome!.warnings);
      } catch (err) {
        warnings.push(`Failed to load/run invariants: ${toErrorBody(err).message}`);
      }
    }
  } else if (opts.invariants_path) {
    warnings.push("invariants_path was given without repo or invariants, so there is nothing to read it from; skipping invariants");
  }

  let staticRun: StageRun<StaticOutcome> = { outcome: null, ms: 0 };
  let staticAnalysis: ReviewDiffResult["static_analysis"];
  if (opts.enable_static_analysis) {
    staticAnalysis = { analyzers_requested: opts.static_analyzers, analyzers_executed: 0, warnings: [], results: [] };
    if (opts.semgrep_args?.length) warnings.push("semgrep_args are ignored: analyzers are not run here; their results are read from GitHub");
    const stage = stages.staticAnalysis;
    if (!stage) {
      const warning = "enable_static_analysis was true but this server has no static-analysis stage; skipping static analysis";
      warnings.push(warning);
      staticAnalysis.warnings.push(warning);
    } else {
      staticRun = await timed(timer, () =>
        stage(ctx, {
          repo,
          headSha: req.head_sha,
          changedFiles: preflight.changedFiles,
          analyzers: opts.static_analyzers,
          timeoutMs: opts.static_analysis_timeout_ms,
          maxFindingsPerAnalyzer: opts.static_analysis_max_findings_per_analyzer,
        }),
      );
      const out = staticRun.outcome!;
      staticAnalysis = { ...staticAnalysis, analyzers_executed: out.analyzersExecuted, warnings: [...out.warnings], results: out.results };
      warnings.push(...out.warnings);
    }
  }

  let llmFindings: Finding[] = [];
  let llm: { passes: number; skippedReason?: string; model?: string; timings: { contextFetch: number; secretsScrub: number; structural: number; detailed: number } } = {
    passes: 0,
    timings: { contextFetch: 0, secretsScrub: 0, structural: 0, detailed: 0 },
  };
  if (opts.enable_llm) {
    const stage = stages.llm;
    if (!stage) {
      warnings.push("LLM enabled but this server has no LLM review stage; skipping LLM pass");
      llm = { ...llm, skippedReason: "missing_runtime" };
    } else {
      const out = await stage(ctx, {
        diff: req.diff,
        files,
        repo,
        headSha: req.head_sha,
        riskScore: preflight.riskScore,
        testsTouched: preflight.testsTouched,
        classification,
        hotspots: preflight.hotspots,
        invariantsForPrompt: invariants.outcome?.promptText ?? "",
        options: {
          llmForce: opts.llm_force,
          twoPass: opts.two_pass,
          riskThreshold: opts.risk_threshold,
          tokenBudget: opts.token_budget,
          maxContextFiles: opts.max_context_files,
          customInstructions: opts.custom_instructions,
          timeoutMs: opts.llm_timeout_ms,
        },
      });
      llmFindings = out.findings;
      llm = { passes: out.passesExecuted, skippedReason: out.skippedReason, model: out.model, timings: out.timings };
      warnings.push(...out.warnings);
    }
  }

  const merged = mergeFindings({
    invariants: invariants.outcome?.findings ?? [],
    staticAnalysis: staticRun.outcome?.findings ?? [],
    llm: llmFindings,
    deterministic,
  });
  const { filtered, findings } = filterFindings(merged, {
    confidenceThreshold: opts.confidence_threshold,
    categories: opts.categories,
    allowlistFindingIds: opts.allowlist_finding_ids,
    maxFindings: opts.max_findings,
  });
  const gate = failurePolicy(filtered, opts.fail_on_severity, opts.fail_on_invariant_ids);
  // A random (v4) UUID as the reference's: SARIF's automationDetails.guid admits only versions 1–5, so not our UUIDv7.
  const runId = crypto.randomUUID();

  const result: ReviewDiffResult = {
    run_id: runId,
    risk_score: preflight.riskScore,
    classification,
    hotspots: preflight.hotspots,
    summary: summaryLine(classification, preflight.riskScore, preflight.changedFiles.length, parsed.linesAdded, parsed.linesRemoved, findings.length, preflight.hotspots),
    findings,
    should_fail: gate.shouldFail,
    fail_reasons: gate.reasons,
    stats: {
      files_changed: preflight.changedFiles.length,
      lines_added: parsed.linesAdded,
      lines_removed: parsed.linesRemoved,
      duration_ms: 0,
      deterministic_checks_executed: DETERMINISTIC_CHECKS + 1,
      invariants_executed: invariants.outcome?.executed ?? 0,
      static_analyzers_executed: staticRun.outcome?.analyzersExecuted ?? 0,
      llm_passes_executed: llm.passes,
      llm_findings_added: llmFindings.length,
      ...(llm.skippedReason !== undefined ? { llm_skipped_reason: llm.skippedReason } : {}),
      timings_ms: {
        preflight: preflightMs,
        invariants: invariants.ms,
        static_analysis: staticRun.ms,
        context_fetch: llm.timings.contextFetch,
        secrets_scrub: llm.timings.secretsScrub,
        llm_structural: llm.timings.structural,
        llm_detailed: llm.timings.detailed,
      },
    },
    metadata: {
      reviewed_at: iso(ctx.clock.now()),
      tool_version: TOOL_VERSION,
      warnings,
      ...(llm.model !== undefined ? { llm_model: llm.model } : {}),
    },
  };
  if (staticAnalysis) result.static_analysis = staticAnalysis;
  if (opts.include_sarif) {
    result.sarif = await toSarif({
      findings,
      runId,
      toolVersion: TOOL_VERSION,
      repositoryUri: repo ? `https://${githubHost(apiBase(ctx.env))}/${repo.owner}/${repo.name}` : undefined,
      revisionId: req.head_sha,
    });
  }
  if (opts.include_markdown) result.markdown = reviewMarkdown(result);
  result.stats.duration_ms = Math.max(0, timer() - started);
  return result;
}
