/**
 * The code index's rows: one `code_indexes` row per tenant, repository and ref, and the
 * generations of files, chunks, symbols, references and imports that belong to it (see
 * migrations/0028_code_index.sql for why generations). Everything here filters by tenant.
 */
import { and, eq, getTableColumns, inArray, notExists, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, fromColumnNames, jsonValues, statementOf } from "../db/client";
import { uuidv7 } from "../db/ids";
import { codeChunks, codeFiles, codeIndexes, embeddings } from "../db/schema";
import { iso } from "../core/time";

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

/** An index row's fields, keyed by SQL column name in the table's order: the rows `SELECT *` gave. */
const indexFields = Object.fromEntries(Object.values(getTableColumns(codeIndexes)).map((c) => [c.name, c]));

export async function findIndex(d1: D1Database, tenantId: string, repo: string, ref: string): Promise<IndexRow | null> {
  const row = await dbOf({ d1 })
    .select(indexFields)
    .from(codeIndexes)
    .where(and(eq(codeIndexes.tenantId, tenantId), eq(codeIndexes.repo, repo), eq(codeIndexes.ref, ref)))
    .get();
  return (row as IndexRow | undefined) ?? null;
}

export async function indexById(d1: D1Database, tenantId: string, id: string): Promise<IndexRow | null> {
  const row = await dbOf({ d1 })
    .select(indexFields)
    .from(codeIndexes)
    .where(and(eq(codeIndexes.tenantId, tenantId), eq(codeIndexes.id, id)))
    .get();
  return (row as IndexRow | undefined) ?? null;
}

/** The tenant's indexes, of one repository or all, by repository then ref. */
export async function listIndexes(d1: D1Database, tenantId: string, repo?: string): Promise<IndexRow[]> {
  const query = dbOf({ d1 }).select(indexFields).from(codeIndexes);
  const rows = repo
    ? await query.where(and(eq(codeIndexes.tenantId, tenantId), eq(codeIndexes.repo, repo))).orderBy(codeIndexes.ref)
    : await query.where(eq(codeIndexes.tenantId, tenantId)).orderBy(codeIndexes.repo, codeIndexes.ref);
  return rows as unknown as IndexRow[];
}

/** The index row for a repository and ref, created idle on first use. */
export async function ensureIndex(d1: D1Database, tenantId: string, owner: string, name: string, ref: string, now: Date): Promise<IndexRow> {
  const repo = repoKey(owner, name);
  await dbOf({ d1 })
    .insert(codeIndexes)
    // drizzle writes null for a column left out (SQLite has no DEFAULT in VALUES): the migrations' defaults are spelled out.
    .values({
      id: uuidv7(now.getTime()),
      tenantId,
      repo,
      owner,
      name,
      ref,
      generation: "",
      commitSha: "",
      phase: "idle",
      jobId: "",
      jobKind: "",
      pendingGeneration: "",
      targetCommit: "",
      fetched: 0,
      filesTotal: 0,
      filesDone: 0,
      chunksTotal: 0,
      symbolsTotal: 0,
      bytesTotal: 0,
      skipped: "{}",
      truncated: 0,
      errors: "[]",
      headSha: "",
      headCheckedAt: "",
      startedAt: "",
      finishedAt: "",
      lastIndexedAt: "",
      createdAt: iso(now),
      updatedAt: iso(now),
      limits: "{}",
    })
    .onConflictDoNothing({ target: [codeIndexes.tenantId, codeIndexes.repo, codeIndexes.ref] })
    .run();
  return (await findIndex(d1, tenantId, repo, ref))!;
}

/** Records the branch head last seen, for freshness. */
export async function recordHead(d1: D1Database, tenantId: string, indexId: string, head: string, at: string): Promise<void> {
  await dbOf({ d1 })
    .update(codeIndexes)
    .set({ headSha: head, headCheckedAt: at })
    .where(and(eq(codeIndexes.tenantId, tenantId), eq(codeIndexes.id, indexId)))
    .run();
}

/** Keeps the caller's limits (JSON) on the index. */
export async function setLimits(d1: D1Database, tenantId: string, indexId: string, limits: string): Promise<void> {
  await dbOf({ d1 })
    .update(codeIndexes)
    .set({ limits })
    .where(and(eq(codeIndexes.tenantId, tenantId), eq(codeIndexes.id, indexId)))
    .run();
}

/** Deletes the index's row (its generations are dropped separately). */
export async function deleteIndex(d1: D1Database, tenantId: string, indexId: string): Promise<void> {
  await dbOf({ d1 })
    .delete(codeIndexes)
    .where(and(eq(codeIndexes.tenantId, tenantId), eq(codeIndexes.id, indexId)))
    .run();
}

/** A path's stored file in any of these generations. */
export async function filesAt(d1: D1Database, tenantId: string, path: string, generations: string[]) {
  return dbOf({ d1 })
    .select({ generation: codeFiles.generation, path: codeFiles.path, language: codeFiles.language, size: codeFiles.size, lines: codeFiles.lines, text: codeFiles.text })
    .from(codeFiles)
    .where(and(eq(codeFiles.tenantId, tenantId), eq(codeFiles.path, path), inArray(codeFiles.generation, jsonValues(generations))));
}

/**
 * Takes the index's job lock for `jobId`, unless another job holds it. A full job keeps a pending
 * generation left by a failed job (the workflow resumes it when the commit is still the same).
 */
export async function claimJob(d1: D1Database, index: IndexRow, jobId: string, kind: "full" | "incremental", fresh: boolean, now: Date): Promise<IndexRow | null> {
  const running = RUNNING_PHASES.map((p) => `'${p}'`).join(", ");
  // Hand SQL: the job lock's compare-and-swap, whose SET reads the old pending generation in CASE guards over the bound values.
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
  await dbOf({ d1 })
    .update(codeIndexes)
    .set({ phase: "failed", errors: JSON.stringify([why]), updatedAt: iso(now) })
    .where(and(eq(codeIndexes.tenantId, index.tenant_id), eq(codeIndexes.id, index.id), eq(codeIndexes.jobId, index.job_id)))
    .run();
}

/** Updates the running job's columns, only while `jobId` still holds the lock. */
export async function updateJob(d1: D1Database, tenantId: string, indexId: string, jobId: string, set: Record<string, string | number>, now: Date): Promise<boolean> {
  const r = await dbOf({ d1 })
    .update(codeIndexes)
    .set({ ...fromColumnNames(codeIndexes, set), updatedAt: iso(now) })
    .where(and(eq(codeIndexes.tenantId, tenantId), eq(codeIndexes.id, indexId), eq(codeIndexes.jobId, jobId)))
    .run();
  return r.meta.changes > 0;
}

/** Keeps the index's last errors (20), newest last, for index_status. */
export async function appendError(d1: D1Database, tenantId: string, indexId: string, message: string, now: Date): Promise<void> {
  const db = dbOf({ d1 });
  const mine = and(eq(codeIndexes.tenantId, tenantId), eq(codeIndexes.id, indexId));
  const row = await db.select({ errors: codeIndexes.errors }).from(codeIndexes).where(mine).get();
  if (!row) return;
  const errors = [...(JSON.parse(row.errors) as string[]), message.slice(0, 500)].slice(-20);
  await db
    .update(codeIndexes)
    .set({ errors: JSON.stringify(errors), updatedAt: iso(now) })
    .where(mine)
    .run();
}

/** A fetched file's row in a generation, unparsed (parsed and syntax take the migration's defaults). */
export const putFileStatement = (d1: D1Database, tenantId: string, generation: string, f: { path: string; size: number; text: string }, lines: number): D1PreparedStatement =>
  // Hand SQL: INSERT OR REPLACE, which drizzle cannot say.
  d1.prepare(`INSERT OR REPLACE INTO code_files (tenant_id, generation, path, language, size, lines, text) VALUES (?, ?, ?, '', ?, ?, ?)`).bind(tenantId, generation, f.path, f.size, lines, f.text);

/** Deletes these chunks' embedding rows, as a statement for the batch that deletes the chunks. */
export const dropChunkEmbeddings = (d1: D1Database, tenantId: string, chunkIds: string[]): D1PreparedStatement =>
  statementOf(
    d1,
    dbOf({ d1 })
      .delete(embeddings)
      .where(and(eq(embeddings.tenantId, tenantId), eq(embeddings.objectType, "code_chunk"), inArray(embeddings.objectId, jsonValues(chunkIds)))),
  );

const GENERATION_TABLES = ["code_chunks", "code_symbols", "code_symbol_refs", "code_imports", "code_files"] as const;
/** Rows deleted per statement, so one step never holds a long write. */
const DROP_BATCH = 2_000;

/** Deletes a generation's rows, a bounded batch per table; true when nothing is left. */
export async function dropGenerationBatch(d1: D1Database, tenantId: string, generation: string): Promise<{ done: boolean; chunkIds: string[] }> {
  if (!generation) return { done: true, chunkIds: [] };
  const db = dbOf({ d1 });
  const chunkIds = (
    await db
      .select({ id: codeChunks.id })
      .from(codeChunks)
      .where(and(eq(codeChunks.tenantId, tenantId), eq(codeChunks.generation, generation)))
      .limit(DROP_BATCH)
  ).map((r) => r.id);
  const results = await d1.batch([
    // Hand SQL: a bounded delete picks its rows by rowid, which the schema does not declare, in each of the generation's tables.
    ...GENERATION_TABLES.map((t) => d1.prepare(`DELETE FROM ${t} WHERE rowid IN (SELECT rowid FROM ${t} WHERE tenant_id = ? AND generation = ? LIMIT ?)`).bind(tenantId, generation, DROP_BATCH)),
    dropChunkEmbeddings(d1, tenantId, chunkIds),
  ]);
  const deleted = results.slice(0, GENERATION_TABLES.length).reduce((n, r) => n + r.meta.changes, 0);
  return { done: deleted === 0, chunkIds };
}

/**
 * Generations no index names (neither live nor being built): rows a cleared index's job wrote
 * after the clear, or an old generation whose drop steps never ran. Returns a few to drop.
 */
export async function orphanGenerations(d1: D1Database, limit: number): Promise<{ tenant_id: string; generation: string }[]> {
  const db = dbOf({ d1 });
  const f = alias(codeFiles, "f");
  const i = alias(codeIndexes, "i");
  return db
    .selectDistinct({ tenant_id: f.tenantId, generation: f.generation })
    .from(f)
    .where(
      notExists(
        db
          .select({ one: sql`1` })
          .from(i)
          .where(and(eq(i.tenantId, f.tenantId), or(eq(i.generation, f.generation), eq(i.pendingGeneration, f.generation)))),
      ),
    )
    .limit(limit);
}
