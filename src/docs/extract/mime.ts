/**
 * The MIME type a document gets when the caller names none, from its file name. Only types the
 * store treats differently matter here (text to index, markdown, HTML, JSON, PDF); anything else
 * is application/octet-stream, which the extractor still sniffs for UTF-8 text.
 */
const BY_EXTENSION: Record<string, string> = {
  md: "text/markdown",
  markdown: "text/markdown",
  mdx: "text/markdown",
  txt: "text/plain",
  log: "text/plain",
  rst: "text/x-rst",
  html: "text/html",
  htm: "text/html",
  css: "text/css",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  xml: "application/xml",
  json: "application/json",
  jsonl: "application/jsonl",
  adoc: "text/asciidoc",
  yaml: "application/yaml",
  yml: "application/yaml",
  toml: "application/toml",
  pdf: "application/pdf",
  js: "text/javascript",
  mjs: "text/javascript",
  cjs: "text/javascript",
  jsx: "text/javascript",
  ts: "text/x-typescript",
  tsx: "text/x-typescript",
  py: "text/x-python",
  go: "text/x-go",
  rs: "text/x-rust",
  java: "text/x-java",
  kt: "text/x-kotlin",
  rb: "text/x-ruby",
  php: "text/x-php",
  c: "text/x-c",
  h: "text/x-c",
  cc: "text/x-c++",
  cpp: "text/x-c++",
  hpp: "text/x-c++",
  cs: "text/x-csharp",
  swift: "text/x-swift",
  sh: "text/x-shellscript",
  bash: "text/x-shellscript",
  sql: "application/sql",
  proto: "text/plain",
  ini: "text/plain",
  cfg: "text/plain",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  zip: "application/zip",
  gz: "application/gzip",
  tar: "application/x-tar",
  wasm: "application/wasm",
};

/** The type a file name's extension names, or undefined when the name says nothing known. */
export function knownMime(path: string): string | undefined {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return name === "dockerfile" || name === "makefile" ? "text/plain" : undefined;
  return BY_EXTENSION[name.slice(dot + 1)];
}

export const mimeFromName = (path: string): string => knownMime(path) ?? "application/octet-stream";
