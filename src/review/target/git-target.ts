/**
 * review_git_diff's targets (seed 004 §9) over GitHub: a pull request, a branch against a base,
 * a commit, the default branch's last commit, or an explicit range. A repository on GitHub has
 * no index or working tree, so "staged" and "unstaged" (the seed's default) are refused with a
 * way forward. The unified diff is rebuilt from the file patches GitHub lists, through the same
 * reads git_diff_summary makes.
 */
import { type ApiFile, filesFor, matchesGlob } from "../../git/diff";
import { defaultBranch, fullName, type Git } from "../../git/read-tool";
import { assertSafeRef, parseRange, type RepoName, unsafeRef } from "../../git/tokens";
import { cleanText } from "../../git/untrusted";
import { invalidInput, ToolError } from "../../core/errors";
import { COMMIT_SHA_PREFIX } from "../../core/sha";

export type GitTarget = { kind: "pull"; number: number } | { kind: "commit"; sha: string } | { kind: "head" } | { kind: "range"; range: string } | { kind: "branch"; branch: string };

const WORKING_TREE = /^(staged|unstaged|cached|working|worktree)$/i;
/**
 * "#12" and "pr:12" are pull requests; so are bare numbers up to six digits. Seven or more bare
 * digits are read as an abbreviated SHA, which can be all digits (hono's 7967760 is one).
 */
const PULL = /^(?:(?:#|pr:)(\d{1,10})|(\d{1,6}))$/i;
/** The reference's test for a commit: 7–40 hex digits. */

/** The target as GitHub can serve it; refuses what it cannot (before any request). */
export function parseTarget(target: string, base: string | undefined): GitTarget {
  const t = target.trim();
  if (WORKING_TREE.test(t)) {
    throw new ToolError("unsupported_target", `target '${t}' means the index or working tree, which a repository on GitHub does not have.`, {
      hint: 'Pass the diff itself to review_changes, or name what is on GitHub: a pull request ("#12"), a branch (with base), a commit SHA, or "head".',
    });
  }
  assertSafeRef("base", base);
  const noBase = (what: string) => {
    if (base !== undefined) throw invalidInput(`base applies to a branch or commit target, not to ${what}.`, "Drop base, or name a branch or commit as target.");
  };
  if (/^head$/i.test(t)) {
    noBase("head");
    return { kind: "head" };
  }
  const pull = PULL.exec(t);
  if (pull) {
    noBase("a pull request (it has its own base)");
    return { kind: "pull", number: Number(pull[1] ?? pull[2]) };
  }
  const parsed = parseRange(t);
  if (!parsed) throw unsafeRef("target", t);
  if (parsed.kind !== "single") {
    noBase("a range (it names its own base)");
    return { kind: "range", range: t };
  }
  return COMMIT_SHA_PREFIX.test(t) ? { kind: "commit", sha: t } : { kind: "branch", branch: t };
}

export interface TargetDiff {
  /** What was compared, as GitHub was asked (e.g. "main...feature", "pull request #12"). */
  resolved: string;
  /** The GitHub read that listed the files. */
  command: string;
  /** How GitHub's comparison differs from git's, when it does. */
  note?: string;
  diff: string;
  files: string[];
  stats: { additions: number; deletions: number; files_count: number };
  /** Files GitHub listed before include_patterns. */
  totalFiles: number;
  warnings: string[];
}

/** One file as git diff prints it, from GitHub's listing (the patch holds the hunks only). */
function fileDiff(f: ApiFile): string {
  const path = cleanText(f.filename);
  const old = f.status === "renamed" && f.previous_filename ? cleanText(f.previous_filename) : path;
  const added = f.status === "added" || f.status === "copied";
  const removed = f.status === "removed";
  const lines = [`diff --git a/${old} b/${path}`];
  if (added) lines.push("new file mode 100644");
  if (removed) lines.push("deleted file mode 100644");
  if (old !== path) lines.push(`rename from ${old}`, `rename to ${path}`);
  if (f.patch !== undefined) {
    lines.push(added ? "--- /dev/null" : `--- a/${old}`, removed ? "+++ /dev/null" : `+++ b/${path}`, f.patch);
  }
  return lines.join("\n");
}

export async function diffForTarget(git: Git, r: RepoName, target: GitTarget, base: string | undefined, includePatterns: string[]): Promise<TargetDiff> {
  const api = `/repos/${fullName(r)}`;
  let range: string | undefined;
  let pull: number | undefined;
  let command: string;
  switch (target.kind) {
    case "pull":
      pull = target.number;
      command = `GET ${api}/pulls/${pull}/files`;
      break;
    case "head":
      range = "HEAD";
      command = `GET ${api}/commits/{default branch}`;
      break;
    case "commit":
      range = base === undefined ? target.sha : `${base}...${target.sha}`;
      command = base === undefined ? `GET ${api}/commits/${target.sha}` : `GET ${api}/compare/${range}`;
      break;
    case "range":
      range = target.range;
      command = `GET ${api}/compare/${range}`;
      break;
    case "branch":
      range = `${base ?? (await defaultBranch(git, r))}...${target.branch}`;
      command = `GET ${api}/compare/${range}`;
      break;
  }
  const source = await filesFor(git, r, range, pull);
  const kept =
    includePatterns.length === 0
      ? source.files
      : source.files.filter((f) => includePatterns.some((g) => matchesGlob(f.filename, g) || (f.previous_filename !== undefined && matchesGlob(f.previous_filename, g))));
  const noPatch = kept.filter((f) => f.patch === undefined && f.additions + f.deletions > 0).map((f) => cleanText(f.filename));
  const warnings =
    noPatch.length > 0
      ? [
          `GitHub gave no patch for ${noPatch.length} file(s) (binary, or too large to show), so the review cannot see their lines: ${noPatch.slice(0, 20).join(", ")}${noPatch.length > 20 ? ", …" : ""}.`,
        ]
      : [];
  return {
    resolved: source.label,
    command,
    note: source.note,
    diff: kept.map(fileDiff).join("\n"),
    files: kept.map((f) => cleanText(f.filename)).sort(),
    stats: { additions: kept.reduce((n, f) => n + f.additions, 0), deletions: kept.reduce((n, f) => n + f.deletions, 0), files_count: kept.length },
    totalFiles: source.files.length,
    warnings,
  };
}

/** The reference's refusal of an empty scope: a review of nothing must not pass for a clean one. */
export function emptyScope(target: string, d: TargetDiff): ToolError {
  const reason = d.totalFiles > 0 ? "path_scope_excluded_all_changes" : "no_changes_for_target";
  return new ToolError("empty_review_scope", `No changes found for review_git_diff target "${target}". Review scope is empty (${reason}), so review is blocked.`, {
    hint:
      reason === "path_scope_excluded_all_changes"
        ? "include_patterns excluded every changed file: adjust include_patterns or choose a broader target."
        : "Choose a target with changes: another pull request, branch (with base) or commit.",
  });
}
