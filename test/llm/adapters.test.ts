/**
 * The two completion adapters against stand-ins of their documented APIs: the Workers AI binding
 * (text generation with messages, JSON mode, its coded errors) and an OpenAI-compatible
 * /chat/completions endpoint (its request shape, response body, error body and retry-after).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { completionModel } from "../../src/llm";
import { OpenAiCompatibleModel } from "../../src/llm/openai";
import type { CompletionRequest } from "../../src/llm/types";
import { DEFAULT_WORKERS_AI_MODEL, WorkersAiModel, type AiChatInput, type AiRunOptions } from "../../src/llm/workers-ai";
import { ToolError } from "../../src/core/errors";
import type { AiBinding } from "../../src/llm/workers-ai";
import { withStandIns, type StandInEnv } from "../support/env-stand-ins";

const ask = (over: Partial<CompletionRequest> = {}): CompletionRequest => ({
  messages: [
    { role: "system", content: "Answer in JSON." },
    { role: "user", content: "Review this diff." },
  ],
  ...over,
});

/** What a failed call threw, as the envelope would carry it. */
async function failure(p: Promise<unknown>): Promise<ToolError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolError);
  return err as ToolError;
}

/** Records the waits a retry loop asks for instead of sleeping. */
function sleeper() {
  const waits: number[] = [];
  return { waits, sleep: (ms: number) => (waits.push(ms), Promise.resolve()) };
}

// ---------------------------------------------------------------------------------------------
// Workers AI

const TEXT_MODELS = new Set([DEFAULT_WORKERS_AI_MODEL, "@cf/meta/llama-3.1-8b-instruct-fast"]);
const MESSAGE_KEYS = new Set([
  "messages",
  "max_tokens",
  "temperature",
  "response_format",
  "top_p",
  "top_k",
  "seed",
  "stream",
  "raw",
  "tools",
  "functions",
  "repetition_penalty",
  "frequency_penalty",
  "presence_penalty",
]);

/**
 * `env.AI` for text generation: `run(model, { messages, max_tokens?, temperature?,
 * response_format? }, { signal? })` answers `{ response, usage }`; in JSON mode the response is
 * the parsed object. Failures are errors whose message carries Workers AI's internal code.
 */
class WorkersAiStandIn implements AiBinding {
  readonly calls: { model: string; input: AiChatInput; signal?: AbortSignal }[] = [];
  /** The next calls fail with these messages, one each. */
  readonly failNext: string[] = [];
  answer: (input: AiChatInput) => unknown = (input) => (input.response_format ? { findings: [], note: "ok" } : "A plain answer.");
  /** Never answers (a hung inference) when set. */
  hang = false;

  async run(model: string, input: { text: string[] } | AiChatInput, options?: AiRunOptions): Promise<unknown> {
    if (!TEXT_MODELS.has(model)) throw new Error(`5007: No such model ${model} or task`);
    if (!("messages" in input)) throw new Error("5006: Invalid input: messages required for text generation");
    this.calls.push({ model, input: structuredClone(input), signal: options?.signal });
    const unknown = Object.keys(input).filter((k) => !MESSAGE_KEYS.has(k));
    if (unknown.length) throw new Error(`5006: Invalid input: unknown properties ${unknown.join(", ")}`);
    if (!Array.isArray(input.messages) || input.messages.length === 0) throw new Error("5006: Invalid input: messages must be a non-empty array");
    for (const m of input.messages) {
      if (!["system", "user", "assistant", "tool"].includes(m.role) || typeof m.content !== "string") throw new Error("5006: Invalid input: message role/content");
    }
    if (input.max_tokens !== undefined && (!Number.isInteger(input.max_tokens) || input.max_tokens < 1)) throw new Error("5006: Invalid input: max_tokens");
    if (input.temperature !== undefined && (input.temperature < 0 || input.temperature > 5)) throw new Error("5006: Invalid input: temperature");
    if (input.response_format && !["json_object", "json_schema"].includes(input.response_format.type)) throw new Error("5006: Invalid input: response_format.type");
    if (options?.signal !== undefined && !(options.signal instanceof AbortSignal)) throw new Error("options.signal must be an AbortSignal");
    const next = this.failNext.shift();
    if (next) throw new Error(next);
    if (this.hang) return new Promise(() => {});
    const response = this.answer(input);
    return { response, usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 } };
  }
}

describe("WorkersAiModel", () => {
  it("sends chat messages with the bounds and JSON mode, and reads text, model and usage", async () => {
    const ai = new WorkersAiStandIn();
    const model = new WorkersAiModel(ai);
    const plain = await model.complete(ask({ maxTokens: 256, temperature: 0.2 }));
    expect(plain).toEqual({ text: "A plain answer.", model: DEFAULT_WORKERS_AI_MODEL, usage: { inputTokens: 120, outputTokens: 30 } });
    expect(ai.calls[0]!.input).toEqual({ messages: ask().messages, max_tokens: 256, temperature: 0.2 });
    expect(ai.calls[0]!.signal).toBeInstanceOf(AbortSignal);
    // JSON mode: the binding hands the object over parsed; callers get it back as JSON text.
    const json = await model.complete(ask({ json: true }));
    expect(ai.calls[1]!.input).toMatchObject({ response_format: { type: "json_object" }, temperature: 0, max_tokens: 4096 });
    expect(JSON.parse(json.text)).toEqual({ findings: [], note: "ok" });
    // A model that answers JSON as a string (no parse on the way) passes through unchanged.
    ai.answer = () => '{"findings":[]}';
    expect((await model.complete(ask({ json: true }))).text).toBe('{"findings":[]}');
  });

  it("retries capacity errors with growing waits, and gives up retryable", async () => {
    const ai = new WorkersAiStandIn();
    const s = sleeper();
    const model = new WorkersAiModel(ai, DEFAULT_WORKERS_AI_MODEL, { sleep: s.sleep });
    ai.failNext.push("AiError: 3040: Capacity temporarily exceeded, please try again.");
    expect((await model.complete(ask())).text).toBe("A plain answer.");
    expect(s.waits).toEqual([500]);
    ai.failNext.push(...Array(3).fill("AiError: 3040: Capacity temporarily exceeded, please try again."));
    const err = await failure(model.complete(ask()));
    expect(err).toMatchObject({ code: "llm_unavailable", retryable: true });
    expect(err.message).toContain("3040");
    expect(s.waits).toEqual([500, 500, 1500]);
    expect(ai.calls).toHaveLength(5);
  });

  it("does not retry what waiting cannot fix: no such model, the daily allocation, JSON mode not met", async () => {
    const ai = new WorkersAiStandIn();
    const unknown = await failure(new WorkersAiModel(ai, "@cf/nobody/nothing").complete(ask()));
    expect(unknown).toMatchObject({ code: "llm_rejected", retryable: false });
    expect(unknown.hint).toContain("LLM_MODEL");
    const model = new WorkersAiModel(ai, DEFAULT_WORKERS_AI_MODEL, { sleep: () => Promise.resolve() });
    ai.failNext.push("AiError: 3036: You have used up your daily free allocation of 10,000 neurons.");
    const spent = await failure(model.complete(ask()));
    expect(spent).toMatchObject({ code: "llm_rejected", retryable: false });
    expect(spent.hint).toContain("LLM_API_KEY");
    ai.failNext.push("AiError: JSON Mode couldn't be met");
    expect(await failure(model.complete(ask({ json: true })))).toMatchObject({ code: "llm_bad_output", retryable: true });
    expect(ai.calls).toHaveLength(2);
  });

  it("times out a hung inference, aborting its signal, and refuses an answer without response", async () => {
    const ai = new WorkersAiStandIn();
    ai.hang = true;
    const err = await failure(new WorkersAiModel(ai).complete(ask({ timeoutMs: 30 })));
    expect(err).toMatchObject({ code: "llm_timeout", retryable: true });
    expect(ai.calls[0]!.signal!.aborted).toBe(true);
    ai.hang = false;
    const odd: AiBinding = { run: () => Promise.resolve({ result: "elsewhere" }) };
    expect(await failure(new WorkersAiModel(odd).complete(ask()))).toMatchObject({ code: "llm_bad_output" });
    const nothing: AiBinding = { run: () => Promise.resolve({ response: null }) };
    expect(await failure(new WorkersAiModel(nothing).complete(ask()))).toMatchObject({ code: "llm_bad_output" });
  });
});

// ---------------------------------------------------------------------------------------------
// OpenAI-compatible

const KEY = "sk-proj-standin0123456789abcdefghijklmnop";
const BASE = "https://llm.example.test/v1";
const BODY_KEYS = new Set(["model", "messages", "max_tokens", "max_completion_tokens", "temperature", "response_format", "top_p", "n", "stop", "seed", "stream", "tools", "tool_choice", "user"]);

interface Scripted {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * POST /v1/chat/completions as OpenAI documents it: bearer key, JSON body, `response_format:
 * json_object` only when a message mentions JSON; success is a `chat.completion` object,
 * failure `{ error: { message, type, param, code } }`.
 */
class ChatCompletionsStandIn {
  readonly requests: { body: Record<string, unknown>; signal: AbortSignal | null }[] = [];
  readonly script: Scripted[] = [];
  content: string | null = '{"findings":[]}';
  /** Resolve nothing until the request is aborted (a hung connection). */
  hang = false;

  readonly fetch: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    if (`${url.origin}${url.pathname}` !== `${BASE}/chat/completions`) return this.error(404, `Unknown path ${url.pathname}`, "invalid_request_error", null);
    if (req.method !== "POST") return this.error(405, "Method not allowed", "invalid_request_error", null);
    if (req.headers.get("authorization") !== `Bearer ${KEY}`) {
      // Some compatible servers quote the key they were given; the adapter must not pass it on.
      return this.error(401, `Incorrect API key provided: ${req.headers.get("authorization")?.replace("Bearer ", "")}.`, "invalid_request_error", "invalid_api_key");
    }
    if (!req.headers.get("content-type")?.startsWith("application/json")) return this.error(400, "Content-Type must be application/json", "invalid_request_error", null);
    const body = (await req.json()) as Record<string, unknown>;
    this.requests.push({ body, signal: init?.signal ?? null });
    const unknown = Object.keys(body).filter((k) => !BODY_KEYS.has(k));
    if (unknown.length) return this.error(400, `Unrecognized request argument supplied: ${unknown[0]}`, "invalid_request_error", null);
    if (typeof body.model !== "string" || !Array.isArray(body.messages) || body.messages.length === 0) return this.error(400, "model and messages are required", "invalid_request_error", null);
    const messages = body.messages as { role: unknown; content: unknown }[];
    if (messages.some((m) => !["system", "user", "assistant", "developer"].includes(m.role as string) || typeof m.content !== "string"))
      return this.error(400, "Invalid message", "invalid_request_error", null);
    if (body.temperature !== undefined && (typeof body.temperature !== "number" || body.temperature < 0 || body.temperature > 2))
      return this.error(400, "temperature out of range", "invalid_request_error", null);
    if (body.max_tokens !== undefined && !Number.isInteger(body.max_tokens)) return this.error(400, "max_tokens must be an integer", "invalid_request_error", null);
    const format = body.response_format as { type?: string } | undefined;
    if (format && format.type !== "json_object" && format.type !== "json_schema" && format.type !== "text") return this.error(400, "Invalid response_format.type", "invalid_request_error", null);
    if (format?.type === "json_object" && !messages.some((m) => /json/i.test(m.content as string))) {
      return this.error(400, "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", "invalid_request_error", null);
    }
    if (this.hang) {
      return new Promise<Response>((_, reject) => init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
    }
    const next = this.script.shift();
    if (next) return Response.json(next.body, { status: next.status, headers: next.headers });
    return Response.json({
      id: "chatcmpl-standin",
      object: "chat.completion",
      created: 1_767_225_600,
      model: "gpt-4o-mini-2024-07-18",
      system_fingerprint: "fp_standin",
      choices: [{ index: 0, message: { role: "assistant", content: this.content, refusal: this.content === null ? "I can't help with that." : null }, logprobs: null, finish_reason: "stop" }],
      usage: { prompt_tokens: 200, completion_tokens: 12, total_tokens: 212 },
    });
  };

  error(status: number, message: string, type: string, code: string | null, headers?: Record<string, string>): Response {
    return Response.json({ error: { message, type, param: null, code } }, { status, headers });
  }

  rateLimited(headers: Record<string, string>): Scripted {
    return {
      status: 429,
      headers,
      body: { error: { message: "Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3.", type: "requests", param: null, code: "rate_limit_exceeded" } },
    };
  }
}

function openai(standIn: ChatCompletionsStandIn, over: { key?: string; base?: string; model?: string; sleep?: (ms: number) => Promise<void>; maxWaitMs?: number } = {}) {
  return new OpenAiCompatibleModel({
    apiKey: over.key ?? KEY,
    baseUrl: over.base ?? `${BASE}/`,
    model: over.model ?? "gpt-4o-mini",
    fetch: standIn.fetch,
    policy: { sleep: over.sleep ?? (() => Promise.resolve()), ...(over.maxWaitMs !== undefined ? { maxWaitMs: over.maxWaitMs } : {}) },
  });
}

describe("OpenAiCompatibleModel", () => {
  it("posts the documented request and reads the chat.completion answer", async () => {
    const api = new ChatCompletionsStandIn();
    const out = await openai(api).complete(ask({ json: true, maxTokens: 800 }));
    expect(out).toEqual({ text: '{"findings":[]}', model: "gpt-4o-mini-2024-07-18", usage: { inputTokens: 200, outputTokens: 12 } });
    expect(api.requests[0]!.body).toEqual({ model: "gpt-4o-mini", messages: ask().messages, max_tokens: 800, temperature: 0, response_format: { type: "json_object" } });
    expect(api.requests[0]!.signal).toBeInstanceOf(AbortSignal);
    await openai(api).complete(ask());
    expect(api.requests[1]!.body.response_format).toBeUndefined();
    // The stand-in holds the adapter to OpenAI's rule: JSON mode needs the word in a message.
    const err = await failure(openai(api).complete({ messages: [{ role: "user", content: "hi" }], json: true }));
    expect(err).toMatchObject({ code: "llm_rejected", retryable: false });
    expect(err.message).toContain("must contain the word 'json'");
  });

  it("waits out a 429 as retry-after (or retry-after-ms) says, then answers", async () => {
    const api = new ChatCompletionsStandIn();
    const s = sleeper();
    api.script.push(api.rateLimited({ "retry-after": "2" }), api.rateLimited({ "retry-after-ms": "750" }));
    expect((await openai(api, { sleep: s.sleep }).complete(ask())).text).toBe('{"findings":[]}');
    expect(s.waits).toEqual([2000, 750]);
    expect(api.requests).toHaveLength(3);
  });

  it("fails at once, retryable, when retry-after is longer than a call may wait; server errors run out retryable", async () => {
    const api = new ChatCompletionsStandIn();
    const s = sleeper();
    api.script.push(api.rateLimited({ "retry-after": "60" }));
    const limited = await failure(openai(api, { sleep: s.sleep, maxWaitMs: 20_000 }).complete(ask()));
    expect(limited).toMatchObject({ code: "llm_unavailable", retryable: true });
    expect(limited.message).toContain("HTTP 429 rate_limit_exceeded: Rate limit reached");
    expect(s.waits).toEqual([]);
    api.script.push(...Array(3).fill({ status: 503, body: { error: { message: "The server is overloaded.", type: "server_error", param: null, code: null } } }));
    const down = await failure(openai(api, { sleep: s.sleep }).complete(ask()));
    expect(down).toMatchObject({ code: "llm_unavailable", retryable: true });
    expect(s.waits).toEqual([1000, 2000]);
    expect(api.requests).toHaveLength(4);
  });

  it("never echoes the key, and does not retry refusals: a bad key, no quota, a refusal to answer", async () => {
    const api = new ChatCompletionsStandIn();
    // Not secret-shaped, so only the adapter's own redaction can keep it out.
    const wrongKey = "local-wrong-key-42";
    const err = await failure(openai(api, { key: wrongKey }).complete(ask()));
    expect(err).toMatchObject({ code: "llm_rejected", retryable: false });
    expect(err.message).toContain("HTTP 401 invalid_api_key");
    expect(`${err.message} ${err.hint}`).not.toContain(wrongKey);
    expect(err.hint).toContain("LLM_API_KEY");
    api.script.push({
      status: 429,
      body: { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", param: null, code: "insufficient_quota" } },
    });
    expect(await failure(openai(api).complete(ask()))).toMatchObject({ code: "llm_rejected", retryable: false });
    expect(api.requests).toHaveLength(1);
    api.content = null;
    const refused = await failure(openai(api).complete(ask()));
    expect(refused).toMatchObject({ code: "llm_bad_output", retryable: true });
    expect(refused.message).toContain("refused");
  });

  it("retries an unreachable endpoint, times out a hung one (aborting it), and refuses unusable configuration before any request", async () => {
    const api = new ChatCompletionsStandIn();
    let drops = 1;
    const flaky: typeof fetch = (input, init) => (drops-- > 0 ? Promise.reject(new TypeError("Network connection lost.")) : api.fetch(input, init));
    const s = sleeper();
    const model = new OpenAiCompatibleModel({ apiKey: KEY, baseUrl: BASE, model: "gpt-4o-mini", fetch: flaky, policy: { sleep: s.sleep } });
    expect((await model.complete(ask())).text).toBe('{"findings":[]}');
    expect(s.waits).toEqual([1000]);
    api.hang = true;
    const hung = await failure(openai(api).complete(ask({ timeoutMs: 30 })));
    expect(hung).toMatchObject({ code: "llm_timeout", retryable: true });
    expect(api.requests.at(-1)!.signal!.aborted).toBe(true);
    const before = api.requests.length;
    for (const base of ["http://llm.example.test/v1", "not a url", "https://user:pw@llm.example.test/v1"]) {
      expect(await failure(openai(api, { base }).complete(ask()))).toMatchObject({ code: "llm_not_configured" });
    }
    expect(await failure(openai(api, { model: "" }).complete(ask()))).toMatchObject({ code: "llm_not_configured" });
    expect(api.requests).toHaveLength(before);
    // Plain http is fine to this machine (a local vLLM or Ollama).
    expect(new OpenAiCompatibleModel({ apiKey: KEY, baseUrl: "http://127.0.0.1:11434/v1", model: "m" })).toBeInstanceOf(OpenAiCompatibleModel);
  });
});

// ---------------------------------------------------------------------------------------------

describe("completionModel", () => {
  const ai = new WorkersAiStandIn();
  const withEnv = (over: StandInEnv) => withStandIns(env as unknown as Env, over);

  it("prefers an OpenAI-compatible endpoint, then the AI binding, else none; LLM_PROVIDER=off turns both off", async () => {
    const api = new ChatCompletionsStandIn();
    const openaiEnv = withEnv({ AI: ai, LLM_API_KEY: KEY, LLM_BASE_URL: BASE, LLM_MODEL: "gpt-4o-mini" });
    const chosen = completionModel(openaiEnv, api.fetch)!;
    expect(chosen).toMatchObject({ provider: "openai-compatible", model: "gpt-4o-mini" });
    await chosen.complete(ask());
    expect(api.requests).toHaveLength(1);
    // wrangler.toml's LLM_MODEL is a Workers AI model: the binding serves it.
    expect(env.LLM_MODEL).toBe(DEFAULT_WORKERS_AI_MODEL);
    expect(completionModel(withEnv({ AI: ai }))).toMatchObject({ provider: "workers-ai", model: DEFAULT_WORKERS_AI_MODEL });
    expect(completionModel(withEnv({ AI: ai, LLM_API_KEY: KEY }))).toMatchObject({ provider: "workers-ai" });
    expect(completionModel(withEnv({ AI: ai, LLM_PROVIDER: "off" }))).toBeNull();
    expect(completionModel(withEnv({ LLM_API_KEY: KEY, LLM_BASE_URL: BASE, LLM_PROVIDER: "off" }))).toBeNull();
    expect(completionModel(withEnv({}))).toBeNull();
  });
});
