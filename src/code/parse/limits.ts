/**
 * The bounds that keep one file's parse inside a Worker's CPU and memory, and its chunks the size
 * an embedding model and a reader take in at once.
 */

/** A definition or a run of top-level code longer than this is split into windows. */
export const CHUNK_MAX_LINES = 80;
export const CHUNK_MAX_CHARS = 3_000;

/** Windows (files without a grammar, and bodies over the limits above) and their shared lines. */
export const WINDOW_LINES = 60;
export const WINDOW_OVERLAP = 10;

/**
 * References are capped per file, earliest first: a generated or minified file can hold hundreds of
 * thousands of identifiers, and recording them all would cost more CPU than the parse itself and
 * swamp the index with one file. Past the cap the file's later references are not recorded.
 */
export const MAX_REFERENCES = 5_000;
/** Definitions and imports are capped for the same reason (a table of constants, a barrel file). */
export const MAX_SYMBOLS = 5_000;
export const MAX_IMPORTS = 2_000;

/**
 * Past this many characters a file is cut into windows without a grammar: tree-sitter's tree for a
 * file this size already takes tens of MB of the isolate's 128 MB, and the wasm memory it grows
 * into is never given back.
 */
export const MAX_SYNTAX_CHARS = 1_500_000;

export const SIGNATURE_MAX_CHARS = 200;

/**
 * Tree-sitter's queries cost about the node count times the nesting depth (10,000 nested
 * parentheses: over a second per query, growing with the square). Before the queries run, the
 * bracket depth summed over the text estimates that work; past this the file gets line windows.
 */
export const MAX_NESTING_WORK = 40_000_000;

/**
 * A file's chunks may hold at most this many times its text (plus a little): an outline of many
 * items on one long line would otherwise repeat that line once per item (30 KB: 150,000 chunks).
 */
export const MAX_CHUNK_TEXT_FACTOR = 4;
export const MAX_CHUNKS = 20_000;
