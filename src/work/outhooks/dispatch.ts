/**
 * From the outbox (notifications) to the queue: for each active subscription, the notifications
 * past its cursor that it matches become delivery rows, the cursor moves past what was read, and
 * the rows that landed are queued. Rows and cursor move in one batch, and a row lands once per
 * (subscription, notification), so any number of dispatchers may run at once (a kick per notice,
 * the cron sweep) and each delivery is queued once. A kick that never ran (the worker went away
 * after the response) only delays: the sweep finds the subscription behind and catches it up.
 */
import { and, asc, eq, gt, inArray, lt, lte, or, sql } from "drizzle-orm";
import { iso } from "../../core/time";
import { dbOf, jsonValues, statementOf } from "../../db/client";
import { uuidv7 } from "../../db/ids";
import { notifications, outboundHookDeliveries, outboundHooks } from "../../db/schema";
import type { Env } from "../../env";
import type { DeliveryCtx } from "../collab/inbox";
import { jsonArray } from "../shared";
import { deliveryIsFinished, deliveryIsPending, hookIsActive, type HookRow, kindMatcher, MAX_ATTEMPTS } from "./model";
import { enqueueDeliveries, type HookMessage } from "./send";

/** Notifications read per step; each step is one batch. */
const PAGE = 100;
/** Steps per subscription per dispatch; a subscription further behind is finished by the next kick or the sweep. */
const MAX_PAGES = 10;
/** A pending delivery this far past its due time lost its message (a failed send, a killed worker). */
export const STALE_PENDING_MS = 10 * 60_000;
/** Finished deliveries are kept this long in the log (for webhook_deliveries and webhook_replay). */
export const LOG_RETENTION_MS = 30 * 24 * 60 * 60_000;
const SWEEP_HOOKS = 100;
const SWEEP_DELIVERIES = 500;
const RETENTION_BATCH = 5000;

type DispatchHook = Pick<HookRow, "id" | "tenant_id" | "owner_actor_id" | "all_actors" | "kinds" | "cursor_seq">;

const dispatchColumns = {
  id: outboundHooks.id,
  tenant_id: outboundHooks.tenantId,
  owner_actor_id: outboundHooks.ownerActorId,
  all_actors: outboundHooks.allActors,
  kinds: outboundHooks.kinds,
  cursor_seq: outboundHooks.cursorSeq,
};

/**
 * The page's matching notifications as delivery rows, only while the subscription is still active.
 * Hand SQL: an insert from json_each with a conflict target on the (subscription, notification)
 * index and a condition on another table, which drizzle's insert cannot say.
 */
const INSERT_DELIVERIES = `
  INSERT INTO outbound_hook_deliveries (id, tenant_id, hook_id, notification_id, notification_seq, recipient_actor_id, kind,
    status, attempts, attempt_limit, last_status, last_error, next_attempt_at, created_at, updated_at, delivered_at, replayed_at)
  SELECT json_extract(j.value, '$.id'), ?1, ?2, json_extract(j.value, '$.notification_id'), json_extract(j.value, '$.seq'),
    json_extract(j.value, '$.actor_id'), json_extract(j.value, '$.kind'), 'pending', 0, ?3, NULL, '', ?4, ?4, ?4, NULL, NULL
  FROM json_each(?5) j
  WHERE EXISTS (SELECT 1 FROM outbound_hooks h WHERE h.tenant_id = ?1 AND h.id = ?2 AND h.active = 1)
  ON CONFLICT (hook_id, notification_id) DO NOTHING
  RETURNING id`;

/** Moves one subscription's cursor through the outbox; returns how many deliveries it queued. */
async function dispatchHook(env: Env, hook: DispatchHook, now: Date): Promise<number> {
  const db = dbOf({ d1: env.DB });
  const matches = kindMatcher(jsonArray<string>(hook.kinds));
  const n = notifications;
  let cursor = hook.cursor_seq;
  let queued = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const rows = await db
      .select({ seq: n.seq, notification_id: n.id, actor_id: n.actorId, kind: n.kind })
      .from(n)
      .where(and(eq(n.tenantId, hook.tenant_id), hook.all_actors === 1 ? undefined : eq(n.actorId, hook.owner_actor_id), gt(n.seq, cursor)))
      .orderBy(asc(n.seq))
      .limit(PAGE)
      .all();
    if (rows.length === 0) break;
    const last = rows[rows.length - 1]!.seq;
    const matched = rows.filter((r) => matches(r.kind)).map((r) => ({ ...r, id: uuidv7(now.getTime()) }));
    const advance = statementOf(
      env.DB,
      db
        .update(outboundHooks)
        .set({ cursorSeq: last })
        .where(and(eq(outboundHooks.tenantId, hook.tenant_id), eq(outboundHooks.id, hook.id), hookIsActive, lt(outboundHooks.cursorSeq, last))),
    );
    const insert = env.DB.prepare(INSERT_DELIVERIES).bind(hook.tenant_id, hook.id, MAX_ATTEMPTS, iso(now), JSON.stringify(matched));
    const [inserted] = await env.DB.batch<{ id: string }>(matched.length > 0 ? [insert, advance] : [advance]);
    const landed = matched.length > 0 ? inserted!.results.map((r) => r.id) : [];
    if (landed.length > 0) {
      // A failed send leaves the rows pending: the sweep queues them once they are overdue.
      await enqueueDeliveries(
        env,
        landed.map((id): HookMessage => ({ tenant_id: hook.tenant_id, delivery_id: id })),
      );
      queued += landed.length;
    }
    cursor = last;
    if (rows.length < PAGE) break;
  }
  return queued;
}

export async function dispatchHooks(env: Env, hooks: readonly DispatchHook[], now: Date): Promise<number> {
  let queued = 0;
  for (const hook of hooks) {
    try {
      queued += await dispatchHook(env, hook, now);
    } catch (err) {
      console.error(`[outhooks] dispatching subscription ${hook.id} failed; the sweep retries: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return queued;
}

/**
 * The notices listener (registered by the catalog): the tenant's active subscriptions that cover a
 * recipient are dispatched after the response when the caller can wait, else at once.
 */
export async function kickOutboundHooks(ctx: DeliveryCtx, recipients: string[]): Promise<void> {
  const env = ctx.env;
  if (!env?.OUTBOUND_HOOKS) return;
  const h = outboundHooks;
  const hooks = await dbOf(ctx)
    .select(dispatchColumns)
    .from(h)
    .where(and(eq(h.tenantId, ctx.tenantId), hookIsActive, or(eq(h.allActors, 1), inArray(h.ownerActorId, jsonValues(recipients)))))
    .all();
  if (hooks.length === 0) return;
  const work = dispatchHooks(env, hooks, ctx.clock.now());
  if (ctx.waitUntil) ctx.waitUntil(work);
  else await work;
}

/** Queues a subscription's pending deliveries that are due (resume: what its pause held back). */
export async function requeueDue(env: Env, tenantId: string, hookId: string, now: Date): Promise<number> {
  const d = outboundHookDeliveries;
  const due = await dbOf({ d1: env.DB })
    .select({ tenant_id: d.tenantId, delivery_id: d.id })
    .from(d)
    .where(and(eq(d.tenantId, tenantId), eq(d.hookId, hookId), deliveryIsPending, lte(d.nextAttemptAt, iso(now))))
    .limit(SWEEP_DELIVERIES)
    .all();
  if (due.length > 0) await enqueueDeliveries(env, due);
  return due.length;
}

/**
 * The cron backstop: subscriptions behind the outbox are caught up, deliveries whose message was
 * lost are queued again, and finished deliveries past retention leave the log.
 */
export async function sweepOutboundHooks(env: Env, now: Date): Promise<string> {
  const db = dbOf({ d1: env.DB });
  const h = outboundHooks;
  const behind = await db
    .select(dispatchColumns)
    .from(h)
    .where(and(hookIsActive, sql`EXISTS (SELECT 1 FROM ${notifications} n WHERE n.tenant_id = ${h.tenantId} AND n.seq > ${h.cursorSeq} AND (${h.allActors} = 1 OR n.actor_id = ${h.ownerActorId}))`))
    .limit(SWEEP_HOOKS)
    .all();
  const queued = await dispatchHooks(env, behind, now);

  const d = outboundHookDeliveries;
  const lost = await db
    .select({ tenant_id: d.tenantId, delivery_id: d.id })
    .from(d)
    .where(
      and(
        deliveryIsPending,
        lte(d.nextAttemptAt, iso(new Date(now.getTime() - STALE_PENDING_MS))),
        sql`EXISTS (SELECT 1 FROM ${outboundHooks} h WHERE h.tenant_id = ${d.tenantId} AND h.id = ${d.hookId} AND h.active = 1)`,
      ),
    )
    .orderBy(asc(d.nextAttemptAt))
    .limit(SWEEP_DELIVERIES)
    .all();
  if (lost.length > 0 && !(await enqueueDeliveries(env, lost))) throw new Error(`${lost.length} overdue delivery(ies) could not be queued`);

  // rowid bounds the delete: SQLite's DELETE takes no LIMIT.
  const expired = db
    .select({ rowid: sql`rowid` })
    .from(d)
    .where(and(deliveryIsFinished, lt(d.updatedAt, iso(new Date(now.getTime() - LOG_RETENTION_MS)))))
    .limit(RETENTION_BATCH);
  const dropped = await db
    .delete(d)
    .where(inArray(sql`rowid`, expired))
    .run();
  return `${behind.length} subscription(s) behind, ${queued} delivery(ies) queued; ${lost.length} overdue queued again; ${dropped.meta.changes ?? 0} old log row(s) dropped`;
}
