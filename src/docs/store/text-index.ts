/**
 * Indexing a stored document version for search: its extracted text (doc_texts, one row per
 * content hash), its keyword row (doc_search and the FTS index over it), its words for fuzzy
 * matching (doc_terms), its embedding, queued in the same batch and made after the response, and
 * (indexDocument) its knowledge-graph edges. A version is indexed once indexed_at is set.
 */
import { and, eq, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, jsonValues, statementOf } from "../../db/client";
import { docTexts, documents, embeddings } from "../../db/schema";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import { embedAfterResponse, type EmbedRef, queueEmbedding, selectSemantic } from "../../search/semantic";
import { documentEmbedText, vectorId } from "../../search/sources";
import { extractText, type Extraction, type ExtractStatus } from "../extract/extract";
import { graphStatements } from "../graph/graph";

export interface IndexableDocument {
  /** documents.id of the version just stored. */
  id: string;
  path: string;
  hash: string;
  mime: string;
  bytes: Uint8Array;
}

export interface IndexResult {
  status: ExtractStatus;
  note: string | null;
  /** The extracted text when status is text (the knowledge graph is built from it). */
  text: string | null;
}

/** Distinct words per document kept for fuzzy matching; the most frequent first, so a huge text keeps its real vocabulary. */
export const MAX_TERMS_PER_DOCUMENT = 5000;
const MIN_TERM_CHARS = 3;
const MAX_TERM_CHARS = 40;
/** Terms per INSERT: they travel as one JSON parameter, so this only bounds the statement's work. */
const TERMS_PER_STATEMENT = 1000;
const MAX_TITLE_CHARS = 200;

/** Lower-cased words a fuzzy query could be meant to be: letters present, 3 to 40 characters. */
export function vocabulary(text: string, max = MAX_TERMS_PER_DOCUMENT): string[] {
  const counts = new Map<string, number>();
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}_]+/gu)) {
    const w = m[0];
    if (w.length < MIN_TERM_CHARS || w.length > MAX_TERM_CHARS || !/\p{L}/u.test(w)) continue;
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  const all = [...counts.entries()];
  if (all.length > max) all.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return all.slice(0, max).map(([w]) => w);
}

/** The tenant as a single FTS token: unicode61 splits on '-', and one token is one doclist to intersect. */
export const tenantKey = (tenantId: string) => `t${tenantId.toLowerCase().replace(/[^a-z0-9]/g, "")}`;

const isMarkdown = (path: string, mime: string) => /\.(md|markdown|mdx)$/i.test(path) || /^text\/(x-)?markdown\b/i.test(mime);

const isSpace = (ch: string | undefined) => ch !== undefined && /\s/.test(ch);

/**
 * The text of an ATX heading line (`## Title ##`), or null: what `/^#{1,6}\s+(.*?)\s*#*\s*$/`
 * captured, found by one scan from each end. That regex backtracked cubically on a heading
 * followed by a long run of spaces (8,000 spaces: 225 s).
 */
export function atxHeading(line: string): string | null {
  let i = 0;
  while (line[i] === "#") i++;
  if (i < 1 || i > 6 || !isSpace(line[i])) return null;
  while (isSpace(line[i])) i++;
  // The closing sequence: trailing spaces, then #s, then spaces.
  let j = line.length;
  while (j > i && isSpace(line[j - 1])) j--;
  while (j > i && line[j - 1] === "#") j--;
  while (j > i && isSpace(line[j - 1])) j--;
  const text = line.slice(i, j);
  // `.` matches no line break: a heading holding one was not a heading to the regex either.
  return text === "" || /[\r\n\u2028\u2029]/.test(text) ? null : text;
}

/** The first ATX heading of a markdown text (after any front matter), else the file name. */
export function documentTitle(path: string, mime: string, text: string | null): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (text === null || !isMarkdown(path, mime)) return name;
  let body = text.slice(0, 64 * 1024);
  if (body.startsWith("---\n")) {
    const end = body.indexOf("\n---", 4);
    if (end > 0) body = body.slice(end + 4);
  }
  let fenced = false;
  for (const line of body.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const heading = atxHeading(line);
    if (heading) return heading.length > MAX_TITLE_CHARS ? `${heading.slice(0, MAX_TITLE_CHARS - 1)}…` : heading;
  }
  return name;
}

/** How a content hash was extracted: its doc_texts row. */
export type StoredExtraction = Pick<Extraction, "status" | "text" | "note">;

/**
 * The extraction of a version's content: read from doc_texts, or made now and written there (once
 * per content hash, shared by every path holding the same bytes). It is written on its own, before
 * anything that marks the version indexed, so a crash after it costs only the steps after it.
 */
export async function extractOnce(ctx: Ctx, doc: IndexableDocument): Promise<StoredExtraction> {
  const stored = await dbOf(ctx)
    .select({ status: sql<StoredExtraction["status"]>`${docTexts.status}`, text: docTexts.text, note: docTexts.note })
    .from(docTexts)
    .where(and(eq(docTexts.tenantId, ctx.tenantId), eq(docTexts.hash, doc.hash)))
    .get();
  if (stored) return stored;
  const fresh = await extractText(doc.bytes, doc.mime, doc.path);
  await storeExtraction(ctx, doc.hash, fresh);
  return fresh;
}

/** Records an extraction for a content hash; the first one recorded stands. */
export async function storeExtraction(ctx: Ctx, hash: string, x: Extraction): Promise<void> {
  await extractionStatement(ctx, hash, x).run();
}

/** The statement storeExtraction runs, for a caller that commits it in a batch. */
export function extractionStatement(ctx: Ctx, hash: string, x: Extraction): D1PreparedStatement {
  const textBytes = x.text === null ? 0 : new TextEncoder().encode(x.text).byteLength;
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .insert(docTexts)
      .values({
        tenantId: ctx.tenantId,
        hash,
        status: x.status,
        extractor: x.extractor,
        text: x.text,
        textBytes,
        truncated: x.truncated ? 1 : 0,
        note: x.note,
        createdAt: iso(ctx.clock.now()),
      })
      .onConflictDoNothing(),
  );
}

/** The stored extractions of these content hashes, by hash (extractOnce's read, for many at once). */
export async function storedExtractions(ctx: Ctx, hashes: string[]): Promise<Map<string, StoredExtraction>> {
  if (hashes.length === 0) return new Map();
  const rows = await dbOf(ctx)
    .select({ hash: docTexts.hash, status: sql<StoredExtraction["status"]>`${docTexts.status}`, text: docTexts.text, note: docTexts.note })
    .from(docTexts)
    .where(and(eq(docTexts.tenantId, ctx.tenantId), inArray(docTexts.hash, jsonValues([...new Set(hashes)]))))
    .all();
  return new Map(rows.map(({ hash, ...x }) => [hash, x]));
}

/**
 * Indexes a stored version: its text, then in one batch its graph edges, its search rows and
 * indexed_at. The version counts as indexed only once that batch commits, so a crash before it
 * leaves the document pending for the sweep; every step is idempotent for the same (version, content).
 */
export async function indexDocument(ctx: Ctx, doc: IndexableDocument): Promise<IndexResult> {
  const indexed = await indexStatements(ctx, doc, await extractOnce(ctx, doc));
  await ctx.d1.batch(indexed.statements);
  afterIndex(ctx, indexed.embed ? [indexed.embed] : [], [doc.path]);
  return indexed.result;
}

/**
 * Indexes one stored version (extractOnce, then recordIndex). Call it after the version's own
 * batch has committed (ingestDocument does). Returns how the text was extracted.
 */
export async function indexText(ctx: Ctx, doc: IndexableDocument): Promise<IndexResult> {
  return recordIndex(ctx, doc, await extractOnce(ctx, doc));
}

/** A version's index statements, to commit in one batch (after its put's), then afterIndex. */
export interface IndexStatements {
  statements: D1PreparedStatement[];
  /** The embedding the statements queue, made after the response. */
  embed: EmbedRef | null;
  result: IndexResult;
}

/** The statements that index a version from its extraction: its graph edges, then recordIndex's. */
export async function indexStatements(ctx: Ctx, doc: Omit<IndexableDocument, "bytes">, extraction: StoredExtraction): Promise<IndexStatements> {
  const graph = await graphStatements(ctx, { id: doc.id, path: doc.path, hash: doc.hash, mime: doc.mime, text: extraction.status === "text" ? extraction.text : null });
  const record = await recordStatements(ctx, doc, extraction);
  // What the graph's budget cut is said beside what extraction cut.
  const note = [record.result.note, graph.note].filter(Boolean).join("; ");
  return { statements: [...graph.statements, ...record.statements], embed: record.embed, result: note ? { ...record.result, note } : record.result };
}

/** What follows committed index statements, after the response: the embeddings, and dropping those of the paths' closed versions. */
export function afterIndex(ctx: Ctx, embed: EmbedRef[], paths: string[]): void {
  if (embed.length > 0) embedAfterResponse(ctx, embed);
  if (paths.length > 0) ctx.waitUntil(forgetClosedVersions(ctx, paths).catch((err) => console.error(`[docs] forgetting closed versions of a path: ${String(err)}`)));
}

/**
 * Writes a version's search rows from its extraction and marks it indexed (indexed_at), in one
 * batch: the keyword row only if the version is still live, so a version closed meanwhile (by a
 * newer put or a delete) is never indexed; its words for fuzzy matching; its embedding, queued in
 * the batch and made after the response.
 */
export async function recordIndex(ctx: Ctx, doc: Omit<IndexableDocument, "bytes">, extraction: StoredExtraction): Promise<IndexResult> {
  const record = await recordStatements(ctx, doc, extraction);
  await ctx.d1.batch(record.statements);
  afterIndex(ctx, record.embed ? [record.embed] : [], [doc.path]);
  return record.result;
}

async function recordStatements(ctx: Ctx, doc: Omit<IndexableDocument, "bytes">, extraction: StoredExtraction): Promise<IndexStatements> {
  const statements: D1PreparedStatement[] = [];
  const now = iso(ctx.clock.now());
  const text = extraction.status === "text" ? extraction.text : null;
  const title = documentTitle(doc.path, doc.mime, text);

  // The body is copied from doc_texts inside the statement rather than bound again: a 1 MiB text
  // crosses the wire once. The live-version check in the same statement is what keeps a version
  // closed meanwhile out of the index (the close trigger removes rows written before it).
  statements.push(
    // Hand SQL: an INSERT…SELECT guarded by liveness, whose upsert updates only when something changed.
    ctx.d1
      .prepare(
        `INSERT INTO doc_search (tenant_id, tenant_key, doc_id, hash, path, title, body)
         SELECT d.tenant_id, ?4, d.id, d.hash, d.path, ?3,
           COALESCE((SELECT t.text FROM doc_texts t WHERE t.tenant_id = d.tenant_id AND t.hash = d.hash AND t.status = 'text'), '')
         FROM documents d WHERE d.tenant_id = ?1 AND d.id = ?2 AND d.deleted_at IS NULL
         ON CONFLICT (tenant_id, doc_id) DO UPDATE SET title = excluded.title, body = excluded.body
         WHERE title IS NOT excluded.title OR body IS NOT excluded.body`,
      )
      .bind(ctx.tenantId, doc.id, title, tenantKey(ctx.tenantId)),
  );
  const terms = vocabulary(`${doc.path}\n${title}\n${text ?? ""}`);
  for (let i = 0; i < terms.length; i += TERMS_PER_STATEMENT) {
    // Hand SQL: an INSERT…SELECT over a json_each walk of the words.
    statements.push(ctx.d1.prepare(`INSERT OR IGNORE INTO doc_terms (tenant_id, term) SELECT ?, value FROM json_each(?)`).bind(ctx.tenantId, JSON.stringify(terms.slice(i, i + TERMS_PER_STATEMENT))));
  }
  statements.push(
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .update(documents)
        .set({ indexedAt: now })
        .where(and(eq(documents.tenantId, ctx.tenantId), eq(documents.id, doc.id), isNull(documents.deletedAt))),
    ),
  );
  const ref = { tenantId: ctx.tenantId, type: "document" as const, id: doc.id };
  if (text !== null) statements.push(await queueEmbedding(ctx.d1, ref, documentEmbedText(title, doc.path, text), ctx.clock.now()));
  return { statements, embed: text !== null ? ref : null, result: { status: extraction.status, note: extraction.note, text } };
}

/**
 * Drops the embeddings (bookkeeping rows and vectors) of the given document versions: for a
 * delete, whose version the close trigger already took out of the keyword index. Search never
 * shows a closed version either way (it keeps only live ids); this frees the vector slots.
 */
export async function forgetDocumentEmbeddings(ctx: Ctx, docIds: string[]): Promise<void> {
  if (docIds.length === 0) return;
  const gone = await dbOf(ctx)
    .delete(embeddings)
    .where(
      and(
        eq(embeddings.tenantId, ctx.tenantId),
        eq(embeddings.objectType, "document"),
        inArray(embeddings.objectId, jsonValues(docIds)),
        // Written out: the subquery correlates with the row being deleted.
        sql`NOT EXISTS (SELECT 1 FROM documents d WHERE d.tenant_id = embeddings.tenant_id AND d.id = embeddings.object_id AND d.deleted_at IS NULL)`,
      ),
    )
    .returning({ object_id: embeddings.objectId })
    .all();
  const { layer } = selectSemantic(ctx.env);
  if (layer && gone.length > 0) {
    await layer.index.deleteByIds(
      ctx.tenantId,
      gone.map((r) => vectorId("document", r.object_id)),
    );
  }
}

/** Closed versions of these paths that still hold an embedding (a re-added path leaves its old one behind). */
async function forgetClosedVersions(ctx: Ctx, paths: string[]): Promise<void> {
  const e = alias(embeddings, "e");
  const d = alias(documents, "d");
  const closed = await dbOf(ctx)
    .select({ object_id: e.objectId })
    .from(e)
    .innerJoin(d, and(eq(d.tenantId, e.tenantId), eq(d.id, e.objectId)))
    .where(and(eq(e.tenantId, ctx.tenantId), eq(e.objectType, "document"), inArray(d.path, jsonValues([...new Set(paths)])), isNotNull(d.deletedAt)))
    .limit(100 * paths.length)
    .all();
  await forgetDocumentEmbeddings(
    ctx,
    closed.map((r) => r.object_id),
  );
}
