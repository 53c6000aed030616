/**
 * Jobs that finish or clean up what a write cut short (a killed worker, a lost message): each
 * finds the leftovers past a grace time, so work still in flight is never taken for dead.
 */
import type { Env } from "../env";
import { sweepPendingIndexes } from "../docs/store/index-queue";
import { sweepRowlessUploads } from "../work/attachments/sweep";
import { sweepOutboundHooks } from "../work/outhooks/dispatch";

export const CRASH_REPAIR_JOBS: Record<string, (env: Env, now: Date) => Promise<string>> = {
  /** Documents stored but never indexed (the worker died in between, or the queue lost them). */
  docs_index_sweep: (env, now) => sweepPendingIndexes(env, now),
  /** Attachment uploads that died between storing their bytes and recording them. */
  attachment_orphans: (env, now) => sweepRowlessUploads(env, now),
  /** Outgoing webhooks a kick missed (the worker went away after the response), deliveries whose message was lost, and old log rows. */
  outbound_hooks: (env, now) => sweepOutboundHooks(env, now),
};
