/**
 * Cron: webhook deliveries kept while their source was over its rate limit (src/server/webhook-backlog.ts)
 * are processed now, oldest first, each counted in its source's counter as a live delivery is, so
 * the backlog drains within the limit and never past it. Bounded per run.
 */
import { limitsFor } from "../auth/rate-limits";
import { eq } from "drizzle-orm";
import { dbOf } from "../db/client";
import { tenantRateLimits } from "../db/schema";
import type { Env } from "../env";
import { feedKept, oldestKept } from "../server/webhook-backlog";

export const WEBHOOK_BACKLOG_JOB = "webhook_backlog";
/** Kept deliveries looked at per run (every five minutes). */
export const BACKLOG_PER_RUN = 100;

/** The tenant's webhook limit: its override of the tenant limit, else the var's (as the route reads it). */
async function webhookLimit(env: Env, tenantId: string): Promise<number> {
  const row = await dbOf({ d1: env.DB }).select({ tenant_per_min: tenantRateLimits.tenantPerMin }).from(tenantRateLimits).where(eq(tenantRateLimits.tenantId, tenantId)).get();
  return limitsFor(env, row ? { keyPerMin: null, tenantPerMin: row.tenant_per_min } : null).tenantPerMin;
}

/** One more delivery on the source's counter, or false when it is full; an unreachable counter lets it through as the route would. */
async function admitted(env: Env, bucket: string, perMinute: number): Promise<boolean> {
  if (perMinute <= 0) return true;
  try {
    return (await env.RATE_LIMITS.getByName(bucket).hit(perMinute)).allowed;
  } catch (err) {
    console.error(`rate_limiter_unavailable: counter ${bucket} failed; processing a kept delivery anyway`, err);
    return true;
  }
}

export async function drainWebhookBacklog(env: Env, now: Date): Promise<string> {
  const full = new Set<string>();
  const limits = new Map<string, number>();
  let processed = 0;
  let duplicates = 0;
  let waiting = 0;
  for (const row of await oldestKept(env, BACKLOG_PER_RUN)) {
    if (full.has(row.bucket)) {
      waiting++;
      continue;
    }
    let perMinute = limits.get(row.tenant_id);
    if (perMinute === undefined) limits.set(row.tenant_id, (perMinute = await webhookLimit(env, row.tenant_id)));
    if (!(await admitted(env, row.bucket, perMinute))) {
      full.add(row.bucket);
      waiting++;
      continue;
    }
    try {
      if ((await feedKept(env, row, now)) === "processed") processed++;
      else duplicates++;
    } catch (err) {
      // Left in place for the next run; one bad row must not hold up the rest.
      console.error(`kept webhook delivery ${row.delivery_id} could not be fed`, err);
    }
  }
  return `${processed} kept delivery(ies) processed, ${duplicates} already recorded, ${waiting} still over their source's limit`;
}
