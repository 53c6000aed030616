/** scrub_secrets (seed 004's guardrails), in the reference's output shape. */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { scrubSecrets } from "../scanners/secrets";
import { contentField } from "./model";

/** More shown characters than this would un-mask most keys. */
const MAX_SHOWN = 16;

const detectedSchema = z.object({
  type: z.string().describe("The reference's secret type (aws_key, github_token, private_key, api_key, general_secret, …)."),
  pattern: z.string().describe("The gitleaks rule that found it (e.g. github-pat, generic-api-key)."),
  confidence: z.enum(["high", "medium", "low"]).describe("high: a token with its own shape; medium: a value assigned to a provider-named key; low: the generic rule."),
  masked: z.string().describe("The secret as it now reads in scrubbed_content."),
  line: z.number().int().describe("1-based line of the secret."),
});

export const scrubSecretsTool = defineTool({
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
