/**
 * Just enough of Python's lexer to read an Alembic revision without running it: names, numbers,
 * string literals (prefixes, triple quotes, implicit concatenation left to the reader), operators,
 * comments, and which tokens start a logical line at which indent (so `def upgrade():`'s body ends
 * where the next top-level statement starts). One forward pass; an unterminated string ends the text.
 */

export type PyKind = "name" | "string" | "number" | "op";

export interface PyToken {
  kind: PyKind;
  /** A name, number or operator as written; a string's decoded value. */
  text: string;
  start: number;
  end: number;
  /** The indent of the logical line this token starts, or -1 when it does not start one. */
  indent: number;
}

const OPENERS = new Set(["(", "[", "{"]);
const CLOSERS = new Set([")", "]", "}"]);
const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', "\n": "" };

export interface PyTokens {
  tokens: PyToken[];
  unterminated: boolean;
}

/** Tokens of at most `maxTokens`; `truncated` is reported through the count (tokens.length === maxTokens). */
export function pythonTokens(text: string, maxTokens: number): PyTokens {
  const tokens: PyToken[] = [];
  const n = text.length;
  let i = 0;
  let depth = 0;
  let lineStart = true;
  let indent = 0;
  while (i < n && tokens.length < maxTokens) {
    const c = text[i]!;
    if (c === "\n") {
      if (depth === 0) {
        lineStart = true;
        indent = 0;
      }
      i++;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r" || c === "\f") {
      if (lineStart) indent += c === "\t" ? 8 - (indent % 8) : 1;
      i++;
      continue;
    }
    if (c === "#") {
      const nl = text.indexOf("\n", i);
      i = nl < 0 ? n : nl;
      continue;
    }
    if (c === "\\" && text[i + 1] === "\n") {
      i += 2;
      continue;
    }
    const at = lineStart && depth === 0 ? indent : -1;
    lineStart = false;
    const start = i;
    const str = stringAt(text, i);
    if (str) {
      if (str.end < 0) return { tokens, unterminated: true };
      tokens.push({ kind: "string", text: str.value, start, end: str.end, indent: at });
      i = str.end;
      continue;
    }
    if (isNameStart(c)) {
      while (i < n && isNamePart(text[i]!)) i++;
      tokens.push({ kind: "name", text: text.slice(start, i), start, end: i, indent: at });
      continue;
    }
    if (c >= "0" && c <= "9") {
      while (i < n && (isNamePart(text[i]!) || text[i] === ".")) i++;
      tokens.push({ kind: "number", text: text.slice(start, i), start, end: i, indent: at });
      continue;
    }
    const two = text.slice(i, i + 2);
    const op = two === "==" || two === "!=" || two === "<=" || two === ">=" || two === "->" || two === "**" || two === "//" ? two : c;
    if (OPENERS.has(op)) depth++;
    else if (CLOSERS.has(op)) depth = Math.max(0, depth - 1);
    tokens.push({ kind: "op", text: op, start, end: i + op.length, indent: at });
    i += op.length;
  }
  return { tokens, unterminated: false };
}

/** The string literal starting at `i` (after up to two prefix letters), or null when none starts there; end -1 when unterminated. */
function stringAt(text: string, i: number): { value: string; end: number } | null {
  let j = i;
  let raw = false;
  while (j < i + 2 && j < text.length && /[rRbBuUfF]/.test(text[j]!)) {
    if (text[j] === "r" || text[j] === "R") raw = true;
    j++;
  }
  const q = text[j];
  if (q !== "'" && q !== '"') return null;
  // A prefix must be the whole name before the quote: `ref"x"` is no string.
  if (j > i && i > 0 && isNamePart(text[i - 1]!)) return null;
  const triple = text.startsWith(q.repeat(3), j);
  const close = triple ? q.repeat(3) : q;
  let k = j + close.length;
  let value = "";
  while (k < text.length) {
    const ch = text[k]!;
    if (ch === "\\") {
      const next = text[k + 1] ?? "";
      value += raw ? ch + next : (ESCAPES[next] ?? ch + next);
      k += 2;
      continue;
    }
    if (!triple && ch === "\n") return { value, end: -1 };
    if (text.startsWith(close, k)) return { value, end: k + close.length };
    value += ch;
    k++;
  }
  return { value, end: -1 };
}

const isNameStart = (c: string): boolean => (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_" || c > "\u007f";
const isNamePart = (c: string): boolean => isNameStart(c) || (c >= "0" && c <= "9");
