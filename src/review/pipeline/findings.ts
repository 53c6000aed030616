/**
 * What review_diff does with the findings of every stage (the reference's post/findings.ts and
 * post/normalize.ts): merge in a fixed order keeping the first finding of each id, filter,
 * cap, and decide the CI gate on the filtered list before the cap.
 */
import { SEVERITY_RANK, type Finding, type Severity } from "./types";

/** fail_reasons holds at most this many reasons. */
export const MAX_FAIL_REASONS = 20;

export interface StageFindings {
  invariants: Finding[];
  staticAnalysis: Finding[];
  llm: Finding[];
  deterministic: Finding[];
}

/** Invariants, then static analysis, then the LLM, then the preflight; the first finding of an id wins. */
export function mergeFindings(s: StageFindings): Finding[] {
  const seen = new Set<string>();
  return [...s.invariants, ...s.staticAnalysis, ...s.llm, ...s.deterministic].filter((f) => !seen.has(f.id) && (seen.add(f.id), true));
}

export interface FindingFilter {
  confidenceThreshold: number;
  /** Empty or absent: every category. */
  categories?: readonly string[];
  allowlistFindingIds?: readonly string[];
  maxFindings: number;
}

/**
 * Confidence ≥ threshold, then the categories, then the allowlist removed; `filtered` is that
 * list and `findings` its first maxFindings.
 */
export function filterFindings(merged: Finding[], opts: FindingFilter): { filtered: Finding[]; findings: Finding[] } {
  const categories = opts.categories && opts.categories.length > 0 ? new Set(opts.categories) : null;
  const allowlisted = new Set((opts.allowlistFindingIds ?? []).filter(Boolean));
  const filtered = merged
    .filter((f) => f.confidence >= opts.confidenceThreshold)
    .filter((f) => !categories || categories.has(f.category))
    .filter((f) => !allowlisted.has(f.id));
  return { filtered, findings: filtered.slice(0, Math.max(0, opts.maxFindings)) };
}

/**
 * The CI gate: a finding whose id is in failOnIds forces a failure ("Invariant <id> forced-fail");
 * otherwise one at or above failOnSeverity fails it ("<SEV> <id>: <title>").
 */
export function failurePolicy(filtered: Finding[], failOnSeverity: Severity, failOnIds: readonly string[]): { shouldFail: boolean; reasons: string[] } {
  const ids = new Set(failOnIds.filter(Boolean));
  const threshold = SEVERITY_RANK[failOnSeverity];
  const reasons: string[] = [];
  for (const f of filtered) {
    if (ids.has(f.id)) reasons.push(`Invariant ${f.id} forced-fail`);
    else if (SEVERITY_RANK[f.severity] >= threshold) reasons.push(`${f.severity} ${f.id}: ${f.title}`);
  }
  return { shouldFail: reasons.length > 0, reasons: reasons.slice(0, MAX_FAIL_REASONS) };
}
