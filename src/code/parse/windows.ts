/**
 * Overlapping line windows: how a file without a grammar is chunked, and how a definition or a run
 * of top-level code too big for one chunk is split (the windows keep its symbol and kind).
 */
import { CHUNK_MAX_CHARS, CHUNK_MAX_LINES, WINDOW_LINES, WINDOW_OVERLAP } from "./limits";
import type { SourceLines } from "./lines";
import type { CodeChunk } from "./types";

export function fitsOneChunk(lines: SourceLines, start: number, end: number): boolean {
  return end - start + 1 <= CHUNK_MAX_LINES && lines.chars(start, end) <= CHUNK_MAX_CHARS;
}

/**
 * One chunk of lines start..end. A single line longer than the character limit (minified code) is
 * cut into pieces that all report that line, since a line is the smallest unit a chunk can name.
 */
export function pushChunk(out: CodeChunk[], lines: SourceLines, start: number, end: number, symbol: string, kind: string): void {
  const text = lines.slice(start, end);
  if (text.length <= CHUNK_MAX_CHARS || start !== end) {
    out.push({ start_line: start, end_line: end, symbol, kind, text });
    return;
  }
  for (let at = 0; at < text.length; at += CHUNK_MAX_CHARS) {
    out.push({ start_line: start, end_line: end, symbol, kind, text: text.slice(at, at + CHUNK_MAX_CHARS) });
  }
}

/**
 * Windows of at most WINDOW_LINES lines and CHUNK_MAX_CHARS characters over start..end, each sharing
 * up to WINDOW_OVERLAP lines with the one before so a passage cut by a boundary is whole in one of
 * them. Blank lines at a window's edges are left out and all-blank windows are not made.
 */
export function windowChunks(lines: SourceLines, start: number, end: number, symbol: string, kind: string): CodeChunk[] {
  const out: CodeChunk[] = [];
  let from = start;
  while (from <= end) {
    while (from <= end && lines.isBlank(from)) from++;
    if (from > end) break;
    let to = from;
    while (to < end && to + 1 - from + 1 <= WINDOW_LINES && lines.chars(from, to + 1) <= CHUNK_MAX_CHARS) to++;
    let last = to;
    while (last > from && lines.isBlank(last)) last--;
    pushChunk(out, lines, from, last, symbol, kind);
    if (to >= end) break;
    // A window cut short by long lines shares at most half of itself, so each one moves forward.
    const overlap = Math.min(WINDOW_OVERLAP, Math.floor((to - from + 1) / 2));
    from = Math.max(from + 1, to + 1 - overlap);
  }
  return out;
}
