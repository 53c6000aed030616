/**
 * tree-sitter in workerd: the runtime and the grammars, loaded on first use and kept per isolate.
 *
 * Production Workers refuse to compile WebAssembly from bytes at run time (`WebAssembly.compile`,
 * `new WebAssembly.Module(bytes)` and `instantiate(bytes)` throw "Wasm code generation disallowed by
 * embedder"; local workerd, and so the tests, refuse it too). The only wasm a Worker can run is wasm
 * that came in as a module: `import m from "x.wasm"` gives a `WebAssembly.Module` that wrangler
 * uploads as a wasm part of the Worker and workerd compiles while loading the Worker, before any of
 * its code runs (the test pool does the same with @cloudflare/vitest-plugin). So:
 * - the runtime (web-tree-sitter.wasm, emscripten's main module) is instantiated by our
 *   `instantiateWasm` hook from the imported Module; emscripten then never fetches or compiles
 *   anything (its locateFile/fetch path is skipped entirely);
 * - each grammar (an emscripten side module) goes through `Language.loadSync(module)`, whose dynamic
 *   linker accepts an already-compiled `WebAssembly.Module` and only instantiates it against the
 *   runtime's memory and table. (`Language.load(bytes)` would compile, and fail in production.)
 * The one other compile in web-tree-sitter is emscripten's `convertJsFunctionToWasm`, reached only
 * when the dynamic linker puts a JavaScript function into the wasm table (a grammar importing a
 * symbol only JavaScript provides); the tests load and parse with every grammar in workerd, where
 * compiling is refused, so none of these does.
 */
import { Language, Parser } from "web-tree-sitter";
import runtimeWasm from "web-tree-sitter/web-tree-sitter.wasm";
import goWasm from "tree-sitter-go/tree-sitter-go.wasm";
import javascriptWasm from "tree-sitter-javascript/tree-sitter-javascript.wasm";
import pythonWasm from "tree-sitter-python/tree-sitter-python.wasm";
import tsxWasm from "tree-sitter-typescript/tree-sitter-tsx.wasm";
import typescriptWasm from "tree-sitter-typescript/tree-sitter-typescript.wasm";

const GRAMMARS: Readonly<Record<string, WebAssembly.Module>> = {
  typescript: typescriptWasm,
  tsx: tsxWasm,
  javascript: javascriptWasm,
  python: pythonWasm,
  go: goWasm,
};

let runtime: Promise<void> | undefined;

/**
 * Runs emscripten's start with its Node.js detection answering "no". With nodejs_compat, workerd
 * has `process.versions.node`, so emscripten takes its Node path, whose first step is
 * `createRequire(import.meta.url)`; in a deployed bundle `import.meta.url` is undefined and that
 * throws (the tests run the module through Vite, which fills it in, so only a real bundle shows it:
 * checked with `wrangler dev` on the dry-run's output). Emscripten skips the Node path for an
 * Electron renderer (`process.type === "renderer"`), so that flag is set for the synchronous
 * stretch in which emscripten reads it (the detection is the first statement of its async start)
 * and restored before any other code can run.
 */
function withoutNodeDetection<T>(start: () => T): T {
  const host = (globalThis as { process?: { type?: unknown } }).process;
  if (typeof host !== "object" || host === null) return start();
  const had = Object.hasOwn(host, "type");
  const previous = host.type;
  host.type = "renderer";
  try {
    return start();
  } finally {
    if (had) host.type = previous;
    else delete host.type;
  }
}

function initRuntime(): Promise<void> {
  runtime ??= withoutNodeDetection(() =>
    Parser.init({
      // emscripten's hook for hosts that instantiate the main module themselves; it calls back with
      // (instance, module) and ignores the return value in this build.
      instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) {
        const instance = new WebAssembly.Instance(runtimeWasm, imports);
        done(instance, runtimeWasm);
        return instance.exports;
      },
    }),
  ).catch((error: unknown) => {
    // Let the next file try again rather than keep a failed start for the isolate's life.
    runtime = undefined;
    throw error;
  });
  return runtime;
}

const languages = new Map<string, Language>();
const parsers = new Map<string, Parser>();

/** The grammar for a language, linked into the runtime on first use. */
export async function languageFor(language: string): Promise<Language | undefined> {
  const module = GRAMMARS[language];
  if (!module) return undefined;
  await initRuntime();
  let loaded = languages.get(language);
  if (!loaded) {
    loaded = Language.loadSync(module);
    languages.set(language, loaded);
  }
  return loaded;
}

/**
 * A parser set to the language's grammar. Parsing is synchronous, so one parser per language is
 * shared by every request the isolate serves without interleaving.
 */
export async function parserFor(language: string): Promise<Parser | undefined> {
  const grammar = await languageFor(language);
  if (!grammar) return undefined;
  let parser = parsers.get(language);
  if (!parser) {
    parser = new Parser();
    parser.setLanguage(grammar);
    parsers.set(language, parser);
  }
  return parser;
}

/**
 * The language's grammar and parser if an earlier `parserFor` loaded them, else undefined: for
 * synchronous callers, which load them first with `parserFor` (the runtime only starts async).
 */
export function loadedParser(language: string): { grammar: Language; parser: Parser } | undefined {
  const grammar = languages.get(language);
  const parser = parsers.get(language);
  return grammar && parser ? { grammar, parser } : undefined;
}
