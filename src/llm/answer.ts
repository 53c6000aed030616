/**
 * Reading what a model answered: the JSON object in its text, and the error for an answer that
 * cannot be used. Models wrap JSON in fences or prose even in JSON mode, and an answer differs
 * from call to call, so an unusable one is a retryable llm_bad_output, never an empty result.
 */
import { ToolError } from "../core/errors";

/** The first JSON object in a model's answer: bare, or inside a ``` fence, or amid prose. */
export function extractJson(text: string): unknown {
  const candidates = [text.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fenced) candidates.push(fenced[1]!.trim());
  const first = text.indexOf("{");
  const last = text.lastIndexOf("}");
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1));
  for (const c of candidates) {
    try {
      return JSON.parse(c) as unknown;
    } catch {
      // the next candidate
    }
  }
  return undefined;
}

/**
 * The model answered, but not with a usable `what` (a review, a plan). `recover` says what else
 * the caller can do besides retrying.
 */
export const unusableAnswer = (what: string, provider: string, why: string, recover = "") =>
  new ToolError("llm_bad_output", `The model's answer is not a usable ${what}: ${why}.`, {
    hint: `Retry: answers vary between calls. If it keeps failing, the model (${provider}) may not follow JSON instructions well; an operator can choose another with LLM_MODEL.${recover ? ` ${recover}` : ""}`,
    retryable: true,
  });
