/**
 * A push to an indexed branch re-indexes only what it changed: the compare API names the paths,
 * their rows leave the live generation, and the archive read keeps just those paths (the parse
 * and embed steps then work on them as on any unparsed file). Once done, the index moves to the
 * pushed commit.
 */
import { and, eq, inArray } from "drizzle-orm";
import { dbOf, jsonValues, statementOf } from "../db/client";
import { codeChunks, codeFiles, codeImports, codeSymbolRefs, codeSymbols } from "../db/schema";
import { iso } from "../core/time";
import type { Env } from "../env";
import { githubFor } from "../git/credentials";
import { selectSemantic } from "../search/semantic";
import { vectorId } from "../search/sources";
import { fetchRepoArchive } from "./archive";
import { jobIndex, lineCount, type IndexJob, type Target } from "./indexer";
import { effectiveLimits } from "./limits";
import { dropChunkEmbeddings, putFileStatement, updateJob } from "./store";

/** GitHub's compare lists at most 300 files; a push that changes more is re-read whole. */
const COMPARE_FILE_CAP = 300;

interface CompareFile {
  filename: string;
  status: string;
  previous_filename?: string;
}

const now = () => new Date();

export async function applyIncremental(env: Env, job: IndexJob, target: Target): Promise<{ files: number }> {
  const index = await jobIndex(env, job);
  const d1 = env.DB;
  const gh = githubFor(env, job.tenantId);
  const compare = (
    await gh.request<{ files?: CompareFile[] }>("GET /repos/{owner}/{repo}/compare/{basehead}", {
      owner: index.owner,
      repo: index.name,
      basehead: `${job.base ?? index.commit_sha}...${target.commit}`,
      per_page: 100,
    })
  ).data;
  const changed = compare.files ?? [];
  const whole = changed.length >= COMPARE_FILE_CAP;
  const gone = new Set<string>();
  const wanted = new Set<string>();
  for (const f of changed) {
    gone.add(f.filename);
    if (f.previous_filename) gone.add(f.previous_filename);
    if (f.status !== "removed") wanted.add(f.filename);
  }
  const archive = await fetchRepoArchive(gh, { owner: index.owner, name: index.name }, target.commit, {
    limits: effectiveLimits(index.limits),
    ...(whole ? {} : { only: wanted }),
  });
  const paths = whole
    ? (
        await dbOf({ d1 })
          .select({ path: codeFiles.path })
          .from(codeFiles)
          .where(and(eq(codeFiles.tenantId, job.tenantId), eq(codeFiles.generation, target.generation)))
      ).map((r) => r.path)
    : [...gone];
  await removePaths(env, job.tenantId, target.generation, paths);
  const statements = archive.files.map((f) => putFileStatement(d1, job.tenantId, target.generation, f, lineCount(f.text)));
  for (let i = 0; i < statements.length; i += 80) await d1.batch(statements.slice(i, i + 80));
  await updateJob(d1, job.tenantId, job.indexId, job.jobId, { phase: "parsing", files_done: 0 }, now());
  return { files: archive.files.length };
}

/** Drops the rows (and vectors) of these paths from a generation. */
async function removePaths(env: Env, tenantId: string, generation: string, paths: string[]): Promise<void> {
  const d1 = env.DB;
  const db = dbOf({ d1 });
  const { layer } = selectSemantic(env);
  for (let i = 0; i < paths.length; i += 50) {
    const batch = jsonValues(paths.slice(i, i + 50));
    const ids = (
      await db
        .select({ id: codeChunks.id })
        .from(codeChunks)
        .where(and(eq(codeChunks.tenantId, tenantId), eq(codeChunks.generation, generation), inArray(codeChunks.path, batch)))
    ).map((r) => r.id);
    await d1.batch([
      ...[codeChunks, codeSymbols, codeSymbolRefs, codeImports, codeFiles].map((t) =>
        statementOf(d1, db.delete(t).where(and(eq(t.tenantId, tenantId), eq(t.generation, generation), inArray(t.path, batch)))),
      ),
      dropChunkEmbeddings(d1, tenantId, ids),
    ]);
    if (layer && ids.length > 0)
      await layer.index.deleteByIds(
        tenantId,
        ids.map((id) => vectorId("code_chunk", id)),
      );
  }
}

/** The index now reflects the pushed commit; its totals are counted again. */
export async function finishIncrementalJob(env: Env, job: IndexJob, commit: string): Promise<void> {
  const index = await jobIndex(env, job);
  const t = iso(now());
  // Hand SQL: the totals are counting subqueries over the generation's tables, sharing the bound values by number.
  const count = (table: string) => `(SELECT count(*) FROM ${table} WHERE tenant_id = ?1 AND generation = ?2)`;
  await env.DB.prepare(
    `UPDATE code_indexes SET commit_sha = ?3, phase = 'complete', finished_at = ?4, last_indexed_at = ?4, updated_at = ?4,
       files_total = ${count("code_files")}, files_done = ${count("code_files")},
       chunks_total = ${count("code_chunks")}, symbols_total = ${count("code_symbols")}
     WHERE tenant_id = ?1 AND id = ?5 AND job_id = ?6`,
  )
    .bind(job.tenantId, index.generation, commit, t, job.indexId, job.jobId)
    .run();
}
