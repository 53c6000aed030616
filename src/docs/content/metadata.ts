import { excerpt, invalidInput } from "../../core/errors";

/** Metadata as the seed passes it: an object, or 'key=value' strings (update's form). */
export function metadataOf(value: Record<string, unknown> | string[] | undefined): Record<string, unknown> | undefined {
  if (value === undefined || !Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const pair of value) {
    const at = pair.indexOf("=");
    if (at <= 0) throw invalidInput(`metadata entry '${excerpt(pair, 60)}' is not key=value.`, "Write each entry as key=value, e.g. \"status=reviewed\".");
    out[pair.slice(0, at).trim()] = pair.slice(at + 1);
  }
  return out;
}
