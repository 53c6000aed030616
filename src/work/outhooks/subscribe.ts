/** webhook_subscribe: create, pause, resume or delete an outgoing webhook. */
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { iso } from "../../core/time";
import { dbOf, statementOf } from "../../db/client";
import { uuidv7 } from "../../db/ids";
import { outboundHookDeliveries, outboundHooks } from "../../db/schema";
import { dispatchHooks, requeueDue } from "./dispatch";
import { checkHookUrl, findHook, hookColumns, type HookRow, kindsField, MAX_HOOKS_PER_OWNER, MAX_URL_CHARS, subscriptionSchema, toSubscription } from "./model";

const SECRET_BYTES = 32;

const newSecret = () => Array.from(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)), (b) => b.toString(16).padStart(2, "0")).join("");

/**
 * The new row, unless the owner already has the most it may: the count and the insert in one
 * statement, so racing creates cannot pass the cap together. The cursor starts at the newest
 * notification, so a subscription hears of what comes after it, not the history.
 * Hand SQL: an insert whose row is conditional, which drizzle's insert cannot say.
 */
const INSERT_HOOK = `
  INSERT INTO outbound_hooks (id, tenant_id, owner_actor_id, url, secret, all_actors, kinds, label, active, cursor_seq, created_at, updated_at)
  SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, (SELECT COALESCE(MAX(seq), 0) FROM notifications), ?9, ?9
  WHERE (SELECT COUNT(*) FROM outbound_hooks WHERE tenant_id = ?2 AND owner_actor_id = ?3) < ?10`;

export const webhookSubscribeTool = defineTool({
  name: "webhook_subscribe",
  title: "Subscribe a URL to notifications",
  toolset: "coordination",
  description:
    "Have notifications POSTed to your URL as they arrive instead of polling: action create (default) takes url, kinds and recipients and answers the signing secret, shown only this once; pause, resume and delete take subscription_id. Each POST is signed (X-Ledger-Signature-256: HMAC-SHA256 of the body with the secret) and retried with backoff. recipients: all (every actor of the tenant) needs an operator key.",
  input: z.object({
    action: z
      .enum(["create", "pause", "resume", "delete"])
      .default("create")
      .describe("create a subscription; pause it (nothing is sent; what arrives meanwhile is sent on resume); resume it; delete it and its delivery log."),
    url: z.string().min(1).max(MAX_URL_CHARS).optional().describe("create: the public https URL to POST to."),
    kinds: kindsField.optional(),
    recipients: z.enum(["mine", "all"]).optional().describe("create: mine (default) for your own notifications; all for every actor's of the tenant (operator keys only)."),
    label: z.string().max(200).optional().describe("create: a note to tell your subscriptions apart."),
    subscription_id: z.string().min(1).max(100).optional().describe("pause, resume, delete: the subscription."),
  }),
  output: z.object({
    action: z.enum(["create", "pause", "resume", "delete"]).describe("What was done."),
    subscription: subscriptionSchema.describe("The subscription as it is now (delete: its last state, inactive)."),
    secret: z.string().optional().describe("create only: the signing secret (64 hex characters), shown this once; the HMAC key is this text. Keep it where your receiver verifies signatures."),
  }),
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
  idempotency: "derived",
  run: async (ctx, input) => {
    const now = ctx.clock.now();
    if (input.action === "create") {
      if (input.subscription_id !== undefined) throw invalidInput("subscription_id is not taken by action create.", "Pass url (and optionally kinds, recipients, label) to create one.");
      if (input.url === undefined) throw invalidInput("action create needs url.", "Pass url: the public https URL your receiver listens on.");
      const recipients = input.recipients ?? "mine";
      if (recipients === "all" && !ctx.operator) {
        throw new ToolError("operator_required", "recipients: all covers every actor's notifications, which only an operator key may subscribe to.", {
          hint: "Subscribe to your own notifications (recipients: mine), or use an operator key (npm run keys -- create … --operator).",
        });
      }
      const url = checkHookUrl(ctx.env, input.url).href;
      const kinds = [...new Set(input.kinds ?? [])];
      const id = uuidv7(now.getTime());
      const secret = newSecret();
      const res = await ctx.d1
        .prepare(INSERT_HOOK)
        .bind(id, ctx.tenantId, ctx.actorId, url, secret, recipients === "all" ? 1 : 0, JSON.stringify(kinds), input.label ?? "", iso(now), MAX_HOOKS_PER_OWNER)
        .run();
      if ((res.meta.changes ?? 0) === 0) {
        throw new ToolError("too_many_subscriptions", `You have ${MAX_HOOKS_PER_OWNER} subscriptions already, the most an actor may have.`, {
          hint: "Delete one you no longer use (webhook_deliveries lists them), or widen one's kinds instead of adding another.",
        });
      }
      return { action: "create" as const, subscription: toSubscription(await findHook(ctx, id)), secret };
    }
    if (input.url !== undefined || input.kinds !== undefined || input.recipients !== undefined || input.label !== undefined) {
      throw invalidInput(`action ${input.action} takes only subscription_id.`, "To change a subscription's url, kinds or recipients, delete it and create another.");
    }
    if (input.subscription_id === undefined) throw invalidInput(`action ${input.action} needs subscription_id.`, "webhook_deliveries lists your subscriptions and their ids.");
    const hook = await findHook(ctx, input.subscription_id);
    const h = outboundHooks;
    const mine = and(eq(h.tenantId, ctx.tenantId), eq(h.id, hook.id));
    if (input.action === "delete") {
      const db = dbOf(ctx);
      const d = outboundHookDeliveries;
      await ctx.d1.batch([statementOf(ctx.d1, db.delete(d).where(and(eq(d.tenantId, ctx.tenantId), eq(d.hookId, hook.id)))), statementOf(ctx.d1, db.delete(h).where(mine))]);
      return { action: "delete" as const, subscription: toSubscription({ ...hook, active: 0 }) };
    }
    const active = input.action === "resume" ? 1 : 0;
    const row: HookRow =
      (await dbOf(ctx)
        .update(h)
        .set({ active, updatedAt: iso(now) })
        .where(mine)
        .returning(hookColumns)
        .get()) ?? hook;
    if (active === 1 && hook.active === 0) {
      // What the pause held back: deliveries already due, and notifications that came meanwhile.
      ctx.waitUntil(
        Promise.all([requeueDue(ctx.env, ctx.tenantId, hook.id, now), dispatchHooks(ctx.env, [row], now)]).catch((err: unknown) =>
          console.error(`[outhooks] resuming subscription ${hook.id}: ${String(err)}; the sweep catches up`),
        ),
      );
    }
    return { action: input.action, subscription: toSubscription(row) };
  },
  summarize: (r) => `${r.action === "create" ? "Created" : r.action === "delete" ? "Deleted" : r.action === "pause" ? "Paused" : "Resumed"} subscription ${r.subscription.id} → ${r.subscription.url}.`,
});
