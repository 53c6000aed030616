// Path globs for reservations: whether a pattern covers a path, and whether two patterns can
// cover a common path (two exclusive holders of overlapping paths are refused). Patterns are a
// caller's text, so sizes are bounded and nothing backtracks: a pattern compiles to a small NFA,
// matching walks it with a state set in O(|pattern|·|path|) and overlap walks the product of two
// NFAs in O(|a|·|b|), both without recursion.
//
// Syntax, gitignore-like, case-sensitive, anchored at the repository root:
// - `*` matches any run, possibly empty, of characters other than "/" (within one segment).
// - `?` matches exactly one character other than "/".
// - `**` as a whole segment matches zero or more whole segments: "**" + "/b" matches `b` and
//   `x/y/b`; "a/**" + "/b" matches `a/b`, `a/x/b` and `a/x/y/b`. Last, it needs at least one:
//   `a/**` matches `a/x` and `a/x/y` but not `a`. Inside a segment (`a**b`) it is just `*`.
// - Everything else is literal: no classes, braces or escapes (`[` and `{` are plain characters).
// Characters are code points, so `?` takes a whole emoji rather than half of its surrogate pair.
import { excerpt, invalidInput } from "../../core/errors";

const MAX_PATTERN_LENGTH = 512;
const MAX_PATTERN_SEGMENTS = 64;
const MAX_PATH_LENGTH = 1024;

const WORDING = {
  pattern: { label: "Path pattern", hint: "Use a path relative to the repository root, such as src/auth/** or README.md." },
  path: { label: "Path", hint: "Use a file path relative to the repository root, such as src/auth/login.ts." },
};
type Kind = keyof typeof WORDING;

function refuse(kind: Kind, raw: string, why: string): never {
  throw invalidInput(`${WORDING[kind].label} '${excerpt(raw, 80)}' ${why}.`, WORDING[kind].hint);
}

/** The checks patterns and paths share; returns the segments, leading "./" dropped. */
function segmentsOf(kind: Kind, raw: string, max: number): string[] {
  const text = raw.trim();
  if (text === "") refuse(kind, raw, "is empty");
  // Before any scan, so the work done on a refused input is bounded too.
  if (text.length > max) refuse(kind, raw, `is longer than ${max} characters`);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) refuse(kind, raw, "contains a control character");
  }
  // A path may hold a backslash (git allows it in a file name); in a pattern it is almost surely a
  // Windows separator or an escape, neither of which this syntax has.
  if (kind === "pattern" && text.includes("\\")) refuse(kind, raw, "contains a backslash; separate directories with /");
  if (text.startsWith("/")) refuse(kind, raw, "is absolute");
  let rel = text.startsWith("./") ? text.slice(2) : text;
  if (rel === "") refuse(kind, raw, "is empty");
  if (kind === "pattern" && rel.endsWith("/")) rel += "**";
  const segments = rel.split("/");
  for (const s of segments) {
    if (s === "") refuse(kind, raw, kind === "path" ? "has an empty segment (a doubled or trailing '/')" : "has an empty segment (a doubled '/')");
    if (s === "." || s === "..") refuse(kind, raw, `has a '${s}' segment`);
  }
  return segments;
}

/**
 * The canonical form of a caller's pattern: trimmed, "./" dropped, a trailing "/" read as the
 * whole directory ("src/auth/" is "src/auth/**"), repeated "**" segments and runs of stars within
 * a segment collapsed, so that equal meanings mostly compare equal.
 */
export function normalizePattern(raw: string): string {
  const out: string[] = [];
  for (const s of segmentsOf("pattern", raw, MAX_PATTERN_LENGTH)) {
    if (s === "**") {
      if (out[out.length - 1] !== "**") out.push(s);
    } else {
      out.push(s.replace(/\*+/g, "*"));
    }
  }
  if (out.length > MAX_PATTERN_SEGMENTS) refuse("pattern", raw, `has more than ${MAX_PATTERN_SEGMENTS} segments`);
  const pattern = out.join("/");
  // Only the "**" a trailing "/" adds can bring a pattern past the bound here.
  if (pattern.length > MAX_PATTERN_LENGTH) refuse("pattern", raw, `is longer than ${MAX_PATTERN_LENGTH} characters`);
  return pattern;
}

/** A concrete file path, validated and with "./" dropped; "*" and "?" in it are plain characters. */
export function normalizePath(raw: string): string {
  return segmentsOf("path", raw, MAX_PATH_LENGTH).join("/");
}

export function isGlob(pattern: string): boolean {
  return pattern.includes("*") || pattern.includes("?");
}

// What one step consumes: that character, any character but "/", or any character at all.
const NOT_SLASH = 0;
const ANY = 1;
type Cls = string | typeof NOT_SLASH | typeof ANY;

interface Nfa {
  edges: { cls: Cls; to: number }[][];
  eps: number[][];
  accept: number;
}

/** Thompson-style: every token gets fresh states, so a loop never leaks onto a neighbour's state. */
function compile(pattern: string): Nfa {
  const edges: Nfa["edges"] = [];
  const eps: number[][] = [];
  const state = () => {
    eps.push([]);
    return edges.push([]) - 1;
  };
  const step = (from: number, cls: Cls) => {
    const to = state();
    edges[from]!.push({ cls, to });
    return to;
  };
  let cur = state();
  const segments = pattern.split("/");
  segments.forEach((seg, i) => {
    const last = i === segments.length - 1;
    if (seg === "**" && last) {
      // At least one more segment: "a/**" must not cover "a" itself.
      cur = step(cur, ANY);
      edges[cur]!.push({ cls: ANY, to: cur });
      return;
    }
    if (seg === "**") {
      // Zero segments, or anything ending in "/": the separator after "**" belongs to it, which is
      // how "a/**" + "/b" also covers "a/b".
      const inner = state();
      const next = state();
      eps[cur]!.push(next, inner);
      edges[inner]!.push({ cls: ANY, to: inner }, { cls: "/", to: next });
      cur = next;
      return;
    }
    let star = false;
    for (const ch of seg) {
      if (ch === "*") {
        if (star) continue;
        const loop = state();
        eps[cur]!.push(loop);
        edges[loop]!.push({ cls: NOT_SLASH, to: loop });
        cur = loop;
      } else {
        cur = step(cur, ch === "?" ? NOT_SLASH : ch);
      }
      star = ch === "*";
    }
    if (!last) cur = step(cur, "/");
  });
  return { edges, eps, accept: cur };
}

const admits = (cls: Cls, ch: string) => cls === ANY || (cls === NOT_SLASH ? ch !== "/" : cls === ch);

/** Whether a normalized pattern covers a normalized path. */
export function patternMatches(pattern: string, path: string): boolean {
  return matcherOf(pattern)(path);
}

/** patternMatches with the pattern compiled once, for one pattern tried on many paths. */
export function matcherOf(pattern: string): (path: string) => boolean {
  const nfa = compile(pattern);
  return (path) => run(nfa, path);
}

function run(nfa: Nfa, path: string): boolean {
  const mark = new Uint32Array(nfa.edges.length);
  let gen = 1;
  const enter = (into: number[], s: number) => {
    const stack = [s];
    while (stack.length > 0) {
      const x = stack.pop()!;
      if (mark[x] === gen) continue;
      mark[x] = gen;
      into.push(x);
      stack.push(...nfa.eps[x]!);
    }
  };
  let current: number[] = [];
  enter(current, 0);
  for (const ch of path) {
    gen++;
    const next: number[] = [];
    for (const s of current) for (const e of nfa.edges[s]!) if (admits(e.cls, ch)) enter(next, e.to);
    if (next.length === 0) return false;
    current = next;
  }
  return mark[nfa.accept] === gen;
}

function intersect(x: Cls, y: Cls): Cls | null {
  if (x === ANY) return y;
  if (y === ANY) return x;
  if (x === NOT_SLASH) return y === "/" ? null : y;
  if (y === NOT_SLASH) return x === "/" ? null : x;
  return x === y ? x : null;
}

/**
 * Whether some path is covered by both normalized patterns. Only paths of non-empty segments
 * count ("a/*" and "a/**" + "/b" never meet on "a//b"), but "." and ".." segments are not
 * excluded: two patterns that could meet only on such a path are said to overlap, which errs on
 * the side of refusing.
 */
export function patternsOverlap(a: string, b: string): boolean {
  const A = compile(a);
  const B = compile(b);
  const nb = B.edges.length;
  // A product state: a's state, b's state, and whether the next character opens a segment (the
  // path's first, or one after "/"), where "/" may not come and the path may not end.
  const seen = new Uint8Array(A.edges.length * nb * 2);
  const stack: number[] = [];
  const visit = (p: number, q: number, opening: boolean) => {
    const id = (p * nb + q) * 2 + (opening ? 1 : 0);
    if (seen[id] === 0) {
      seen[id] = 1;
      stack.push(id);
    }
  };
  visit(0, 0, true);
  while (stack.length > 0) {
    const id = stack.pop()!;
    const opening = id % 2 === 1;
    const p = Math.floor(id / 2 / nb);
    const q = Math.floor(id / 2) % nb;
    if (p === A.accept && q === B.accept && !opening) return true;
    for (const p2 of A.eps[p]!) visit(p2, q, opening);
    for (const q2 of B.eps[q]!) visit(p, q2, opening);
    for (const ea of A.edges[p]!) {
      for (const eb of B.edges[q]!) {
        const both = intersect(ea.cls, eb.cls);
        if (both === null) continue;
        if (!opening && (both === "/" || both === ANY)) visit(ea.to, eb.to, true);
        if (both !== "/") visit(ea.to, eb.to, false);
      }
    }
  }
  return false;
}
