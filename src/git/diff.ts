/**
 * git_diff_summary over GitHub: the compare API for ranges, the commit API for a single ref
 * (its diff against its first parent), the pull request files API for a pull request. There is
 * no index or working tree, so staged/unstaged are refused with a hint.
 */
import { z } from "zod";
import { ToolError } from "../core/errors";
import { cleanText } from "./untrusted";
import { cell, defaultBranch, explainMissing, fullName, type Git, gitReadTool, repoParams } from "./read-tool";
import { resolveRepo, repoField } from "./repo";
import { requireRepo } from "./workspace";
import { parseRange, type RepoName } from "./tokens";

export const DEFAULT_EXCLUDES = ["*.lock", "*.lockb", "bun.lock", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "*.min.js", "*.min.css", "vendor/**", "node_modules/**", "dist/**"];
const MAX_EXCLUDED_LISTED = 100;
/** GitHub's pull request and commit file lists stop at 3000 files: 30 pages of 100. */
const MAX_FILE_PAGES = 30;
/** The compare API returns at most 300 files and cannot page them. */
const COMPARE_FILE_CAP = 300;

/** A glob as a RegExp: `**` spans directories, `*` and `?` stay within one segment. */
export function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      re += ".*";
      i++;
      if (glob[i + 1] === "/") i++;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** A pattern matches the whole path or any trailing part of it that starts a directory (like gitignore). */
export function matchesGlob(path: string, glob: string): boolean {
  const re = globToRegExp(glob);
  const parts = path.split("/");
  for (let i = 0; i < parts.length; i++) if (re.test(parts.slice(i).join("/"))) return true;
  return false;
}

const fileSchema = z.object({
  path: z.string().describe("The file's path."),
  status: z.enum(["modified", "added", "deleted", "renamed"]).describe("modified, added, deleted or renamed."),
  oldPath: z.string().optional().describe("The path before a rename."),
  additions: z.number().int().describe("Lines added."),
  deletions: z.number().int().describe("Lines deleted."),
  truncated: z.boolean().optional().describe("True when diff was cut to max_lines_per_file, or GitHub gave no patch (binary or too large)."),
  diff: z.string().optional().describe("The unified diff hunk text, at most max_lines_per_file lines."),
});

export interface ApiFile {
  filename: string;
  status: string;
  additions: number;
  deletions: number;
  patch?: string;
  previous_filename?: string;
}

const STATUS: Record<string, z.infer<typeof fileSchema>["status"]> = { added: "added", removed: "deleted", renamed: "renamed", copied: "added" };

export type Source = { label: string; files: ApiFile[]; note?: string };

/** The changed files of a pull request, a single ref (against its first parent) or a compare range; review_git_diff reads its diffs here too. */
export async function filesFor(git: Git, r: RepoName, range: string | undefined, pull: number | undefined): Promise<Source> {
  const p = repoParams(r);
  const refMissing = (what: string) => () => new ToolError("git_diff_failed", `${fullName(r)}: ${what} not found.`, { hint: "Check the refs (branches, tags or SHAs) or the pull request number." });
  /** Pull request and commit files come 100 a page (up to GitHub's 3000); one page short of full ends it. */
  const paged = async (page: (n: number) => Promise<ApiFile[]>) => {
    const files: ApiFile[] = [];
    for (let n = 1; n <= MAX_FILE_PAGES; n++) {
      const batch = await page(n);
      files.push(...batch);
      if (batch.length < 100) break;
    }
    return files;
  };
  if (pull !== undefined) {
    const files = await paged(
      async (page) =>
        (
          await git.gh
            .request<ApiFile[]>("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", { ...p, pull_number: pull, per_page: 100, page })
            .catch((err: unknown) => explainMissing(git, r, err, refMissing(`pull request #${pull}`)))
        ).data,
    );
    return { label: `pull request #${pull}`, files };
  }
  const parsed = parseRange(range ?? "HEAD")!;
  if (parsed.kind === "single") {
    const ref = parsed.ref === "HEAD" ? await defaultBranch(git, r) : parsed.ref;
    const files = await paged(
      async (page) =>
        (
          await git.gh
            .request<{ files?: ApiFile[] }>("GET /repos/{owner}/{repo}/commits/{ref}", { ...p, ref, per_page: 100, page })
            .catch((err: unknown) => explainMissing(git, r, err, refMissing(`ref '${ref}'`)))
        ).data.files ?? [],
    );
    return { label: range ?? "HEAD", files };
  }
  const res = await git.gh
    .request<{ files?: ApiFile[] }>("GET /repos/{owner}/{repo}/compare/{basehead}", { ...p, basehead: `${parsed.base}...${parsed.head}`, per_page: 1 })
    .catch((err: unknown) => explainMissing(git, r, err, refMissing(`range '${range}'`)));
  const files = res.data.files ?? [];
  const notes = [
    parsed.kind === "two-dot" ? "GitHub compares from the merge base of the two refs (as A...B); it equals A..B when A is an ancestor of B." : "",
    files.length >= COMPARE_FILE_CAP ? `GitHub lists at most ${COMPARE_FILE_CAP} files of a comparison; totals cover those.` : "",
  ].filter(Boolean);
  return { label: range!, files, note: notes.join(" ") || undefined };
}

export const gitDiffSummaryTool = gitReadTool({
  name: "git_diff_summary",
  title: "Diff summary on GitHub",
  description:
    "A token-efficient diff through the GitHub API: per file the status, additions, deletions, rename oldPath and the patch cut to max_lines_per_file, at most max_files files, lock files/dist/vendor excluded by default. range is A...B or A..B (compared from the merge base), a single ref (its diff against its parent; HEAD = the default branch's head, the default), or pass pull_request for a pull request's files. staged/unstaged have no meaning without a working tree: unsupported_range.",
  input: z.object({
    repo: repoField.optional(),
    range: z.string().max(600).optional().describe('"A...B" or "A..B" (refs or SHAs), a single ref, or "HEAD" (default: the default branch\'s last commit).'),
    pull_request: z.number().int().min(1).optional().describe("A pull request number: its files instead of a range."),
    file_filter: z.string().min(1).max(200).optional().describe('Only files matching this glob (e.g. "*.ts", "src/**").'),
    max_lines_per_file: z.number().int().min(1).max(2000).default(50).describe("Diff lines kept per file (1–2000, default 50)."),
    max_files: z.number().int().min(1).max(500).default(30).describe("Files included (1–500, default 30); the rest are counted in truncatedFiles."),
    exclude_patterns: z.array(z.string().min(1).max(200)).max(100).optional().describe("Globs to exclude (default: lock files, *.min.js/css, vendor/**, node_modules/**, dist/**); [] disables."),
  }),
  output: z.object({
    range: z.string().describe("What was compared."),
    note: z.string().optional().describe("How GitHub's comparison differs from git's, when it does."),
    totalFiles: z.number().int().describe("Files after exclusion and file_filter."),
    totalAdditions: z.number().int().describe("Lines added across those files."),
    totalDeletions: z.number().int().describe("Lines deleted across those files."),
    files: z.array(fileSchema).optional().describe("The first max_files files."),
    truncatedFiles: z.number().int().optional().describe("Files left out by max_files (omitted when 0)."),
    excludedFiles: z.array(z.string()).optional().describe(`Paths excluded by exclude_patterns (first ${MAX_EXCLUDED_LISTED}).`),
  }),
  run: async (git, input) => {
    const range = input.range?.trim() || undefined;
    if (range !== undefined && input.pull_request !== undefined) {
      throw new ToolError("invalid_input", "Pass range or pull_request, not both.", { hint: "A pull request's diff is its files; drop range." });
    }
    if (range && /^(staged|cached|unstaged)$/i.test(range)) {
      throw new ToolError("unsupported_range", `'${range}' means the index or working tree, which a repository on GitHub does not have.`, {
        hint: "Commit and push, then diff the branch (range base...branch) or its pull request (pull_request).",
      });
    }
    if (range !== undefined && !parseRange(range)) {
      throw new ToolError("unsafe_range_token", `range '${range.slice(0, 100)}' contains characters outside the safe token set.`, {
        hint: "Use A..B, A...B or one ref, each a branch, tag or SHA of [A-Za-z0-9_./+-] (no ~ or ^: name the parent's SHA instead).",
      });
    }
    const r = await resolveRepo(git.ctx, requireRepo(input, "git_diff_summary compares refs of a repository"));
    const source = await filesFor(git, r, range, input.pull_request);
    const excludes = input.exclude_patterns ?? DEFAULT_EXCLUDES;
    const excluded: string[] = [];
    const kept = source.files.filter((f) => {
      if (excludes.some((g) => matchesGlob(f.filename, g))) {
        excluded.push(cleanText(f.filename));
        return false;
      }
      return !input.file_filter || matchesGlob(f.filename, input.file_filter);
    });
    const files = kept.slice(0, input.max_files).map((f) => {
      const lines = f.patch?.split("\n") ?? [];
      return {
        path: cleanText(f.filename),
        status: STATUS[f.status] ?? ("modified" as const),
        oldPath: f.status === "renamed" ? cleanText(f.previous_filename) : undefined,
        additions: f.additions,
        deletions: f.deletions,
        truncated: f.patch === undefined ? f.additions + f.deletions > 0 : lines.length > input.max_lines_per_file,
        diff: cleanText(lines.slice(0, input.max_lines_per_file).join("\n")),
      };
    });
    return {
      range: source.label,
      note: source.note,
      totalFiles: kept.length,
      totalAdditions: kept.reduce((n, f) => n + f.additions, 0),
      totalDeletions: kept.reduce((n, f) => n + f.deletions, 0),
      files,
      truncatedFiles: kept.length - files.length || undefined,
      excludedFiles: excluded.slice(0, MAX_EXCLUDED_LISTED),
    };
  },
  markdown: (result) => {
    const lines = [`# git_diff_summary: ${result.range}`, `${result.totalFiles} files, +${result.totalAdditions} -${result.totalDeletions}`];
    if (result.note) lines.push(`Note: ${result.note}`);
    for (const f of result.files ?? []) {
      lines.push("", `### ${cell(f.oldPath ? `${f.oldPath} → ${f.path}` : f.path)} (${f.status}, +${f.additions} -${f.deletions})`);
      if (f.diff) lines.push("```diff", f.diff, "```");
      if (f.truncated) lines.push("(diff truncated)");
    }
    if (result.truncatedFiles) lines.push("", `(${result.truncatedFiles} more files: raise max_files or use file_filter)`);
    if (result.excludedFiles?.length) lines.push("", `Excluded: ${result.excludedFiles.join(", ")}`);
    return lines.join("\n");
  },
});
