/** Scheduled maintenance. Each job is bounded and idempotent; one failing does not stop the others. */
import { iso } from "../db/time";
import type { Env } from "../env";
import { dropOldDeliveries, retryDeliveries } from "../git/webhooks";
import { backfillEmbeddings } from "../search/semantic";
import { reapExpiredLeases } from "../work/claims";
import { reapSilentRuns, runAbandonAfterMs } from "../work/run-model";

export interface JobReport {
  job: string;
  ok: boolean;
  detail: string;
}

const JOBS: Record<string, (env: Env, now: Date) => Promise<string>> = {
  /** Safety net behind ClaimsDO alarms: any lease that ran out goes back to the pool. */
  lease_reaper: async (env, now) => `${await reapExpiredLeases(env.DB, now)} expired lease(s) released`,
  /** Runs that stopped heartbeating (a crashed agent, a closed laptop) stop showing as running. */
  run_reaper: async (env, now) => `${await reapSilentRuns(env.DB, now, runAbandonAfterMs(env))} silent run(s) marked abandoned`,
  /** Idempotency keys are remembered for 24 hours; older ones are dropped. */
  idempotency_retention: async (env, now) => {
    const res = await env.DB.prepare(`DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ? LIMIT 5000)`).bind(iso(now)).run();
    return `${res.meta.changes ?? 0} expired idempotency key(s) removed`;
  },
  /** Objects whose embedding failed or never ran after the write (durable-row-before-embed). */
  embedding_backfill: (env, now) => backfillEmbeddings(env, now),
  /** Webhook deliveries whose processing failed or was cut off after the response. */
  webhook_retry: (env, now) => retryDeliveries(env, now),
  /** Deliveries are kept a while for inspection and replay, then dropped. */
  delivery_retention: (env, now) => dropOldDeliveries(env, now),
};

export async function runMaintenance(env: Env, now: Date = new Date()): Promise<JobReport[]> {
  const reports: JobReport[] = [];
  for (const [job, run] of Object.entries(JOBS)) {
    try {
      reports.push({ job, ok: true, detail: await run(env, now) });
    } catch (err) {
      reports.push({ job, ok: false, detail: err instanceof Error ? err.message : String(err) });
    }
  }
  for (const r of reports) (r.ok ? console.info : console.error)(`[cron] ${r.job}: ${r.detail}`);
  return reports;
}
