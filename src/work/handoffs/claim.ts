import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { findHandoff, handoffIdField, handoffSchema } from "./model";

export const handoffClaimTool = defineTool({
  name: "handoff_claim",
  title: "Claim a handoff",
  toolset: "handoffs",
  description: "Claim an open handoff addressed to you; exactly one recipient wins.",
  input: z.object({ handoff_id: handoffIdField }),
  output: z.object({ handoff: handoffSchema.describe("The handoff, now claimed by you."), already: z.boolean().describe("True when you already held it.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const handoff = await findHandoff(ctx, input.handoff_id);
    const outcome = await ctx.env.CLAIMS.get(ctx.env.CLAIMS.idFromName(`${ctx.tenantId}:handoffs`)).claimHandoff({
      tenantId: ctx.tenantId,
      actorId: ctx.actorId,
      sessionId: ctx.sessionId,
      runId: ctx.runId ?? null,
      handoffId: handoff.id,
      nowMs: ctx.clock.now().getTime(),
    });
    if (!outcome.claimed) {
      if (outcome.reason === "not_recipient")
        throw new ToolError("not_recipient", "This handoff is not addressed to you.", { hint: "Only its recipients can claim it; inbox lists the ones addressed to you." });
      if (outcome.reason === "taken")
        throw new ToolError("handoff_taken", `Another recipient (${outcome.holder}) already claimed this handoff.`, { hint: "Leave it to them, or ask them with a comment on the work_request." });
      throw new ToolError("handoff_closed", `This handoff is ${handoff.status}; only open handoffs can be claimed.`, { hint: "handoff_query shows its response and resolution." });
    }
    return { handoff: await findHandoff(ctx, handoff.id), already: outcome.already };
  },
  summarize: (r) => `You hold handoff ${r.handoff.id}.`,
});
