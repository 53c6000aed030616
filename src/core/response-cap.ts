/**
 * The cap on what one tool call answers. An agent pays for a response in its context window, and
 * hosts cut long tool output themselves (Claude Code at 25,000 tokens by default), so a response
 * is held to MAX_RESPONSE_CHARS of JSON and says so when it was cut, with how to get the rest:
 *
 * 1. A list keeps its longest prefix of items that fits. Its next_cursor is dropped (it points past
 *    the whole page), and the hint says which limit pages through without a gap.
 * 2. Anything else (or a list whose first item alone is too big) keeps its shape and has its
 *    longest strings cut to one length, the longest that fits, each ending in a marker.
 */
import { z } from "zod";
import { ToolError } from "./errors";
import { BRIEF_IN_LISTING } from "./json-schema";

export const MAX_RESPONSE_CHARS = 100_000;

export const truncationField = z
  .object({
    max_chars: z.number().int().describe("The cap: characters of JSON one response may carry."),
    omitted_items: z.number().int().optional().describe("Items of this page left out (the first ones are here)."),
    shortened_fields: z.array(z.string()).optional().describe("Paths of the text fields that were cut (up to 20)."),
    max_field_chars: z.number().int().optional().describe("The length those fields were cut to."),
    hint: z.string().describe("How to get what was left out."),
  })
  .optional()
  .meta(BRIEF_IN_LISTING)
  .describe("Present when the response was cut to fit the size cap.");

export type Truncation = NonNullable<z.infer<typeof truncationField>>;

const size = (v: unknown) => JSON.stringify(v).length;
/** Room kept for the truncation object itself. */
const NOTE_ROOM = 2_000;
const MAX_PATHS = 20;

const marker = (cut: number) => ` …[${cut} more characters cut]`;

/** The payload, or a smaller one and what was cut, so its JSON fits in `max` characters. */
export function capResponse(payload: Record<string, unknown>, max = MAX_RESPONSE_CHARS): { value: Record<string, unknown>; truncation?: Truncation } {
  if (size(payload) <= max) return { value: payload };
  const budget = max - NOTE_ROOM;
  const items = payload.items;
  if (Array.isArray(items) && items.length > 0) {
    const { next_cursor: _dropped, ...rest } = payload;
    const fits = (n: number) => size({ ...rest, items: items.slice(0, n) }) <= budget;
    if (fits(1)) {
      let lo = 1;
      let hi = items.length - 1;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (fits(mid)) lo = mid;
        else hi = mid - 1;
      }
      return {
        value: { ...rest, items: items.slice(0, lo) },
        truncation: {
          max_chars: max,
          omitted_items: items.length - lo,
          hint: `Only the first ${lo} of ${items.length} items fit. Call again with limit: ${lo} (same filters and cursor) to page without a gap, or pass fields to get less of each item.`,
        },
      };
    }
  }
  return shortenStrings(payload, budget, max);
}

interface Leaf {
  path: string;
  length: number;
}

function leaves(value: unknown, path: string, out: Leaf[]): void {
  if (typeof value === "string") out.push({ path, length: value.length });
  else if (Array.isArray(value)) value.forEach((v, i) => leaves(v, `${path}[${i}]`, out));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) leaves(v, path ? `${path}.${k}` : k, out);
}

function cutStrings(value: unknown, limit: number): unknown {
  if (typeof value === "string") return value.length > limit ? value.slice(0, limit) + marker(value.length - limit) : value;
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, limit));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutStrings(v, limit)]));
  return value;
}

function shortenStrings(payload: Record<string, unknown>, budget: number, max: number): { value: Record<string, unknown>; truncation: Truncation } {
  const all: Leaf[] = [];
  leaves(payload, "", all);
  const longest = all.reduce((m, l) => Math.max(m, l.length), 0);
  const fits = (limit: number) => size(cutStrings(payload, limit)) <= budget;
  if (!fits(0)) {
    // Nothing but structure is left to cut: the caller has to ask for less.
    throw new ToolError("response_too_large", `The answer is over ${max} characters of JSON even with its text cut.`, {
      hint: "The call itself ran (a write is done; do not repeat it): read what you need with a smaller limit or fewer fields.",
    });
  }
  let lo = 0;
  let hi = longest;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  const cut = all.filter((l) => l.length > lo);
  return {
    value: cutStrings(payload, lo) as Record<string, unknown>,
    truncation: {
      max_chars: max,
      shortened_fields: cut.slice(0, MAX_PATHS).map((l) => l.path),
      max_field_chars: lo,
      hint: `${cut.length} text field(s) were cut to ${lo} characters. Read the object by its own tool, ask for fewer items (limit) or fewer keys (fields), or page the content.`,
    },
  };
}
