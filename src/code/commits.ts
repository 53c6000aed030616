/**
 * Commits for git_commit_retrieval: recorded from the pushes the webhook receiver gets, and
 * back-filled through the commits API when a repository is indexed (bounded: the newest
 * BACKFILL_COMMITS, the files of the newest BACKFILL_DETAILS). One row per tenant, repository and sha.
 */
import { sha256Hex } from "../db/ids";
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
  let added = 0;
  for (let i = 0; i < commits.length; i += 50) {
    const results = await d1.batch(
      commits.slice(i, i + 50).flatMap((c) => [
        d1.prepare(`DELETE FROM code_commits WHERE tenant_id = ? AND repo = ? AND sha = ? AND files_changed = '[]' AND ? <> '[]'`).bind(tenantId, repo, c.sha, JSON.stringify(c.files)),
        d1
          .prepare(
            `INSERT INTO code_commits (tenant_id, repo, scope, sha, message, author, date, files_changed, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (tenant_id, repo, sha) DO NOTHING RETURNING sha`,
          )
          .bind(tenantId, repo, scope, c.sha, c.message.slice(0, 8000), c.author.slice(0, 200), c.date, JSON.stringify(c.files.slice(0, 3000)), source),
      ]),
    );
    // Counted by RETURNING: D1's `changes` would count the FTS trigger's rows too.
    added += results.filter((_, j) => j % 2 === 1).reduce((n, r) => n + r.results.length, 0);
  }
  return added;
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
