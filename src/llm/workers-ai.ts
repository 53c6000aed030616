/**
 * Completions through the Workers AI binding (`env.AI.run(model, { messages, … })`), the
 * production default: no key to keep, billed to the account the Worker runs in. JSON mode is
 * Workers AI's `response_format: { type: "json_object" }`; in that mode the answer's `response`
 * may arrive already parsed, as an object.
 */
import type { Completion, CompletionModel, CompletionRequest } from "./types";
import {
  backendWords,
  DEFAULT_MAX_TOKENS,
  DEFAULT_TIMEOUT_MS,
  llmMalformed,
  llmRejected,
  llmTimeout,
  llmUnavailable,
  realSleep,
  RetryableFailure,
  type RetryPolicy,
  withRetries,
  withTimeout,
} from "./common";

/** The chat input of Workers AI's text-generation models, as this adapter sends it. */
/**
 * The slice of the Workers AI binding this server uses: `env.AI.run` for chat completions here,
 * and for text embeddings in src/search/embedder.ts (one binding serves both).
 */
export interface AiBinding {
  run(model: string, input: { text: string[] } | AiChatInput, options?: AiRunOptions): Promise<unknown>;
}

export interface AiChatInput {
  messages: { role: "system" | "user" | "assistant"; content: string }[];
  max_tokens?: number;
  temperature?: number;
  response_format?: { type: "json_object" };
}

/** The binding's third argument; `signal` aborts the inference. */
export interface AiRunOptions {
  signal?: AbortSignal;
}

/** An instruction model that supports JSON mode on Workers AI; wrangler.toml's LLM_MODEL names it too. */
export const DEFAULT_WORKERS_AI_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";

const PROVIDER = "workers-ai";

/**
 * Workers AI reports failures as errors whose message starts with its internal code
 * (developers.cloudflare.com/workers-ai/platform/errors). Capacity (3040), its own timeout
 * (3007) and internal errors (3043) pass; the rest are about the request or the account.
 */
const TRANSIENT = /\b(3040|3007|3043)\b|capacity|temporarily|internal server error|upstream/i;
const ALLOCATION = /\b(3036|4006)\b|daily free allocation|neurons/i;
const NO_MODEL = /\b(5007|3042)\b|no such model|invalid model/i;
const TOO_LARGE = /\b3006\b|too large/i;
const JSON_MODE = /json mode couldn'?t be met/i;

export class WorkersAiModel implements CompletionModel {
  readonly provider = PROVIDER;
  private readonly policy: RetryPolicy;

  constructor(
    private readonly ai: AiBinding,
    readonly model: string = DEFAULT_WORKERS_AI_MODEL,
    policy: Partial<RetryPolicy> = {},
  ) {
    this.policy = { attempts: 3, maxWaitMs: 10_000, sleep: realSleep, ...policy };
  }

  async complete(req: CompletionRequest): Promise<Completion> {
    const input: AiChatInput = {
      messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
      max_tokens: req.maxTokens ?? DEFAULT_MAX_TOKENS,
      temperature: req.temperature ?? 0,
      ...(req.json ? { response_format: { type: "json_object" as const } } : {}),
    };
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const result = await withTimeout(
      timeoutMs,
      (signal) =>
        withRetries(this.policy, async (attempt) => {
          // Given up on already: no more attempts behind the caller's back.
          if (signal.aborted) throw llmTimeout(PROVIDER, timeoutMs);
          try {
            return await this.ai.run(this.model, input, { signal });
          } catch (err) {
            throw this.failure(err, attempt);
          }
        }),
      () => llmTimeout(PROVIDER, timeoutMs),
    );
    return this.read(result);
  }

  private failure(err: unknown, attempt: number): Error {
    const words = backendWords(err instanceof Error ? err.message : String(err));
    if (JSON_MODE.test(words)) return llmMalformed(PROVIDER, `the model could not keep to JSON (${words})`);
    if (ALLOCATION.test(words)) {
      return llmRejected(
        PROVIDER,
        words,
        "The account's Workers AI allocation is used up: wait for it to renew, move to the Workers Paid plan, or configure LLM_API_KEY and LLM_BASE_URL for another endpoint.",
      );
    }
    if (NO_MODEL.test(words)) return llmRejected(PROVIDER, words, `Set LLM_MODEL to a Workers AI text-generation model (e.g. ${DEFAULT_WORKERS_AI_MODEL}).`);
    if (TOO_LARGE.test(words)) return llmRejected(PROVIDER, words, "Send a smaller diff (exclude_patterns, include_patterns) or fewer file contexts.");
    if (TRANSIENT.test(words)) return new RetryableFailure(llmUnavailable(PROVIDER, words), 500 * 3 ** (attempt - 1));
    return llmRejected(PROVIDER, words, "Check LLM_MODEL and the AI binding; the error above is Workers AI's own.");
  }

  private read(result: unknown): Completion {
    if (typeof result === "string") return { text: result, model: this.model };
    if (result === null || typeof result !== "object" || !("response" in result)) {
      throw llmMalformed(PROVIDER, "no `response` in the answer");
    }
    const { response, usage } = result as { response: unknown; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } };
    // JSON mode hands the object over parsed; the callers read text, so give it back as JSON.
    const text = typeof response === "string" ? response : response !== null && typeof response === "object" ? JSON.stringify(response) : null;
    if (text === null) throw llmMalformed(PROVIDER, "`response` is neither text nor an object");
    const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
    return {
      text,
      model: this.model,
      usage: usage ? { inputTokens: num(usage.prompt_tokens), outputTokens: num(usage.completion_tokens) } : undefined,
    };
  }
}
