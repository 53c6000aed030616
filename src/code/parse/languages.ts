/**
 * Language of a file from its name. The names with a grammar (typescript, tsx, javascript, python,
 * go) select the parser; the others only label the file for search filters and get line windows.
 */

const BY_EXTENSION: Readonly<Record<string, string>> = {
  ts: "typescript",
  mts: "typescript",
  cts: "typescript",
  tsx: "tsx",
  js: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  jsx: "javascript",
  py: "python",
  pyi: "python",
  pyw: "python",
  go: "go",
  md: "markdown",
  markdown: "markdown",
  mdx: "markdown",
  json: "json",
  jsonc: "json",
  json5: "json",
  rs: "rust",
  java: "java",
  kt: "kotlin",
  kts: "kotlin",
  scala: "scala",
  swift: "swift",
  rb: "ruby",
  php: "php",
  c: "c",
  h: "c",
  cc: "cpp",
  cpp: "cpp",
  cxx: "cpp",
  hh: "cpp",
  hpp: "cpp",
  hxx: "cpp",
  cs: "csharp",
  m: "objc",
  mm: "objc",
  lua: "lua",
  dart: "dart",
  ex: "elixir",
  exs: "elixir",
  erl: "erlang",
  hs: "haskell",
  ml: "ocaml",
  mli: "ocaml",
  clj: "clojure",
  cljs: "clojure",
  r: "r",
  jl: "julia",
  zig: "zig",
  sh: "shell",
  bash: "shell",
  zsh: "shell",
  ps1: "powershell",
  sql: "sql",
  html: "html",
  htm: "html",
  css: "css",
  scss: "scss",
  sass: "scss",
  less: "less",
  vue: "vue",
  svelte: "svelte",
  yml: "yaml",
  yaml: "yaml",
  toml: "toml",
  xml: "xml",
  proto: "protobuf",
  graphql: "graphql",
  gql: "graphql",
  tf: "terraform",
};

/** Files known by their whole name rather than an extension. */
const BY_NAME: Readonly<Record<string, string>> = {
  dockerfile: "dockerfile",
  makefile: "makefile",
  gnumakefile: "makefile",
  "cmakelists.txt": "cmake",
};

export function languageOf(path: string): string {
  const base = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  const named = BY_NAME[base];
  if (named) return named;
  if (base.startsWith("dockerfile.")) return "dockerfile";
  const dot = base.lastIndexOf(".");
  // A leading dot names a hidden file (".eslintrc"), not an extension.
  if (dot <= 0) return "text";
  return BY_EXTENSION[base.slice(dot + 1)] ?? "text";
}
