/**
 * git_merge (seed 002) with GitHub's own machinery: a fast-forward moves the ref, a merge commit
 * comes from the merges API, a rebase replays each commit with a three-way merge GitHub computes
 * (pickOnto). All of it happens away from the destination, which is moved once at the end,
 * without force, to the head the landed sources built.
 */
import { z } from "zod";
import { defineTool } from "../core/define-tool";
import { githubFor } from "./credentials";
import { compact, formatField, gitErrorText } from "./output";
import { repoField } from "./repo";
import { pickedRepo, pickFields } from "./workspace";
import { assertTreeChangeFree, fencingTokenField } from "./reservations";
import { assertSafeRef, isSafeRef, unsafeRef } from "./tokens";
import {
  confirmBranchWrite,
  cleanupBranch,
  type CommitInfo,
  type Comparison,
  deleteBranchesField,
  deleteWorktreesField,
  destination,
  GitWriter,
  mappingGitHubErrors,
  pickOnto,
  WORKTREES_UNSUPPORTED,
} from "./writer";

/** A rebase replays each commit with several requests; longer histories fall back to a merge commit. */
const MAX_REBASE_COMMITS = 100;

const STRATEGIES = ["auto", "ff-only", "rebase", "merge"] as const;
type Strategy = (typeof STRATEGIES)[number];

const input = z.object({
  repo: repoField.optional(),
  ...pickFields,
  sources: z.array(z.string().max(256)).min(1).max(20).describe("Source branches (or commits) to merge, in order (1–20)."),
  into: z.string().max(256).optional().describe("Destination branch. Defaults to the repository's default branch (there is no checked-out branch)."),
  strategy: z
    .enum(STRATEGIES)
    .default("auto")
    .describe(
      '"auto" (default): fast-forward, else rebase, else a merge commit, per source. "ff-only" fails on divergence. "rebase" replays the source onto the destination, no merge-commit fallback. "merge" always creates a merge commit.',
    ),
  message: z.string().min(1).max(20_000).optional().describe("Merge commit message, used only when a merge commit is created. Default: Merge branch '<source>' into <into>."),
  delete_merged_branches: deleteBranchesField,
  delete_merged_worktrees: deleteWorktreesField,
  fencing_token: fencingTokenField,
  format: formatField,
});

const resultItem = z.object({
  source: z.string().describe("The source as given."),
  ok: z.boolean().describe("Whether this source landed (or was already there)."),
  outcome: z.enum(["fast_forward", "rebase_then_ff", "merge_commit", "up_to_date", "conflicts"]).optional().describe("How it landed."),
  mergedSha: z.string().optional().describe("The destination head after this source."),
  branchDeleted: z.boolean().optional().describe("true when cleanup deleted the source branch."),
  error: z.string().optional().describe("source_not_found, cannot_fast_forward, rebase_conflicts, merge_conflicts, merge_failed or merge_base_failed."),
  detail: z.string().optional().describe("GitHub's words, where it answered."),
  conflictStage: z.enum(["rebase", "merge"]).optional().describe("Where the conflict arose."),
  conflictPaths: z.array(z.string()).optional().describe("Paths both sides changed differently (file level; GitHub's 409 names none)."),
});

const output = z.object({
  ok: z.boolean().describe("true when every source landed."),
  into: z.string().describe("The destination branch."),
  strategy: z.enum(STRATEGIES).describe("The strategy asked for."),
  headSha: z.string().describe("The destination head after the call."),
  applied: z.number().int().describe("Sources that landed or were up to date."),
  total: z.number().int().describe("Sources given."),
  results: z.array(resultItem).describe("One per attempted source; sources after a failure are not attempted."),
  warnings: z.array(z.string()).optional().describe("Flags that had no effect, and why."),
});

type Item = z.input<typeof resultItem>;

/** Replays the source's commits onto head; null when the history is too long to replay. */
async function rebase(w: GitWriter, head: CommitInfo, source: string, cmp: Comparison): Promise<{ head: CommitInfo } | { conflict: Item } | null> {
  if (cmp.totalCommits > cmp.commits.length || cmp.commits.length > MAX_REBASE_COMMITS) return null;
  let cur = head;
  // Merge commits are dropped, as git rebase does without --rebase-merges: their parents' commits are replayed.
  for (const c of cmp.commits.filter((x) => x.parents.length === 1)) {
    const r = await pickOnto(w, cur, await w.commit(c.sha));
    if (r.kind === "conflict")
      return { conflict: { ok: false, outcome: "conflicts", error: "rebase_conflicts", conflictStage: "rebase", conflictPaths: r.paths, detail: `${c.sha.slice(0, 7)}: ${r.detail}`, source } };
    if (r.kind === "applied") cur = { sha: r.sha, tree: r.tree, parents: [cur.sha], message: "" };
  }
  return { head: cur };
}

async function mergeCommit(w: GitWriter, head: CommitInfo, source: string, sourceSha: string, cmp: Comparison, message: string): Promise<{ head: CommitInfo } | { conflict: Item }> {
  const r = await w.withTempBranch(head.sha, (tmp) => w.merge(tmp, sourceSha, message));
  if (r.kind === "merged") return { head: { sha: r.sha, tree: r.tree, parents: [head.sha, sourceSha], message } };
  if (r.kind === "up_to_date") return { head };
  const theirs = await w.commit(sourceSha);
  return {
    conflict: {
      source,
      ok: false,
      outcome: "conflicts",
      error: "merge_conflicts",
      conflictStage: "merge",
      conflictPaths: await w.conflictPaths(cmp.mergeBaseTree, head.tree, theirs.tree),
      detail: r.detail,
    },
  };
}

/** Lands one source on head per the strategy: the new head, or the failed result. */
async function landSource(w: GitWriter, head: CommitInfo, source: string, strategy: Strategy, into: string, message: string | undefined): Promise<{ head: CommitInfo; item: Item }> {
  const sourceSha = (await w.branchHead(source)) ?? (await w.resolveCommit(source));
  if (!sourceSha) return { head, item: { source, ok: false, error: "source_not_found", detail: `'${source}' is neither a branch nor a commit.` } };
  const cmp = await w.compare(head.sha, sourceSha);
  if (!cmp) return { head, item: { source, ok: false, error: "merge_base_failed", detail: `GitHub found no common ancestor of ${into} and ${source}.` } };
  if (cmp.status === "identical" || cmp.status === "behind") return { head, item: { source, ok: true, outcome: "up_to_date", mergedSha: head.sha } };
  if (cmp.status === "ahead" && strategy !== "merge") {
    const next = await w.commit(sourceSha);
    return { head: next, item: { source, ok: true, outcome: "fast_forward", mergedSha: next.sha } };
  }
  if (strategy === "ff-only") return { head, item: { source, ok: false, error: "cannot_fast_forward", detail: `${into} and ${source} have diverged.` } };
  const msg = message ?? `Merge branch '${source}' into ${into}`;
  if (strategy === "rebase" || strategy === "auto") {
    const r = await rebase(w, head, source, cmp);
    if (r && "head" in r) return { head: r.head, item: { source, ok: true, outcome: "rebase_then_ff", mergedSha: r.head.sha } };
    if (strategy === "rebase") {
      return { head, item: r ? r.conflict : { source, ok: false, error: "merge_failed", detail: `${cmp.totalCommits} commits to replay; the cap is ${MAX_REBASE_COMMITS}. Use strategy merge.` } };
    }
  }
  const m = await mergeCommit(w, head, source, sourceSha, cmp, msg);
  if ("conflict" in m) return { head, item: m.conflict };
  return { head: m.head, item: { source, ok: true, outcome: m.head.sha === head.sha ? "up_to_date" : "merge_commit", mergedSha: m.head.sha } };
}

export const gitMerge = defineTool({
  name: "git_merge",
  title: "Merge branches on GitHub",
  description:
    "Merge one or more source branches into a destination branch on GitHub, in order. strategy auto (default) cascades fast-forward → rebase → merge commit per source; ff-only, rebase and merge force one way. Stops at the first conflict with conflictStage and conflictPaths; sources before it land. The destination (default: the repository's default branch) is moved once, without force: a concurrent push makes the call fail with a retryable conflict. The source branches themselves are never rewritten. Optional delete_merged_branches deletes source branches after full success, never protected names. Mutating.",
  toolset: "git",
  input,
  output,
  cost: { items: "sources" },
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
  confirms: true,
  async run(ctx, data) {
    for (const s of data.sources) if (!isSafeRef(s)) throw unsafeRef("source", s);
    assertSafeRef("into", data.into);
    return mappingGitHubErrors(async () => {
      const w = new GitWriter(githubFor(ctx.env, ctx.tenantId), await pickedRepo(ctx, data, "git_merge merges branches of a repository"));
      const dest = await destination(w, data.into);
      await confirmBranchWrite(ctx, w, dest.branch, `Merge ${data.sources.join(", ")}`);
      const start = await w.commit(dest.sha);
      let head = start;
      const results: Item[] = [];
      for (const source of data.sources) {
        const landed = await landSource(w, head, source, data.strategy, dest.branch, data.message);
        results.push(landed.item);
        head = landed.head;
        await ctx.progress?.(results.length, data.sources.length, `merged ${source}`);
        if (!landed.item.ok) break;
      }
      // The branch has not moved yet: a refusal leaves it as it was.
      await assertTreeChangeFree(ctx, w, start.tree, head.tree, data.fencing_token, "git_merge");
      if (head.sha !== dest.sha) await w.moveBranch(dest.branch, dest.sha, head.sha);
      const ok = results.length === data.sources.length && results.every((r) => r.ok);
      if (ok && data.delete_merged_branches) {
        for (const r of results) {
          if (r.outcome === "up_to_date" || !(await w.branchHead(r.source))) continue;
          if (await cleanupBranch(w, r.source, dest.branch)) r.branchDeleted = true;
        }
      }
      return {
        ok,
        into: dest.branch,
        strategy: data.strategy,
        headSha: head.sha,
        applied: results.filter((r) => r.ok).length,
        total: data.sources.length,
        results,
        warnings: data.delete_merged_worktrees ? [WORKTREES_UNSUPPORTED] : undefined,
      };
    });
  },
  errorText: gitErrorText,
  text(result, data) {
    if (data.format === "json") return JSON.stringify(compact(result));
    const lines = [`# git_merge ${result.ok ? "ok" : "stopped"}: ${result.applied}/${result.total} into ${result.into} (${result.strategy}), head ${result.headSha.slice(0, 7)}`];
    for (const r of result.results) {
      if (r.ok) lines.push(`- ${r.source}: ${r.outcome}${r.mergedSha ? ` ${r.mergedSha.slice(0, 7)}` : ""}${r.branchDeleted ? " (branch deleted)" : ""}`);
      else lines.push(`- ${r.source}: **${r.error}**${r.conflictPaths?.length ? ` in ${r.conflictPaths.join(", ")}` : ""}${r.detail ? ` — ${r.detail}` : ""}`);
    }
    for (const warning of result.warnings ?? []) lines.push(`> ${warning}`);
    return lines.join("\n");
  },
});
