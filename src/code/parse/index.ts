/**
 * Syntax-aware parsing of one source file for the code index: chunks, definitions, references and
 * imports. TypeScript, TSX, JavaScript, Python and Go go through tree-sitter (see runtime.ts for how
 * its wasm runs in a Worker); every other file, a file too big to parse, or a parse that fails gets
 * overlapping line windows and nothing else.
 */
import { syntaxRefusal } from "./bounds";
import { chunkItems } from "./chunks";
import { importsOfTree } from "./imports";
import { languageOf } from "./languages";
import { MAX_CHUNK_TEXT_FACTOR, MAX_CHUNKS } from "./limits";
import { SourceLines } from "./lines";
import { outline } from "./outline";
import { queryFor } from "./queries";
import { collectReferences } from "./references";
import { languageFor, parserFor } from "./runtime";
import type { LanguageSpec } from "./spec";
import { SPECS } from "./specs";
import type { ParsedFile } from "./types";
import { windowChunks } from "./windows";

export type { CodeChunk, ParsedFile } from "./types";
export { languageOf } from "./languages";
export { resolveImport } from "./resolve";

export async function parseSource(path: string, text: string): Promise<ParsedFile> {
  const language = languageOf(path);
  const lines = new SourceLines(text);
  const spec = SPECS[language];
  let note: string | undefined;
  const refusal = spec ? syntaxRefusal(text) : undefined;
  // A file over the size limit gets line windows without a note, as every file without a grammar does.
  if (refusal?.reason === "nesting") {
    note = `${refusal.note}; indexed as line windows, without symbols`;
  } else if (spec && !refusal) {
    try {
      const parsed = await parseWithGrammar(language, spec, text, lines);
      if (parsed) return withBoundedChunks(parsed, lines);
    } catch (error) {
      // A grammar that cannot load or a parse that throws costs the file its symbols, not its chunks.
      console.warn(`code parse: ${language} parse of ${path.slice(-200)} failed, using line windows`, error instanceof Error ? error.message : error);
    }
  }
  return { language, syntax: false, chunks: windowChunks(lines, 1, lines.count, "", "window"), symbols: [], references: [], imports: [], ...(note ? { note } : {}) };
}

/** The outline's chunks, or line windows when they would repeat the text many times over. */
function withBoundedChunks(parsed: ParsedFile, lines: SourceLines): ParsedFile {
  const limit = MAX_CHUNK_TEXT_FACTOR * lines.text.length + 64 * 1024;
  let chars = 0;
  for (const c of parsed.chunks) chars += c.text.length;
  if (parsed.chunks.length <= MAX_CHUNKS && chars <= limit) return parsed;
  const note = `the outline's chunks would hold ${chars} characters in ${parsed.chunks.length} chunks (limits: ${MAX_CHUNKS} chunks, ${MAX_CHUNK_TEXT_FACTOR}x the file); chunked as line windows instead`;
  return { ...parsed, chunks: windowChunks(lines, 1, lines.count, "", "window"), note };
}

async function parseWithGrammar(language: string, spec: LanguageSpec, text: string, lines: SourceLines): Promise<ParsedFile | undefined> {
  const grammar = await languageFor(language);
  const parser = await parserFor(language);
  if (!grammar || !parser) return undefined;
  const tree = parser.parse(text);
  if (!tree) return undefined;
  try {
    const root = tree.rootNode;
    const found = outline(root, text, spec);
    const { imports, ranges } = importsOfTree(root, language, grammar, spec);
    const references = collectReferences(root, queryFor(language, grammar, "references", spec.referenceQuery), {
      source: text,
      scopes: found.scopes,
      definitionNames: found.definitionNames,
      skip: ranges,
      ...(spec.ignoredNames ? { ignoredNames: spec.ignoredNames } : {}),
    });
    const chunks = chunkItems(lines, found.items, 1, lines.count, { symbol: "", kind: "module" });
    return { language, syntax: true, chunks, symbols: found.symbols, references, imports };
  } finally {
    // The tree lives in wasm memory, outside the garbage collector's reach.
    tree.delete();
  }
}
