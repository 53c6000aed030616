/**
 * Starting an index job: take the index's lock, then create the workflow instance named by the
 * job id. A lock whose workflow has ended without saying so (terminated, or lost) is released, so a
 * crash cannot block an index for good; a live one refuses the second job.
 */
import { uuidv7 } from "../db/ids";
import type { Env } from "../env";
import { failureText } from "../core/errors";
import { failJob, type IndexJob } from "./indexer";
import { claimJob, indexById, isRunning, releaseDeadJob, type IndexRow } from "./store";

export type JobStart = { started: true; job_id: string; resumed: boolean } | { started: false; job_id: string; phase: string };

const ENDED = new Set(["complete", "errored", "terminated"]);

async function workflowEnded(env: Env, jobId: string): Promise<boolean> {
  if (!jobId) return true;
  try {
    return ENDED.has((await (await env.CODE_INDEX.get(jobId)).status()).status);
  } catch {
    return true; // no such instance
  }
}

export async function startIndexJob(env: Env, index: IndexRow, kind: "full" | "incremental", opts: { fresh?: boolean; base?: string; head?: string }, now: Date): Promise<JobStart> {
  const jobId = uuidv7(now.getTime());
  const fresh = opts.fresh === true;
  let claimed = await claimJob(env.DB, index, jobId, kind, fresh, now);
  if (!claimed) {
    const holder = (await indexById(env.DB, index.tenant_id, index.id)) ?? index;
    if (isRunning(holder.phase) && (await workflowEnded(env, holder.job_id))) {
      await releaseDeadJob(env.DB, holder, `job ${holder.job_id} ended without finishing; released`, now);
      claimed = await claimJob(env.DB, holder, jobId, kind, fresh, now);
    }
    if (!claimed) return { started: false, job_id: holder.job_id, phase: holder.phase };
  }
  const params: IndexJob = { tenantId: index.tenant_id, indexId: index.id, jobId, kind, ...(opts.base ? { base: opts.base } : {}), ...(opts.head ? { head: opts.head } : {}) };
  try {
    await env.CODE_INDEX.create({ id: jobId, params });
  } catch (err) {
    await failJob(env, params, `could not start the job: ${failureText(err, "code index start")}`);
    throw err;
  }
  return { started: true, job_id: jobId, resumed: kind === "full" && !fresh && index.pending_generation !== "" && index.pending_generation === claimed.pending_generation };
}
