/** The collections room's model: collections and snapshots, a page at a time. */
import { and, asc, count, desc, eq, isNull, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../../core/context";
import { dbOf } from "../../db/client";
import { docCollections, docSnapshotEntries, docSnapshots, documents } from "../../db/schema";

export interface PageParams {
  limit: number;
  offset: number;
}

/** A page of rows and the total they were taken from, with where the next page starts. */
function pageOf<T>(items: T[], total: number, p: PageParams) {
  return { items, total, ...(p.offset + items.length < total ? { next_offset: p.offset + items.length } : {}) };
}

/** Collections and snapshots as the listings name them: `c` and `s`, which their count subqueries correlate with. */
const c = alias(docCollections, "c");
const s = alias(docSnapshots, "s");

/** Collections with how many live documents and bytes each holds, by name; rows and total in one round trip. */
export async function listCollections(ctx: Ctx, p: PageParams) {
  const db = dbOf(ctx);
  const [items, counted] = await db.batch([
    db
      .select({
        name: c.name,
        created: c.createdAt,
        // Written out: in a single-table select drizzle drops table names inside fields, and these subqueries need `c.` to correlate.
        documents: sql<number>`(SELECT COUNT(*) FROM documents d WHERE d.tenant_id = c.tenant_id AND d.collection = c.name AND d.deleted_at IS NULL)`.as("documents"),
        bytes: sql<number>`(SELECT COALESCE(SUM(size), 0) FROM documents d WHERE d.tenant_id = c.tenant_id AND d.collection = c.name AND d.deleted_at IS NULL)`.as("bytes"),
      })
      .from(c)
      .where(eq(c.tenantId, ctx.tenantId))
      .orderBy(asc(c.name))
      .limit(p.limit)
      .offset(p.offset),
    db.select({ n: count() }).from(docCollections).where(eq(docCollections.tenantId, ctx.tenantId)),
  ]);
  return pageOf(items, counted[0]!.n, p);
}

/** Snapshots with their document count and bytes, newest first; rows and total in one round trip. */
export async function listSnapshots(ctx: Ctx, p: PageParams) {
  const db = dbOf(ctx);
  const [items, counted] = await db.batch([
    db
      .select({
        id: s.id,
        label: s.label,
        collection: s.collection,
        created: s.createdAt,
        // Written out: in a single-table select drizzle drops table names inside fields, and these subqueries need `s.` to correlate.
        documents: sql<number>`(SELECT COUNT(*) FROM doc_snapshot_entries e WHERE e.tenant_id = s.tenant_id AND e.snapshot_id = s.id)`.as("documents"),
        bytes: sql<number>`(SELECT COALESCE(SUM(size), 0) FROM doc_snapshot_entries e WHERE e.tenant_id = s.tenant_id AND e.snapshot_id = s.id)`.as("bytes"),
      })
      .from(s)
      .where(eq(s.tenantId, ctx.tenantId))
      .orderBy(desc(s.createdAt), desc(s.id))
      .limit(p.limit)
      .offset(p.offset),
    db.select({ n: count() }).from(docSnapshots).where(eq(docSnapshots.tenantId, ctx.tenantId)),
  ]);
  return pageOf(items, counted[0]!.n, p);
}

/** A stored version as a restore writes it. */
export interface FileRef {
  path: string;
  hash: string;
  size: number;
}

/** A collection's live documents, by path. */
export function collectionFiles(ctx: Ctx, collection: string): Promise<FileRef[]> {
  return dbOf(ctx)
    .select({ path: documents.path, hash: documents.hash, size: documents.size })
    .from(documents)
    .where(and(eq(documents.tenantId, ctx.tenantId), eq(documents.collection, collection), isNull(documents.deletedAt)))
    .orderBy(asc(documents.path))
    .all();
}

/** Whether the tenant has a collection of this name (it may hold no live documents). */
export async function collectionExists(ctx: Ctx, collection: string): Promise<boolean> {
  const row = await dbOf(ctx)
    .select({ x: sql<number>`1` })
    .from(docCollections)
    .where(and(eq(docCollections.tenantId, ctx.tenantId), eq(docCollections.name, collection)))
    .get();
  return Boolean(row);
}

export async function snapshotById(ctx: Ctx, id: string): Promise<{ id: string; label: string | null } | null> {
  const row = await dbOf(ctx)
    .select({ id: docSnapshots.id, label: docSnapshots.label })
    .from(docSnapshots)
    .where(and(eq(docSnapshots.tenantId, ctx.tenantId), eq(docSnapshots.id, id)))
    .get();
  return row ?? null;
}

/** A snapshot's entries, by path. */
export function snapshotFiles(ctx: Ctx, snapshotId: string): Promise<FileRef[]> {
  return dbOf(ctx)
    .select({ path: docSnapshotEntries.path, hash: docSnapshotEntries.docHash, size: docSnapshotEntries.size })
    .from(docSnapshotEntries)
    .where(and(eq(docSnapshotEntries.tenantId, ctx.tenantId), eq(docSnapshotEntries.snapshotId, snapshotId)))
    .orderBy(asc(docSnapshotEntries.path))
    .all();
}
