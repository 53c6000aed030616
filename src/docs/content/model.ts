/** The content room's model: parameter fields, document rows, the documents a write names, metadata forms. */
import { and, asc, count, desc, eq, gte, inArray, isNull, lte, ne, or, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import picomatch from "picomatch";
import { z } from "zod";
import { boundedJson } from "../../core/bounds";
import type { Ctx } from "../../core/context";
import { excerpt, invalidInput, notFound } from "../../core/errors";
import { PENDING_NOTE } from "../store/ingest";
import { globMatcher } from "../../core/glob";
import { dbOf, jsonValues, statementOf } from "../../db/client";
import { likeLiteral } from "../../db/like";
import { docTexts, documents } from "../../db/schema";
import { MAX_LABEL_CHARS, MAX_METADATA_JSON_CHARS, MAX_MIME_CHARS, MAX_PATH_CHARS, MAX_TAG_CHARS, MAX_TAGS } from "../store/store";

export const tagsField = z.array(z.string().min(1).max(MAX_TAG_CHARS)).max(MAX_TAGS);
export const metadataObjectField = boundedJson(z.record(z.string().max(200), z.unknown()), { maxBytes: MAX_METADATA_JSON_CHARS, maxDepth: 6 });
export const collectionField = z.string().min(1).max(MAX_LABEL_CHARS);
export const labelField = z.string().min(1).max(MAX_LABEL_CHARS);
export const mimeField = z.string().min(3).max(MAX_MIME_CHARS);
export const pathField = z.string().min(1).max(MAX_PATH_CHARS);
/** A glob over stored paths (picomatch); one without a slash matches file names in any folder. */
export const globField = z.string().min(1).max(MAX_PATH_CHARS);
export const hashField = z.string().min(8).max(64);

/** Documents as the reads name them, with their version's text row (how it was indexed). */
const d = alias(documents, "d");
const t = alias(docTexts, "t");

/** The fields every op that answers documents reads, keyed by SQL column name: the row they give. */
const docFields = {
  id: d.id,
  path: d.path,
  name: d.name,
  hash: d.hash,
  size: d.size,
  mime_type: d.mimeType,
  collection: d.collection,
  tags: d.tags,
  metadata: d.metadata,
  created_at: d.createdAt,
  modified_at: d.modifiedAt,
  indexed_at: d.indexedAt,
  text_status: t.status,
  text_note: t.note,
};

/** Documents joined to their text rows, selecting the fields of a DocRow. */
const docsWithText = (ctx: Ctx) =>
  dbOf(ctx)
    .select(docFields)
    .from(d)
    .leftJoin(t, and(eq(t.tenantId, d.tenantId), eq(t.hash, d.hash)));

/** The caller's live documents, and what else must hold. */
const liveDocs = (ctx: Ctx, ...more: (SQL | undefined)[]) => and(eq(d.tenantId, ctx.tenantId), ...more, isNull(d.deletedAt));

export interface DocRow {
  id: string;
  path: string;
  name: string;
  hash: string;
  size: number;
  mime_type: string;
  collection: string | null;
  tags: string;
  metadata: string;
  created_at: string;
  modified_at: string;
  indexed_at: string | null;
  text_status: string | null;
  text_note: string | null;
}

/** text: text-indexed; binary: stored, not text-indexed; pending: not indexed yet. */
export const docType = (r: Pick<DocRow, "text_status">) => (r.text_status === "text" ? "text" : r.text_status ? "binary" : "pending");

/** pending until the version's indexing finishes (src/docs/store/index-queue.ts); then how its text was indexed. */
export const indexStatus = (r: Pick<DocRow, "indexed_at" | "text_status">) => (r.indexed_at === null ? "pending" : (r.text_status ?? "binary"));

export function documentView(r: DocRow) {
  return {
    id: r.id,
    hash: r.hash,
    path: r.path,
    name: r.name,
    size: r.size,
    mime_type: r.mime_type,
    type: docType(r),
    index_status: indexStatus(r),
    ...(r.indexed_at === null ? { index_note: PENDING_NOTE } : r.text_status && r.text_status !== "text" && r.text_note ? { index_note: r.text_note } : {}),
    tags: JSON.parse(r.tags) as string[],
    metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    collection: r.collection,
    created: r.created_at,
    modified: r.modified_at,
    indexed: r.indexed_at,
  };
}

/** The live document at a stored path, if any. */
export async function documentAtPath(ctx: Ctx, path: string): Promise<DocRow | null> {
  return (
    (await docsWithText(ctx)
      .where(liveDocs(ctx, eq(d.path, path)))
      .get()) ?? null
  );
}

/** Up to `limit` live documents with this file name, by path. */
export async function documentsNamed(ctx: Ctx, name: string, limit: number): Promise<DocRow[]> {
  return docsWithText(ctx)
    .where(liveDocs(ctx, eq(d.name, name)))
    .orderBy(asc(d.path))
    .limit(limit)
    .all();
}

/** The DocRow field each sort orders by. */
const SORT_COLUMNS = { name: "name", size: "size", created: "created_at", modified: "modified_at", indexed: "indexed_at" } as const;

/** What list filters and sorts by in SQL. */
export interface ListQuery {
  type?: "text" | "binary" | undefined;
  extension?: string | undefined;
  collection?: string | undefined;
  tags?: string[] | undefined;
  sort_by: keyof typeof SORT_COLUMNS;
  sort_order: "asc" | "desc";
  recent?: number | undefined;
  limit: number;
  offset: number;
}

/** One page of live documents for list and their total; `keep`, when given, filters what SQL cannot (globs, pins). */
export async function listDocuments(ctx: Ctx, p: ListQuery, keep: ((r: DocRow) => boolean) | null): Promise<{ rows: DocRow[]; total: number }> {
  const where = and(
    eq(d.tenantId, ctx.tenantId),
    isNull(d.deletedAt),
    p.type === "text" ? eq(t.status, "text") : undefined,
    p.type === "binary" ? or(isNull(t.status), ne(t.status, "text")) : undefined,
    // Hand SQL: drizzle's like() has no ESCAPE clause.
    p.extension ? sql`${d.name} LIKE ${`%.${likeLiteral(p.extension.replace(/^\./, ""))}`} ESCAPE '\\'` : undefined,
    p.collection ? eq(d.collection, p.collection) : undefined,
    // Hand SQL: a json_each walk over the row's tags.
    ...(p.tags ?? []).map((tag) => sql`EXISTS (SELECT 1 FROM json_each(${d.tags}) WHERE json_each.value = ${tag})`),
  );
  const direction = p.sort_order === "asc" ? asc : desc;
  // Filters SQL cannot express (globs, session pins) are applied to the rows SQL returns; the
  // scan is bounded, and `recent` is a window over modification time taken before sorting.
  const inner = docsWithText(ctx).where(where);
  const db = dbOf(ctx);
  const windowed = p.recent ? inner.orderBy(desc(d.modifiedAt)).limit(p.recent).as("d") : inner.as("d");
  const ordered = () =>
    p.recent
      ? db.select().from(windowed).orderBy(direction(windowed[SORT_COLUMNS[p.sort_by]]), asc(windowed.path)).$dynamic()
      : docsWithText(ctx).where(where).orderBy(direction(docFields[SORT_COLUMNS[p.sort_by]]), asc(d.path)).$dynamic();
  let rows: DocRow[];
  let total: number;
  if (keep) {
    const all = await ordered().limit(20001).all();
    const kept = all.filter(keep);
    total = kept.length;
    rows = kept.slice(p.offset, p.offset + p.limit);
  } else {
    const [page, counted] = await db.batch([ordered().limit(p.limit).offset(p.offset), db.select({ n: count() }).from(windowed)]);
    rows = page;
    total = counted[0]!.n;
  }
  return { rows, total };
}

/** Whether a string is a glob rather than a plain path. */
export const isGlob = (s: string) => picomatch.scan(s).isGlob;

/** At most this many live documents are matched by one glob (delete, update, pin). */
export const MAX_GLOB_MATCHES = 10_000;

/**
 * Live documents whose path matches one of `names`: an exact path, a glob, or a bare file name
 * (matched in any folder). Exact paths are looked up directly; globs scan the tenant's paths.
 */
export async function matchDocuments(ctx: Ctx, names: readonly string[]): Promise<DocRow[]> {
  const exact = names.filter((n) => !isGlob(n));
  const globs = names.filter((n) => isGlob(n) || !n.includes("/"));
  const seen = new Map<string, DocRow>();
  for (const n of exact) {
    const row = await documentAtPath(ctx, n.replace(/^\/+/, ""));
    if (row) seen.set(row.path, row);
  }
  if (globs.length > 0) {
    const match = globMatcher(globs);
    const rows = await docsWithText(ctx)
      .where(liveDocs(ctx))
      .orderBy(asc(d.path))
      .limit(MAX_GLOB_MATCHES + 1)
      .all();
    for (const r of rows) if (match(r.path)) seen.set(r.path, r);
  }
  return [...seen.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** A live document by its full hash or an unambiguous prefix of at least 8 characters. */
export async function documentsByHash(ctx: Ctx, hash: string): Promise<DocRow[]> {
  const h = hash.toLowerCase();
  if (!/^[0-9a-f]{8,64}$/.test(h)) {
    throw invalidInput(`hash '${excerpt(hash)}' is not a SHA-256 hex digest or a prefix of one`, "Pass the 64 hex characters an add returned, or at least the first 8.");
  }
  return docsWithText(ctx)
    .where(liveDocs(ctx, gte(d.hash, h), lte(d.hash, `${h}g`)))
    .orderBy(desc(d.modifiedAt))
    .limit(50)
    .all();
}

/** The documents a write op names: by hash (prefix), by name/path, or by glob pattern(s). */
export async function selectDocuments(ctx: Ctx, p: { hash?: string; name?: string; names?: string[]; pattern?: string }): Promise<DocRow[]> {
  const given = [p.hash, p.name, p.names, p.pattern].filter((v) => v !== undefined).length;
  if (given === 0) throw invalidInput("Name the documents: pass 'hash', 'name', 'names' or 'pattern'.", 'e.g. {"name": "notes.md"} or {"pattern": "drafts/*.md"}.');
  if (p.hash !== undefined) return documentsByHash(ctx, p.hash);
  return matchDocuments(ctx, [...(p.name !== undefined ? [p.name] : []), ...(p.names ?? []), ...(p.pattern !== undefined ? [p.pattern] : [])]);
}

/** Document ids as JSON arrays for `id IN (SELECT value FROM json_each(?))`: one statement per thousand, not per row. */
export const idGroups = (docs: readonly { id: string }[], size = 1000): string[] => idLists(docs, size).map((ids) => JSON.stringify(ids));

/** Document ids, a thousand per list: one statement per list, not per row. */
function idLists(docs: readonly { id: string }[], size = 1000): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < docs.length; i += size) out.push(docs.slice(i, i + size).map((d) => d.id));
  return out;
}

export const noMatch = (what: string) => notFound("document matching", what, "List the store (paths_only: true) to check the names; globs like '*.md' match file names in any folder.");

/** Marks the live versions of `docs` deleted at `now`, a thousand per statement; answers the rows it changed. */
export async function markDeleted(ctx: Ctx, docs: readonly { id: string }[], now: string): Promise<{ id: string; path: string; hash: string }[]> {
  // Guarded by id and liveness: a version replaced meanwhile is not deleted in its successor's place.
  const results = await ctx.d1.batch<{ id: string; path: string; hash: string }>(
    idLists(docs).map((ids) =>
      statementOf(
        ctx.d1,
        dbOf(ctx)
          .update(documents)
          .set({ deletedAt: now })
          .where(and(eq(documents.tenantId, ctx.tenantId), inArray(documents.id, jsonValues(ids)), isNull(documents.deletedAt)))
          .returning({ id: documents.id, path: documents.path, hash: documents.hash }),
      ),
    ),
  );
  return results.flatMap((r) => r.results);
}

/**
 * Merges `patch` into the metadata of the live versions of `docs` and adds and removes tags,
 * a thousand per statement; answers the rows it changed (a row whose result would pass the
 * bounds is left as it was and not answered).
 */
export async function applyUpdate(ctx: Ctx, docs: readonly { id: string }[], json: { patch: string; add: string; remove: string }) {
  // Each row is changed in one statement from its own current value, so two updates running
  // at once both land; the size bounds are checked on the result, in the same statement.
  const merged = `json_patch(metadata, ?3)`;
  const tags = `(SELECT json_group_array(value) FROM (SELECT value FROM json_each(tags) WHERE value NOT IN (SELECT value FROM json_each(?5))
                 UNION SELECT value FROM json_each(?4) WHERE value NOT IN (SELECT value FROM json_each(?5))))`;
  // Hand SQL: the SET reads the row's own JSON (json_patch, json_each walks) and the bounds guard the same result.
  const results = await ctx.d1.batch<{ path: string; hash: string; tags: string; metadata: string }>(
    idGroups(docs).map((ids) =>
      ctx.d1
        .prepare(
          `UPDATE documents SET metadata = ${merged}, tags = ${tags}
           WHERE tenant_id = ?1 AND id IN (SELECT value FROM json_each(?2)) AND deleted_at IS NULL
             AND length(${merged}) <= ${MAX_METADATA_JSON_CHARS} AND json_array_length(${tags}) <= ${MAX_TAGS}
           RETURNING path, hash, tags, metadata`,
        )
        .bind(ctx.tenantId, ids, json.patch, json.add, json.remove),
    ),
  );
  return results.flatMap((r) => r.results);
}

/** Metadata as the seed passes it: an object, or 'key=value' strings (update's form). */
export function metadataOf(value: Record<string, unknown> | string[] | undefined): Record<string, unknown> | undefined {
  if (value === undefined || !Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const pair of value) {
    const at = pair.indexOf("=");
    if (at <= 0) throw invalidInput(`metadata entry '${excerpt(pair, 60)}' is not key=value.`, 'Write each entry as key=value, e.g. "status=reviewed".');
    out[pair.slice(0, at).trim()] = pair.slice(at + 1);
  }
  return out;
}
