/**
 * Knowledge (seed 001): the team wiki. Durable-row-before-embed: a write stores the note and
 * queues its embedding in one batch and answers at once; the vector is made after the response
 * and by the scheduled backfill, so an embedder outage never blocks or loses a write.
 */
import { z } from "zod";
import { ftsAnyWord, ftsPhrase } from "../../core/fts";
import { secretKinds } from "../../core/secrets";
import type { Ctx } from "../../core/context";
import { notFound } from "../../core/errors";
import { embedAfterResponse, queueEmbedding } from "../../search/semantic";
import { noteEmbedText } from "../../search/sources";
import { and, desc, eq, inArray, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, jsonValues, statementOf } from "../../db/client";
import { embeddings, knowledgeNotes } from "../../db/schema";
import { jsonArray } from "../shared";
import { parseStale, staleColumn, staleSchema } from "../memory/model";

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
  stale: staleSchema.describe("The push that changed one of its linked paths since it was written or confirmed (knowledge_update clears it), or null."),
});
export type Note = z.infer<typeof noteSchema>;
export type NoteRow = Omit<Note, "tags" | "embedding_status" | "stale"> & { seq: number; tags: string; embedding_status: string | null; body: string; stale: string | null };

/** Notes as the room's reads name them: `n`, which the FTS5 searches' hand SQL joins too. */
const n = alias(knowledgeNotes, "n");
const e = alias(embeddings, "e");

/** A note row's fields, keyed by SQL column name so rows keep the shape the tools return. */
const noteFields = {
  seq: n.seq,
  id: n.id,
  project_id: n.projectId,
  kind: n.kind,
  title: n.title,
  body: n.body,
  tags: n.tags,
  version: n.version,
  created_by: n.createdBy,
  created_at: n.createdAt,
  updated_by: n.updatedBy,
  updated_at: n.updatedAt,
  embedding_status: e.status,
  stale: staleColumn("n", "note"),
};

/** Notes that pass `where`, each with its embedding's status (null until one is queued). */
const selectNotes = (ctx: Ctx, where: SQL) =>
  dbOf(ctx)
    .select(noteFields)
    .from(n)
    // `'note'` stays a literal, as the old hand SQL had it.
    .leftJoin(e, and(eq(e.tenantId, n.tenantId), sql`${e.objectType} = 'note'`, eq(e.objectId, n.id)))
    .where(where);

export function toNote(r: NoteRow, withBody: boolean): Note {
  const { seq: _seq, body, ...rest } = r;
  return {
    ...rest,
    tags: jsonArray<string>(r.tags),
    embedding_status: r.embedding_status === "ready" ? "ready" : "pending",
    stale: parseStale(r.stale),
    ...(withBody ? { body } : {}),
  };
}

export async function findNote(ctx: Ctx, id: string): Promise<NoteRow> {
  const row = await selectNotes(ctx, and(eq(n.tenantId, ctx.tenantId), eq(n.id, id.trim()))!).get();
  if (!row) throw notFound("note", id, "knowledge_search finds notes; pass a note id from your tenant.");
  return row as NoteRow;
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

/** What a search narrows notes to, besides the caller's tenant. */
export interface SearchFilters {
  projectId?: string;
  kind?: string;
  /** Every one of these tags. */
  tags: string[];
}

function noteFilters(f: SearchFilters): SQL[] {
  return [
    ...(f.projectId ? [eq(n.projectId, f.projectId)] : []),
    ...(f.kind ? [eq(n.kind, f.kind)] : []),
    ...f.tags.map((tag) => sql`EXISTS (SELECT 1 FROM json_each(${n.tags}) WHERE value = ${tag})`),
  ];
}

/**
 * Full-text candidates, best first: ranked words (porter-stemmed, any word), else a substring
 * via trigrams (three characters or more), else titles containing the text.
 */
export async function lexicalNotes(ctx: Ctx, q: string, f: SearchFilters): Promise<{ ids: string[]; match: "words" | "substring" | "title" | "none" }> {
  const where = and(eq(n.tenantId, ctx.tenantId), ...noteFilters(f))!;
  const db = dbOf(ctx);
  const words = ftsAnyWord(q);
  // Hand SQL for both FTS5 searches: drizzle cannot say `MATCH`, order by bm25() nor pin the join order with CROSS JOIN.
  if (words) {
    // bm25 column weights: a word in the title counts five times one in the body, tags twice.
    const rows = await db.all<{ id: string }>(
      sql`SELECT n.id FROM knowledge_fts f CROSS JOIN knowledge_notes n ON n.seq = f.rowid
          WHERE knowledge_fts MATCH ${words} AND ${where} ORDER BY bm25(knowledge_fts, 5.0, 1.0, 2.0), n.seq DESC LIMIT ${LEXICAL_CANDIDATES}`,
    );
    if (rows.length > 0) return { ids: rows.map((r) => r.id), match: "words" };
  }
  const text = q.trim();
  if ([...text].length >= 3) {
    const rows = await db.all<{ id: string }>(
      sql`SELECT n.id FROM knowledge_fts_trgm f CROSS JOIN knowledge_notes n ON n.seq = f.rowid
          WHERE knowledge_fts_trgm MATCH ${ftsPhrase(text)} AND ${where} ORDER BY bm25(knowledge_fts_trgm, 5.0, 1.0), n.seq DESC LIMIT ${LEXICAL_CANDIDATES}`,
    );
    return { ids: rows.map((r) => r.id), match: rows.length > 0 ? "substring" : "none" };
  }
  // Too short for trigrams: the newest titles containing it (instr, since D1 caps LIKE patterns).
  const newest = db.select({ id: n.id, title: n.title, seq: n.seq }).from(n).where(where).orderBy(desc(n.seq)).limit(TITLE_SCAN).as("newest");
  const rows = await db
    .select({ id: newest.id })
    .from(newest)
    .where(sql`instr(lower(${newest.title}), lower(${text})) > 0`)
    .orderBy(desc(newest.seq))
    .limit(LEXICAL_CANDIDATES)
    .all();
  return { ids: rows.map((r) => r.id), match: rows.length > 0 ? "title" : "none" };
}

/** The notes among `ids` that pass the filters. */
export async function listNotesByIds(ctx: Ctx, ids: string[], f: SearchFilters): Promise<NoteRow[]> {
  return (await selectNotes(ctx, and(eq(n.tenantId, ctx.tenantId), inArray(n.id, jsonValues(ids)), ...noteFilters(f))!).all()) as NoteRow[];
}

/** The newest notes that pass the filters, newest written first. */
export async function listNewestNotes(ctx: Ctx, f: SearchFilters, limit: number): Promise<NoteRow[]> {
  return (await selectNotes(ctx, and(eq(n.tenantId, ctx.tenantId), ...noteFilters(f))!)
    .orderBy(desc(n.seq))
    .limit(limit)
    .all()) as NoteRow[];
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
export function insertNoteStatement(ctx: Ctx, row: NoteInsert): D1PreparedStatement {
  const { id, projectId, kind, title, body, tags, now } = row;
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .insert(knowledgeNotes)
      .values({ id, tenantId: ctx.tenantId, projectId, kind, title, body, tags, version: 1, createdBy: ctx.actorId, createdAt: now, updatedBy: ctx.actorId, updatedAt: now }),
  );
}

/** Compare-and-swap on the version: writes the next version only while the note is still at `version`; returns the id when it did. */
export function updateNoteStatement(ctx: Ctx, id: string, version: number, next: { title: string; body: string; tags: string }, now: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .update(knowledgeNotes)
      .set({ ...next, version: sql`${knowledgeNotes.version} + 1`, updatedBy: ctx.actorId, updatedAt: now })
      .where(and(eq(knowledgeNotes.tenantId, ctx.tenantId), eq(knowledgeNotes.id, id), eq(knowledgeNotes.version, version)))
      .returning({ id: knowledgeNotes.id }),
  );
}
