/**
 * git_cherry_pick (seed 002): GitHub has no cherry-pick endpoint, so each commit is replayed with
 * pickOnto (a three-way merge GitHub computes). The whole sequence is built off to the side and
 * the destination moved once at the end, without force: a conflict leaves it untouched, as
 * `git cherry-pick --abort` would.
 */
import { z } from "zod";
import { defineTool } from "../core/define-tool";
import { ToolError } from "../core/errors";
import { githubFor } from "./credentials";
import { compact, formatField, gitErrorText } from "./output";
import { repoField } from "./repo";
import { pickedRepo, pickFields } from "./workspace";
import { assertTreeChangeFree, fencingTokenField } from "./reservations";
import { assertSafeRef, parseRange, unsafeRef } from "./tokens";
import { confirmBranchWrite, cleanupBranch, type CommitInfo, deleteBranchesField, deleteWorktreesField, destination, GitWriter, mappingGitHubErrors, pickOnto, WORKTREES_UNSUPPORTED } from "./writer";

/** Checked before de-duplication, as the seed's later versions do; each pick costs up to six requests. */
const MAX_COMMITS = 100;

const input = z.object({
  repo: repoField.optional(),
  ...pickFields,
  sources: z
    .array(z.string().max(600))
    .min(1)
    .max(50)
    .describe("Source specs, in order (1–50): a full or short SHA, an A..B or A...B range (commits in B not in A, oldest first), or a branch name (expands to onto..branch)."),
  onto: z.string().max(256).optional().describe("Destination branch. Defaults to the repository's default branch (there is no checked-out branch)."),
  delete_merged_branches: deleteBranchesField,
  delete_merged_worktrees: deleteWorktreesField,
  fencing_token: fencingTokenField,
  format: formatField,
});

const resultItem = z.object({
  source: z.string().describe("The source as given."),
  kind: z.enum(["sha", "range", "branch"]).describe("How the source was read."),
  resolvedCommits: z.number().int().describe("Commits the source expanded to."),
  keptCommits: z.number().int().describe("Commits left after dropping those already reachable from the destination or listed earlier."),
  branchDeleted: z.boolean().optional().describe("true when cleanup deleted this branch source."),
});

const output = z.object({
  ok: z.boolean().describe("true when every commit applied (or was dropped as already present)."),
  onto: z.string().describe("The destination branch."),
  headSha: z.string().optional().describe("The destination head after the call (absent on conflict: the destination was not changed)."),
  picked: z.number().int().describe("Unique commits to replay."),
  applied: z.number().int().describe("New commits on the destination; lower than picked when patch-equivalent commits were dropped."),
  results: z.array(resultItem).describe("One per source."),
  conflict: z
    .object({
      stage: z.literal("cherry-pick").describe("Always cherry-pick."),
      commit: z.string().describe("The commit that did not apply."),
      paths: z.array(z.string()).describe("Paths both sides changed differently (file level)."),
      detail: z.string().describe("GitHub's words."),
    })
    .optional()
    .describe("Present when a commit conflicted; nothing was applied."),
  warnings: z.array(z.string()).optional().describe("Flags that had no effect, and why."),
});

type Item = z.input<typeof resultItem>;

const sourceNotFound = (source: string) =>
  new ToolError("source_not_found", `'${source}' is neither a branch, a range nor a commit.`, { hint: "Pass a branch name, a commit SHA, or A..B with both sides existing." });
const rangeFailed = (source: string) =>
  new ToolError("range_resolution_failed", `GitHub could not expand '${source}' (unknown side or no common ancestor).`, { hint: "Check both sides of the range exist and share history." });

/** A source's commits (oldest first) and those not yet reachable from the destination. */
async function expand(w: GitWriter, source: string, onto: string): Promise<{ item: Item; kept: string[]; branchSha?: string }> {
  const range = parseRange(source)!;
  if (range.kind !== "single") {
    const all = await w.compare(range.base, range.head);
    const fresh = await w.compare(onto, range.head);
    if (!all || !fresh) throw rangeFailed(source);
    if (all.totalCommits > all.commits.length) throw tooMany(all.totalCommits);
    const notInOnto = new Set(fresh.commits.map((c) => c.sha));
    const kept = all.commits.map((c) => c.sha).filter((sha) => notInOnto.has(sha));
    return { item: { source, kind: "range", resolvedCommits: all.commits.length, keptCommits: kept.length }, kept };
  }
  const branchSha = await w.branchHead(source);
  if (branchSha) {
    const cmp = await w.compare(onto, branchSha);
    if (!cmp) throw rangeFailed(source);
    if (cmp.totalCommits > cmp.commits.length) throw tooMany(cmp.totalCommits);
    const kept = cmp.commits.map((c) => c.sha);
    return { item: { source, kind: "branch", resolvedCommits: kept.length, keptCommits: kept.length }, kept, branchSha };
  }
  const sha = await w.resolveCommit(source);
  if (!sha) throw sourceNotFound(source);
  const cmp = await w.compare(onto, sha);
  const present = cmp !== null && (cmp.status === "behind" || cmp.status === "identical");
  return { item: { source, kind: "sha", resolvedCommits: 1, keptCommits: present ? 0 : 1 }, kept: present ? [] : [sha] };
}

const tooMany = (n: number) =>
  new ToolError("cherry_pick_too_many_commits", `The sources expand to ${n} commits; the cap is ${MAX_COMMITS}.`, { hint: "Pick fewer commits per call, or merge the branch with git_merge." });

export const gitCherryPick = defineTool({
  name: "git_cherry_pick",
  title: "Cherry-pick commits on GitHub",
  description:
    "Replay commits onto a destination branch on GitHub. Sources are SHAs, A..B ranges or branch names (a branch expands to onto..branch, oldest first); commits already reachable from the destination or listed twice are skipped, and patch-equivalent commits (already applied) are dropped. Stops at the first conflict with the commit and paths, leaving the destination untouched. The destination (default: the repository's default branch) is moved once, without force. Optional delete_merged_branches deletes branch sources fully reachable from the result, never protected names. Mutating.",
  toolset: "git",
  input,
  output,
  cost: { items: "sources" },
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
  confirms: true,
  async run(ctx, data) {
    for (const s of data.sources) if (!parseRange(s)) throw unsafeRef("source", s);
    assertSafeRef("onto", data.onto);
    return mappingGitHubErrors(async () => {
      const w = new GitWriter(githubFor(ctx.env, ctx.tenantId), await pickedRepo(ctx, data, "git_cherry_pick replays commits in a repository"));
      const dest = await destination(w, data.onto);
      await confirmBranchWrite(ctx, w, dest.branch, `Cherry-pick ${data.sources.join(", ")}`);
      const results: Item[] = [];
      const branchShas = new Map<Item, string>();
      const queue: string[] = [];
      const seen = new Set<string>();
      let resolved = 0;
      for (const source of data.sources) {
        const x = await expand(w, source, dest.sha);
        resolved += x.item.resolvedCommits;
        if (resolved > MAX_COMMITS) throw tooMany(resolved);
        const fresh = x.kept.filter((sha) => !seen.has(sha));
        fresh.forEach((sha) => seen.add(sha));
        queue.push(...fresh);
        x.item.keptCommits = fresh.length;
        results.push(x.item);
        if (x.branchSha) branchShas.set(x.item, x.branchSha);
      }
      const start = await w.commit(dest.sha);
      let head: CommitInfo = start;
      let applied = 0;
      for (const [i, sha] of queue.entries()) {
        const r = await pickOnto(w, head, await w.commit(sha));
        if (r.kind === "conflict") {
          return { ok: false, onto: dest.branch, picked: queue.length, applied: 0, results, conflict: { stage: "cherry-pick" as const, commit: sha, paths: r.paths, detail: r.detail } };
        }
        if (r.kind === "applied") {
          head = { sha: r.sha, tree: r.tree, parents: [head.sha], message: "" };
          applied++;
        }
        await ctx.progress?.(i + 1, queue.length, `picked ${sha.slice(0, 7)}`);
      }
      // The branch has not moved yet: a refusal leaves it as it was.
      await assertTreeChangeFree(ctx, w, start.tree, head.tree, data.fencing_token, "git_cherry_pick");
      if (head.sha !== dest.sha) await w.moveBranch(dest.branch, dest.sha, head.sha);
      if (data.delete_merged_branches) {
        for (const [item, sha] of branchShas) {
          // Reachability, not patch-equivalence: replayed copies do not make a branch merged.
          const cmp = await w.compare(head.sha, sha);
          if (cmp && (cmp.status === "behind" || cmp.status === "identical") && (await cleanupBranch(w, item.source, dest.branch))) item.branchDeleted = true;
        }
      }
      return {
        ok: true,
        onto: dest.branch,
        headSha: head.sha,
        picked: queue.length,
        applied,
        results,
        warnings: data.delete_merged_worktrees ? [WORKTREES_UNSUPPORTED] : undefined,
      };
    });
  },
  errorText: gitErrorText,
  text(result, data) {
    if (data.format === "json") return JSON.stringify(compact(result));
    const lines = [
      `# git_cherry_pick ${result.ok ? "ok" : "conflict"}: ${result.applied} applied of ${result.picked} picked onto ${result.onto}${result.headSha ? `, head ${result.headSha.slice(0, 7)}` : ""}`,
    ];
    for (const r of result.results) lines.push(`- ${r.source} (${r.kind}): ${r.keptCommits}/${r.resolvedCommits} kept${r.branchDeleted ? ", branch deleted" : ""}`);
    if (result.conflict)
      lines.push(
        `**Conflict** at ${result.conflict.commit.slice(0, 7)}${result.conflict.paths.length ? ` in ${result.conflict.paths.join(", ")}` : ""}: ${result.conflict.detail}. ${result.onto} was not changed.`,
      );
    for (const warning of result.warnings ?? []) lines.push(`> ${warning}`);
    return lines.join("\n");
  },
});
