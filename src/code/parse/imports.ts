/** The imports of a parsed file, and where they sit (the reference pass skips their identifiers). */
import type { Language, Node, Query } from "web-tree-sitter";
import { MAX_IMPORTS } from "./limits";
import { queryFor } from "./queries";
import type { LanguageSpec } from "./spec";
import type { ImportRef } from "./types";

export interface Imports {
  imports: ImportRef[];
  /** [start, end) offsets of the import statements, in source order. */
  ranges: Array<[number, number]>;
}

export function collectImports(root: Node, query: Query, spec: LanguageSpec): Imports {
  const result: Imports = { imports: [], ranges: [] };
  for (const capture of query.captures(root)) {
    if (capture.name !== "import") continue;
    result.ranges.push([capture.node.startIndex, capture.node.endIndex]);
    for (const found of spec.importsOf(capture.node)) {
      if (result.imports.length >= MAX_IMPORTS) return result;
      if (found.specifier) result.imports.push(found);
    }
  }
  return result;
}

/** The imports of a tree its grammar parsed, through the grammar's compiled import query. */
export function importsOfTree(root: Node, language: string, grammar: Language, spec: LanguageSpec): Imports {
  return collectImports(root, queryFor(language, grammar, "imports", spec.importQuery), spec);
}
