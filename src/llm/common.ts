/**
 * What both completion adapters share: the error codes a model call fails with, a timeout that
 * holds even when the backend ignores its abort signal, and bounded retries. (Reading a model's answer is src/llm/answer.ts.)
 */
import { excerpt, ToolError } from "../core/errors";
import { maskText } from "../core/secrets";

/** Generated tokens when the caller names no bound: a review's JSON fits well within it. */
export const DEFAULT_MAX_TOKENS = 4096;
export const DEFAULT_TIMEOUT_MS = 120_000;

/** A backend's own words in an error, bounded and with anything secret-shaped masked. */
export function backendWords(text: string, max = 300): string {
  return excerpt(maskText(text).text, max);
}

export const llmUnavailable = (provider: string, detail: string) =>
  new ToolError("llm_unavailable", `The language model (${provider}) is unavailable: ${detail}`, {
    hint: "Retry in a minute; the backend is overloaded, rate limited or failing.",
    retryable: true,
  });

export const llmTimeout = (provider: string, ms: number) =>
  new ToolError("llm_timeout", `The language model (${provider}) did not answer within ${ms} ms.`, {
    hint: "Retry, give it longer (llm_timeout_ms), or send a smaller diff.",
    retryable: true,
  });

/** The backend refused the request itself (credentials, model name, a request it cannot take): retrying cannot help. */
export const llmRejected = (provider: string, detail: string, hint: string) => new ToolError("llm_rejected", `The language model (${provider}) refused the request: ${detail}`, { hint });

/** The backend answered, but not in the shape its API documents. */
export const llmMalformed = (provider: string, detail: string) =>
  new ToolError("llm_bad_output", `The language model (${provider}) gave an answer this server cannot read: ${detail}`, {
    hint: "Retry; a model's answer differs from call to call.",
    retryable: true,
  });

/**
 * Runs `run` with an abort signal that fires after `ms`, and stops waiting at that moment
 * whether or not the backend honours the signal.
 */
export async function withTimeout<T>(ms: number, run: (signal: AbortSignal) => Promise<T>, onTimeout: () => ToolError): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(onTimeout());
    }, ms);
  });
  try {
    return await Promise.race([run(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** A failure worth another attempt after `waitMs`; `error` is what the caller gets when the attempts run out. */
export class RetryableFailure extends Error {
  constructor(
    readonly error: ToolError,
    readonly waitMs: number,
  ) {
    super(error.message);
  }
}

export interface RetryPolicy {
  attempts: number;
  /** The most one call spends waiting between attempts; a longer wait fails at once (retryable). */
  maxWaitMs: number;
  sleep: (ms: number) => Promise<void>;
}

export const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function withRetries<T>(policy: RetryPolicy, once: (attempt: number) => Promise<T>): Promise<T> {
  let waited = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(attempt);
    } catch (err) {
      if (!(err instanceof RetryableFailure)) throw err;
      if (attempt >= policy.attempts || waited + err.waitMs > policy.maxWaitMs) throw err.error;
      waited += err.waitMs;
      await policy.sleep(err.waitMs);
    }
  }
}
