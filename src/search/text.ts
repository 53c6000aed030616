/** Small text pieces the lexical searches share: safe FTS5 queries and snippets. */

/** Word terms of user text, as FTS5 will tokenize them; never FTS5 syntax. */
export const wordTerms = (text: string): string[] => text.match(/[\p{L}\p{N}_]+/gu) ?? [];

/** Any-word FTS5 query (bm25 still ranks rows with more of the words first), or "" for no words. */
export function anyWordQuery(text: string, maxTerms = 32): string {
  return wordTerms(text).slice(0, maxTerms).map((t) => `"${t}"`).join(" OR ");
}

/** The whole text as one FTS5 phrase: for the trigram tokenizer, a substring match (3+ characters). */
export const phraseQuery = (text: string): string => `"${text.replaceAll('"', '""')}"`;

/**
 * About `width` characters of `text` around the first place any of `needles` occurs
 * (case-insensitive), with ellipses where it was cut; the start of the text if none occurs.
 */
export function snippetAround(text: string, needles: string[], width = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= width) return flat;
  const lower = flat.toLowerCase();
  let at = -1;
  for (const n of needles) {
    const i = n ? lower.indexOf(n.toLowerCase()) : -1;
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  const start = at < 0 ? 0 : Math.max(0, Math.min(at - Math.floor(width / 3), flat.length - width));
  return `${start > 0 ? "…" : ""}${flat.slice(start, start + width).trim()}${start + width < flat.length ? "…" : ""}`;
}
