/**
 * What a file imports, read with its grammar and nothing else: for callers that want only the
 * imports (the document store's graph), through the same grammars, import query, extraction and
 * bounds as parseSource. The read itself is synchronous (a caller may hold no promise), so the
 * grammar is loaded beforehand with `loadImportGrammar`.
 */
import type { Tree } from "web-tree-sitter";
import { syntaxRefusal } from "./bounds";
import { importsOfTree } from "./imports";
import { loadedParser, parserFor } from "./runtime";
import { SPECS } from "./specs";
import type { ImportRef } from "./types";

/** The languages read here (the keys parseSource selects a grammar by). */
export const IMPORT_GRAMMARS = Object.keys(SPECS);

type ImportsRead = { read: true; imports: ImportRef[] } | { read: false; note: string };

/** Loads the language's grammar so that `readImports` can use it; a grammar that cannot load throws. */
export async function loadImportGrammar(language: string): Promise<void> {
  if (!SPECS[language]) throw new Error(`no grammar for ${language}`);
  await parserFor(language);
}

/**
 * The imports of `text` in `language`, in source order, at most MAX_IMPORTS; or why they were not
 * read (a text over the grammar's bounds, a grammar not loaded, a parse that failed).
 */
export function readImports(language: string, text: string): ImportsRead {
  const spec = SPECS[language];
  if (!spec) return { read: false, note: `no grammar reads ${language}` };
  const refusal = syntaxRefusal(text);
  if (refusal) return { read: false, note: refusal.note };
  const loaded = loadedParser(language);
  if (!loaded) return { read: false, note: `the ${language} grammar is not loaded` };
  let tree: Tree | null = null;
  try {
    tree = loaded.parser.parse(text);
    if (!tree) return { read: false, note: `the ${language} parse failed` };
    return { read: true, imports: importsOfTree(tree.rootNode, language, loaded.grammar, spec).imports };
  } catch (error) {
    // A parse that throws costs the file its imports, as it costs parseSource's file its symbols.
    console.warn(`code parse: ${language} import read failed`, error instanceof Error ? error.message : error);
    return { read: false, note: `the ${language} parse failed` };
  } finally {
    // The tree lives in wasm memory, outside the garbage collector's reach.
    tree?.delete();
  }
}
