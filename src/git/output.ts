/**
 * The seed's output contract (seed 002): payloads are minified JSON with empty fields omitted,
 * never null; `format: "markdown"` renders the same payload for people.
 */
import { z } from "zod";

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
