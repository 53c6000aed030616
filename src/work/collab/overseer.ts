/**
 * overseer_message: a person with an operator key interrupts an agent. The message is an ordinary
 * notification of kind `overseer`, so it travels every way a notice does (inbox, subscriptions,
 * outgoing webhooks), and the inbox puts it before everything else until it is read.
 */
import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { activityStatement, actorRefField, resolveActor } from "../shared";
import { deliverNotices } from "./inbox";

export const OVERSEER_KIND = "overseer";

export const overseerMessageTool = defineTool({
  name: "overseer_message",
  title: "Interrupt an agent",
  toolset: "coordination",
  description:
    "For people with an operator key: put a message at the top of an agent's inbox (notification_query and whoami list unread overseer messages first, and it reaches the agent's subscriptions and webhooks). Use it to stop, redirect or brief an agent mid-task.",
  input: z.object({
    to: z.array(actorRefField("An agent to tell.")).min(1).max(50).describe("The agents to interrupt (actor ids or names)."),
    message: z.string().trim().min(1).max(500).describe("What the agent must read first, in one or two sentences."),
  }),
  output: z.object({
    delivered: z.array(z.string()).describe("Actor ids told (each once, however often named)."),
  }),
  cost: { items: "to" },
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  run: async (ctx, input) => {
    if (!ctx.operator) {
      throw new ToolError("operator_required", "Overseer messages come from the people running this server, and this key is not an operator key.", {
        hint: "To reach another agent as a peer, comment on its task with @name (comment_add) or hand the work over (handoff_create); an operator key (npm run keys -- create … --operator) sends overseer messages.",
      });
    }
    const recipients = [...new Set(await Promise.all(input.to.map((ref) => resolveActor(ctx, ref))))];
    await ctx.d1.batch(
      recipients.map((actorId) => activityStatement(ctx, { verb: "overseer.message", objectType: "actor", objectId: actorId, summary: input.message.slice(0, 200), severity: "warn" })),
    );
    await deliverNotices(
      ctx,
      recipients.map((actorId) => ({ actorId, kind: OVERSEER_KIND, objectType: "actor", objectId: actorId, summary: input.message, fromActorId: ctx.actorId })),
    );
    return { delivered: recipients };
  },
  summarize: (r) => `Overseer message delivered to ${r.delivered.length} agent(s).`,
});
