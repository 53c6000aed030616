/**
 * git_log over the commits API. GitHub filters by one path and by a GitHub login or email, so
 * several paths are separate listings merged by SHA, and author (name or email, as git's
 * --author) and grep (a case-insensitive regular expression on the message, as git's -i --grep)
 * are applied here, scanning a bounded number of pages. Stats cost a request per commit, so they come only when asked.
 */
import { repoField } from "./repo";
import { z } from "zod";
import { ToolError } from "../core/errors";
import { compileRe2 } from "../core/re2";
import { RE2JS } from "re2js";
import { cleanText } from "./untrusted";
import { ageRelative, cell, errorCode, explainMissing, fullName, type Git, gitReadTool, mapLimit, rethrowFatal, reposField, reposInScope, repoParams } from "./read-tool";
import { assertSafeRef, isSafeRepoPath, type RepoName } from "./tokens";

const SHELL_META = /[\n\r;|&`$<>]/;
const MAX_COMMITS = 500;
const PER_PAGE = 100;
/** Pages scanned per path when author/grep filter here: a bound on requests, reported as truncation. */
const MAX_PAGES = 10;
const MAX_PATHS = 10;
const MAX_STATS = 100;

const UNITS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86_400, week: 7 * 86_400, month: 30 * 86_400, year: 365 * 86_400 };

/** ISO timestamps, or git's relative forms (7.days, 48.hours, 2.weeks.ago, "3 days ago"); null when unreadable. */
export function parseSince(text: string, now: Date): string | null {
  const t = text.trim();
  const rel = /^(\d{1,6})[. ](second|minute|hour|day|week|month|year)s?(?:[. ]ago)?$/i.exec(t);
  if (rel) return new Date(now.getTime() - Number(rel[1]) * UNITS[rel[2]!.toLowerCase()]! * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  if (/^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/.test(t)) {
    const ms = Date.parse(t.replace(" ", "T"));
    if (!Number.isNaN(ms)) return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
  }
  return null;
}

const commitSchema = z.object({
  sha7: z.string().describe("Abbreviated SHA."),
  shaFull: z.string().describe("Full SHA."),
  subject: z.string().describe("First line of the message (cleaned of control and invisible characters)."),
  author: z.string().describe("Author name."),
  email: z.string().optional().describe("Author email."),
  date: z.string().describe("Author date (ISO)."),
  ageRelative: z.string().describe("How long ago, e.g. 42m ago."),
  filesChanged: z.number().int().optional().describe("Files changed (with stats; omitted when zero)."),
  insertions: z.number().int().optional().describe("Lines added (with stats; omitted when zero)."),
  deletions: z.number().int().optional().describe("Lines deleted (with stats; omitted when zero)."),
});
type Commit = z.input<typeof commitSchema>;

const groupSchema = z.object({
  workspace_root: z.string().describe("The repository (owner/name)."),
  repo: z.string().describe("The repository's name."),
  branch: z.string().describe("The ref logged (HEAD = the default branch)."),
  commits: z.array(commitSchema).optional().describe("Newest first."),
  truncated: z.boolean().optional().describe("True when more commits matched than max_commits (or the scan bound was reached)."),
  omittedCount: z.number().int().optional().describe("Matching commits seen beyond max_commits (at least this many)."),
  error: z.string().optional().describe("The error code when this repository could not be read (several repos only)."),
});

interface ApiCommit {
  sha: string;
  commit: { message: string; author: { name?: string; email?: string; date?: string } | null };
  author: { login?: string } | null;
}

const unmodified = (v: number | undefined) => (v ? v : undefined);

/**
 * git --grep -i: a regular expression matched against each line of the message. RE2 (linear
 * time) rather than git's POSIX dialect, since the pattern is the caller's and the text GitHub's.
 */
const grepMatcher = (pattern: string) => compileRe2(pattern, RE2JS.CASE_INSENSITIVE | RE2JS.MULTILINE, "grep");

async function logRepo(
  git: Git,
  r: RepoName,
  input: { branch?: string; since: string; paths?: string[]; author?: string; max_commits: number; stats: boolean },
  grep: RE2JS | null,
  sinceIso: string,
): Promise<z.input<typeof groupSchema>> {
  const want = input.max_commits + 1;
  const filtering = Boolean(input.author || grep);
  const author = input.author?.toLowerCase();
  const matches = (c: ApiCommit) => {
    if (grep && !grep.test(c.commit.message)) return false;
    if (author) {
      const who = [c.commit.author?.name, c.commit.author?.email, c.author?.login].filter(Boolean).join("\n").toLowerCase();
      if (!who.includes(author)) return false;
    }
    return true;
  };
  const seen = new Map<string, ApiCommit>();
  let exhausted = true;
  for (const path of input.paths?.length ? input.paths : [undefined]) {
    let found = 0;
    // One page size for the whole walk: GitHub's page offsets are multiples of it.
    const perPage = filtering ? PER_PAGE : Math.min(PER_PAGE, want);
    for (let page = 1; ; page++) {
      const res = await git.gh
        .request<ApiCommit[]>("GET /repos/{owner}/{repo}/commits", { ...repoParams(r), sha: input.branch, path, since: sinceIso, per_page: perPage, page })
        .catch((err: unknown) =>
          explainMissing(git, r, err, () => new ToolError("git_log_failed", `${fullName(r)}: no branch or commit '${input.branch}'.`, { hint: "Check branch; omit it for the default branch." })),
        );
      for (const c of res.data) {
        if (!matches(c)) continue;
        if (!seen.has(c.sha)) found++;
        seen.set(c.sha, c);
      }
      if (res.data.length < perPage || found >= want) break;
      if (page >= (filtering ? MAX_PAGES : Math.ceil(want / perPage))) {
        exhausted = false;
        break;
      }
    }
  }
  const all = [...seen.values()].sort((a, b) => (b.commit.author?.date ?? "").localeCompare(a.commit.author?.date ?? ""));
  const kept = all.slice(0, input.max_commits);
  const now = git.ctx.clock.now();
  const stats = input.stats
    ? await mapLimit(
        kept.slice(0, MAX_STATS),
        4,
        async (c) =>
          (await git.gh.request<{ stats?: { additions?: number; deletions?: number }; files?: unknown[] }>("GET /repos/{owner}/{repo}/commits/{ref}", { ...repoParams(r), ref: c.sha, per_page: 100 }))
            .data,
      )
    : [];
  const commits: Commit[] = kept.map((c, i) => {
    const s = stats[i];
    const date = c.commit.author?.date ?? "";
    return {
      sha7: c.sha.slice(0, 7),
      shaFull: c.sha,
      subject: cleanText(c.commit.message.split("\n")[0]),
      author: cleanText(c.commit.author?.name),
      email: cleanText(c.commit.author?.email),
      date,
      ageRelative: date ? ageRelative(date, now) : "",
      filesChanged: unmodified(s?.files?.length),
      insertions: unmodified(s?.stats?.additions),
      deletions: unmodified(s?.stats?.deletions),
    };
  });
  const omitted = all.length - kept.length;
  return { workspace_root: fullName(r), repo: r.name, branch: input.branch ?? "HEAD", commits, truncated: omitted > 0 || !exhausted, omittedCount: omitted || undefined };
}

export const gitLogTool = gitReadTool({
  fanOut: true,
  name: "git_log",
  title: "Commit history on GitHub",
  description: `Time-windowed commit history of a repository (or several, with repos) through the GitHub commits API: sha, subject, author, email, date, age, newest first. since takes ISO or git's relative forms (7.days default, 48.hours, 2.weeks.ago); paths restricts to commits touching them; author matches name, email or login (a substring) and grep the message (an RE2 regular expression, as git --grep); both case-insensitive, applied here over at most ${MAX_PAGES} pages of ${PER_PAGE}; max_commits (default 50, cap ${MAX_COMMITS}) with truncated when more matched. stats adds filesChanged/insertions/deletions at one request per commit (first ${MAX_STATS}).`,
  input: z.object({
    repo: repoField.optional(),
    repos: reposField,
    since: z.string().min(1).max(100).default("7.days").describe('Since when: ISO (2026-04-01T00:00:00Z) or relative (7.days, 48.hours, 2.weeks.ago). Default "7.days".'),
    paths: z.array(z.string().min(1).max(1000)).max(MAX_PATHS).optional().describe(`Only commits touching one of these repository paths (at most ${MAX_PATHS}; each costs its own listing).`),
    grep: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("Only commits whose message matches this regular expression (RE2 syntax, case-insensitive; ^ and $ match at line ends), as git log -i --grep."),
    author: z.string().min(1).max(200).optional().describe("Only commits whose author name, email or GitHub login contains this (case-insensitive)."),
    max_commits: z.number().int().min(1).max(MAX_COMMITS).default(50).describe(`Commits per repository (default 50, cap ${MAX_COMMITS}).`),
    branch: z.string().min(1).max(256).optional().describe("Branch, tag or SHA to log from (default: the default branch, the seed's HEAD)."),
    stats: z.boolean().default(false).describe(`Add filesChanged, insertions and deletions per commit (one GitHub request each, first ${MAX_STATS}).`),
  }),
  output: z.object({ groups: z.array(groupSchema).describe("One group per repository.") }),
  run: async (git, input) => {
    if (SHELL_META.test(input.since))
      throw new ToolError("invalid_since", `since '${input.since.slice(0, 100)}' contains shell metacharacters and was rejected.`, {
        hint: "Use ISO (2026-04-01T00:00:00Z) or a relative form like 7.days.",
      });
    const sinceIso = parseSince(input.since, git.ctx.clock.now());
    if (!sinceIso)
      throw new ToolError("invalid_since", `since '${input.since.slice(0, 100)}' is neither ISO nor a relative form.`, {
        hint: "Use ISO (2026-04-01T00:00:00Z) or a relative form like 7.days, 48.hours, 2.weeks.ago.",
      });
    for (const p of input.paths ?? []) {
      if (SHELL_META.test(p) || !isSafeRepoPath(p))
        throw new ToolError("invalid_paths", `path '${p.slice(0, 200)}' was rejected.`, {
          hint: "Paths are relative to the repository root, without .., empty segments, backslashes or shell metacharacters.",
        });
    }
    const branch = input.branch === "HEAD" ? undefined : input.branch;
    assertSafeRef("branch", branch);
    const grep = input.grep === undefined ? null : grepMatcher(input.grep);
    const repos = await reposInScope(git.ctx, input, "git_log reads a repository's history");
    const groups = await mapLimit(repos, 4, async (r) => {
      try {
        return await logRepo(git, r, { ...input, branch }, grep, sinceIso);
      } catch (err) {
        if (repos.length === 1) throw err;
        rethrowFatal(err);
        return { workspace_root: fullName(r), repo: r.name, branch: branch ?? "HEAD", error: errorCode(err) };
      }
    });
    return { groups };
  },
  markdown: (result) => {
    const lines = ["# git_log"];
    for (const g of result.groups) {
      lines.push("", `### ${g.workspace_root} (${g.branch})`);
      if (g.error) {
        lines.push(`error: ${g.error}`);
        continue;
      }
      if (!g.commits?.length) lines.push("(no commits)");
      for (const c of g.commits ?? []) {
        const stat = c.filesChanged ? ` (${c.filesChanged} files, +${c.insertions ?? 0} -${c.deletions ?? 0})` : "";
        lines.push(`- ${c.sha7} ${cell(c.subject)} — ${cell(c.author)}, ${c.ageRelative}${stat}`);
      }
      if (g.truncated) lines.push(`(truncated${g.omittedCount ? `: ${g.omittedCount}+ more` : ""}; raise max_commits or narrow since)`);
    }
    return lines.join("\n");
  },
});
