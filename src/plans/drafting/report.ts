/**
 * The Markdown report create_plan and refine_plan answer with (seed 004): the plan's summary, its
 * steps, what can run in parallel, the critical path, risks and open questions, then the whole
 * plan as JSON in a <details> block for programs.
 */
import type { Plan } from "../document/schema";

export interface ReportFacts {
  plan: Plan;
  status: "ready" | "needs_clarification";
  /** A line on whether and how the plan was saved. */
  saved: string;
  /** Lines on where the plan's code context came from (create_plan). */
  context?: string[];
  /** One line on what a refinement changed. */
  changes?: string;
  model: string;
  warnings: string[];
}

const PRIORITY_MARK = { critical: "🔴", high: "🟠", medium: "🟡", low: "🟢" } as const;
const LIKELIHOOD_MARK = { high: "🔴", medium: "🟠", low: "🟢" } as const;

const list = (title: string, items: readonly string[]) => (items.length > 0 ? [`### ${title}`, ...items.map((i) => `- ${i}`)].join("\n") : "");

export function planReport(r: ReportFacts): string {
  const p = r.plan;
  const head = [
    `# Implementation Plan`,
    [
      `**ID:** ${p.id}`,
      `**Version:** ${p.version}`,
      `**Status:** ${r.status}`,
      ...(p.confidence_score !== undefined ? [`**Confidence:** ${Math.round(p.confidence_score * 100)}%`] : []),
      `**Saved:** ${r.saved}`,
      `**Model:** ${r.model}`,
    ].join("  \n"),
  ];
  const parts = [head.join("\n\n")];
  if (r.context?.length) parts.push(["## Context", ...r.context.map((c) => `- ${c}`)].join("\n"));
  if (r.changes) parts.push(`## Changes\n${r.changes}`);
  parts.push(`## Goal\n${p.goal}`);
  const scope = [list("Included", p.scope.included), list("Excluded", p.scope.excluded), list("Assumptions", p.scope.assumptions)].filter(Boolean);
  if (scope.length > 0) parts.push(["## Scope", ...scope].join("\n"));
  parts.push(
    [
      `## Steps (${p.steps.length} total)`,
      ...p.steps.map((s) =>
        [
          `### ${s.step_number}. ${s.title} ${PRIORITY_MARK[s.priority]}`,
          ...(s.description ? [s.description] : []),
          ...(s.files_to_modify.length ? [`- **Modify:** ${s.files_to_modify.map((f) => f.path).join(", ")}`] : []),
          ...(s.files_to_create.length ? [`- **Create:** ${s.files_to_create.map((f) => f.path).join(", ")}`] : []),
          ...(s.files_to_delete.length ? [`- **Delete:** ${s.files_to_delete.join(", ")}`] : []),
          ...(s.depends_on.length ? [`- **Depends on:** Step(s) ${s.depends_on.join(", ")}`] : []),
          ...(s.estimated_effort ? [`- **Effort:** ${s.estimated_effort}`] : []),
        ].join("\n"),
      ),
    ].join("\n\n"),
  );
  const parallel = p.dependency_graph.parallel_groups.filter((g) => g.length > 1);
  if (parallel.length > 0) parts.push(["## Parallel Execution Opportunities", ...parallel.map((g) => `- Steps ${g.join(", ")} can run in parallel`)].join("\n"));
  if (p.dependency_graph.critical_path.length > 1) parts.push(`## Critical Path\nSteps ${p.dependency_graph.critical_path.join(" → ")}`);
  if (p.risks.length > 0) {
    parts.push(["## Risks", ...p.risks.map((k) => `- ${LIKELIHOOD_MARK[k.likelihood]} **${k.issue}**${k.mitigation ? `\n  - Mitigation: ${k.mitigation}` : ""}`)].join("\n"));
  }
  if (p.questions_for_clarification.length > 0) {
    parts.push(["## ⚠️ Questions Needing Clarification", ...p.questions_for_clarification.map((q) => `- ${q}`), "", "Answer them with refine_plan's clarifications."].join("\n"));
  }
  if (r.warnings.length > 0) parts.push(["## Warnings", ...r.warnings.map((w) => `- ${w}`)].join("\n"));
  parts.push(`---\n\n<details>\n<summary>Full Plan JSON</summary>\n\n\`\`\`json\n${JSON.stringify(p, null, 2)}\n\`\`\`\n</details>`);
  return `${parts.join("\n\n")}\n`;
}
