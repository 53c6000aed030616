/**
 * review_diff's GitHub-flavoured summary (the shape of the reference's output/github.ts): the
 * risk, class, hotspots and gate, the summary line, findings by severity, then the gate's reasons.
 */
import { SEVERITY_RANK, type ChangeType, type Finding } from "./types";

/** Findings listed at most; the rest are counted. */
export const MARKDOWN_MAX_FINDINGS = 20;

export interface MarkdownInput {
  risk_score: number;
  classification: ChangeType;
  hotspots: string[];
  summary: string;
  findings: Finding[];
  should_fail: boolean;
  fail_reasons: string[];
}

/** Prose from findings may hold HTML-looking text; GitHub would render it. */
const escapeText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A code span that survives backticks in its text (a fence one longer than the longest run inside). */
function code(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

export function reviewMarkdown(r: MarkdownInput): string {
  const lines = ["## Code Review Summary", "", `- Risk: **${r.risk_score}/5**`, `- Classification: **${r.classification}**`];
  if (r.hotspots.length > 0) lines.push(`- Hotspots: ${r.hotspots.map(code).join(", ")}`);
  lines.push(`- CI gate: **${r.should_fail ? "FAIL" : "PASS"}**`, "");
  if (r.summary) lines.push(escapeText(r.summary), "");
  // Array.prototype.sort is stable: equal severities keep the pipeline's order.
  const findings = [...r.findings].sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]);
  if (findings.length === 0) {
    lines.push("No findings.");
  } else {
    lines.push("## Findings", "");
    for (const f of findings.slice(0, MARKDOWN_MAX_FINDINGS)) {
      lines.push(`- **${f.severity}** ${code(f.id)} (${f.category}) at ${code(`${f.location.file}:${f.location.startLine}`)}: ${escapeText(f.title)}`);
    }
    if (findings.length > MARKDOWN_MAX_FINDINGS) lines.push("", `(Showing first ${MARKDOWN_MAX_FINDINGS} of ${findings.length} findings.)`);
  }
  if (r.fail_reasons.length > 0) {
    lines.push("", "## CI Gate Reasons", "");
    for (const reason of r.fail_reasons) lines.push(`- ${escapeText(reason)}`);
  }
  return lines.join("\n");
}
