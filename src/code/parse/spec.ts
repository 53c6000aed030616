/**
 * What each grammar tells the generic outline, import and reference passes: which nodes define
 * what, which are imports, and a tree-sitter query for references.
 */
import type { Node } from "web-tree-sitter";
import type { ImportRef } from "./types";

export interface Definition {
  /** The whole extent: with `export`, `declare` and decorators. */
  node: Node;
  /** Where the signature starts (after decorators, at `export` when there is one). */
  declaration: Node;
  name: string;
  /** The identifier that names it, so the reference pass does not count it as a use. */
  nameNode: Node | null;
  /** function, method, class, interface, type, enum, namespace or variable. */
  kind: string;
  exported: boolean;
  /** The signature ends where this starts; null takes the declaration's first line. */
  body: Node | null;
  /** For classes and namespaces: the nodes inside, outlined as the next level. */
  members?: Node[];
  /** Qualifies the name instead of the enclosing definition (a Go method's receiver type). */
  qualifier?: string;
}

export interface Container {
  /** "module" at top level and inside namespaces; "class" inside a class body. */
  level: "module" | "class";
  /** Whether the enclosing definition is exported (members inherit it). */
  exported: boolean;
  /** Names a TS/JS module exports by a separate `export { a, b }`. */
  exportedNames: ReadonlySet<string>;
}

export interface LanguageSpec {
  definitions(node: Node, container: Container): Definition[];
  exportedNames?(root: Node): Set<string>;
  /** Captures `@import` on every node `importsOf` understands. */
  importQuery: string;
  importsOf(node: Node): ImportRef[];
  /**
   * Captures `@call` (the called name: `c` in `a.b.c()`), `@ref` (an identifier used) and `@decl`
   * (an identifier being declared, not used: parameters, local variables), which wins over the
   * other two on the same node; `@call` wins over `@ref`.
   */
  referenceQuery: string;
  /** Names too common to be worth a reference row (Python's `self`). */
  ignoredNames?: ReadonlySet<string>;
}

export function firstLine(node: Node): number {
  return node.startPosition.row + 1;
}

/** The last line a node has text on (a node can end at column 0 of the line after it). */
export function lastLine(node: Node): number {
  const end = node.endPosition;
  return end.column === 0 && end.row > node.startPosition.row ? end.row : end.row + 1;
}

/** A quoted string literal's content, without its quotes; escapes are left as written. */
export function unquote(text: string): string {
  return text.length >= 2 ? text.slice(1, -1) : text;
}

/** A definition named by `nameNode`, whose signature starts at `node` unless told otherwise. */
export function definition(node: Node, nameNode: Node | null, fields: Omit<Definition, "node" | "name" | "nameNode" | "declaration"> & { declaration?: Node; name?: string }): Definition {
  return { ...fields, node, nameNode, declaration: fields.declaration ?? node, name: fields.name ?? nameNode?.text ?? "" };
}
