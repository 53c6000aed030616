/**
 * The one completion interface every language-model pass uses (review, plans). Adapters: the
 * Workers AI binding (production) and an OpenAI-compatible endpoint (by secret); src/llm/index.ts
 * picks one from the environment, or none, in which case LLM paths skip or refuse with
 * llm_not_configured and deterministic paths still work.
 */

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface CompletionRequest {
  messages: ChatMessage[];
  /** Upper bound on generated tokens. */
  maxTokens?: number;
  /** 0 for reviews: the same diff should get the same answer. */
  temperature?: number;
  /** Ask for a JSON object answer where the backend supports it. */
  json?: boolean;
  /** Give up after this long (the call fails with a retryable error). */
  timeoutMs?: number;
}

export interface Completion {
  text: string;
  /** The model that answered, as the backend names it. */
  model: string;
  usage?: { inputTokens?: number; outputTokens?: number };
}

export interface CompletionModel {
  /** Recorded in results (metadata.llm_model). */
  readonly model: string;
  /** "workers-ai" | "openai-compatible" (or a test stand-in's name). */
  readonly provider: string;
  complete(req: CompletionRequest): Promise<Completion>;
}
