/**
 * grep over the document store (seed 003): RE2 regular expressions (re2js, linear time, so no
 * pattern can make a scan explode) over the extracted text of live documents, one line at a time.
 *
 * Candidate documents are narrowed by the trigram index (doc_texts_fts, migration 0025) only when
 * the pattern has literals every match must contain; the regex then decides every match. Work is
 * bounded per call (bytes scanned, weighted by the pattern's program size, and wall time between
 * fetches): when a bound is reached the call answers what it found with `truncated: true`.
 */
import { globMatcher } from "../../core/glob";
import { scopeMatcher } from "../sessions/model";
import { RE2JS } from "re2js";
import { compileRe2 } from "../../core/re2";
// `and` here is the literal-query combinator, so drizzle's goes by allOf.
import { and as allOf, asc, eq, inArray, isNull } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../../core/context";
import { dbOf, jsonValues } from "../../db/client";
import { docTexts, documents } from "../../db/schema";
import { invalidInput } from "../../core/errors";
import type { DocScope } from "../shared";
import { normalizePath } from "../store/store";

// ---------------------------------------------------------------------------------------------
// Required literals: what every match of a pattern must contain.

/** A condition on a document's text: every match of the pattern satisfies it. */
export type LiteralQuery = { all: true } | { lit: string } | { and: LiteralQuery[] } | { or: LiteralQuery[] };

const ALL: LiteralQuery = { all: true };
/** Exact sets grow by cross product; past this size they are folded into a query. */
const MAX_EXACT = 32;
/** A class of at most this many characters is kept as alternatives ([Ee] → E|e). */
const MAX_CLASS_CHARS = 8;

/**
 * What the analysis knows about a node of the pattern (after Russ Cox's trigram index for Google
 * Code Search): every match of the node satisfies `query`, starts with one of `prefix`, ends with
 * one of `suffix`, and is one of `exact` when that set is known and small.
 */
interface Info {
  exact: Set<string> | null;
  prefix: Set<string>;
  suffix: Set<string>;
  query: LiteralQuery;
}

const chars = (s: string) => [...s].length;

/** "Contains one of these strings": useless (ALL) if any is shorter than a trigram. */
function containsOneOf(set: Set<string>): LiteralQuery {
  const qs: LiteralQuery[] = [];
  for (const s of set) {
    if (chars(s) < 3) return ALL;
    qs.push({ lit: s });
  }
  return or(qs);
}

/** Everything an Info says, as one query. */
const full = (i: Info): LiteralQuery => (i.exact ? and([i.query, containsOneOf(i.exact)]) : and([i.query, containsOneOf(i.prefix), containsOneOf(i.suffix)]));

function and(qs: LiteralQuery[]): LiteralQuery {
  const flat: LiteralQuery[] = [];
  const seen = new Set<string>();
  for (const q of qs) {
    if ("all" in q) continue;
    for (const part of "and" in q ? q.and : [q]) {
      const key = JSON.stringify(part);
      if (seen.has(key)) continue;
      seen.add(key);
      flat.push(part);
    }
  }
  // Containing "Handler" implies containing "Hand": the shorter conjunct adds nothing.
  const kept = flat.filter((q) => !("lit" in q && flat.some((o) => o !== q && "lit" in o && o.lit.length > q.lit.length && o.lit.includes(q.lit))));
  if (kept.length === 0) return ALL;
  return kept.length === 1 ? kept[0]! : { and: kept };
}

function or(qs: LiteralQuery[]): LiteralQuery {
  const flat: LiteralQuery[] = [];
  for (const q of qs) {
    if ("all" in q) return ALL;
    if ("or" in q) flat.push(...q.or);
    else flat.push(q);
  }
  // "zebrafish or zebra" is just "zebra": the longer alternative implies the shorter.
  const kept = flat.filter((q, i) => !("lit" in q && flat.some((o, j) => j !== i && "lit" in o && q.lit.includes(o.lit) && (o.lit.length < q.lit.length || j < i))));
  if (kept.length === 0) return ALL;
  return kept.length === 1 ? kept[0]! : { or: kept };
}

function cross(a: Set<string>, b: Set<string>): Set<string> | null {
  if (a.size * b.size > MAX_EXACT) return null;
  const out = new Set<string>();
  for (const x of a) for (const y of b) out.add(x + y);
  return out;
}

const EMPTY = new Set([""]);
const exactInfo = (...strings: string[]): Info => {
  const set = new Set(strings);
  return { exact: set, prefix: set, suffix: set, query: ALL };
};
const anyInfo = (): Info => ({ exact: null, prefix: EMPTY, suffix: EMPTY, query: ALL });

function concat(a: Info, b: Info): Info {
  if (a.exact && b.exact) {
    const both = cross(a.exact, b.exact);
    if (both) return { exact: both, prefix: both, suffix: both, query: and([a.query, b.query]) };
  }
  // Text across the seam: some suffix of a followed by some prefix of b.
  const seam = cross(a.suffix, b.prefix);
  const parts = [a.query, b.query, seam ? containsOneOf(seam) : and([containsOneOf(a.suffix), containsOneOf(b.prefix)])];
  let prefix = a.exact ? cross(a.exact, b.prefix) : a.prefix;
  if (!prefix) {
    // Too many combinations to track: keep what a's own strings say and forget the prefix.
    parts.push(containsOneOf(a.exact!));
    prefix = EMPTY;
  }
  let suffix = b.exact ? cross(a.suffix, b.exact) : b.suffix;
  if (!suffix) {
    parts.push(containsOneOf(b.exact!));
    suffix = EMPTY;
  }
  return { exact: null, prefix, suffix, query: and(parts) };
}

function union(a: Set<string>, b: Set<string>): Set<string> | null {
  return a.size + b.size > MAX_EXACT ? null : new Set([...a, ...b]);
}

function alternate(a: Info, b: Info): Info {
  if (a.exact && b.exact) {
    const all = union(a.exact, b.exact);
    if (all) return { exact: all, prefix: all, suffix: all, query: or([a.query, b.query]) };
  }
  return { exact: null, prefix: union(a.prefix, b.prefix) ?? EMPTY, suffix: union(a.suffix, b.suffix) ?? EMPTY, query: or([full(a), full(b)]) };
}

/** x+ or x{n,} with n ≥ 1: starts like x, ends like x, and contains what x contains. */
const atLeastOnce = (x: Info): Info => ({ exact: null, prefix: x.prefix, suffix: x.suffix, query: x.exact ? and([x.query, containsOneOf(x.exact)]) : x.query });

class Unsupported extends Error {}

/**
 * A small parser for RE2 syntax that only computes Info. It runs on patterns RE2 has already
 * accepted; anything it does not recognise throws Unsupported and the caller scans everything,
 * so a gap here costs speed, never a missed match. Case flags are ignored on purpose: the trigram
 * index folds case (Unicode simple folding), so a literal narrows soundly either way.
 */
class LiteralParser {
  private at = 0;
  constructor(private readonly src: string) {}

  parse(): Info {
    const info = this.alternation();
    if (this.at !== this.src.length) throw new Unsupported("trailing input");
    return info;
  }

  private peek(): string | undefined {
    return this.src[this.at];
  }

  private alternation(): Info {
    let info = this.sequence();
    while (this.peek() === "|") {
      this.at++;
      info = alternate(info, this.sequence());
    }
    return info;
  }

  private sequence(): Info {
    let info = exactInfo("");
    while (this.at < this.src.length && this.peek() !== "|" && this.peek() !== ")") {
      info = concat(info, this.repeat(this.atom()));
    }
    return info;
  }

  private repeat(atom: Info): Info {
    let info = atom;
    for (;;) {
      const c = this.peek();
      if (c === "*" || c === "?" || c === "+") {
        this.at++;
        if (c === "*") info = anyInfo();
        else if (c === "?") info = info.exact && info.exact.size < MAX_EXACT ? exactInfo(...info.exact, "") : anyInfo();
        else info = atLeastOnce(info);
      } else if (c === "{") {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.at));
        // RE2 reads a brace that is not a repeat as a literal brace.
        if (!m) return info;
        this.at += m[0].length;
        info = Number(m[1]) >= 1 ? atLeastOnce(info) : anyInfo();
      } else {
        return info;
      }
      if (this.peek() === "?") this.at++;
    }
  }

  private atom(): Info {
    const c = this.src[this.at++]!;
    switch (c) {
      case ".":
        return anyInfo();
      case "^":
      case "$":
        return exactInfo("");
      case "[":
        return this.charClass();
      case "(":
        return this.group();
      case "\\":
        return this.escape(false);
      default: {
        // A character outside the BMP is two UTF-16 units and one literal.
        const cp = this.src.codePointAt(this.at - 1)!;
        if (cp > 0xffff) this.at++;
        return exactInfo(String.fromCodePoint(cp));
      }
    }
  }

  private group(): Info {
    if (this.peek() === "?") {
      const flags = /^\?(P?<[A-Za-z_][A-Za-z0-9_]*>|[imsU-]*:|[imsU-]*\))/.exec(this.src.slice(this.at));
      if (!flags) throw new Unsupported("group");
      this.at += flags[0].length;
      // "(?i)" sets flags for the rest of the group and matches nothing itself.
      if (flags[1]!.endsWith(")")) return exactInfo("");
    }
    const info = this.alternation();
    if (this.src[this.at++] !== ")") throw new Unsupported("unclosed group");
    return info;
  }

  /** Reads one escape after the backslash. Returns a literal, an empty assertion or "any". */
  private escape(inClass: boolean): Info {
    const c = this.src[this.at++];
    if (c === undefined) throw new Unsupported("trailing backslash");
    const simple: Record<string, string> = { a: "\x07", f: "\f", t: "\t", n: "\n", r: "\r", v: "\v" };
    if (c in simple) return exactInfo(simple[c]!);
    if ("dDsSwWpPC".includes(c)) {
      if ((c === "p" || c === "P") && this.peek() === "{") {
        const end = this.src.indexOf("}", this.at);
        if (end < 0) throw new Unsupported("class name");
        this.at = end + 1;
      } else if (c === "p" || c === "P") {
        this.at++;
      }
      return anyInfo();
    }
    if (!inClass && "bBAz".includes(c)) return exactInfo("");
    if (c === "Q") {
      const end = this.src.indexOf("\\E", this.at);
      const text = end < 0 ? this.src.slice(this.at) : this.src.slice(this.at, end);
      this.at = end < 0 ? this.src.length : end + 2;
      return exactInfo(text);
    }
    if (c === "x") {
      const m = /^(\{([0-9A-Fa-f]+)\}|[0-9A-Fa-f]{2})/.exec(this.src.slice(this.at));
      if (!m) throw new Unsupported("hex escape");
      this.at += m[0].length;
      return exactInfo(String.fromCodePoint(parseInt(m[2] ?? m[1]!, 16)));
    }
    if (c >= "0" && c <= "7") {
      const m = /^[0-7]{0,2}/.exec(this.src.slice(this.at))!;
      this.at += m[0].length;
      return exactInfo(String.fromCodePoint(parseInt(c + m[0], 8)));
    }
    // RE2 allows escaping punctuation only; letters and digits are handled above or invalid.
    if (/[A-Za-z0-9]/.test(c)) throw new Unsupported(`escape \\${c}`);
    return exactInfo(c);
  }

  private charClass(): Info {
    if (this.peek() === "^") {
      this.skipClass();
      return anyInfo();
    }
    const members = new Set<string>();
    let first = true;
    let tooMany = false;
    while (this.at < this.src.length && (this.peek() !== "]" || first)) {
      first = false;
      if (this.src.startsWith("[:", this.at)) {
        const end = this.src.indexOf(":]", this.at + 2);
        if (end < 0) throw new Unsupported("posix class");
        this.at = end + 2;
        tooMany = true;
        continue;
      }
      const lo = this.classChar();
      if (lo === null) {
        tooMany = true;
        continue;
      }
      if (this.peek() === "-" && this.src[this.at + 1] !== "]" && this.at + 1 < this.src.length) {
        this.at++;
        const hi = this.classChar();
        if (hi === null) throw new Unsupported("range to a class");
        const a = lo.codePointAt(0)!;
        const b = hi.codePointAt(0)!;
        if (b - a + 1 > MAX_CLASS_CHARS) tooMany = true;
        else for (let cp = a; cp <= b; cp++) members.add(String.fromCodePoint(cp));
      } else {
        members.add(lo);
      }
      if (members.size > MAX_CLASS_CHARS) tooMany = true;
    }
    if (this.src[this.at++] !== "]") throw new Unsupported("unclosed class");
    return tooMany || members.size === 0 ? anyInfo() : exactInfo(...members);
  }

  /** One member character of a class, or null for a class escape (\d, \pL, …). */
  private classChar(): string | null {
    const c = this.src[this.at++]!;
    if (c !== "\\") {
      const cp = this.src.codePointAt(this.at - 1)!;
      if (cp > 0xffff) this.at++;
      return String.fromCodePoint(cp);
    }
    const info = this.escape(true);
    if (!info.exact) return null;
    const [only] = info.exact;
    if (info.exact.size !== 1 || chars(only!) !== 1) throw new Unsupported("class escape");
    return only!;
  }

  private skipClass(): void {
    this.at++;
    if (this.peek() === "]") this.at++;
    while (this.at < this.src.length && this.peek() !== "]") {
      if (this.src.startsWith("[:", this.at)) {
        const end = this.src.indexOf(":]", this.at + 2);
        if (end < 0) throw new Unsupported("posix class");
        this.at = end + 2;
      } else {
        this.at += this.peek() === "\\" ? 2 : 1;
      }
    }
    if (this.src[this.at++] !== "]") throw new Unsupported("unclosed class");
  }
}

/** What every match of `pattern` (already accepted by RE2) must contain; `{all: true}` when nothing is known. */
export function requiredLiterals(pattern: string): LiteralQuery {
  try {
    return full(new LiteralParser(pattern).parse());
  } catch (err) {
    if (err instanceof Unsupported) return ALL;
    throw err;
  }
}

/** Bounds on the FTS5 expression built from a query; past them a query is simplified soundly. */
const MAX_QUERY_TERMS = 24;

function countTerms(q: LiteralQuery): number {
  if ("lit" in q) return 1;
  if ("and" in q) return q.and.reduce((n, x) => n + countTerms(x), 0);
  if ("or" in q) return q.or.reduce((n, x) => n + countTerms(x), 0);
  return 0;
}

/** Keeps an AND's most selective (longest) parts: dropping a conjunct only widens the candidates. */
function simplify(q: LiteralQuery): LiteralQuery {
  if (countTerms(q) <= MAX_QUERY_TERMS) return q;
  if ("and" in q) {
    const parts = q.and.map(simplify).filter((x) => !("all" in x));
    const weight = (x: LiteralQuery): number => ("lit" in x ? chars(x.lit) : 0);
    parts.sort((x, y) => weight(y) - weight(x));
    const kept: LiteralQuery[] = [];
    let n = 0;
    for (const p of parts) {
      const t = countTerms(p);
      if (n + t > MAX_QUERY_TERMS) continue;
      kept.push(p);
      n += t;
    }
    return and(kept);
  }
  // An OR cannot drop an alternative without missing its matches.
  return ALL;
}

/** The FTS5 MATCH expression for a query over the trigram index, or null when it cannot narrow. */
export function trigramMatch(q: LiteralQuery): string | null {
  const s = simplify(q);
  if ("all" in s) return null;
  const render = (x: LiteralQuery): string => {
    if ("lit" in x) return `"${x.lit.replace(/"/g, '""')}"`;
    if ("and" in x) return `(${x.and.map(render).join(" AND ")})`;
    if ("or" in x) return `(${x.or.map(render).join(" OR ")})`;
    throw new Error("unreachable: ALL was simplified away");
  };
  return render(s);
}

// ---------------------------------------------------------------------------------------------
// The scan.

export const GREP_PATTERN_MAX = 1000;
export const GREP_LIMIT_DEFAULT = 100;
export const GREP_LIMIT_MAX = 2000;
export const GREP_CONTEXT_MAX = 20;
export const GREP_PATHS_MAX = 100;
/** A line longer than this is cut around its match (context lines are cut at the end). */
export const GREP_LINE_MAX = 400;

export interface GrepLimits {
  /** Characters of text scanned per call for a simple pattern. */
  maxChars: number;
  /**
   * Characters × program instructions per call. RE2 is linear, but its fallback engine's
   * constant grows with the program: a 1,000-instruction pattern on adversarial text runs at
   * about 2 s per MB here. Workers' clocks stand still during computation, so this estimate,
   * not a timer, is what keeps one call within its CPU budget.
   */
  maxWork: number;
  /** Wall time, checked between fetches of text. */
  maxMs: number;
  /** Characters of text fetched per D1 round trip. */
  batchChars: number;
}

export const DEFAULT_GREP_LIMITS: GrepLimits = {
  maxChars: 32 * 1024 * 1024,
  maxWork: 1_000_000_000,
  maxMs: 5_000,
  batchChars: 4 * 1024 * 1024,
};

export interface GrepParams {
  pattern: string;
  paths?: string[] | undefined;
  ignore_case?: boolean | undefined;
  line_numbers?: boolean | undefined;
  context?: number | undefined;
  word?: boolean | undefined;
  count?: boolean | undefined;
  files_with_matches?: boolean | undefined;
  max_count?: number | undefined;
  limit?: number | undefined;
}

export interface GrepMatch {
  path: string;
  hash: string;
  line_number?: number;
  line: string;
  line_truncated?: true;
  before?: string[];
  after?: string[];
}

export interface GrepResult {
  [key: string]: unknown;
  mode: "lines" | "count" | "files";
  pattern: string;
  matches?: GrepMatch[];
  counts?: { path: string; hash: string; count: number }[];
  files?: { path: string; hash: string }[];
  paths?: string[];
  total_matches: number;
  files_searched: number;
  files_matched: number;
  /** True when the trigram index chose the candidate documents. */
  narrowed: boolean;
  truncated: boolean;
  note?: string;
  execution_time_ms: number;
}

/** A path filter entry: a glob (picomatch), or a file or folder path. */
function pathFilter(paths: string[] | undefined): ((path: string) => boolean) | null {
  if (!paths || paths.length === 0) return null;
  const tests: ((path: string) => boolean)[] = [];
  for (const raw of paths) {
    if (/[*?[\]{}!]/.test(raw)) {
      tests.push(globMatcher([raw]));
    } else {
      const p = normalizePath(raw);
      tests.push((path) => path === p || path.startsWith(`${p}/`));
    }
  }
  return (path) => tests.some((t) => t(path));
}

interface Candidate {
  path: string;
  hash: string;
  text_bytes: number;
}

/** The caller's live documents whose text was extracted, by path. */
function textDocuments(ctx: Ctx): Promise<Candidate[]> {
  const d = alias(documents, "d");
  const t = alias(docTexts, "t");
  return dbOf(ctx)
    .select({ path: d.path, hash: d.hash, text_bytes: t.textBytes })
    .from(d)
    .innerJoin(t, allOf(eq(t.tenantId, d.tenantId), eq(t.hash, d.hash)))
    .where(allOf(eq(d.tenantId, ctx.tenantId), isNull(d.deletedAt), eq(t.status, "text")))
    .orderBy(asc(d.path))
    .all();
}

/** Cuts a long line to a window around its first match. */
function cutLine(line: string, matcher: RE2JS): { text: string; cut: boolean } {
  if (line.length <= GREP_LINE_MAX) return { text: line, cut: false };
  const m = matcher.matcher(line);
  const start = m.find() ? m.start() : 0;
  const from = Math.max(0, Math.min(start - Math.floor(GREP_LINE_MAX / 4), line.length - GREP_LINE_MAX));
  const to = Math.min(line.length, from + GREP_LINE_MAX);
  return { text: `${from > 0 ? "…" : ""}${line.slice(from, to)}${to < line.length ? "…" : ""}`, cut: true };
}

const cutContext = (line: string) => (line.length <= GREP_LINE_MAX ? line : `${line.slice(0, GREP_LINE_MAX)}…`);

/**
 * Runs grep over the caller's live documents (within `scope` when a session pins some). Only
 * documents whose text was extracted (doc_texts status 'text') are searched.
 */
export async function grepDocuments(ctx: Ctx, params: GrepParams, scope?: DocScope, limits: GrepLimits = DEFAULT_GREP_LIMITS): Promise<GrepResult> {
  const started = Date.now();
  const pattern = params.pattern;
  if (pattern.length > GREP_PATTERN_MAX) throw invalidInput(`pattern is longer than ${GREP_PATTERN_MAX} characters`, "Use a shorter pattern.");
  const source = params.word ? `\\b(?:${pattern})\\b` : pattern;
  const flags = params.ignore_case ? RE2JS.CASE_INSENSITIVE : 0;
  // The pattern alone is checked first so a syntax error names the caller's text, not the wrapper.
  compileRe2(pattern, flags);
  const perLine = compileRe2(source, flags);
  // A line matches on its own iff the multiline pattern matches the document text at that line,
  // so one pass of the fast engine over the whole text rules most documents out.
  // \A, \z and (?-m) anchor at the text's ends even in multiline mode, where a line's ends are
  // meant; such a pattern skips the whole-text pass rather than miss a line.
  const whole = /\\[Az]|\(\?[a-zA-Z]*-[a-zA-Z]*m/.test(source) ? null : compileRe2(source, flags | RE2JS.MULTILINE);
  const program = Math.max(1, perLine.matcher("").programSize());
  const charBudget = Math.min(limits.maxChars, Math.floor(limits.maxWork / program));

  const mode: GrepResult["mode"] = params.files_with_matches ? "files" : params.count ? "count" : "lines";
  const limit = Math.min(params.limit ?? GREP_LIMIT_DEFAULT, GREP_LIMIT_MAX);
  const maxCount = params.max_count ?? 0;
  const context = Math.min(params.context ?? 0, GREP_CONTEXT_MAX);
  const byPath = pathFilter(params.paths);
  const byScope = scopeMatcher(scope);

  const match = trigramMatch(requiredLiterals(pattern));
  const listed = match
    ? // Hand SQL: an FTS5 MATCH, and CROSS JOINs that fix the loop order.
      await ctx.d1
        .prepare(
          // CROSS JOIN fixes the loop order: index first. Left to itself the planner walks every
          // document of the tenant and probes the index for each (1.4 s instead of 2 ms at 10k).
          `SELECT d.path AS path, d.hash AS hash, t.text_bytes AS text_bytes FROM doc_texts_fts f
           CROSS JOIN doc_texts t ON t.rowid = f.rowid
           CROSS JOIN documents d ON d.tenant_id = t.tenant_id AND d.hash = t.hash AND d.deleted_at IS NULL
           WHERE doc_texts_fts MATCH ?1 AND t.tenant_id = ?2 AND t.status = 'text'
           ORDER BY d.path`,
        )
        .bind(match, ctx.tenantId)
        .all<Candidate>()
        .then((r) => r.results)
    : await textDocuments(ctx);
  const candidates = listed.filter((c) => (!byPath || byPath(c.path)) && (!byScope || byScope(c.path, c.hash)));

  const matches: GrepMatch[] = [];
  const counts: { path: string; hash: string; count: number }[] = [];
  const files: { path: string; hash: string }[] = [];
  let totalMatches = 0;
  let filesSearched = 0;
  let filesMatched = 0;
  let charsScanned = 0;
  let cutLines = false;
  let stop: string | null = null;

  // Texts are fetched in batches by size; the next batch is fetched while this one is scanned.
  const batches: Candidate[][] = [];
  let current: Candidate[] = [];
  let currentChars = 0;
  for (const c of candidates) {
    if (current.length > 0 && (currentChars + c.text_bytes > limits.batchChars || current.length >= 200)) {
      batches.push(current);
      current = [];
      currentChars = 0;
    }
    current.push(c);
    currentChars += c.text_bytes;
  }
  if (current.length > 0) batches.push(current);

  const fetchTexts = async (batch: Candidate[]): Promise<Map<string, string>> => {
    const rows = await dbOf(ctx)
      .select({ hash: docTexts.hash, text: docTexts.text })
      .from(docTexts)
      .where(allOf(eq(docTexts.tenantId, ctx.tenantId), eq(docTexts.status, "text"), inArray(docTexts.hash, jsonValues([...new Set(batch.map((c) => c.hash))]))))
      .all();
    const got = new Map<string, string>();
    // Per-line matching strips the CR of CRLF; the whole-text pass must see the same lines.
    for (const r of rows) if (r.text !== null) got.set(r.hash, r.text.includes("\r") ? r.text.replace(/\r\n?/g, "\n") : r.text);
    return got;
  };
  const matchEntry = (doc: Candidate, lines: string[], i: number): GrepMatch => {
    const shown = cutLine(lines[i]!, perLine);
    cutLines ||= shown.cut;
    const entry: GrepMatch = params.line_numbers ? { path: doc.path, hash: doc.hash, line_number: i + 1, line: shown.text } : { path: doc.path, hash: doc.hash, line: shown.text };
    if (shown.cut) entry.line_truncated = true;
    if (context > 0) {
      const before = lines.slice(Math.max(0, i - context), i);
      const after = lines.slice(i + 1, i + 1 + context);
      cutLines ||= before.some((l) => l.length > GREP_LINE_MAX) || after.some((l) => l.length > GREP_LINE_MAX);
      entry.before = before.map(cutContext);
      entry.after = after.map(cutContext);
    }
    return entry;
  };
  const budgetNote = () => `stopped after scanning ${charsScanned} characters (this pattern's budget is ${charBudget})`;

  let pending: Promise<Map<string, string>> | null = batches.length > 0 ? fetchTexts(batches[0]!) : null;
  scan: for (let b = 0; b < batches.length; b++) {
    if (b > 0 && Date.now() - started >= limits.maxMs) {
      stop = `stopped after ${limits.maxMs} ms`;
      break;
    }
    const texts = await pending!;
    pending = b + 1 < batches.length ? fetchTexts(batches[b + 1]!) : null;
    // A search over many batches tells a client that asked (progressToken) how far it has got.
    if (batches.length > 1) await ctx.progress?.(b + 1, batches.length, `searching ${batches[b]!.length} of ${candidates.length} documents (batch ${b + 1} of ${batches.length})`);

    for (const doc of batches[b]!) {
      let text = texts.get(doc.hash);
      if (text === undefined) continue;
      const room = charBudget - charsScanned;
      if (room <= 0) {
        stop = budgetNote();
        break scan;
      }
      let partial = false;
      if (text.length > room) {
        // The budget ends inside this document: scan its whole lines up to the budget, then stop.
        const cut = text.lastIndexOf("\n", room);
        if (cut <= 0) {
          stop = budgetNote();
          break scan;
        }
        text = text.slice(0, cut);
        partial = true;
      }
      charsScanned += text.length;
      filesSearched++;
      if (!whole || whole.test(text)) {
        const lines = text.split("\n");
        // A final newline ends the last line; it does not start an empty one.
        if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
        let fileCount = 0;
        for (let i = 0; i < lines.length; i++) {
          const line = lines[i]!;
          if (!perLine.test(line)) continue;
          if (mode === "lines") {
            if (matches.length >= limit) {
              stop = `stopped at ${limit} matching lines (the limit)`;
              break scan;
            }
            matches.push(matchEntry(doc, lines, i));
          }
          fileCount++;
          totalMatches++;
          if (mode === "files" || (maxCount > 0 && fileCount >= maxCount)) break;
        }
        if (fileCount > 0) {
          filesMatched++;
          if (mode === "count") counts.push({ path: doc.path, hash: doc.hash, count: fileCount });
          if (mode === "files") files.push({ path: doc.path, hash: doc.hash });
          if (mode !== "lines" && filesMatched >= limit && !partial) {
            stop = `stopped at ${limit} matching files (the limit)`;
            break scan;
          }
        }
      }
      if (partial) {
        stop = `${budgetNote()}, partway through ${doc.path}`;
        break scan;
      }
    }
  }
  // A prefetch left running when the scan stopped early must not surface as an unhandled rejection.
  if (pending) pending.catch(() => undefined);

  const notes: string[] = [];
  if (stop) notes.push(`${stop}; results are partial. Narrow the search with 'paths', a more specific pattern, or max_count.`);
  if (cutLines) notes.push(`Lines longer than ${GREP_LINE_MAX} characters are cut ('…' marks the cut).`);
  const result: GrepResult = {
    mode,
    pattern,
    total_matches: totalMatches,
    files_searched: filesSearched,
    files_matched: filesMatched,
    narrowed: match !== null,
    truncated: stop !== null,
    execution_time_ms: Date.now() - started,
  };
  if (mode === "lines") result.matches = matches;
  else if (mode === "count") result.counts = counts;
  else {
    result.files = files;
    result.paths = files.map((f) => f.path);
  }
  if (notes.length > 0) result.note = notes.join(" ");
  return result;
}
