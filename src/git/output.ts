/**
 * The seed's output contract (seed 002): payloads are minified JSON with empty fields omitted,
 * never null; `format: "markdown"` renders the same payload for people.
 */
import { z } from "zod";
import type { ErrorBody } from "../core/errors";

/** The seed's MCP_JSON_FORMAT_VERSION: the payload shapes here are its v2 shapes. */
export const JSON_FORMAT_VERSION = "2";

export const formatField = z.enum(["markdown", "json"]).default("markdown").describe('"markdown" (default) for a readable summary, or "json" for the minified payload.');

/** Drops null, undefined, false, "" and empty arrays/objects, recursively (0 is kept: counts are data). */
export function compact<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => compact(v)) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const c = compact(v);
      if (c === null || c === undefined || c === false || c === "") continue;
      if (Array.isArray(c) && c.length === 0) continue;
      if (c && typeof c === "object" && !Array.isArray(c) && Object.keys(c).length === 0) continue;
      out[k] = c;
    }
    return out as T;
  }
  return value;
}

/**
 * A failed call asked for `format: "json"` gets the seed's error payload, `{"error":"<code>", …}`
 * minified, with the envelope's message, hint and retryable beside the code and the format
 * version a consumer checks its parser against. Markdown (or no readable format) keeps the
 * registry's text.
 */
export function gitErrorText(error: ErrorBody, args: unknown): string | undefined {
  if (!args || typeof args !== "object" || (args as { format?: unknown }).format !== "json") return undefined;
  return JSON.stringify({ error: error.code, message: error.message, hint: error.hint, retryable: error.retryable, jsonFormatVersion: JSON_FORMAT_VERSION });
}
