import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import {
  FEEDBACK_STATUSES,
  findRequest,
  historyEntrySchema,
  historyOf,
  insertRequestEventStatement,
  isLive,
  notifyFilerStatement,
  requestSchema,
  setRequestStatusStatement,
  transitionProblem,
} from "./model";
import { announceNotices } from "../collab/inbox";

export const featureRequestSetStatusTool = defineTool({
  name: "feature_request_set_status",
  title: "Move a feature request",
  toolset: "feedback",
  description:
    "Operators: move a filed request along open → accepted → in_progress → shipped, or to declined from any live status, with a note the filer reads. Every move is kept in the request's history and notifies the filer. Operator keys only; shipped and declined are final.",
  input: z.object({
    id: z.string().min(1).max(100).describe("The request."),
    status: z.enum(["accepted", "in_progress", "shipped", "declined"]).describe("The new status."),
    note: z.string().max(2000).optional().describe("What the filer should know (becomes the resolution note); omit to keep the current one."),
    expected_status: z.enum(FEEDBACK_STATUSES).optional().describe("Refuse with conflict unless the request still has this status."),
  }),
  output: z.object({
    request: requestSchema.describe("The request after the move."),
    changed: z.boolean().describe("False when it already had that status."),
    history: z.array(historyEntrySchema).describe("Every move, oldest first."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    if (!ctx.operator) {
      throw new ToolError("operator_required", "Feature requests are moved by this server's operators, and this key is not an operator key.", {
        hint: "File or add to a request with feature_request_create and follow it with feature_request_query; an operator key (npm run keys -- create … --operator) moves it.",
      });
    }
    const before = await findRequest(ctx, input.id);
    if (input.expected_status && before.status !== input.expected_status) {
      throw new ToolError("conflict", `The request is ${before.status}, not ${input.expected_status}.`, { hint: "Re-read it with feature_request_query and decide again." });
    }
    if (before.status === input.status) return { request: before, changed: false, history: await historyOf(ctx, before.id) };
    const problem = transitionProblem(before.status, input.status);
    if (problem) {
      throw new ToolError("invalid_transition", `Cannot move the request from ${before.status} to ${input.status}: ${problem}.`, {
        hint: isLive(before.status)
          ? "Move it forward (open → accepted → in_progress → shipped) or to declined."
          : "A request that comes back after it shipped or was declined is filed again with feature_request_create.",
      });
    }
    const now = iso(ctx.clock.now());
    const note = input.note ?? "";
    // One batch: the compare-and-swap, then the history, activity and the filer's notice only if it landed.
    const [updated] = await ctx.d1.batch<{ id: string }>([
      setRequestStatusStatement(ctx, before.id, before.status, input.status, input.note ?? null, now),
      insertRequestEventStatement(ctx, uuidv7(), before.id, before.status, input.status, note, now),
      activityStatement(ctx, {
        verb: `feature_request.${input.status}`,
        objectType: "feature_request",
        objectId: before.id,
        summary: `${before.title}: ${before.status} → ${input.status}`,
        ifPreviousChanged: true,
      }),
      notifyFilerStatement(ctx, uuidv7(), before.actor_id, before.id, `Your request "${before.title}" is now ${input.status}`.slice(0, 300), now),
    ]);
    if (updated!.results.length === 0) throw new ToolError("conflict", "The request's status changed while this call ran.", { hint: "Re-read it and retry.", retryable: true });
    if (before.actor_id !== ctx.actorId) await announceNotices(ctx, [before.actor_id]);
    return { request: await findRequest(ctx, before.id), changed: true, history: await historyOf(ctx, before.id) };
  },
  summarize: (r) => `${r.request.title} is ${r.request.status}.`,
});
