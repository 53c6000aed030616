/**
 * The shapes every review tool shares (seed 004; the reference implementation's
 * src/reviewer/types.ts): a finding of review_diff, check_invariants and run_static_analysis, and
 * the severity order the CI gate uses.
 */
import { z } from "zod";

export const SEVERITIES = ["CRITICAL", "HIGH", "MEDIUM", "LOW", "INFO"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** CRITICAL 5 > HIGH 4 > MEDIUM 3 > LOW 2 > INFO 1 (the reference's order for fail_on_severity). */
export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { CRITICAL: 5, HIGH: 4, MEDIUM: 3, LOW: 2, INFO: 1 };

export const CATEGORIES = ["correctness", "security", "performance", "maintainability", "style", "documentation", "reliability", "architecture", "infra"] as const;
export type Category = (typeof CATEGORIES)[number];

export const CHANGE_TYPES = ["feature", "bugfix", "refactor", "infra", "docs"] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

export const locationSchema = z.object({
  file: z.string().describe("Path in the repository."),
  startLine: z.number().int().describe("First line (1-based)."),
  endLine: z.number().int().optional().describe("Last line (inclusive)."),
});

export const findingSchema = z.object({
  id: z.string().describe("Stable id: PRE001–PRE005, SEC001:<rule>:<file>:<line> (a secret on an added line), an invariant id, an analyzer's rule id, or an LLM finding id."),
  severity: z.enum(SEVERITIES).describe("CRITICAL, HIGH, MEDIUM, LOW or INFO."),
  category: z.enum(CATEGORIES).describe("What kind of problem."),
  confidence: z.number().min(0).max(1).describe("0–1."),
  title: z.string().describe("One line."),
  location: locationSchema.describe("Where."),
  evidence: z.array(z.string()).describe("What shows it (a matched rule, an analyzer message)."),
  impact: z.string().describe("Why it matters."),
  recommendation: z.string().describe("What to do."),
  suggested_patch: z.string().optional().describe("A patch that fixes it, when one is known."),
});
export type Finding = z.infer<typeof findingSchema>;
