/**
 * The one error type tools and services throw. The registry maps it (and anything else) to
 * the envelope `{ ok: false, error: { code, message, hint, retryable } }` in one place.
 */
export type CommonErrorCode =
  | "invalid_input"
  | "not_found"
  | "conflict"
  | "idempotency_key_reused"
  | "idempotency_in_progress"
  | "internal_error";

export interface ToolErrorInit {
  hint?: string;
  retryable?: boolean;
}

export class ToolError extends Error {
  readonly code: string;
  readonly hint: string;
  readonly retryable: boolean;

  /** `code` is a common code or a domain code named as its seed names it (e.g. `invalid_change_type`). */
  constructor(code: CommonErrorCode | (string & {}), message: string, init: ToolErrorInit = {}) {
    super(message);
    this.name = "ToolError";
    this.code = code;
    this.hint = init.hint ?? "";
    this.retryable = init.retryable ?? false;
  }
}

export const invalidInput = (message: string, hint: string) => new ToolError("invalid_input", message, { hint });

/** An id that does not exist, or belongs to another tenant: the two are indistinguishable on purpose. */
export const notFound = (what: string, id: string, hint: string) =>
  new ToolError("not_found", `${what} '${id}' not found`, { hint });

export interface ErrorBody {
  code: string;
  message: string;
  hint: string;
  retryable: boolean;
}

/** Past these, a message or hint is cut: whatever a tool quoted, an error never echoes large input. */
const MAX_MESSAGE = 1_000;
const MAX_HINT = 600;
const clamp = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** Maps anything thrown to the envelope's error body; unexpected errors leak no detail. */
export function toErrorBody(err: unknown): ErrorBody {
  if (err instanceof ToolError) {
    return { code: err.code, message: clamp(err.message, MAX_MESSAGE), hint: clamp(err.hint, MAX_HINT), retryable: err.retryable };
  }
  return {
    code: "internal_error",
    message: "The server hit an unexpected error while running this tool; nothing was reported back from it.",
    hint: "Retry once; if it persists, report it to the server's operators with the time of the call.",
    retryable: true,
  };
}
