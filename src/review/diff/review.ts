/** review_diff (seed 004): the deterministic preflight of a unified diff, with optional stages, SARIF and markdown. */
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { reviewDiff, reviewDiffInput, reviewDiffResultSchema } from "../pipeline/review-diff";
import { reviewDiffText } from "../pipeline/result-text";
import { reviewStages } from "../pipeline/wiring";

export const reviewDiffTool = defineTool({
  name: "review_diff",
  title: "Review a diff",
  toolset: "review",
  description:
    "Deterministic review of a unified diff: classification (feature, bugfix, refactor, infra, docs), hotspots, risk 1–5, findings PRE001–PRE005, a CI gate (should_fail), optional SARIF 2.1.0 and markdown. With repo, that repository's review settings apply; invariants, GitHub's static-analysis results and LLM passes run when asked for and available.",
  input: reviewDiffInput,
  output: reviewDiffResultSchema,
  annotations: { ...READ_ONLY, openWorld: true },
  run: (ctx, input) => reviewDiff(ctx, input, reviewStages),
  text: (r) => reviewDiffText(r),
});
