/**
 * Putting notices in actors' inboxes (the notifications table), the one way every producer does it:
 * webhooks (checks, reviews, pushes), reservations, overseers, jobs. A notice with a dedupe key lands
 * once per recipient and key, so a job or a webhook re-delivery that runs twice tells nobody twice.
 *
 * What happens after a notice lands (an inbox subscription woken, an outgoing webhook queued) is
 * registered from above by `onNoticesDelivered`, so this room knows no transport.
 */
import type { Ctx } from "../../core/context";
import { iso } from "../../core/time";
import { uuidv7 } from "../../db/ids";

export interface Notice {
  /** The recipient. */
  actorId: string;
  /** What kind of news: `mention`, `check.failed`, `review.submitted`, `paths.pushed`, `overseer`, … */
  kind: string;
  objectType: string;
  objectId: string;
  /** One line, cut to 500 characters. */
  summary: string;
  /** Who caused it: an actor id, or '' for the system. */
  fromActorId: string;
  /** One notice per recipient and key; absent: always a new notice. */
  dedupeKey?: string;
}

export type DeliveryCtx = Pick<Ctx, "d1" | "tenantId" | "clock"> & Partial<Pick<Ctx, "env" | "waitUntil">>;

/** Called with the recipients of the notices that landed (not those a dedupe key dropped). */
export type NoticesListener = (ctx: DeliveryCtx, recipients: string[]) => Promise<void>;
const listeners: NoticesListener[] = [];

export function onNoticesDelivered(listener: NoticesListener): void {
  if (!listeners.includes(listener)) listeners.push(listener);
}

const STATEMENTS_PER_BATCH = 50;
export const MAX_NOTICE_SUMMARY = 500;

/** The insert of one notice; the conflict target is the partial dedupe index, so a repeat is dropped. */
export function noticeStatement(ctx: Pick<Ctx, "d1" | "tenantId">, n: Notice, now: Date): D1PreparedStatement {
  // Hand SQL: the conflict target is the partial dedupe_key index, whose WHERE drizzle writes after DO NOTHING, where SQLite refuses it.
  return ctx.d1
    .prepare(
      `INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at, dedupe_key)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, actor_id, dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING`,
    )
    .bind(uuidv7(now.getTime()), ctx.tenantId, n.actorId, n.kind, n.objectType, n.objectId, n.summary.slice(0, MAX_NOTICE_SUMMARY), n.fromActorId, iso(now), n.dedupeKey ?? null);
}

/**
 * Inserts the notices (in atomic batches of 50) and returns how many landed. Listeners run after the
 * rows are written; a listener's failure is logged and never undoes or fails the delivery.
 */
export async function deliverNotices(ctx: DeliveryCtx, notices: readonly Notice[]): Promise<number> {
  if (notices.length === 0) return 0;
  const now = ctx.clock.now();
  const recipients = new Set<string>();
  let landedRows = 0;
  for (let i = 0; i < notices.length; i += STATEMENTS_PER_BATCH) {
    const chunk = notices.slice(i, i + STATEMENTS_PER_BATCH);
    const results = await ctx.d1.batch(chunk.map((n) => noticeStatement(ctx, n, now)));
    results.forEach((r, j) => {
      if ((r.meta.changes ?? 0) > 0) {
        landedRows++;
        recipients.add(chunk[j]!.actorId);
      }
    });
  }
  await announceNotices(ctx, [...recipients]);
  return landedRows;
}

/** Runs the listeners for notices written some other way (a mention, in its comment's own batch). */
export async function announceNotices(ctx: DeliveryCtx, recipients: readonly string[]): Promise<void> {
  if (recipients.length === 0) return;
  for (const listener of listeners) {
    try {
      await listener(ctx, [...new Set(recipients)]);
    } catch (err) {
      console.warn("a notices listener failed", err instanceof Error ? err.message : String(err));
    }
  }
}
