/**
 * The second half of the document store's garbage collection. collectOrphanChunks deletes chunks
 * whose rows nothing reaches; this sweep finds chunk objects in R2 that never got a row at all (a
 * put that died between uploading its chunks and committing its batch), walking one tenant's
 * chunk prefix a page at a time and remembering where it stopped in cron_cursors.
 */
import { iso } from "../db/time";
import type { Env } from "../env";
import { chunkKey, ORPHAN_GRACE_MS } from "./store";

export const CHUNK_SWEEP_JOB = "docs_rowless_chunk_sweep";
const PAGE = 500;

interface Cursor {
  tenant: string;
  r2: string | null;
}

const prefixOf = (tenantId: string) => chunkKey(tenantId, "");

/**
 * Deletes chunk objects older than the grace period that have no doc_chunks row. A put uploads
 * its chunks before it inserts their rows, and re-uploading refreshes an object's upload time, so
 * an object younger than the grace period may belong to a put still in flight and is left alone.
 */
export async function sweepRowlessChunks(env: Env, now: Date, pages = 4): Promise<string> {
  const saved = await env.DB.prepare(`SELECT cursor FROM cron_cursors WHERE job = ?`).bind(CHUNK_SWEEP_JOB).first<{ cursor: string }>();
  let cursor: Cursor = saved ? (JSON.parse(saved.cursor) as Cursor) : { tenant: "", r2: null };
  const cutoff = now.getTime() - ORPHAN_GRACE_MS;
  let listed = 0;
  let removed = 0;
  for (let page = 0; page < pages; page++) {
    if (cursor.tenant === "") {
      const first = await env.DB.prepare(`SELECT id FROM tenants ORDER BY id LIMIT 1`).first<{ id: string }>();
      if (!first) break;
      cursor = { tenant: first.id, r2: null };
    }
    const list = await env.BLOBS.list({ prefix: prefixOf(cursor.tenant), limit: PAGE, ...(cursor.r2 ? { cursor: cursor.r2 } : {}) });
    listed += list.objects.length;
    const old = list.objects.filter((o) => o.uploaded.getTime() < cutoff).map((o) => o.key.slice(prefixOf(cursor.tenant).length));
    if (old.length > 0) {
      const known = new Set<string>();
      for (let i = 0; i < old.length; i += 90) {
        const group = old.slice(i, i + 90);
        const rows = await env.DB.prepare(`SELECT hash FROM doc_chunks WHERE tenant_id = ? AND hash IN (${group.map(() => "?").join(",")})`)
          .bind(cursor.tenant, ...group)
          .all<{ hash: string }>();
        for (const r of rows.results) known.add(r.hash);
      }
      const orphans = old.filter((h) => !known.has(h));
      if (orphans.length > 0) await env.BLOBS.delete(orphans.map((h) => chunkKey(cursor.tenant, h)));
      removed += orphans.length;
    }
    if (list.truncated) {
      cursor = { tenant: cursor.tenant, r2: list.cursor };
    } else {
      const next = await env.DB.prepare(`SELECT id FROM tenants WHERE id > ? ORDER BY id LIMIT 1`).bind(cursor.tenant).first<{ id: string }>();
      cursor = { tenant: next?.id ?? "", r2: null };
      if (!next) break;
    }
  }
  await env.DB.prepare(`INSERT INTO cron_cursors (job, cursor, updated_at) VALUES (?, ?, ?) ON CONFLICT (job) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`)
    .bind(CHUNK_SWEEP_JOB, JSON.stringify(cursor), iso(now))
    .run();
  return `${listed} chunk object(s) checked, ${removed} without a row deleted${cursor.tenant === "" ? "; all tenants swept" : "; more next run"}`;
}
