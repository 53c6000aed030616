/**
 * Reactive review (seed 004): reactive_review_pr, get_review_status, pause_review, resume_review,
 * get_review_telemetry. The session and its steps are src/review/reactive-sessions/runner.ts; these are its
 * contract. Messages follow the reference (src/mcp/tools/reactiveReview.ts).
 */
import { z } from "zod";
import { repoField } from "../../git/repo";
import type { Ctx } from "../../core/context";
import { type AnyToolDef, defineTool, READ_ONLY } from "../../core/define-tool";
import { DEFAULT_REPO_NOTE, repoOrDefault } from "../target/repo-default";
import { pauseReview, resumeReview, snapshot, startReview, stepGapMs } from "../reactive-sessions/runner";
import { MAX_CHANGED_FILES, progressOf, SESSION_STATUSES, statusView, STEP_KINDS, STEP_STATUSES, telemetryView } from "../reactive-sessions/plan";
import { CHANGE_TYPES, findingSchema } from "../pipeline/types";

const sessionIdField = z.string().trim().min(1).max(128).describe("The session_id reactive_review_pr returned.");
const statusField = z.enum(SESSION_STATUSES).describe("executing, paused, completed, failed or cancelled (replaced by a review of a newer head).");

const progressSchema = z.object({
  completed_steps: z.number().int().describe("Steps done (completed or skipped)."),
  total_steps: z.number().int().describe("Steps in the plan (a webhook session's plan grows once its files are listed)."),
  percentage: z.number().int().describe("completed_steps / total_steps, 0–100."),
});

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
  findings: z.array(findingSchema.extend({ inline: z.boolean().describe("It sits on a line of the diff (published as an inline comment).") }))
    .describe("The findings, most severe first (at most 200)."),
  warnings: z.array(z.string()).describe("Files that could not be reviewed, and why."),
});

const statusOutput = z.object({
  session: z.object({
    session_id: z.string().describe("The session."),
    status: statusField,
    repo: z.string().describe("owner/name."),
    pull_number: z.number().int().nullable().describe("The pull request reviewed and published to, or null for a commit range."),
    commit_hash: z.string().describe("The full head sha reviewed."),
    base_ref: z.string().describe("The base the change is compared with."),
    title: z.string().describe("The pull request's title, as given."),
    author: z.string().describe("Its author, as given."),
    source: z.enum(["tool", "webhook"]).describe("tool (reactive_review_pr) or webhook (a pull_request delivery)."),
    created_at: z.string().describe("When it started."),
    updated_at: z.string().describe("When it last changed."),
    current_step: z.number().int().nullable().describe("The step running or next (the failed one for a failed session); null once done."),
    total_steps: z.number().int().describe("Steps in the plan."),
    error: z.string().nullable().describe("Why it failed or was cancelled."),
    review_url: z.string().nullable().describe("The published pull-request review, once posted."),
  }).describe("The session."),
  progress: progressSchema.describe("Steps done."),
  telemetry: z.object(timingShape).describe("Timing (get_review_telemetry has every step)."),
  findings_count: z.number().int().describe("Findings so far (after merging, once the merge step has run)."),
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
  telemetry: z.object({
    ...timingShape,
    retries: z.number().int().describe("Attempts that ended in a retry."),
    steps: z.array(z.object({
      step_number: z.number().int().describe("1-based."),
      kind: z.enum(STEP_KINDS).describe("list_files (a webhook session's pull request files), review_batch, merge or publish."),
      status: z.enum(STEP_STATUSES).describe("pending, running, completed, failed or skipped."),
      files: z.number().int().describe("Files in a review batch."),
      findings: z.number().int().nullable().describe("Findings the step produced."),
      duration_ms: z.number().int().describe("All its attempts together."),
      attempts: z.array(attemptSchema).describe("Each attempt."),
      note: z.string().nullable().describe("What the step reported (e.g. why publishing was skipped)."),
    })).describe("Every step of the plan."),
    warnings: z.array(z.string()).describe("Files not reviewed, a review that could not be published."),
  }).describe("The session's telemetry."),
  reactive_config: z.object({
    batch_size: z.number().int().describe("Files per review step."),
    workers: z.number().int().describe("Review steps run side by side per alarm."),
    max_step_attempts: z.number().int().describe("Attempts per step before the session fails."),
    step_gap_ms: z.number().int().describe("Least time between steps (REVIEW_STEP_GAP_MS)."),
  }).describe("How sessions run on this server."),
});

const steerOutput = z.object({
  status: statusField,
  message: z.string().describe("What happened."),
  progress: progressSchema.describe("Steps done."),
});

const WRITE = { readOnly: false, destructive: false, idempotent: true, openWorld: false } as const;

export const reactiveReviewPrTool = defineTool({
  name: "reactive_review_pr",
  title: "Start a reactive pull-request review",
  toolset: "review",
  description:
    "Start a reactive review session of a change on GitHub (and begin execution); returns a session_id at once. The session reviews the changed files in " +
    "batches of 5, one step per alarm, then merges the findings; with pull_number it reviews that pull request and, when the repository's review settings " +
    "publish, posts one pull-request review. Watch it with get_review_status; pause_review / resume_review steer it.",
  input: z.object({
    repo: repoField.optional().describe(`The repository: owner/name, or a registered repository's id or slug. ${DEFAULT_REPO_NOTE}`),
    commit_hash: z.string().trim().min(7).max(64).regex(/^[0-9a-fA-F]+$/, "a hex commit sha").describe("The head commit (7–64 hex; a short sha is resolved to the full one)."),
    base_ref: z.string().trim().min(1).max(256).describe('The base branch or ref (e.g. "main").'),
    changed_files: z.string().min(1).max(100_000).describe(`The changed files: comma-separated, or a JSON array string (at most ${MAX_CHANGED_FILES}).`),
    title: z.string().max(1000).optional().describe("The pull request's title, for context."),
    author: z.string().max(200).optional().describe("Its author, for context."),
    additions: z.number().int().min(0).max(10_000_000).optional().describe("Lines added."),
    deletions: z.number().int().min(0).max(10_000_000).optional().describe("Lines deleted."),
    parallel: z.boolean().default(false).describe("Review several batches side by side in one step (up to max_workers)."),
    max_workers: z.number().int().min(1).max(64).optional().describe("Batches side by side when parallel (default 3; this server runs at most 4)."),
    pull_number: z.number().int().min(1).max(2_147_483_647).optional().describe("The pull request whose head commit_hash is: reviewed from its files and published to."),
  }),
  output: z.object({
    session_id: z.string().describe("The session (UUIDv7)."),
    status: statusField,
    total_steps: z.number().int().describe("Steps planned."),
    commit_hash: z.string().describe("The full head sha reviewed."),
    replaced_sessions: z.array(z.string()).describe("Sessions of the same pull request this one cancelled (they reviewed an older head)."),
    warnings: z.array(z.string()).describe("Inputs adjusted (e.g. max_workers lowered)."),
    message: z.string().describe("What to do next."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  run: async (ctx, input) => {
    const started = await startReview(ctx, { ...input, repo: await repoOrDefault(ctx, input.repo) });
    const steps = started.state.steps.length;
    return {
      session_id: started.state.spec.sessionId,
      status: started.state.status,
      total_steps: steps,
      commit_hash: started.state.spec.commitHash,
      replaced_sessions: started.replaced,
      warnings: started.warnings,
      message: `Review session started with ${steps} steps. Execution running in background. Use get_review_status to monitor progress.`,
    };
  },
  summarize: (r) => `Review session ${r.session_id} started (${r.total_steps} steps).`,
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

export const reactiveTools: AnyToolDef[] = [reactiveReviewPrTool, getReviewStatusTool, pauseReviewTool, resumeReviewTool, getReviewTelemetryTool];
