/**
 * A one-pass SQL tokenizer for migration files. Every branch moves forward and never looks back,
 * so the work is linear in the text however hostile it is: an unterminated string, comment or
 * dollar-quoted body ends the file (with a warning) instead of making the scanner retry.
 *
 * It knows what the dialects that migrations are written in put between statements: `--` and
 * `/* *\/` comments (`#` too in MySQL files), '…' strings with '' (and, in MySQL files or after
 * Postgres's E prefix, backslash) escapes, "…", `…` and […] quoted identifiers, Postgres's
 * $tag$…$tag$ bodies, `::` casts and psql's `:NAME` variables (kept as one word, so
 * `:SCHEMA.jobs` reads as a schema-qualified name). Block comments do not nest (MySQL's and
 * SQLite's do not; Postgres's nested ones are rare in migrations).
 */

export type TokenKind = "word" | "quoted" | "string" | "number" | "punct";

export interface Token {
  kind: TokenKind;
  /** A word as written; a quoted identifier unquoted; a string's raw text; a punctuation mark. */
  text: string;
  /** Upper-cased text of a word, "" otherwise: keywords compare against it. */
  up: string;
  start: number;
  end: number;
}

export interface ScanOptions {
  /** MySQL's lexical rules: `#` comments and backslash escapes in strings. */
  mysql: boolean;
}

/** Longest `$tag$` opener and `[name]` looked for: past it the character is plain punctuation. */
const MAX_TAG = 64;
const MAX_BRACKET_NAME = 128;

export class SqlScanner {
  private i = 0;
  /** Where the next backslash is (-1: none left), so escapes cost one scan of the text, not one per string. */
  private nextSlash = -2;
  /** Set when the text ended inside a string, comment or body. */
  unterminated: string | null = null;

  constructor(
    private readonly text: string,
    private readonly opts: ScanOptions,
  ) {}

  /** The next token, or null at the end of the text. */
  next(): Token | null {
    const t = this.text;
    const n = t.length;
    while (this.i < n) {
      const c = t.charCodeAt(this.i);
      if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11 || c === 0xfeff || c === 0xa0) {
        this.i++;
        continue;
      }
      if ((c === 45 && t.charCodeAt(this.i + 1) === 45) || (c === 35 && this.opts.mysql)) {
        const nl = t.indexOf("\n", this.i);
        this.i = nl < 0 ? n : nl + 1;
        continue;
      }
      if (c === 47 && t.charCodeAt(this.i + 1) === 42) {
        const close = t.indexOf("*/", this.i + 2);
        if (close < 0) return this.endUnterminated("comment");
        this.i = close + 2;
        continue;
      }
      return this.token(c);
    }
    return null;
  }

  private token(c: number): Token | null {
    const t = this.text;
    const start = this.i;
    if (c === 39) return this.quotedText(start, start + 1, "'", this.opts.mysql, "string");
    if (c === 34) return this.quotedText(start, start + 1, '"', false, "quoted");
    if (c === 96) return this.quotedText(start, start + 1, "`", false, "quoted");
    if (c === 91) {
      const name = this.bracketName(start);
      if (name !== null) return name;
    }
    if (c === 36) {
      const body = this.dollarBody(start);
      if (body !== undefined) return body;
    }
    if (c === 58) {
      if (t.charCodeAt(start + 1) === 58) return this.emit("punct", "::", start, start + 2);
      const w = start + 1 < t.length && isWordStart(t.charCodeAt(start + 1)) ? this.wordEnd(start + 1) : start;
      if (w > start) return this.emit("word", t.slice(start, w), start, w);
    }
    if (isWordStart(c)) {
      const end = this.wordEnd(start);
      // E'…' is Postgres's escape string: backslashes escape there.
      if (end === start + 1 && (c === 69 || c === 101) && t.charCodeAt(end) === 39) return this.quotedText(start, end + 1, "'", true, "string");
      return this.emit("word", t.slice(start, end), start, end);
    }
    if (isDigit(c)) {
      let end = start + 1;
      while (end < t.length && (isWordPart(t.charCodeAt(end)) || t.charCodeAt(end) === 46)) end++;
      return this.emit("number", t.slice(start, end), start, end);
    }
    return this.emit("punct", t[start]!, start, start + 1);
  }

  private emit(kind: TokenKind, text: string, start: number, end: number): Token {
    this.i = end;
    return { kind, text, up: kind === "word" ? text.toUpperCase() : "", start, end };
  }

  private endUnterminated(what: string): null {
    this.unterminated = what;
    this.i = this.text.length;
    return null;
  }

  /** A run closed by `quote`, where a doubled quote (and, if `backslash`, \x) stands for itself. */
  private quotedText(start: number, from: number, quote: string, backslash: boolean, kind: TokenKind): Token | null {
    const t = this.text;
    let j = from;
    let value = "";
    for (;;) {
      const close = t.indexOf(quote, j);
      if (close < 0) return this.endUnterminated(kind === "string" ? "string" : "quoted identifier");
      if (backslash) {
        if (this.nextSlash !== -1 && this.nextSlash < j) this.nextSlash = t.indexOf("\\", j);
        const slash = this.nextSlash;
        if (slash >= 0 && slash < close) {
          if (kind !== "string") value += t.slice(j, slash) + (t[slash + 1] ?? "");
          j = slash + 2;
          continue;
        }
      }
      if (kind !== "string") value += t.slice(j, close);
      if (t[close + 1] === quote) {
        if (kind !== "string") value += quote;
        j = close + 2;
        continue;
      }
      this.i = close + 1;
      return { kind, text: kind === "string" ? t.slice(start, close + 1) : value, up: "", start, end: close + 1 };
    }
  }

  /**
   * `[name]` as SQL Server and SQLite quote identifiers, told from Postgres's `text[]`, `int[3]`
   * and `ARRAY['a']` by what is inside: a short run without quotes, commas or brackets that is
   * not a bare number. Anything else is a plain "[".
   */
  private bracketName(start: number): Token | null {
    const t = this.text;
    const limit = Math.min(t.length, start + 1 + MAX_BRACKET_NAME);
    for (let j = start + 1; j < limit; j++) {
      const c = t.charCodeAt(j);
      if (c === 93) {
        const name = t.slice(start + 1, j);
        if (name.trim() === "" || /^\d+$/.test(name)) return null;
        this.i = j + 1;
        return { kind: "quoted", text: name, up: "", start, end: j + 1 };
      }
      if (c === 91 || c === 39 || c === 34 || c === 44 || c === 10 || c === 59) return null;
    }
    return null;
  }

  /** A `$tag$ … $tag$` body as one string token; undefined when the `$` opens none (`$1`). */
  private dollarBody(start: number): Token | null | undefined {
    const t = this.text;
    const limit = Math.min(t.length, start + 2 + MAX_TAG);
    let j = start + 1;
    if (j < t.length && isDigit(t.charCodeAt(j))) return undefined;
    while (j < limit && (isWordStart(t.charCodeAt(j)) || isDigit(t.charCodeAt(j)))) j++;
    if (t.charCodeAt(j) !== 36) return undefined;
    const delimiter = t.slice(start, j + 1);
    const close = t.indexOf(delimiter, j + 1);
    if (close < 0) return this.endUnterminated("dollar-quoted body");
    const end = close + delimiter.length;
    this.i = end;
    return { kind: "string", text: t.slice(start, end), up: "", start, end };
  }

  private wordEnd(from: number): number {
    let end = from + 1;
    while (end < this.text.length && isWordPart(this.text.charCodeAt(end))) end++;
    return end;
  }
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isWordStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c >= 0x80;
const isWordPart = (c: number): boolean => isWordStart(c) || isDigit(c) || c === 36;
