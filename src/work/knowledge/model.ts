/**
 * Knowledge (seed 001): the team wiki. Durable-row-before-embed: a write stores the note and
 * queues its embedding in one batch and answers at once; the vector is made after the response
 * and by the scheduled backfill, so an embedder outage never blocks or loses a write.
 */
import { z } from "zod";
import { ftsAnyWord, ftsPhrase, ftsWords } from "../../db/fts";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../db/time";
import { secretKinds } from "../../core/secrets";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { invalidInput, notFound, ToolError } from "../../core/errors";
import { rankHybrid } from "../../search/rank";
import { embedAfterResponse, queueEmbedding } from "../../search/semantic";
import { noteEmbedText } from "../../search/sources";
import { snippetAround } from "../../search/snippet";
import { activityStatement, jsonArray } from "../shared";
import { findProject } from "../projects/model";

export const NOTE_KINDS = ["note", "runbook", "finding", "snippet"] as const;
const BODY_MAX = 64 * 1024;
const TITLE_MAX = 300;
/** Full-text candidates handed to fusion; more than any top_k so filters cannot starve results. */
const LEXICAL_CANDIDATES = 100;
/** Notes a short (under three characters) query scans by title, newest first. */
const TITLE_SCAN = 2000;

const tagsField = z
  .array(z.string().trim().min(1).max(50).regex(/^[^\s,]+$/, "a tag is one word (no spaces or commas)"))
  .max(20)
  .describe("Tags (one word each).");

const noteSchema = z.object({
  id: z.string().describe("Note id."),
  project_id: z.string().nullable().describe("Project, or null for a tenant-wide note."),
  kind: z.enum(NOTE_KINDS).describe("note, runbook, finding or snippet."),
  title: z.string().describe("Title."),
  body: z.string().optional().describe("The note (omitted in search results; see snippet)."),
  tags: z.array(z.string()).describe("Tags."),
  version: z.number().int().describe("Increments on every change."),
  embedding_status: z.enum(["pending", "ready"]).describe("pending until its vector is made (after the response, or by the backfill); then ready."),
  created_by: z.string().describe("Who wrote it."),
  created_at: z.string().describe("When."),
  updated_by: z.string().describe("Who changed it last."),
  updated_at: z.string().describe("When."),
});
type Note = z.infer<typeof noteSchema>;
type NoteRow = Omit<Note, "tags" | "embedding_status"> & { seq: number; tags: string; embedding_status: string | null; body: string };

const NOTE_COLUMNS = `n.seq, n.id, n.project_id, n.kind, n.title, n.body, n.tags, n.version, n.created_by, n.created_at, n.updated_by, n.updated_at,
  e.status AS embedding_status`;
const NOTE_FROM = `knowledge_notes n LEFT JOIN embeddings e ON e.tenant_id = n.tenant_id AND e.object_type = 'note' AND e.object_id = n.id`;

function toNote(r: NoteRow, withBody: boolean): Note {
  const { seq: _seq, body, ...rest } = r;
  return { ...rest, tags: jsonArray<string>(r.tags), embedding_status: r.embedding_status === "ready" ? "ready" : "pending", ...(withBody ? { body } : {}) };
}

async function findNote(ctx: Ctx, id: string): Promise<NoteRow> {
  const row = await ctx.d1.prepare(`SELECT ${NOTE_COLUMNS} FROM ${NOTE_FROM} WHERE n.tenant_id = ? AND n.id = ?`).bind(ctx.tenantId, id.trim()).first<NoteRow>();
  if (!row) throw notFound("note", id, "knowledge_search finds notes; pass a note id from your tenant.");
  return row;
}

/** Tags are a set: lower-cased, de-duplicated and sorted, so the same set always compares equal. */
const normalizeTags = (tags: string[]) => [...new Set(tags.map((t) => t.toLowerCase()))].sort();

/** A title from the body's first line when none is given, so every note lists readably. */
function titleFrom(body: string): string {
  const first = body.split("\n").map((l) => l.replace(/^[#>*\-\s]+/, "").trim()).find((l) => l.length > 0) ?? "";
  return first.length > 120 ? `${first.slice(0, 119)}…` : first || "Untitled note";
}

function secretWarnings(text: string): string[] {
  const kinds = secretKinds(text);
  return kinds.length > 0 ? [`The note looks like it contains a secret (${kinds.join(", ")}); every actor in your tenant can read it. Consider knowledge_update to remove it.`] : [];
}

/**
 * The statement that queues a note's (re-)embedding, for the write's batch, and `afterCommit`,
 * which embeds it once the batch has committed, after the response.
 */
async function queueNoteEmbedding(ctx: Ctx, id: string, title: string, body: string): Promise<{ stmt: D1PreparedStatement; afterCommit: () => void }> {
  const ref = { tenantId: ctx.tenantId, type: "note" as const, id };
  return {
    stmt: await queueEmbedding(ctx.d1, ref, noteEmbedText(title, body), ctx.clock.now()),
    afterCommit: () => embedAfterResponse(ctx, [ref]),
  };
}

export const knowledgeWriteTool = defineTool({
  name: "knowledge_write",
  title: "Write a knowledge note",
  toolset: "knowledge",
  description:
    "Write down what you learned so the next agent need not.",
  input: z.object({
    body: z.string().trim().min(1).max(BODY_MAX).describe("The note (markdown)."),
    title: z.string().trim().min(1).max(TITLE_MAX).optional().describe("Title; defaults to the body's first line."),
    kind: z.enum(NOTE_KINDS).default("note").describe("Kind of note."),
    project_id: z.string().min(1).max(100).optional().describe("Project id or key; omit for a tenant-wide note."),
    tags: tagsField.optional(),
  }),
  output: z.object({
    note: noteSchema.describe("The note as stored."),
    embedding_status: z.literal("pending").describe("Always pending on write: the vector is made after the response."),
    warnings: z.array(z.string()).describe("Things worth a second look (e.g. a secret in the body), or []."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const project = input.project_id ? await findProject(ctx, input.project_id) : null;
    const id = uuidv7(ctx.clock.now().getTime());
    const now = iso(ctx.clock.now());
    const title = input.title ?? titleFrom(input.body);
    const embedding = await queueNoteEmbedding(ctx, id, title, input.body);
    await ctx.d1.batch([
      ctx.d1
        .prepare(`INSERT INTO knowledge_notes (id, tenant_id, project_id, kind, title, body, tags, version, created_by, created_at, updated_by, updated_at)
                  VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`)
        .bind(id, ctx.tenantId, project?.id ?? null, input.kind, title, input.body, JSON.stringify(normalizeTags(input.tags ?? [])), ctx.actorId, now, ctx.actorId, now),
      embedding.stmt,
      activityStatement(ctx, { verb: "knowledge.written", objectType: "note", objectId: id, projectId: project?.id ?? null, summary: `${input.kind}: ${title}`.slice(0, 300) }),
    ]);
    embedding.afterCommit();
    const note = toNote(await findNote(ctx, id), true);
    // The background embedding may already have finished; the write's own answer stays "pending".
    return { note: { ...note, embedding_status: "pending" as const }, embedding_status: "pending" as const, warnings: secretWarnings(`${title}\n${input.body}`) };
  },
  summarize: (r) => `Wrote ${r.note.kind} ${r.note.id}: ${r.note.title} (embedding pending).`,
});

export const knowledgeUpdateTool = defineTool({
  name: "knowledge_update",
  title: "Update a knowledge note",
  toolset: "knowledge",
  description:
    "Patch a note's title, body or tags (tags replaced whole).",
  input: z.object({
    note_id: z.string().min(1).max(100).describe("The note."),
    patch: z
      .object({
        title: z.string().trim().min(1).max(TITLE_MAX).optional().describe("New title."),
        body: z.string().trim().min(1).max(BODY_MAX).optional().describe("New body."),
        tags: tagsField.optional(),
      })
      .strict()
      .describe("The fields to change; the rest stay."),
    expected_version: z.number().int().min(1).optional().describe("Fail with version_conflict unless the note is at this version."),
  }),
  output: z.object({
    note: noteSchema.describe("The note after the change."),
    changed: z.array(z.string()).describe("The fields that changed ([] when the patch matched the note)."),
    reembedding: z.boolean().describe("True when the text changed and a new embedding is pending."),
    warnings: z.array(z.string()).describe("Things worth a second look, or []."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const { patch } = input;
    if (patch.title === undefined && patch.body === undefined && patch.tags === undefined) {
      throw invalidInput("patch names no field to change.", "Pass at least one of patch.title, patch.body, patch.tags.");
    }
    const before = await findNote(ctx, input.note_id);
    if (input.expected_version !== undefined && input.expected_version !== before.version) {
      throw new ToolError("version_conflict", `Note ${before.id} is at version ${before.version}, not ${input.expected_version}.`, {
        hint: "Re-read it (knowledge_search or the note id), merge your change, and retry with the current version.",
      });
    }
    const next = {
      title: patch.title ?? before.title,
      body: patch.body ?? before.body,
      tags: patch.tags !== undefined ? JSON.stringify(normalizeTags(patch.tags)) : before.tags,
    };
    const changed = (["title", "body", "tags"] as const).filter((k) => next[k] !== before[k]);
    if (changed.length === 0) return { note: toNote(before, true), changed: [], reembedding: false, warnings: [] };
    const reembedding = changed.includes("title") || changed.includes("body");
    const now = iso(ctx.clock.now());
    const embedding = reembedding ? await queueNoteEmbedding(ctx, before.id, next.title, next.body) : null;
    const [updated] = await ctx.d1.batch<{ id: string }>([
      ctx.d1
        .prepare(`UPDATE knowledge_notes SET title = ?, body = ?, tags = ?, version = version + 1, updated_by = ?, updated_at = ?
                  WHERE tenant_id = ? AND id = ? AND version = ? RETURNING id`)
        .bind(next.title, next.body, next.tags, ctx.actorId, now, ctx.tenantId, before.id, before.version),
      activityStatement(ctx, { verb: "knowledge.updated", objectType: "note", objectId: before.id, projectId: before.project_id, summary: `${next.title}: ${changed.join(", ")}`.slice(0, 300), ifPreviousChanged: true }),
      // Queued even if the update lost a race: the embedder embeds the note's current text whatever hash was queued.
      ...(embedding ? [embedding.stmt] : []),
    ]);
    embedding?.afterCommit();
    if (updated!.results.length === 0) {
      throw new ToolError("version_conflict", `Note ${before.id} changed while this call ran.`, { hint: "Re-read it and retry.", retryable: true });
    }
    const note = toNote(await findNote(ctx, before.id), true);
    return {
      note: reembedding ? { ...note, embedding_status: "pending" as const } : note,
      changed, reembedding, warnings: reembedding ? secretWarnings(`${next.title}\n${next.body}`) : [],
    };
  },
  summarize: (r) => (r.changed.length ? `Updated ${r.note.id}: ${r.changed.join(", ")}${r.reembedding ? " (re-embedding)" : ""}.` : `No change to ${r.note.id}.`),
});

interface SearchFilters {
  where: string[];
  params: unknown[];
}

/**
 * Full-text candidates, best first: ranked words (porter-stemmed, any word), else a substring
 * via trigrams (three characters or more), else titles containing the text.
 */
async function lexicalNotes(ctx: Ctx, q: string, f: SearchFilters): Promise<{ ids: string[]; match: "words" | "substring" | "title" | "none" }> {
  const filters = f.where.length ? ` AND ${f.where.join(" AND ")}` : "";
  const words = ftsAnyWord(q);
  if (words) {
    // bm25 column weights: a word in the title counts five times one in the body, tags twice.
    const rows = await ctx.d1
      .prepare(`SELECT n.id FROM knowledge_fts f CROSS JOIN knowledge_notes n ON n.seq = f.rowid
                WHERE knowledge_fts MATCH ? AND n.tenant_id = ?${filters} ORDER BY bm25(knowledge_fts, 5.0, 1.0, 2.0), n.seq DESC LIMIT ?`)
      .bind(words, ctx.tenantId, ...f.params, LEXICAL_CANDIDATES)
      .raw<[string]>();
    if (rows.length > 0) return { ids: rows.map((r) => r[0]), match: "words" };
  }
  const text = q.trim();
  if ([...text].length >= 3) {
    const rows = await ctx.d1
      .prepare(`SELECT n.id FROM knowledge_fts_trgm f CROSS JOIN knowledge_notes n ON n.seq = f.rowid
                WHERE knowledge_fts_trgm MATCH ? AND n.tenant_id = ?${filters} ORDER BY bm25(knowledge_fts_trgm, 5.0, 1.0), n.seq DESC LIMIT ?`)
      .bind(ftsPhrase(text), ctx.tenantId, ...f.params, LEXICAL_CANDIDATES)
      .raw<[string]>();
    return { ids: rows.map((r) => r[0]), match: rows.length > 0 ? "substring" : "none" };
  }
  // Too short for trigrams: the newest titles containing it (instr, since D1 caps LIKE patterns).
  const rows = await ctx.d1
    .prepare(`SELECT id FROM (SELECT n.id, n.title, n.seq FROM knowledge_notes n WHERE n.tenant_id = ?${filters} ORDER BY n.seq DESC LIMIT ?)
              WHERE instr(lower(title), lower(?)) > 0 ORDER BY seq DESC LIMIT ?`)
    .bind(ctx.tenantId, ...f.params, TITLE_SCAN, text, LEXICAL_CANDIDATES)
    .raw<[string]>();
  return { ids: rows.map((r) => r[0]), match: rows.length > 0 ? "title" : "none" };
}

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
  description:
    "Search notes by words and meaning (hybrid), or words alone. Search before you redo research.",
  input: z.object({
    q: z.string().trim().min(1).max(500).describe("What you are looking for, in words."),
    project_id: z.string().min(1).max(100).optional().describe("Only this project's notes (id or key)."),
    kind: z.enum(NOTE_KINDS).optional().describe("Only this kind."),
    tags: tagsField.optional().describe("Only notes carrying every one of these tags."),
    top_k: z.number().int().min(1).max(50).default(10).describe("Results to return."),
    min_similarity: z.number().min(-1).max(1).optional().describe("Drop vector matches below this cosine similarity."),
    lexical_only: z.boolean().default(false).describe("Rank by words only, skipping embeddings."),
  }),
  output: z.object({
    items: z.array(searchItemSchema).describe("Matching notes, best first."),
    mode: z.enum(["hybrid", "lexical"]).describe("hybrid: words and meaning fused; lexical: words only."),
    match: z.enum(["words", "substring", "title", "none"]).describe("Which full-text strategy matched: ranked words, else substring (trigram), else title."),
    embedder: z.string().describe("The embedding model that ranked by meaning (local-hash-* is lexical, not semantic), or \"\"."),
    note: z.string().describe("Anything the caller should know about this ranking (e.g. why it fell back), or \"\"."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const f: SearchFilters = { where: [], params: [] };
    const filter: Record<string, string> = {};
    if (input.project_id) {
      const project = await findProject(ctx, input.project_id);
      f.where.push("n.project_id = ?"); f.params.push(project.id); filter.project_id = project.id;
    }
    if (input.kind) { f.where.push("n.kind = ?"); f.params.push(input.kind); filter.kind = input.kind; }
    for (const tag of normalizeTags(input.tags ?? [])) { f.where.push("EXISTS (SELECT 1 FROM json_each(n.tags) WHERE value = ?)"); f.params.push(tag); }
    let match: "words" | "substring" | "title" | "none" = "none";
    const ranked = await rankHybrid({
      env: ctx.env, tenantId: ctx.tenantId, type: "note", q: input.q, semantic: !input.lexical_only, minSimilarity: input.min_similarity,
      // Tags are not vector metadata, so fetch extra neighbours for the tag filter to thin.
      candidates: Math.min(100, input.top_k * (input.tags?.length ? 5 : 2)),
      filter,
      lexical: async () => {
        const res = await lexicalNotes(ctx, input.q, f);
        match = res.match;
        return res.ids;
      },
    });
    const ids = ranked.items.map((r) => r.id);
    const rows: NoteRow[] = ids.length === 0 ? [] : await ctx.d1
      .prepare(`SELECT ${NOTE_COLUMNS} FROM ${NOTE_FROM} WHERE n.tenant_id = ? AND n.id IN (SELECT value FROM json_each(?))${f.where.length ? ` AND ${f.where.join(" AND ")}` : ""}`)
      .bind(ctx.tenantId, JSON.stringify(ids), ...f.params)
      .all<NoteRow>()
      .then((r) => r.results);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const needles = [input.q.trim(), ...ftsWords(input.q)];
    const items = ranked.items
      .filter((r) => byId.has(r.id))
      .slice(0, input.top_k)
      .map((r) => {
        const row = byId.get(r.id)!;
        return { ...toNote(row, false), snippet: snippetAround(row.body, needles), score: r.score, similarity: r.similarity, lexical_rank: r.lexical_rank };
      });
    return { items, mode: ranked.mode, match, embedder: ranked.embedder, note: ranked.note };
  },
  summarize: (r) => `${r.items.length} note(s) (${r.mode}${r.match !== "none" ? `, ${r.match}` : ""}).`,
});
