import { z } from "zod";
import { boundedJson } from "../../core/bounds";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import { findTask } from "../tasks/model";
import { answerStatements, findHandoff, handoffIdField, handoffSchema, LIVE, notifyVerdictStatement, sendTaskBackStatement, VERDICTS } from "./model";
import { announceNotices } from "../collab/inbox";

const responseObject = boundedJson(
  z
    .object({
      chosen_option: z.string().max(200).optional().describe("One of the handoff's option labels."),
      text: z.string().max(20_000).optional().describe("Free-text answer."),
      result_ref: z.string().max(500).optional().describe("Where the result is (URL, commit, task ref)."),
      verdict: z.enum(VERDICTS).optional().describe("A review's verdict; it resolves the review."),
    })
    .catchall(z.unknown())
    .refine((r) => Object.keys(r).length > 0, "response is empty"),
  { maxBytes: 65_536, maxDepth: 8 },
).describe("The answer; extra keys are kept.");

export const handoffRespondTool = defineTool({
  name: "handoff_respond",
  title: "Respond to a handoff",
  toolset: "handoffs",
  description: "Answer a handoff addressed to you: an offered option, free text where allowed, and a verdict for a review (guide: handoffs).",
  input: z.object({
    handoff_id: handoffIdField,
    response: responseObject,
  }),
  output: z.object({ handoff: handoffSchema.describe("The handoff with its response.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const h = await findHandoff(ctx, input.handoff_id);
    if (!h.to_actor_ids.includes(ctx.actorId)) throw new ToolError("not_recipient", "This handoff is not addressed to you.", { hint: "Only its recipients can respond." });
    if (!LIVE.includes(h.status)) throw new ToolError("handoff_closed", `This handoff is ${h.status}; it can no longer be answered.`, { hint: "Create a new handoff if more is needed." });
    if (h.status === "claimed" && h.claimed_by !== ctx.actorId)
      throw new ToolError("handoff_taken", `Another recipient (${h.claimed_by}) holds this handoff.`, { hint: "Only the recipient who claimed it can respond." });
    const r = input.response;
    if (r.chosen_option !== undefined && !h.options.some((o) => o.label === r.chosen_option)) {
      throw invalidInput(`chosen_option '${r.chosen_option}' is not one of the options.`, `Choose one of: ${h.options.map((o) => o.label).join(", ") || "(none offered: answer with text)"}.`);
    }
    if (!h.allow_free_text && r.chosen_option === undefined)
      throw invalidInput("This handoff needs one of its options as the answer.", `Set chosen_option to one of: ${h.options.map((o) => o.label).join(", ")}.`);
    const review = h.kind === "review";
    if (review && r.verdict === undefined) {
      throw new ToolError("verdict_required", "A review handoff is answered with a verdict.", {
        hint: "Set response.verdict to approved, changes_requested or rejected; text can say why. Only approved unlocks done on the task.",
      });
    }
    const verdict = review ? r.verdict! : null;
    const task = verdict && h.related_task_id ? await findTask(ctx, h.related_task_id) : null;
    const now = iso(ctx.clock.now());
    // Whoever does the task hears the verdict; the asker hears of the answer as before (once, if both are one actor).
    const verdictTo = task ? (task.assignee_actor_id ?? h.from_actor_id) : null;
    const notifyVerdict = verdictTo !== null && verdictTo !== ctx.actorId;
    const notifyAsker = !(notifyVerdict && verdictTo === h.from_actor_id);
    const sendBack = task !== null && (verdict === "changes_requested" || verdict === "rejected");
    const { statements, landed } = answerStatements(ctx, h, { response: r, verdict, resolve: review, from: [h.status], notifyAsker }, now);
    if (task && notifyVerdict) {
      const why = r.text ? `: ${r.text}` : "";
      statements.push(notifyVerdictStatement(ctx, uuidv7(), verdictTo, task.id, `${verdict} on ${task.ref}${why}`.slice(0, 300), now, landed));
    }
    if (task && sendBack) {
      statements.push(
        sendTaskBackStatement(ctx, task.id, now, landed),
        activityStatement(ctx, {
          verb: "task.in_progress",
          objectType: "task",
          objectId: task.id,
          projectId: task.project_id,
          summary: `${task.ref} in_review → in_progress (review: ${verdict})`,
          metadata: { changed: ["status"], from: "in_review", to: "in_progress", verdict, handoff_id: h.id },
          ifPreviousChanged: true,
        }),
      );
    }
    const [updated] = await ctx.d1.batch<{ id: string }>(statements);
    if (updated!.results.length === 0) throw new ToolError("conflict", "The handoff changed while this call ran.", { hint: "Re-read it and retry.", retryable: true });
    await announceNotices(ctx, [...(notifyAsker ? [h.from_actor_id] : []), ...(task && notifyVerdict && verdictTo ? [verdictTo] : [])]);
    return { handoff: await findHandoff(ctx, h.id) };
  },
  summarize: (r) => (r.handoff.verdict ? `Review ${r.handoff.id}: ${r.handoff.verdict} (resolved).` : `Responded to ${r.handoff.id}.`),
});
