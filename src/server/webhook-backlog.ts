/**
 * Webhook deliveries kept while their source was over its rate limit (docs/limits.md: Rate limits).
 * GitHub does not retry a refused delivery, so a verified one is kept here instead of dropped, and
 * the webhook_backlog cron job (src/cron/webhook-backlog.ts) later feeds it through the same path a
 * live delivery takes: recorded in webhook_deliveries (de-duplicated by delivery id and by body),
 * then processed.
 */
import { and, eq, sql } from "drizzle-orm";
import { dbOf } from "../db/client";
import { webhookBacklog } from "../db/schema";
import { iso } from "../core/time";
import type { Env } from "../env";
import { KEEP_PAYLOAD_BYTES, processDelivery, recordDelivery } from "./webhooks";

/** What one tenant may have waiting; beyond either bound a throttled delivery is refused (429) as before. */
export const MAX_KEPT_DELIVERIES = 500;
export const MAX_KEPT_BYTES = 64 * 1024 * 1024;

export interface ThrottledDelivery {
  tenantId: string;
  deliveryId: string;
  event: string;
  /** The source's rate-limit counter, which the drain counts in too. */
  bucket: string;
  rawPayload: string;
  contentHash: string;
}

/**
 * Keeps a throttled delivery: `queued`, `already_queued` (the same delivery id is waiting), or
 * null when it cannot be kept (its payload is too large for a D1 row, or the tenant's backlog is
 * full), and the caller refuses it as before.
 */
export async function keepThrottled(env: Env, d: ThrottledDelivery, now: Date): Promise<"queued" | "already_queued" | null> {
  const bytes = new TextEncoder().encode(d.rawPayload).byteLength;
  if (bytes > KEEP_PAYLOAD_BYTES) return null;
  // One statement, so two deliveries racing in cannot both take the last place.
  // Hand SQL: an INSERT…SELECT guarded by the tenant's count and bytes.
  const kept = await env.DB.prepare(
    `INSERT INTO webhook_backlog (tenant_id, delivery_id, event, bucket, payload, bytes, content_hash, received_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8
     WHERE (SELECT count(*) FROM webhook_backlog WHERE tenant_id = ?1) < ?9
       AND (SELECT coalesce(sum(bytes), 0) FROM webhook_backlog WHERE tenant_id = ?1) + ?6 <= ?10
     ON CONFLICT DO NOTHING RETURNING delivery_id`,
  )
    .bind(d.tenantId, d.deliveryId, d.event.slice(0, 100), d.bucket, d.rawPayload, bytes, d.contentHash, iso(now), MAX_KEPT_DELIVERIES, MAX_KEPT_BYTES)
    .first();
  if (kept) return "queued";
  const waiting = await dbOf({ d1: env.DB })
    .select({ one: sql`1` })
    .from(webhookBacklog)
    .where(and(eq(webhookBacklog.tenantId, d.tenantId), eq(webhookBacklog.deliveryId, d.deliveryId)))
    .get();
  return waiting ? "already_queued" : null;
}

export interface KeptDelivery {
  tenant_id: string;
  delivery_id: string;
  event: string;
  bucket: string;
  payload: string;
  content_hash: string;
  received_at: string;
}

/** The longest-waiting kept deliveries, oldest first. */
export async function oldestKept(env: Env, limit: number): Promise<KeptDelivery[]> {
  const b = webhookBacklog;
  return (
    dbOf({ d1: env.DB })
      .select({ tenant_id: b.tenantId, delivery_id: b.deliveryId, event: b.event, bucket: b.bucket, payload: b.payload, content_hash: b.contentHash, received_at: b.receivedAt })
      .from(b)
      // rowid breaks ties in arrival order, as before.
      .orderBy(b.receivedAt, sql`rowid`)
      .limit(limit)
      .all()
  );
}

/**
 * Feeds a kept delivery through the live path, then lets go of it. Recording first makes this
 * safe to repeat: a run cut off after recording finds it recorded next time (not processed twice;
 * the webhook_retry job finishes an attempt that was cut off) and only drops the kept copy.
 */
export async function feedKept(env: Env, row: KeptDelivery, now: Date): Promise<"processed" | "duplicate"> {
  const payload = JSON.parse(row.payload) as Record<string, unknown>;
  const recorded = await recordDelivery(
    env,
    {
      tenantId: row.tenant_id,
      deliveryId: row.delivery_id,
      event: row.event,
      payload,
      rawPayload: row.payload,
      contentHash: row.content_hash,
    },
    new Date(row.received_at),
  );
  if (recorded.fresh) await processDelivery(env, row.tenant_id, row.delivery_id, now, payload);
  await dbOf({ d1: env.DB })
    .delete(webhookBacklog)
    .where(and(eq(webhookBacklog.tenantId, row.tenant_id), eq(webhookBacklog.deliveryId, row.delivery_id)))
    .run();
  return recorded.fresh ? "processed" : "duplicate";
}
