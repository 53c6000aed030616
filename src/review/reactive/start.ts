/**
 * reactive_review_pr (seed 004): starts a reactive review session. The session and its steps are
 * src/review/reactive-sessions/runner.ts; this is its contract. Messages follow the reference
 * (src/mcp/tools/reactiveReview.ts).
 */
import { z } from "zod";
import { repoField } from "../../git/repo";
import { defineTool } from "../../core/define-tool";
import { DEFAULT_REPO_NOTE, repoOrDefault } from "../target/repo-default";
import { startReview } from "../reactive-sessions/runner";
import { MAX_CHANGED_FILES } from "../reactive-sessions/plan";
import { pullNumberField, statusField } from "./model";
import { REVIEW_TASK } from "./task";

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
    commit_hash: z
      .string()
      .trim()
      .min(7)
      .max(64)
      .regex(/^[0-9a-fA-F]+$/, "a hex commit sha")
      .describe("The head commit (7–64 hex; a short sha is resolved to the full one)."),
    base_ref: z.string().trim().min(1).max(256).describe('The base branch or ref (e.g. "main").'),
    changed_files: z.string().min(1).max(100_000).describe(`The changed files: comma-separated, or a JSON array string (at most ${MAX_CHANGED_FILES}).`),
    title: z.string().max(1000).optional().describe("The pull request's title, for context."),
    author: z.string().max(200).optional().describe("Its author, for context."),
    additions: z.number().int().min(0).max(10_000_000).optional().describe("Lines added."),
    deletions: z.number().int().min(0).max(10_000_000).optional().describe("Lines deleted."),
    parallel: z.boolean().default(false).describe("Review several batches side by side in one step (up to max_workers)."),
    max_workers: z.number().int().min(1).max(64).optional().describe("Batches side by side when parallel (default 3; this server runs at most 4)."),
    pull_number: pullNumberField.optional().describe("The pull request whose head commit_hash is: reviewed from its files and published to."),
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
  task: REVIEW_TASK,
  summarize: (r) => `Review session ${r.session_id} started (${r.total_steps} steps).`,
});
