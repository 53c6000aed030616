/** scrub_secrets and validate_content (seed 004's guardrails), in the reference's output shapes. */
import { z } from "zod";
import { defineTool, READ_ONLY, type AnyToolDef } from "../../core/define-tool";
import { scrubSecrets } from "../scanners/secrets";
import { CONTENT_TYPES, TIERS, validateContent } from "../scanners/validate-content";

/** The reference's MAX_CONTENT_LENGTH for both tools. */
export const MAX_CONTENT = 1_000_000;
/** More shown characters than this would un-mask most keys. */
const MAX_SHOWN = 16;

const contentField = z.string().min(1).max(MAX_CONTENT).describe(`The text to scan (at most ${MAX_CONTENT} characters).`);

const detectedSchema = z.object({
  type: z.string().describe("The reference's secret type (aws_key, github_token, private_key, api_key, general_secret, …)."),
  pattern: z.string().describe("The gitleaks rule that found it (e.g. github-pat, generic-api-key)."),
  confidence: z.enum(["high", "medium", "low"]).describe("high: a token with its own shape; medium: a value assigned to a provider-named key; low: the generic rule."),
  masked: z.string().describe("The secret as it now reads in scrubbed_content."),
  line: z.number().int().describe("1-based line of the secret."),
});

const scrub = defineTool({
  name: "scrub_secrets",
  title: "Scrub secrets",
  description:
    "Masks secrets in text before it goes to an LLM, a log or a comment: API keys and tokens of ~200 providers, private keys, JWTs and credentials assigned in config (gitleaks' rule set, run in linear time). Each secret keeps its first show_start and last show_end characters; the rest becomes at most 20 '*'. Reads nothing and stores nothing.",
  toolset: "review",
  input: z.object({
    content: contentField,
    show_start: z.number().int().min(0).max(MAX_SHOWN).default(4).describe(`Characters of each secret left visible at its start (default 4, at most ${MAX_SHOWN}).`),
    show_end: z.number().int().min(0).max(MAX_SHOWN).default(0).describe(`Characters left visible at its end (default 0, at most ${MAX_SHOWN}).`),
  }),
  output: z.object({
    success: z.boolean().describe("Always true on success."),
    scrubbed_content: z.string().describe("The content with every secret masked."),
    secrets_found: z.boolean().describe("True when anything was masked."),
    secrets_count: z.number().int().describe("How many secrets were masked."),
    detected_types: z.array(detectedSchema).describe("One per secret, in text order."),
    truncated: z.boolean().describe("True when the text woke more secret rules than one call runs: some rules were not run, so it may still hold secrets (see note)."),
    note: z.string().optional().describe("Which rules were not run, when truncated."),
    processing_time_ms: z.number().describe("Time the scan took."),
  }),
  annotations: READ_ONLY,
  async run(_ctx, input) {
    const started = Date.now();
    const r = scrubSecrets(input.content, { showStart: input.show_start, showEnd: input.show_end });
    return {
      success: true,
      scrubbed_content: r.text,
      secrets_found: r.secrets.length > 0,
      secrets_count: r.secrets.length,
      detected_types: r.secrets.map((s) => ({ type: s.type, pattern: s.pattern, confidence: s.confidence, masked: s.masked, line: s.line })),
      truncated: r.truncated,
      ...(r.note ? { note: r.note } : {}),
      processing_time_ms: Date.now() - started,
    };
  },
  summarize: (r) =>
    `${r.secrets_count === 0 ? "No secrets found." : `${r.secrets_count} secret(s) masked: ${[...new Set(r.detected_types.map((d) => d.pattern))].join(", ")}.`}${r.note ? ` Scan cut: ${r.note}.` : ""}`,
});

const validate = defineTool({
  name: "validate_content",
  title: "Validate content",
  description:
    "Checks a review finding, a plan (JSON), generated code or plain text before it is shown or stored: secrets (errors), unbalanced brackets, invalid plan JSON, empty content, and for generated code TODO/FIXME markers, console calls, hard-coded URLs; lines over 120 characters. passed is false when any error is found. Reads nothing and stores nothing.",
  toolset: "review",
  input: z.object({
    content: contentField,
    content_type: z.enum(CONTENT_TYPES).default("raw_text").describe("review_finding, plan_output (must be JSON), generated_code (gets the heuristic code checks) or raw_text (default)."),
    file_path: z.string().min(1).max(1024).optional().describe("The file the content belongs to: path-specific secret rules (e.g. *.tf passwords) apply, and lockfiles and vendored paths are exempt as in gitleaks."),
    scrub_secrets: z.boolean().default(true).describe("Scan for secrets (default true); each one found is an error finding."),
  }),
  output: z.object({
    success: z.boolean().describe("Always true on success."),
    passed: z.boolean().describe("True when no finding is an error."),
    findings_count: z.number().int().describe("How many findings (at most 100)."),
    by_severity: z.object({
      errors: z.number().int().describe("Error findings."),
      warnings: z.number().int().describe("Warning findings."),
      info: z.number().int().describe("Info findings."),
    }).describe("Counts per severity."),
    findings: z.array(z.object({
      id: z.string().describe("Rule id and position (e.g. T1-001-12, secret-40)."),
      severity: z.enum(["error", "warning", "info"]).describe("error, warning or info."),
      category: z.string().describe("security, syntax, schema, content, completeness, best_practices, maintainability or style."),
      rule_id: z.string().describe("SECRET-001, T1-001…T1-003, T2-001…T2-004."),
      message: z.string().describe("What was found (secrets are named by type and rule, never shown)."),
      line: z.number().int().optional().describe("1-based line, when the finding has one."),
      suggestion: z.string().optional().describe("How to fix it, when known."),
    })).describe("Secrets first, then tier 1, then tier 2."),
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
        id: f.id, severity: f.severity, category: f.category, rule_id: f.ruleId, message: f.message,
        ...(f.line !== undefined ? { line: f.line } : {}), ...(f.suggestion ? { suggestion: f.suggestion } : {}),
      })),
      secrets_scrubbed: r.secretsFound,
      processing_time_ms: Date.now() - started,
      tiers_run: r.tiersRun,
    };
  },
  summarize: (r) => `${r.passed ? "Passed" : "Failed"}: ${r.by_severity.errors} error(s), ${r.by_severity.warnings} warning(s), ${r.by_severity.info} info.`,
});

export const secretTools: AnyToolDef[] = [scrub, validate];
