/**
 * Fuzzy matching for document search: a misspelt query word is replaced by the tenant's indexed
 * words (doc_terms) that are close to it by trigram similarity.
 *
 * Similarity is the Dice coefficient of the two words' trigram sets, each word padded with two
 * spaces in front and one behind (as PostgreSQL's pg_trgm pads): 2·|A∩B| / (|A| + |B|). One
 * wrong, missing or extra letter in an 8-letter word scores about 0.7–0.8; unrelated words near 0.
 */
import { ftsPhrase } from "../../db/fts";
import type { Ctx } from "../../core/context";

/** Query words shorter than this are never expanded: three letters leave too few trigrams to judge. */
export const FUZZY_MIN_WORD = 4;
/** Query words expanded per search. */
export const FUZZY_MAX_WORDS = 8;
/** Close words kept per query word, best first. */
export const FUZZY_MAX_VARIANTS = 5;
/** Vocabulary words sharing a trigram fetched per query word before scoring; bounds the work per word. */
const CANDIDATES_PER_WORD = 200;

export function trigrams(word: string): Set<string> {
  const padded = `  ${word.toLowerCase()} `;
  const out = new Set<string>();
  const chars = [...padded];
  for (let i = 0; i + 3 <= chars.length; i++) out.add(chars.slice(i, i + 3).join(""));
  return out;
}

export function trigramSimilarity(a: string, b: string): number {
  const ta = trigrams(a);
  const tb = trigrams(b);
  let shared = 0;
  for (const t of ta) if (tb.has(t)) shared++;
  return ta.size + tb.size === 0 ? 0 : (2 * shared) / (ta.size + tb.size);
}

export interface Expansion {
  word: string;
  variants: { term: string; similarity: number }[];
}

/**
 * For each query word of FUZZY_MIN_WORD letters or more, the tenant's indexed words whose
 * similarity is at least `threshold` (the word itself excluded). One batch, one statement per
 * word: the trigram index finds words sharing any inner trigram, ranked by how many they share.
 */
export async function expandWords(ctx: Ctx, words: string[], threshold: number): Promise<Expansion[]> {
  const eligible = [...new Set(words.map((w) => w.toLowerCase()))].filter((w) => [...w].length >= FUZZY_MIN_WORD).slice(0, FUZZY_MAX_WORDS);
  if (eligible.length === 0) return [];
  const stmt = ctx.d1.prepare(
    `SELECT t.term FROM doc_terms_fts JOIN doc_terms t ON t.seq = doc_terms_fts.rowid
     WHERE doc_terms_fts MATCH ?1 AND t.tenant_id = ?2 ORDER BY bm25(doc_terms_fts) LIMIT ?3`,
  );
  const results = await ctx.d1.batch<{ term: string }>(
    eligible.map((w) => {
      // Inner trigrams only: the padded ones contain spaces, which no indexed word has.
      const inner = [...trigrams(w)].filter((t) => !t.includes(" "));
      return stmt.bind(inner.map(ftsPhrase).join(" OR "), ctx.tenantId, CANDIDATES_PER_WORD);
    }),
  );
  return eligible.map((word, i) => {
    const variants = results[i]!.results
      .filter((r) => r.term !== word)
      .map((r) => ({ term: r.term, similarity: trigramSimilarity(word, r.term) }))
      .filter((v) => v.similarity >= threshold)
      .sort((a, b) => b.similarity - a.similarity || (a.term < b.term ? -1 : 1))
      .slice(0, FUZZY_MAX_VARIANTS);
    return { word, variants };
  });
}
