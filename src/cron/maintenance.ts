/** Scheduled maintenance. Each job is bounded and idempotent; one failing does not stop the others. */
import { inArray, lte, sql } from "drizzle-orm";
import { dbOf } from "../db/client";
import { clientSessions, hookEdits, idempotencyKeys, appSessions, mcpTasks } from "../db/schema";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { iso } from "../core/time";
import type { Env } from "../env";
import { dropOldDeliveries, retryDeliveries } from "../server/webhooks";
import { backfillEmbeddings } from "../search/semantic";
import { dropGeneration } from "../code/indexer";
import { orphanGenerations } from "../code/store";
import { sweepRowlessChunks } from "../docs/store/chunk-sweep";
import { collectOrphanChunks } from "../docs/store/store";
import { reapExpiredLeases } from "../work/claims/model";
import { reapSilentRuns, runAbandonAfterMs } from "../work/runs/model";
import { CHAIN_SWEEP_JOB, sweepChains } from "./chain-sweep";
import { CRASH_REPAIR_JOBS } from "./crash-repair";
import { OAUTH_PURGE_JOB, purgeOAuth } from "./oauth-purge";
import { STALE_SWEEP_JOB, sweepStaleDecisions } from "./stale-sweep";
import { drainWebhookBacklog, WEBHOOK_BACKLOG_JOB } from "./webhook-backlog";

export interface JobReport {
  job: string;
  ok: boolean;
  detail: string;
}

type Job = (env: Env, now: Date) => Promise<string>;

/** Must match wrangler.toml's [triggers] crons: the scheduled handler dispatches on the expression. */
export const FREQUENT_CRON = "*/5 * * * *";
export const DAILY_CRON = "17 6 * * *";

/** Edit notes older than this are dropped: no agent session runs for a week. */
const HOOK_EDITS_KEPT_MS = 7 * 24 * 60 * 60_000;

/** Deletes up to 5,000 rows whose `column` is at or before `cutoff`; rowid bounds it, as SQLite's DELETE takes no LIMIT. */
async function dropRowsUpTo(env: Env, table: SQLiteTable, column: SQLiteColumn, cutoff: string): Promise<number> {
  const db = dbOf({ d1: env.DB });
  const old = db
    .select({ rowid: sql`rowid` })
    .from(table)
    .where(lte(column, cutoff))
    .limit(5000);
  const res = await db
    .delete(table)
    .where(inArray(sql`rowid`, old))
    .run();
  return res.meta.changes ?? 0;
}

const FREQUENT_JOBS: Record<string, Job> = {
  /** Safety net behind ClaimsDO alarms: any lease that ran out goes back to the pool. */
  lease_reaper: async (env, now) => `${await reapExpiredLeases(env.DB, now)} expired lease(s) released`,
  /** Runs that stopped heartbeating (a crashed agent, a closed laptop) stop showing as running. */
  run_reaper: async (env, now) => `${await reapSilentRuns(env.DB, now, runAbandonAfterMs(env))} silent run(s) marked abandoned`,
  /** Idempotency keys are remembered for 24 hours; older ones are dropped. */
  idempotency_retention: async (env, now) => `${await dropRowsUpTo(env, idempotencyKeys, idempotencyKeys.expiresAt, iso(now))} expired idempotency key(s) removed`,
  /** The hooks' notes of edited files (src/server/hooks) matter for a session, not for weeks. */
  hook_edits_retention: async (env, now) => `${await dropRowsUpTo(env, hookEdits, hookEdits.editedAt, iso(new Date(now.getTime() - HOOK_EDITS_KEPT_MS)))} old hook edit note(s) removed`,
  /** Client session ids mapped to MCP sessions (src/work/runs/client-sessions.ts): first seen a week ago, the session is long over. */
  client_sessions_retention: async (env, now) =>
    `${await dropRowsUpTo(env, clientSessions, clientSessions.seenAt, iso(new Date(now.getTime() - HOOK_EDITS_KEPT_MS)))} old client session mapping(s) removed`,
  /** The dashboard's sessions (src/auth/app-session.ts) past their expiry. */
  app_sessions_retention: async (env, now) => `${await dropRowsUpTo(env, appSessions, appSessions.expiresAt, iso(now))} expired dashboard session(s) removed`,
  /** MCP tasks past their ttlMs (src/server/tasks): a client had that long to read the result. */
  mcp_tasks_retention: async (env, now) => `${await dropRowsUpTo(env, mcpTasks, mcpTasks.expiresAt, iso(now))} expired MCP task(s) removed`,
  /** Objects whose embedding failed or never ran after the write (durable-row-before-embed). */
  embedding_backfill: (env, now) => backfillEmbeddings(env, now),
  /** Webhook deliveries whose processing failed or was cut off after the response. */
  webhook_retry: (env, now) => retryDeliveries(env, now),
  /** Deliveries kept while their source was over its rate limit, processed as the limit allows. */
  [WEBHOOK_BACKLOG_JOB]: (env, now) => drainWebhookBacklog(env, now),
  /** Deliveries are kept a while for inspection and replay, then dropped. */
  delivery_retention: (env, now) => dropOldDeliveries(env, now),
  /** Document-store chunks no live document or snapshot uses any more (after a grace period). */
  docs_orphan_chunks: async (env, now) => {
    const r = await collectOrphanChunks(env, undefined, 500, now);
    return `${r.chunks_deleted} orphan chunk(s) deleted, ${r.bytes_freed} bytes freed`;
  },
  /** Chunk objects a put uploaded but never committed (it died in between). */
  docs_rowless_chunks: (env, now) => sweepRowlessChunks(env, now),
  /** Code-index rows of generations no index names (a job that outlived clear_index, a drop that never ran). */
  code_orphan_generations: async (env) => {
    const orphans = await orphanGenerations(env.DB, 5);
    let finished = 0;
    for (const o of orphans) if (await dropGeneration(env, o.tenant_id, o.generation)) finished++;
    return `${orphans.length} orphan generation(s) found, ${finished} fully dropped`;
  },
  /** Expired OAuth grants and codes purged; the grant mirror kept in step with the provider. */
  [OAUTH_PURGE_JOB]: (env, now) => purgeOAuth(env, now),
  ...CRASH_REPAIR_JOBS,
};

const DAILY_JOBS: Record<string, Job> = {
  /** Notices are once a day per decision, so sweeping more often would only find nothing new. */
  [STALE_SWEEP_JOB]: (env, now) => sweepStaleDecisions(env.DB, now),
  /** Seed 000's tamper-evident log: every tenant's hash chain, a bounded stretch per night. */
  [CHAIN_SWEEP_JOB]: (env, now) => sweepChains(env.DB, now),
};

/**
 * An expression that is neither (a trigger added in the dashboard, a typo in `__scheduled?cron=`)
 * gets the frequent set: it is the one whose absence hurts (leases never released).
 */
function jobSet(cron: string): Record<string, Job> {
  return cron === DAILY_CRON ? DAILY_JOBS : FREQUENT_JOBS;
}

export const jobsFor = (cron: string): string[] => Object.keys(jobSet(cron));

export async function runMaintenance(env: Env, now: Date = new Date(), cron: string = FREQUENT_CRON): Promise<JobReport[]> {
  const reports: JobReport[] = [];
  for (const [job, run] of Object.entries(jobSet(cron))) {
    try {
      reports.push({ job, ok: true, detail: await run(env, now) });
    } catch (err) {
      reports.push({ job, ok: false, detail: err instanceof Error ? err.message : String(err) });
    }
  }
  for (const r of reports) (r.ok ? console.info : console.error)(`[cron ${cron}] ${r.job}: ${r.detail}`);
  return reports;
}
