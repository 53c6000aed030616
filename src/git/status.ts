/**
 * git_status over GitHub: there is no working tree, so "status" is the state of a branch on
 * GitHub — its head, how far it is ahead of / behind its base, protection, the open pull request,
 * and the combined commit status and check runs of its head; with the seed's includeSubmodules
 * (on by default), a row per submodule its head pins (submodules.ts).
 */
import { repoField } from "./repo";
import { z } from "zod";
import { ToolError } from "../core/errors";
import type { RepoName } from "./tokens";
import { assertSafeRef } from "./tokens";
import { cleanText } from "./untrusted";
import {
  cell,
  defaultBranch,
  errorCode,
  explainMissing,
  fullName,
  type Git,
  gitReadTool,
  mapLimit,
  rethrowFatal,
  reposField,
  reposInScope,
  repoParams,
  statusHeader,
  REQUEST_BUDGET,
  MAX_REPOS,
} from "./read-tool";
import { followSubmodule, type Gitmodules, listSubmodules, MAX_SUBMODULES, type RepoCache, REQUESTS_PER_SUBMODULE, submoduleField } from "./submodules";

const branchNotFound = (r: RepoName, branch: string) =>
  new ToolError("branch_not_found", `Branch '${branch}' does not exist in ${fullName(r)}.`, { hint: "Check the branch name; git_inventory lists each repository's default branch." });

const checksSchema = z.object({
  total: z.number().int().describe("Check runs on the head commit (first 100)."),
  success: z.number().int().optional().describe("Completed with success."),
  failure: z.number().int().optional().describe("Completed with failure, timed_out, cancelled, action_required or startup_failure."),
  pending: z.number().int().optional().describe("Not completed yet."),
  other: z.number().int().optional().describe("Completed as neutral, skipped or stale."),
});

const rowSchema = z.object({
  label: z.string().describe("The repository (owner/name), or a submodule's path in it."),
  path: z.string().describe("The branch's web address on GitHub (a submodule's: its pinned commit's, else its url)."),
  ok: z.boolean().optional().describe("True when the branch (or submodule) was read (omitted on failure)."),
  statusText: z.string().describe("A `git status -b` style header: ## branch...base [ahead N, behind M] (a submodule: ## HEAD (pinned abc1234)...main [behind N]), or the reason it was not read."),
  branch: z.string().optional().describe("The branch."),
  base: z.string().optional().describe("The branch it is compared with (a submodule: the branch it tracks)."),
  headSha: z.string().optional().describe("The branch's head commit (a submodule: the commit the superproject pins)."),
  headAbbrev: z.string().optional().describe("The head commit, 7 characters."),
  ahead: z.number().int().optional().describe("Commits on branch not on base."),
  behind: z.number().int().optional().describe("Commits on base not on branch."),
  protected: z.boolean().optional().describe("True when branch protection applies (omitted otherwise)."),
  pullRequest: z
    .object({
      number: z.number().int().describe("Pull request number."),
      title: z.string().describe("Its title."),
      url: z.string().describe("Its web address."),
      draft: z.boolean().optional().describe("True for a draft."),
      base: z.string().describe("The branch it targets."),
    })
    .optional()
    .describe("The open pull request from this branch, if any."),
  combinedStatus: z
    .object({
      state: z.string().describe("success, pending, failure or error (GitHub's combined commit status)."),
      total: z.number().int().describe("How many statuses it combines."),
    })
    .optional()
    .describe("The combined commit status of the head."),
  checks: checksSchema.optional().describe("Check runs on the head."),
  submodule: submoduleField.optional().describe("On a submodule's row: where .gitmodules points."),
  error: z.string().optional().describe("The error code when this repository (several repos only) or submodule could not be read."),
});
type Row = z.input<typeof rowSchema>;

const FAILED = new Set(["failure", "timed_out", "cancelled", "action_required", "startup_failure"]);

interface CheckRun {
  status: string;
  conclusion: string | null;
}

function summarizeChecks(runs: CheckRun[], total: number): z.input<typeof checksSchema> {
  const out = { total, success: 0, failure: 0, pending: 0, other: 0 };
  for (const r of runs) {
    if (r.status !== "completed") out.pending++;
    else if (r.conclusion === "success") out.success++;
    else if (FAILED.has(r.conclusion ?? "")) out.failure++;
    else out.other++;
  }
  return out;
}

async function branchStatus(git: Git, r: RepoName, input: { branch?: string; base?: string }): Promise<Row> {
  const p = repoParams(r);
  const fallback = input.branch && input.base ? "" : await defaultBranch(git, r);
  const branch = input.branch ?? fallback;
  const base = input.base ?? fallback;
  const head = await git.gh
    .request<{ commit: { sha: string }; protected: boolean; _links: { html: string } }>("GET /repos/{owner}/{repo}/branches/{branch}", { ...p, branch })
    .catch((err: unknown) => explainMissing(git, r, err, () => branchNotFound(r, branch)));
  const sha = head.data.commit.sha;
  const [compare, pulls, status, checks] = await Promise.all([
    branch === base
      ? null
      : git.gh
          .request<{ ahead_by: number; behind_by: number }>("GET /repos/{owner}/{repo}/compare/{basehead}", { ...p, basehead: `${base}...${branch}`, per_page: 1 })
          .catch((err: unknown) => explainMissing(git, r, err, () => branchNotFound(r, base))),
    git.gh.request<Array<{ number: number; title: string; html_url: string; draft?: boolean; base: { ref: string } }>>("GET /repos/{owner}/{repo}/pulls", {
      ...p,
      state: "open",
      head: `${r.owner}:${branch}`,
      per_page: 1,
    }),
    git.gh.request<{ state: string; total_count: number }>("GET /repos/{owner}/{repo}/commits/{ref}/status", { ...p, ref: sha, per_page: 1 }),
    git.gh.request<{ total_count: number; check_runs: CheckRun[] }>("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", { ...p, ref: sha, per_page: 100 }),
  ]);
  const ahead = compare?.data.ahead_by ?? 0;
  const behind = compare?.data.behind_by ?? 0;
  const pr = pulls.data[0];
  return {
    label: fullName(r),
    path: head.data._links.html,
    ok: true,
    statusText: statusHeader(branch, base, ahead, behind),
    branch,
    base,
    headSha: sha,
    headAbbrev: sha.slice(0, 7),
    ahead,
    behind,
    protected: head.data.protected,
    pullRequest: pr ? { number: pr.number, title: cleanText(pr.title), url: pr.html_url, draft: pr.draft, base: pr.base.ref } : undefined,
    combinedStatus: status.data.total_count > 0 ? { state: status.data.state, total: status.data.total_count } : undefined,
    checks: checks.data.total_count > 0 ? summarizeChecks(checks.data.check_runs, checks.data.total_count) : undefined,
  };
}

const groupSchema = z.object({
  workspace_root: z.string().describe("The repository (owner/name)."),
  repos: z.array(rowSchema).describe("The branch's state, then one row per submodule followed."),
  submodulesTruncated: z.boolean().optional().describe(`True when submodules were left out: at most ${MAX_SUBMODULES} are followed per call.`),
  submodulesOmittedCount: z.number().int().optional().describe("How many submodules were left out."),
  submodulesNote: z.string().optional().describe("Why .gitmodules could not be read, when it could not."),
});

/** What one repository's read gave, before its submodules are followed. */
interface Read {
  r: RepoName;
  row: Row;
  found: Gitmodules;
}

/**
 * Follows the submodules every repository listed, in repository order, up to MAX_SUBMODULES for the
 * whole call (so which ones are left out does not depend on which repository answered first).
 */
async function withSubmodules(git: Git, reads: Read[]) {
  let room = MAX_SUBMODULES;
  const plans = reads.map((read) => {
    const take = read.found.submodules.slice(0, room);
    room -= take.length;
    return { read, take, omitted: read.found.submodules.length - take.length };
  });
  const cache: RepoCache = new Map();
  const jobs = plans.flatMap((p, i) => p.take.map((sub) => ({ i, sub })));
  const rows = await mapLimit(jobs, 4, ({ i, sub }) => {
    const { r, row } = plans[i]!.read;
    return followSubmodule(git, r, row.headSha!, row.branch!, sub, cache);
  });
  return plans.map(({ read, omitted }, i) => ({
    workspace_root: fullName(read.r),
    repos: [read.row, ...rows.filter((_row, j) => jobs[j]!.i === i)],
    submodulesTruncated: omitted > 0,
    submodulesOmittedCount: omitted || undefined,
    submodulesNote: "note" in read.found ? read.found.note : undefined,
  }));
}

export const gitStatusTool = gitReadTool({
  fanOut: true,
  name: "git_status",
  title: "Branch status on GitHub",
  description: `The state of a branch on GitHub (there is no working tree): head commit, ahead/behind against its base (the default branch unless base is given), branch protection, the open pull request from it, and the combined commit status and check runs of its head; then, unless include_submodules is false, a row per submodule in .gitmodules: the commit the head pins and, where its repository is readable, ahead/behind against the branch it tracks (at most ${MAX_SUBMODULES} per call). With repos, one group per repository (a failing repository reports its error in its row). About 7 GitHub requests per repository, plus up to ${REQUESTS_PER_SUBMODULE} per submodule.`,
  input: z.object({
    repo: repoField.optional(),
    repos: reposField,
    branch: z.string().min(1).max(256).optional().describe("The branch (default: the repository's default branch)."),
    base: z.string().min(1).max(256).optional().describe("The branch to count ahead/behind against (default: the default branch)."),
    include_submodules: z
      .boolean()
      .default(true)
      .describe(
        `The seed's includeSubmodules (default true): follow the submodules .gitmodules lists at the branch head, reporting each one's pinned commit and, in its own repository, ahead/behind against the branch it tracks (.gitmodules branch, else its default branch). At most ${MAX_SUBMODULES} per call. false skips them.`,
      ),
  }),
  output: z.object({ groups: z.array(groupSchema).describe("One group per repository.") }),
  // The default budget, plus what the seed's submodule cap can cost on top of every repository's own reads.
  requestBudget: Math.max(REQUEST_BUDGET, MAX_REPOS * 8 + MAX_SUBMODULES * REQUESTS_PER_SUBMODULE),
  run: async (git, input) => {
    assertSafeRef("branch", input.branch);
    assertSafeRef("base", input.base);
    const repos = await reposInScope(git.ctx, input, "git_status reads a branch of a repository");
    const reads = await mapLimit(repos, 4, async (r): Promise<Read> => {
      try {
        const row = await branchStatus(git, r, input);
        return { r, row, found: input.include_submodules ? await listSubmodules(git, r, row.headSha!) : { submodules: [] } };
      } catch (err) {
        if (repos.length === 1) throw err;
        rethrowFatal(err);
        const code = errorCode(err);
        return { r, row: { label: fullName(r), path: fullName(r), statusText: code.replace(/_/g, " "), error: code }, found: { submodules: [] } };
      }
    });
    return { groups: await withSubmodules(git, reads) };
  },
  markdown: (result) => {
    const lines = ["# git_status"];
    for (const g of result.groups) {
      lines.push("", `### ${g.workspace_root}`);
      for (const row of g.repos) {
        if (row.submodule) lines.push(`Submodule ${cell(row.label)}${row.submodule.repository ? ` (${row.submodule.repository})` : ""}`);
        lines.push("```", row.statusText, "```");
        if (row.error || row.submodule) continue;
        const facts = [`head ${row.headAbbrev}`, row.protected ? "protected" : ""];
        if (row.combinedStatus) facts.push(`status ${row.combinedStatus.state} (${row.combinedStatus.total})`);
        if (row.checks) facts.push(`checks ${row.checks.success ?? 0} passed, ${row.checks.failure ?? 0} failed, ${row.checks.pending ?? 0} pending of ${row.checks.total}`);
        lines.push(facts.filter(Boolean).join(" · "));
        if (row.pullRequest) lines.push(`Pull request #${row.pullRequest.number}${row.pullRequest.draft ? " (draft)" : ""}: ${cell(row.pullRequest.title)} → ${row.pullRequest.base}`);
      }
      if (g.submodulesNote) lines.push(g.submodulesNote);
      if (g.submodulesTruncated) lines.push(`${g.submodulesOmittedCount} more submodule(s) not followed (at most ${MAX_SUBMODULES} per call).`);
    }
    return lines.join("\n");
  },
});
