/** review_diff (seed 004): the deterministic preflight of a unified diff, with optional stages, SARIF and markdown. */
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { reviewDiff, reviewDiffInput, reviewDiffResultSchema, type ReviewDiffResult } from "../pipeline/review-diff";
import { reviewStages } from "../pipeline/wiring";

export { reviewDiffInputShape, reviewDiffOptionsSchema, reviewDiffResultSchema, type ReviewDiffOptions } from "../pipeline/review-diff";

/** The findings listed in the text content; structuredContent has them all. */
const TEXT_FINDINGS = 20;

export function reviewDiffText(r: ReviewDiffResult): string {
  const lines = [r.summary, r.should_fail ? `CI gate: FAIL (${r.fail_reasons.length} reason${r.fail_reasons.length === 1 ? "" : "s"})` : "CI gate: pass"];
  for (const f of r.findings.slice(0, TEXT_FINDINGS)) {
    lines.push(`- ${f.severity} ${f.id} (${f.category}) ${f.location.file}:${f.location.startLine}: ${f.title}`);
  }
  if (r.findings.length > TEXT_FINDINGS) lines.push(`… and ${r.findings.length - TEXT_FINDINGS} more in structuredContent.findings`);
  if (r.metadata.warnings.length > 0) lines.push(`Warnings: ${r.metadata.warnings.join("; ")}`);
  return lines.join("\n");
}

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
