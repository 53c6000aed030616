/**
 * Document store core (seed 003): content-addressed documents whose bytes live in R2 as
 * content-defined chunks, deduplicated within a tenant and never across tenants, with metadata,
 * versions, collections and snapshots in D1. No tools here yet; the docs toolset builds on it.
 */
import { and, asc, count, eq, inArray, isNotNull, isNull, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, jsonValues, statementOf } from "../../db/client";
import { sha256Hex, uuidv7 } from "../../db/ids";
import { docChunks, docCollections, docSnapshotEntries, docSnapshots, documentChunks, documents } from "../../db/schema";
import { iso } from "../../core/time";
import type { Env } from "../../env";
import type { Ctx } from "../../core/context";
import { excerpt, invalidInput, notFound, ToolError } from "../../core/errors";
import { concatBytes } from "../../net/bytes";
import { firstControl } from "../../core/bounds";
import { chunkSpans } from "./chunker";

export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
export const MAX_PATH_CHARS = 1024;
export const MAX_SEGMENT_CHARS = 255;
export const MAX_TAGS = 64;
export const MAX_TAG_CHARS = 128;
export const MAX_METADATA_JSON_CHARS = 16 * 1024;
export const MAX_LABEL_CHARS = 256;
export const MAX_MIME_CHARS = 255;

/**
 * How long a chunk no document reaches is kept before the collector may delete it. A put marks
 * every existing chunk it will rely on (touched_at) before it decides not to upload it, and
 * commits its references well within this window; see collectOrphanChunks.
 */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;
/** A collector that claimed chunks and died leaves claims; after this they are taken again. */
export const GC_CLAIM_STALE_MS = 15 * 60 * 1000;

/** At most 100 bound parameters per D1 statement; lists of hashes go in groups of this many. */
const IN_GROUP = 90;

export const chunkKey = (tenantId: string, hash: string) => `${tenantId}/docs/chunks/${hash}`;

const HASH_RE = /^[0-9a-f]{64}$/;

/**
 * The canonical form of a document path: forward slashes, no leading slash, no empty or `.`
 * segments. `..` is refused rather than resolved: a name that climbs out of its folder is a
 * mistake or an attack, and restoring it to a repository later must not write outside its target.
 */
export function normalizePath(raw: unknown): string {
  if (typeof raw !== "string") throw invalidInput("path must be a string", "Pass the document's path, e.g. 'notes/meeting.md'.");
  // A cheap bound before scanning and splitting: normalizing only shortens a path by its redundant slashes and dots.
  if (raw.length > MAX_PATH_CHARS * 4) {
    throw invalidInput(`path is longer than ${MAX_PATH_CHARS} characters`, "Use a shorter path.");
  }
  const at = firstControl(raw, true);
  if (at >= 0) {
    throw invalidInput(`path '${excerpt(raw)}' contains a control character (code ${raw.charCodeAt(at)})`, "Remove control characters (newlines, tabs, NUL) from the path.");
  }
  const segments = raw
    .replace(/\\/g, "/")
    .split("/")
    .filter((s) => s !== "" && s !== ".");
  if (segments.includes("..")) {
    throw invalidInput(`path '${excerpt(raw)}' contains a '..' segment`, "Give the path without '..'; paths are relative to the store's root.");
  }
  if (segments.length === 0) throw invalidInput("path is empty", "Pass a path with a file name, e.g. 'notes/meeting.md'.");
  const long = segments.find((s) => s.length > MAX_SEGMENT_CHARS);
  if (long) throw invalidInput(`path segment '${excerpt(long)}' is longer than ${MAX_SEGMENT_CHARS} characters`, "Shorten that folder or file name.");
  const path = segments.join("/");
  if (path.length > MAX_PATH_CHARS) throw invalidInput(`path is longer than ${MAX_PATH_CHARS} characters`, "Use a shorter path.");
  return path;
}

function checkLabel(what: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.trim() === "") throw invalidInput(`${what} must be a non-empty string`, `Pass a ${what} name or leave it out.`);
  if (value.length > MAX_LABEL_CHARS) throw invalidInput(`${what} is longer than ${MAX_LABEL_CHARS} characters`, `Use a shorter ${what}.`);
  if (firstControl(value, true) >= 0) throw invalidInput(`${what} '${excerpt(value)}' contains a control character`, `Remove control characters from the ${what}.`);
  return value;
}

function checkTags(tags: unknown): string[] {
  if (tags === undefined || tags === null) return [];
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== "string" || t === "" || t.length > MAX_TAG_CHARS)) {
    throw invalidInput(`tags must be an array of non-empty strings of at most ${MAX_TAG_CHARS} characters`, 'Pass tags as e.g. ["meeting", "2024-01"].');
  }
  const unique = [...new Set(tags as string[])];
  if (unique.length > MAX_TAGS) throw invalidInput(`at most ${MAX_TAGS} tags per document (got ${unique.length})`, "Drop some tags.");
  return unique;
}

function checkMetadata(metadata: unknown): string {
  if (metadata === undefined || metadata === null) return "{}";
  if (typeof metadata !== "object" || Array.isArray(metadata)) {
    throw invalidInput("metadata must be an object of key-value pairs", 'Pass metadata as e.g. {"author": "Jane"}.');
  }
  const json = JSON.stringify(metadata);
  if (json.length > MAX_METADATA_JSON_CHARS) {
    throw invalidInput(`metadata is ${json.length} characters of JSON; the limit is ${MAX_METADATA_JSON_CHARS}`, "Keep metadata to short key-value pairs; store large content as a document.");
  }
  return json;
}

function checkMime(mime: unknown): string {
  if (mime === undefined || mime === null) return "application/octet-stream";
  if (typeof mime !== "string" || !/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/.test(mime) || mime.length > MAX_MIME_CHARS) {
    throw invalidInput(`mime_type '${excerpt(String(mime))}' is not a MIME type`, "Pass e.g. 'text/markdown' or leave it out.");
  }
  return mime;
}

export function tooLarge(size: number): ToolError {
  return new ToolError("document_too_large", `The document is ${size} bytes; the limit is ${MAX_DOCUMENT_BYTES} bytes (16 MiB).`, {
    hint: "Split the document into parts of at most 16 MiB and add each under its own path.",
  });
}

export interface PutDocumentInput {
  path: string;
  bytes: Uint8Array;
  mimeType?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  collection?: string;
  snapshotLabel?: string;
}

export interface PutDocumentResult {
  id: string;
  path: string;
  hash: string;
  size: number;
  /** Bytes of chunks this put uploaded. */
  bytes_stored: number;
  /** Bytes of the document already held by this tenant (or repeated within it), not uploaded again. */
  bytes_deduped: number;
  chunks: number;
  snapshot_id: string | null;
}

interface Piece {
  hash: string;
  offset: number;
  length: number;
}

function groups<T>(items: T[], size = IN_GROUP): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** A put's input, checked, hashed and cut into chunks; nothing written yet. */
export interface PreparedPut {
  path: string;
  bytes: Uint8Array;
  hash: string;
  pieces: Piece[];
  /** The distinct chunks, each at its first offset. */
  unique: Piece[];
  mime: string;
  tags: string[];
  metadata: string;
  collection: string | null;
  snapshotLabel: string | null;
}

/** Everything the caller gave is checked before anything is written: a refused put stores nothing. */
export async function preparePut(input: PutDocumentInput): Promise<PreparedPut> {
  const path = normalizePath(input.path);
  if (!(input.bytes instanceof Uint8Array)) throw invalidInput("bytes must be binary content", "Pass the document's bytes.");
  if (input.bytes.byteLength > MAX_DOCUMENT_BYTES) throw tooLarge(input.bytes.byteLength);
  const mime = checkMime(input.mimeType);
  const tags = checkTags(input.tags);
  const metadata = checkMetadata(input.metadata);
  const collection = checkLabel("collection", input.collection);
  const snapshotLabel = checkLabel("snapshot_label", input.snapshotLabel);

  const bytes = input.bytes;
  const hash = await sha256Hex(bytes);
  const pieces: Piece[] = [];
  for (const span of chunkSpans(bytes)) {
    // A document of one chunk (most under 16 KiB) is its own chunk: its hash is the chunk's.
    const whole = span.offset === 0 && span.length === bytes.byteLength;
    pieces.push({ hash: whole ? hash : await sha256Hex(bytes.subarray(span.offset, span.offset + span.length)), ...span });
  }
  const unique = new Map<string, Piece>();
  for (const p of pieces) if (!unique.has(p.hash)) unique.set(p.hash, p);
  return { path, bytes, hash, pieces, unique: [...unique.values()], mime, tags, metadata, collection, snapshotLabel };
}

/** A put whose chunks are in R2: its D1 statements (one atomic group) and what it answers once they commit. */
export interface StagedPut {
  result: PutDocumentResult;
  statements: D1PreparedStatement[];
}

/** One outcome per put of a run, in order: staged, or refused with what it threw. */
export type Staged = { ok: true; put: StagedPut } | { ok: false; error: unknown };

const conflictWithCollector = () =>
  new ToolError("conflict", "Part of this document's content is being removed by the orphan collector right now.", {
    hint: "Retry in a minute; the content will then be stored afresh.",
    retryable: true,
  });

/**
 * Stages a run of puts as if they were made one after another: the chunks a put relies on are
 * touched, those the tenant lacks are uploaded once for the whole run, and each put gets the D1
 * statements that commit it. What the store already holds (touched chunks, chunks the collector
 * has claimed, the live versions' created_at) is read in one batch for the whole run, and each
 * put then sees what the puts before it in the run will have written (a chunk one of them
 * uploads, a path one of them replaces). With `stopAtFailure`, the run ends at the first refused
 * put and nothing after it is uploaded. Commit each put's statements in run order, each group in
 * one batch, before answering for it.
 *
 * Marking a chunk touched is what makes relying on it safe: the collector only claims chunks
 * untouched for the grace period, and never one a put has just touched. A chunk already claimed
 * is being deleted, so it is neither relied on nor re-uploaded under the collector.
 */
export async function stagePuts(ctx: Ctx, preps: readonly PreparedPut[], stopAtFailure: boolean): Promise<Staged[]> {
  if (preps.length === 0) return [];
  const db = dbOf(ctx);
  const hashes = [...new Set(preps.flatMap((p) => p.unique.map((u) => u.hash)))];
  const paths = [...new Set(preps.map((p) => p.path))];
  const touchNow = iso(ctx.clock.now());
  const touches = groups(hashes).map((group) =>
    statementOf(
      ctx.d1,
      db
        .update(docChunks)
        .set({ touchedAt: touchNow })
        .where(and(eq(docChunks.tenantId, ctx.tenantId), isNull(docChunks.gcClaimedAt), inArray(docChunks.hash, group)))
        .returning({ hash: docChunks.hash }),
    ),
  );
  // After the touch in the same batch: a row it did not touch is claimed (or absent).
  const claims = groups(hashes).map((group) =>
    statementOf(
      ctx.d1,
      db
        .select({ hash: docChunks.hash })
        .from(docChunks)
        .where(and(eq(docChunks.tenantId, ctx.tenantId), isNotNull(docChunks.gcClaimedAt), inArray(docChunks.hash, group))),
    ),
  );
  const previous = statementOf(
    ctx.d1,
    db
      .select({ path: documents.path, created_at: documents.createdAt })
      .from(documents)
      .where(and(eq(documents.tenantId, ctx.tenantId), inArray(documents.path, jsonValues(paths)), isNull(documents.deletedAt))),
  );
  const read = await ctx.d1.batch<Record<string, string>>([...touches, ...claims, previous]);
  const present = new Set(read.slice(0, touches.length).flatMap((r) => r.results.map((row) => row.hash!)));
  const claimed = new Set(read.slice(touches.length, touches.length + claims.length).flatMap((r) => r.results.map((row) => row.hash!)));
  const createdAt = new Map(read[read.length - 1]!.results.map((row) => [row.path!, row.created_at!]));

  // Which put uploads which chunk: the first in the run that needs it.
  const decided: ({ ok: true; prep: PreparedPut; missing: Piece[] } | { ok: false; error: unknown })[] = [];
  for (const prep of preps) {
    const missing = prep.unique.filter((p) => !present.has(p.hash));
    if (missing.some((p) => claimed.has(p.hash))) {
      decided.push({ ok: false, error: conflictWithCollector() });
      if (stopAtFailure) break;
      continue;
    }
    for (const p of missing) present.add(p.hash);
    decided.push({ ok: true, prep, missing });
  }
  const uploads = decided.flatMap((d) => (d.ok ? d.missing.map((piece) => ({ bytes: d.prep.bytes, piece })) : []));
  for (const group of groups(uploads, 8)) {
    await Promise.all(group.map(({ bytes, piece: p }) => ctx.env.BLOBS.put(chunkKey(ctx.tenantId, p.hash), bytes.subarray(p.offset, p.offset + p.length), { sha256: p.hash })));
  }
  return decided.map((d) => {
    if (!d.ok) return d;
    const staged = putStatements(ctx, d.prep, d.missing, createdAt.get(d.prep.path));
    createdAt.set(d.prep.path, staged.createdAt);
    return { ok: true, put: staged };
  });
}

/** The statements that commit one put whose missing chunks are uploaded; `previousCreatedAt` is the live version's at its path. */
function putStatements(ctx: Ctx, prep: PreparedPut, missing: Piece[], previousCreatedAt: string | undefined): StagedPut & { createdAt: string } {
  const db = dbOf(ctx);
  const { path, bytes, hash, pieces, mime, collection, snapshotLabel } = prep;
  const now = iso(ctx.clock.now());
  const id = uuidv7(ctx.clock.now().getTime());
  const snapshotId = snapshotLabel !== null ? uuidv7(ctx.clock.now().getTime()) : null;
  const name = path.slice(path.lastIndexOf("/") + 1);
  const createdAt = previousCreatedAt ?? now;

  const statements: D1PreparedStatement[] = [];
  // A chunk row appears only now that its object is in R2; a racing put of the same chunk just
  // refreshes touched_at.
  for (const group of groups(missing, 16)) {
    statements.push(
      statementOf(
        ctx.d1,
        db
          .insert(docChunks)
          .values(group.map((p) => ({ tenantId: ctx.tenantId, hash: p.hash, size: p.length, createdAt: now, touchedAt: now })))
          .onConflictDoUpdate({ target: [docChunks.tenantId, docChunks.hash], set: { touchedAt: sql`excluded.touched_at` } }),
      ),
    );
  }
  for (const group of groups(
    pieces.map((p, seq) => ({ ...p, seq })),
    16,
  )) {
    statements.push(
      statementOf(
        ctx.d1,
        db
          .insert(documentChunks)
          .values(group.map((p) => ({ tenantId: ctx.tenantId, docHash: hash, seq: p.seq, chunkHash: p.hash, createdAt: now })))
          .onConflictDoNothing(),
      ),
    );
  }
  if (collection !== null) {
    statements.push(statementOf(ctx.d1, db.insert(docCollections).values({ tenantId: ctx.tenantId, name: collection, createdAt: now }).onConflictDoNothing()));
  }
  // Closing the live version and inserting the new one in one batch keeps exactly one live
  // version per path, whichever of two racing puts commits last.
  statements.push(
    statementOf(
      ctx.d1,
      db
        .update(documents)
        .set({ deletedAt: now })
        .where(and(eq(documents.tenantId, ctx.tenantId), eq(documents.path, path), isNull(documents.deletedAt))),
    ),
    statementOf(
      ctx.d1,
      // index_attempts is the schema's default (0), as the migration's.
      db.insert(documents).values({
        tenantId: ctx.tenantId,
        id,
        path,
        name,
        hash,
        size: bytes.byteLength,
        mimeType: mime,
        collection,
        tags: JSON.stringify(prep.tags),
        metadata: prep.metadata,
        createdAt,
        modifiedAt: now,
      }),
    ),
  );
  if (snapshotId !== null) {
    statements.push(
      statementOf(ctx.d1, db.insert(docSnapshots).values({ tenantId: ctx.tenantId, id: snapshotId, label: snapshotLabel, collection, createdAt: now })),
      statementOf(ctx.d1, db.insert(docSnapshotEntries).values({ tenantId: ctx.tenantId, snapshotId, path, docHash: hash, size: bytes.byteLength, mimeType: mime })),
    );
  }
  const bytesStored = missing.reduce((n, p) => n + p.length, 0);
  return {
    createdAt,
    statements,
    result: {
      id,
      path,
      hash,
      size: bytes.byteLength,
      bytes_stored: bytesStored,
      bytes_deduped: bytes.byteLength - bytesStored,
      chunks: pieces.length,
      snapshot_id: snapshotId,
    },
  };
}

/** Stores one document (its bytes and version; not its index: see ingestDocument). */
export async function putDocument(ctx: Ctx, input: PutDocumentInput): Promise<PutDocumentResult> {
  const [staged] = await stagePuts(ctx, [await preparePut(input)], true);
  if (!staged!.ok) throw staged!.error;
  await ctx.d1.batch(staged!.put.statements);
  return staged!.put.result;
}

export interface StoredDocument {
  hash: string;
  path: string | null;
  name: string | null;
  size: number;
  mime_type: string;
  bytes: Uint8Array;
}

export async function getDocument(ctx: Ctx, ref: { path: string } | { hash: string }): Promise<StoredDocument> {
  let hash: string;
  let path: string;
  let name: string | null;
  let size: number;
  let mime: string;
  if ("path" in ref) {
    const p = normalizePath(ref.path);
    const row = await dbOf(ctx)
      .select({ path: documents.path, name: documents.name, hash: documents.hash, size: documents.size, mime_type: documents.mimeType })
      .from(documents)
      .where(and(eq(documents.tenantId, ctx.tenantId), eq(documents.path, p), isNull(documents.deletedAt)))
      .get();
    if (!row) throw notFound("document", p, "List the store's documents to find the path, or get it by hash.");
    ({ hash, path, name, size, mime_type: mime } = row);
  } else {
    if (typeof ref.hash !== "string" || !HASH_RE.test(ref.hash)) {
      throw invalidInput(`hash '${excerpt(String(ref.hash))}' is not a SHA-256 hex digest`, "Pass the 64 lowercase hex characters an add returned.");
    }
    hash = ref.hash;
    // The live version at a path describes the content best; a snapshot entry describes old content.
    const db = dbOf(ctx);
    const [row] = await db
      .select({ path: documents.path, name: sql<string | null>`${documents.name}`, size: documents.size, mime_type: documents.mimeType })
      .from(documents)
      .where(and(eq(documents.tenantId, ctx.tenantId), eq(documents.hash, hash), isNull(documents.deletedAt)))
      .unionAll(
        db
          .select({ path: docSnapshotEntries.path, name: sql<string | null>`NULL`, size: docSnapshotEntries.size, mime_type: docSnapshotEntries.mimeType })
          .from(docSnapshotEntries)
          .where(and(eq(docSnapshotEntries.tenantId, ctx.tenantId), eq(docSnapshotEntries.docHash, hash))),
      )
      .limit(1)
      .all();
    if (!row) throw notFound("document with hash", hash, "No live document or snapshot in this store has that content.");
    ({ path, name, size, mime_type: mime } = row);
    name ??= path.slice(path.lastIndexOf("/") + 1);
  }
  const chunkRows = await dbOf(ctx)
    .select({ chunk_hash: documentChunks.chunkHash })
    .from(documentChunks)
    .where(and(eq(documentChunks.tenantId, ctx.tenantId), eq(documentChunks.docHash, hash)))
    .orderBy(asc(documentChunks.seq))
    .all();
  const parts: Uint8Array[] = [];
  for (const group of groups(chunkRows, 8)) {
    const got = await Promise.all(group.map((r) => ctx.env.BLOBS.get(chunkKey(ctx.tenantId, r.chunk_hash))));
    for (const obj of got) {
      if (!obj) throw corrupt(hash);
      parts.push(new Uint8Array(await obj.arrayBuffer()));
    }
  }
  const bytes = concatBytes(parts);
  if (chunkRows.length === 0 || bytes.byteLength !== size || (await sha256Hex(bytes)) !== hash) throw corrupt(hash);
  return { hash, path, name, size, mime_type: mime, bytes };
}

const corrupt = (hash: string) =>
  new ToolError("integrity_error", `The stored content of ${hash} is missing or does not match its hash.`, {
    hint: "Add the document again to store its bytes afresh, and report this to the server's operators.",
  });

export async function deleteDocument(ctx: Ctx, ref: { path: string }): Promise<{ path: string; hash: string; deleted: true }> {
  const path = normalizePath(ref.path);
  const row = await dbOf(ctx)
    .update(documents)
    .set({ deletedAt: iso(ctx.clock.now()) })
    .where(and(eq(documents.tenantId, ctx.tenantId), eq(documents.path, path), isNull(documents.deletedAt)))
    .returning({ hash: documents.hash })
    .get();
  if (!row) throw notFound("document", path, "List the store's documents to find the path.");
  return { path, hash: row.hash, deleted: true };
}

export interface StoreStatus {
  total_objects: number;
  /** Sum of the live documents' sizes. */
  total_bytes: number;
  /** Distinct chunks the live documents use. */
  unique_blocks: number;
  /** total_bytes minus the bytes of those distinct chunks: what deduplication saves. */
  deduplicated_bytes: number;
  /** deduplicated_bytes / total_bytes (0 for an empty store), as in the seed's example (0.2). */
  dedup_ratio: number;
}

export async function storeStatus(ctx: Ctx): Promise<StoreStatus> {
  const db = dbOf(ctx);
  const c = alias(docChunks, "c");
  const [docs, blocks] = await db.batch([
    db
      .select({ n: count(), bytes: sql<number>`COALESCE(SUM(${documents.size}), 0)` })
      .from(documents)
      .where(and(eq(documents.tenantId, ctx.tenantId), isNull(documents.deletedAt))),
    db
      .select({ n: count(), bytes: sql<number>`COALESCE(SUM(c.size), 0)` })
      .from(c)
      .where(
        and(
          eq(c.tenantId, ctx.tenantId),
          // Written out: the correlated EXISTS needs `c.`, which drizzle drops in a single-table select.
          sql`EXISTS (SELECT 1 FROM document_chunks dc JOIN documents d ON d.tenant_id = dc.tenant_id AND d.hash = dc.doc_hash AND d.deleted_at IS NULL
                WHERE dc.tenant_id = ${ctx.tenantId} AND dc.chunk_hash = c.hash)`,
        ),
      ),
  ]);
  const total = docs[0]!;
  const unique = blocks[0]!;
  const deduplicated = Math.max(0, total.bytes - unique.bytes);
  return {
    total_objects: total.n,
    total_bytes: total.bytes,
    unique_blocks: unique.n,
    deduplicated_bytes: deduplicated,
    dedup_ratio: total.bytes === 0 ? 0 : deduplicated / total.bytes,
  };
}

/** A chunk some live document version or snapshot of its tenant still reaches. */
const CHUNK_REFERENCED = `EXISTS (SELECT 1 FROM document_chunks dc WHERE dc.tenant_id = c.tenant_id AND dc.chunk_hash = c.hash AND (
  EXISTS (SELECT 1 FROM documents d WHERE d.tenant_id = dc.tenant_id AND d.hash = dc.doc_hash AND d.deleted_at IS NULL)
  OR EXISTS (SELECT 1 FROM doc_snapshot_entries e WHERE e.tenant_id = dc.tenant_id AND e.doc_hash = dc.doc_hash)))`;

export interface OrphanCollection {
  chunks_deleted: number;
  bytes_freed: number;
}

/**
 * Deletes up to `limit` chunks no live document version or snapshot reaches (all tenants unless
 * `tenantId` is given), for a cron job.
 *
 * Race with a put that is about to rely on an existing chunk: the put first sets the chunk's
 * touched_at (only when unclaimed) and only then skips uploading it; the collector claims a chunk
 * in one compare-and-swap statement that requires it unreferenced, unclaimed and untouched for
 * ORPHAN_GRACE_MS. D1 runs the two statements one after the other: if the touch comes first the
 * claim fails, if the claim comes first the put sees the chunk claimed and refuses (retryable)
 * instead of relying on it or uploading under the collector. The object is deleted from R2 before
 * its row, so a row always means the object exists; a collector that dies after claiming leaves
 * claims that a later run takes again after GC_CLAIM_STALE_MS.
 */
export async function collectOrphanChunks(env: Env, tenantId: string | undefined, limit: number, now: Date = new Date()): Promise<OrphanCollection> {
  const claimAt = iso(now);
  const cutoff = iso(new Date(now.getTime() - ORPHAN_GRACE_MS));
  const staleClaim = iso(new Date(now.getTime() - GC_CLAIM_STALE_MS));
  const take = Math.max(1, Math.min(Math.floor(limit), 1000));
  const tenantFilter = tenantId === undefined ? "" : "AND c.tenant_id = ?4";
  // Hand SQL: a compare-and-swap claim over a rowid subquery with LIMIT.
  const claimed = await env.DB.prepare(
    `UPDATE doc_chunks SET gc_claimed_at = ?1 WHERE rowid IN (
       SELECT c.rowid FROM doc_chunks c WHERE c.touched_at < ?2 AND (c.gc_claimed_at IS NULL OR c.gc_claimed_at < ?3) ${tenantFilter}
         AND NOT ${CHUNK_REFERENCED} LIMIT ${take})
     RETURNING tenant_id, hash, size`,
  )
    .bind(...(tenantId === undefined ? [claimAt, cutoff, staleClaim] : [claimAt, cutoff, staleClaim, tenantId]))
    .all<{ tenant_id: string; hash: string; size: number }>();
  const rows = claimed.results;
  if (rows.length === 0) return { chunks_deleted: 0, bytes_freed: 0 };
  await env.BLOBS.delete(rows.map((r) => chunkKey(r.tenant_id, r.hash)));
  let deleted = 0;
  let freed = 0;
  for (const group of groups(rows, 30)) {
    // Hand SQL: a row-value IN over (tenant_id, hash) pairs.
    const res = await env.DB.prepare(`DELETE FROM doc_chunks WHERE gc_claimed_at = ? AND (tenant_id, hash) IN (VALUES ${group.map(() => "(?, ?)").join(", ")}) RETURNING size`)
      .bind(claimAt, ...group.flatMap((r) => [r.tenant_id, r.hash]))
      .all<{ size: number }>();
    deleted += res.results.length;
    for (const r of res.results) freed += r.size;
  }
  // Chunk lists of content nothing reaches any more: a put of that content inserts them again in
  // the same batch that makes it reachable, so deleting them here cannot race it.
  // Hand SQL: a bounded delete through a rowid subquery with LIMIT and NOT EXISTS guards.
  await env.DB.prepare(
    `DELETE FROM document_chunks WHERE rowid IN (
       SELECT dc.rowid FROM document_chunks dc WHERE 1 = 1 ${tenantId === undefined ? "" : "AND dc.tenant_id = ?1"}
         AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.tenant_id = dc.tenant_id AND d.hash = dc.doc_hash AND d.deleted_at IS NULL)
         AND NOT EXISTS (SELECT 1 FROM doc_snapshot_entries e WHERE e.tenant_id = dc.tenant_id AND e.doc_hash = dc.doc_hash)
       LIMIT 5000)`,
  )
    .bind(...(tenantId === undefined ? [] : [tenantId]))
    .run();
  return { chunks_deleted: deleted, bytes_freed: freed };
}
