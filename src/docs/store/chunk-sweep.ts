/**
 * The second half of the document store's garbage collection. collectOrphanChunks deletes chunks
 * whose rows nothing reaches; this sweep finds chunk objects in R2 that never got a row at all (a
 * put that died between uploading its chunks and committing its batch), walking one tenant's
 * chunk prefix a page at a time (src/cron/rowless-objects.ts).
 */
import { and, eq, inArray } from "drizzle-orm";
import { sweepRowlessObjects } from "../../cron/rowless-objects";
import { dbOf } from "../../db/client";
import { docChunks } from "../../db/schema";
import type { Env } from "../../env";
import { chunkKey, ORPHAN_GRACE_MS } from "./store";

export const CHUNK_SWEEP_JOB = "docs_rowless_chunk_sweep";

/**
 * Deletes chunk objects older than the grace period that have no doc_chunks row. A put uploads
 * its chunks before it inserts their rows, and re-uploading refreshes an object's upload time, so
 * an object younger than the grace period may belong to a put still in flight and is left alone.
 */
export async function sweepRowlessChunks(env: Env, now: Date, pages = 4): Promise<string> {
  const r = await sweepRowlessObjects(
    env,
    now,
    {
      job: CHUNK_SWEEP_JOB,
      prefix: (tenantId) => chunkKey(tenantId, ""),
      graceMs: ORPHAN_GRACE_MS,
      referenced: async (env, tenantId, hashes) => {
        const known = new Set<string>();
        for (let i = 0; i < hashes.length; i += 90) {
          const group = hashes.slice(i, i + 90);
          const rows = await dbOf({ d1: env.DB })
            .select({ hash: docChunks.hash })
            .from(docChunks)
            .where(and(eq(docChunks.tenantId, tenantId), inArray(docChunks.hash, group)))
            .all();
          for (const row of rows) known.add(row.hash);
        }
        return known;
      },
    },
    pages,
  );
  return `${r.listed} chunk object(s) checked, ${r.removed} without a row deleted${r.finished ? "; all tenants swept" : "; more next run"}`;
}
