/**
 * The code-aware keyword index: identifiers are split where their words meet (camelCase,
 * PascalCase, snake_case, kebab-case, digits), so "getUserById" is found by "user", and a
 * question in prose ("where are users looked up by id") meets the code's own words. Every part is
 * kept whole and stemmed, lower-case, for an FTS5 column tokenized by unicode61.
 */
import { stem } from "../search/embedder";

const IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$]*/g;
/** A part boundary: lower→Upper, or an acronym's end (HTTPServer → HTTP, Server), or letters↔digits. */
const PARTS = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;
/** The most terms one chunk contributes: a 3,000-character chunk has far fewer real ones. */
const MAX_TERMS = 4_000;

/** Words too common in code and questions to rank anything. */
const STOP = new Set(
  (
    "a an and are as at be by can do does for from how i if in is it of on or the this to was what when where which who why with " +
    "const let var function return import export new true false null undefined self def func"
  ).split(" "),
);

/** The lower-case parts of one identifier, the whole first. */
export function identifierParts(identifier: string): string[] {
  const whole = identifier.replace(/^[_$]+|[_$]+$/g, "").toLowerCase();
  if (!whole) return [];
  const parts = (identifier.match(PARTS) ?? []).map((p) => p.toLowerCase());
  return parts.length > 1 ? [whole, ...parts] : [whole];
}

function termsOf(text: string, keepStop: boolean): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IDENTIFIER)) {
    for (const part of identifierParts(m[0])) {
      if (part.length < 2 || (!keepStop && STOP.has(part))) continue;
      out.push(part);
      const s = stem(part);
      if (s !== part && s.length >= 2) out.push(s);
      if (out.length >= MAX_TERMS) return out;
    }
  }
  return out;
}

/** What a chunk puts in the `terms` column. */
export const indexTerms = (text: string): string => termsOf(text, true).join(" ");

/** A query's distinct terms, without stop words (all of them when it has nothing else). */
export function queryTerms(q: string): string[] {
  const terms = [...new Set(termsOf(q, false))];
  return terms.length > 0 ? terms : [...new Set(termsOf(q, true))];
}

/** An FTS5 phrase for one term (terms are [a-z0-9_$], but quoting keeps any of them literal). */
export const ftsPhrase = (term: string): string => `"${term.replace(/"/g, '""')}"`;

/** The scope token of a generation: one FTS token that selects its rows. */
export const scopeToken = (generation: string): string => `g${generation.replace(/[^0-9a-f]/gi, "").toLowerCase()}`;
