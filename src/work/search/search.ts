/**
 * Global keyword search (seed 001 `search`) over the search_docs index that migration 0015's
 * triggers keep: word matches ranked by bm25 first, then substring (trigram) matches.
 */
import { z } from "zod";
import { ftsPhrase, ftsQuery, ftsWords } from "../../db/fts";
import { defineTool } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { clipCodePoints } from "../../core/text";
import { limitField } from "../shared";
import { findProject } from "../projects/model";

export const SEARCH_TYPES = ["project", "task", "decision", "note", "comment", "work_request", "event"] as const;

/** bm25 weight of a title hit relative to a body hit: a title names what the object is about. */
const TITLE_WEIGHT = 10;
const SNIPPET_MAX = 300;
const TITLE_MAX = 80;

const hitSchema = z.object({
  object_type: z.enum(SEARCH_TYPES).describe("project, task, decision, note, comment, work_request (a handoff) or event (a change-ledger entry)."),
  object_id: z.string().describe("The object's id."),
  title: z.string().describe("Its title; for an event the entity path, for a comment its first line."),
  snippet: z.string().describe(`Body text around the match, matched text in **bold** (at most ${SNIPPET_MAX} characters).`),
  rank: z.number().int().describe("1-based position in this result list."),
  score: z.number().describe("Relevance, higher is better; comparable only among items with the same match."),
  match: z.enum(["words", "trigram"]).describe("words: every word of q matched; trigram: q's pieces matched as substrings."),
  project_id: z.string().nullable().describe("The project it belongs to, or null."),
  on: z.object({
    object_type: z.string().describe("Kind of object."),
    object_id: z.string().describe("Its id."),
  }).optional().describe("Comments only: the object the comment is on."),
});
type Hit = z.infer<typeof hitSchema>;

interface HitRow {
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
 * One ranked page of matches from either index, tenant-filtered. Objects of a soft-deleted project
 * are hidden here rather than unindexed, so restoring the project brings them back. Ranking runs
 * first on rowids alone and snippet() only for the page: a common word matches most of a tenant,
 * and building a snippet per match before the sort cost three times the ranking itself.
 * Parameters: ?1 the FTS5 query, ?2 the tenant, ?3 the page size, then the filters'.
 */
function hitsSql(fts: "search_fts" | "search_fts_trgm", filters: string): string {
  // snippet() counts tokens, and a trigram token is about one character.
  const tokens = fts === "search_fts" ? 24 : 64;
  return `WITH top AS (
      SELECT d.seq, bm25(${fts}, ${TITLE_WEIGHT}, 1.0) AS bm
      FROM ${fts} f
        JOIN search_docs d ON d.seq = f.rowid
        LEFT JOIN projects p ON p.id = d.project_id
      WHERE ${fts} MATCH ?1 AND d.tenant_id = ?2 AND p.deleted_at IS NULL${filters}
      ORDER BY bm, d.seq DESC LIMIT ?3)
    SELECT top.seq, top.bm, d.object_type, d.object_id, d.project_id, d.title, substr(d.body, 1, 200) AS lead,
      snippet(${fts}, 1, '**', '**', '…', ${tokens}) AS snippet, c.object_type AS on_type, c.object_id AS on_id
    FROM top
      CROSS JOIN ${fts} f ON f.rowid = top.seq
      CROSS JOIN search_docs d ON d.seq = top.seq
      LEFT JOIN comments c ON d.object_type = 'comment' AND c.id = d.object_id
    WHERE ${fts} MATCH ?1
    ORDER BY top.bm, top.seq DESC`;
}

/**
 * The trigram query: each whitespace-separated piece of three or more characters must occur as a
 * substring (shorter pieces cannot be matched by trigrams and are left out); a q made only of
 * short pieces is matched whole. Null when nothing in q is long enough.
 */
function trigramQuery(q: string): string | null {
  const pieces = q.split(/\s+/).filter((p) => [...p].length >= 3);
  if (pieces.length > 0) return pieces.map(ftsPhrase).join(" ");
  return [...q].length >= 3 ? ftsPhrase(q) : null;
}

function toHit(r: HitRow, rank: number, match: Hit["match"]): Hit {
  const title = r.object_type === "comment" ? clipCodePoints((r.lead.split("\n")[0] ?? "").trim(), TITLE_MAX) : r.title;
  return {
    object_type: r.object_type, object_id: r.object_id, title, snippet: clipCodePoints(r.snippet ?? "", SNIPPET_MAX), rank,
    score: Number((-r.bm).toPrecision(4)), match, project_id: r.project_id,
    ...(r.on_type && r.on_id ? { on: { object_type: r.on_type, object_id: r.on_id } } : {}),
  };
}

export const searchTool = defineTool({
  name: "search",
  title: "Search everything",
  toolset: "search",
  description:
    "Keyword search over projects, tasks, decisions, notes, comments, handoffs and change events.",
  input: z.object({
    q: z.string().trim().min(1).max(500).describe("Words or a fragment (taken literally)."),
    object_types: z.array(z.enum(SEARCH_TYPES)).min(1).max(SEARCH_TYPES.length).optional()
      .describe("Only these kinds."),
    project_id: z.string().min(1).max(100).optional().describe("Only this project's objects (id or key)."),
    limit: limitField(20, 100),
  }),
  output: z.object({
    items: z.array(hitSchema).describe("Matches, best first."),
    mode: z.enum(["words", "words+trigram", "trigram"]).describe("Which matchers ran: words; words then a trigram top-up; or trigram alone (q had no words)."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const { q } = input;
    const trigram = trigramQuery(q);
    const hasWords = ftsWords(q).length > 0;
    if (!hasWords && !trigram) {
      throw invalidInput(`q '${q.slice(0, 50)}' has nothing to search for.`, "Use a word, or a fragment of three or more characters.");
    }
    let filters = "";
    const params: unknown[] = [];
    const param = (v: unknown) => { params.push(v); return `?${params.length + 3}`; };
    if (input.object_types) filters += ` AND d.object_type IN (${input.object_types.map(param).join(", ")})`;
    if (input.project_id) filters += ` AND d.project_id = ${param((await findProject(ctx, input.project_id)).id)}`;
    const run = (fts: "search_fts" | "search_fts_trgm", match: string, limit: number) =>
      ctx.d1.prepare(hitsSql(fts, filters)).bind(match, ctx.tenantId, limit, ...params).all<HitRow>().then((r) => r.results);

    const words = hasWords ? await run("search_fts", ftsQuery(q, "Use letters or digits in q."), input.limit) : [];
    const items = words.map((r, i) => toHit(r, i + 1, "words"));
    if (!trigram || items.length >= input.limit) return { items, mode: "words" as const };
    const seen = new Set(words.map((r) => r.seq));
    // Word hits usually contain the substring too: ask for enough to fill the page after dropping them.
    const subs = await run("search_fts_trgm", trigram, input.limit + items.length);
    for (const r of subs) {
      if (items.length >= input.limit) break;
      if (seen.has(r.seq)) continue;
      items.push(toHit(r, items.length + 1, "trigram"));
    }
    const mode = hasWords ? "words+trigram" as const : "trigram" as const;
    return { items, mode };
  },
  summarize: (r) => `${r.items.length} result(s) (${r.mode}).`,
});
