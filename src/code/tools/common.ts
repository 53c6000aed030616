/** Pieces every code tool shares: the `repo` parameter, which indexes a call reads, and their shape in answers. */
import { z } from "zod";
import { iso } from "../../core/time";
import { githubFor, githubToolError } from "../../git/credentials";
import { resolveRepo } from "../../git/repo";
import type { Ctx } from "../../core/context";
import { ToolError } from "../../core/errors";
import { listIndexes, recordHead, repoKey, type IndexRow } from "../store";

export const codeRepoField = z.string().min(1).max(200).describe("Repository: owner/name, or a repo_register id or slug.");

export const optionalRepoField = codeRepoField.optional().describe("Repository (owner/name or registered); omitted: every indexed one.");

export const refField = z.string().min(1).max(200).optional().describe("Branch, tag or sha (default: the default branch).");

/** The repository a `repo` argument names, with GitHub's errors in the envelope. */
export async function repoOf(ctx: Ctx, repo: string) {
  try {
    return await resolveRepo(ctx, repo);
  } catch (err) {
    throw githubToolError(err);
  }
}

/** The live index of each repository asked for (the most recently indexed ref of each, or `ref`). */
export async function liveIndexes(ctx: Ctx, repo: string | undefined, ref?: string): Promise<IndexRow[]> {
  const name = repo ? await repoOf(ctx, repo) : undefined;
  const rows = (await listIndexes(ctx.d1, ctx.tenantId, name ? repoKey(name.owner, name.name) : undefined)).filter((r) => r.generation !== "" && (ref === undefined || r.ref === ref));
  const newest = new Map<string, IndexRow>();
  for (const r of rows) {
    const seen = newest.get(r.repo);
    if (!seen || r.last_indexed_at > seen.last_indexed_at) newest.set(r.repo, r);
  }
  if (newest.size === 0) {
    throw new ToolError("index_not_found", repo ? `${repo}${ref ? `@${ref}` : ""} has no completed index yet.` : "No repository of this tenant has a completed index yet.", {
      hint: 'Start one with index_workspace {repo: "owner/name"} and wait until index_status says phase: complete.',
    });
  }
  return [...newest.values()];
}

/** What every answer says about the index it reflects. */
export const indexedSchema = z.object({
  repo: z.string().describe("owner/name."),
  ref: z.string().describe("The ref indexed."),
  commit: z.string().describe("The commit the answer reflects."),
});

export const indexesField = z.array(indexedSchema).describe("The indexes read.");

export const indexedOf = (r: IndexRow) => ({ repo: `${r.owner}/${r.name}`, ref: r.ref, commit: r.commit_sha });

/** Head checks at most this often per index: index_status is polled. */
const HEAD_TTL_MS = 60_000;

export async function checkHead(ctx: Ctx, row: IndexRow): Promise<IndexRow> {
  const now = ctx.clock.now();
  if (row.head_checked_at && now.getTime() - Date.parse(row.head_checked_at) < HEAD_TTL_MS) return row;
  try {
    const head = (await githubFor(ctx.env, ctx.tenantId).request<{ sha: string }>("GET /repos/{owner}/{repo}/commits/{ref}", { owner: row.owner, repo: row.name, ref: row.ref })).data.sha;
    await recordHead(ctx.d1, ctx.tenantId, row.id, head, iso(now));
    return { ...row, head_sha: head, head_checked_at: iso(now) };
  } catch {
    return row; // freshness stays as last known; GitHub being away does not fail a status read
  }
}
