/**
 * Seed 004's error form, for its tools (the code, review and plans toolsets): the text content of a
 * failure is `{"error":{"code":"PLAN_NOT_FOUND","message":…,"details":{…}}}`, with the seed's
 * upper-case codes. structuredContent stays the envelope every tool answers with; `details` carries
 * its code, hint and retryable, so neither reading loses anything. The git tools render seed 002's
 * form through the same errorText hook.
 */
import type { AnyToolDef } from "../core/define-tool";
import type { ErrorBody } from "../core/errors";

/** The seed's codes for ours where it names one; any other code is ours in upper case (LLM_NOT_CONFIGURED). */
const SEED_CODES: Record<string, string> = {
  invalid_input: "INVALID_INPUT",
  file_not_found: "FILE_NOT_FOUND",
  session_not_found: "SESSION_NOT_FOUND",
  timeout: "TIMEOUT",
};

/** Our messages that say which seed code they are (plan ids have no spaces; see src/plans/store/model.ts and src/plans/execution/run.ts). */
const PLAN_NOT_FOUND = /^Plan \S+ not found$/;
const STEP_FAILED = /^Step \d+ failed: /;

export function seed004Code(error: ErrorBody): string {
  if (error.code === "not_found" && PLAN_NOT_FOUND.test(error.message)) return "PLAN_NOT_FOUND";
  if (STEP_FAILED.test(error.message)) return "EXECUTION_FAILED";
  return SEED_CODES[error.code] ?? error.code.toUpperCase();
}

export function seed004ErrorText(error: ErrorBody): string {
  return JSON.stringify({
    error: { code: seed004Code(error), message: error.message, details: { ledger_code: error.code, hint: error.hint, retryable: error.retryable } },
  });
}

/** Seed 004's tools, answering failures in its form. */
export const withSeed004Errors = (tools: readonly AnyToolDef[]): AnyToolDef[] => tools.map((t) => ({ ...t, errorText: seed004ErrorText }));
