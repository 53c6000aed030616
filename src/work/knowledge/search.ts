import { z } from "zod";
import { ftsWords } from "../../core/fts";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { rankHybrid } from "../../search/rank";
import { snippetAround } from "../../search/snippet";
import { findProject } from "../projects/model";
import { staleAdvice } from "../memory/model";
import { lexicalNotes, listNewestNotes, listNotesByIds, normalizeTags, NOTE_KINDS, type NoteRow, noteSchema, type SearchFilters, tagsField, toNote } from "./model";

const searchItemSchema = noteSchema.extend({
  snippet: z.string().describe("The part of the body around the match (about 200 characters)."),
  score: z.number().describe("Fused rank score (higher is better); compare within one result only."),
  similarity: z.number().nullable().describe("Cosine similarity to q when the vector search found it, else null."),
  lexical_rank: z.number().int().nullable().describe("Position in the full-text ranking, or null when only the vector search found it."),
});

export const knowledgeSearchTool = defineTool({
  name: "knowledge_search",
  title: "Search knowledge",
  toolset: "knowledge",
  description: "Search notes by words and meaning, or words alone; search before you redo research. No q: the newest notes.",
  input: z.object({
    q: z.string().trim().min(1).max(500).optional().describe("What you are looking for, in words."),
    ids: z.array(z.string().min(1).max(100)).min(1).max(50).optional().describe("Read these notes whole (body included) instead."),
    project_id: z.string().min(1).max(100).optional().describe("Only this project's notes (id or key)."),
    kind: z.enum(NOTE_KINDS).optional().describe("Only this kind."),
    tags: tagsField.optional().describe("Only notes carrying every one of these tags."),
    top_k: z.number().int().min(1).max(50).default(10).describe("Results to return."),
    min_similarity: z.number().min(-1).max(1).optional().describe("Drop vector matches below this cosine similarity."),
    lexical_only: z.boolean().default(false).describe("Rank by words only, skipping embeddings."),
  }),
  output: z.object({
    items: z.array(searchItemSchema).describe("Matching notes, best first."),
    mode: z.enum(["hybrid", "lexical", "list"]).describe("hybrid: words and meaning fused; lexical: words only; list: no q."),
    match: z.enum(["words", "substring", "title", "none"]).describe("Which full-text strategy matched: ranked words, else substring (trigram), else title."),
    embedder: z.string().describe('The embedding model that ranked by meaning (local-hash-* is lexical, not semantic), or "".'),
    note: z.string().describe('Anything the caller should know about this ranking (e.g. why it fell back), or "".'),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    if (input.ids && input.q !== undefined) throw invalidInput("ids reads notes; it takes no q.", "Drop q to read the notes, or ids to search.");
    const f: SearchFilters = { tags: normalizeTags(input.tags ?? []) };
    const filter: Record<string, string> = {};
    if (input.project_id) {
      const project = await findProject(ctx, input.project_id);
      f.projectId = project.id;
      filter.project_id = project.id;
    }
    if (input.kind) {
      f.kind = input.kind;
      filter.kind = input.kind;
    }
    if (input.q === undefined) {
      const rows = input.ids ? await listNotesByIds(ctx, [...new Set(input.ids)], f) : await listNewestNotes(ctx, f, input.top_k);
      rows.sort((a, b) => b.seq - a.seq);
      const items = rows.slice(0, input.top_k).map((row) => ({ ...toNote(row, Boolean(input.ids)), snippet: snippetAround(row.body, []), score: 0, similarity: null, lexical_rank: null }));
      return { items, mode: "list" as const, match: "none" as const, embedder: "", note: "" };
    }
    const q = input.q;
    let match: "words" | "substring" | "title" | "none" = "none";
    const ranked = await rankHybrid({
      env: ctx.env,
      tenantId: ctx.tenantId,
      type: "note",
      q,
      semantic: !input.lexical_only,
      minSimilarity: input.min_similarity,
      // Tags are not vector metadata, so fetch extra neighbours for the tag filter to thin.
      candidates: Math.min(100, input.top_k * (input.tags?.length ? 5 : 2)),
      filter,
      lexical: async () => {
        const res = await lexicalNotes(ctx, q, f);
        match = res.match;
        return res.ids;
      },
    });
    const ids = ranked.items.map((r) => r.id);
    const rows: NoteRow[] = ids.length === 0 ? [] : await listNotesByIds(ctx, ids, f);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const needles = [q.trim(), ...ftsWords(q)];
    const items = ranked.items
      .filter((r) => byId.has(r.id))
      .slice(0, input.top_k)
      .map((r) => {
        const row = byId.get(r.id)!;
        return { ...toNote(row, false), snippet: snippetAround(row.body, needles), score: r.score, similarity: r.similarity, lexical_rank: r.lexical_rank };
      });
    return { items, mode: ranked.mode, match, embedder: ranked.embedder, note: ranked.note };
  },
  summarize: (r) => `${r.items.length} note(s) (${r.mode}${r.match !== "none" ? `, ${r.match}` : ""}).${staleAdvice(r.items, "knowledge_update with still_holds: true, or with the fix")}`,
});
