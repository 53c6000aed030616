/**
 * Commits for git_commit_retrieval: recorded from the pushes the webhook receiver gets, and
 * back-filled through the commits API when a repository is indexed (bounded: the newest
 * BACKFILL_COMMITS, the files of the newest BACKFILL_DETAILS). One row per tenant, repository and sha.
 */
import { and, eq, sql } from "drizzle-orm";
import { dbOf, statementOf } from "../db/client";
import { sha256Hex } from "../db/ids";
import { codeCommits } from "../db/schema";
import type { Env } from "../env";
import { githubFor } from "../git/credentials";

export const BACKFILL_COMMITS = 300;
export const BACKFILL_DETAILS = 30;

export interface CommitRecord {
  sha: string;
  message: string;
  author: string;
  date: string;
  files: string[];
}

/** The FTS scope of a tenant's repository: one token each, so a MATCH reads only its rows. */
export async function commitScope(tenantId: string, repo: string): Promise<string> {
  return `t${tenantId.replace(/[^0-9a-z]/gi, "").toLowerCase()} r${(await sha256Hex(repo)).slice(0, 24)}`;
}

/** Records commits; an existing sha keeps its row unless the new one knows its files and the old did not. */
export async function recordCommits(d1: D1Database, tenantId: string, repo: string, commits: CommitRecord[], source: "push" | "backfill"): Promise<number> {
  if (commits.length === 0) return 0;
  const scope = await commitScope(tenantId, repo);
  const db = dbOf({ d1 });
  const t = codeCommits;
  let added = 0;
  for (let i = 0; i < commits.length; i += 50) {
    const results = await d1.batch(
      commits.slice(i, i + 50).flatMap((c) => {
        const files = JSON.stringify(c.files);
        return [
          // The guard on the new files stays in SQL so every commit keeps its two statements (results are read by position).
          statementOf(d1, db.delete(t).where(and(eq(t.tenantId, tenantId), eq(t.repo, repo), eq(t.sha, c.sha), eq(t.filesChanged, "[]"), sql`${files} <> '[]'`))),
          statementOf(
            d1,
            db
              .insert(t)
              .values({
                tenantId,
                repo,
                scope,
                sha: c.sha,
                message: c.message.slice(0, 8000),
                author: c.author.slice(0, 200),
                date: c.date,
                filesChanged: JSON.stringify(c.files.slice(0, 3000)),
                source,
              })
              .onConflictDoNothing({ target: [t.tenantId, t.repo, t.sha] })
              .returning({ sha: t.sha }),
          ),
        ];
      }),
    );
    // Counted by RETURNING: D1's `changes` would count the FTS trigger's rows too.
    added += results.filter((_, j) => j % 2 === 1).reduce((n, r) => n + r.results.length, 0);
  }
  return added;
}

/** The repositories the tenant has commits of. */
export async function committedRepos(d1: D1Database, tenantId: string): Promise<string[]> {
  const rows = await dbOf({ d1 }).selectDistinct({ repo: codeCommits.repo }).from(codeCommits).where(eq(codeCommits.tenantId, tenantId));
  return rows.map((r) => r.repo);
}

export interface CommitHit {
  repo: string;
  sha: string;
  message: string;
  author: string;
  date: string;
  files_changed: string;
  rank: number;
}

/** Commits matching an FTS query (scopes included), best first; `since` and `author` narrow when not ''. */
export async function searchCommits(d1: D1Database, tenantId: string, match: string, since: string, author: string): Promise<CommitHit[]> {
  // Hand SQL: drizzle cannot say `code_commits_fts MATCH` nor rank by bm25().
  const rows = await d1
    .prepare(
      `SELECT c.repo, c.sha, c.message, c.author, c.date, c.files_changed, bm25(code_commits_fts, 0.0, 1.0, 0.5) AS rank
       FROM code_commits_fts f JOIN code_commits c ON c.seq = f.rowid
       WHERE code_commits_fts MATCH ? AND c.tenant_id = ? AND (? = '' OR c.date >= ?) AND (? = '' OR lower(c.author) = lower(?))
       ORDER BY rank LIMIT 1000`,
    )
    .bind(match, tenantId, since, since, author, author)
    .all<CommitHit>();
  return rows.results;
}

interface ApiCommit {
  sha: string;
  commit: { message: string; author: { name?: string; date?: string } | null };
  files?: { filename: string }[];
}

/** The bounded backfill of a ref's history, run as a step of a full index job. */
export async function backfillCommits(env: Env, tenantId: string, owner: string, name: string, ref: string): Promise<number> {
  const gh = githubFor(env, tenantId);
  const repo = `${owner}/${name}`.toLowerCase();
  const list: ApiCommit[] = [];
  for (let page = 1; list.length < BACKFILL_COMMITS; page++) {
    const batch = (await gh.request<ApiCommit[]>("GET /repos/{owner}/{repo}/commits", { owner, repo: name, sha: ref, per_page: 100, page })).data;
    list.push(...batch);
    if (batch.length < 100) break;
  }
  const records: CommitRecord[] = [];
  for (const [i, c] of list.slice(0, BACKFILL_COMMITS).entries()) {
    const files =
      i < BACKFILL_DETAILS ? ((await gh.request<ApiCommit>("GET /repos/{owner}/{repo}/commits/{ref}", { owner, repo: name, ref: c.sha, per_page: 100 })).data.files ?? []).map((f) => f.filename) : [];
    records.push({ sha: c.sha, message: c.commit.message, author: c.commit.author?.name ?? "", date: c.commit.author?.date ?? "", files });
  }
  return recordCommits(env.DB, tenantId, repo, records, "backfill");
}
