/** Building FTS5 queries from user text: every piece is quoted, so no input is ever FTS5 syntax. */
import { invalidInput } from "./errors";

const MAX_TERMS = 32;

/** The words of a text, split as the unicode61 tokenizer splits them. */
export const ftsWords = (text: string): string[] => text.match(/[\p{L}\p{N}_]+/gu) ?? [];

/**
 * A quoted FTS5 string. With a word tokenizer it matches the words as a phrase; with the
 * trigram tokenizer it matches the text as a substring (three characters or more).
 */
export const ftsPhrase = (text: string): string => `"${text.replace(/"/g, '""')}"`;

/** An FTS5 query matching rows that contain every word of the text (stemmed by the index). */
export function ftsQuery(text: string, noWordsHint: string): string {
  const terms = ftsWords(text);
  if (terms.length === 0) throw invalidInput(`q '${text.slice(0, 50)}' has no words to search for.`, noWordsHint);
  if (terms.length > MAX_TERMS) throw invalidInput(`q has ${terms.length} words; at most ${MAX_TERMS} are searched.`, "Search with the few words that matter most.");
  return terms.map(ftsPhrase).join(" ");
}

/** Rows containing any word of the text; bm25 still ranks rows with more of the words first. "" when there are no words. */
export const ftsAnyWord = (text: string): string => ftsWords(text).slice(0, MAX_TERMS).map(ftsPhrase).join(" OR ");
