/**
 * Knowledge (seed 001): the team wiki. Durable-row-before-embed: a write stores the note and
 * queues its embedding in one batch and answers at once; the vector is made after the response
 * and by the scheduled backfill, so an embedder outage never blocks or loses a write.
 */
import { z } from "zod";
import { ftsAnyWord, ftsPhrase } from "../../db/fts";
import { secretKinds } from "../../core/secrets";
import type { Ctx } from "../../core/context";
import { notFound } from "../../core/errors";
import { embedAfterResponse, queueEmbedding } from "../../search/semantic";
import { noteEmbedText } from "../../search/sources";
import { jsonArray } from "../shared";

export const NOTE_KINDS = ["note", "runbook", "finding", "snippet"] as const;
export const BODY_MAX = 64 * 1024;
export const TITLE_MAX = 300;
/** Full-text candidates handed to fusion; more than any top_k so filters cannot starve results. */
const LEXICAL_CANDIDATES = 100;
/** Notes a short (under three characters) query scans by title, newest first. */
const TITLE_SCAN = 2000;

export const tagsField = z
  .array(
    z
      .string()
      .trim()
      .min(1)
      .max(50)
      .regex(/^[^\s,]+$/, "a tag is one word (no spaces or commas)"),
  )
  .max(20)
  .describe("Tags (one word each).");

export const noteSchema = z.object({
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
export type Note = z.infer<typeof noteSchema>;
export type NoteRow = Omit<Note, "tags" | "embedding_status"> & { seq: number; tags: string; embedding_status: string | null; body: string };

export const NOTE_COLUMNS = `n.seq, n.id, n.project_id, n.kind, n.title, n.body, n.tags, n.version, n.created_by, n.created_at, n.updated_by, n.updated_at,
  e.status AS embedding_status`;
export const NOTE_FROM = `knowledge_notes n LEFT JOIN embeddings e ON e.tenant_id = n.tenant_id AND e.object_type = 'note' AND e.object_id = n.id`;

export function toNote(r: NoteRow, withBody: boolean): Note {
  const { seq: _seq, body, ...rest } = r;
  return { ...rest, tags: jsonArray<string>(r.tags), embedding_status: r.embedding_status === "ready" ? "ready" : "pending", ...(withBody ? { body } : {}) };
}

export async function findNote(ctx: Ctx, id: string): Promise<NoteRow> {
  const row = await ctx.d1.prepare(`SELECT ${NOTE_COLUMNS} FROM ${NOTE_FROM} WHERE n.tenant_id = ? AND n.id = ?`).bind(ctx.tenantId, id.trim()).first<NoteRow>();
  if (!row) throw notFound("note", id, "knowledge_search finds notes; pass a note id from your tenant.");
  return row;
}

/** Tags are a set: lower-cased, de-duplicated and sorted, so the same set always compares equal. */
export const normalizeTags = (tags: string[]) => [...new Set(tags.map((t) => t.toLowerCase()))].sort();

/** A title from the body's first line when none is given, so every note lists readably. */
export function titleFrom(body: string): string {
  const first =
    body
      .split("\n")
      .map((l) => l.replace(/^[#>*\-\s]+/, "").trim())
      .find((l) => l.length > 0) ?? "";
  return first.length > 120 ? `${first.slice(0, 119)}…` : first || "Untitled note";
}

export function secretWarnings(text: string): string[] {
  const kinds = secretKinds(text);
  return kinds.length > 0 ? [`The note looks like it contains a secret (${kinds.join(", ")}); every actor in your tenant can read it. Consider knowledge_update to remove it.`] : [];
}

/**
 * The statement that queues a note's (re-)embedding, for the write's batch, and `afterCommit`,
 * which embeds it once the batch has committed, after the response.
 */
export async function queueNoteEmbedding(ctx: Ctx, id: string, title: string, body: string): Promise<{ stmt: D1PreparedStatement; afterCommit: () => void }> {
  const ref = { tenantId: ctx.tenantId, type: "note" as const, id };
  return {
    stmt: await queueEmbedding(ctx.d1, ref, noteEmbedText(title, body), ctx.clock.now()),
    afterCommit: () => embedAfterResponse(ctx, [ref]),
  };
}

export interface SearchFilters {
  where: string[];
  params: unknown[];
}

/**
 * Full-text candidates, best first: ranked words (porter-stemmed, any word), else a substring
 * via trigrams (three characters or more), else titles containing the text.
 */
export async function lexicalNotes(ctx: Ctx, q: string, f: SearchFilters): Promise<{ ids: string[]; match: "words" | "substring" | "title" | "none" }> {
  const filters = f.where.length ? ` AND ${f.where.join(" AND ")}` : "";
  const words = ftsAnyWord(q);
  if (words) {
    // bm25 column weights: a word in the title counts five times one in the body, tags twice.
    const rows = await ctx.d1
      .prepare(
        `SELECT n.id FROM knowledge_fts f CROSS JOIN knowledge_notes n ON n.seq = f.rowid
                WHERE knowledge_fts MATCH ? AND n.tenant_id = ?${filters} ORDER BY bm25(knowledge_fts, 5.0, 1.0, 2.0), n.seq DESC LIMIT ?`,
      )
      .bind(words, ctx.tenantId, ...f.params, LEXICAL_CANDIDATES)
      .raw<[string]>();
    if (rows.length > 0) return { ids: rows.map((r) => r[0]), match: "words" };
  }
  const text = q.trim();
  if ([...text].length >= 3) {
    const rows = await ctx.d1
      .prepare(
        `SELECT n.id FROM knowledge_fts_trgm f CROSS JOIN knowledge_notes n ON n.seq = f.rowid
                WHERE knowledge_fts_trgm MATCH ? AND n.tenant_id = ?${filters} ORDER BY bm25(knowledge_fts_trgm, 5.0, 1.0), n.seq DESC LIMIT ?`,
      )
      .bind(ftsPhrase(text), ctx.tenantId, ...f.params, LEXICAL_CANDIDATES)
      .raw<[string]>();
    return { ids: rows.map((r) => r[0]), match: rows.length > 0 ? "substring" : "none" };
  }
  // Too short for trigrams: the newest titles containing it (instr, since D1 caps LIKE patterns).
  const rows = await ctx.d1
    .prepare(
      `SELECT id FROM (SELECT n.id, n.title, n.seq FROM knowledge_notes n WHERE n.tenant_id = ?${filters} ORDER BY n.seq DESC LIMIT ?)
              WHERE instr(lower(title), lower(?)) > 0 ORDER BY seq DESC LIMIT ?`,
    )
    .bind(ctx.tenantId, ...f.params, TITLE_SCAN, text, LEXICAL_CANDIDATES)
    .raw<[string]>();
  return { ids: rows.map((r) => r[0]), match: rows.length > 0 ? "title" : "none" };
}

/** The notes among `ids` that pass the filters. */
export async function listNotesByIds(ctx: Ctx, ids: string[], f: SearchFilters): Promise<NoteRow[]> {
  return ctx.d1
    .prepare(`SELECT ${NOTE_COLUMNS} FROM ${NOTE_FROM} WHERE n.tenant_id = ? AND n.id IN (SELECT value FROM json_each(?))${f.where.length ? ` AND ${f.where.join(" AND ")}` : ""}`)
    .bind(ctx.tenantId, JSON.stringify(ids), ...f.params)
    .all<NoteRow>()
    .then((r) => r.results);
}

export interface NoteInsert {
  id: string;
  projectId: string | null;
  kind: string;
  title: string;
  body: string;
  tags: string;
  now: string;
}

/** A new note at version 1, written by the caller. */
export function insertNoteStatement(ctx: Ctx, n: NoteInsert): D1PreparedStatement {
  return ctx.d1
    .prepare(
      `INSERT INTO knowledge_notes (id, tenant_id, project_id, kind, title, body, tags, version, created_by, created_at, updated_by, updated_at)
                  VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`,
    )
    .bind(n.id, ctx.tenantId, n.projectId, n.kind, n.title, n.body, n.tags, ctx.actorId, n.now, ctx.actorId, n.now);
}

/** Compare-and-swap on the version: writes the next version only while the note is still at `version`; returns the id when it did. */
export function updateNoteStatement(ctx: Ctx, id: string, version: number, next: { title: string; body: string; tags: string }, now: string): D1PreparedStatement {
  return ctx.d1
    .prepare(
      `UPDATE knowledge_notes SET title = ?, body = ?, tags = ?, version = version + 1, updated_by = ?, updated_at = ?
                  WHERE tenant_id = ? AND id = ? AND version = ? RETURNING id`,
    )
    .bind(next.title, next.body, next.tags, ctx.actorId, now, ctx.tenantId, id, version);
}
