import { z } from "zod";
import { ftsQuery, ftsWords } from "../../core/fts";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { limitField } from "../shared";
import { findProject } from "../projects/model";
import { staleAdvice } from "../memory/model";
import { hitSchema, searchHits, SEARCH_TYPES, toHit, trigramQuery, withStaleMarks } from "./model";

export const searchTool = defineTool({
  name: "search",
  title: "Search everything",
  toolset: "search",
  description: "Keyword search over projects, tasks, decisions, notes, comments, handoffs and change events.",
  input: z.object({
    q: z.string().trim().min(1).max(500).describe("Words or a fragment (taken literally)."),
    object_types: z.array(z.enum(SEARCH_TYPES)).min(1).max(SEARCH_TYPES.length).optional().describe("Only these kinds."),
    project_id: z.string().min(1).max(100).optional().describe("Only this project's objects (id or key)."),
    limit: limitField(20, 100),
  }),
  output: z.object({
    items: z.array(hitSchema).describe("Matches, best first."),
    mode: z.enum(["words", "words+trigram", "trigram"]).describe("Which matchers ran: words; words then a trigram top-up; or trigram alone (q had no words)."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const { q } = input;
    const trigram = trigramQuery(q);
    const hasWords = ftsWords(q).length > 0;
    if (!hasWords && !trigram) {
      throw invalidInput(`q '${q.slice(0, 50)}' has nothing to search for.`, "Use a word, or a fragment of three or more characters.");
    }
    let filters = "";
    const params: unknown[] = [];
    const param = (v: unknown) => {
      params.push(v);
      return `?${params.length + 3}`;
    };
    if (input.object_types) filters += ` AND d.object_type IN (${input.object_types.map(param).join(", ")})`;
    if (input.project_id) filters += ` AND d.project_id = ${param((await findProject(ctx, input.project_id)).id)}`;
    const run = (fts: "search_fts" | "search_fts_trgm", match: string, limit: number) => searchHits(ctx, fts, filters, params, match, limit);

    const words = hasWords ? await run("search_fts", ftsQuery(q, "Use letters or digits in q."), input.limit) : [];
    const items = words.map((r, i) => toHit(r, i + 1, "words"));
    if (!trigram || items.length >= input.limit) return { items: await withStaleMarks(ctx, items), mode: "words" as const };
    const seen = new Set(words.map((r) => r.seq));
    // Word hits usually contain the substring too: ask for enough to fill the page after dropping them.
    const subs = await run("search_fts_trgm", trigram, input.limit + items.length);
    for (const r of subs) {
      if (items.length >= input.limit) break;
      if (seen.has(r.seq)) continue;
      items.push(toHit(r, items.length + 1, "trigram"));
    }
    const mode = hasWords ? ("words+trigram" as const) : ("trigram" as const);
    return { items: await withStaleMarks(ctx, items), mode };
  },
  summarize: (r) => `${r.items.length} result(s) (${r.mode}).${staleAdvice(r.items, "confirm or update it")}`,
});
