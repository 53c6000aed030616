/** webhook_replay: send deliveries again, one by id or every failed one since a time. */
import { and, asc, eq, gte, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { excerpt, invalidInput, notFound, ToolError } from "../../core/errors";
import { iso, resolveSince } from "../../core/time";
import { dbOf, jsonValues } from "../../db/client";
import { outboundHookDeliveries, outboundHooks } from "../../db/schema";
import { deliveryColumns, deliverySchema, findHook, hookIsActive, MAX_ATTEMPTS, visibleHooks } from "./model";
import { enqueueDeliveries } from "./send";

/** Deliveries one call sends again; a repeat call takes the next ones (those sent are pending by then). */
const MAX_REPLAY = 100;

export const webhookReplayTool = defineTool({
  name: "webhook_replay",
  title: "Send webhook deliveries again",
  toolset: "coordination",
  description: `Send a delivery again (delivery_id, delivered or failed), or every failed delivery since a time (since; at most ${MAX_REPLAY} a call). Each is queued at once as a new attempt with a fresh round of ${MAX_ATTEMPTS} retries, recorded in webhook_deliveries; the receiver gets the same delivery id again.`,
  input: z.object({
    delivery_id: z.string().min(1).max(100).optional().describe("The delivery to send again."),
    since: z.string().min(1).max(64).optional().describe("Instead: every delivery that failed since then (15m, 24h, 7d or ISO-8601)."),
    subscription_id: z.string().min(1).max(100).optional().describe("With since: only this subscription's."),
  }),
  output: z.object({
    items: z.array(deliverySchema).describe("The deliveries queued again, as they are now."),
    more: z.boolean().describe(`true when more than ${MAX_REPLAY} matched: call again for the rest.`),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  idempotency: "derived",
  run: async (ctx, input) => {
    if ((input.delivery_id === undefined) === (input.since === undefined)) {
      throw invalidInput("Pass either delivery_id or since.", "delivery_id sends one delivery again; since sends every delivery that failed since then.");
    }
    if (input.delivery_id !== undefined && input.subscription_id !== undefined) {
      throw invalidInput("subscription_id goes with since, not delivery_id.", "A delivery id already names its subscription.");
    }
    const now = ctx.clock.now();
    const db = dbOf(ctx);
    const d = outboundHookDeliveries;
    const h = outboundHooks;
    const visible = db
      .select({ id: h.id })
      .from(h)
      .where(and(visibleHooks(ctx), hookIsActive));
    let ids: string[];
    let more = false;
    if (input.delivery_id !== undefined) {
      const row = await db
        .select({ id: d.id, status: d.status, hook_id: d.hookId })
        .from(d)
        .where(and(eq(d.tenantId, ctx.tenantId), eq(d.id, input.delivery_id), inArray(d.hookId, db.select({ id: h.id }).from(h).where(visibleHooks(ctx)))))
        .get();
      if (!row) throw notFound("Delivery", excerpt(input.delivery_id, 60), "webhook_deliveries lists your subscriptions' deliveries and their ids.");
      if ((await findHook(ctx, row.hook_id)).active === 0) {
        throw new ToolError("subscription_paused", "The delivery's subscription is paused; nothing is sent while it is.", {
          hint: "Resume it (webhook_subscribe action resume), then replay.",
        });
      }
      if (row.status === "pending") {
        throw new ToolError("conflict", "The delivery is still pending: its next attempt is already scheduled.", {
          hint: "Wait for it (webhook_deliveries shows next_attempt_at); replay once it is delivered or failed.",
        });
      }
      ids = [row.id];
    } else {
      const since = resolveSince(input.since!, now);
      if (since === null) throw invalidInput(`could not parse since '${excerpt(input.since!, 64)}'`, "Use 15m, 24h, 7d, 5mo, 1y or an ISO-8601 time.");
      const only = input.subscription_id === undefined ? undefined : await findHook(ctx, input.subscription_id);
      const rows = await db
        .select({ id: d.id })
        .from(d)
        .where(and(eq(d.tenantId, ctx.tenantId), eq(d.status, "failed"), gte(d.updatedAt, since), only ? eq(d.hookId, only.id) : undefined, inArray(d.hookId, visible)))
        .orderBy(asc(d.updatedAt))
        .limit(MAX_REPLAY + 1)
        .all();
      more = rows.length > MAX_REPLAY;
      ids = rows.slice(0, MAX_REPLAY).map((r) => r.id);
    }
    if (ids.length === 0) return { items: [], more };
    // Finished rows only, each a fresh round of attempts due now; a row that changed meanwhile is left out.
    const replayed = await db
      .update(d)
      .set({ status: "pending", attemptLimit: sql`${d.attempts} + ${MAX_ATTEMPTS}`, nextAttemptAt: iso(now), updatedAt: iso(now), replayedAt: iso(now) })
      .where(and(eq(d.tenantId, ctx.tenantId), inArray(d.id, jsonValues(ids)), inArray(d.status, ["delivered", "failed"]), inArray(d.hookId, visible)))
      .returning(deliveryColumns)
      .all();
    // A send that fails leaves them pending and due: the sweep queues them.
    await enqueueDeliveries(
      ctx.env,
      replayed.map((r) => ({ tenant_id: ctx.tenantId, delivery_id: r.id })),
    );
    replayed.sort((a, b) => (a.id < b.id ? 1 : -1));
    return { items: replayed, more };
  },
  summarize: (r) => `${r.items.length} delivery(ies) queued again${r.more ? "; more remain" : ""}.`,
});
