import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import { closeHandoffStatement, findHandoff, handoffIdField, handoffSchema } from "./model";

export const handoffResolveTool = defineTool({
  name: "handoff_resolve",
  title: "Resolve a handoff",
  toolset: "handoffs",
  description: "Close a handoff as processed or cancelled; its creator or any recipient may.",
  input: z.object({
    handoff_id: handoffIdField,
    resolution: z.enum(["processed", "cancelled"]).default("processed").describe("How it ended."),
    note: z.string().max(2000).optional().describe("Why, or what came of it."),
  }),
  output: z.object({ handoff: handoffSchema.describe("The resolved handoff.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const h = await findHandoff(ctx, input.handoff_id);
    if (h.from_actor_id !== ctx.actorId && !h.to_actor_ids.includes(ctx.actorId)) {
      throw new ToolError("not_participant", "Only the handoff's creator or its recipients can resolve it.", { hint: "Comment on the work_request instead." });
    }
    if (h.status === "resolved" || h.status === "cancelled") throw new ToolError("handoff_closed", `This handoff is already ${h.status}.`, { hint: "Nothing to do." });
    const status = input.resolution === "cancelled" ? "cancelled" : "resolved";
    const now = iso(ctx.clock.now());
    const [updated] = await ctx.d1.batch<{ id: string }>([
      closeHandoffStatement(ctx, h.id, h.status, status, input.resolution, input.note ?? "", now),
      activityStatement(ctx, {
        verb: `handoff.${status}`,
        objectType: "work_request",
        objectId: h.id,
        projectId: h.related_project_id,
        summary: `${input.resolution}: ${h.title}`,
        ifPreviousChanged: true,
      }),
    ]);
    if (updated!.results.length === 0) throw new ToolError("conflict", "The handoff changed while this call ran.", { hint: "Re-read it and retry.", retryable: true });
    return { handoff: await findHandoff(ctx, h.id) };
  },
  summarize: (r) => `Handoff ${r.handoff.id} ${r.handoff.status}.`,
});
