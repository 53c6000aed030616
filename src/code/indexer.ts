/**
 * The steps of an index job, each a function the workflow (src/code/workflow.ts) runs as one
 * durable step. Each step is bounded (a batch of files, a batch of embeddings) so it stays inside
 * a Worker's CPU and subrequest limits, and each is idempotent: a step retried after a failure
 * redoes its batch without duplicating rows, and a later job resumes a failed one's generation.
 */
import { NonRetryableError } from "cloudflare:workflows";
import { and, asc, count, eq, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, statementOf } from "../db/client";
import { sha256Hex, uuidv7 } from "../db/ids";
import { codeChunks, codeFiles, codeImports, codeIndexes, codeSymbolRefs, codeSymbols, embeddings } from "../db/schema";
import { iso } from "../core/time";
import type { Env } from "../env";
import { githubFor } from "../git/credentials";
import { embedRows, selectSemantic } from "../search/semantic";
import { codeChunkEmbedText, vectorId } from "../search/sources";
import { fetchRepoArchive } from "./archive";
import { backfillCommits } from "./commits";
import { effectiveLimits } from "./limits";
import { parseSource, resolveImport, type ParsedFile } from "./parse";
import { failureText } from "../core/errors";
import { appendError, dropGenerationBatch, indexById, putFileStatement, updateJob, type IndexRow } from "./store";
import { indexTerms, scopeToken } from "./terms";

/** What a workflow instance is asked to do. */
export interface IndexJob {
  tenantId: string;
  indexId: string;
  jobId: string;
  kind: "full" | "incremental";
  /** incremental: the commit the live generation is at, and the pushed head. */
  base?: string;
  head?: string;
}

export interface Target {
  commit: string;
  generation: string;
  resumed: boolean;
}

/** Files parsed per step: about a second of CPU for typical source files. */
export const PARSE_BATCH = 40;
/** Chunks embedded per step (two Workers AI calls of 100). */
export const EMBED_BATCH = 200;
/** D1 statements per batch call. */
const WRITE_BATCH = 80;

const now = () => new Date();

/** The start of the message a job gets once it lost its lock (cleared, or taken over). */
export const SUPERSEDED = "superseded:";

/** Thrown past the step's retries: a job without its lock has nothing left to do. */
const superseded = (why: string) => new NonRetryableError(`${SUPERSEDED} ${why}`);

export async function jobIndex(env: Env, job: IndexJob): Promise<IndexRow> {
  const row = await indexById(env.DB, job.tenantId, job.indexId);
  if (!row || row.job_id !== job.jobId) throw superseded(`index ${job.indexId} is no longer held by job ${job.jobId}`);
  return row;
}

async function writeBatches(d1: D1Database, statements: D1PreparedStatement[]): Promise<void> {
  for (let i = 0; i < statements.length; i += WRITE_BATCH) await d1.batch(statements.slice(i, i + WRITE_BATCH));
}

/**
 * Step 1: the commit to index. A full job keeps its pending generation when that generation was
 * being built for this very commit (a resumed job); otherwise it starts the generation over.
 */
export async function resolveTarget(env: Env, job: IndexJob): Promise<Target> {
  const index = await jobIndex(env, job);
  const gh = githubFor(env, job.tenantId);
  const head = job.head ?? (await gh.request<{ sha: string }>("GET /repos/{owner}/{repo}/commits/{ref}", { owner: index.owner, repo: index.name, ref: index.ref })).data.sha;
  if (job.kind === "incremental") {
    await updateJob(env.DB, job.tenantId, job.indexId, job.jobId, { phase: "fetching", target_commit: head, head_sha: head, head_checked_at: iso(now()) }, now());
    return { commit: head, generation: index.generation, resumed: false };
  }
  const resumed = index.target_commit === head && index.fetched === 1;
  if (!resumed && index.fetched === 1) {
    // Built for another commit: its rows are dropped by the fetch step before it stores new ones.
    await updateJob(env.DB, job.tenantId, job.indexId, job.jobId, { fetched: 0 }, now());
  }
  await updateJob(env.DB, job.tenantId, job.indexId, job.jobId, { phase: "fetching", target_commit: head, head_sha: head, head_checked_at: iso(now()) }, now());
  return { commit: head, generation: index.pending_generation, resumed };
}

/** Step 2 (full): the repository's files at the commit, stored unparsed in the pending generation. */
export async function fetchFiles(env: Env, job: IndexJob, target: Target): Promise<{ files: number; skipped: number }> {
  const index = await jobIndex(env, job);
  if (target.resumed || index.fetched === 1) {
    await updateJob(env.DB, job.tenantId, job.indexId, job.jobId, { phase: "parsing" }, now());
    return { files: index.files_total, skipped: 0 };
  }
  while (!(await dropGenerationBatch(env.DB, job.tenantId, target.generation)).done) {
    /* a stale attempt's rows */
  }
  const archive = await fetchRepoArchive(githubFor(env, job.tenantId), { owner: index.owner, name: index.name }, target.commit, { limits: effectiveLimits(index.limits) });
  const d1 = env.DB;
  await writeBatches(
    d1,
    archive.files.map((f) => putFileStatement(d1, job.tenantId, target.generation, f, lineCount(f.text))),
  );
  const skipped = Object.values(archive.skipped).reduce((a, b) => a + b, 0);
  await updateJob(
    d1,
    job.tenantId,
    job.indexId,
    job.jobId,
    {
      phase: "parsing",
      fetched: 1,
      files_total: archive.files.length,
      files_done: 0,
      chunks_total: 0,
      symbols_total: 0,
      bytes_total: archive.files.reduce((n, f) => n + f.size, 0),
      skipped: JSON.stringify(archive.skipped),
      truncated: archive.truncated ? 1 : 0,
    },
    now(),
  );
  return { files: archive.files.length, skipped };
}

export const lineCount = (text: string) => (text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0));

/**
 * A parsed file's rows, one statement per table: the rows travel as one JSON array and SQLite
 * unpacks them (json_each), so a file with thousands of references costs a handful of statements,
 * not thousands.
 */
async function fileRows(d1: D1Database, tenantId: string, gen: string, scope: string, path: string, parsed: ParsedFile, known: ReadonlySet<string>): Promise<D1PreparedStatement[]> {
  const at = iso(now());
  const chunks = await Promise.all(
    parsed.chunks.map(async (c) => {
      const embedText = codeChunkEmbedText(path, c.symbol, c.text);
      return { id: uuidv7(), s: c.start_line, e: c.end_line, sym: c.symbol, k: c.kind, t: c.text, terms: indexTerms(`${path} ${c.symbol} ${c.text}`), h: await sha256Hex(embedText) };
    }),
  );
  const field = (name: string) => `json_extract(value, '$.${name}')`;
  // Hand SQL: each table's rows are one INSERT…SELECT over json_each of the file's rows.
  return [
    d1
      .prepare(
        `INSERT INTO code_chunks (id, tenant_id, generation, scope, path, language, start_line, end_line, symbol, kind, text, terms)
         SELECT ${field("id")}, ?, ?, ?, ?, ?, ${field("s")}, ${field("e")}, ${field("sym")}, ${field("k")}, ${field("t")}, ${field("terms")} FROM json_each(?)`,
      )
      .bind(tenantId, gen, scope, path, parsed.language, JSON.stringify(chunks)),
    // The embedding queue, as queueEmbedding would write each row (a fresh chunk id is never there yet).
    d1
      .prepare(
        `INSERT OR REPLACE INTO embeddings (tenant_id, object_type, object_id, content_hash, status, attempts, last_error, updated_at)
         SELECT ?, 'code_chunk', ${field("id")}, ${field("h")}, 'pending', 0, '', ? FROM json_each(?)`,
      )
      .bind(tenantId, at, JSON.stringify(chunks.map((c) => ({ id: c.id, h: c.h })))),
    d1
      .prepare(
        `INSERT INTO code_symbols (tenant_id, generation, name, name_lower, qualified, kind, path, start_line, end_line, exported, signature)
         SELECT ?, ?, ${field("n")}, lower(${field("n")}), ${field("q")}, ${field("k")}, ?, ${field("s")}, ${field("e")}, ${field("x")}, ${field("sig")} FROM json_each(?)`,
      )
      .bind(tenantId, gen, path, JSON.stringify(parsed.symbols.map((x) => ({ n: x.name, q: x.qualified, k: x.kind, s: x.start_line, e: x.end_line, x: x.exported ? 1 : 0, sig: x.signature })))),
    d1
      .prepare(
        `INSERT INTO code_symbol_refs (tenant_id, generation, name, path, line, enclosing, kind)
         SELECT ?, ?, ${field("n")}, ?, ${field("l")}, ${field("c")}, ${field("k")} FROM json_each(?)`,
      )
      .bind(tenantId, gen, path, JSON.stringify(parsed.references.map((r) => ({ n: r.name, l: r.line, c: r.enclosing, k: r.kind })))),
    d1
      .prepare(
        `INSERT INTO code_imports (tenant_id, generation, path, specifier, target_path, line, names)
         SELECT ?, ?, ?, ${field("sp")}, ${field("t")}, ${field("l")}, ${field("names")} FROM json_each(?)`,
      )
      .bind(tenantId, gen, path, JSON.stringify(parsed.imports.map((m) => ({ sp: m.specifier, t: resolveImport(path, m.specifier, known) ?? "", l: m.line, names: JSON.stringify(m.names) })))),
  ];
}

/** Step 3, repeated: parse a batch of unparsed files into chunks, symbols, references and imports. */
export async function parseBatch(env: Env, job: IndexJob, target: Target, limit = PARSE_BATCH): Promise<{ parsed: number; remaining: number }> {
  await jobIndex(env, job);
  const d1 = env.DB;
  const { tenantId } = job;
  const gen = target.generation;
  const db = dbOf({ d1 });
  const f = codeFiles;
  const unparsed = and(eq(f.tenantId, tenantId), eq(f.generation, gen), eq(f.parsed, 0));
  const files = await db.select({ path: f.path, text: f.text }).from(f).where(unparsed).orderBy(asc(f.path)).limit(limit);
  if (files.length === 0) return { parsed: 0, remaining: 0 };
  const known = new Set(
    (
      await db
        .select({ path: f.path })
        .from(f)
        .where(and(eq(f.tenantId, tenantId), eq(f.generation, gen)))
    ).map((r) => r.path),
  );
  const scope = scopeToken(gen);
  const statements: D1PreparedStatement[] = [];
  let chunks = 0;
  let symbols = 0;
  for (const file of files) {
    // A retried step may have written part of this file: its rows go first.
    for (const t of [codeChunks, codeSymbols, codeSymbolRefs, codeImports]) {
      statements.push(statementOf(d1, db.delete(t).where(and(eq(t.tenantId, tenantId), eq(t.generation, gen), eq(t.path, file.path)))));
    }
    const thisFile = and(eq(f.tenantId, tenantId), eq(f.generation, gen), eq(f.path, file.path));
    let parsed;
    try {
      parsed = await parseSource(file.path, file.text);
    } catch (err) {
      await appendError(d1, tenantId, job.indexId, `${file.path}: ${failureText(err, "code index parse")}`, now());
      statements.push(statementOf(d1, db.update(f).set({ parsed: 1 }).where(thisFile)));
      continue;
    }
    // A work limit that cut the file's parse is reported with the index's errors.
    if (parsed.note) await appendError(d1, tenantId, job.indexId, `${file.path}: ${parsed.note}`, now());
    statements.push(...(await fileRows(d1, tenantId, gen, scope, file.path, parsed, known)));
    chunks += parsed.chunks.length;
    symbols += parsed.symbols.length;
    statements.push(
      statementOf(
        d1,
        db
          .update(f)
          .set({ parsed: 1, language: parsed.language, syntax: parsed.syntax ? 1 : 0 })
          .where(thisFile),
      ),
    );
  }
  await writeBatches(d1, statements);
  const remaining = (await db.select({ n: count() }).from(f).where(unparsed).get())!.n;
  const ix = codeIndexes;
  await db
    .update(ix)
    .set({
      filesDone: sql`${ix.filesDone} + ${files.length}`,
      chunksTotal: sql`${ix.chunksTotal} + ${chunks}`,
      symbolsTotal: sql`${ix.symbolsTotal} + ${symbols}`,
      phase: remaining === 0 ? "embedding" : sql`${ix.phase}`,
      updatedAt: iso(now()),
    })
    .where(and(eq(ix.tenantId, tenantId), eq(ix.id, job.indexId), eq(ix.jobId, job.jobId)))
    .run();
  return { parsed: files.length, remaining };
}

/** Step 4, repeated: embed the generation's pending chunks. Stops (stalled) when a batch embeds nothing. */
export async function embedBatch(env: Env, job: IndexJob, target: Target, limit = EMBED_BATCH): Promise<{ embedded: number; remaining: number; stalled: boolean }> {
  await jobIndex(env, job);
  const { layer } = selectSemantic(env);
  if (!layer) return { embedded: 0, remaining: 0, stalled: false };
  const db = dbOf({ d1: env.DB });
  const e = alias(embeddings, "e");
  const c = alias(codeChunks, "c");
  const joinOn = and(eq(c.tenantId, e.tenantId), eq(c.id, e.objectId));
  // `status = 'pending'` as a literal, as the partial index embeddings_pending_idx declares it.
  const pendingWhere = and(eq(e.tenantId, job.tenantId), eq(e.objectType, "code_chunk"), sql`${e.status} = 'pending'`, eq(c.generation, target.generation));
  const rows = (await db
    .select({ tenant_id: e.tenantId, object_type: e.objectType, object_id: e.objectId, content_hash: e.contentHash })
    .from(e)
    .innerJoin(c, joinOn)
    .where(pendingWhere)
    .orderBy(asc(e.attempts))
    .limit(limit)) as { tenant_id: string; object_type: "code_chunk"; object_id: string; content_hash: string }[];
  if (rows.length === 0) return { embedded: 0, remaining: 0, stalled: false };
  const report = await embedRows(env.DB, layer, rows, now());
  if (report.error) await appendError(env.DB, job.tenantId, job.indexId, `embedding: ${report.error}`, now());
  const remaining = (await db.select({ n: count() }).from(e).innerJoin(c, joinOn).where(pendingWhere).get())!.n;
  return { embedded: report.embedded, remaining, stalled: report.embedded === 0 };
}

/** Step 5 (full): the pending generation becomes the live one, in one statement. Returns the old one. */
export async function switchGeneration(env: Env, job: IndexJob, target: Target): Promise<{ old: string }> {
  const index = await jobIndex(env, job);
  const t = iso(now());
  const ix = codeIndexes;
  const switched = await dbOf({ d1: env.DB })
    .update(ix)
    .set({ generation: sql`${ix.pendingGeneration}`, commitSha: target.commit, pendingGeneration: "", fetched: 0, phase: "complete", finishedAt: t, lastIndexedAt: t, updatedAt: t })
    .where(and(eq(ix.tenantId, job.tenantId), eq(ix.id, job.indexId), eq(ix.jobId, job.jobId), eq(ix.pendingGeneration, target.generation)))
    .run();
  if (switched.meta.changes === 0) throw superseded(`index ${job.indexId} changed while job ${job.jobId} was switching`);
  return { old: index.generation };
}

/** Step 6, repeated: delete a superseded generation's rows and vectors; true when it is gone. */
export async function dropGeneration(env: Env, tenantId: string, generation: string): Promise<boolean> {
  const { done, chunkIds } = await dropGenerationBatch(env.DB, tenantId, generation);
  const { layer } = selectSemantic(env);
  if (layer && chunkIds.length > 0) {
    for (let i = 0; i < chunkIds.length; i += 1000)
      await layer.index.deleteByIds(
        tenantId,
        chunkIds.slice(i, i + 1000).map((id) => vectorId("code_chunk", id)),
      );
  }
  return done;
}

/** The end of a job that could not finish: its phase and error, while it still holds the lock. */
export async function failJob(env: Env, job: IndexJob, message: string): Promise<void> {
  await appendError(env.DB, job.tenantId, job.indexId, message, now());
  await updateJob(env.DB, job.tenantId, job.indexId, job.jobId, { phase: "failed", finished_at: iso(now()) }, now());
}

/** Step (full jobs): the bounded commit backfill for git_commit_retrieval. A failure here is noted, not fatal. */
export async function commitsStep(env: Env, job: IndexJob): Promise<{ recorded: number }> {
  const index = await jobIndex(env, job);
  try {
    return { recorded: await backfillCommits(env, job.tenantId, index.owner, index.name, index.ref) };
  } catch (err) {
    await appendError(env.DB, job.tenantId, job.indexId, `commit history: ${failureText(err, "code index commits")}`, now());
    return { recorded: 0 };
  }
}
