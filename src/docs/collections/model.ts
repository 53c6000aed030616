/** The collections room's model: collections and snapshots, a page at a time. */
import type { Ctx } from "../../core/context";

export interface PageParams {
  limit: number;
  offset: number;
}

/** One page of rows plus the total, in one round trip. */
async function page<T>(ctx: Ctx, sql: string, countSql: string, p: PageParams) {
  const [rows, count] = await ctx.d1.batch<T & { n: number }>([ctx.d1.prepare(`${sql} LIMIT ? OFFSET ?`).bind(ctx.tenantId, p.limit, p.offset), ctx.d1.prepare(countSql).bind(ctx.tenantId)]);
  const total = count!.results[0]!.n;
  const items = rows!.results as T[];
  return { items, total, ...(p.offset + items.length < total ? { next_offset: p.offset + items.length } : {}) };
}

/** Collections with how many live documents and bytes each holds, by name. */
export function listCollections(ctx: Ctx, p: PageParams) {
  return page<{ name: string; created: string; documents: number; bytes: number }>(
    ctx,
    `SELECT c.name, c.created_at AS created,
         (SELECT COUNT(*) FROM documents d WHERE d.tenant_id = c.tenant_id AND d.collection = c.name AND d.deleted_at IS NULL) AS documents,
         (SELECT COALESCE(SUM(size), 0) FROM documents d WHERE d.tenant_id = c.tenant_id AND d.collection = c.name AND d.deleted_at IS NULL) AS bytes
       FROM doc_collections c WHERE c.tenant_id = ? ORDER BY c.name`,
    `SELECT COUNT(*) AS n FROM doc_collections WHERE tenant_id = ?`,
    p,
  );
}

/** Snapshots with their document count and bytes, newest first. */
export function listSnapshots(ctx: Ctx, p: PageParams) {
  return page<{ id: string; label: string | null; collection: string | null; created: string; documents: number; bytes: number }>(
    ctx,
    `SELECT s.id, s.label, s.collection, s.created_at AS created,
         (SELECT COUNT(*) FROM doc_snapshot_entries e WHERE e.tenant_id = s.tenant_id AND e.snapshot_id = s.id) AS documents,
         (SELECT COALESCE(SUM(size), 0) FROM doc_snapshot_entries e WHERE e.tenant_id = s.tenant_id AND e.snapshot_id = s.id) AS bytes
       FROM doc_snapshots s WHERE s.tenant_id = ? ORDER BY s.created_at DESC, s.id DESC`,
    `SELECT COUNT(*) AS n FROM doc_snapshots WHERE tenant_id = ?`,
    p,
  );
}

/** A stored version as a restore writes it. */
export interface FileRef {
  path: string;
  hash: string;
  size: number;
}

/** A collection's live documents, by path. */
export async function collectionFiles(ctx: Ctx, collection: string): Promise<FileRef[]> {
  const rows = await ctx.d1.prepare(`SELECT path, hash, size FROM documents WHERE tenant_id = ? AND collection = ? AND deleted_at IS NULL ORDER BY path`).bind(ctx.tenantId, collection).all<FileRef>();
  return rows.results;
}

/** Whether the tenant has a collection of this name (it may hold no live documents). */
export async function collectionExists(ctx: Ctx, collection: string): Promise<boolean> {
  return Boolean(await ctx.d1.prepare(`SELECT 1 AS x FROM doc_collections WHERE tenant_id = ? AND name = ?`).bind(ctx.tenantId, collection).first());
}

export function snapshotById(ctx: Ctx, id: string): Promise<{ id: string; label: string | null } | null> {
  return ctx.d1.prepare(`SELECT id, label FROM doc_snapshots WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, id).first<{ id: string; label: string | null }>();
}

/** A snapshot's entries, by path. */
export async function snapshotFiles(ctx: Ctx, snapshotId: string): Promise<FileRef[]> {
  const rows = await ctx.d1
    .prepare(`SELECT path, doc_hash AS hash, size FROM doc_snapshot_entries WHERE tenant_id = ? AND snapshot_id = ? ORDER BY path`)
    .bind(ctx.tenantId, snapshotId)
    .all<FileRef>();
  return rows.results;
}
