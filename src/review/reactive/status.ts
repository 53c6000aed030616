/** get_review_status and get_review_telemetry (seed 004): what a reactive review session has done. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { snapshot, stepGapMs } from "../reactive-sessions/runner";
import { STEP_KINDS, STEP_STATUSES, statusView, telemetryView } from "../reactive-sessions/plan";
import { CHANGE_TYPES, findingSchema } from "../pipeline/types";
import { progressSchema, sessionFields, sessionIdField, statusField } from "./model";

const timingShape = {
  start_time: z.string().describe("When the session started (ISO-8601)."),
  elapsed_ms: z.number().int().describe("From the start to now, or to the end of an ended session."),
  last_activity_ms: z.number().int().describe("Since a step last ran."),
  appears_stalled: z.boolean().describe("Executing with no activity for over two minutes."),
};

const resultSchema = z.object({
  reviewed_commit: z.string().describe("The head sha reviewed."),
  risk_score: z.number().int().describe("1–5: the highest any batch's review gave."),
  classification: z.enum(CHANGE_TYPES).describe("The change type covering most of the reviewed files."),
  summary: z.string().describe("One paragraph on the whole review."),
  files_reviewed: z.number().int().describe("Files whose patch was reviewed."),
  batches: z.number().int().describe("Batches reviewed."),
  findings_total: z.number().int().describe("Findings after merging the batches."),
  findings: z
    .array(findingSchema.extend({ inline: z.boolean().describe("It sits on a line of the diff (published as an inline comment).") }))
    .describe("The findings, most severe first (at most 200)."),
  warnings: z.array(z.string()).describe("Files that could not be reviewed, and why."),
});

const { session_id, pull_number, commit_hash, base_ref, source, created_at, updated_at, error, review_url } = sessionFields;

const statusOutput = z.object({
  session: z
    .object({
      session_id,
      status: statusField,
      repo: z.string().describe("owner/name."),
      pull_number,
      commit_hash,
      base_ref,
      title: z.string().describe("The pull request's title, as given."),
      author: z.string().describe("Its author, as given."),
      source,
      created_at,
      updated_at,
      current_step: z.number().int().nullable().describe("The step running or next (the failed one for a failed session); null once done."),
      total_steps: z.number().int().describe("Steps in the plan."),
      error,
      review_url,
    })
    .describe("The session."),
  progress: progressSchema.describe("Steps done."),
  telemetry: z.object(timingShape).describe("Timing (get_review_telemetry has every step)."),
  findings_count: sessionFields.findings_count,
  result: resultSchema.optional().describe("The merged review, once the merge step has run."),
});

const attemptSchema = z.object({
  started_at: z.string().describe("When the attempt started."),
  duration_ms: z.number().int().describe("How long it ran."),
  outcome: z.enum(["ok", "retry", "failed"]).describe("ok; retry (a retryable GitHub error, tried again after retry_in_ms); failed."),
  error: z.string().optional().describe("What went wrong."),
  retry_in_ms: z.number().int().optional().describe("The backoff before the next attempt."),
});

const telemetryOutput = z.object({
  session_id: z.string().describe("The session."),
  session_status: statusField,
  session_error: z.string().nullable().describe("Why it failed or was cancelled."),
  telemetry: z
    .object({
      ...timingShape,
      retries: z.number().int().describe("Attempts that ended in a retry."),
      steps: z
        .array(
          z.object({
            step_number: z.number().int().describe("1-based."),
            kind: z.enum(STEP_KINDS).describe("list_files (a webhook session's pull request files), review_batch, merge or publish."),
            status: z.enum(STEP_STATUSES).describe("pending, running, completed, failed or skipped."),
            files: z.number().int().describe("Files in a review batch."),
            findings: z.number().int().nullable().describe("Findings the step produced."),
            duration_ms: z.number().int().describe("All its attempts together."),
            attempts: z.array(attemptSchema).describe("Each attempt."),
            note: z.string().nullable().describe("What the step reported (e.g. why publishing was skipped)."),
          }),
        )
        .describe("Every step of the plan."),
      warnings: z.array(z.string()).describe("Files not reviewed, a review that could not be published."),
    })
    .describe("The session's telemetry."),
  reactive_config: z
    .object({
      batch_size: z.number().int().describe("Files per review step."),
      workers: z.number().int().describe("Review steps run side by side per alarm."),
      max_step_attempts: z.number().int().describe("Attempts per step before the session fails."),
      step_gap_ms: z.number().int().describe("Least time between steps (REVIEW_STEP_GAP_MS)."),
    })
    .describe("How sessions run on this server."),
});

const view = async (ctx: Ctx, id: string) => {
  const s = await snapshot(ctx, id);
  return { s, now: ctx.clock.now().getTime() };
};

export const getReviewStatusTool = defineTool({
  name: "get_review_status",
  title: "Reactive review status",
  toolset: "review",
  description: "Status and progress of a reactive review session, with the merged findings once they are in.",
  input: z.object({ session_id: sessionIdField }),
  output: statusOutput,
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const { s, now } = await view(ctx, input.session_id);
    return statusView(s.state, now, s.result);
  },
  summarize: (r) => `Session ${r.session.session_id}: ${r.session.status}, ${r.progress.completed_steps}/${r.progress.total_steps} steps, ${r.findings_count} finding(s).`,
});

export const getReviewTelemetryTool = defineTool({
  name: "get_review_telemetry",
  title: "Reactive review telemetry",
  toolset: "review",
  description: "Detailed telemetry of a reactive review session: every step's attempts, durations, files, findings, retries and errors.",
  input: z.object({ session_id: sessionIdField }),
  output: telemetryOutput,
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const { s, now } = await view(ctx, input.session_id);
    return telemetryView(s.state, now, stepGapMs(ctx.env));
  },
  summarize: (r) => `Session ${r.session_id}: ${r.session_status}, ${r.telemetry.steps.length} step(s), ${r.telemetry.retries} retr${r.telemetry.retries === 1 ? "y" : "ies"}.`,
});
