/**
 * The pieces the mutating git tools share, over GitHub's Git Data, refs, compare and merges APIs:
 * reading heads, writing objects, moving a branch without force, short-lived temporary branches
 * (GitHub's merge machinery only merges into a branch), and the conflict report.
 *
 * A branch is only ever moved with `force: false`, so a concurrent push makes the update fail
 * instead of being overwritten; that failure is a retryable `conflict` and nothing was changed.
 */
import { z } from "zod";
import { confirmFirst, mayAsk } from "../core/confirm";
import type { Ctx } from "../core/context";
import { ToolError } from "../core/errors";
import { type GitHubClient, GitHubError, type GitHubResponse, type Operation, type Params } from "./client";
import { githubToolError } from "./credentials";
import { isProtectedBranch, type RepoName } from "./tokens";
import { cleanText } from "./untrusted";

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  message: string;
  author?: { name: string; email: string; date: string };
}

export interface Comparison {
  status: "diverged" | "ahead" | "behind" | "identical";
  aheadBy: number;
  totalCommits: number;
  mergeBase: string;
  mergeBaseTree: string;
  /** Commits in head not in base, oldest first (GitHub lists at most 250). */
  commits: { sha: string; parents: string[] }[];
}

export type MergeResult = { kind: "merged"; sha: string; tree: string } | { kind: "up_to_date" } | { kind: "conflict"; detail: string };

/** Temporary branches live under this prefix so a stray one is recognisable as ours. */
export const TEMP_PREFIX = "agent-ledger-tmp/";
/** GitHub's trees can be truncated for very large repositories; conflict paths are then unknown. */
const MAX_CONFLICT_PATHS = 100;

export const movedRef = (branch: string) =>
  new ToolError("conflict", `Branch '${branch}' moved while this call was running; nothing was changed on it.`, {
    hint: "Someone pushed meanwhile. Re-run the call: it starts again from the branch's new head. Nothing was forced.",
    retryable: true,
  });

/**
 * Requests one call may make. A Worker invocation has a subrequest limit (1000 on the paid plan);
 * running out halfway would strand work, so the writer stops first, before moving any branch.
 */
export const REQUEST_BUDGET = 900;

/**
 * Asks the person first before `what` moves the repository's default branch or a protected one
 * (a client that cannot be asked needs confirm: true). Call it before the first write; a call
 * whose answer cannot matter costs no extra request.
 */
export async function confirmBranchWrite(ctx: Ctx, w: GitWriter, branch: string, what: string): Promise<void> {
  if (!mayAsk(ctx)) return;
  const isDefault = branch === (await w.defaultBranch());
  if (!isDefault && !isProtectedBranch(branch)) return;
  await confirmFirst(ctx, {
    key: "confirm_branch_write",
    message: `${what} on ${w.repo.owner}/${w.repo.name}'s ${isDefault ? "default" : "protected"} branch '${branch}'. Go ahead?`,
  });
}

export class GitWriter {
  private spent = 0;

  constructor(
    readonly gh: GitHubClient,
    readonly repo: RepoName,
    private readonly budget = REQUEST_BUDGET,
  ) {}

  private request<T>(op: Operation, params: Params, body?: unknown): Promise<GitHubResponse<T>> {
    if (++this.spent > this.budget) {
      throw new ToolError("request_budget_exceeded", `This call needs more than ${this.budget} GitHub requests; nothing was moved.`, {
        hint: "Split the work: fewer sources, commits or files per call.",
      });
    }
    return this.gh.request<T>(op, params, body);
  }

  private get p() {
    return { owner: this.repo.owner, repo: this.repo.name };
  }

  async defaultBranch(): Promise<string> {
    const res = await this.request<{ default_branch: string }>("GET /repos/{owner}/{repo}", this.p);
    return res.data.default_branch;
  }

  /** The branch's head SHA, or null when the branch does not exist. */
  async branchHead(branch: string): Promise<string | null> {
    try {
      const res = await this.request<{ object: { sha: string } }>("GET /repos/{owner}/{repo}/git/ref/{ref}", { ...this.p, ref: `heads/${branch}` });
      return res.data.object.sha;
    } catch (err) {
      if (err instanceof GitHubError && err.code === "github_not_found") return null;
      throw err;
    }
  }

  /** Any commit-ish GitHub resolves (SHA, short SHA, tag, branch) to its full SHA, or null. */
  async resolveCommit(ref: string): Promise<string | null> {
    try {
      const res = await this.request<{ sha: string }>("GET /repos/{owner}/{repo}/commits/{ref}", { ...this.p, ref, per_page: 1 });
      return res.data.sha;
    } catch (err) {
      if (err instanceof GitHubError && (err.code === "github_not_found" || err.code === "github_unprocessable")) return null;
      throw err;
    }
  }

  async commit(sha: string): Promise<CommitInfo> {
    const res = await this.request<{ sha: string; tree: { sha: string }; parents: { sha: string }[]; message: string; author: CommitInfo["author"] }>(
      "GET /repos/{owner}/{repo}/git/commits/{commit_sha}",
      { ...this.p, commit_sha: sha },
    );
    const d = res.data;
    return { sha: d.sha, tree: d.tree.sha, parents: d.parents.map((p) => p.sha), message: d.message, author: d.author };
  }

  async createCommit(message: string, tree: string, parents: string[], author?: CommitInfo["author"]): Promise<string> {
    const body: Record<string, unknown> = { message, tree, parents };
    if (author) body.author = author;
    const res = await this.request<{ sha: string }>("POST /repos/{owner}/{repo}/git/commits", this.p, body);
    return res.data.sha;
  }

  async createBlob(content: string, encoding: "utf-8" | "base64"): Promise<string> {
    const res = await this.request<{ sha: string }>("POST /repos/{owner}/{repo}/git/blobs", this.p, { content, encoding });
    return res.data.sha;
  }

  async createTree(baseTree: string, entries: TreeEntry[]): Promise<string> {
    const res = await this.request<{ sha: string }>("POST /repos/{owner}/{repo}/git/trees", this.p, { base_tree: baseTree, tree: entries });
    return res.data.sha;
  }

  /** Every entry of a tree, recursively; null when GitHub truncated the listing (very large trees). */
  async treeListing(tree: string): Promise<{ path: string; type: string; mode: string; sha: string }[] | null> {
    const res = await this.request<{ truncated: boolean; tree: { path: string; type: string; mode: string; sha: string }[] }>("GET /repos/{owner}/{repo}/git/trees/{tree_sha}", {
      ...this.p,
      tree_sha: tree,
      recursive: "1",
    });
    return res.data.truncated ? null : res.data.tree;
  }

  /** Blob paths → blob SHAs; null when truncated. */
  async flatTree(tree: string): Promise<Map<string, string> | null> {
    const listing = await this.treeListing(tree);
    return listing && new Map(listing.filter((e) => e.type === "blob").map((e) => [e.path, e.sha]));
  }

  /** `base...head`; null when GitHub finds no common ancestor (or either side is unknown). */
  async compare(base: string, head: string): Promise<Comparison | null> {
    try {
      const res = await this.request<{
        status: Comparison["status"];
        ahead_by: number;
        total_commits: number;
        merge_base_commit: { sha: string; commit: { tree: { sha: string } } };
        commits: { sha: string; parents: { sha: string }[] }[];
      }>("GET /repos/{owner}/{repo}/compare/{basehead}", { ...this.p, basehead: `${base}...${head}`, per_page: 100 });
      const d = res.data;
      return {
        status: d.status,
        aheadBy: d.ahead_by,
        totalCommits: d.total_commits,
        mergeBase: d.merge_base_commit.sha,
        mergeBaseTree: d.merge_base_commit.commit.tree.sha,
        commits: d.commits.map((c) => ({ sha: c.sha, parents: c.parents.map((p) => p.sha) })),
      };
    } catch (err) {
      if (err instanceof GitHubError && err.code === "github_not_found") return null;
      throw err;
    }
  }

  /**
   * Moves `branch` from `from` to `to` without force. GitHub answers 422 when the update is not a
   * fast-forward of the branch's current head: if the head is no longer `from`, someone pushed.
   */
  async moveBranch(branch: string, from: string, to: string): Promise<void> {
    try {
      await this.request("PATCH /repos/{owner}/{repo}/git/refs/{ref}", { ...this.p, ref: `heads/${branch}` }, { sha: to, force: false });
    } catch (err) {
      if (err instanceof GitHubError && (err.code === "github_unprocessable" || err.code === "github_conflict")) {
        const now = await this.branchHead(branch);
        if (now !== from) throw movedRef(branch);
      }
      throw err;
    }
  }

  /** Creates `branch` at `sha`; someone creating it first is the same race as a moved ref. */
  async createBranch(branch: string, sha: string): Promise<void> {
    try {
      await this.request("POST /repos/{owner}/{repo}/git/refs", this.p, { ref: `refs/heads/${branch}`, sha });
    } catch (err) {
      if (err instanceof GitHubError && err.code === "github_unprocessable" && (await this.branchHead(branch)) !== null) throw movedRef(branch);
      throw err;
    }
  }

  async deleteBranch(branch: string): Promise<boolean> {
    try {
      await this.gh.request("DELETE /repos/{owner}/{repo}/git/refs/{ref}", { ...this.p, ref: `heads/${branch}` });
      return true;
    } catch (err) {
      if (err instanceof GitHubError) return false;
      throw err;
    }
  }

  /**
   * Runs `fn` with a temporary branch at `sha`, deleted afterwards on every path (a failed delete
   * is not allowed to mask the result or the original error).
   */
  async withTempBranch<T>(sha: string, fn: (branch: string) => Promise<T>): Promise<T> {
    const branch = `${TEMP_PREFIX}${crypto.randomUUID()}`;
    await this.request("POST /repos/{owner}/{repo}/git/refs", this.p, { ref: `refs/heads/${branch}`, sha });
    try {
      return await fn(branch);
    } finally {
      await this.deleteBranch(branch).catch(() => false);
    }
  }

  /** GitHub's own merge of `head` into `base` (a branch): 201 merged, 204 nothing to do, 409 conflict. */
  async merge(base: string, head: string, message: string): Promise<MergeResult> {
    try {
      const res = await this.request<{ sha: string; commit: { tree: { sha: string } } } | null>("POST /repos/{owner}/{repo}/merges", this.p, { base, head, commit_message: message });
      if (res.status === 204 || !res.data) return { kind: "up_to_date" };
      return { kind: "merged", sha: res.data.sha, tree: res.data.commit.tree.sha };
    } catch (err) {
      if (err instanceof GitHubError && err.code === "github_conflict") return { kind: "conflict", detail: err.message };
      throw err;
    }
  }

  /**
   * The paths a three-way merge could not settle at file level: changed on both sides, differently.
   * GitHub's 409 names no paths, so they are computed from the three trees.
   */
  async conflictPaths(baseTree: string, oursTree: string, theirsTree: string): Promise<string[]> {
    const [base, ours, theirs] = await Promise.all([this.flatTree(baseTree), this.flatTree(oursTree), this.flatTree(theirsTree)]);
    if (!base || !ours || !theirs) return [];
    const paths = new Set([...ours.keys(), ...theirs.keys()]);
    const out: string[] = [];
    for (const p of [...paths].sort()) {
      const b = base.get(p),
        o = ours.get(p),
        t = theirs.get(p);
      // File names are whoever pushed them: returned as cleaned data.
      if (o !== b && t !== b && o !== t) out.push(cleanText(p));
      if (out.length >= MAX_CONFLICT_PATHS) break;
    }
    return out;
  }
}

export type BlobMode = "100644" | "100755" | "120000";

export interface TreeEntry {
  path: string;
  mode: BlobMode;
  type: "blob";
  sha?: string | null;
  content?: string;
}

export type PickResult = { kind: "applied"; sha: string; tree: string } | { kind: "empty" } | { kind: "conflict"; paths: string[]; detail: string };

/**
 * Applies commit `c`'s change (relative to its first parent P) on top of `head`, as a new commit
 * whose only parent is `head`: a cherry-pick, which GitHub has no endpoint for.
 *
 * GitHub's merges API merges with base = merge-base. A temporary commit with `head`'s tree and P
 * as its parent makes P that merge-base, so merging `c` into a temporary branch at it computes the
 * three-way merge (base P, ours head, theirs c). The merge commit is only a carrier for the tree:
 * the result is a fresh commit with that tree, `c`'s message and author, and `head` as parent.
 * A result tree equal to `head`'s means the change is already there (patch-equivalent): dropped.
 */
export async function pickOnto(w: GitWriter, head: CommitInfo, c: CommitInfo): Promise<PickResult> {
  const parent = c.parents[0];
  if (c.parents.length !== 1 || !parent) {
    return { kind: "conflict", paths: [], detail: `${c.sha.slice(0, 7)} is ${c.parents.length === 0 ? "a root commit" : "a merge commit"}; only single-parent commits can be replayed.` };
  }
  let tree: string;
  if (parent === head.sha) {
    tree = c.tree;
  } else {
    const carrier = await w.createCommit("agent-ledger: three-way merge carrier", head.tree, [parent]);
    const merged = await w.withTempBranch(carrier, (branch) => w.merge(branch, c.sha, `agent-ledger: replay ${c.sha}`));
    if (merged.kind === "conflict") {
      const parentInfo = await w.commit(parent);
      return { kind: "conflict", paths: await w.conflictPaths(parentInfo.tree, head.tree, c.tree), detail: merged.detail };
    }
    if (merged.kind === "up_to_date") return { kind: "empty" };
    tree = merged.tree;
  }
  if (tree === head.tree) return { kind: "empty" };
  const sha = await w.createCommit(c.message, tree, [head.sha], c.author);
  return { kind: "applied", sha, tree };
}

/** Deletes a merged source branch unless it is protected or the destination itself. */
export async function cleanupBranch(w: GitWriter, branch: string, destination: string): Promise<boolean> {
  if (isProtectedBranch(branch) || branch === destination) return false;
  return w.deleteBranch(branch);
}

// ---------------------------------------------------------------------------------------------
// Inputs and refusals the three tools share.

export const deleteBranchesField = z
  .boolean()
  .default(false)
  .describe(
    "After every source landed, delete each source branch on GitHub (DELETE git/refs). Protected names (main, master, dev, develop, stable, trunk, prod, production, release*, hotfix*) and the destination are never deleted.",
  );

export const deleteWorktreesField = z
  .boolean()
  .default(false)
  .describe("Accepted for compatibility with the seed; there are no worktrees over the GitHub API, so nothing is removed and a warning says so.");

export const WORKTREES_UNSUPPORTED = "deleteMergedWorktrees has no meaning over the GitHub API (there is no local worktree); nothing was removed.";

/** The destination branch (the repository's default when not given) and its head. */
export async function destination(w: GitWriter, branch: string | undefined): Promise<{ branch: string; sha: string }> {
  const name = branch ?? (await w.defaultBranch());
  const sha = await w.branchHead(name);
  if (!sha) {
    throw new ToolError("destination_not_found", `Branch '${name}' does not exist in ${w.repo.owner}/${w.repo.name}.`, {
      hint: "Pass an existing branch, or omit it to use the repository's default branch.",
    });
  }
  return { branch: name, sha };
}

/** Runs a tool body, turning GitHub's failures into the envelope's codes. */
export async function mappingGitHubErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw githubToolError(err);
  }
}
