/**
 * The walk both "object without a row" sweeps share (document chunks, attachment uploads): a write
 * that puts an object in R2 before committing the row that references it leaves an object nobody
 * references when it dies in between. The walk lists one tenant's prefix a page at a time,
 * remembering where it stopped in cron_cursors, and deletes objects older than the grace time that
 * no row references. An object younger than that may belong to a write still in flight.
 */
import { gt } from "drizzle-orm";
import { dbOf } from "../db/client";
import { tenants } from "../db/schema";
import { iso } from "../core/time";
import type { Env } from "../env";
import { readCursor, saveCursor } from "./cursor";

export interface RowlessObjectSweep {
  /** The cron_cursors key. */
  job: string;
  /** Where the tenant's objects of this kind live; names passed on are the keys after it. */
  prefix: (tenantId: string) => string;
  graceMs: number;
  /** Of these names (at most one page), the ones a row still references. */
  referenced: (env: Env, tenantId: string, names: string[]) => Promise<Set<string>>;
}

export interface RowlessObjectReport {
  listed: number;
  removed: number;
  /** The walk reached the last tenant (the next run starts again from the first). */
  finished: boolean;
}

interface Cursor {
  tenant: string;
  r2: string | null;
}

const PAGE = 500;

export async function sweepRowlessObjects(env: Env, now: Date, sweep: RowlessObjectSweep, pages = 4): Promise<RowlessObjectReport> {
  const saved = await readCursor(env.DB, sweep.job);
  let cursor: Cursor = saved !== undefined ? (JSON.parse(saved) as Cursor) : { tenant: "", r2: null };
  const db = dbOf({ d1: env.DB });
  const cutoff = now.getTime() - sweep.graceMs;
  let listed = 0;
  let removed = 0;
  for (let page = 0; page < pages; page++) {
    if (cursor.tenant === "") {
      const first = await db.select({ id: tenants.id }).from(tenants).orderBy(tenants.id).limit(1).get();
      if (!first) break;
      cursor = { tenant: first.id, r2: null };
    }
    const prefix = sweep.prefix(cursor.tenant);
    const list = await env.BLOBS.list({ prefix, limit: PAGE, ...(cursor.r2 ? { cursor: cursor.r2 } : {}) });
    listed += list.objects.length;
    const old = list.objects.filter((o) => o.uploaded.getTime() < cutoff).map((o) => o.key.slice(prefix.length));
    if (old.length > 0) {
      const known = await sweep.referenced(env, cursor.tenant, old);
      const orphans = old.filter((name) => !known.has(name));
      if (orphans.length > 0) await env.BLOBS.delete(orphans.map((name) => prefix + name));
      removed += orphans.length;
    }
    if (list.truncated) {
      cursor = { tenant: cursor.tenant, r2: list.cursor };
    } else {
      const next = await db.select({ id: tenants.id }).from(tenants).where(gt(tenants.id, cursor.tenant)).orderBy(tenants.id).limit(1).get();
      cursor = { tenant: next?.id ?? "", r2: null };
      if (!next) break;
    }
  }
  await saveCursor(env.DB, sweep.job, JSON.stringify(cursor), iso(now));
  return { listed, removed, finished: cursor.tenant === "" };
}
