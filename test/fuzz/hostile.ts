/**
 * Hostile content: well-formed calls whose content is built to make a parser, extractor or matcher
 * work hard (quadratic backtracking, one stream read once per page, secrets found one by one,
 * nesting past a parser's stack). Unlike the schema walk in cases.ts, every call here passes the
 * input bounds and reaches the code that handles content. Shared by `npm run bench:fuzz` (over HTTP
 * against wrangler dev) and the test that keeps the cases valid.
 */
import { buildPdf } from "../fixtures/pdf";

export interface HostileCall {
  /** The /mcp path and query the call goes to. */
  path: string;
  /** The tool called (for the compact surface: its `query` or `execute`). */
  name: string;
  args: Record<string, unknown>;
}

export interface HostileCase extends HostileCall {
  /** What the figures are reported under: the tool, or the tool and its op. */
  tool: string;
  /** What the content is, in a few words. */
  label: string;
  /** Calls that must run first (e.g. storing the document a grep then searches). */
  setup?: HostileCall[];
}

const DOCS = "/mcp?toolsets=docs";
const REVIEW = "/mcp?toolsets=review";
const COMPACT = "/mcp?mode=compact&toolsets=review";

/** A small deterministic generator, so every run sends the same bytes. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/**
 * `count` AWS-access-key-shaped strings, each distinct (AKIA + 16 base32 characters) and followed by
 * a space: 21 bytes each, so 40,000 of them are the 840 KB that took scrub_secrets seconds.
 */
export function keyShapedStrings(count: number, seed = 7): string {
  const next = lcg(seed);
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    let key = "AKIA";
    for (let j = 0; j < 16; j++) key += BASE32[next() >>> 27]; // the high bits: an LCG's low bits repeat every 32
    parts.push(key);
  }
  return `${parts.join(" ")} `;
}

/** A unified diff of `files` files, each one hunk adding `lines` lines. */
function longDiff(files: number, lines: number): string {
  const out: string[] = [];
  for (let f = 0; f < files; f++) {
    out.push(`diff --git a/src/f${f}.ts b/src/f${f}.ts`, `--- a/src/f${f}.ts`, `+++ b/src/f${f}.ts`, `@@ -0,0 +1,${lines} @@`);
    for (let l = 0; l < lines; l++) out.push(`+export const v${l} = "${"x".repeat(20)}"; // TODO eval(${l})`);
  }
  return `${out.join("\n")}\n`;
}

/** YAML nested `depth` flow sequences deep: a recursive parser's stack, not its input bound, gives out first. */
const deepYaml = (depth: number) => `security:\n  - id: DEEP\n    paths: ${"[".repeat(depth)}${"]".repeat(depth)}\n`;

/** One deny rule over every file: each added line of a diff is matched against it. */
const DENY_EVAL =
  'security:\n  - id: SEC001\n    rule: "No eval"\n    paths: ["**/*"]\n    severity: high\n    category: security\n    action: deny\n    deny:\n      regex:\n        pattern: "eval\\\\("\n';

async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * A PDF of `pages` pages whose content streams are all one object: a Flate stream that inflates
 * to `streamBytes` bytes of text operators. The file stays small (the stream compresses about a
 * thousandfold); an extractor that decodes the stream once per page does pages × streamBytes work.
 */
export async function sharedStreamPdf(pages: number, streamBytes: number): Promise<Uint8Array> {
  const op = "BT /F1 12 Tf 72 712 Td (hostile) Tj ET\n";
  const raw = new TextEncoder().encode(op.repeat(Math.ceil(streamBytes / op.length)));
  return buildPdf(await deflate(raw), { pages, flate: true });
}

const base64 = (bytes: Uint8Array): string => {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
};

const docAdd = (name: string, params: Record<string, unknown>): HostileCall => ({
  path: DOCS,
  name: "docs_execute",
  args: { operations: [{ op: "add", params: { name, ...params } }] },
});

/** How big the content is; the defaults are the sizes the outside probe found slow. */
export interface HostileSizes {
  /** Bytes of `[` in one markdown document. */
  markdownBrackets: number;
  /** `import a` lines in one TypeScript file. */
  importLines: number;
  pdfPages: number;
  /** Bytes the shared PDF stream inflates to. */
  pdfStreamBytes: number;
  /** Key-shaped strings for the secret scanners. */
  keys: number;
  /** Files × added lines of the long diff. */
  diffFiles: number;
  diffLines: number;
  yamlDepth: number;
  /** Lines of `a…a` a pathological grep pattern runs over. */
  grepLines: number;
}

export const DEFAULT_SIZES: HostileSizes = {
  markdownBrackets: 128 * 1024,
  importLines: 20_000,
  pdfPages: 16,
  pdfStreamBytes: 100 * 1024 * 1024,
  keys: 40_000,
  diffFiles: 150,
  diffLines: 100,
  yamlDepth: 20_000,
  grepLines: 2_000,
};

/** Every hostile-content case, per tool that takes caller content. `tag` keeps names unique per run. */
export async function hostileCases(sizes: HostileSizes = DEFAULT_SIZES, tag = "h"): Promise<HostileCase[]> {
  const keys = keyShapedStrings(sizes.keys);
  const diff = longDiff(sizes.diffFiles, sizes.diffLines);
  const yaml = deepYaml(sizes.yamlDepth);
  const imports = "import a\n".repeat(sizes.importLines);
  const grepDoc = `${"a".repeat(200)}\n`.repeat(sizes.grepLines);
  const pdf = await sharedStreamPdf(sizes.pdfPages, sizes.pdfStreamBytes);
  const grep = (pattern: string): HostileCall => ({ path: DOCS, name: "docs_query", args: { steps: [{ op: "grep", params: { pattern, paths: [`${tag}/grep.txt`] } }] } });
  return [
    { tool: "docs_execute add", label: `markdown of ${sizes.markdownBrackets} '['`, ...docAdd(`${tag}/brackets.md`, { content: "[".repeat(sizes.markdownBrackets) }) },
    { tool: "docs_execute add", label: `TypeScript of ${sizes.importLines} 'import a' lines`, ...docAdd(`${tag}/imports.ts`, { content: imports }) },
    {
      tool: "docs_execute add",
      label: `PDF: ${sizes.pdfPages} pages sharing one ${Math.round(sizes.pdfStreamBytes / 1048576)} MiB Flate stream (${pdf.length} bytes)`,
      ...docAdd(`${tag}/shared.pdf`, { content_base64: base64(pdf) }),
    },
    { tool: "docs_execute add", label: `markdown of ${sizes.keys} key-shaped strings`, ...docAdd(`${tag}/keys.md`, { content: keys }) },
    {
      tool: "docs_execute update",
      label: "metadata on the bracket markdown",
      setup: [docAdd(`${tag}/brackets2.md`, { content: "[".repeat(sizes.markdownBrackets) })],
      path: DOCS,
      name: "docs_execute",
      args: { operations: [{ op: "update", params: { name: `${tag}/brackets2.md`, tags: ["hostile"], metadata: { k: "v" } } }] },
    },
    { tool: "docs_query grep", label: "(a*)*b over lines of a", setup: [docAdd(`${tag}/grep.txt`, { content: grepDoc })], ...grep("(a*)*b") },
    { tool: "docs_query grep", label: "(a|aa)*c$ over lines of a", ...grep("(a|aa)*c$") },
    { tool: "docs_query grep", label: "a{1,100}a{1,100}b over lines of a", ...grep("a{1,100}a{1,100}b") },
    { tool: "scrub_secrets", label: `${sizes.keys} key-shaped strings (${keys.length} bytes)`, path: REVIEW, name: "scrub_secrets", args: { content: keys } },
    { tool: "validate_content", label: `${sizes.keys} key-shaped strings`, path: REVIEW, name: "validate_content", args: { content: keys, content_type: "raw_text" } },
    { tool: "review_diff", label: `diff of ${sizes.diffFiles} files × ${sizes.diffLines} lines (${diff.length} bytes)`, path: REVIEW, name: "review_diff", args: { diff } },
    { tool: "review_diff", label: `YAML invariants ${sizes.yamlDepth} deep`, path: REVIEW, name: "review_diff", args: { diff: longDiff(1, 5), invariants: yaml } },
    { tool: "check_invariants", label: `YAML invariants ${sizes.yamlDepth} deep`, path: REVIEW, name: "check_invariants", args: { diff: longDiff(1, 5), invariants: yaml } },
    { tool: "check_invariants", label: `diff of ${sizes.diffFiles} files × ${sizes.diffLines} lines`, path: REVIEW, name: "check_invariants", args: { diff, invariants: DENY_EVAL } },
    {
      tool: "query (compact)",
      label: "two scrub_secrets steps",
      path: COMPACT,
      name: "query",
      args: {
        steps: [
          { op: "scrub_secrets", params: { content: keys.slice(0, Math.floor(keys.length / 2)) } },
          { op: "scrub_secrets", params: { content: keys.slice(Math.floor(keys.length / 2)) } },
        ],
      },
    },
  ];
}
