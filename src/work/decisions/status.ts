import { sql } from "drizzle-orm";
import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import { clearMarkStatement } from "../memory/model";
import { DECISION_STATUSES, decisionSchema, findDecision, setDecisionStatusStatement } from "./model";

export const decisionSetStatusTool = defineTool({
  name: "decision_set_status",
  title: "Set a decision's status",
  toolset: "decisions",
  description: "Move a decision's status; its content stays as logged.",
  input: z.object({
    decision_id: z.string().min(1).max(100).describe("The decision."),
    status: z.enum(DECISION_STATUSES).describe("The new status."),
  }),
  output: z.object({ decision: decisionSchema.describe("The decision after the change."), changed: z.boolean().describe("False when it already had that status.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const before = await findDecision(ctx, input.decision_id);
    const now = iso(ctx.clock.now());
    // Whoever sets the status has looked at the decision: a stale mark from a push goes either way.
    if (before.status === input.status) {
      if (before.stale === null) return { decision: before, changed: false };
      await clearMarkStatement(ctx, "decision", before.id, now).run();
      return { decision: await findDecision(ctx, before.id), changed: false };
    }
    const [updated] = await ctx.d1.batch<{ id: string }>([
      setDecisionStatusStatement(ctx, before.id, before.status, input.status, now),
      activityStatement(ctx, {
        verb: `decision.${input.status}`,
        objectType: "decision",
        objectId: before.id,
        projectId: before.project_id,
        summary: `${before.title}: ${before.status} → ${input.status}`,
        ifPreviousChanged: true,
      }),
      // Only with the move itself: a call that lost the race writes nothing.
      clearMarkStatement(
        ctx,
        "decision",
        before.id,
        now,
        sql`EXISTS (SELECT 1 FROM decisions g WHERE g.tenant_id = ${ctx.tenantId} AND g.id = ${before.id} AND g.status = ${input.status} AND g.status_changed_at = ${now})`,
      ),
    ]);
    if (updated!.results.length === 0) throw new ToolError("conflict", "The decision's status changed while this call ran.", { hint: "Re-read it and retry.", retryable: true });
    return { decision: await findDecision(ctx, before.id), changed: true };
  },
  summarize: (r) => `${r.decision.title} is ${r.decision.status}.`,
});
