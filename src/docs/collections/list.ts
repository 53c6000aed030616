import { z } from "zod";
import type { Ctx } from "../../core/context";
import { defineOp } from "../shared";

/** One page of rows plus the total, in one round trip. */
async function page<T>(ctx: Ctx, sql: string, countSql: string, p: { limit: number; offset: number }) {
  const [rows, count] = await ctx.d1.batch<T & { n: number }>([
    ctx.d1.prepare(`${sql} LIMIT ? OFFSET ?`).bind(ctx.tenantId, p.limit, p.offset),
    ctx.d1.prepare(countSql).bind(ctx.tenantId),
  ]);
  const total = count!.results[0]!.n;
  const items = rows!.results as T[];
  return { items, total, ...(p.offset + items.length < total ? { next_offset: p.offset + items.length } : {}) };
}

const pageParams = z.object({
  limit: z.number().int().min(1).max(1000).default(100).describe("Maximum entries (1–1000, default 100)."),
  offset: z.number().int().min(0).max(1_000_000).default(0).describe("Pagination offset (default 0)."),
});

export const listCollectionsOp = defineOp({
  name: "list_collections",
  category: "query",
  description: "List collections with how many live documents and bytes each holds.",
  params: pageParams,
  async run(ctx, p) {
    const { items, ...rest } = await page<{ name: string; created: string; documents: number; bytes: number }>(
      ctx,
      `SELECT c.name, c.created_at AS created,
           (SELECT COUNT(*) FROM documents d WHERE d.tenant_id = c.tenant_id AND d.collection = c.name AND d.deleted_at IS NULL) AS documents,
           (SELECT COALESCE(SUM(size), 0) FROM documents d WHERE d.tenant_id = c.tenant_id AND d.collection = c.name AND d.deleted_at IS NULL) AS bytes
         FROM doc_collections c WHERE c.tenant_id = ? ORDER BY c.name`,
      `SELECT COUNT(*) AS n FROM doc_collections WHERE tenant_id = ?`,
      p,
    );
    return { collections: items, ...rest };
  },
});

export const listSnapshotsOp = defineOp({
  name: "list_snapshots",
  category: "query",
  description: "List snapshots (immutable named sets of document versions), newest first, with their document count and bytes.",
  params: pageParams,
  async run(ctx, p) {
    const { items, ...rest } = await page<{ id: string; label: string | null; collection: string | null; created: string; documents: number; bytes: number }>(
      ctx,
      `SELECT s.id, s.label, s.collection, s.created_at AS created,
           (SELECT COUNT(*) FROM doc_snapshot_entries e WHERE e.tenant_id = s.tenant_id AND e.snapshot_id = s.id) AS documents,
           (SELECT COALESCE(SUM(size), 0) FROM doc_snapshot_entries e WHERE e.tenant_id = s.tenant_id AND e.snapshot_id = s.id) AS bytes
         FROM doc_snapshots s WHERE s.tenant_id = ? ORDER BY s.created_at DESC, s.id DESC`,
      `SELECT COUNT(*) AS n FROM doc_snapshots WHERE tenant_id = ?`,
      p,
    );
    return { snapshots: items, ...rest };
  },
});
