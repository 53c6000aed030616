/**
 * The reactive review room's shared shapes: the session fields every verb answers with. The
 * session itself and its steps are src/review/reactive-sessions/runner.ts.
 */
import { z } from "zod";
import { SESSION_STATUSES } from "../reactive-sessions/plan";

export const sessionIdField = z.string().trim().min(1).max(128).describe("The session_id reactive_review_pr returned.");
export const statusField = z.enum(SESSION_STATUSES).describe("executing, paused, completed, failed or cancelled (replaced by a review of a newer head).");

export const progressSchema = z.object({
  completed_steps: z.number().int().describe("Steps done (completed or skipped)."),
  total_steps: z.number().int().describe("Steps in the plan (a webhook session's plan grows once its files are listed)."),
  percentage: z.number().int().describe("completed_steps / total_steps, 0–100."),
});
