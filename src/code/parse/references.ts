/**
 * References: every identifier a file uses, calls marked, each with the definition it sits in.
 * Found by a tree-sitter query (matched inside wasm, far cheaper than walking the tree from
 * JavaScript), run over the file a slice at a time so a huge file stops costing once the cap
 * (MAX_REFERENCES, earliest first) is reached.
 */
import type { Node, Query, QueryCapture } from "web-tree-sitter";
import { MAX_REFERENCES } from "./limits";
import type { ScopeRange } from "./outline";
import type { SymbolRef } from "./types";

/** Characters of source per query run. */
const SLICE_CHARS = 64 * 1024;

const PRECEDENCE: Readonly<Record<string, number>> = { ref: 1, call: 2, decl: 3 };

export interface ReferenceContext {
  source: string;
  scopes: readonly ScopeRange[];
  definitionNames: ReadonlySet<number>;
  /** [start, end) offsets whose identifiers are not uses (import statements), in source order. */
  skip: ReadonlyArray<readonly [number, number]>;
  ignoredNames?: ReadonlySet<string>;
}

export function collectReferences(root: Node, query: Query, context: ReferenceContext): SymbolRef[] {
  const refs: SymbolRef[] = [];
  const seen = new Set<string>();
  const enclosing = scopeTracker(context.scopes);
  let skipAt = 0;
  for (let from = 0; from < context.source.length && refs.length < MAX_REFERENCES; from += SLICE_CHARS) {
    const to = from + SLICE_CHARS;
    for (const [start, capture] of strongestByNode(query.captures(root, { startIndex: from, endIndex: to }), from, to)) {
      if (capture.name === "decl" || context.definitionNames.has(start)) continue;
      while (skipAt < context.skip.length && context.skip[skipAt]![1] <= start) skipAt++;
      const skip = context.skip[skipAt];
      if (skip && skip[0] <= start) continue;
      const name = context.source.slice(start, capture.node.endIndex);
      if (context.ignoredNames?.has(name)) continue;
      const line = capture.node.startPosition.row + 1;
      const kind = capture.name === "call" ? "call" : "reference";
      const scope = enclosing(start);
      // The same name used again on one line in one scope says nothing new.
      const key = `${kind}\u0000${name}\u0000${line}\u0000${scope}`;
      if (seen.has(key)) continue;
      seen.add(key);
      refs.push({ name, line, enclosing: scope, kind });
      if (refs.length >= MAX_REFERENCES) break;
    }
  }
  return refs;
}

/**
 * One capture per node (several patterns can capture the same identifier), the strongest kind
 * winning, in source order. A node starting outside the slice belongs to the slice that holds its
 * start, so a name crossing a slice boundary is counted once.
 */
function strongestByNode(captures: QueryCapture[], from: number, to: number): Array<[number, QueryCapture]> {
  const byStart = new Map<number, QueryCapture>();
  for (const capture of captures) {
    const start = capture.node.startIndex;
    if (start < from || start >= to) continue;
    const held = byStart.get(start);
    if (!held || (PRECEDENCE[capture.name] ?? 0) > (PRECEDENCE[held.name] ?? 0)) byStart.set(start, capture);
  }
  return [...byStart].sort((a, b) => a[0] - b[0]);
}

/**
 * The innermost definition containing an offset, for offsets asked in increasing order: a stack of
 * the open scopes, so a whole file costs one pass over its definitions.
 */
function scopeTracker(scopes: readonly ScopeRange[]): (offset: number) => string {
  const open: ScopeRange[] = [];
  let next = 0;
  return (offset) => {
    while (next < scopes.length && scopes[next]!.start <= offset) {
      const scope = scopes[next++]!;
      while (open.length > 0 && open[open.length - 1]!.end <= scope.start) open.pop();
      open.push(scope);
    }
    while (open.length > 0 && open[open.length - 1]!.end <= offset) open.pop();
    return open[open.length - 1]?.qualified ?? "";
  };
}
