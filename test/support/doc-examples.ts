/**
 * The example calls the project documents, read from where they are written (never a second copy):
 * README.md and docs/**\/*.md, the guide's topics, and the string literals of src/**\/*.ts (tool and
 * parameter descriptions, hints), the last through the TypeScript compiler, not a regex over source code.
 *
 * The convention (also in docs/operations.md, "Examples are tested"): an example call is a tool's name, or compact mode's
 * `query`/`execute`/`session`, followed by a flow mapping, e.g. `task_claim { task_id: "WEB-12" }` or
 * `query {"op": "describe"}`; the mapping is read as YAML, so JSON and `{ key: "value" }` both work.
 * - Placeholders are filled when the example runs: a `"<name>"` string, or a bare key (`{ handoff_id }`),
 *   takes the value of that name from an earlier answer of the same run or, failing that, a binding the run
 *   documents; in a source file, a value a template computes (`"${id}"`) is a placeholder named by its key.
 * - A mapping with a `...` (or `…`) entry, or a key ending in `?`, is a sketch of the parameters, not a call:
 *   it is not run, but every key it names must be a parameter of the tool.
 * - Call arguments written in a page without the call would never run: hiddenExamples finds them.
 * Pure Node; the markdown and source scanners take text, so they are unit-tested without files.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { isMap, isScalar, isSeq, parseDocument, type Node as YamlNode } from "yaml";
import { ALL_TOOL_NAMES } from "./tool-names";

/** A value the run supplies: `"<name>"` or a bare key `name`. */
export class Placeholder {
  constructor(readonly name: string) {}
}

export interface DocExample {
  /** Where it is written: a path from the repository root, or `guide:<topic>` for a guide topic. */
  source: string;
  line: number;
  tool: string;
  /** The call as written. */
  text: string;
  /** The parsed mapping, with Placeholder where the run fills a value. */
  args: Record<string, unknown>;
  /** A signature rather than a call (see above): not run, its keys checked against the tool's schema. */
  sketch: boolean;
}

/** The names an example call may start with: every registered tool, and compact mode's three. */
const CALLABLE = new Set<string>([...ALL_TOOL_NAMES, "query", "execute", "session"]);

/** The longest mapping read as one example: longer means an unbalanced brace, reported rather than scanned on. */
const MAX_MAPPING_CHARS = 4_000;
const SKETCH_ENTRIES = new Set(["...", "…"]);

class ExampleError extends Error {}

/** Every example call in one text; `line` is the line the text starts at in its source. */
export function examplesInText(text: string, source: string, line = 1): DocExample[] {
  const out: DocExample[] = [];
  for (const m of text.matchAll(/[A-Za-z0-9_.]+/g)) {
    // A sentence's full stop is not part of a name ("... whoami. task_claim {"); a name ending in one is no call.
    const name = m[0].replace(/^\.+/, "");
    if (!CALLABLE.has(name)) continue;
    const start = m.index + m[0].length - name.length;
    let open = m.index + m[0].length;
    if (text[open] === " ") open++;
    if (text[open] !== "{") continue;
    const close = matchingBrace(text, open);
    const at = line + countLines(text, start);
    if (close < 0) throw new ExampleError(`${source}:${at}: ${name} { … has no closing brace within ${MAX_MAPPING_CHARS} characters`);
    const mapping = text.slice(open, close + 1);
    out.push({ source, line: at, tool: name, text: `${name} ${mapping}`, ...parseMapping(mapping, `${source}:${at}`) });
  }
  return out;
}

/** The index of the brace closing the one at `open`, skipping quoted strings; -1 if none within the bound. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  let quote = "";
  const stop = Math.min(text.length, open + MAX_MAPPING_CHARS);
  for (let i = open; i < stop; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return c === "}" ? i : -1;
    }
  }
  return -1;
}

const countLines = (text: string, upTo: number): number => {
  let n = 0;
  for (let i = 0; i < upTo; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
};

function parseMapping(mapping: string, where: string): { args: Record<string, unknown>; sketch: boolean } {
  const doc = parseDocument(mapping);
  if (doc.errors.length > 0 || !isMap(doc.contents)) throw new ExampleError(`${where}: ${mapping.slice(0, 120)} is not a flow mapping: ${doc.errors[0]?.message.split("\n")[0] ?? "not a mapping"}`);
  const state = { sketch: false };
  const args = toValue(doc.contents, state) as Record<string, unknown>;
  return { args, sketch: state.sketch };
}

function toValue(node: YamlNode | null, state: { sketch: boolean }, key = ""): unknown {
  if (isMap(node)) {
    const out: Record<string, unknown> = {};
    for (const pair of node.items) {
      const key = String(isScalar(pair.key) ? pair.key.value : pair.key);
      if (SKETCH_ENTRIES.has(key)) state.sketch = true;
      else if (key.endsWith("?")) {
        state.sketch = true;
        out[key.slice(0, -1)] = new Placeholder(key.slice(0, -1));
      } else out[key] = pair.value === null ? new Placeholder(key) : toValue(pair.value as YamlNode, state, key);
    }
    return out;
  }
  if (isSeq(node)) {
    return node.items.flatMap((item) => {
      if (isScalar(item) && SKETCH_ENTRIES.has(String(item.value))) {
        state.sketch = true;
        return [];
      }
      return [toValue(item as YamlNode, state, key)];
    });
  }
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === "string" && SKETCH_ENTRIES.has(v)) state.sketch = true;
    if (typeof v === "string" && /^<[^<>]+>$/.test(v)) return new Placeholder(v.slice(1, -1));
    // A value the program computes when it writes the hint (a template's `${…}`) is the run's to supply, by its key.
    if (typeof v === "string" && v.includes("${}")) return new Placeholder(key);
    return v;
  }
  return null;
}

/** The examples in a markdown page (prose and code alike: a call is a call wherever it is written). */
export const examplesInMarkdown = (markdown: string, source: string): DocExample[] => examplesInText(markdown, source);

/** A piece of a markdown page written as code: an inline code span or a fenced block's body. */
export interface CodePiece {
  line: number;
  text: string;
  fenced: boolean;
}

/** Fences whose body may be call arguments; a shell or TypeScript block is read by its own language, not as YAML. */
const DATA_FENCES = new Set(["", "json", "jsonc", "yaml", "yml"]);

/**
 * The code spans and fenced blocks of a page (CommonMark's rules, simplified: a fence is a line starting with ``` or
 * ~~~ and closed by the same run; a span opens at a run of backticks and closes at the next run of the same length
 * within its paragraph). Fenced blocks of other languages than DATA_FENCES are left out.
 */
export function codePieces(markdown: string): CodePiece[] {
  const out: CodePiece[] = [];
  const lines = markdown.split("\n");
  let fence: { marker: string; lang: string; start: number; body: string[] } | undefined;
  let paragraph: { start: number; lines: string[] } | undefined;
  const endParagraph = () => {
    if (paragraph) out.push(...spansIn(paragraph.lines.join("\n"), paragraph.start));
    paragraph = undefined;
  };
  lines.forEach((l, i) => {
    const open = /^ {0,3}(`{3,}|~{3,})\s*([\w-]*)/.exec(l);
    if (fence) {
      if (open && open[1]!.startsWith(fence.marker) && l.trim() === open[1]) {
        if (DATA_FENCES.has(fence.lang)) out.push({ line: fence.start, text: fence.body.join("\n"), fenced: true });
        fence = undefined;
      } else fence.body.push(l);
    } else if (open) {
      endParagraph();
      fence = { marker: open[1]!, lang: open[2]!.toLowerCase(), start: i + 2, body: [] };
    } else if (l.trim() === "") endParagraph();
    else (paragraph ??= { start: i + 1, lines: [] }).lines.push(l);
  });
  endParagraph();
  return out;
}

function spansIn(text: string, line: number): CodePiece[] {
  const out: CodePiece[] = [];
  const runs = [...text.matchAll(/`+/g)];
  for (let i = 0; i < runs.length; i++) {
    const opener = runs[i]!;
    const j = runs.findIndex((r, k) => k > i && r[0].length === opener[0].length);
    if (j < 0) continue;
    const start = opener.index + opener[0].length;
    const body = text.slice(start, runs[j]!.index).replace(/\n/g, " ");
    out.push({ line: line + countLines(text, opener.index), text: /^ .* $/.test(body) ? body.slice(1, -1) : body, fenced: false });
    i = j;
  }
  return out;
}

/** Each tool's parameter names, as a surface lists them. */
export type ToolParams = ReadonlyMap<string, ReadonlySet<string>>;

export interface HiddenExample {
  source: string;
  line: number;
  text: string;
  /** The tools whose parameters it fits. */
  tools: string[];
}

/**
 * Call arguments written without the call, so no run would ever see them (the guard that keeps an example from
 * hiding). A code span written as a flow mapping (`{...}`; a bare `key: value` span names one parameter's value in
 * prose) or a data fenced block (see DATA_FENCES) holding a YAML mapping is call arguments when every one of its
 * keys is a parameter of one tool (the document store's and compact mode's `op`, `steps`, `operations` and `action`
 * included), unless it is an answer's shape: it has `ok` or `isError`, or `error` holding a mapping (the error
 * envelope). A mapping with any key no tool takes (`totalSteps`, `items`, `next_cursor`) is an answer's shape too.
 */
export function hiddenExamples(markdown: string, source: string, params: ToolParams): HiddenExample[] {
  const out: HiddenExample[] = [];
  for (const piece of codePieces(markdown)) {
    const text = piece.text.trim();
    if (!piece.fenced && !text.startsWith("{")) continue;
    const doc = parseDocument(text);
    if (doc.errors.length > 0 || !isMap(doc.contents)) continue;
    const entries = doc.contents.items.map((p) => [String(isScalar(p.key) ? p.key.value : p.key), p.value] as const);
    const keys = entries.map(([k]) => k.replace(/\?$/, "")).filter((k) => !SKETCH_ENTRIES.has(k));
    const envelope = keys.includes("ok") || keys.includes("isError") || entries.some(([k, v]) => k === "error" && isMap(v));
    if (keys.length === 0 || envelope) continue;
    const tools = [...params].filter(([, p]) => keys.every((k) => p.has(k))).map(([name]) => name);
    if (tools.length > 0) out.push({ source, line: piece.line, text, tools });
  }
  return out;
}

/** The fix a hidden example asks for, naming where it is written. */
export const asCall = (h: HiddenExample): string =>
  `${h.source}:${h.line}: write it as a call: ${h.tools[0]} ${h.text.replace(/\s+/g, " ")}${h.tools.length > 1 ? ` (or ${h.tools.slice(1, 4).join(", ")} ${"{…}"})` : ""}`;

/**
 * The examples in a TypeScript file's string literals and template texts (a `${…}` part is kept as `${}`, so a
 * mapping that depends on a computed value fails to parse rather than passing unseen). Adjacent literals joined
 * by `+` are read as one string, as the program sees them.
 */
export function examplesInSource(code: string, source: string): DocExample[] {
  const file = ts.createSourceFile(source, code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: DocExample[] = [];
  const lineOf = (node: ts.Node) => file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  const visit = (node: ts.Node): void => {
    const text = literalText(node);
    if (text !== undefined) {
      out.push(...examplesInText(text, source, lineOf(node)));
      return;
    }
    // Import specifiers and the like are strings too, but never prose.
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

function literalText(node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((s) => "${}" + s.literal.text).join("");
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = literalText(node.left);
    const right = literalText(node.right);
    if (left !== undefined && right !== undefined) return left + right;
  }
  return undefined;
}

export interface GuideTopicText {
  id: string;
  /** The line of src/guide/topics.ts the body starts on. */
  line: number;
  body: string;
}

/** The guide's topics as written in src/guide/topics.ts (read as source, so no Worker module is loaded). */
export function guideTopics(root: string): GuideTopicText[] {
  const file = "src/guide/topics.ts";
  const sf = ts.createSourceFile(file, readFileSync(path.join(root, file), "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: GuideTopicText[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node)) {
      const prop = (name: string) => node.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText(sf) === name);
      const id = prop("id");
      const body = prop("body");
      const idText = id && literalText(id.initializer);
      const bodyText = body && literalText(body.initializer);
      if (idText !== undefined && bodyText !== undefined) {
        out.push({ id: idText, line: sf.getLineAndCharacterOfPosition(body!.initializer.getStart(sf)).line + 1, body: bodyText });
        return;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The guide's examples, each topic a source of its own (`guide:<id>`). */
const guideExamples = (root: string): Map<string, DocExample[]> => new Map(guideTopics(root).map((t) => [`guide:${t.id}`, examplesInText(t.body, `guide:${t.id}`, t.line)]));

function walk(dir: string, keep: (file: string) => boolean): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full, keep) : keep(full) ? [full] : [];
  });
}

const relPath = (root: string, full: string) => path.relative(root, full).split(path.sep).join("/");

/** README.md and every docs/**\/*.md, by path from the repository root, with their text. */
export function docPages(root: string): Map<string, string> {
  const files = [path.join(root, "README.md"), ...walk(path.join(root, "docs"), (f) => f.endsWith(".md"))];
  return new Map(files.map((full) => [relPath(root, full), readFileSync(full, "utf8")]));
}

/**
 * Every documented example, by source, in document order: README.md and every docs/**\/*.md present now, the guide's
 * topics, then src/**\/*.ts apart from the guide (a source with no example is left out; the callers guard the totals).
 */
export function collectExamples(root: string): Map<string, DocExample[]> {
  const out = new Map<string, DocExample[]>();
  const add = (source: string, examples: DocExample[]) => {
    if (examples.length > 0) out.set(source, examples);
  };
  for (const [source, text] of docPages(root)) add(source, examplesInMarkdown(text, source));
  for (const [source, examples] of guideExamples(root)) add(source, examples);
  for (const full of walk(path.join(root, "src"), (f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))) {
    const source = relPath(root, full);
    if (source === "src/guide/topics.ts") continue;
    add(source, examplesInSource(readFileSync(full, "utf8"), source));
  }
  return out;
}

/**
 * Named values an example's placeholders take when no earlier answer of the run has a field of that name: a value,
 * or a function of the run's answers so far (for a value an answer holds under another name).
 */
export type Bindings = Record<string, unknown>;
export class FromAnswers {
  constructor(readonly pick: (answers: readonly unknown[]) => unknown) {}
}

/**
 * The example's arguments with every placeholder filled: from the newest earlier answer holding a field of that name
 * (at any depth), else from `bindings`. Anything unfillable fails, naming the example and where it is written.
 */
export function fillPlaceholders(example: DocExample, answers: readonly unknown[], bindings: Bindings = {}): Record<string, unknown> {
  const fill = (v: unknown): unknown => {
    if (v instanceof Placeholder) {
      for (let i = answers.length - 1; i >= 0; i--) {
        const found = findField(answers[i], v.name, 0);
        if (found !== undefined) return found;
      }
      if (Object.hasOwn(bindings, v.name)) {
        const bound = bindings[v.name];
        const value = bound instanceof FromAnswers ? bound.pick(answers) : bound;
        if (value !== undefined) return value;
      }
      throw new ExampleError(`${example.source}:${example.line}: ${example.text}: nothing fills '${v.name}' (no earlier answer has a field of that name, and no binding gives one)`);
    }
    if (Array.isArray(v)) return v.map(fill);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]));
    return v;
  };
  return fill(example.args) as Record<string, unknown>;
}

/** The value of a field by name: the answer's own field first, else the first found depth-first in its nested objects. */
function findField(value: unknown, name: string, depth: number): unknown {
  if (depth > 8 || !value || typeof value !== "object") return undefined;
  if (!Array.isArray(value) && Object.hasOwn(value, name)) return (value as Record<string, unknown>)[name];
  for (const child of Object.values(value)) {
    const found = findField(child, name, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
