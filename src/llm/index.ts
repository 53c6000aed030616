/**
 * Which language model this deployment has, if any. An OpenAI-compatible endpoint when its key
 * and base URL are set (an operator chose it deliberately), else the Workers AI binding, else
 * none: LLM paths then refuse with llm_not_configured (or skip, in review_diff) while the
 * deterministic ones keep working.
 */
import type { Env } from "../env";
import { ToolError } from "../core/errors";
import { OpenAiCompatibleModel } from "./openai";
import type { CompletionModel } from "./types";
import { DEFAULT_WORKERS_AI_MODEL, WorkersAiModel } from "./workers-ai";

export function completionModel(env: Env, fetchFn?: typeof fetch): CompletionModel | null {
  if (env.LLM_PROVIDER === "off") return null;
  if (env.LLM_API_KEY && env.LLM_BASE_URL) {
    return new OpenAiCompatibleModel({ apiKey: env.LLM_API_KEY, baseUrl: env.LLM_BASE_URL, model: env.LLM_MODEL ?? "", fetch: fetchFn });
  }
  if (env.AI) return new WorkersAiModel(env.AI, env.LLM_MODEL || DEFAULT_WORKERS_AI_MODEL);
  return null;
}

export const LLM_NOT_CONFIGURED_HINT =
  'An operator configures a model: bind Workers AI (the AI binding, as in wrangler.toml\'s production environment), or set the secret LLM_API_KEY and the var LLM_BASE_URL (an OpenAI-compatible endpoint) with LLM_MODEL; LLM_PROVIDER="off" turns both off.';

/** `instead`: what the caller can do without a model, put before how an operator adds one. */
export const llmNotConfigured = (what: string, instead = "") =>
  new ToolError("llm_not_configured", `${what} needs a language model, and this server has none configured.`, {
    hint: instead ? `${instead} ${LLM_NOT_CONFIGURED_HINT}` : LLM_NOT_CONFIGURED_HINT,
  });

/** The model, or llm_not_configured for a tool that cannot work without one. */
export function requireModel(env: Env, what: string, instead = ""): CompletionModel {
  const model = completionModel(env);
  if (!model) throw llmNotConfigured(what, instead);
  return model;
}
