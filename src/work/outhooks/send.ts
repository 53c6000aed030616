/**
 * The OUTBOUND_HOOKS queue's consumer: one message names one delivery, which is POSTed signed to its
 * subscription's URL. The delivery row, not the message, says whether an attempt is due: a claim
 * (one compare-and-swap) takes the attempt, so a message sent twice (two kicks, the sweep, a replay)
 * makes one POST. A non-2xx answer or no answer is retried through the queue with exponential
 * backoff until the row's attempt limit, then the delivery is failed.
 */
import { sign } from "@octokit/webhooks-methods";
import { and, eq, lte, sql } from "drizzle-orm";
import { ToolError } from "../../core/errors";
import { type Clock, iso, systemClock } from "../../core/time";
import { dbOf } from "../../db/client";
import { actors, notifications, outboundHookDeliveries, outboundHooks } from "../../db/schema";
import type { Env } from "../../env";
import { resolvePublicHost } from "../../net/public-fetch";
import { allowsPrivateTargets, checkHookUrl, deliveryIsPending } from "./model";

/** The queue's name in wrangler.toml; the Worker's queue handler dispatches on it. */
export const OUTBOUND_HOOKS_QUEUE = "agent-ledger-outbound-hooks";

export interface HookMessage {
  tenant_id: string;
  delivery_id: string;
}

/** The whole exchange with a receiver: DNS check, connection, answer headers. */
export const POST_TIMEOUT_MS = 10_000;
/** A claimed attempt that never finished (the isolate went away) may be taken again after this. */
const CLAIM_LEASE_MS = 2 * 60_000;
/** A retried message may come back a little before the row's next_attempt_at. */
const CLAIM_SLACK_MS = 15_000;
const SEND_BATCH = 100;
const MAX_ERROR_CHARS = 300;

/** 30 s, 1 min, 2 min, … at most an hour: eight attempts span about an hour. */
export const retryDelaySeconds = (attempts: number): number => Math.min(3600, 30 * 2 ** Math.max(0, attempts - 1));

/** Sends delivery messages; false (and a log line) when the queue could not take them: the sweep sends them later. */
export async function enqueueDeliveries(env: Pick<Env, "OUTBOUND_HOOKS">, messages: readonly HookMessage[]): Promise<boolean> {
  try {
    for (let i = 0; i < messages.length; i += SEND_BATCH) {
      await env.OUTBOUND_HOOKS.sendBatch(messages.slice(i, i + SEND_BATCH).map((body) => ({ body, contentType: "json" as const })));
    }
    return true;
  } catch (err) {
    console.error(`[outhooks] could not queue ${messages.length} delivery(ies); the outbound_hooks sweep will: ${String(err)}`);
    return false;
  }
}

const isMessage = (b: unknown): b is HookMessage => {
  const m = b as Partial<HookMessage> | null;
  return typeof m === "object" && m !== null && typeof m.tenant_id === "string" && typeof m.delivery_id === "string";
};

/** `sha256=<hex>` of the body, as GitHub's X-Hub-Signature-256, so the same verifiers work. */
export const signatureOf = (secret: string, body: string): Promise<string> => sign(secret, body);

interface Outcome {
  /** HTTP status, when the receiver answered. */
  status: number | null;
  error: string;
  /** Refused before sending (the target is not public): retrying cannot help. */
  refused: boolean;
}

/** POSTs to a target that passes public-fetch's checks (unless development allows private ones), following no redirect. */
async function post(env: Env, rawUrl: string, body: string, headers: Record<string, string>): Promise<Outcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), POST_TIMEOUT_MS);
  try {
    const url = checkHookUrl(env, rawUrl);
    if (!allowsPrivateTargets(env)) await resolvePublicHost(url, controller.signal);
    const res = await fetch(url.href, { method: "POST", body, headers, redirect: "manual", signal: controller.signal });
    await res.body?.cancel().catch(() => {});
    const redirect = res.status >= 300 && res.status < 400;
    return { status: res.status, error: res.ok ? "" : `answered HTTP ${res.status}${redirect ? " (redirects are not followed)" : ""}`, refused: false };
  } catch (err) {
    if (controller.signal.aborted) return { status: null, error: `no answer within ${POST_TIMEOUT_MS / 1000} s`, refused: false };
    const refused = err instanceof ToolError && err.code === "url_not_allowed";
    const message = err instanceof Error ? err.message : String(err);
    return { status: null, error: refused ? `refused: ${message}` : `request failed: ${message}`, refused };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Takes the delivery's next attempt if one is due: pending, due (or about to be), and its
 * subscription active. Counting the attempt first means an attempt that kills the worker counts too.
 */
async function claim(env: Env, m: HookMessage, now: Date) {
  const t = outboundHookDeliveries;
  return dbOf({ d1: env.DB })
    .update(t)
    .set({ attempts: sql`${t.attempts} + 1`, nextAttemptAt: iso(new Date(now.getTime() + CLAIM_LEASE_MS)), updatedAt: iso(now) })
    .where(
      and(
        eq(t.tenantId, m.tenant_id),
        eq(t.id, m.delivery_id),
        deliveryIsPending,
        lte(t.nextAttemptAt, iso(new Date(now.getTime() + CLAIM_SLACK_MS))),
        sql`EXISTS (SELECT 1 FROM ${outboundHooks} h WHERE h.tenant_id = ${t.tenantId} AND h.id = ${t.hookId} AND h.active = 1)`,
      ),
    )
    .returning({ hook_id: t.hookId, notification_id: t.notificationId, attempts: t.attempts, attempt_limit: t.attemptLimit })
    .get();
}

/** What a receiver gets: the notification, whose it is, and which delivery and attempt this is. */
async function payloadOf(env: Env, m: HookMessage, notificationId: string) {
  const n = notifications;
  return dbOf({ d1: env.DB })
    .select({
      id: n.id,
      kind: n.kind,
      object_type: n.objectType,
      object_id: n.objectId,
      summary: n.summary,
      actor_id: n.actorId,
      actor_name: sql<string>`COALESCE(${actors.name}, '')`,
      from_actor_id: n.fromActorId,
      created_at: n.createdAt,
    })
    .from(n)
    .leftJoin(actors, and(eq(actors.tenantId, n.tenantId), eq(actors.id, n.actorId)))
    .where(and(eq(n.tenantId, m.tenant_id), eq(n.id, notificationId)))
    .get();
}

export type AttemptResult = { outcome: "delivered" | "failed" | "not_due" } | { outcome: "retry"; delaySeconds: number };

/** One attempt at the delivery a message names, recorded on its row. */
export async function attemptDelivery(env: Env, m: HookMessage, clock: Clock = systemClock): Promise<AttemptResult> {
  const now = clock.now();
  const claimed = await claim(env, m, now);
  if (!claimed) return { outcome: "not_due" };
  const db = dbOf({ d1: env.DB });
  const [hook, notice] = await Promise.all([
    db
      .select({ url: outboundHooks.url, secret: outboundHooks.secret })
      .from(outboundHooks)
      .where(and(eq(outboundHooks.tenantId, m.tenant_id), eq(outboundHooks.id, claimed.hook_id)))
      .get(),
    payloadOf(env, m, claimed.notification_id),
  ]);
  let result: Outcome;
  if (!hook || !notice) {
    result = { status: null, error: hook ? "the notification no longer exists" : "the subscription no longer exists", refused: true };
  } else {
    const sentAt = Math.floor(now.getTime() / 1000);
    const { actor_id, actor_name, ...rest } = notice;
    // The timestamp is in the body, so the signature covers it; the header repeats it for convenience.
    const body = JSON.stringify({
      ...rest,
      actor: { id: actor_id, name: actor_name },
      delivery_id: m.delivery_id,
      subscription_id: claimed.hook_id,
      attempt: claimed.attempts,
      timestamp: sentAt,
    });
    result = await post(env, hook.url, body, {
      "content-type": "application/json",
      "user-agent": "agent-ledger-hooks/1",
      "x-ledger-event": notice.kind,
      "x-ledger-delivery": m.delivery_id,
      "x-ledger-timestamp": String(sentAt),
      "x-ledger-signature-256": await signatureOf(hook.secret, body),
    });
  }
  const delivered = result.status !== null && result.status >= 200 && result.status < 300;
  const finished = clock.now();
  const giveUp = !delivered && (result.refused || claimed.attempts >= claimed.attempt_limit);
  const delay = retryDelaySeconds(claimed.attempts);
  const t = outboundHookDeliveries;
  await db
    .update(t)
    .set({
      status: delivered ? "delivered" : giveUp ? "failed" : "pending",
      lastStatus: result.status,
      lastError: result.error.slice(0, MAX_ERROR_CHARS),
      nextAttemptAt: delivered || giveUp ? null : iso(new Date(finished.getTime() + delay * 1000)),
      updatedAt: iso(finished),
      ...(delivered ? { deliveredAt: iso(finished) } : {}),
    })
    // Only the attempt this call claimed is recorded: a row deleted or replayed meanwhile is left alone.
    .where(and(eq(t.tenantId, m.tenant_id), eq(t.id, m.delivery_id), eq(t.status, "pending"), eq(t.attempts, claimed.attempts)))
    .run();
  if (delivered) return { outcome: "delivered" };
  return giveUp ? { outcome: "failed" } : { outcome: "retry", delaySeconds: delay };
}

/** The queue consumer: the batch's deliveries in parallel (each its own receiver); a retry waits out its backoff. */
export async function handleOutboundBatch(batch: MessageBatch<unknown>, env: Env, clock: Clock = systemClock): Promise<void> {
  await Promise.all(
    batch.messages.map(async (msg) => {
      if (!isMessage(msg.body)) {
        console.error(`[outhooks] dropped a malformed delivery message ${msg.id}`);
        msg.ack();
        return;
      }
      try {
        const r = await attemptDelivery(env, msg.body, clock);
        if (r.outcome === "retry") msg.retry({ delaySeconds: r.delaySeconds });
        else msg.ack();
      } catch (err) {
        // The store failed around the attempt: the claimed row becomes due again once its lease runs out.
        console.error(`[outhooks] delivery ${msg.body.delivery_id} failed: ${err instanceof Error ? err.message : String(err)}`);
        msg.retry({ delaySeconds: CLAIM_LEASE_MS / 1000 });
      }
    }),
  );
}
