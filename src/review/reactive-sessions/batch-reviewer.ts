/**
 * Which BatchReviewer the reactive review sessions use: review_diff's pipeline with the stages
 * this server wires (src/review/pipeline/wiring.ts), so a session's batch gets the same preflight,
 * repository settings, invariants and LLM passes as a review_diff call on that diff.
 *
 * `useBatchReviewer` swaps the reviewer for the whole isolate: the Durable Object that runs the
 * steps lives in the same isolate as whoever sets it (tests inject a failing reviewer this way).
 */
import { fullName } from "../../git/read-tool";
import type { BatchReviewer } from "./runner";
import { reviewDiff, reviewDiffInput } from "../pipeline/review-diff";
import { reviewStages } from "../pipeline/wiring";

export const reviewDiffBatchReviewer: BatchReviewer = async (ctx, batch) => {
  const result = await reviewDiff(ctx, reviewDiffInput.parse({ diff: batch.diff, changed_files: batch.changedFiles, repo: fullName(batch.repo), head_sha: batch.headSha, options: {} }), reviewStages);
  return { findings: result.findings, risk_score: result.risk_score, classification: result.classification, summary: result.summary };
};

let current: BatchReviewer | null = reviewDiffBatchReviewer;

export const batchReviewer = (): BatchReviewer | null => current;

/** Sets the reviewer and returns the one it replaces, so a caller can put it back. */
export function useBatchReviewer(reviewer: BatchReviewer | null): BatchReviewer | null {
  const previous = current;
  current = reviewer;
  return previous;
}
