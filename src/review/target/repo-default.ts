/**
 * The repository a review tool works on when the caller names none. Seed 004 runs inside one
 * workspace, so its review tools take no repository; here the workspace is the repository the
 * caller's run reports (run_heartbeat), else the tenant's only registered one. Anything else is
 * ambiguous, and is refused naming the candidates rather than picking one.
 */
import { resolveRepo } from "../../git/repo";
import type { RepoName } from "../../git/tokens";
import type { Ctx } from "../../core/context";
import { ToolError } from "../../core/errors";
import { repositoryNames } from "../../work/repos/model";
import { runRepoContext } from "../../work/runs/model";

/** Candidates named in a refusal, at most. */
const MAX_CANDIDATES = 20;

export async function repoOrDefault(ctx: Ctx, repo: string | undefined): Promise<RepoName> {
  if (repo !== undefined) return resolveRepo(ctx, repo);
  const run = await runRepoContext(ctx, undefined);
  if (run?.repositoryId) return resolveRepo(ctx, run.repositoryId);
  const found = await repositoryNames(ctx, MAX_CANDIDATES + 1);
  if (found.length === 1) return resolveRepo(ctx, `${found[0]!.owner}/${found[0]!.name}`);
  if (found.length === 0) {
    throw new ToolError("repo_required", "No repository given, and this tenant has no registered repository to default to.", {
      hint: 'Pass repo: "owner/name", or register the repository once with repo_register {remote_url: "https://github.com/owner/name"}; with one registered (or a run that reports its repository through run_heartbeat) repo can be left out.',
    });
  }
  const names = found.slice(0, MAX_CANDIDATES).map((r) => `${r.owner}/${r.name}`);
  throw new ToolError(
    "repo_required",
    `No repository given, and this tenant has ${found.length > MAX_CANDIDATES ? `more than ${MAX_CANDIDATES}` : found.length} registered repositories, so which one is meant is ambiguous.`,
    {
      hint: `Pass repo as one of: ${names.join(", ")}${found.length > MAX_CANDIDATES ? ", … (repo_query lists them all)" : ""}; or report your run's repository with run_heartbeat.`,
    },
  );
}

/** How a tool's `repo` parameter says it defaults. */
export const DEFAULT_REPO_NOTE = "Default: your run's repository (run_heartbeat), else the tenant's only registered one; with several, refused naming them.";
