/**
 * The document store's knowledge graph (seed 003): a document node per live path, and edges
 * extracted when content is added: LINKS_TO (markdown links), IMPORTS (code imports and includes)
 * and DEFINES (top-level symbols). Imports of TypeScript/JavaScript, Python and Go are read with
 * the code index's tree-sitter grammars (src/code/parse), so both answer "what does this file
 * import" the same way; everything else (markdown links, the other languages' imports, every
 * language's symbols) is read with linear-time patterns, line by line, not a parser.
 *
 * An edge to another document is stored as the path it names plus a resolution scheme (which
 * suffixes a reference may omit: `./util` → `util.ts`, `util/index.ts`, …) and resolved when the
 * graph is read, against the documents live at that moment. So a link to a path added later
 * resolves then, a deleted target falls back to its module or "unresolved" node, and nothing has
 * to be rewritten when other documents come and go. An edge counts only while the document it
 * came from is live with the content it was extracted from (src_hash).
 */
import type { RE2JS } from "re2js";
import { and, asc, count, eq, isNull, notInArray, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../../core/context";
import { dbOf, statementOf } from "../../db/client";
import { docGraphEdges, documents } from "../../db/schema";
import { excerpt, invalidInput, notFound } from "../../core/errors";
import { re2Lines, re2Matches, type Re2Match } from "../../core/re2";
import { WorkBudget } from "../../core/work-budget";
import { languageOf as codeLanguageOf } from "../../code/parse/languages";
import { loadImportGrammar, readImports } from "../../code/parse/read-imports";
import type { ImportRef } from "../../code/parse/types";
import { normalizePath } from "../store/store";

export const RELATIONS = ["LINKS_TO", "IMPORTS", "DEFINES"] as const;
export type Relation = (typeof RELATIONS)[number];
export const NODE_TYPES = ["document", "module", "symbol", "url", "unresolved"] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** Suffixes a reference of each scheme may leave out, in the order they are tried. */
const SCHEMES: Record<string, readonly string[]> = {
  exact: [""],
  md: ["", ".md", ".markdown", ".mdx", "/README.md", "/index.md"],
  js: ["", ".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".json", "/index.ts", "/index.tsx", "/index.js", "/index.jsx", "/index.mjs"],
  py: [".py", ".pyi", "/__init__.py"],
  rs: [".rs", "/mod.rs"],
  rb: ["", ".rb"],
  jvm: [".java", ".kt"],
};

const SUFFIX_VALUES = Object.entries(SCHEMES)
  .flatMap(([scheme, suffixes]) => suffixes.map((s, i) => `('${scheme}', '${s}', ${i})`))
  .join(", ");

/** Per document: more references than this are dropped (a generated file, not a hand-written one). */
export const MAX_EDGES_PER_DOCUMENT = 2000;
const MAX_LABEL = 256;
/** Extraction reads at most this much of a document's text (the index keeps about as much). */
export const MAX_EXTRACT_CHARS = 1024 * 1024;
/** A grammar parses at most this much of a document for its imports (see parseWindow). */
export const MAX_IMPORT_PARSE_CHARS = 64 * 1024;
/** Matches looked at per document, duplicates included: past this the rest of the text is not read. */
export const MAX_SCANNED_MATCHES = 50 * MAX_EDGES_PER_DOCUMENT;
export const GRAPH_LIMIT_MAX = 1000;

// ---------------------------------------------------------------------------------------------
// Extraction.

/** One logical reference out of a document: the paths it may name (in order), and what it is otherwise. */
export interface ExtractedEdge {
  relation: Relation;
  /** Store paths the reference may name, tried in order, each expanded by `scheme`. */
  targets: string[];
  scheme: keyof typeof SCHEMES | null;
  /** The node when no target is a live document. */
  node_key: string;
  node_type: Exclude<NodeType, "document">;
  label: string;
  kind?: string;
}

type Lang = "markdown" | "js" | "python" | "go" | "rust" | "c" | "jvm" | "ruby";

const EXTENSIONS: Record<string, Lang> = {
  md: "markdown",
  markdown: "markdown",
  mdx: "markdown",
  js: "js",
  mjs: "js",
  cjs: "js",
  jsx: "js",
  ts: "js",
  tsx: "js",
  mts: "js",
  cts: "js",
  py: "python",
  pyi: "python",
  go: "go",
  rs: "rust",
  c: "c",
  h: "c",
  cc: "c",
  cpp: "c",
  cxx: "c",
  hpp: "c",
  hh: "c",
  hxx: "c",
  ino: "c",
  java: "jvm",
  kt: "jvm",
  kts: "jvm",
  scala: "jvm",
  rb: "ruby",
};

/**
 * The tree-sitter grammar that reads a document's imports. Markdown, Rust, C/C++, Java/Kotlin/Scala
 * and Ruby have no grammar in src/code/parse: their references are read by the patterns below.
 */
function grammarOf(lang: Lang, path: string, mime: string): string | null {
  if (lang === "python" || lang === "go") return lang;
  if (lang !== "js") return null;
  const byName = codeLanguageOf(path);
  if (byName === "typescript" || byName === "tsx" || byName === "javascript") return byName;
  // A script known by its media type only.
  return /typescript/.test(mime) ? "typescript" : "javascript";
}

function languageOf(path: string, mime: string): Lang | null {
  const dot = path.lastIndexOf(".");
  const ext = dot > path.lastIndexOf("/") ? path.slice(dot + 1).toLowerCase() : "";
  if (EXTENSIONS[ext]) return EXTENSIONS[ext]!;
  if (/markdown/.test(mime)) return "markdown";
  if (/python/.test(mime)) return "python";
  if (/javascript|typescript/.test(mime)) return "js";
  return null;
}

const dirOf = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "");
const join = (dir: string, rel: string) => (dir === "" ? rel : `${dir}/${rel}`);

/** Resolves `rel` against folder `dir` ('/'-rooted refs start at the store's root); null if it climbs out. */
function resolvePath(dir: string, rel: string): string | null {
  const parts = rel.startsWith("/") ? [] : dir.split("/").filter(Boolean);
  for (const seg of rel.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else {
      parts.push(seg);
    }
  }
  return parts.length === 0 ? null : parts.join("/");
}

const cap = (s: string) => (s.length <= MAX_LABEL ? s : s.slice(0, MAX_LABEL));

function edge(relation: Relation, targets: (string | null)[], scheme: ExtractedEdge["scheme"], nodeType: ExtractedEdge["node_type"], key: string, label: string, kind?: string): ExtractedEdge {
  const e: ExtractedEdge = { relation, targets: targets.filter((t): t is string => t !== null && t.length <= 1024), scheme, node_key: cap(key), node_type: nodeType, label: cap(label) };
  if (kind) e.kind = kind;
  return e;
}

const symbol = (path: string, name: string, kind: string) => edge("DEFINES", [], null, "symbol", `symbol:${path}#${name}`, name, kind);

/**
 * Every pattern below runs on re2js (linear in the text whatever it holds): the platform's
 * backtracking engine took 18.8 s on 128 KB of `[` with the markdown link pattern, and grew the
 * same way on `.ts` files of `import a` lines. The few native regexes left in this section run
 * on a single path or a short captured name and cannot backtrack (one anchored class run).
 */
type Scan = (re: () => RE2JS, text: string) => Iterable<Re2Match>;

/** Compiled on first use: a Worker that never indexes a Go file never compiles its patterns. */
function pattern(source: string): () => RE2JS {
  let re: RE2JS | undefined;
  return () => (re ??= re2Lines(source));
}

/** Text up to the first of `chars` (a path's query or fragment dropped). */
function before(text: string, chars: string): string {
  for (let i = 0; i < text.length; i++) if (chars.includes(text[i]!)) return text.slice(0, i);
  return text;
}

/** `text` without inline code spans (`…`): a backtick with no partner is left as it is. */
function withoutCodeSpans(text: string): string {
  let open = text.indexOf("`");
  if (open < 0) return text;
  let out = "";
  let at = 0;
  while (open >= 0) {
    const close = text.indexOf("`", open + 1);
    if (close < 0) break;
    out += text.slice(at, open);
    at = close + 1;
    open = text.indexOf("`", at);
  }
  return out + text.slice(at);
}

/** The fence a line opens or closes (``` or ~~~ after leading whitespace), else null. */
function fenceOf(line: string): string | null {
  const t = line.trimStart();
  return t.startsWith("```") ? "```" : t.startsWith("~~~") ? "~~~" : null;
}

const MD_LINK = pattern(String.raw`!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+["'(][^)]*)?\)`);
const MD_REF = pattern(String.raw`^\s{0,3}\[[^\]]+\]:\s*(\S+)`);
const MD_AUTOLINK = pattern(String.raw`<(https?://[^>\s]+)>`);
const MD_WIKI = pattern(String.raw`\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]`);

function markdownEdges(path: string, text: string, scan: Scan): ExtractedEdge[] {
  const out: ExtractedEdge[] = [];
  const dir = dirOf(path);
  const addLink = (raw: string) => {
    let target = raw.trim();
    if (target.startsWith("<")) target = target.slice(1);
    if (target.endsWith(">")) target = target.slice(0, -1);
    if (target === "" || target.startsWith("#")) return;
    if (/^https?:\/\//i.test(target)) {
      const url = before(target, "#");
      out.push(edge("LINKS_TO", [], null, "url", `url:${url}`, url));
      return;
    }
    // Other schemes (mailto:, data:, ftp:) name nothing in the store.
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return;
    target = before(target, "?#");
    try {
      target = decodeURIComponent(target);
    } catch {
      // A stray '%' is taken literally.
    }
    const resolved = resolvePath(dir, target);
    if (!resolved || resolved === path) return;
    out.push(edge("LINKS_TO", [resolved], "md", "unresolved", `unresolved:${resolved}`, resolved));
  };
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const f = fenceOf(line);
    if (f) {
      fence = fence === null ? f : fence === f ? null : fence;
      continue;
    }
    if (fence) continue;
    // Inline code spans are examples, not links.
    const prose = withoutCodeSpans(line);
    // Each pattern needs its punctuation on the line; most lines have none and skip the regex.
    if (prose.includes("](")) for (const m of scan(MD_LINK, prose)) addLink(m[1]!);
    if (prose.includes("]:")) for (const m of scan(MD_REF, prose)) addLink(m[1]!);
    if (prose.includes("<http")) for (const m of scan(MD_AUTOLINK, prose)) addLink(m[1]!);
    if (prose.includes("[[")) for (const m of scan(MD_WIKI, prose)) addLink(m[1]!);
  }
  return out;
}

const JS_NAME = String.raw`([A-Za-z_$][\w$]*)`;
const JS_DEFS: [() => RE2JS, string][] = [
  [pattern(String.raw`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*${JS_NAME}`), "function"],
  [pattern(String.raw`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+${JS_NAME}`), "class"],
  [pattern(String.raw`^(?:export\s+)?(?:declare\s+)?interface\s+${JS_NAME}`), "interface"],
  [pattern(String.raw`^(?:export\s+)?(?:declare\s+)?type\s+${JS_NAME}\s*[=<]`), "type"],
  [pattern(String.raw`^(?:export\s+)?(?:declare\s+)?(?:const\s+)?enum\s+${JS_NAME}`), "enum"],
  [pattern(String.raw`^(?:export\s+)?(?:declare\s+)?(?:const|let|var)\s+${JS_NAME}`), "const"],
  [pattern(String.raw`^(?:export\s+)?(?:declare\s+)?namespace\s+([A-Za-z_$][\w$.]*)`), "namespace"],
];

function jsEdges(path: string, text: string, scan: Scan, imports: readonly ImportRef[]): ExtractedEdge[] {
  const out: ExtractedEdge[] = [];
  const dir = dirOf(path);
  const addImport = (spec: string) => {
    if (spec.startsWith(".") || spec.startsWith("/")) {
      const base = resolvePath(dir, spec);
      if (!base) return;
      // ESM TypeScript names the compiled file ('./x.js') for the source './x.ts'.
      const stripped = base.replace(/\.(m|c)?jsx?$/, "");
      out.push(edge("IMPORTS", stripped !== base ? [base, stripped] : [base], "js", "unresolved", `unresolved:${base}`, base));
    } else {
      out.push(edge("IMPORTS", [], null, "module", `module:js:${spec}`, spec));
    }
  };
  for (const i of imports) addImport(i.specifier);
  for (const [re, kind] of JS_DEFS) {
    for (const m of scan(re, text)) {
      // `const enum E` is the enum pattern's (RE2 has no lookahead to say so in the pattern).
      if (kind === "const" && m[1] === "enum") continue;
      out.push(symbol(path, m[1]!, kind));
    }
  }
  return out;
}

const PY_DEF = pattern(String.raw`^(?:async\s+)?def\s+(\w+)`);
const PY_CLASS = pattern(String.raw`^class\s+(\w+)`);
// `X = …` but not `X == …`: the character after '=' is consumed instead of looked ahead at.
const PY_CONST = pattern(String.raw`^([A-Z][A-Z0-9_]*)\s*(?::[^=\n]+)?=(?:[^=]|$)`);

function pythonEdges(path: string, text: string, scan: Scan, imports: readonly ImportRef[]): ExtractedEdge[] {
  const out: ExtractedEdge[] = [];
  const dir = dirOf(path);
  const addModule = (mod: string, names: string[]) => {
    let dots = 0;
    while (mod[dots] === ".") dots++;
    const rest = mod.slice(dots).replaceAll(".", "/");
    if (dots > 0) {
      let base: string | null = dir;
      for (let i = 1; i < dots && base !== null; i++) base = base === "" ? null : dirOf(base);
      if (base === null) return;
      if (rest === "") {
        // `from . import x`: x is a sibling module, or a name in the package.
        for (const n of names) {
          const sibling = join(base, n);
          out.push(edge("IMPORTS", [sibling, base], "py", "unresolved", `unresolved:${sibling}`, `.${n}`));
        }
        return;
      }
      const target = join(base, rest);
      out.push(edge("IMPORTS", [target], "py", "unresolved", `unresolved:${target}`, mod));
      return;
    }
    // An absolute import is a module next to this file, one under the store's root, or a package.
    out.push(edge("IMPORTS", [join(dir, rest), rest], "py", "module", `module:python:${mod}`, mod));
  };
  for (const i of imports) {
    // A module is dots and names (`..pkg.mod`); `from . import *` names no sibling module.
    if (/^[\w.]+$/.test(i.specifier))
      addModule(
        i.specifier,
        i.names.filter((n) => /^\w+$/.test(n)),
      );
  }
  for (const m of scan(PY_DEF, text)) out.push(symbol(path, m[1]!, "function"));
  for (const m of scan(PY_CLASS, text)) out.push(symbol(path, m[1]!, "class"));
  for (const m of scan(PY_CONST, text)) out.push(symbol(path, m[1]!, "const"));
  return out;
}

const GO_FUNC = pattern(String.raw`^func\s+(?:\(\s*\w*\s*\*?(\w+)[^)]*\)\s*)?(\w+)`);
const GO_TYPE = pattern(String.raw`^type\s+(\w+)(?:\[[^\]]*\])?\s+(struct|interface)?`);
const GO_VALUE = pattern(String.raw`^(const|var)\s+(\w+)`);
const GO_BLOCK = pattern(String.raw`^(const|var|type)\s*\(([\s\S]*?)^\)`);
const GO_BLOCK_NAME = pattern(String.raw`^\t(\w+)`);

function goEdges(path: string, text: string, scan: Scan, imports: readonly ImportRef[]): ExtractedEdge[] {
  const out: ExtractedEdge[] = [];
  for (const i of imports) out.push(edge("IMPORTS", [], null, "module", `module:go:${i.specifier}`, i.specifier));
  for (const m of scan(GO_FUNC, text)) out.push(m[1] ? symbol(path, `${m[1]}.${m[2]}`, "method") : symbol(path, m[2]!, "function"));
  for (const m of scan(GO_TYPE, text)) out.push(symbol(path, m[1]!, m[2] ?? "type"));
  for (const m of scan(GO_VALUE, text)) out.push(symbol(path, m[2]!, m[1]!));
  for (const block of scan(GO_BLOCK, text)) for (const m of scan(GO_BLOCK_NAME, block[2]!)) out.push(symbol(path, m[1]!, block[1]!));
  return out;
}

const RS_VIS = String.raw`(?:pub(?:\([^)]*\))?\s+)?`;
const RS_MOD = pattern(String.raw`^\s*${RS_VIS}mod\s+(\w+)\s*;`);
const RS_USE = pattern(String.raw`^\s*${RS_VIS}use\s+([\w:]+)`);
const RS_EXTERN = pattern(String.raw`^\s*extern\s+crate\s+(\w+)`);
const RS_DEFS: [() => RE2JS, string][] = [
  [pattern(String.raw`^${RS_VIS}(?:(?:async|const|unsafe|extern\s+"[^"]*")\s+)*fn\s+(\w+)`), "function"],
  [pattern(String.raw`^${RS_VIS}(struct|enum|trait|type|union)\s+(\w+)`), ""],
  [pattern(String.raw`^${RS_VIS}(?:const|static)\s+(?:mut\s+)?(\w+)`), "const"],
  [pattern(String.raw`^macro_rules!\s*(\w+)`), "macro"],
  [pattern(String.raw`^${RS_VIS}mod\s+(\w+)\s*\{`), "module"],
];

function rustEdges(path: string, text: string, scan: Scan): ExtractedEdge[] {
  const out: ExtractedEdge[] = [];
  const dir = dirOf(path);
  const file = path.slice(path.lastIndexOf("/") + 1);
  // Child modules of lib.rs, main.rs and mod.rs live beside them; of foo.rs, in foo/.
  const modDir = /^(lib|main|mod)\.rs$/.test(file) ? dir : join(dir, file.replace(/\.rs$/, ""));
  const srcAt = path.lastIndexOf("src/");
  const crateRoot = srcAt >= 0 ? path.slice(0, srcAt + 3) : dir;
  for (const m of scan(RS_MOD, text)) {
    const target = join(modDir, m[1]!);
    out.push(edge("IMPORTS", [target], "rs", "unresolved", `unresolved:${target}`, m[1]!));
  }
  for (const m of scan(RS_USE, text)) {
    const segs = m[1]!.split("::").filter(Boolean);
    if (segs.length === 0) continue;
    if (segs[0] === "crate" || segs[0] === "self" || segs[0] === "super") {
      const base = segs[0] === "crate" ? crateRoot : segs[0] === "self" ? modDir : dir;
      const rest = segs.slice(1);
      // The longest prefix of the path that is a module file wins: `crate::a::b::Item` → src/a/b.rs, else src/a.rs.
      const targets: string[] = [];
      for (let n = rest.length; n >= 1; n--) targets.push(join(base, rest.slice(0, n).join("/")));
      const label = segs.join("::");
      if (targets.length > 0) out.push(edge("IMPORTS", targets, "rs", "unresolved", `unresolved:${targets[targets.length - 1]}`, label));
    } else {
      const mod = segs.length > 1 ? segs.slice(0, -1).join("::") : segs[0]!;
      out.push(edge("IMPORTS", [], null, "module", `module:rust:${mod}`, mod));
    }
  }
  for (const m of scan(RS_EXTERN, text)) out.push(edge("IMPORTS", [], null, "module", `module:rust:${m[1]}`, m[1]!));
  for (const [re, kind] of RS_DEFS) for (const m of scan(re, text)) out.push(kind === "" ? symbol(path, m[2]!, m[1]!) : symbol(path, m[1]!, kind));
  return out;
}

const C_NOT_FUNCTIONS = new Set(["if", "else", "for", "while", "switch", "return", "sizeof", "case", "do", "typedef", "using", "namespace", "template", "static_assert", "defined"]);
const C_INCLUDE = pattern(String.raw`^\s*#\s*include\s*([<"])([^>"]+)[>"]`);
const C_TAG = pattern(String.raw`^(?:typedef\s+)?(struct|class|union|enum(?:\s+class)?)\s+(\w+)\s*(?:final\s*)?(?:[:{]|$)`);
const C_TYPEDEF = pattern(String.raw`^typedef\s[^;{]*?(\w+)\s*;`);
const C_DEFINE = pattern(String.raw`^#\s*define\s+(\w+)`);
const C_NAMESPACE = pattern(String.raw`^namespace\s+(\w+)`);
const C_FUNCTION = pattern(String.raw`^(?:[A-Za-z_][\w:<>,*& \t]*?[ \t*&])?([A-Za-z_~][\w:~]*)[ \t]*\([^;\n]*$`);

function cEdges(path: string, text: string, scan: Scan): ExtractedEdge[] {
  const out: ExtractedEdge[] = [];
  const dir = dirOf(path);
  for (const m of scan(C_INCLUDE, text)) {
    const header = m[2]!.trim();
    const local = m[1] === '"' ? [resolvePath(dir, header)] : [];
    out.push(edge("IMPORTS", [...local, resolvePath("", header), resolvePath("include", header), resolvePath("src", header)], "exact", "module", `module:c:${header}`, header));
  }
  for (const m of scan(C_TAG, text)) out.push(symbol(path, m[2]!, m[1]!.startsWith("enum") ? "enum" : m[1]!));
  for (const m of scan(C_TYPEDEF, text)) out.push(symbol(path, m[1]!, "type"));
  for (const m of scan(C_DEFINE, text)) out.push(symbol(path, m[1]!, "macro"));
  for (const m of scan(C_NAMESPACE, text)) out.push(symbol(path, m[1]!, "namespace"));
  for (const m of scan(C_FUNCTION, text)) {
    const name = m[1]!;
    if (C_NOT_FUNCTIONS.has(name) || m[0]!.startsWith("#")) continue;
    out.push(symbol(path, name, "function"));
  }
  return out;
}

const JVM_MODS = "(?:(?:public|private|protected|internal|abstract|final|static|sealed|data|open|enum|annotation|inner)\\s+)*";
const JVM_IMPORT = pattern(String.raw`^import\s+(?:static\s+)?([\w.]+)(?:\.\*)?\s*;?\s*$`);
const JVM_TYPE = pattern(`^${JVM_MODS}(class|interface|enum|record|object)\\s+(\\w+)`);
const JVM_FUN = pattern(`^${JVM_MODS}fun\\s+(?:<[^>]*>\\s*)?(\\w+)`);

function jvmEdges(path: string, text: string, scan: Scan): ExtractedEdge[] {
  const out: ExtractedEdge[] = [];
  for (const m of scan(JVM_IMPORT, text)) {
    const name = m[1]!;
    const rel = name.replaceAll(".", "/");
    out.push(edge("IMPORTS", [rel, `src/main/java/${rel}`, `src/main/kotlin/${rel}`, `src/${rel}`], "jvm", "module", `module:jvm:${name}`, name));
  }
  for (const m of scan(JVM_TYPE, text)) out.push(symbol(path, m[2]!, m[1]!));
  for (const m of scan(JVM_FUN, text)) out.push(symbol(path, m[1]!, "function"));
  return out;
}

const RB_REQUIRE_RELATIVE = pattern(String.raw`^\s*require_relative\s+["']([^"']+)["']`);
const RB_REQUIRE = pattern(String.raw`^\s*require\s+["']([^"']+)["']`);
const RB_TYPE = pattern(String.raw`^(class|module)\s+([A-Z][\w:]*)`);
const RB_DEF = pattern(String.raw`^def\s+(?:self\.)?(\w+[?!=]?)`);

function rubyEdges(path: string, text: string, scan: Scan): ExtractedEdge[] {
  const out: ExtractedEdge[] = [];
  const dir = dirOf(path);
  for (const m of scan(RB_REQUIRE_RELATIVE, text)) {
    const target = resolvePath(dir, m[1]!);
    if (target) out.push(edge("IMPORTS", [target], "rb", "unresolved", `unresolved:${target}`, m[1]!));
  }
  for (const m of scan(RB_REQUIRE, text)) {
    out.push(edge("IMPORTS", [resolvePath("lib", m[1]!), resolvePath("", m[1]!)], "rb", "module", `module:ruby:${m[1]}`, m[1]!));
  }
  for (const m of scan(RB_TYPE, text)) out.push(symbol(path, m[2]!, m[1]!));
  for (const m of scan(RB_DEF, text)) out.push(symbol(path, m[1]!, "function"));
  return out;
}

/** The imports are those `grammarOf`'s grammar read (none for a language without one). */
const EXTRACTORS: Record<Lang, (path: string, text: string, scan: Scan, imports: readonly ImportRef[]) => ExtractedEdge[]> = {
  markdown: markdownEdges,
  js: jsEdges,
  python: pythonEdges,
  go: goEdges,
  rust: rustEdges,
  c: cEdges,
  jvm: jvmEdges,
  ruby: rubyEdges,
};

export interface GraphExtraction {
  edges: ExtractedEdge[];
  /** What was left out (text past the scan limit, references past the match or edge caps); null when nothing. */
  note: string | null;
}

/**
 * The part of `body` a grammar parses for imports: all of it up to MAX_IMPORT_PARSE_CHARS, else the
 * lines that fit, with a note. A grammar's error recovery costs up to a few milliseconds per KiB on
 * hostile text (tens of thousands of broken statements), where the patterns cost microseconds; the
 * window keeps a document's parse within about a tenth of a second, and imports sit at the top.
 */
function parseWindow(body: string, budget: WorkBudget): string {
  if (body.length <= MAX_IMPORT_PARSE_CHARS) return body;
  budget.cut(`graph: imports were read from the first ${MAX_IMPORT_PARSE_CHARS} characters only`);
  const lineEnd = body.lastIndexOf("\n", MAX_IMPORT_PARSE_CHARS);
  return body.slice(0, lineEnd > 0 ? lineEnd + 1 : MAX_IMPORT_PARSE_CHARS);
}

/**
 * The imports a grammar reads in `body`, each counted against the budget; none, with a note, when
 * the text is over the grammar's bounds (src/code/parse/limits.ts) or the grammar is not loaded.
 */
function grammarImports(grammar: string, body: string, budget: WorkBudget): ImportRef[] {
  const read = readImports(grammar, parseWindow(body, budget));
  if (!read.read) {
    budget.cut(`graph: imports were not read (${read.note})`);
    return [];
  }
  const kept: ImportRef[] = [];
  for (const i of read.imports) {
    if (!budget.take(1)) {
      budget.cut(`graph: stopped after ${MAX_SCANNED_MATCHES} candidate references; later ones were not recorded`);
      break;
    }
    kept.push(i);
  }
  return kept;
}

/**
 * Loads the grammar `extractGraph` reads this document's imports with, if it has one. Extraction is
 * synchronous and the grammars load asynchronously, so an async caller (indexGraph) awaits this
 * first. A grammar that fails to load costs the document its imports (extractGraph says so).
 */
async function loadGraphGrammar(path: string, mime: string): Promise<void> {
  const lang = languageOf(path, mime);
  const grammar = lang ? grammarOf(lang, path, mime) : null;
  if (!grammar) return;
  try {
    await loadImportGrammar(grammar);
  } catch (error) {
    console.warn(`docs graph: the ${grammar} grammar did not load`, error instanceof Error ? error.message : error);
  }
}

/**
 * The references a document makes, deduplicated, in the order they appear by kind. The work is
 * bounded twice: each language's patterns read at most MAX_EXTRACT_CHARS of the text (a fixed
 * number of linear passes), and at most MAX_SCANNED_MATCHES matches are looked at in all. Imports
 * are read with the document's grammar when it has one, loaded beforehand (indexGraph loads it;
 * see loadImportGrammar); the parse is bounded by the same size and nesting limits as the code index's.
 */
export function extractGraph(path: string, mime: string, text: string): GraphExtraction {
  const lang = languageOf(path, mime);
  if (!lang) return { edges: [], note: null };
  const budget = new WorkBudget(MAX_SCANNED_MATCHES);
  if (text.length > MAX_EXTRACT_CHARS) budget.cut(`graph: only the first ${MAX_EXTRACT_CHARS} characters were read for references`);
  const body = (text.length > MAX_EXTRACT_CHARS ? text.slice(0, MAX_EXTRACT_CHARS) : text).replace(/\r\n?/g, "\n");
  const scan: Scan = function* (re, within) {
    if (budget.left === 0) return;
    for (const m of re2Matches(re(), within)) {
      if (!budget.take(1)) {
        budget.cut(`graph: stopped after ${MAX_SCANNED_MATCHES} candidate references; later ones were not recorded`);
        return;
      }
      yield m;
    }
  };
  const grammar = grammarOf(lang, path, mime);
  const imports = grammar ? grammarImports(grammar, body, budget) : [];
  const seen = new Set<string>();
  const edges: ExtractedEdge[] = [];
  for (const e of EXTRACTORS[lang](path, body, scan, imports)) {
    const key = `${e.relation}\u0000${e.node_key}\u0000${e.targets.join("\u0000")}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (edges.length >= MAX_EDGES_PER_DOCUMENT) {
      budget.cut(`graph: kept the first ${MAX_EDGES_PER_DOCUMENT} references`);
      break;
    }
    edges.push(e);
  }
  return { edges, note: budget.note() };
}

/** The references a document makes (extractGraph without its note). */
export const extractEdges = (path: string, mime: string, text: string): ExtractedEdge[] => extractGraph(path, mime, text).edges;

// ---------------------------------------------------------------------------------------------
// Storage.

/** Rows per INSERT … SELECT FROM json_each: one bound parameter carries the rows, so the 100-parameter limit does not bite. */
const ROWS_PER_INSERT = 400;

/**
 * Records the graph edges of a document version; called by ingest after text extraction. Replaces
 * the out-edges recorded for this path's content and drops those of versions no longer live.
 */
export async function indexGraph(ctx: Ctx, doc: GraphSource): Promise<{ edges: number; note: string | null }> {
  const { statements, edges, note } = await graphStatements(ctx, doc);
  await ctx.d1.batch(statements);
  return { edges, note };
}

interface GraphSource {
  id: string;
  path: string;
  hash: string;
  mime: string;
  text: string | null;
}

/** The statements indexGraph commits, for a caller that commits them in a larger batch. */
export async function graphStatements(ctx: Ctx, doc: GraphSource): Promise<{ statements: D1PreparedStatement[]; edges: number; note: string | null }> {
  if (doc.text !== null) await loadGraphGrammar(doc.path, doc.mime);
  const { edges, note } = doc.text === null ? { edges: [], note: null } : extractGraph(doc.path, doc.mime, doc.text);
  const rows: unknown[][] = [];
  edges.forEach((e, seq) => {
    const targets = e.targets.length > 0 ? e.targets : [null];
    targets.forEach((target, alt) => rows.push([seq, alt, e.relation, target, target === null ? null : e.scheme, e.node_key, e.node_type, e.label, e.kind ?? null]));
  });
  const statements: D1PreparedStatement[] = [
    // Rows of this content are replaced; rows of content that is no longer live at the path go.
    // Rows of the live content stay if this call is a late one for an older version.
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .delete(docGraphEdges)
        .where(
          and(eq(docGraphEdges.tenantId, ctx.tenantId), eq(docGraphEdges.srcPath, doc.path), or(eq(docGraphEdges.srcHash, doc.hash), notInArray(docGraphEdges.srcHash, liveHashAt(ctx, doc.path)))),
        ),
    ),
  ];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    statements.push(
      // Hand SQL: an INSERT…SELECT over a json_each walk of the rows, one statement per group.
      ctx.d1
        .prepare(
          `INSERT OR IGNORE INTO doc_graph_edges (tenant_id, src_path, src_hash, seq, alt, relation, target, scheme, node_key, node_type, label, kind)
           SELECT ?1, ?2, ?3, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8 FROM json_each(?4)`,
        )
        .bind(ctx.tenantId, doc.path, doc.hash, JSON.stringify(rows.slice(i, i + ROWS_PER_INSERT))),
    );
  }
  return { statements, edges: edges.length, note };
}

/** Deletes the edges of a path whose recorded content is no longer live there (e.g. after delete). */
export async function pruneGraph(ctx: Ctx, path: string): Promise<void> {
  await dbOf(ctx)
    .delete(docGraphEdges)
    .where(and(eq(docGraphEdges.tenantId, ctx.tenantId), eq(docGraphEdges.srcPath, path), notInArray(docGraphEdges.srcHash, liveHashAt(ctx, path))))
    .run();
}

/** The hash of the live document at `path` (none if there is none), as a subquery. */
const liveHashAt = (ctx: Ctx, path: string) =>
  dbOf(ctx)
    .select({ hash: documents.hash })
    .from(documents)
    .where(and(eq(documents.tenantId, ctx.tenantId), eq(documents.path, path), isNull(documents.deletedAt)));

/** The live document at `path`, if any. */
const liveAtPath = (ctx: Ctx, path: string): Promise<{ path: string; hash: string } | undefined> =>
  dbOf(ctx)
    .select({ path: documents.path, hash: documents.hash })
    .from(documents)
    .where(and(eq(documents.tenantId, ctx.tenantId), eq(documents.path, path), isNull(documents.deletedAt)))
    .get();

// ---------------------------------------------------------------------------------------------
// Reading: edges resolved against the live documents.

interface ResolvedRow {
  src_path: string;
  src_hash: string;
  seq: number;
  relation: Relation;
  node_key: string;
  node_type: NodeType;
  label: string;
  kind: string | null;
  dst_path: string | null;
  dst_hash: string | null;
}

/**
 * One row per logical edge selected by `filter` (on `g`, parameters from ?2), whose source is
 * live with the content the edge came from, with the live document it resolves to (the first
 * target × suffix that exists, in order) or none.
 */
function resolvedSql(filter: string): string {
  return `WITH sfx (scheme, suffix, ord) AS (VALUES ${SUFFIX_VALUES}),
  e AS (
    SELECT g.src_path, g.src_hash, g.seq, g.alt, g.relation, g.target, g.scheme, g.node_key, g.node_type, g.label, g.kind
    FROM doc_graph_edges g
    JOIN documents s ON s.tenant_id = g.tenant_id AND s.path = g.src_path AND s.hash = g.src_hash AND s.deleted_at IS NULL
    WHERE g.tenant_id = ?1 AND (${filter})
  ),
  hit AS (
    SELECT e.src_path, e.seq, d.path AS dst_path, d.hash AS dst_hash, ROW_NUMBER() OVER (PARTITION BY e.src_path, e.seq ORDER BY e.alt, x.ord) AS rn
    FROM e JOIN sfx x ON x.scheme = e.scheme
    JOIN documents d ON d.tenant_id = ?1 AND d.deleted_at IS NULL AND d.path = e.target || x.suffix
  )
  SELECT e.src_path, e.src_hash, e.seq, e.relation, e.node_key, e.node_type, e.label, e.kind, h.dst_path, h.dst_hash
  FROM e LEFT JOIN hit h ON h.src_path = e.src_path AND h.seq = e.seq AND h.rn = 1
  WHERE e.alt = 0
  ORDER BY e.src_path, e.seq`;
}

const docKey = (path: string) => `doc:${path}`;
/** Code-unit order, as SQLite sorts text: the same everywhere, whatever the locale. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const targetKey = (r: ResolvedRow) => (r.dst_path !== null ? docKey(r.dst_path) : r.node_key);

/** Paths a reference could have named to reach `path`, under any scheme. */
function targetsNaming(path: string): string[] {
  const out = new Set<string>();
  for (const suffixes of Object.values(SCHEMES)) {
    for (const s of suffixes) if (path.endsWith(s) && path.length > s.length) out.add(path.slice(0, path.length - s.length));
  }
  return [...out];
}

async function outgoing(ctx: Ctx, srcPaths: string[], relation: string | null): Promise<ResolvedRow[]> {
  if (srcPaths.length === 0) return [];
  // Hand SQL: the resolution CTE (resolvedSql) is shared by every read of edges.
  const rows = await ctx.d1
    .prepare(resolvedSql(`g.src_path IN (SELECT value FROM json_each(?2))${relation ? " AND g.relation = ?3" : ""}`))
    .bind(ctx.tenantId, JSON.stringify(srcPaths), ...(relation ? [relation] : []))
    .all<ResolvedRow>();
  return rows.results.filter((r) => r.dst_path !== r.src_path);
}

async function incoming(ctx: Ctx, keys: string[], relation: string | null): Promise<ResolvedRow[]> {
  if (keys.length === 0) return [];
  const targets = keys.filter((k) => k.startsWith("doc:")).flatMap((k) => targetsNaming(k.slice(4)));
  // Hand SQL: the resolution CTE (resolvedSql), and a row-value IN.
  const rows = await ctx.d1
    .prepare(
      resolvedSql(
        `(g.src_path, g.seq) IN (SELECT src_path, seq FROM doc_graph_edges WHERE tenant_id = ?1 AND (target IN (SELECT value FROM json_each(?2)) OR node_key IN (SELECT value FROM json_each(?3))))${relation ? " AND g.relation = ?4" : ""}`,
      ),
    )
    .bind(ctx.tenantId, JSON.stringify(targets), JSON.stringify(keys), ...(relation ? [relation] : []))
    .all<ResolvedRow>();
  const wanted = new Set(keys);
  // A candidate row only counts if the edge really resolves to the node (an earlier target may win).
  return rows.results.filter((r) => r.dst_path !== r.src_path && wanted.has(targetKey(r)));
}

export interface GraphNode {
  node_key: string;
  type: NodeType;
  label: string;
  path?: string;
  hash?: string;
  kind?: string;
  depth: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  relation: Relation;
}

const docNode = (path: string, hash: string, depth: number): GraphNode => ({ node_key: docKey(path), type: "document", label: path, path, hash, depth });

function targetNode(r: ResolvedRow, depth: number): GraphNode {
  if (r.dst_path !== null) return docNode(r.dst_path, r.dst_hash!, depth);
  const n: GraphNode = { node_key: r.node_key, type: r.node_type, label: r.label, depth };
  if (r.kind) n.kind = r.kind;
  return n;
}

interface Walk {
  nodes: Map<string, GraphNode>;
  edges: Map<string, GraphEdge & { depth: number; direction: "outgoing" | "incoming" }>;
  truncated: boolean;
}

/**
 * Breadth-first from `root`, one query per level and direction (never one per node), until
 * `depth` levels or `limit` nodes besides the root.
 */
async function walk(ctx: Ctx, root: GraphNode, opts: { depth: number; limit: number; relation: string | null; directions: ("outgoing" | "incoming")[]; documentsOnly: boolean }): Promise<Walk> {
  const nodes = new Map<string, GraphNode>([[root.node_key, root]]);
  const edges: Walk["edges"] = new Map();
  let truncated = false;
  let frontier = [root];
  for (let level = 1; level <= opts.depth && frontier.length > 0; level++) {
    const next: GraphNode[] = [];
    const visit = (node: GraphNode, e: GraphEdge, direction: "outgoing" | "incoming") => {
      if (opts.documentsOnly && node.type !== "document") return;
      if (!nodes.has(node.node_key)) {
        if (nodes.size - 1 >= opts.limit) {
          truncated = true;
          return;
        }
        nodes.set(node.node_key, node);
        next.push(node);
      }
      const id = `${e.from}\u0000${e.relation}\u0000${e.to}`;
      if (!edges.has(id)) edges.set(id, { ...e, depth: level, direction });
    };
    for (const direction of opts.directions) {
      if (direction === "outgoing") {
        // Only documents have out-edges.
        const docs = frontier.filter((n) => n.type === "document").map((n) => n.path!);
        for (const r of await outgoing(ctx, docs, opts.relation)) {
          visit(targetNode(r, level), { from: docKey(r.src_path), to: targetKey(r), relation: r.relation }, direction);
        }
      } else {
        for (const r of await incoming(
          ctx,
          frontier.map((n) => n.node_key),
          opts.relation,
        )) {
          visit(docNode(r.src_path, r.src_hash, level), { from: docKey(r.src_path), to: targetKey(r), relation: r.relation }, direction);
        }
      }
    }
    frontier = next;
  }
  return { nodes, edges, truncated };
}

// ---------------------------------------------------------------------------------------------
// The graph op's service.

export interface GraphQuery {
  hash?: string | undefined;
  name?: string | undefined;
  node_key?: string | undefined;
  node_id?: string | undefined;
  list_types?: boolean | undefined;
  list_type?: string | undefined;
  relation?: string | undefined;
  depth?: number | undefined;
  limit?: number | undefined;
  reverse?: boolean | undefined;
}

export const GRAPH_TARGET_REQUIRED = "Provide one of 'hash', 'name', 'node_key', or 'node_id' for graph queries, or set 'list_types': true.";
export const GRAPH_TARGET_HINT = 'For example docs_query {"steps": [{"op": "graph", "params": {"name": "src/main.ts"}}]}, or "params": {"list_types": true} to see what the graph holds.';

async function liveByHash(ctx: Ctx, hash: string): Promise<{ path: string; hash: string } | undefined> {
  return dbOf(ctx)
    .select({ path: documents.path, hash: documents.hash })
    .from(documents)
    .where(and(eq(documents.tenantId, ctx.tenantId), eq(documents.hash, hash.toLowerCase()), isNull(documents.deletedAt)))
    .orderBy(asc(documents.path))
    .limit(1)
    .get();
}

async function rootNode(ctx: Ctx, q: GraphQuery): Promise<{ root: GraphNode; note?: string }> {
  if (q.hash !== undefined) {
    const doc = await liveByHash(ctx, q.hash);
    if (!doc) throw notFound("document with hash", q.hash, "No live document has that content; find hashes with list or search.");
    return { root: docNode(doc.path, doc.hash, 0) };
  }
  if (q.name !== undefined) {
    const path = normalizePath(q.name);
    const exact = await liveAtPath(ctx, path);
    if (exact) return { root: docNode(exact.path, exact.hash, 0) };
    // A bare file name ("main.cpp") names the document if one has it.
    const named = await dbOf(ctx)
      .select({ path: documents.path, hash: documents.hash })
      .from(documents)
      .where(and(eq(documents.tenantId, ctx.tenantId), eq(documents.name, path), isNull(documents.deletedAt)))
      .orderBy(sql`length(${documents.path})`, asc(documents.path))
      .limit(11)
      .all();
    const first = named[0];
    if (!first) throw notFound("document", path, "Pass the document's full path (list shows them), or its hash.");
    const note = named.length > 1 ? `${named.length > 10 ? "More than 10" : named.length} documents are named '${path}'; showing ${first.path}. Pass the full path to choose another.` : undefined;
    return note ? { root: docNode(first.path, first.hash, 0), note } : { root: docNode(first.path, first.hash, 0) };
  }
  const key = (q.node_key ?? q.node_id)!;
  if (key.startsWith("doc:")) {
    const doc = await liveAtPath(ctx, key.slice(4));
    if (!doc) throw notFound("graph node", excerpt(key), "Node keys come from graph results (node_key); document nodes are 'doc:<path>'.");
    return { root: docNode(doc.path, doc.hash, 0) };
  }
  const g = alias(docGraphEdges, "g");
  const s = alias(documents, "s");
  const row = await dbOf(ctx)
    .select({ node_key: g.nodeKey, node_type: sql<NodeType>`${g.nodeType}`, label: g.label, kind: g.kind })
    .from(g)
    .innerJoin(s, and(eq(s.tenantId, g.tenantId), eq(s.path, g.srcPath), eq(s.hash, g.srcHash), isNull(s.deletedAt)))
    .where(and(eq(g.tenantId, ctx.tenantId), eq(g.nodeKey, key)))
    .limit(1)
    .get();
  if (!row) throw notFound("graph node", excerpt(key), "Node keys come from graph results (node_key); list them by type with list_type.");
  const root: GraphNode = { node_key: row.node_key, type: row.node_type, label: row.label, depth: 0 };
  if (row.kind) root.kind = row.kind;
  return { root };
}

function checkTarget(q: GraphQuery): void {
  const given = [q.hash, q.name, q.node_key, q.node_id].filter((v) => v !== undefined).length;
  if (given === 0 && q.list_types !== true && q.list_type === undefined) throw invalidInput(GRAPH_TARGET_REQUIRED, GRAPH_TARGET_HINT);
  if (given > 1) throw invalidInput("Provide only one of 'hash', 'name', 'node_key' or 'node_id'.", "Each names the node to start from; pass the one you have.");
}

/** Counts of the tenant's graph nodes by type: live documents, and the other nodes live edges reach. */
async function listTypes(ctx: Ctx): Promise<Record<string, unknown>> {
  const [docs, others] = await Promise.all([
    dbOf(ctx)
      .select({ n: count() })
      .from(documents)
      .where(and(eq(documents.tenantId, ctx.tenantId), isNull(documents.deletedAt)))
      .get(),
    // Hand SQL: the resolution CTE (resolvedSql), grouped.
    ctx.d1
      .prepare(`SELECT node_type AS type, COUNT(DISTINCT node_key) AS count FROM (${resolvedSql("1 = 1")}) WHERE dst_path IS NULL GROUP BY node_type`)
      .bind(ctx.tenantId)
      .all<{ type: string; count: number }>(),
  ]);
  const types = [{ type: "document", count: docs?.n ?? 0 }, ...others.results].filter((t) => t.count > 0);
  types.sort((a, b) => b.count - a.count || byText(a.type, b.type));
  return { types, relations: [...RELATIONS] };
}

async function listType(ctx: Ctx, type: string, limit: number): Promise<Record<string, unknown>> {
  if (type === "document") {
    const rows = await dbOf(ctx)
      .select({ path: documents.path, hash: documents.hash })
      .from(documents)
      .where(and(eq(documents.tenantId, ctx.tenantId), isNull(documents.deletedAt)))
      .orderBy(asc(documents.path))
      .limit(limit + 1)
      .all();
    const nodes = rows.slice(0, limit).map((r) => {
      const { depth: _depth, ...n } = docNode(r.path, r.hash, 0);
      return n;
    });
    return { type, nodes, truncated: rows.length > limit };
  }
  if (!(NODE_TYPES as readonly string[]).includes(type)) {
    throw invalidInput(`list_type '${excerpt(type, 40)}' is not a node type`, `Node types are: ${NODE_TYPES.join(", ")}; list_types shows how many of each exist.`);
  }
  // Hand SQL: the resolution CTE (resolvedSql), grouped.
  const rows = await ctx.d1
    .prepare(`SELECT node_key, label, MIN(kind) AS kind FROM (${resolvedSql("g.node_type = ?2")}) WHERE dst_path IS NULL GROUP BY node_key, label ORDER BY node_key LIMIT ?3`)
    .bind(ctx.tenantId, type, limit + 1)
    .all<{ node_key: string; label: string; kind: string | null }>();
  const nodes = rows.results.slice(0, limit).map((r) => (r.kind ? { node_key: r.node_key, type, label: r.label, kind: r.kind } : { node_key: r.node_key, type, label: r.label }));
  return { type, nodes, truncated: rows.results.length > limit };
}

/** The graph op: a traversal from one node, or the node types and their counts, or the nodes of one type. */
export async function queryGraph(ctx: Ctx, q: GraphQuery): Promise<Record<string, unknown>> {
  checkTarget(q);
  const limit = Math.min(Math.max(1, q.limit ?? 100), GRAPH_LIMIT_MAX);
  const given = [q.hash, q.name, q.node_key, q.node_id].some((v) => v !== undefined);
  if (!given && q.list_types === true) return listTypes(ctx);
  if (!given && q.list_type !== undefined) return listType(ctx, q.list_type, limit);

  const depth = Math.min(Math.max(1, q.depth ?? 1), 5);
  const relation = q.relation?.toUpperCase() ?? null;
  const { root, note } = await rootNode(ctx, q);
  const result = await walk(ctx, root, { depth, limit, relation, directions: [q.reverse ? "incoming" : "outgoing"], documentsOnly: false });
  // Documents first within a level, so `$prev.nodes[0].hash` names the nearest related document.
  const nodes = [...result.nodes.values()]
    .filter((n) => n !== root)
    .sort((a, b) => a.depth - b.depth || Number(b.type === "document") - Number(a.type === "document") || byText(a.node_key, b.node_key));
  const notes: string[] = [];
  if (note) notes.push(note);
  if (relation !== null && !(RELATIONS as readonly string[]).includes(relation)) {
    notes.push(`This graph records ${RELATIONS.join(", ")}; no edge has relation '${excerpt(relation, 40)}'.`);
  }
  if (result.truncated) notes.push(`Stopped at ${limit} nodes (limit); raise limit or lower depth to see more.`);
  const out: Record<string, unknown> = {
    root,
    nodes,
    edges: [...result.edges.values()].map(({ from, to, relation: r }) => ({ from, to, relation: r })),
    total_nodes: nodes.length,
    truncated: result.truncated,
  };
  if (notes.length > 0) out.note = notes.join(" ");
  return out;
}

export interface RelatedDocument {
  hash: string;
  path: string;
  relation: Relation;
  depth: number;
  direction: "outgoing" | "incoming";
}

/**
 * Documents linked to the live document with `hash` through document-to-document edges, in both
 * directions, up to `depth` (1–5) hops; for `get` with graph: true. Empty if no live document has it.
 */
export async function relatedDocuments(ctx: Ctx, hash: string, depth: number): Promise<RelatedDocument[]> {
  const doc = await liveByHash(ctx, hash);
  if (!doc) return [];
  const root = docNode(doc.path, doc.hash, 0);
  const result = await walk(ctx, root, {
    depth: Math.min(Math.max(1, Math.floor(depth)), 5),
    limit: 100,
    relation: null,
    directions: ["outgoing", "incoming"],
    documentsOnly: true,
  });
  const out: RelatedDocument[] = [];
  for (const e of result.edges.values()) {
    const other = result.nodes.get(e.direction === "outgoing" ? e.to : e.from);
    if (!other || other === root || out.some((r) => r.path === other.path)) continue;
    out.push({ hash: other.hash!, path: other.path!, relation: e.relation, depth: other.depth, direction: e.direction });
  }
  return out.sort((a, b) => a.depth - b.depth || byText(a.path, b.path));
}
