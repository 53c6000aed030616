/** Where a bounded scheduled job stopped (cron_cursors), so its next run continues there. */
import { eq } from "drizzle-orm";
import { dbOf } from "../db/client";
import { cronCursors } from "../db/schema";

/** The job's saved cursor, or undefined before its first run. */
export async function readCursor(d1: D1Database, job: string): Promise<string | undefined> {
  const row = await dbOf({ d1 }).select({ cursor: cronCursors.cursor }).from(cronCursors).where(eq(cronCursors.job, job)).get();
  return row?.cursor;
}

/** Saves the job's cursor ('' starts the next run from the beginning). */
export async function saveCursor(d1: D1Database, job: string, cursor: string, at: string): Promise<void> {
  await dbOf({ d1 })
    .insert(cronCursors)
    .values({ job, cursor, updatedAt: at })
    .onConflictDoUpdate({ target: cronCursors.job, set: { cursor, updatedAt: at } })
    .run();
}
