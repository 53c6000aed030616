/** run_static_analysis (seed 004 §11, over what GitHub ran). */
import { z } from "zod";
import { githubToolError } from "../../git/credentials";
import { repoField } from "../../git/repo";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { ANALYZER_NAME, analyzerResultSchema, Deadline, DEFAULT_ANALYZERS, DEFAULT_MAX_FINDINGS, DEFAULT_TIMEOUT_MS, readStaticAnalysis, resolveTarget } from "../checks/static-analysis";
import { findingSchema } from "../pipeline/types";
import { DEFAULT_REPO_NOTE, repoOrDefault } from "../target/repo-default";
import { normalizePaths } from "../target/repo-paths";

const MAX_CHANGED_FILES = 1000;

export const runStaticAnalysisTool = defineTool({
  name: "run_static_analysis",
  title: "Static analysis results GitHub has",
  toolset: "review",
  description:
    "Report static-analysis results for a commit as review findings. This server cannot run tsc or semgrep; it reads what GitHub already ran: " +
    "check runs and their annotations (tsc: TypeScript check runs and annotations; failure→HIGH, warning→MEDIUM, notice→LOW) and " +
    "code-scanning alerts (semgrep: Semgrep's alerts, severity from the rule's security severity). Other tools GitHub reports appear in results " +
    "as github:<tool>; ask for them by that name or with 'all' to get their findings. Analyzers GitHub has nothing from are named in warnings.",
  input: z.object({
    repo: repoField.optional().describe(`The repository: owner/name, or a registered repository's id or slug. ${DEFAULT_REPO_NOTE}`),
    ref: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe("Commit sha, branch, tag, or pull request (pull/<n> or #<n>: its head commit, and code scanning's refs/pull/<n>/merge). Default: the default branch's head."),
    changed_files: z
      .array(z.string().min(1).max(1000))
      .max(MAX_CHANGED_FILES)
      .optional()
      .describe(`Only report results in these repository-relative paths (at most ${MAX_CHANGED_FILES}). Default: every path.`),
    options: z
      .object({
        analyzers: z
          .array(z.string().min(3).max(107).regex(ANALYZER_NAME))
          .min(1)
          .max(20)
          .default([...DEFAULT_ANALYZERS])
          .describe("Which analyzers: tsc, semgrep, github:<tool> (a name results lists, e.g. github:CodeQL), or all. Default: ['tsc']."),
        timeout_ms: z
          .number()
          .int()
          .min(1)
          .max(300_000)
          .default(DEFAULT_TIMEOUT_MS)
          .describe("Time allowed for reading GitHub, in ms (the analyzers share their sources, so this bounds the whole call). Default: 60000."),
        max_findings_per_analyzer: z.number().int().min(1).max(200).default(DEFAULT_MAX_FINDINGS).describe("Most findings per analyzer, the most severe kept (1–200). Default: 20."),
        semgrep_args: z.array(z.string().max(200)).max(50).optional().describe("Accepted for the seed's shape; not applicable here (nothing is run), and a warning says so."),
      })
      .optional()
      .describe("Analyzer options."),
  }),
  output: z.object({
    success: z.boolean().describe("False when reading stopped short (timeout_ms, or GitHub failing for a while); warnings say which part."),
    analyzers: z.array(z.string()).describe("The analyzers reported on (with 'all': every one GitHub had)."),
    warnings: z.array(z.string()).describe("Analyzers not available and why, bounds reached, what was not applicable."),
    results: z.array(analyzerResultSchema).describe("Per analyzer: what was read and how much matched; other tools GitHub reports are listed with included false."),
    findings: z.array(findingSchema).describe("Findings in the review finding shape, per analyzer in the order asked, most severe first."),
  }),
  annotations: { ...READ_ONLY, openWorld: true },
  run: async (ctx, input) => {
    const repo = await repoOrDefault(ctx, input.repo);
    const changedFiles = normalizePaths(input.changed_files ?? [], "changed_files");
    const options = input.options ?? { analyzers: [...DEFAULT_ANALYZERS], timeout_ms: DEFAULT_TIMEOUT_MS, max_findings_per_analyzer: DEFAULT_MAX_FINDINGS };
    const deadline = new Deadline(ctx, options.timeout_ms);
    const target = await resolveTarget(ctx, repo, input.ref, deadline);
    try {
      return await readStaticAnalysis(
        ctx,
        target,
        {
          analyzers: options.analyzers,
          changedFiles,
          timeoutMs: options.timeout_ms,
          maxFindingsPerAnalyzer: options.max_findings_per_analyzer,
          semgrepArgs: options.semgrep_args,
        },
        deadline,
      );
    } catch (err) {
      throw githubToolError(err);
    }
  },
  summarize: (r) =>
    `${r.findings.length} finding(s) from ${r.analyzers.join(", ") || "no analyzer"}; ${r.results.filter((x) => x.available).length} analyzer(s) had GitHub results${r.warnings.length ? `; ${r.warnings.length} warning(s)` : ""}.`,
});
