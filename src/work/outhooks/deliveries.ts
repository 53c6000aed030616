/** webhook_deliveries: the caller's subscriptions and their delivery log. */
import { and, desc, eq, inArray, lt } from "drizzle-orm";
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { dbOf } from "../../db/client";
import { outboundHookDeliveries, outboundHooks } from "../../db/schema";
import { cursorField, decodeKeyset, keysetPage, limitField } from "../shared";
import { DELIVERY_STATUSES, deliveryColumns, deliverySchema, findHook, hookColumns, subscriptionSchema, toSubscription, visibleHooks } from "./model";

/** An operator's tenant may hold many owners' subscriptions; the list is bounded, newest first. */
const MAX_LISTED_HOOKS = 100;

export const webhookDeliveriesTool = defineTool({
  name: "webhook_deliveries",
  title: "Your webhooks and their deliveries",
  toolset: "coordination",
  description:
    "Your outgoing webhook subscriptions (an operator key: the tenant's) and their delivery log, newest first: each delivery's status (pending, delivered, failed), attempts, last HTTP status and error, and when the next attempt is due. Secrets are never shown again.",
  input: z.object({
    subscription_id: z.string().min(1).max(100).optional().describe("Only this subscription and its deliveries."),
    status: z.enum(DELIVERY_STATUSES).optional().describe("Only deliveries in this status."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    subscriptions: z.array(subscriptionSchema).describe(`The subscriptions you may see, newest first (at most ${MAX_LISTED_HOOKS}).`),
    items: z.array(deliverySchema).describe("Deliveries, newest first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const db = dbOf(ctx);
    const only = input.subscription_id === undefined ? undefined : await findHook(ctx, input.subscription_id);
    const hooks = only ? [only] : await db.select(hookColumns).from(outboundHooks).where(visibleHooks(ctx)).orderBy(desc(outboundHooks.id)).limit(MAX_LISTED_HOOKS).all();
    const after = decodeKeyset(input.cursor, 1);
    const d = outboundHookDeliveries;
    // An agent key reads the log of its own subscriptions only; an operator's, the tenant's.
    const ownHooks = db.select({ id: outboundHooks.id }).from(outboundHooks).where(visibleHooks(ctx));
    const rows = await db
      .select(deliveryColumns)
      .from(d)
      .where(
        and(
          eq(d.tenantId, ctx.tenantId),
          only ? eq(d.hookId, only.id) : ctx.operator ? undefined : inArray(d.hookId, ownHooks),
          input.status ? eq(d.status, input.status) : undefined,
          after ? lt(d.id, String(after[0])) : undefined,
        ),
      )
      .orderBy(desc(d.id))
      .limit(input.limit + 1)
      .all();
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.id]);
    return { subscriptions: hooks.map(toSubscription), items: page, ...cursor };
  },
  summarize: (r) => `${r.subscriptions.length} subscription(s), ${r.items.length} delivery(ies).`,
});
