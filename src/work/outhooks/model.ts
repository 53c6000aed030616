/**
 * Outgoing webhooks (docs/coordination.md: Outgoing webhooks): an actor's notifications, or with an operator
 * key every actor's of the tenant, POSTed signed to a URL it configured, so an agent hears of them
 * without polling. The notifications table is the outbox: a subscription keeps a cursor into it
 * (dispatch.ts), each matching notification becomes one delivery row, and the OUTBOUND_HOOKS queue
 * sends it (send.ts). A subscription and its log are seen only by its owner and operator keys.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { excerpt, notFound, ToolError } from "../../core/errors";
import { dbOf } from "../../db/client";
import { outboundHookDeliveries, outboundHooks } from "../../db/schema";
import type { Env } from "../../env";
import { checkPublicUrl } from "../../net/public-fetch";
import { jsonArray } from "../shared";

/** POSTs per delivery before it is marked failed; a replay grants as many again. */
export const MAX_ATTEMPTS = 8;
/** Subscriptions an actor may own (each notification fans out to every one that matches). */
export const MAX_HOOKS_PER_OWNER = 10;
export const MAX_KINDS = 20;
export const MAX_URL_CHARS = 2048;

// Literal, not bound: SQLite uses a partial index only when the query states the index's condition.
export const hookIsActive = sql`${outboundHooks.active} = 1`;
export const deliveryIsPending = sql`${outboundHookDeliveries.status} = 'pending'`;
export const deliveryIsFinished = sql`${outboundHookDeliveries.status} <> 'pending'`;

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/** A kind (`check.failed`) or a prefix of kinds (`check.*`, `check*`). Anchored, no nesting: linear on any input. */
const KIND_PATTERN = /^[a-z0-9][a-z0-9._:-]{0,63}\*?$/;

export const kindsField = z
  .array(z.string().min(1).max(65).regex(KIND_PATTERN, "a notification kind (letters, digits, '.', '_', ':', '-'), optionally ending in * for a prefix"))
  .max(MAX_KINDS)
  .describe("Only these notification kinds (mention, handoff, check.failed, paths.pushed, …); a trailing * takes a prefix (check.*). Empty: every kind.");

/** Whether a notification kind passes a subscription's filter. */
export function kindMatcher(kinds: readonly string[]): (kind: string) => boolean {
  if (kinds.length === 0) return () => true;
  const exact = new Set(kinds.filter((k) => !k.endsWith("*")));
  const prefixes = kinds.filter((k) => k.endsWith("*")).map((k) => k.slice(0, -1));
  return (kind) => exact.has(kind) || prefixes.some((p) => kind.startsWith(p));
}

/** Development only (src/env.ts): http and loopback or private hosts, for a receiver on this machine. */
export const allowsPrivateTargets = (env: Pick<Env, "OUTBOUND_HOOKS_ALLOW_PRIVATE"> | undefined): boolean => env?.OUTBOUND_HOOKS_ALLOW_PRIVATE === "1";

const URL_HINT = "Pass a public https URL your receiver listens on (e.g. https://hooks.example.com/ledger); local, private, link-local and metadata addresses and names are refused.";

/**
 * The checks a target URL passes before it is stored and again before every POST (where its name is
 * also resolved): public-fetch's, so the server cannot be aimed at itself or its neighbours.
 */
export function checkHookUrl(env: Pick<Env, "OUTBOUND_HOOKS_ALLOW_PRIVATE"> | undefined, raw: string): URL {
  if (!allowsPrivateTargets(env)) {
    try {
      return checkPublicUrl(raw);
    } catch (err) {
      if (err instanceof ToolError) throw new ToolError(err.code, err.message, { hint: URL_HINT });
      throw err;
    }
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ToolError("invalid_input", `url '${excerpt(raw)}' is not a valid absolute URL`, { hint: URL_HINT });
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username !== "" || url.password !== "") {
    throw new ToolError("url_not_allowed", `URL '${excerpt(url.origin)}' is not allowed: http(s) without credentials only.`, { hint: URL_HINT });
  }
  return url;
}

export interface HookRow {
  id: string;
  tenant_id: string;
  owner_actor_id: string;
  url: string;
  all_actors: number;
  kinds: string;
  label: string;
  active: number;
  cursor_seq: number;
  created_at: string;
  updated_at: string;
}

/** The columns of a subscription any reader gets (never its secret). */
export const hookColumns = {
  id: outboundHooks.id,
  tenant_id: outboundHooks.tenantId,
  owner_actor_id: outboundHooks.ownerActorId,
  url: outboundHooks.url,
  all_actors: outboundHooks.allActors,
  kinds: outboundHooks.kinds,
  label: outboundHooks.label,
  active: outboundHooks.active,
  cursor_seq: outboundHooks.cursorSeq,
  created_at: outboundHooks.createdAt,
  updated_at: outboundHooks.updatedAt,
};

export const subscriptionSchema = z.object({
  id: z.string().describe("Subscription id."),
  url: z.string().describe("Where deliveries are POSTed."),
  owner_actor_id: z.string().describe("Who created it."),
  recipients: z.enum(["mine", "all"]).describe("mine: its owner's notifications; all: every actor's of the tenant (operator keys)."),
  kinds: z.array(z.string()).describe("Kind filter (a trailing * is a prefix); empty: every kind."),
  label: z.string().describe("The owner's note on it."),
  active: z.boolean().describe("false while paused: nothing is sent until resumed."),
  created_at: z.string().describe("When it was created."),
  updated_at: z.string().describe("When it last changed."),
});
export type Subscription = z.infer<typeof subscriptionSchema>;

export const toSubscription = (r: HookRow): Subscription => ({
  id: r.id,
  url: r.url,
  owner_actor_id: r.owner_actor_id,
  recipients: r.all_actors === 1 ? "all" : "mine",
  kinds: jsonArray<string>(r.kinds),
  label: r.label,
  active: r.active === 1,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const deliverySchema = z.object({
  id: z.string().describe("Delivery id (the X-Ledger-Delivery header and the payload's delivery_id)."),
  subscription_id: z.string().describe("The subscription it was sent for."),
  notification_id: z.string().describe("The notification (the payload's id)."),
  kind: z.string().describe("The notification's kind."),
  recipient_actor_id: z.string().describe("Whose notification it is."),
  status: z.enum(DELIVERY_STATUSES).describe("pending (attempts to come), delivered (a 2xx answer) or failed (out of attempts, or refused)."),
  attempts: z.number().int().describe("POSTs made so far, replays included."),
  last_status: z.number().int().nullable().describe("The HTTP status of the last attempt, or null (none yet, or no answer)."),
  last_error: z.string().describe("Why the last attempt failed, or empty."),
  next_attempt_at: z.string().nullable().describe("When the next attempt is due while pending, else null."),
  created_at: z.string().describe("When the notification was matched to the subscription."),
  updated_at: z.string().describe("When it last changed (for failed: when it gave up)."),
  delivered_at: z.string().nullable().describe("When a 2xx answer came, or null."),
  replayed_at: z.string().nullable().describe("When webhook_replay last sent it again, or null."),
});

const d = outboundHookDeliveries;
export const deliveryColumns = {
  id: d.id,
  subscription_id: d.hookId,
  notification_id: d.notificationId,
  kind: d.kind,
  recipient_actor_id: d.recipientActorId,
  status: d.status,
  attempts: d.attempts,
  last_status: d.lastStatus,
  last_error: d.lastError,
  next_attempt_at: d.nextAttemptAt,
  created_at: d.createdAt,
  updated_at: d.updatedAt,
  delivered_at: d.deliveredAt,
  replayed_at: d.replayedAt,
};

/** The subscriptions a caller may see and change: its own, or with an operator key all of its tenant's. */
export const visibleHooks = (ctx: Pick<Ctx, "tenantId" | "actorId" | "operator">): SQL =>
  ctx.operator ? eq(outboundHooks.tenantId, ctx.tenantId) : and(eq(outboundHooks.tenantId, ctx.tenantId), eq(outboundHooks.ownerActorId, ctx.actorId))!;

/** A subscription the caller may see; another tenant's, or another actor's for an agent key, is not_found alike. */
export async function findHook(ctx: Ctx, id: string): Promise<HookRow> {
  const row = await dbOf(ctx)
    .select(hookColumns)
    .from(outboundHooks)
    .where(and(visibleHooks(ctx), eq(outboundHooks.id, id)))
    .get();
  if (!row) throw notFound("Subscription", excerpt(id, 60), "webhook_deliveries lists your subscriptions (an operator key sees the tenant's).");
  return row;
}
