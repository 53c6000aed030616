/** pause_review and resume_review (seed 004): steering a reactive review session. */
import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { pauseReview, resumeReview } from "../reactive-sessions/runner";
import { progressOf } from "../reactive-sessions/plan";
import { progressSchema, sessionIdField, statusField } from "./model";

const steerOutput = z.object({
  status: statusField,
  message: z.string().describe("What happened."),
  progress: progressSchema.describe("Steps done."),
});

const WRITE = { readOnly: false, destructive: false, idempotent: true, openWorld: false } as const;

export const pauseReviewTool = defineTool({
  name: "pause_review",
  title: "Pause a reactive review",
  toolset: "review",
  description: "Pause an executing reactive review session: no further step starts (one already running finishes). Pausing a paused session changes nothing.",
  input: z.object({ session_id: sessionIdField }),
  output: steerOutput,
  annotations: WRITE,
  run: async (ctx, input) => {
    const out = await pauseReview(ctx, input.session_id);
    return {
      status: out.state.status,
      message: out.changed ? `Review session ${input.session_id} paused` : `Review session ${input.session_id} is already paused`,
      progress: progressOf(out.state),
    };
  },
  summarize: (r) => r.message,
});

export const resumeReviewTool = defineTool({
  name: "resume_review",
  title: "Resume a reactive review",
  toolset: "review",
  description: "Resume a paused reactive review session from its next step. Resuming an executing session changes nothing.",
  input: z.object({ session_id: sessionIdField }),
  output: steerOutput,
  annotations: WRITE,
  run: async (ctx, input) => {
    const out = await resumeReview(ctx, input.session_id);
    return {
      status: out.state.status,
      message: out.changed
        ? `Review session ${input.session_id} resumed. Execution running in background. Use get_review_status to monitor progress.`
        : `Review session ${input.session_id} is already executing`,
      progress: progressOf(out.state),
    };
  },
  summarize: (r) => r.message,
});
