/**
 * review_auto (seed 004 §10): one entry point that picks review_diff when a diff is given and
 * review_git_diff otherwise, answering the stable wrapper {selected_tool, rationale, output}.
 * It runs the chosen tool's own definition, so its validation, defaults and answer are exactly
 * that tool's.
 */
import { z } from "zod";
import { repoField } from "../../git/repo";
import { defineTool, READ_ONLY, type AnyToolDef } from "../../core/define-tool";
import { BRIEF_IN_LISTING } from "../../core/json-schema";
import { invalidInput } from "../../core/errors";
import { runTool } from "../../core/call";
import { reviewDiffTool } from "../diff/review";
import { reviewDiffText } from "../pipeline/result-text";
import { reviewDiffInputShape, reviewDiffOptionsSchema, reviewDiffResultSchema } from "../pipeline/review-diff";
import { reviewGitDiffTool } from "../llm/review";

const gitOptionsSchema = reviewGitDiffTool.input.shape.options.unwrap();

const SELECTABLE = ["review_diff", "review_git_diff"] as const;
type Selected = (typeof SELECTABLE)[number];

const skippedStepSchema = z.object({
  step: z.enum(["llm_pass", "static_analysis"]).describe("The review_diff stage that did not run."),
  reason: z.string().describe("Why."),
});

const input = z.object({
  tool: z
    .enum(["auto", ...SELECTABLE])
    .default("auto")
    .describe("auto (default): review_diff when diff is given, else review_git_diff; or force one."),
  diff: z.string().max(1_000_000).optional().describe("Unified diff text (selects review_diff in auto mode)."),
  changed_files: reviewDiffInputShape.changed_files.describe("review_diff only: paths to review instead of those the diff names."),
  repo: repoField
    .optional()
    .describe(
      "The repository: for review_git_diff, as review_git_diff takes it (default: your run's repository, else the tenant's only one); for review_diff, its review settings and stages apply (extension).",
    ),
  head_sha: reviewDiffInputShape.head_sha.describe("review_diff only: the commit the diff ends at."),
  review_diff_options: reviewDiffOptionsSchema.meta(BRIEF_IN_LISTING).optional().describe("review_diff only: review_diff's options object (seed 004 §7), as review_diff lists it."),
  target: z.string().min(1).max(300).optional().describe('review_git_diff only: "#12", a branch, a commit SHA, "A...B" or "head" (default "staged", which needs a working tree and is refused).'),
  base: z.string().min(1).max(256).optional().describe("review_git_diff only: what a branch or commit is compared against."),
  include_patterns: z.array(z.string().min(1).max(200)).max(50).optional().describe("review_git_diff only: keep files matching these globs."),
  review_git_diff_options: gitOptionsSchema.meta(BRIEF_IN_LISTING).optional().describe("review_git_diff only: review_git_diff's options object, as review_git_diff lists it."),
  response_version: z.enum(["v1", "v2"]).default("v1").describe("v2 adds skipped_steps and requested_by (the reference's second response shape)."),
});

type Input = z.output<typeof input>;

const output = z.object({
  selected_tool: z.enum(SELECTABLE).describe("The tool that ran."),
  rationale: z.string().describe("Why it was chosen."),
  output: z.union([reviewDiffResultSchema, reviewGitDiffTool.output]).describe("review_diff's result, or review_git_diff's {git_info, review}."),
  skipped_steps: z.array(skippedStepSchema).optional().describe("v2: review_diff stages left off by its options."),
  requested_by: z.enum(["default", "config", "user"]).optional().describe("v2: whether those stages were left off by default or by the caller."),
});

function select(args: Input): { selected: Selected; rationale: string } {
  if (args.tool !== "auto") return { selected: args.tool, rationale: `Forced tool: ${args.tool}` };
  if (args.diff?.trim()) return { selected: "review_diff", rationale: "diff provided -> using review_diff" };
  return { selected: "review_git_diff", rationale: "no diff provided -> using review_git_diff" };
}

/** Arguments that belong to the other tool are refused rather than silently ignored (the reference's rule). */
function refuseForeign(selected: Selected, args: Input): void {
  const refuse = (what: string) =>
    invalidInput(
      `${selected} selected; ${what} not applicable`,
      selected === "review_diff"
        ? "Leave out target, base, include_patterns and review_git_diff_options, or pass tool: review_git_diff without a diff."
        : "Leave out diff, changed_files, head_sha and review_diff_options, or pass a diff to review it with review_diff.",
    );
  if (selected === "review_diff") {
    if (args.target !== undefined || args.base !== undefined || (args.include_patterns?.length ?? 0) > 0) throw refuse("git args (target/base/include_patterns) are");
    if (args.review_git_diff_options !== undefined) throw refuse("review_git_diff_options is");
  } else {
    if (args.diff?.trim()) throw refuse("diff argument is");
    if (args.changed_files !== undefined) throw refuse("changed_files is");
    if (args.head_sha !== undefined) throw refuse("head_sha is");
    if (args.review_diff_options !== undefined) throw refuse("review_diff_options is");
  }
}

function v2Metadata(selected: Selected, args: Input): Pick<z.input<typeof output>, "skipped_steps" | "requested_by"> {
  if (selected !== "review_diff") return { skipped_steps: [], requested_by: "config" };
  const o = args.review_diff_options;
  const skipped: z.input<typeof skippedStepSchema>[] = [];
  if (!o?.enable_llm) skipped.push({ step: "llm_pass", reason: "Skipped because review_diff options.enable_llm is disabled." });
  if (!o?.enable_static_analysis) skipped.push({ step: "static_analysis", reason: "Skipped because review_diff options.enable_static_analysis is disabled." });
  return { skipped_steps: skipped, requested_by: o?.enable_llm === false || o?.enable_static_analysis === false ? "user" : "default" };
}

export const reviewAutoTool = defineTool({
  name: "review_auto",
  title: "Review, picking the right tool",
  toolset: "review",
  description:
    "Chooses the review: with a diff, review_diff (deterministic preflight, optional stages); without one, review_git_diff (an LLM review of a pull request, branch or commit on GitHub; repo defaults as review_git_diff's does). tool forces either. Arguments meant for the other tool are refused. Answers {selected_tool, rationale, output}.",
  input,
  output,
  annotations: { ...READ_ONLY, openWorld: true },
  run: async (ctx, args) => {
    const { selected, rationale } = select(args);
    refuseForeign(selected, args);
    const extra = args.response_version === "v2" ? v2Metadata(selected, args) : {};
    if (selected === "review_diff") {
      if (!args.diff?.trim()) throw invalidInput("review_diff selected but no valid diff provided", "Pass diff (a unified diff), or tool: review_git_diff with repo and target.");
      const out = await runTool<z.output<typeof reviewDiffResultSchema>>(reviewDiffTool as AnyToolDef, ctx, {
        diff: args.diff,
        changed_files: args.changed_files,
        repo: args.repo,
        head_sha: args.head_sha,
        options: args.review_diff_options ?? {},
      });
      return { selected_tool: selected, rationale, output: out, ...extra };
    }
    const out = await runTool<z.output<typeof reviewGitDiffTool.output>>(reviewGitDiffTool as AnyToolDef, ctx, {
      repo: args.repo,
      target: args.target,
      base: args.base,
      include_patterns: args.include_patterns,
      options: args.review_git_diff_options,
    });
    return { selected_tool: selected, rationale, output: out, ...extra };
  },
  text: (r) => {
    const head = `${r.selected_tool} (${r.rationale})`;
    if (r.selected_tool === "review_diff") return `${head}\n${reviewDiffText(r.output as z.output<typeof reviewDiffResultSchema>)}`;
    return `${head}\n${reviewGitDiffTool.summarize!(r.output as z.output<typeof reviewGitDiffTool.output>)}`;
  },
});
