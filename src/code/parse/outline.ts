/**
 * The outline of a parsed file: its definitions with qualified names, and the items (statements,
 * comments, definitions, with class members nested) the chunker cuts along.
 */
import type { Node } from "web-tree-sitter";
import type { Item } from "./chunks";
import { MAX_SYMBOLS, SIGNATURE_MAX_CHARS } from "./limits";
import { type Container, type Definition, type LanguageSpec, firstLine, lastLine } from "./spec";
import type { SymbolDef } from "./types";

/** A definition's extent in the source, for finding the definition a reference sits in. */
export interface ScopeRange {
  start: number;
  end: number;
  qualified: string;
}

export interface Outline {
  symbols: SymbolDef[];
  items: Item[];
  /** Definitions that enclose references (not variables), in source order. */
  scopes: ScopeRange[];
  /** Start offsets of the identifiers that name definitions: declarations, not uses. */
  definitionNames: Set<number>;
}

/** Definition kinds and the chunk kind each gets; kinds not listed (variables) stay in module chunks. */
const CHUNK_KIND: Readonly<Record<string, string>> = {
  function: "function",
  method: "method",
  class: "class",
  interface: "interface",
  type: "type",
  enum: "type",
  namespace: "module",
};

export function outline(root: Node, source: string, spec: LanguageSpec): Outline {
  const result: Outline = { symbols: [], items: [], scopes: [], definitionNames: new Set() };
  const exportedNames = spec.exportedNames?.(root) ?? new Set<string>();

  const walk = (nodes: readonly Node[], container: Container, prefix: string): Item[] => {
    const items: Item[] = [];
    for (const node of nodes) {
      if (node.type === "ERROR") {
        // Text the grammar could not place still holds definitions worth finding: look inside.
        items.push(...walk(node.namedChildren, container, prefix));
        continue;
      }
      const found = spec.definitions(node, container);
      if (found.length === 0) {
        items.push({ start: firstLine(node), end: lastLine(node), leading: isLeading(node) });
        continue;
      }
      found.forEach((def, i) => {
        const qualified = def.qualifier ? `${def.qualifier}.${def.name}` : prefix ? `${prefix}.${def.name}` : def.name;
        record(def, qualified);
        const members = def.members ? walk(def.members, { level: def.kind === "class" ? "class" : "module", exported: def.exported, exportedNames: new Set() }, qualified) : undefined;
        // Several definitions in one statement (`type ( A …; B … )`) split it; the first and last
        // take the statement's own first and last lines.
        const start = i === 0 ? firstLine(node) : firstLine(def.node);
        const end = i === found.length - 1 ? lastLine(node) : lastLine(def.node);
        const kind = CHUNK_KIND[def.kind];
        items.push({ start, end, leading: false, ...(kind ? { def: { qualified, kind, ...(members ? { members } : {}) } } : {}) });
      });
    }
    return items;
  };

  const record = (def: Definition, qualified: string) => {
    if (def.nameNode) result.definitionNames.add(def.nameNode.startIndex);
    if (CHUNK_KIND[def.kind]) result.scopes.push({ start: def.node.startIndex, end: def.node.endIndex, qualified });
    if (result.symbols.length >= MAX_SYMBOLS) return;
    result.symbols.push({
      name: def.name,
      qualified,
      kind: def.kind,
      start_line: firstLine(def.node),
      end_line: lastLine(def.node),
      exported: def.exported,
      signature: signature(source, def),
    });
  };

  result.items = walk(root.namedChildren, { level: "module", exported: true, exportedNames }, "");
  result.scopes.sort((a, b) => a.start - b.start || b.end - a.end);
  return result;
}

function isLeading(node: Node): boolean {
  return node.type === "comment" || node.type === "decorator";
}

/** The declaration up to its body (or its first line), whitespace collapsed. */
function signature(source: string, def: Definition): string {
  const start = def.declaration.startIndex;
  let end = Math.min(def.body ? def.body.startIndex : def.declaration.endIndex, start + SIGNATURE_MAX_CHARS * 4);
  if (!def.body) {
    const newline = source.indexOf("\n", start);
    if (newline !== -1 && newline < end) end = newline;
  }
  return source.slice(start, end).replace(/\s+/g, " ").trim().slice(0, SIGNATURE_MAX_CHARS);
}
