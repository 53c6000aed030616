/** review_changes and review_git_diff (seed 004 §8–9): language-model reviews of a diff, or of a target on GitHub. */
import { z } from "zod";
import { githubFor, githubToolError } from "../../git/credentials";
import { repoField } from "../../git/repo";
import { requireModel } from "../../llm";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { diffForTarget, emptyScope, parseTarget } from "../target/git-target";
import { DEFAULT_REPO_NOTE, repoOrDefault } from "../target/repo-default";
import { DEFAULT_REVIEW_TIMEOUT_MS, REVIEW_CATEGORIES, reviewChanges, type ReviewCategory, type ReviewOptions, type ReviewResult, VERDICTS } from "../llm-review/review-changes";
import { MAX_DIFF_CHARS } from "../unified-diff/parse";

const MAX_FILE_CONTEXTS_CHARS = 1_000_000;

const findingOut = z.object({
  id: z.string().describe("The finding's id, as the model gave it."),
  title: z.string().describe("One line (at most 80 characters)."),
  body: z.string().describe("What is wrong and why it matters."),
  confidence_score: z.number().describe("0–1."),
  priority: z.number().int().describe("0 (P0, must fix before merge) to 3 (P3, a nicety)."),
  category: z.enum(REVIEW_CATEGORIES).describe("correctness, security, performance, maintainability, style or documentation."),
  code_location: z
    .object({
      file_path: z.string().describe("Path in the diff."),
      line_range: z.object({ start: z.number().int().describe("First line (new file)."), end: z.number().int().describe("Last line (inclusive).") }).describe("Lines of the new file."),
    })
    .describe("Where."),
  suggestion: z
    .object({
      description: z.string().describe("How to fix it."),
      code_snippet: z.string().optional().describe("Example code."),
      can_auto_fix: z.boolean().describe("Whether the fix could be applied mechanically."),
    })
    .optional()
    .describe("A fix, when the model offered one."),
  is_on_changed_line: z.boolean().describe("Whether the lines include a changed (+) line of the diff; computed here from the diff."),
});

const reviewResultShape = {
  findings: z.array(findingOut).describe("Findings after the filters, P0 first."),
  overall_correctness: z.enum(VERDICTS).describe('"patch is correct", "patch is incorrect" or "needs attention".'),
  overall_explanation: z.string().describe("The model's summary of the review."),
  overall_confidence_score: z.number().describe("0–1."),
  changes_summary: z
    .object({
      files_changed: z.number().int().describe("Files reviewed (after exclude_patterns)."),
      lines_added: z.number().int().describe("Lines added in them."),
      lines_removed: z.number().int().describe("Lines removed in them."),
    })
    .describe("What the diff changes."),
  metadata: z
    .object({
      reviewed_at: z.string().describe("When (UTC ISO-8601)."),
      review_duration_ms: z.number().int().describe("How long the review took."),
      model_used: z.string().describe("provider:model that answered."),
      tool_version: z.string().describe("The reference's review service version."),
      findings_filtered: z.number().int().describe("Findings the model gave that the filters (threshold, changed lines, categories, excluded files, max_findings) left out."),
      confidence_threshold: z.number().describe("The threshold applied."),
      categories_reviewed: z.array(z.enum(REVIEW_CATEGORIES)).describe("Categories kept."),
      warnings: z.array(z.string()).describe("What to know about this review: masked secrets, excluded or cut input, malformed findings dropped (extension)."),
    })
    .describe("How the review was made."),
};
const reviewResultSchema = z.object(reviewResultShape);

const thresholdField = z.number().min(0).max(1).default(0.7).describe("Minimum confidence_score (0–1) a finding needs (default 0.7).");
const maxFindingsField = z.number().int().min(1).max(100).default(20).describe("Findings returned at most (1–100, default 20).");
const changedLinesField = z.boolean().default(true).describe("Only findings on changed lines (P0 findings always kept; default true).");
const instructionsField = z.string().max(10_000).optional().describe('Extra instructions for the reviewer (e.g. "focus on React best practices"); at most 10,000 characters.');
const timeoutField = z.number().int().min(1000).max(300_000).optional().describe(`How long the model may take, in ms (1000–300000, default ${DEFAULT_REVIEW_TIMEOUT_MS}).`);

function summarize(r: { overall_correctness: string; findings: { priority: number }[]; changes_summary: ReviewResult["changes_summary"] }): string {
  const by = [0, 1, 2, 3]
    .map((p) => [p, r.findings.filter((f) => f.priority === p).length] as const)
    .filter(([, n]) => n > 0)
    .map(([p, n]) => `P${p} ${n}`);
  return `${r.overall_correctness}: ${r.findings.length} finding(s)${by.length ? ` (${by.join(", ")})` : ""} in ${r.changes_summary.files_changed} file(s), +${r.changes_summary.lines_added}/-${r.changes_summary.lines_removed}.`;
}

function categoriesFrom(text: string | undefined): ReviewCategory[] | null {
  if (text === undefined || text.trim() === "") return null;
  const list = [
    ...new Set(
      text
        .split(",")
        .map((c) => c.trim())
        .filter(Boolean),
    ),
  ];
  for (const c of list) {
    if (!(REVIEW_CATEGORIES as readonly string[]).includes(c))
      throw invalidInput(`Invalid category: "${c.slice(0, 60)}". Valid: ${REVIEW_CATEGORIES.join(", ")}`, "Pass categories as a comma-separated list of those names.");
  }
  return list as ReviewCategory[];
}

function fileContextsFrom(text: string | undefined): Record<string, string> {
  if (text === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidInput('Invalid "file_contexts" JSON format', 'Pass a JSON object as a string: {"path/to/file.ts": "its content", …}.');
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw invalidInput('Invalid "file_contexts" JSON format: expected an object map of file path to content', 'Pass {"path": "content", …}.');
  }
  const entries = Object.entries(parsed);
  if (entries.some(([path, content]) => !path || typeof content !== "string")) {
    throw invalidInput('Invalid "file_contexts" JSON format: all values must be strings', "Each key is a file path and each value that file's text.");
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

export const reviewChangesTool = defineTool({
  name: "review_changes",
  title: "LLM review of a diff",
  description:
    "Language-model review of a unified diff, answered as a ReviewResult: findings (P0–P3 priority, category, confidence, location, suggested fix), an overall verdict and explanation, a summary of the changes, metadata. Secret-shaped text is masked before the model sees the diff or file contexts. Findings are filtered by confidence_threshold, categories, changed lines and exclude_patterns, then capped. A different pipeline than review_diff. Needs a configured model (else llm_not_configured); an unreadable answer is llm_bad_output (retryable).",
  toolset: "review",
  input: z.object({
    diff: z.string().max(MAX_DIFF_CHARS).describe(`The unified diff to review (git diff output), at most ${MAX_DIFF_CHARS} characters.`),
    file_contexts: z.string().max(MAX_FILE_CONTEXTS_CHARS).optional().describe('Optional JSON object as a string, file path → content, for context beyond the diff (e.g. {"src/a.ts": "…"}).'),
    base_ref: z.string().max(200).optional().describe("The base branch or commit the diff is against, for the reviewer's context."),
    confidence_threshold: thresholdField,
    max_findings: maxFindingsField,
    categories: z
      .string()
      .max(200)
      .optional()
      .describe(`Comma-separated categories to keep (${REVIEW_CATEGORIES.join(", ")}); default all.`),
    changed_lines_only: changedLinesField,
    custom_instructions: instructionsField,
    exclude_patterns: z.string().max(2000).optional().describe('Comma-separated globs of files to leave out of the review (e.g. "*.test.ts,docs/**").'),
    llm_timeout_ms: timeoutField,
  }),
  output: reviewResultSchema,
  annotations: { ...READ_ONLY, openWorld: true },
  run: async (ctx, input) => {
    const options: ReviewOptions = {
      confidenceThreshold: input.confidence_threshold,
      maxFindings: input.max_findings,
      categories: categoriesFrom(input.categories),
      changedLinesOnly: input.changed_lines_only,
      customInstructions: input.custom_instructions ?? "",
      excludePatterns: (input.exclude_patterns ?? "")
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean),
      timeoutMs: input.llm_timeout_ms ?? DEFAULT_REVIEW_TIMEOUT_MS,
    };
    const fileContexts = fileContextsFrom(input.file_contexts);
    const model = requireModel(ctx.env, "review_changes");
    return reviewChanges(model, { diff: input.diff, fileContexts, baseRef: input.base_ref?.trim() || undefined, options }, () => ctx.clock.now());
  },
  summarize,
});

export const reviewGitDiffTool = defineTool({
  name: "review_git_diff",
  title: "LLM review of a pull request, branch or commit",
  description:
    'Fetches a diff from GitHub and reviews it as review_changes does. target: a pull request ("#12", "pr:12", or a bare number of up to six digits), a branch (compared with base, default the default branch), a commit SHA (against its parent, or base), a range "A...B", or "head" (the default branch\'s last commit). "staged"/"unstaged" (the seed\'s default) have no meaning without a working tree: unsupported_target. include_patterns keeps only matching files. Answers {git_info, review}.',
  toolset: "review",
  input: z.object({
    repo: repoField.optional().describe(`The repository: owner/name, or a registered repository's id or slug. ${DEFAULT_REPO_NOTE}`),
    target: z
      .string()
      .min(1)
      .max(300)
      .default("staged")
      .describe('"#12"/"pr:12"/"12" (pull request; 7+ bare digits are a SHA), a branch, a commit SHA, "A...B", or "head"; "staged"/"unstaged" (default "staged") are refused.'),
    base: z.string().min(1).max(256).optional().describe("For a branch or commit target: what to compare against (default for a branch: the default branch)."),
    include_patterns: z.array(z.string().min(1).max(200)).max(50).optional().describe('Only files matching one of these globs (e.g. "src/**", "*.ts").'),
    options: z
      .object({
        confidence_threshold: thresholdField,
        max_findings: maxFindingsField,
        categories: z.array(z.enum(REVIEW_CATEGORIES)).max(REVIEW_CATEGORIES.length).optional().describe("Categories to keep; default all."),
        changed_lines_only: changedLinesField,
        custom_instructions: instructionsField,
        exclude_patterns: z.array(z.string().min(1).max(200)).max(50).optional().describe("Globs of files to leave out of the review."),
        llm_timeout_ms: timeoutField,
      })
      .strict()
      .optional()
      .describe("Review options, as review_changes takes them (categories and exclude_patterns as lists)."),
  }),
  output: z.object({
    git_info: z
      .object({
        repo: z.string().describe("owner/name."),
        target: z.string().describe("The target as given."),
        base: z.string().optional().describe("The base as given."),
        resolved: z.string().describe('What GitHub compared (e.g. "main...feature", "pull request #12").'),
        command: z.string().describe("The GitHub read that listed the changed files."),
        note: z.string().optional().describe("How GitHub's comparison differs from git's, when it does."),
        files_changed: z.array(z.string()).describe("Files reviewed (after include_patterns), sorted."),
        stats: z
          .object({
            additions: z.number().int().describe("Lines added."),
            deletions: z.number().int().describe("Lines deleted."),
            files_count: z.number().int().describe("Files."),
          })
          .describe("As GitHub counts them."),
      })
      .describe("Where the diff came from."),
    review: reviewResultSchema.describe("The review, as review_changes answers it."),
  }),
  annotations: { ...READ_ONLY, openWorld: true },
  run: async (ctx, input) => {
    const target = parseTarget(input.target, input.base);
    const o = input.options;
    const options: ReviewOptions = {
      confidenceThreshold: o?.confidence_threshold ?? 0.7,
      maxFindings: o?.max_findings ?? 20,
      categories: o?.categories?.length ? [...new Set(o.categories)] : null,
      changedLinesOnly: o?.changed_lines_only ?? true,
      customInstructions: o?.custom_instructions ?? "",
      excludePatterns: o?.exclude_patterns ?? [],
      timeoutMs: o?.llm_timeout_ms ?? DEFAULT_REVIEW_TIMEOUT_MS,
    };
    const model = requireModel(ctx.env, "review_git_diff");
    const r = await repoOrDefault(ctx, input.repo);
    let source;
    try {
      source = await diffForTarget({ ctx, gh: githubFor(ctx.env, ctx.tenantId) }, r, target, input.base, input.include_patterns ?? []);
    } catch (err) {
      throw githubToolError(err);
    }
    if (source.files.length === 0) throw emptyScope(input.target, source);
    const review = await reviewChanges(model, { diff: source.diff, baseRef: input.base, options, warnings: source.warnings }, () => ctx.clock.now());
    return {
      git_info: {
        repo: `${r.owner}/${r.name}`,
        target: input.target,
        base: input.base,
        resolved: source.resolved,
        command: source.command,
        note: source.note,
        files_changed: source.files,
        stats: source.stats,
      },
      review,
    };
  },
  summarize: (r) => `${r.git_info.repo} ${r.git_info.resolved}: ${summarize(r.review)}`,
});
