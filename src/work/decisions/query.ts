import { z } from "zod";
import { ftsQuery } from "../../core/fts";
import { resolveSince } from "../../core/time";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { rankHybrid } from "../../search/rank";
import { cursorField, decodeKeyset, limitField, keysetPage } from "../shared";
import { findProject } from "../projects/model";
import { staleAdvice } from "../memory/model";
import { DECISION_STATUSES, type DecisionFilter, decisionSchema, listDecisions, listDecisionsByIds, searchDecisionIds, toDecision } from "./model";

export const decisionQueryTool = defineTool({
  name: "decision_query",
  title: "Find decisions",
  toolset: "decisions",
  description: "Search decisions by words (and meaning), or list them newest first.",
  input: z.object({
    project_id: z.string().min(1).max(100).optional().describe("Project id or key."),
    q: z.string().max(500).optional().describe("Words to look for (every word must appear)."),
    semantic: z.boolean().default(false).describe("With q: rank by meaning too."),
    status: z.array(z.enum(DECISION_STATUSES)).max(3).optional().describe("Only these statuses."),
    since: z.string().max(64).optional().describe("Only since (24h, 7d, … or ISO-8601)."),
    top_k: z.number().int().min(1).max(100).optional().describe("With q: at most this many results (default 20)."),
    min_similarity: z.number().min(-1).max(1).optional().describe("Semantic: drop matches below this cosine similarity."),
    ids: z.array(z.string().min(1).max(100)).min(1).max(100).optional().describe("Only these ids."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z
      .array(
        decisionSchema.extend({
          similarity: z.number().nullable().optional().describe("Semantic mode: cosine similarity to q, or null when only the words matched."),
        }),
      )
      .describe("Decisions."),
    mode: z.enum(["hybrid", "lexical", "list"]).describe("How results were found: hybrid (words and meaning), lexical (words), list (no q)."),
    note: z.string().describe('Anything the caller should know about the ranking, or "".'),
    next_cursor: z.string().optional().describe("Listing only: pass as cursor for the next page."),
  }),
  fields: true,
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const projectId = input.project_id ? (await findProject(ctx, input.project_id)).id : "";
    const filter: DecisionFilter = { projectId, statuses: input.status };
    if (input.since) {
      const since = resolveSince(input.since, ctx.clock.now());
      if (since === null) throw invalidInput(`could not parse since '${input.since}'`, "Use 15m, 24h, 7d, 5mo, 1y or an ISO-8601 time.");
      if (since) filter.since = since;
    }
    const q = input.q?.trim() ?? "";
    if (input.ids) {
      if (q || input.cursor) throw invalidInput("ids looks decisions up; it takes no q or cursor.", "Drop q and cursor, or drop ids to search or page the log.");
      const rows = await listDecisionsByIds(ctx, filter, [...new Set(input.ids)]);
      rows.sort((a, b) => b.seq - a.seq);
      return { items: rows.slice(0, input.limit).map(toDecision), mode: "list" as const, note: "" };
    }
    if (q) {
      const match = ftsQuery(q, "Use letters or digits in q, or omit it to list decisions.");
      if (input.cursor) throw invalidInput("cursor pages listings only, not searches.", "Drop cursor, or raise top_k for more search results.");
      const topK = input.top_k ?? 20;
      const ranked = await rankHybrid({
        env: ctx.env,
        tenantId: ctx.tenantId,
        type: "decision",
        q,
        semantic: input.semantic,
        minSimilarity: input.min_similarity,
        // Status and time are filtered after ranking (status moves, so it is not vector metadata).
        candidates: Math.min(100, topK * 3),
        filter: projectId ? { project_id: projectId } : undefined,
        lexical: () => searchDecisionIds(ctx, filter, match, input.semantic ? 100 : topK),
      });
      const ids = ranked.items.map((r) => r.id);
      const rows = ids.length === 0 ? [] : await listDecisionsByIds(ctx, filter, ids);
      const byId = new Map(rows.map((r) => [r.id, r]));
      const items = ranked.items
        .filter((r) => byId.has(r.id))
        .slice(0, topK)
        .map((r) => ({ ...toDecision(byId.get(r.id)!), ...(ranked.mode === "hybrid" ? { similarity: r.similarity } : {}) }));
      return { items, mode: ranked.mode, note: ranked.note };
    }
    const note = input.semantic ? "semantic ranking needs q; this is the newest-first listing" : "";
    const after = decodeKeyset(input.cursor, 1);
    if (after) filter.beforeSeq = after[0];
    const rows = await listDecisions(ctx, filter, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.seq]);
    return {
      items: page.map(toDecision),
      mode: "list" as const,
      note,
      ...cursor,
    };
  },
  summarize: (r) => `${r.items.length} decision(s) (${r.mode}).${staleAdvice(r.items, "decision_set_status (its own status confirms it), or a superseding decision_log")}`,
});
