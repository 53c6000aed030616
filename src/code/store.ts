/**
 * The code index's rows: one `code_indexes` row per tenant, repository and ref, and the
 * generations of files, chunks, symbols, references and imports that belong to it (see
 * migrations/0028_code_index.sql for why generations). Everything here filters by tenant.
 */
import { uuidv7 } from "../db/ids";
import { iso } from "../db/time";

export const RUNNING_PHASES = ["queued", "fetching", "parsing", "embedding", "switching"] as const;
export type IndexPhase = "idle" | (typeof RUNNING_PHASES)[number] | "complete" | "failed" | "cleared";

export interface IndexRow {
  id: string;
  tenant_id: string;
  repo: string;
  owner: string;
  name: string;
  ref: string;
  generation: string;
  commit_sha: string;
  phase: IndexPhase;
  job_id: string;
  job_kind: string;
  pending_generation: string;
  target_commit: string;
  fetched: number;
  files_total: number;
  files_done: number;
  chunks_total: number;
  symbols_total: number;
  bytes_total: number;
  skipped: string;
  truncated: number;
  errors: string;
  head_sha: string;
  head_checked_at: string;
  started_at: string;
  finished_at: string;
  last_indexed_at: string;
  created_at: string;
  updated_at: string;
  limits: string;
}

export const repoKey = (owner: string, name: string) => `${owner}/${name}`.toLowerCase();
export const isRunning = (phase: string) => (RUNNING_PHASES as readonly string[]).includes(phase);

/** Generations are uuids without dashes: they become FTS scope tokens and vector filters. */
export const newGeneration = (now: Date) => uuidv7(now.getTime()).replace(/-/g, "");

export async function findIndex(d1: D1Database, tenantId: string, repo: string, ref: string): Promise<IndexRow | null> {
  return d1.prepare(`SELECT * FROM code_indexes WHERE tenant_id = ? AND repo = ? AND ref = ?`).bind(tenantId, repo, ref).first<IndexRow>();
}

export async function indexById(d1: D1Database, tenantId: string, id: string): Promise<IndexRow | null> {
  return d1.prepare(`SELECT * FROM code_indexes WHERE tenant_id = ? AND id = ?`).bind(tenantId, id).first<IndexRow>();
}

/** The tenant's indexes, of one repository or all, by repository then ref. */
export async function listIndexes(d1: D1Database, tenantId: string, repo?: string): Promise<IndexRow[]> {
  const rows = repo
    ? await d1.prepare(`SELECT * FROM code_indexes WHERE tenant_id = ? AND repo = ? ORDER BY ref`).bind(tenantId, repo).all<IndexRow>()
    : await d1.prepare(`SELECT * FROM code_indexes WHERE tenant_id = ? ORDER BY repo, ref`).bind(tenantId).all<IndexRow>();
  return rows.results;
}

/** The index row for a repository and ref, created idle on first use. */
export async function ensureIndex(d1: D1Database, tenantId: string, owner: string, name: string, ref: string, now: Date): Promise<IndexRow> {
  const repo = repoKey(owner, name);
  await d1
    .prepare(
      `INSERT INTO code_indexes (id, tenant_id, repo, owner, name, ref, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, repo, ref) DO NOTHING`,
    )
    .bind(uuidv7(now.getTime()), tenantId, repo, owner, name, ref, iso(now), iso(now))
    .run();
  return (await findIndex(d1, tenantId, repo, ref))!;
}

/**
 * Takes the index's job lock for `jobId`, unless another job holds it. A full job keeps a pending
 * generation left by a failed job (the workflow resumes it when the commit is still the same).
 */
export async function claimJob(d1: D1Database, index: IndexRow, jobId: string, kind: "full" | "incremental", fresh: boolean, now: Date): Promise<IndexRow | null> {
  const running = RUNNING_PHASES.map((p) => `'${p}'`).join(", ");
  return d1
    .prepare(
      `UPDATE code_indexes SET job_id = ?1, job_kind = ?2, phase = 'queued', errors = '[]', started_at = ?3, finished_at = '', updated_at = ?3,
         pending_generation = CASE WHEN ?2 = 'full' AND (?4 = 1 OR pending_generation = '') THEN ?5 ELSE pending_generation END,
         fetched = CASE WHEN ?2 = 'full' AND (?4 = 1 OR pending_generation = '') THEN 0 ELSE fetched END
       WHERE tenant_id = ?6 AND id = ?7 AND phase NOT IN (${running})
       RETURNING *`,
    )
    .bind(jobId, kind, iso(now), fresh ? 1 : 0, newGeneration(now), index.tenant_id, index.id)
    .first<IndexRow>();
}

/** Releases a lock whose job is gone (its workflow ended without recording so), marking it failed. */
export async function releaseDeadJob(d1: D1Database, index: IndexRow, why: string, now: Date): Promise<void> {
  await d1
    .prepare(`UPDATE code_indexes SET phase = 'failed', errors = ?, updated_at = ? WHERE tenant_id = ? AND id = ? AND job_id = ?`)
    .bind(JSON.stringify([why]), iso(now), index.tenant_id, index.id, index.job_id)
    .run();
}

/** Updates the running job's columns, only while `jobId` still holds the lock. */
export async function updateJob(d1: D1Database, tenantId: string, indexId: string, jobId: string, set: Record<string, string | number>, now: Date): Promise<boolean> {
  const cols = Object.keys(set);
  const r = await d1
    .prepare(`UPDATE code_indexes SET ${cols.map((c) => `${c} = ?`).join(", ")}, updated_at = ? WHERE tenant_id = ? AND id = ? AND job_id = ?`)
    .bind(...cols.map((c) => set[c]!), iso(now), tenantId, indexId, jobId)
    .run();
  return r.meta.changes > 0;
}

/** Keeps the index's last errors (20), newest last, for index_status. */
export async function appendError(d1: D1Database, tenantId: string, indexId: string, message: string, now: Date): Promise<void> {
  const row = await d1.prepare(`SELECT errors FROM code_indexes WHERE tenant_id = ? AND id = ?`).bind(tenantId, indexId).first<{ errors: string }>();
  if (!row) return;
  const errors = [...(JSON.parse(row.errors) as string[]), message.slice(0, 500)].slice(-20);
  await d1.prepare(`UPDATE code_indexes SET errors = ?, updated_at = ? WHERE tenant_id = ? AND id = ?`).bind(JSON.stringify(errors), iso(now), tenantId, indexId).run();
}

const GENERATION_TABLES = ["code_chunks", "code_symbols", "code_symbol_refs", "code_imports", "code_files"] as const;
/** Rows deleted per statement, so one step never holds a long write. */
const DROP_BATCH = 2_000;

/** Deletes a generation's rows, a bounded batch per table; true when nothing is left. */
export async function dropGenerationBatch(d1: D1Database, tenantId: string, generation: string): Promise<{ done: boolean; chunkIds: string[] }> {
  if (!generation) return { done: true, chunkIds: [] };
  const chunkIds = (await d1.prepare(`SELECT id FROM code_chunks WHERE tenant_id = ? AND generation = ? LIMIT ?`).bind(tenantId, generation, DROP_BATCH).all<{ id: string }>()).results.map(
    (r) => r.id,
  );
  const results = await d1.batch([
    ...GENERATION_TABLES.map((t) => d1.prepare(`DELETE FROM ${t} WHERE rowid IN (SELECT rowid FROM ${t} WHERE tenant_id = ? AND generation = ? LIMIT ?)`).bind(tenantId, generation, DROP_BATCH)),
    d1.prepare(`DELETE FROM embeddings WHERE tenant_id = ? AND object_type = 'code_chunk' AND object_id IN (SELECT value FROM json_each(?))`).bind(tenantId, JSON.stringify(chunkIds)),
  ]);
  const deleted = results.slice(0, GENERATION_TABLES.length).reduce((n, r) => n + r.meta.changes, 0);
  return { done: deleted === 0, chunkIds };
}

/**
 * Generations no index names (neither live nor being built): rows a cleared index's job wrote
 * after the clear, or an old generation whose drop steps never ran. Returns a few to drop.
 */
export async function orphanGenerations(d1: D1Database, limit: number): Promise<{ tenant_id: string; generation: string }[]> {
  const rows = await d1
    .prepare(
      `SELECT DISTINCT f.tenant_id, f.generation FROM code_files f
       WHERE NOT EXISTS (SELECT 1 FROM code_indexes i WHERE i.tenant_id = f.tenant_id AND (i.generation = f.generation OR i.pending_generation = f.generation))
       LIMIT ?`,
    )
    .bind(limit)
    .all<{ tenant_id: string; generation: string }>();
  return rows.results;
}
