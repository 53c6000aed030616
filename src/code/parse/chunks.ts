/**
 * Chunks from a file's outline: one chunk per definition, the code between definitions merged into
 * chunks of its enclosing scope ("module" at top level, the class inside a split class), nothing
 * over the size limits, and every non-blank line in at least one chunk.
 */
import type { SourceLines } from "./lines";
import type { CodeChunk } from "./types";
import { fitsOneChunk, pushChunk, windowChunks } from "./windows";

/** A statement, comment or definition at one level of the outline, in lines. */
export interface Item {
  start: number;
  end: number;
  /** A comment or decorator: it belongs to a definition right below it. */
  leading: boolean;
  def?: ItemDef;
}

export interface ItemDef {
  qualified: string;
  /** The chunk kind: function, method, class, interface, type or module. */
  kind: string;
  /** The definitions and statements inside a class, to split it by when it is too big. */
  members?: Item[];
}

interface Scope {
  symbol: string;
  kind: string;
}

/** Chunks covering lines start..end, given the items that lie there in source order. */
export function chunkItems(lines: SourceLines, items: readonly Item[], start: number, end: number, scope: Scope): CodeChunk[] {
  const out: CodeChunk[] = [];
  const segments = withGaps(lines, items, start, end);
  let run: Item[] = [];
  for (let i = 0; i < segments.length; i++) {
    const item = segments[i]!;
    if (!item.def) {
      run.push(item);
      continue;
    }
    // Comments and decorators right above a definition (its doc comment) belong in its chunk.
    let from = item.start;
    while (run.length > 0) {
      const prev = run[run.length - 1]!;
      if (!prev.leading || prev.end < from - 1) break;
      from = Math.min(from, prev.start);
      run.pop();
    }
    packRun(out, lines, run, scope);
    run = [];
    pushDefinition(out, lines, item, item.def, from);
  }
  packRun(out, lines, run, scope);
  return out;
}

/** The items clamped to start..end, with the non-blank lines no item holds added as plain items. */
function withGaps(lines: SourceLines, items: readonly Item[], start: number, end: number): Item[] {
  const out: Item[] = [];
  let next = start;
  const gap = (from: number, to: number) => {
    for (let line = from; line <= to; line++) {
      if (!lines.isBlank(line)) {
        out.push({ start: from, end: to, leading: false });
        return;
      }
    }
  };
  for (const item of items) {
    const s = Math.max(item.start, start);
    const e = Math.min(item.end, end);
    if (e < s) continue;
    const last = out[out.length - 1];
    if (item.leading && last && s <= last.end) {
      // A comment starting on the line the previous item ends on is that item's trailing comment.
      if (e > last.end) out[out.length - 1] = { ...last, end: e };
      next = Math.max(next, e + 1);
      continue;
    }
    if (s > next) gap(next, s - 1);
    out.push(s === item.start && e === item.end ? item : { ...item, start: s, end: e });
    next = Math.max(next, e + 1);
  }
  if (next <= end) gap(next, end);
  return out;
}

function pushDefinition(out: CodeChunk[], lines: SourceLines, item: Item, def: ItemDef, from: number): void {
  if (fitsOneChunk(lines, from, item.end)) {
    pushChunk(out, lines, from, item.end, def.qualified, def.kind);
  } else if (def.members && def.members.some((m) => m.def)) {
    out.push(...chunkItems(lines, def.members, from, item.end, { symbol: def.qualified, kind: def.kind }));
  } else {
    out.push(...windowChunks(lines, from, item.end, def.qualified, def.kind));
  }
}

/** Consecutive statements merge into chunks as large as the limits allow; one too big alone is windowed. */
function packRun(out: CodeChunk[], lines: SourceLines, run: readonly Item[], scope: Scope): void {
  let group: { start: number; end: number } | undefined;
  const flush = () => {
    if (!group) return;
    let { start, end } = group;
    while (start < end && lines.isBlank(start)) start++;
    while (end > start && lines.isBlank(end)) end--;
    if (fitsOneChunk(lines, start, end)) pushChunk(out, lines, start, end, scope.symbol, scope.kind);
    else out.push(...windowChunks(lines, start, end, scope.symbol, scope.kind));
    group = undefined;
  };
  for (const item of run) {
    if (group && fitsOneChunk(lines, group.start, Math.max(group.end, item.end))) {
      group.end = Math.max(group.end, item.end);
      continue;
    }
    flush();
    group = { start: item.start, end: item.end };
  }
  flush();
}
