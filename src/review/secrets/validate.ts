/** validate_content (seed 004's guardrails), in the reference's output shape. */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { CONTENT_TYPES, TIERS, validateContent } from "../scanners/validate-content";
import { contentField } from "./model";

export const validateContentTool = defineTool({
  name: "validate_content",
  title: "Validate content",
  description:
    "Checks a review finding, a plan (JSON), generated code or plain text before it is shown or stored: secrets (errors), unbalanced brackets, invalid plan JSON, empty content, and for generated code TODO/FIXME markers, console calls, hard-coded URLs; lines over 120 characters. passed is false when any error is found. Reads nothing and stores nothing.",
  toolset: "review",
  input: z.object({
    content: contentField,
    content_type: z.enum(CONTENT_TYPES).default("raw_text").describe("review_finding, plan_output (must be JSON), generated_code (gets the heuristic code checks) or raw_text (default)."),
    file_path: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe("The file the content belongs to: path-specific secret rules (e.g. *.tf passwords) apply, and lockfiles and vendored paths are exempt as in gitleaks."),
    scrub_secrets: z.boolean().default(true).describe("Scan for secrets (default true); each one found is an error finding."),
  }),
  output: z.object({
    success: z.boolean().describe("Always true on success."),
    passed: z.boolean().describe("True when no finding is an error."),
    findings_count: z.number().int().describe("How many findings (at most 100)."),
    by_severity: z
      .object({
        errors: z.number().int().describe("Error findings."),
        warnings: z.number().int().describe("Warning findings."),
        info: z.number().int().describe("Info findings."),
      })
      .describe("Counts per severity."),
    findings: z
      .array(
        z.object({
          id: z.string().describe("Rule id and position (e.g. T1-001-12, secret-40)."),
          severity: z.enum(["error", "warning", "info"]).describe("error, warning or info."),
          category: z.string().describe("security, syntax, schema, content, completeness, best_practices, maintainability or style."),
          rule_id: z.string().describe("SECRET-001, T1-001…T1-003, T2-001…T2-004."),
          message: z.string().describe("What was found (secrets are named by type and rule, never shown)."),
          line: z.number().int().optional().describe("1-based line, when the finding has one."),
          suggestion: z.string().optional().describe("How to fix it, when known."),
        }),
      )
      .describe("Secrets first, then tier 1, then tier 2."),
    secrets_scrubbed: z.boolean().describe("True when secrets were found."),
    processing_time_ms: z.number().describe("Time the checks took."),
    tiers_run: z.array(z.enum(TIERS)).describe("The tiers that ran."),
  }),
  annotations: READ_ONLY,
  async run(_ctx, input) {
    const started = Date.now();
    const r = validateContent({ content: input.content, contentType: input.content_type, filePath: input.file_path }, { scrubSecrets: input.scrub_secrets });
    const count = (s: string) => r.findings.filter((f) => f.severity === s).length;
    return {
      success: true,
      passed: r.passed,
      findings_count: r.findings.length,
      by_severity: { errors: count("error"), warnings: count("warning"), info: count("info") },
      findings: r.findings.map((f) => ({
        id: f.id,
        severity: f.severity,
        category: f.category,
        rule_id: f.ruleId,
        message: f.message,
        ...(f.line !== undefined ? { line: f.line } : {}),
        ...(f.suggestion ? { suggestion: f.suggestion } : {}),
      })),
      secrets_scrubbed: r.secretsFound,
      processing_time_ms: Date.now() - started,
      tiers_run: r.tiersRun,
    };
  },
  summarize: (r) => `${r.passed ? "Passed" : "Failed"}: ${r.by_severity.errors} error(s), ${r.by_severity.warnings} warning(s), ${r.by_severity.info} info.`,
});
