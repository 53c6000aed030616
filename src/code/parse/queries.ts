/** Compiled tree-sitter queries, one per grammar and purpose, kept for the isolate's life. */
import { type Language, Query } from "web-tree-sitter";

const compiled = new Map<string, Query>();

export function queryFor(languageName: string, language: Language, purpose: string, source: string): Query {
  const key = `${languageName}:${purpose}`;
  let query = compiled.get(key);
  if (!query) {
    query = new Query(language, source);
    compiled.set(key, query);
  }
  return query;
}
