/**
 * The document store's search (seed 003, the `search` op in ./search): keyword (FTS5, bm25), semantic (the shared
 * embedder and vector index) or hybrid (both, fused by reciprocal rank), over live documents
 * only, with fuzzy matching of misspelt words and direct lookup by content hash.
 *
 * What bounds the work: every keyword query is one statement with its LIMIT in SQL (at most
 * 100 rows, or FILTER_CANDIDATES when a glob must be checked here); snippets and line numbers are
 * computed in SQL for the page only, returning a few KB per result whatever the document's size;
 * the vector query asks for at most 100 neighbours; fuzzy adds one batch of at most 8 trigram
 * lookups of 200 words each.
 */
import picomatch from "picomatch";
import { z } from "zod";
import { and, eq, isNull, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, statementOf } from "../../db/client";
import { ftsPhrase, ftsWords } from "../../core/fts";
import { docTexts, documents } from "../../db/schema";
import type { Ctx } from "../../core/context";
import { invalidInput, ToolError } from "../../core/errors";
import { clip } from "../../core/text";
import { reciprocalRankFusion } from "../../search/hybrid";
import { cachedNearest, embedQuery, type Near, nearestTo, pendingEmbeddings, selectSemantic, type SemanticLayer } from "../../search/semantic";
import { snippetAround } from "../../search/snippet";
import { globMatcher } from "../../core/glob";
import { scopeMatcher } from "../sessions/model";
import type { DocScope } from "../shared";
import { MAX_PATH_CHARS, MAX_TAG_CHARS, MAX_TAGS } from "../store/store";
import { tenantKey } from "../store/text-index";

export const SEARCH_MAX_LIMIT = 100;
export const SEARCH_MAX_CONTEXT = 20;
const MAX_QUERY_CHARS = 1000;
const MAX_QUERY_WORDS = 32;
/** Candidates read when a glob (path_pattern or session pins) must be checked outside SQL. */
export const FILTER_CANDIDATES = 1000;
/** Ranked keyword candidates handed to fusion in hybrid mode. */
const LEXICAL_CANDIDATES = 100;
/** Vector neighbours asked for (Vectorize's topK cap). */
const VECTOR_CANDIDATES = 100;
/** bm25 weights of path, title and body: a word in the name says more about a document than one in its text. */
const BM25_WEIGHTS = "4.0, 8.0, 1.0";
/** Characters of text read around the first match, for snippets and context lines. */
const WINDOW_BEFORE = 2000;
const WINDOW_CHARS = 4000;
const SNIPPET_CHARS = 200;
const LINE_CHARS = 400;
/** Query words searched for in a page's text to place its snippet. */
const SNIPPET_NEEDLES = 8;

export const MISSING_QUERY_MESSAGE = "Provide 'query' for search text, or 'hash' for a direct hash lookup. If you used 'q', rename it to 'query' or place it under step.params.";
const MISSING_QUERY_HINT = 'Example: docs_query {"steps": [{"op": "search", "params": {"query": "database optimization", "limit": 5}}]}, or "params": {"hash": "e3b0c442"}.';

/** The search op's parameters, published by ./search and read by searchDocuments. */
export const searchParams = z.object({
  query: z.string().max(MAX_QUERY_CHARS).optional().describe(`Search text (up to ${MAX_QUERY_CHARS} characters). Words are matched literally: quotes, *, AND, OR, NEAR( are plain text. Alias: q.`),
  limit: z.number().int().min(1).max(SEARCH_MAX_LIMIT).default(10).describe(`Maximum results (1–${SEARCH_MAX_LIMIT}, default 10).`),
  type: z
    .enum(["hybrid", "keyword", "semantic"])
    .default("hybrid")
    .describe("keyword (words, bm25), semantic (meaning, by embeddings) or hybrid (both, fused; default). Hybrid answers keyword results with a warning when semantic search is unavailable."),
  fuzzy: z
    .boolean()
    .default(true)
    .describe(
      "Default true, as in the seed: when the exact words fill fewer than limit results, words of 4+ letters are also matched to indexed words whose trigram similarity is at least `similarity` (finds misspellings).",
    ),
  similarity: z.number().min(0).max(1).default(0.7).describe("Fuzzy threshold, 0.0–1.0 (default 0.7): Dice coefficient of padded trigrams."),
  hash: z.string().max(64).optional().describe("Direct lookup by content hash: the full SHA-256 or a prefix of at least 8 hex characters. Finds live documents only."),
  paths_only: z.boolean().default(false).describe("Return only the matching paths ({total, type, execution_time_ms, paths})."),
  line_numbers: z.boolean().default(false).describe("Snippets become numbered lines around the first match, with line_start and line_end."),
  context: z.number().int().min(0).max(SEARCH_MAX_CONTEXT).default(0).describe(`Lines of context around the first match (0–${SEARCH_MAX_CONTEXT}, default 0).`),
  path_pattern: z.string().max(MAX_PATH_CHARS).optional().describe("Only documents whose path matches this glob (e.g. 'docs/**/*.md')."),
  tags: z.array(z.string().min(1).max(MAX_TAG_CHARS)).max(MAX_TAGS).optional().describe("Only documents carrying at least one of these tags."),
  use_session: z.boolean().default(true).describe("Restrict to the current docs session's pins when a session with pins is active (default true)."),
});
export type SearchParams = z.output<typeof searchParams>;

type Kind = "keyword" | "semantic" | "hybrid" | "hash";
type Match = "words" | "any_word" | "fuzzy" | "semantic" | "hash";

interface Candidate {
  seq: number | null;
  doc_id: string;
  path: string;
  hash: string;
  score: number;
  match: Match;
  keyword_score?: number | null;
  vector_score?: number | null;
  /** Snippet columns when the ranking statement already computed them. */
  window?: WindowCols;
}

interface SearchResult {
  id: string;
  hash: string;
  title: string;
  path: string;
  score: number;
  snippet: string;
  line_start?: number;
  line_end?: number;
  score_breakdown?: { vector_score: number | null; keyword_score: number | null };
}

const round = (x: number) => Math.round(x * 10000) / 10000;
const numeric = (v: unknown) => (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v);

/** The seed's renames and its one actionable refusal; also what searchDocuments checks. */
export function normalizeSearchParams(raw: Record<string, unknown>): Record<string, unknown> {
  const p = { ...raw };
  if ("q" in p) {
    if (p.query !== undefined && p.query !== null) {
      throw invalidInput("Pass the search text once, as 'query' ('q' is its alias).", "Drop 'q' and keep 'query'.");
    }
    p.query = p.q;
    delete p.q;
  }
  // The seed's search tolerates numbers sent as strings.
  for (const key of ["limit", "similarity", "context"]) if (key in p) p[key] = numeric(p[key]);
  const has = (v: unknown) => (typeof v === "string" ? v.trim() !== "" : v !== undefined && v !== null);
  if (!has(p.query) && !has(p.hash)) throw invalidInput(MISSING_QUERY_MESSAGE, MISSING_QUERY_HINT);
  if (p.query === null || (typeof p.query === "string" && p.query.trim() === "")) delete p.query;
  if (p.hash === null) delete p.hash;
  return p;
}

/** Which live documents a search may return, beyond what SQL filters. */
interface Filters {
  /** SQL over doc_search `s` (and its params, numbered from `first`). */
  sql: (first: number) => { text: string; params: unknown[] };
  /** True when `keep` must run on every candidate (a glob or pins); SQL then reads FILTER_CANDIDATES. */
  inJs: boolean;
  keep: (path: string, hash: string) => boolean;
}

function buildFilters(params: SearchParams, scope: DocScope | undefined): Filters {
  const checks: ((path: string, hash: string) => boolean)[] = [];
  let prefix = "";
  if (params.path_pattern !== undefined) {
    const pattern = params.path_pattern.replace(/^\/+/, "");
    const isMatch = globMatcher([pattern]);
    checks.push((path) => isMatch(path));
    // The glob's literal leading folders narrow the candidates in SQL before the glob is checked.
    const base = picomatch.scan(pattern).base;
    if (base && base !== "." && !/[*?[\]{}()!]/.test(base)) prefix = `${base.replace(/\/+$/, "")}/`;
  }
  const inScope = scopeMatcher(scope);
  if (inScope) checks.push(inScope);
  const tags = params.tags && params.tags.length > 0 ? JSON.stringify(params.tags) : null;
  return {
    sql: (first) => {
      const parts: string[] = [];
      const ps: unknown[] = [];
      if (prefix) {
        ps.push(prefix);
        parts.push(` AND substr(s.path, 1, length(?${first + ps.length - 1})) = ?${first + ps.length - 1}`);
      }
      if (tags) {
        ps.push(tags);
        parts.push(
          ` AND EXISTS (SELECT 1 FROM documents d, json_each(d.tags) j WHERE d.tenant_id = s.tenant_id AND d.id = s.doc_id AND j.value IN (SELECT value FROM json_each(?${first + ps.length - 1})))`,
        );
      }
      return { text: parts.join(""), params: ps };
    },
    inJs: checks.length > 0,
    keep: (path, hash) => checks.every((c) => c(path, hash)),
  };
}

interface WindowCols {
  title: string;
  pos: number;
  win_from: number;
  win: string;
  lines_before: number;
}

interface KeywordRow extends Partial<WindowCols> {
  seq: number;
  doc_id: string;
  path: string;
  hash: string;
  bm: number;
  /** 1 when the document holds every query word (multi-word queries), else 0. */
  every: number;
  total: number;
}

/**
 * Where a snippet goes: the first match of any needle in a document's text (instr over the
 * lower-cased text, in SQL, so a 1 MiB document sends WINDOW_CHARS back, not its whole text).
 * Computed once per row in a MATERIALIZED `page` CTE over doc_search `s`; needles are a JSON array.
 */
const positionOf = (needlesParam: string) => `COALESCE((SELECT MIN(NULLIF(instr(lower(s.body), lower(n.value)), 0)) FROM json_each(${needlesParam}) n), 0)`;
/** The window around `page.pos` and the number of lines before it, from doc_search `s`. */
const WINDOW_COLUMNS = `s.title, page.pos, max(1, page.pos - ${WINDOW_BEFORE}) AS win_from,
  substr(s.body, max(1, page.pos - ${WINDOW_BEFORE}), ${WINDOW_CHARS}) AS win,
  length(substr(s.body, 1, max(0, page.pos - ${WINDOW_BEFORE} - 1)))
    - length(replace(substr(s.body, 1, max(0, page.pos - ${WINDOW_BEFORE} - 1)), char(10), '')) AS lines_before`;

/** A MATCH over the tenant's rows: its key token AND the caller's phrases in path, title or body. */
const tenantMatch = (tenantId: string, expr: string) => `tenant_key : ${ftsPhrase(tenantKey(tenantId))} AND {path title body} : (${expr})`;

/**
 * The MATCH that counts a tenant's rows holding any of the phrases. The content columns need not
 * be named (naming them costs FTS5 a look at every match's positions): the tenant's rows hold
 * no other token in tenant_key than its key, which a query word can only match by holding it.
 */
function countMatch(tenantId: string, expr: string, words: string[]): string {
  const key = tenantKey(tenantId).slice(0, 16);
  // As unicode61 folds them: lower case, without diacritics.
  const mayHoldKey = words.some((w) => w.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase().includes(key));
  return mayHoldKey ? tenantMatch(tenantId, expr) : `tenant_key : ${ftsPhrase(tenantKey(tenantId))} AND (${expr})`;
}

interface KeywordQuery {
  /** FTS expression over the content columns. */
  match: string;
  /** For multi-word queries, the every-word expression: those rows rank first. */
  every: string | null;
  want: number;
  /** Needles to compute snippet windows in the same statement (the page is final), or null. */
  windows: string[] | null;
  /**
   * Set when `match` is the every-word expression: its rows are all of the first tier, and
   * total counts the matches of this (any-word) expression instead, without ranking them.
   */
  countOf?: { match: string; words: string[] };
}

/**
 * One ranked keyword statement. The ranking runs inside the FTS index (the tenant is a token
 * there), all matches are counted for total, and only the page, or FILTER_CANDIDATES when a
 * glob is checked here, is joined to doc_search and returned.
 */
async function keywordQuery(ctx: Ctx, q: KeywordQuery, filters: Filters): Promise<{ rows: KeywordRow[]; total: number; capped: boolean }> {
  const ps: unknown[] = [];
  const bind = (v: unknown) => `?${ps.push(v)}`;
  const match = bind(tenantMatch(ctx.tenantId, q.match));
  const tenant = bind(ctx.tenantId);
  const limit = bind(filters.inJs ? FILTER_CANDIDATES : q.want);
  const windows = q.windows !== null && !filters.inJs;
  const everyCol =
    q.countOf !== undefined ? "1" : q.every ? `(doc_search_fts.rowid IN (SELECT rowid FROM doc_search_fts WHERE doc_search_fts MATCH ${bind(tenantMatch(ctx.tenantId, q.every))}))` : "0";
  const counted = q.countOf !== undefined ? bind(countMatch(ctx.tenantId, q.countOf.match, q.countOf.words)) : null;
  const page = windows
    ? `, page AS MATERIALIZED (SELECT top.seq, top.bm, top.every, ${positionOf(bind(JSON.stringify(q.windows!.slice(0, SNIPPET_NEEDLES))))} AS pos
         FROM top JOIN doc_search s ON s.seq = top.seq WHERE s.tenant_id = ${tenant})`
    : `, page AS (SELECT seq, bm, every FROM top)`;
  const f = filters.sql(ps.length + 1);
  ps.push(...f.params);
  // Filters on documents' own columns (path prefix, tags) must apply before the LIMIT.
  const from = f.text ? `doc_search_fts JOIN doc_search s ON s.seq = doc_search_fts.rowid` : `doc_search_fts`;
  const where = f.text ? ` AND s.tenant_id = ${tenant}${f.text}` : "";
  const totalCol = counted ? `(SELECT COUNT(*) FROM ${from} WHERE doc_search_fts MATCH ${counted}${where})` : `(SELECT COUNT(*) FROM hits)`;
  // Hand SQL: FTS5 MATCH ranked by bm25(), in materialized CTEs, with the filters' shared SQL text.
  const res = await ctx.d1
    .prepare(
      `WITH hits AS MATERIALIZED (
         SELECT doc_search_fts.rowid AS seq, bm25(doc_search_fts, 0.0, ${BM25_WEIGHTS}) AS bm, ${everyCol} AS every
         FROM ${from} WHERE doc_search_fts MATCH ${match}${where}),
       top AS (SELECT seq, bm, every FROM hits ORDER BY every DESC, bm, seq LIMIT ${limit})${page}
       SELECT page.seq, page.bm, page.every, s.doc_id, s.path, s.hash, ${totalCol} AS total${windows ? `, ${WINDOW_COLUMNS}` : ""}
       FROM page JOIN doc_search s ON s.seq = page.seq
       WHERE s.tenant_id = ${tenant}
       ORDER BY page.every DESC, page.bm, page.seq`,
    )
    .bind(...ps)
    .all<KeywordRow>();
  const all = res.results;
  const total = all[0]?.total ?? 0;
  if (!filters.inJs) return { rows: all, total, capped: false };
  const kept = all.filter((r) => filters.keep(r.path, r.hash));
  return { rows: kept.slice(0, q.want), total: kept.length, capped: total > all.length };
}

const STOPWORDS = new Set("a an and are as at be but by for from has have in into is it its of on or that the then there these this to was were will with".split(" "));

interface KeywordOutcome {
  candidates: Candidate[];
  total: number;
  capped: boolean;
  expansions: Expansion[];
}

/**
 * Documents with every word first, then those with any of them (one statement); then, with
 * fuzzy and fewer than `want` found, the words' close variants. Scores keep that order: every
 * word 0.5–1, any word 0.25–0.5, fuzzy up to 0.25, each scaled by bm25 against the best of its tier.
 */
async function keywordSearch(ctx: Ctx, queryWords: string[], want: number, params: SearchParams, filters: Filters, windows: boolean): Promise<KeywordOutcome> {
  // Words nearly every English text has rank nothing and make the any-word tier match most of the
  // store (bm25 then scores thousands of rows); a query of nothing but them keeps them.
  const content = queryWords.filter((w) => !STOPWORDS.has(w.toLowerCase()));
  const words = content.length > 0 ? content : queryWords;
  const out: Candidate[] = [];
  const seen = new Set<number>();
  const add = (rows: KeywordRow[], tiers: (row: KeywordRow) => { kind: Match; base: number; span: number }) => {
    const best = new Map<Match, number>();
    for (const row of rows) {
      if (out.length >= want) break;
      if (seen.has(row.seq)) continue;
      seen.add(row.seq);
      const t = tiers(row);
      if (!best.has(t.kind)) best.set(t.kind, -row.bm);
      const top = best.get(t.kind)!;
      const rel = top > 0 ? Math.max(0, -row.bm) / top : 1;
      out.push({
        seq: row.seq,
        doc_id: row.doc_id,
        path: row.path,
        hash: row.hash,
        score: round(t.base + t.span * rel),
        match: t.kind,
        ...(row.win !== undefined ? { window: { title: row.title!, pos: row.pos!, win_from: row.win_from!, win: row.win, lines_before: row.lines_before! } } : {}),
      });
    }
  };
  const phrases = words.map(ftsPhrase);
  const multi = words.length > 1;
  const any = phrases.join(" OR ");
  const every = multi ? phrases.join(" AND ") : null;
  // When the documents holding every word fill the page, the page is theirs: rank only them
  // (bm25 scores a row the same under either expression, over the same phrases) and count the
  // any-word matches for total, rather than score every any-word match to sort them below.
  let first = every !== null && !filters.inJs ? await keywordQuery(ctx, { match: every, every: null, want, windows: windows ? words : null, countOf: { match: any, words } }, filters) : null;
  if (first === null || first.rows.length < want) first = await keywordQuery(ctx, { match: any, every, want, windows: windows ? words : null }, filters);
  let total = first.total;
  let capped = first.capped;
  add(first.rows, (row) => (!multi || row.every ? { kind: "words", base: 0.5, span: 0.5 } : { kind: "any_word", base: 0.25, span: 0.25 }));

  let expansions: Expansion[] = [];
  if (params.fuzzy && out.length < want) {
    expansions = (await expandWords(ctx, words, params.similarity)).filter((e) => e.variants.length > 0);
    if (expansions.length > 0) {
      const byWord = new Map(expansions.map((e) => [e.word, e.variants.map((v) => v.term)]));
      const variants = words.flatMap((w) => [w, ...(byWord.get(w.toLowerCase()) ?? [])]).map(ftsPhrase);
      const fuzzy = await keywordQuery(ctx, { match: variants.join(" OR "), every: null, want: want + out.length, windows: null }, filters);
      total = Math.max(total, fuzzy.total);
      capped ||= fuzzy.capped;
      add(fuzzy.rows, () => ({ kind: "fuzzy", base: 0, span: 0.25 }));
    }
  }
  return { candidates: out, total, capped, expansions };
}

interface LiveRow {
  seq: number;
  doc_id: string;
  path: string;
  hash: string;
}

/**
 * The vector side's first half: the query's neighbours, from the vectors this isolate holds when
 * it holds them (no I/O: `cached` is confirmed in the batch that maps them to documents), else
 * from the index.
 */
type Neighbours = { layer: SemanticLayer; values: number[]; near: Near[]; cached?: { check: D1PreparedStatement; confirmed(result: D1Result): boolean } } | { unavailable: string };

const VECTOR_OPTIONS = (layer: SemanticLayer) => ({ type: "document" as const, topK: VECTOR_CANDIDATES, minSimilarity: layer.embedder.minSimilarity });

async function neighbours(ctx: Ctx, q: string): Promise<Neighbours> {
  const { layer, reason } = selectSemantic(ctx.env);
  if (!layer) return { unavailable: reason };
  try {
    const values = await embedQuery(layer, q);
    const cached = cachedNearest(layer, ctx.tenantId, values, VECTOR_OPTIONS(layer));
    if (cached) return { layer, values, near: cached.near, cached: { check: cached.check, confirmed: cached.confirmed } };
    return { layer, values, near: await nearestTo(layer, ctx.tenantId, values, VECTOR_OPTIONS(layer)) };
  } catch (err) {
    return vectorFailure(err);
  }
}

function vectorFailure(err: unknown): { unavailable: string } {
  const message = err instanceof Error ? err.message : String(err);
  console.warn(`[docs search] vector query failed: ${message}`);
  return { unavailable: `the embedder is unavailable (${message.slice(0, 200)})` };
}

interface SemanticOutcome {
  candidates: Candidate[];
  pending: number;
  /** Snippet columns already read for some of the documents (by doc_search seq). */
  windows: Map<number, PageRow>;
}

/**
 * The vector side's second half, one D1 batch: the neighbours mapped to live, in-scope documents
 * (best first), the count still waiting for an embedding, the cached neighbours' confirmation and
 * the snippet columns of the documents `guess` expects on the page (from the neighbours' ids), so
 * the page usually needs no read of its own.
 */
async function semanticCandidates(
  ctx: Ctx,
  side: Exclude<Neighbours, { unavailable: string }>,
  filters: Filters,
  guess: (nearIds: string[]) => string[],
  needles: string[],
): Promise<SemanticOutcome | { unavailable: string }> {
  const f = filters.sql(3);
  const read = async (near: Near[], check: D1PreparedStatement | null) => {
    const ids = guess(near.map((n) => n.id));
    const statements = [
      // Hand SQL: the filter's SQL text (filters.sql) is shared with the keyword and hash reads.
      ctx.d1
        .prepare(`SELECT s.seq, s.doc_id, s.path, s.hash FROM doc_search s WHERE s.tenant_id = ?1 AND s.doc_id IN (SELECT value FROM json_each(?2))${f.text}`)
        .bind(ctx.tenantId, JSON.stringify(near.map((n) => n.id)), ...f.params),
      statementOf(ctx.d1, pendingEmbeddings(ctx.d1, ctx.tenantId, "document")),
    ];
    const windowsAt = ids.length > 0 ? statements.push(windowsStatement(ctx, "doc_id", ids, needles)) - 1 : -1;
    const checkAt = check ? statements.push(check) - 1 : -1;
    const results = await ctx.d1.batch<Record<string, unknown>>(statements);
    return { live: results[0]!, pending: results[1]!, windows: windowsAt >= 0 ? results[windowsAt]! : null, checked: checkAt >= 0 ? results[checkAt]! : null };
  };
  let near = side.near;
  let got = await read(near, side.cached?.check ?? null);
  if (side.cached && !side.cached.confirmed(got.checked!)) {
    // The vectors changed since this isolate read them: the index answers, and the batch is read again.
    try {
      near = await nearestTo(side.layer, ctx.tenantId, side.values, VECTOR_OPTIONS(side.layer));
    } catch (err) {
      return vectorFailure(err);
    }
    got = await read(near, null);
  }
  const byId = new Map((got.live.results as unknown as LiveRow[]).map((r) => [r.doc_id, r]));
  const candidates: Candidate[] = [];
  for (const n of near) {
    const row = byId.get(n.id); // absent: a replaced or deleted version, or filtered out
    if (!row || !filters.keep(row.path, row.hash)) continue;
    candidates.push({ ...row, score: round(n.similarity), match: "semantic", vector_score: round(n.similarity) });
  }
  const windows = new Map(((got.windows?.results ?? []) as unknown as PageRow[]).map((r) => [r.seq, r]));
  return { candidates, pending: Number((got.pending.results[0] as { n: number } | undefined)?.n ?? 0), windows };
}

interface PageRow extends WindowCols {
  seq: number;
}

/** Snippet columns for the documents of doc_search whose `column` is one of `keys`. */
function windowsStatement(ctx: Ctx, column: "seq" | "doc_id", keys: (number | string)[], needles: string[]): D1PreparedStatement {
  // Hand SQL: a materialized CTE whose snippet columns (WINDOW_COLUMNS) are shared with the ranking statement.
  return ctx.d1
    .prepare(
      `WITH page AS MATERIALIZED (
         SELECT s.seq, ${positionOf("?2")} AS pos FROM doc_search s WHERE s.tenant_id = ?3 AND s.${column} IN (SELECT value FROM json_each(?1)))
       SELECT page.seq, ${WINDOW_COLUMNS} FROM page JOIN doc_search s ON s.seq = page.seq`,
    )
    .bind(JSON.stringify(keys), JSON.stringify(needles.slice(0, SNIPPET_NEEDLES)), ctx.tenantId);
}

/** Snippet columns for the page's documents that no earlier statement computed. */
async function pageRows(ctx: Ctx, seqs: number[], needles: string[]): Promise<Map<number, PageRow>> {
  if (seqs.length === 0) return new Map();
  const res = await windowsStatement(ctx, "seq", seqs, needles).all<PageRow>();
  return new Map(res.results.map((r) => [r.seq, r]));
}

/** Numbered (or plain) lines around the window's first match. */
function contextLines(row: WindowCols, needles: string[], context: number, numbered: boolean): { snippet: string; line_start: number; line_end: number } {
  const win = row.win;
  const lower = win.toLowerCase();
  let at = -1;
  for (const n of needles) {
    const i = n ? lower.indexOf(n.toLowerCase()) : -1;
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  if (at < 0) at = row.pos > 0 ? Math.max(0, row.pos - row.win_from) : 0;
  const lines = win.split("\n");
  let matchLine = 0;
  for (let i = 0, seen = 0; i < lines.length; i++) {
    if (seen + lines[i]!.length >= at) {
      matchLine = i;
      break;
    }
    seen += lines[i]!.length + 1;
  }
  // The window's first and last lines may be cut mid-line; only the match's own line may be shown cut.
  const firstWhole = row.win_from > 1 ? Math.min(1, matchLine) : 0;
  const lastWhole = win.length >= WINDOW_CHARS ? Math.max(lines.length - 2, matchLine) : lines.length - 1;
  const from = Math.max(firstWhole, matchLine - context);
  const to = Math.min(lastWhole, matchLine + context);
  const lineNo = (i: number) => row.lines_before + i + 1;
  const shown = lines.slice(from, to + 1).map((l, k) => (numbered ? `${lineNo(from + k)}: ${clip(l, LINE_CHARS)}` : clip(l, LINE_CHARS)));
  return { snippet: shown.join("\n"), line_start: lineNo(from), line_end: lineNo(to) };
}

export interface SearchResponse {
  total: number;
  type: Kind;
  execution_time_ms: number;
  results?: SearchResult[];
  paths?: string[];
  search_stats: Record<string, unknown>;
  warnings?: string[];
}

const HEX = /^[0-9a-f]+$/;

async function hashLookup(ctx: Ctx, hash: string, params: SearchParams, filters: Filters): Promise<{ candidates: Candidate[]; total: number }> {
  const prefix = hash.trim().toLowerCase();
  if (!HEX.test(prefix)) throw invalidInput(`hash '${prefix.slice(0, 64)}' is not hexadecimal`, "Pass a SHA-256 hex digest, or a prefix of at least 8 of its characters.");
  if (prefix.length < 8) throw invalidInput(`hash prefix '${prefix}' is shorter than 8 hex characters`, "Give at least 8 characters of the hash, e.g. the first 12 an add returned.");
  const f = filters.sql(4);
  // Read from documents, not the index: a version not yet indexed is still found by its hash.
  // Hand SQL: the filters' SQL text (filters.sql) is shared with the keyword and semantic reads.
  const res = await ctx.d1
    .prepare(
      `SELECT x.seq, s.doc_id, s.path, s.hash
       FROM (SELECT d.tenant_id, d.id AS doc_id, d.path, d.hash FROM documents d
             WHERE d.tenant_id = ?1 AND d.deleted_at IS NULL AND d.hash >= ?2 AND d.hash < ?3) s
         LEFT JOIN doc_search x ON x.tenant_id = s.tenant_id AND x.doc_id = s.doc_id
       WHERE 1 = 1${f.text}
       ORDER BY s.path LIMIT ${FILTER_CANDIDATES}`,
    )
    .bind(ctx.tenantId, prefix, `${prefix}g`, ...f.params)
    .all<{ seq: number | null; doc_id: string; path: string; hash: string }>();
  const kept = res.results.filter((r) => filters.keep(r.path, r.hash));
  return { candidates: kept.slice(0, params.limit).map((r) => ({ ...r, score: 1, match: "hash" as const })), total: kept.length };
}

/** The document ids a page of candidates names, with titles and snippets; a document gone meanwhile drops out. */
async function present(ctx: Ctx, page: Candidate[], needles: string[], params: SearchParams, kind: Kind, read: Map<number, PageRow>): Promise<SearchResult[]> {
  const rows = await pageRows(
    ctx,
    page.flatMap((c) => (c.seq === null || c.window || read.has(c.seq) ? [] : [c.seq])),
    needles,
  );
  for (const [seq, row] of read) rows.set(seq, row);
  const withLines = params.line_numbers || params.context > 0;
  const out: SearchResult[] = [];
  for (const c of page) {
    const row = c.window ?? (c.seq === null ? undefined : rows.get(c.seq));
    const name = c.path.slice(c.path.lastIndexOf("/") + 1);
    const result: SearchResult = { id: c.doc_id, hash: c.hash, title: row?.title ?? name, path: c.path, score: c.score, snippet: "" };
    if (row) {
      if (withLines && row.win !== "") Object.assign(result, contextLines(row, needles, params.context, params.line_numbers));
      else result.snippet = snippetAround(row.win, row.pos > 0 ? needles : [], SNIPPET_CHARS);
    }
    if (kind === "hybrid") result.score_breakdown = { vector_score: c.vector_score ?? null, keyword_score: c.keyword_score ?? null };
    out.push(result);
  }
  return out;
}

/**
 * The search itself, for the composite tools: `scope` is the caller's session pins (a live
 * document is searched when its path matches a pinned glob or its hash starts with a pinned
 * hash); absent or empty, the whole store. Throws ToolError for bad input.
 */
export async function searchDocuments(ctx: Ctx, rawParams: SearchParams, scope?: DocScope): Promise<SearchResponse> {
  const started = Date.now();
  normalizeSearchParams(rawParams as unknown as Record<string, unknown>);
  const params = rawParams;
  const filters = buildFilters(params, scope);
  const warnings: string[] = [];
  const stats: Record<string, unknown> = { requested_type: params.type };
  let kind: Kind;
  let candidates: Candidate[];
  let total: number;
  let needles: string[] = [];
  let read = new Map<number, PageRow>();

  if (params.hash !== undefined && params.hash.trim() !== "") {
    if (params.query) warnings.push("'hash' was given, so this is a direct hash lookup; 'query' was not used.");
    kind = "hash";
    ({ candidates, total } = await hashLookup(ctx, params.hash, params, filters));
  } else {
    const q = (params.query ?? "").trim();
    const words = ftsWords(q);
    if (words.length === 0) {
      throw invalidInput(`query '${q.slice(0, 100)}' has no words to search for`, "Search with letters or digits; punctuation and operators alone match nothing.");
    }
    if (words.length > MAX_QUERY_WORDS) {
      throw invalidInput(`query has ${words.length} words; at most ${MAX_QUERY_WORDS} are searched`, "Search with the few words that matter most.");
    }
    needles = words;
    const want = params.type === "hybrid" ? Math.max(params.limit, LEXICAL_CANDIDATES) : params.limit;
    let keyword: KeywordOutcome | null = null;
    // The vector side's neighbours do not depend on the keyword side: both are under way at once.
    const vector = params.type === "keyword" ? null : neighbours(ctx, q);
    if (params.type !== "semantic") {
      // A keyword-only page is final as ranked, so its snippets come in the ranking statement.
      keyword = await keywordSearch(ctx, words, want, params, filters, params.type === "keyword" && !params.paths_only);
      needles = [...words, ...keyword.expansions.flatMap((e) => e.variants.map((v) => v.term))];
      if (keyword.expansions.length > 0) stats.fuzzy_expansions = Object.fromEntries(keyword.expansions.map((e) => [e.word, e.variants.map((v) => v.term)]));
      if (keyword.capped) {
        stats.total_is_lower_bound = true;
        warnings.push(`Only the best ${FILTER_CANDIDATES} keyword matches were checked against the glob filters; narrow the query to see more.`);
      }
    }
    if (params.type === "keyword") {
      kind = "keyword";
      candidates = keyword!.candidates;
      total = keyword!.total;
    } else {
      const side = await vector!;
      // The page's snippets are read with the neighbours' documents, for the page fusion will likely make.
      const lexicalIds = keyword?.candidates.map((c) => c.doc_id) ?? [];
      const guess = (nearIds: string[]) => (params.paths_only ? [] : params.type === "semantic" ? nearIds : reciprocalRankFusion([lexicalIds, nearIds]).map((f) => f.id)).slice(0, params.limit);
      const sem = "unavailable" in side ? side : await semanticCandidates(ctx, side, filters, guess, needles);
      if ("unavailable" in sem) {
        if (params.type === "semantic") {
          throw new ToolError("semantic_unavailable", `Semantic search is not available: ${sem.unavailable}.`, {
            hint: "Search with type 'keyword' (or 'hybrid', which falls back to keywords by itself).",
            retryable: sem.unavailable.startsWith("the embedder is unavailable"),
          });
        }
        warnings.push(`Semantic search is not available (${sem.unavailable}); these are keyword results.`);
        kind = "keyword";
        candidates = keyword!.candidates.slice(0, params.limit);
        total = keyword!.total;
      } else {
        read = sem.windows;
        if (sem.pending > 0) warnings.push(`${sem.pending} document(s) still waiting for an embedding are matched by words only until the backfill runs.`);
        if (params.type === "semantic") {
          kind = "semantic";
          candidates = sem.candidates;
          total = sem.candidates.length;
        } else {
          kind = "hybrid";
          const lexical = keyword!.candidates;
          const fused = reciprocalRankFusion([lexical.map((c) => c.doc_id), sem.candidates.map((c) => c.doc_id)]);
          const byId = new Map<string, Candidate>();
          for (const c of [...sem.candidates, ...lexical]) byId.set(c.doc_id, c);
          const lexScore = new Map(lexical.map((c) => [c.doc_id, c.score]));
          const vecScore = new Map(sem.candidates.map((c) => [c.doc_id, c.vector_score ?? null]));
          const top = fused[0]?.score ?? 1;
          candidates = fused.map((f) => ({
            ...byId.get(f.id)!,
            score: round(f.score / top),
            keyword_score: lexScore.get(f.id) ?? null,
            vector_score: vecScore.get(f.id) ?? null,
          }));
          const semanticOnly = sem.candidates.filter((c) => !lexScore.has(c.doc_id)).length;
          total = Math.max(keyword!.total, lexical.length) + semanticOnly;
        }
      }
    }
  }

  const page = candidates.slice(0, params.limit);
  stats.returned = page.length;
  const base = (extra: Partial<SearchResponse>): SearchResponse => ({
    total,
    type: kind,
    execution_time_ms: Date.now() - started,
    ...extra,
    search_stats: stats,
    ...(warnings.length > 0 ? { warnings } : {}),
  });
  if (params.paths_only) return base({ paths: page.map((c) => c.path) });
  const results = await present(ctx, page, needles, params, kind, read);
  return base({ results });
}

/** For status detailed: live documents by index state, and the counts of collections, snapshots and past versions. */
export async function storeBreakdown(ctx: Ctx) {
  const d = alias(documents, "d");
  const t = alias(docTexts, "t");
  const state = sql<string>`CASE WHEN ${d.indexedAt} IS NULL THEN 'pending' ELSE COALESCE(${t.status}, 'binary') END`.as("state");
  const [states, counts] = await ctx.d1.batch<Record<string, number | string | null>>([
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .select({ state, n: sql<number>`COUNT(*)`.as("n") })
        .from(d)
        .leftJoin(t, and(eq(t.tenantId, d.tenantId), eq(t.hash, d.hash)))
        .where(and(eq(d.tenantId, ctx.tenantId), isNull(d.deletedAt)))
        .groupBy(sql`1`),
    ),
    // Hand SQL: a select of three scalar subqueries and no table, which drizzle cannot say.
    ctx.d1
      .prepare(
        `SELECT (SELECT COUNT(*) FROM doc_collections WHERE tenant_id = ?1) AS collections,
                (SELECT COUNT(*) FROM doc_snapshots WHERE tenant_id = ?1) AS snapshots,
                (SELECT COUNT(*) FROM documents WHERE tenant_id = ?1 AND deleted_at IS NOT NULL) AS past_versions`,
      )
      .bind(ctx.tenantId),
  ]);
  return { states: states!.results, counts: counts!.results[0] as Record<string, number> };
}

/** For status file_types: live documents and bytes per file extension, the 100 commonest. */
export async function fileTypeCounts(ctx: Ctx) {
  const name = documents.name;
  const ext = sql<string>`CASE WHEN instr(${name}, '.') = 0 THEN '' ELSE lower(replace(${name}, rtrim(${name}, replace(${name}, '.', '')), '')) END`.as("ext");
  const docCount = sql<number>`COUNT(*)`.as("documents");
  return (
    dbOf(ctx)
      .select({ ext, documents: docCount, bytes: sql<number>`SUM(${documents.size})`.as("bytes") })
      .from(documents)
      .where(and(eq(documents.tenantId, ctx.tenantId), isNull(documents.deletedAt)))
      .groupBy(sql`1`)
      // By the result columns, as the old SQL text ordered them.
      .orderBy(sql`${sql.identifier("documents")} DESC`, sql`${sql.identifier("ext")}`)
      .limit(100)
      .all()
  );
}

/*
 * Fuzzy matching for document search: a misspelt query word is replaced by the tenant's indexed
 * words (doc_terms) that are close to it by trigram similarity.
 *
 * Similarity is the Dice coefficient of the two words' trigram sets, each word padded with two
 * spaces in front and one behind (as PostgreSQL's pg_trgm pads): 2·|A∩B| / (|A| + |B|). One
 * wrong, missing or extra letter in an 8-letter word scores about 0.7–0.8; unrelated words near 0.
 */

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
  // Hand SQL: FTS5 MATCH over the trigram table, ranked by bm25().
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
    const variants = results[i]!.results.filter((r) => r.term !== word)
      .map((r) => ({ term: r.term, similarity: trigramSimilarity(word, r.term) }))
      .filter((v) => v.similarity >= threshold)
      .sort((a, b) => b.similarity - a.similarity || (a.term < b.term ? -1 : 1))
      .slice(0, FUZZY_MAX_VARIANTS);
    return { word, variants };
  });
}
