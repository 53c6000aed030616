/**
 * Which BatchReviewer the reactive review sessions use. review_diff (src/review/review-diff.ts)
 * is the reviewer they are meant to call; until it is wired in here, nothing on this server can
 * review a batch honestly, so there is none and a session's review steps fail with
 * review_unavailable (the session says so in its status and telemetry).
 *
 * `useBatchReviewer` swaps the reviewer for the whole isolate: the Durable Object that runs the
 * steps lives in the same isolate as whoever sets it (tests inject a reviewer this way).
 */
import type { BatchReviewer } from "./reactive";

let current: BatchReviewer | null = null;

export const batchReviewer = (): BatchReviewer | null => current;

/** Sets the reviewer and returns the one it replaces, so a caller can put it back. */
export function useBatchReviewer(reviewer: BatchReviewer | null): BatchReviewer | null {
  const previous = current;
  current = reviewer;
  return previous;
}
