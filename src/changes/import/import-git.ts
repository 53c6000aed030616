/**
 * change_import_git: a registered repository's commit history, one change event per file a commit
 * touched, at the commit's author date. One call reads one page of commits (newest page first,
 * oldest commit first within it) and the cursor walks further back from the same head, so a long
 * history is imported over several calls that each stay within a Worker's subrequest limits.
 */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { decodeKeyset, encodeKeyset } from "../../core/cursor";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { sha256Hex } from "../../db/ids";
import { githubFor, githubToolError } from "../../git/credentials";
import { parseSince } from "../../git/log";
import { explainMissing, fullName, type Git, mapLimit, repoParams } from "../../git/read-tool";
import { repoField, resolveRepo } from "../../git/repo";
import { assertSafeRef, type RepoName } from "../../git/tokens";
import { cleanText } from "../../git/untrusted";
import { findRepositoryId } from "../../work/repos/model";
import { defaultProject } from "../log-change";
import type { ChangeType } from "../vocab";
import { boundedWarnings, IMPORT_KEY_MAX, importEvents, importTime, type ImportEventInput } from "./model";

export const GIT_MAX_COMMITS = 50;
/** GitHub lists at most this many files on a commit's first page; the rest need more requests. */
const FILES_PER_PAGE = 300;
/** Events written per batch: a commit's files stay together, so a batch may hold one bigger commit. */
const BATCH_EVENTS = 100;
/** Events one call writes at most; past it the call stops after a whole commit and the cursor resumes. */
const EVENTS_PER_CALL = 1000;
const PATH_MAX = 1024;
const MESSAGE_MAX = 4000;
const AGENT_MAX = 256;

interface ApiCommit {
  sha: string;
  commit: { message: string; author: { name?: string; date?: string } | null; committer: { date?: string } | null };
  author: { login?: string } | null;
}

interface ApiFile {
  filename: string;
  status: string;
  previous_filename?: string;
}

/** Where a walk stands: the head it started from, the page of commits and how many of it (oldest first) are done. */
interface Walk {
  repo: string;
  head: string;
  page: number;
  perPage: number;
  since: string;
  done: number;
}

const encodeWalk = (w: Walk) => encodeKeyset([w.repo, w.head, w.page, w.perPage, w.since, w.done]);

function decodeWalk(cursor: string, repo: string): Walk {
  const [r, head, page, perPage, since, done] = decodeKeyset(cursor, 6)!;
  const counts = [page, perPage, done].every((n) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0);
  if (typeof r !== "string" || typeof head !== "string" || !/^[0-9a-f]{40,64}$/.test(head) || typeof since !== "string" || !counts || (perPage as number) < 1) {
    throw invalidInput(`cursor '${cursor.slice(0, 40)}' is not a cursor this tool issued.`, "Pass next_cursor from the previous call unchanged, or omit cursor to start from the newest commit.");
  }
  if (r.toLowerCase() !== repo.toLowerCase()) {
    throw invalidInput(`cursor is for ${r.slice(0, 200)}, not ${repo}.`, "Pass the repo the cursor came from, or omit cursor to start this repository from its newest commit.");
  }
  return { repo, head, page: page as number, perPage: perPage as number, since, done: done as number };
}

const CHANGE_OF: Record<string, ChangeType> = { added: "add", copied: "add", removed: "delete", modified: "modify", changed: "modify", unchanged: "modify", renamed: "rename" };

/** The stable id of one file of one commit; a long path is hashed so the key stays within IMPORT_KEY_MAX. */
async function importKey(r: RepoName, sha: string, path: string): Promise<string> {
  const key = `git:${fullName(r)}:${sha}:${path}`;
  return key.length <= IMPORT_KEY_MAX ? key : `git:${sha}:sha256:${await sha256Hex(key)}`;
}

/** The events of one commit, or null (with a warning) when it cannot be placed in time. */
async function commitEvents(r: RepoName, c: ApiCommit, files: ApiFile[], now: Date, opts: { project: string; changeset_id?: string }, warn: (w: string) => void): Promise<ImportEventInput[] | null> {
  const short = c.sha.slice(0, 7);
  const date = c.commit.author?.date ?? c.commit.committer?.date ?? "";
  let timestamp: string;
  try {
    timestamp = importTime(date, now);
  } catch {
    warn(`commit ${short}: its date '${cleanText(date).slice(0, 40)}' is unreadable or in the future; not imported`);
    return null;
  }
  const who = cleanText(c.author?.login || c.commit.author?.name || "unknown");
  const message = cleanText(c.commit.message);
  const out: ImportEventInput[] = [];
  for (const f of files) {
    const path = cleanText(f.filename).trim();
    if (path === "" || path.length > PATH_MAX) {
      warn(`commit ${short}: a file path of ${path.length} characters was not imported (paths are at most ${PATH_MAX})`);
      continue;
    }
    let changeType = CHANGE_OF[f.status] ?? "modify";
    const from = changeType === "rename" ? cleanText(f.previous_filename).trim() : "";
    // A rename GitHub reports without a distinct old path is a change in place.
    if (changeType === "rename" && (from === "" || from === path || from.length > PATH_MAX)) changeType = "modify";
    out.push({
      entity_path: path,
      change_type: changeType,
      entity_type: "file",
      reasoning: message.length > MESSAGE_MAX ? `${message.slice(0, MESSAGE_MAX)}…` : message,
      agent: `git:${who}`.slice(0, AGENT_MAX),
      git_commit: c.sha,
      project: opts.project,
      changeset_id: opts.changeset_id,
      ...(changeType === "rename" ? { rename_from: from } : {}),
      timestamp,
      import_key: await importKey(r, c.sha, path),
    });
  }
  return out;
}

async function importGit(ctx: Ctx, input: { repo: string; since?: string; branch?: string; max_commits: number; changeset_id?: string; project?: string; cursor?: string }) {
  const now = ctx.clock.now();
  const repositoryId = await findRepositoryId(ctx, input.repo.trim());
  const r = await resolveRepo(ctx, repositoryId);
  const git: Git = { ctx, gh: githubFor(ctx.env, ctx.tenantId) };
  let walk: Walk | null = null;
  let since = "";
  if (input.cursor) {
    walk = decodeWalk(input.cursor, fullName(r));
    since = walk.since;
  } else if (input.since !== undefined) {
    since = parseSince(input.since, now) ?? "";
    if (since === "")
      throw new ToolError("invalid_since", `since '${input.since.slice(0, 100)}' is neither ISO nor a relative form.`, {
        hint: "Use ISO (2024-04-01T00:00:00Z) or a relative form like 30.days, 2.weeks.ago; omit it for the whole history.",
      });
  }
  const branch = input.branch === "HEAD" ? undefined : input.branch;
  assertSafeRef("branch", branch);
  const page = walk?.page ?? 1;
  const perPage = walk?.perPage ?? input.max_commits;
  const listed = await git.gh
    .request<ApiCommit[]>("GET /repos/{owner}/{repo}/commits", { ...repoParams(r), sha: walk?.head ?? branch, since: since || undefined, per_page: perPage, page })
    .catch((err: unknown) =>
      explainMissing(git, r, err, () => new ToolError("branch_not_found", `${fullName(r)}: no branch or commit '${branch}'.`, { hint: "Check branch; omit it for the default branch." })),
    );
  const head = walk?.head ?? listed.data[0]?.sha ?? "";
  // Oldest first within the page; a resumed page skips the commits an earlier call finished.
  const todo = [...listed.data].reverse().slice(walk?.done ?? 0);
  const details = await mapLimit(todo, 4, async (c) => {
    const res = await git.gh.request<ApiCommit & { files?: ApiFile[] }>("GET /repos/{owner}/{repo}/commits/{ref}", { ...repoParams(r), ref: c.sha });
    return { commit: res.data, files: res.data.files ?? [], more: (res.headers.get("link") ?? "").includes('rel="next"') };
  });

  const warnings: string[] = [];
  const project = input.project?.trim() || (await defaultProject(ctx, repositoryId));
  const totals = { commits: 0, imported: 0, skipped: 0, events: 0 };
  let batch: ImportEventInput[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const done = await importEvents(ctx, batch, { defaultProject: project });
    totals.imported += done.imported;
    totals.skipped += done.skipped;
    warnings.push(...done.warnings);
    batch = [];
  };
  let stoppedAt: number | null = null;
  for (const [i, d] of details.entries()) {
    if (totals.events >= EVENTS_PER_CALL) {
      stoppedAt = i;
      break;
    }
    if (d.more || d.files.length >= FILES_PER_PAGE) {
      warnings.push(`commit ${d.commit.sha.slice(0, 7)}: only the first ${d.files.length} files GitHub lists were imported (it lists at most ${FILES_PER_PAGE} on a commit's first page)`);
    }
    const evs = await commitEvents(r, d.commit, d.files, now, { project, changeset_id: input.changeset_id?.trim() || undefined }, (w) => warnings.push(w));
    totals.commits++;
    if (!evs) continue;
    if (batch.length > 0 && batch.length + evs.length > BATCH_EVENTS) await flush();
    batch.push(...evs);
    totals.events += evs.length;
  }
  await flush();

  let next: Walk | null = null;
  if (stoppedAt !== null) next = { repo: fullName(r), head, page, perPage, since, done: (walk?.done ?? 0) + stoppedAt };
  else if (listed.data.length === perPage) next = { repo: fullName(r), head, page: page + 1, perPage, since, done: 0 };
  return {
    repo: fullName(r),
    commits: totals.commits,
    imported: totals.imported,
    skipped: totals.skipped,
    ...(next ? { next_cursor: encodeWalk(next) } : {}),
    warnings: boundedWarnings(warnings),
  };
}

export const changeImportGitTool = defineTool({
  name: "change_import_git",
  title: "Import a repository's git history",
  toolset: "imports",
  description: `Import a registered repository's commits (through the GitHub API) into the change ledger: one event per file a commit touched (added → add, removed → delete, modified → modify, renamed → rename), at the commit's author date, with the commit message as reasoning, git_commit set and agent git:<author>. One page of up to max_commits commits per call (oldest first within it); pass next_cursor to walk further back. Files already imported are skipped, so a re-run imports nothing twice. Only the first ${FILES_PER_PAGE} files of a commit are read (a warning says so).`,
  input: z.object({
    repo: repoField,
    since: z.string().min(1).max(100).optional().describe("Only commits since: ISO (2024-04-01T00:00:00Z) or relative (30.days, 2.weeks.ago); default: the whole history. Kept by the cursor."),
    branch: z.string().min(1).max(256).optional().describe("Branch, tag or SHA to walk back from (default: the default branch). Kept by the cursor."),
    max_commits: z
      .number()
      .int()
      .min(1)
      .max(GIT_MAX_COMMITS)
      .default(20)
      .describe(`Commits per call (default 20, cap ${GIT_MAX_COMMITS}): each costs one GitHub request. A cursor keeps the page size it started with.`),
    changeset_id: z.string().max(256).optional().describe("Slug to file every imported event under."),
    project: z.string().max(256).optional().describe("Project name for the events (default: the project the repository is the primary repository of, else its name)."),
    cursor: z.string().max(1000).optional().describe("next_cursor of the previous call, to continue further back in the same history."),
  }),
  output: z.object({
    repo: z.string().describe("The repository (owner/name)."),
    commits: z.number().int().describe("Commits read by this call."),
    imported: z.number().int().describe("Events written."),
    skipped: z.number().int().describe("Events imported before (same commit and file): nothing written for them."),
    next_cursor: z.string().optional().describe("Pass as cursor to import older commits; absent when the history (since `since`) is done."),
    warnings: z.array(z.string()).describe("Commits or files not fully imported, and why; at most 20."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: true },
  run: async (ctx, input) => {
    try {
      return await importGit(ctx, input);
    } catch (err) {
      throw githubToolError(err);
    }
  },
  summarize: (r) => `${r.repo}: ${r.commits} commit(s), imported ${r.imported} event(s), skipped ${r.skipped}${r.next_cursor ? "; more history follows" : ""}.`,
});
