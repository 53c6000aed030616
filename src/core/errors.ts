/**
 * The one error type tools and services throw. The registry maps it (and anything else) to
 * the envelope `{ ok: false, error: { code, message, hint, retryable } }` in one place.
 */
export type CommonErrorCode = "invalid_input" | "not_found" | "conflict" | "idempotency_key_reused" | "idempotency_in_progress" | "internal_error";

export interface ToolErrorInit {
  hint?: string;
  retryable?: boolean;
  /**
   * Fields a failure carries beside `error` in the envelope (a write batch's per-op results).
   * Only for tools that declare them in `errorData`, so the advertised schema stays true.
   */
  data?: Record<string, unknown>;
}

export class ToolError extends Error {
  readonly code: string;
  readonly hint: string;
  readonly retryable: boolean;
  readonly data: Record<string, unknown> | undefined;

  /** `code` is a common code or a domain code named as its seed names it (e.g. `invalid_change_type`). */
  constructor(code: CommonErrorCode | (string & {}), message: string, init: ToolErrorInit = {}) {
    super(message);
    this.name = "ToolError";
    this.code = code;
    this.hint = init.hint ?? "";
    this.retryable = init.retryable ?? false;
    this.data = init.data;
  }
}

export const invalidInput = (message: string, hint: string) => new ToolError("invalid_input", message, { hint });

/** An id that does not exist, or belongs to another tenant: the two are indistinguishable on purpose. */
export const notFound = (what: string, id: string, hint: string) => new ToolError("not_found", `${what} '${id}' not found`, { hint });

export interface ErrorBody {
  code: string;
  message: string;
  hint: string;
  retryable: boolean;
}

/**
 * A caller's text quoted in an error: at most a short prefix, so an error never grows with its
 * input (a multi-megabyte value must not come back in the response).
 */
export function excerpt(text: string, max = 100): string {
  const head = text.length <= max ? text : text.slice(0, max);
  // Control characters in a quote would garble the message where it is shown (a terminal, a log).
  let flat = "";
  for (let i = 0; i < head.length; i++) {
    const c = head.charCodeAt(i);
    flat += c < 0x20 || (c >= 0x7f && c <= 0x9f) ? " " : head[i];
  }
  return text.length <= max ? flat : `${flat}… (${text.length} characters)`;
}

/**
 * Messages and hints that quote input (unknown parameter names, a bad value) are bounded here,
 * the one place every tool error passes, whatever the message was built from.
 */
export const MAX_ERROR_TEXT = 1000;
const bounded = (text: string) => (text.length <= MAX_ERROR_TEXT ? text : `${text.slice(0, MAX_ERROR_TEXT)}… (truncated from ${text.length} characters)`);

/**
 * Text the runtime or an engine produces about its own failure, for operators and never for
 * callers: workerd's "internal error; reference = …" (on a subrequest, a binding, a Durable
 * Object), a parser's stack overflow, memory exhaustion. Such text can end up inside one of this
 * server's own messages (a download that failed "because: …"), so it is looked for in the text.
 */
const INTERNAL_MARKERS = ["internal error; reference", "maximum call stack size exceeded", "out of memory"];
export const isInternalText = (text: string): boolean => {
  const lower = text.toLowerCase();
  return INTERNAL_MARKERS.some((m) => lower.includes(m));
};

/** What a caller reads in place of internal text. */
export const INTERNAL_FAILURE_TEXT = "an internal failure of the server or its platform (the details are in the server's log)";

/**
 * A failure's text as a caller may read it (in a note, a warning, a job's error): the message,
 * unless it is internal text, which is logged under `where` and replaced by INTERNAL_FAILURE_TEXT.
 */
export function failureText(err: unknown, where: string): string {
  const text = err instanceof Error ? err.message : String(err);
  if (!isInternalText(text)) return text;
  console.error(`[${where}]`, err);
  return INTERNAL_FAILURE_TEXT;
}

/** Maps anything thrown to the envelope's error body; unexpected errors leak no detail. */
export function toErrorBody(err: unknown): ErrorBody {
  if (err instanceof ToolError) {
    return { code: err.code, message: bounded(failureText(err, `tool error ${err.code}`)), hint: bounded(err.hint), retryable: err.retryable };
  }
  return {
    code: "internal_error",
    message: "The server hit an unexpected error while running this tool; nothing was reported back from it.",
    hint: "Retry once; if it persists, report it to the server's operators with the time of the call.",
    retryable: true,
  };
}
