/**
 * Global keyword search (seed 001 `search`) over the search_docs index that migration 0015's
 * triggers keep: word matches ranked by bm25 first, then substring (trigram) matches.
 */
import { z } from "zod";
import { ftsPhrase } from "../../core/fts";
import { clipCodePoints } from "../../core/text";
import type { Ctx } from "../../core/context";
import { staleMarks, staleSchema, type MarkedType } from "../memory/model";

export const SEARCH_TYPES = ["project", "task", "decision", "note", "comment", "work_request", "event"] as const;

/** bm25 weight of a title hit relative to a body hit: a title names what the object is about. */
const TITLE_WEIGHT = 10;
/** A common query's scores (negated into `score`): a title match 1, a body-only match 0. */
const COMMON_TITLE_BM = -1;
const COMMON_BODY_BM = 0;
const SNIPPET_MAX = 300;
const TITLE_MAX = 80;

/**
 * The most matches one search ranks by bm25. A query that matches more of a tenant than this (a
 * project's name on every event) is ranked by a cheaper order over its newest SEARCH_CANDIDATES
 * matches: title matches first, then the rest, each newest first. bm25 cannot be bounded: on its
 * first call it counts every row of the table each query word matches (FTS5's fts5Bm25GetData runs
 * each phrase over the whole index for its document frequency), so a common word cost time
 * linear in the table however few candidates were scored. A query with fewer matches is ranked
 * by bm25 over all of them, exactly as before.
 */
export const SEARCH_CANDIDATES = 2000;

export const hitSchema = z.object({
  object_type: z.enum(SEARCH_TYPES).describe("project, task, decision, note, comment, work_request (a handoff) or event (a change-ledger entry)."),
  object_id: z.string().describe("The object's id."),
  title: z.string().describe("Its title; for an event the entity path, for a comment its first line."),
  snippet: z.string().describe(`Body text around the match, matched text in **bold** (at most ${SNIPPET_MAX} characters).`),
  rank: z.number().int().describe("1-based position in this result list."),
  score: z.number().describe(`Relevance, higher is better; comparable only among items with the same match. Over ${SEARCH_CANDIDATES} matches: 1 for a title match, 0 otherwise.`),
  match: z.enum(["words", "trigram"]).describe("words: every word of q matched; trigram: q's pieces matched as substrings."),
  project_id: z.string().nullable().describe("The project it belongs to, or null."),
  on: z
    .object({
      object_type: z.string().describe("Kind of object."),
      object_id: z.string().describe("Its id."),
    })
    .optional()
    .describe("Comments only: the object the comment is on."),
  stale: staleSchema.optional().describe("Notes, decisions and change events: the push that changed one of its paths since it was written or confirmed, or null."),
});
type Hit = z.infer<typeof hitSchema>;

export interface HitRow {
  seq: number;
  object_type: Hit["object_type"];
  object_id: string;
  project_id: string | null;
  title: string;
  lead: string;
  snippet: string | null;
  bm: number;
  on_type: string | null;
  on_id: string | null;
}

/**
 * One ranked page of matches from either index, tenant-filtered, in one statement. Objects of a
 * soft-deleted project are hidden here rather than unindexed, so restoring the project brings them
 * back. `bound` finds the SEARCH_CANDIDATES-th newest match (walking the index newest first, which
 * stops there); its existence picks the ranking. Each side's LIMIT is 0 when the other ranks
 * (a LIMIT of 0 skips a loop before it starts; a WHERE term on the bound would still walk every
 * match), and the common side's `f.rowid >= bound` lets FTS5 seek to the candidates and stop
 * after the page's newest. Ranking runs on rowids alone and snippet() only for the page, read in
 * one range scan of the page's rowids: a lookup per row reopens every word's posting list, which
 * for a common word cost as much as the ranking.
 * Parameters: ?1 the FTS5 query, ?2 the tenant, ?3 the page size, then the filters'.
 */
function hitsSql(fts: "search_fts" | "search_fts_trgm", filters: string): string {
  // snippet() counts tokens, and a trigram token is about one character.
  const tokens = fts === "search_fts" ? 24 : 64;
  const matches = (match: string) => `FROM ${fts} f
        JOIN search_docs d ON d.seq = f.rowid
        LEFT JOIN projects p ON p.id = d.project_id
      WHERE ${fts} MATCH ${match} AND d.tenant_id = ?2 AND p.deleted_at IS NULL${filters}`;
  const many = "EXISTS (SELECT 1 FROM bound)";
  // The newest page of candidates matching `match`, scored `bm` (lower ranks first, as bm25's).
  const newest = (match: string, bm: number) => `SELECT d.seq, ${bm} AS bm ${matches(match)} AND f.rowid >= (SELECT seq FROM bound)
      ORDER BY f.rowid DESC LIMIT iif(${many}, ?3, 0)`;
  return `WITH bound AS MATERIALIZED (
      SELECT f.rowid AS seq ${matches("?1")}
      ORDER BY f.rowid DESC LIMIT 1 OFFSET ${SEARCH_CANDIDATES - 1}),
    ranked AS (
      SELECT d.seq, bm25(${fts}, ${TITLE_WEIGHT}, 1.0) AS bm ${matches("?1")}
      ORDER BY bm, d.seq DESC LIMIT iif(${many}, 0, ?3)),
    titled AS (${newest("'{title} : (' || ?1 || ')'", COMMON_TITLE_BM)}),
    recent AS (${newest("?1", COMMON_BODY_BM)}),
    top AS MATERIALIZED (
      SELECT seq, bm FROM ranked
      UNION ALL SELECT seq, min(bm) FROM (SELECT seq, bm FROM titled UNION ALL SELECT seq, bm FROM recent) GROUP BY seq
      ORDER BY bm, seq DESC LIMIT ?3)
    SELECT top.seq, top.bm, d.object_type, d.object_id, d.project_id, d.title, substr(d.body, 1, 200) AS lead,
      snippet(${fts}, 1, '**', '**', '…', ${tokens}) AS snippet, c.object_type AS on_type, c.object_id AS on_id
    FROM ${fts} f
      CROSS JOIN top ON top.seq = f.rowid
      CROSS JOIN search_docs d ON d.seq = top.seq
      LEFT JOIN comments c ON d.object_type = 'comment' AND c.id = d.object_id
    WHERE ${fts} MATCH ?1 AND f.rowid BETWEEN (SELECT min(seq) FROM top) AND (SELECT max(seq) FROM top)
    ORDER BY top.bm, top.seq DESC`;
}

/**
 * The trigram query: each whitespace-separated piece of three or more characters must occur as a
 * substring (shorter pieces cannot be matched by trigrams and are left out); a q made only of
 * short pieces is matched whole. Null when nothing in q is long enough.
 */
export function trigramQuery(q: string): string | null {
  const pieces = q.split(/\s+/).filter((p) => [...p].length >= 3);
  if (pieces.length > 0) return pieces.map(ftsPhrase).join(" ");
  return [...q].length >= 3 ? ftsPhrase(q) : null;
}

export function toHit(r: HitRow, rank: number, match: Hit["match"]): Hit {
  const title = r.object_type === "comment" ? clipCodePoints((r.lead.split("\n")[0] ?? "").trim(), TITLE_MAX) : r.title;
  return {
    object_type: r.object_type,
    object_id: r.object_id,
    title,
    snippet: clipCodePoints(r.snippet ?? "", SNIPPET_MAX),
    rank,
    score: Number((-r.bm).toPrecision(4)),
    match,
    project_id: r.project_id,
    ...(r.on_type && r.on_id ? { on: { object_type: r.on_type, object_id: r.on_id } } : {}),
  };
}

/** Hits of one FTS table for `match`; `filters` use numbered parameters from ?4 on, bound from `params`. */
// Hand SQL: FTS5 MATCH, bm25() and snippet(), which drizzle cannot say; the filters are SQL text the search verb builds.
export async function searchHits(ctx: Ctx, fts: "search_fts" | "search_fts_trgm", filters: string, params: unknown[], match: string, limit: number): Promise<HitRow[]> {
  return ctx.d1
    .prepare(hitsSql(fts, filters))
    .bind(match, ctx.tenantId, limit, ...params)
    .all<HitRow>()
    .then((r) => r.results);
}

/** What a hit's stale mark is filed under: the searchable kinds that carry one. */
const MARKED: Partial<Record<Hit["object_type"], MarkedType>> = { note: "note", decision: "decision", event: "change_event" };

/** The hits with their stale marks: notes, decisions and change events carry one (or null); other kinds none. */
export async function withStaleMarks(ctx: Ctx, hits: Hit[]): Promise<Hit[]> {
  const marked = hits.flatMap((h) => {
    const type = MARKED[h.object_type];
    return type ? [{ type, id: h.object_id }] : [];
  });
  if (marked.length === 0) return hits;
  const marks = await staleMarks(ctx, marked);
  return hits.map((h) => {
    const type = MARKED[h.object_type];
    return type ? { ...h, stale: marks.get(`${type}:${h.object_id}`) ?? null } : h;
  });
}
