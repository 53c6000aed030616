/** review_diff's answer as text content, shared by review_diff and review_auto (which wraps it). */
import type { ReviewDiffResult } from "./review-diff";

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
