/**
 * What the parser answers about one source file: the shapes the code index stores. Line numbers are
 * 1-based and inclusive everywhere.
 */

export interface CodeChunk {
  start_line: number;
  end_line: number;
  /** Qualified name of the enclosing definition ("UserService.login"); "" for top-level code. */
  symbol: string;
  /** "function" | "method" | "class" | "interface" | "type" | "module" (top-level code) | "window" (no grammar). */
  kind: string;
  text: string;
}

export interface SymbolDef {
  name: string;
  qualified: string;
  /** function, method, class, interface, type, enum, namespace or variable. */
  kind: string;
  start_line: number;
  end_line: number;
  exported: boolean;
  /** The declaration up to its body, whitespace collapsed, at most 200 characters. */
  signature: string;
}

export interface SymbolRef {
  name: string;
  line: number;
  /** Qualified name of the definition the reference sits in; "" at top level. */
  enclosing: string;
  kind: "call" | "reference";
}

export interface ImportRef {
  /** The module as written: "./x.js", "..pkg.mod", "github.com/a/b". */
  specifier: string;
  line: number;
  /**
   * Names taken from the module as it exports them: `{ a as b }` gives "a", a default import
   * "default", a namespace import or `export *` "*"; Python's `from m import a` "a"; a Go import's
   * alias when it has one. Empty for a side-effect import, `require`, `import()` and plain `import m`.
   */
  names: string[];
}

export interface ParsedFile {
  language: string;
  /** True when a grammar parsed the file (even with syntax errors); false for line windows. */
  syntax: boolean;
  chunks: CodeChunk[];
  symbols: SymbolDef[];
  references: SymbolRef[];
  imports: ImportRef[];
  /** What a work limit cut (the grammar skipped, chunks replaced by line windows), else absent. */
  note?: string;
}
