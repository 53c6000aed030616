/** Snippets: the part of a text around a match. */

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
