/**
 * Completions from any OpenAI-compatible Chat Completions endpoint (OpenAI itself, Azure's and
 * Cloudflare's compatible routes, vLLM, Ollama, OpenRouter, …): `POST {base}/chat/completions`
 * with a bearer key. Rate limits and server errors are retried a bounded number of times,
 * honouring `retry-after`; the key never appears in an error, even when the backend quotes it.
 */
import { ToolError } from "../core/errors";
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

const PROVIDER = "openai-compatible";

export interface OpenAiCompatibleConfig {
  apiKey: string;
  /** e.g. https://api.openai.com/v1; `/chat/completions` is appended. */
  baseUrl: string;
  model: string;
  fetch?: typeof fetch;
  policy?: Partial<RetryPolicy>;
}

interface ChatCompletionBody {
  model?: unknown;
  choices?: { message?: { content?: unknown; refusal?: unknown } }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
}

/** https anywhere; plain http only to this machine (a local vLLM or Ollama). */
function endpointOf(baseUrl: string): URL | null {
  let url: URL;
  try {
    url = new URL(`${baseUrl.replace(/\/+$/, "")}/chat/completions`);
  } catch {
    return null;
  }
  if (url.username || url.password) return null;
  if (url.protocol === "https:") return url;
  return url.protocol === "http:" && /^(localhost|127\.0\.0\.1|\[::1\])$/.test(url.hostname) ? url : null;
}

/** `retry-after-ms` (OpenAI's own), else `retry-after` in seconds or as an HTTP date. */
function retryAfterMs(headers: Headers, now = Date.now()): number | null {
  const ms = Number(headers.get("retry-after-ms"));
  if (ms > 0) return ms;
  const after = headers.get("retry-after");
  if (!after) return null;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(after);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The `error` object OpenAI documents for failures: `{ error: { message, type, param, code } }`. */
function errorOf(text: string): { message: string; code: string } {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; code?: unknown; type?: unknown } | string };
    if (typeof body.error === "string") return { message: body.error, code: "" };
    const message = typeof body.error?.message === "string" ? body.error.message : "";
    const code = typeof body.error?.code === "string" ? body.error.code : typeof body.error?.type === "string" ? body.error.type : "";
    return { message, code };
  } catch {
    return { message: text.slice(0, 300), code: "" };
  }
}

export class OpenAiCompatibleModel implements CompletionModel {
  readonly provider = PROVIDER;
  readonly model: string;
  private readonly endpoint: URL | null;
  private readonly apiKey: string;
  private readonly fetchFn: typeof fetch;
  private readonly policy: RetryPolicy;

  constructor(config: OpenAiCompatibleConfig) {
    this.model = config.model;
    this.apiKey = config.apiKey;
    this.endpoint = endpointOf(config.baseUrl);
    this.fetchFn = config.fetch ?? ((input, init) => fetch(input, init));
    this.policy = { attempts: 3, maxWaitMs: 20_000, sleep: realSleep, ...config.policy };
  }

  async complete(req: CompletionRequest): Promise<Completion> {
    const endpoint = this.endpoint;
    if (!endpoint) {
      throw new ToolError("llm_not_configured", "LLM_BASE_URL is not a usable endpoint.", {
        hint: "Set LLM_BASE_URL to the API's base, e.g. https://api.openai.com/v1 (https; plain http only for localhost, no credentials in the URL).",
      });
    }
    if (!this.model) {
      throw new ToolError("llm_not_configured", "LLM_MODEL is not set, so there is no model to ask at LLM_BASE_URL.", {
        hint: "Set the var LLM_MODEL to a model the endpoint serves (e.g. gpt-4o-mini for OpenAI).",
      });
    }
    const body = JSON.stringify({
      model: this.model,
      messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
      max_tokens: req.maxTokens ?? DEFAULT_MAX_TOKENS,
      temperature: req.temperature ?? 0,
      ...(req.json ? { response_format: { type: "json_object" } } : {}),
    });
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const answer = await withTimeout(
      timeoutMs,
      (signal) =>
        withRetries(this.policy, async (attempt) => {
          if (signal.aborted) throw llmTimeout(PROVIDER, timeoutMs);
          let res: Response;
          try {
            res = await this.fetchFn(endpoint.href, {
              method: "POST",
              headers: { Authorization: `Bearer ${this.apiKey}`, "Content-Type": "application/json", Accept: "application/json" },
              body,
              signal,
            });
          } catch (err) {
            if (signal.aborted) throw llmTimeout(PROVIDER, timeoutMs);
            throw new RetryableFailure(llmUnavailable(PROVIDER, `${endpoint.host} could not be reached (${this.words(err instanceof Error ? err.message : String(err))})`), 1000 * attempt);
          }
          if (res.ok) {
            try {
              return (await res.json()) as ChatCompletionBody;
            } catch {
              throw llmMalformed(PROVIDER, "the answer is not JSON");
            }
          }
          throw this.failure(res, await res.text().catch(() => ""), attempt);
        }),
      () => llmTimeout(PROVIDER, timeoutMs),
    );
    return this.read(answer);
  }

  /** Backend text made safe to show: the key cut out wherever it is quoted, other secrets masked. */
  private words(text: string): string {
    return backendWords(this.apiKey ? text.split(this.apiKey).join("[key]") : text);
  }

  private failure(res: Response, text: string, attempt: number): Error {
    const { message, code } = errorOf(text);
    const detail = `HTTP ${res.status}${code ? ` ${this.words(code)}` : ""}: ${this.words(message || res.statusText)}`;
    // A 429 for an exhausted quota (OpenAI's insufficient_quota) does not lift by waiting seconds.
    if (res.status === 429 && code === "insufficient_quota") {
      return llmRejected(PROVIDER, detail, "The account behind LLM_API_KEY has no quota left: add credit or point LLM_API_KEY/LLM_BASE_URL at another account.");
    }
    if (res.status === 429 || res.status >= 500) {
      return new RetryableFailure(llmUnavailable(PROVIDER, detail), retryAfterMs(res.headers) ?? 1000 * 2 ** (attempt - 1));
    }
    if (res.status === 401 || res.status === 403) {
      return llmRejected(PROVIDER, detail, "The endpoint refused LLM_API_KEY: an operator should set a valid key (wrangler secret put LLM_API_KEY).");
    }
    if (res.status === 404) return llmRejected(PROVIDER, detail, "Check LLM_BASE_URL (the API base, e.g. https://api.openai.com/v1) and LLM_MODEL.");
    return llmRejected(PROVIDER, detail, "Check LLM_MODEL, and that the endpoint takes OpenAI's Chat Completions request (JSON mode included).");
  }

  private read(body: ChatCompletionBody): Completion {
    const message = body.choices?.[0]?.message;
    if (typeof message?.content !== "string") {
      const refusal = typeof message?.refusal === "string" ? `: the model refused (${this.words(message.refusal)})` : "";
      throw llmMalformed(PROVIDER, `no message content in choices[0]${refusal}`);
    }
    const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
    return {
      text: message.content,
      model: typeof body.model === "string" && body.model ? body.model : this.model,
      usage: body.usage ? { inputTokens: num(body.usage.prompt_tokens), outputTokens: num(body.usage.completion_tokens) } : undefined,
    };
  }
}
