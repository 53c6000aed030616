/**
 * The seed's includeSubmodules over GitHub. There is no checkout to `cd` into, so a submodule is
 * followed the way git itself records it: `.gitmodules` at the branch head names each submodule's
 * path and URL, and the tree pins a commit at that path (a gitlink, mode 160000). Following one
 * reads that commit in the submodule's own repository, with the calling tenant's credentials
 * (never another tenant's), against the branch it tracks. A submodule that cannot be followed is
 * a row with its reason, never a failure of the call.
 */
import { z } from "zod";
import { apiBase } from "./credentials";
import { readRepoFile } from "./contents";
import { errorCode, fullName, type Git, isNotFound, repoParams, rethrowFatal, statusHeader } from "./read-tool";
import { githubHost } from "./repo";
import { isSafeRef, isSafeRepoPath, parseOwnerName, type RepoName } from "./tokens";
import { cleanText } from "./untrusted";

/** The seed's maxSubmodules. Per call here (all repositories together): each costs up to 3 GitHub requests. */
export const MAX_SUBMODULES = 64;
/** GitHub requests one followed submodule may cost: its gitlink, its repository, the comparison. */
export const REQUESTS_PER_SUBMODULE = 3;
const GITMODULES_MAX_BYTES = 64 * 1024;
const URL_SHOWN = 300;

export const submoduleField = z.object({
  name: z.string().describe('Its name in .gitmodules ([submodule "name"]).'),
  url: z.string().optional().describe("Its url as .gitmodules gives it (omitted when .gitmodules gives none)."),
  repository: z.string().optional().describe("The repository it maps to on the configured GitHub (owner/name)."),
});

export interface Submodule {
  name: string;
  path: string;
  url?: string;
  branch?: string;
}

/** A row of git_status for one submodule (the shape of status.ts's row, which it is rendered with). */
export interface SubmoduleRow {
  label: string;
  path: string;
  ok?: boolean;
  statusText: string;
  base?: string;
  headSha?: string;
  headAbbrev?: string;
  ahead?: number;
  behind?: number;
  submodule: z.input<typeof submoduleField>;
  error?: string;
}

/** A git-config value: quotes removed, escapes read, a trailing `#` or `;` comment dropped. */
function configValue(raw: string): string {
  let out = "";
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') quoted = !quoted;
    else if (c === "\\" && i + 1 < raw.length) {
      const n = raw[++i]!;
      out += n === "n" ? "\n" : n === "t" ? "\t" : n;
    } else if (!quoted && (c === "#" || c === ";")) break;
    else out += c;
  }
  return out.trim();
}

/**
 * The `[submodule "name"]` sections of a .gitmodules file (git-config syntax), in file order,
 * those with a path only: git lists submodules by their `path` entries, as the seed does.
 */
export function parseGitmodules(text: string): Submodule[] {
  const byName = new Map<string, Submodule>();
  let current: Submodule | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[\s*submodule\s+"((?:[^"\\]|\\.)*)"\s*\]$/i.exec(line);
    if (header) {
      const name = header[1]!.replace(/\\(.)/g, "$1");
      current = byName.get(name) ?? { name, path: "" };
      byName.set(name, current);
      continue;
    }
    if (line.startsWith("[")) {
      current = null;
      continue;
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(line);
    if (!current || !kv) continue;
    const key = kv[1]!.toLowerCase();
    const value = configValue(kv[2]!);
    if (key === "path") current.path = value.replace(/\/+$/, "");
    else if (key === "url") current.url = value;
    else if (key === "branch") current.branch = value;
  }
  return [...byName.values()].filter((s) => s.path !== "");
}

type Target = { repo: RepoName } | { code: string; reason: string };

/**
 * The repository a submodule URL names on the configured GitHub: https, ssh, git and scp-like
 * (`git@host:owner/name.git`) URLs, and URLs relative to the superproject (`../other.git`), which
 * git resolves against the superproject's own remote.
 */
export function submoduleTarget(url: string, superproject: RepoName, host: string): Target {
  const unrecognized = { code: "submodule_url_unrecognized", reason: "(submodule url is not a repository address git could follow — not followed)" };
  let where: string;
  let path: string;
  if (url.startsWith("./") || url.startsWith("../")) {
    const parts = [superproject.owner, superproject.name];
    for (const seg of url.split("/")) {
      if (seg === "..") parts.pop();
      else if (seg !== "." && seg !== "") parts.push(seg);
    }
    where = host;
    path = parts.join("/");
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
      path = decodeURIComponent(parsed.pathname);
    } catch {
      return unrecognized;
    }
    if (!["https:", "http:", "ssh:", "git:"].includes(parsed.protocol)) return unrecognized;
    where = parsed.hostname;
  } else {
    const scp = /^(?:[^@/:\s]+@)?([^/:\s]+):(.+)$/.exec(url);
    if (!scp) return unrecognized;
    where = scp[1]!;
    path = scp[2]!;
  }
  if (where.toLowerCase() !== host) {
    return { code: "submodule_not_on_github", reason: `(submodule is on ${cleanText(where).slice(0, 100)}, not ${host} — not followed)` };
  }
  const repo = parseOwnerName(path.replace(/^\/+|\/+$/g, ""));
  return repo ? { repo } : unrecognized;
}

export type Gitmodules = { submodules: Submodule[] } | { submodules: []; note: string };

/** The submodules .gitmodules lists at `sha`; none when the file is absent. */
export async function listSubmodules(git: Git, r: RepoName, sha: string): Promise<Gitmodules> {
  try {
    const file = await readRepoFile(git.gh, r, ".gitmodules", sha, GITMODULES_MAX_BYTES);
    if (file.kind === "missing") return { submodules: [] };
    if (file.kind === "file") return { submodules: parseGitmodules(file.text) };
    const why = file.kind === "too_large" ? `is larger than ${GITMODULES_MAX_BYTES / 1024} KB` : file.kind === "binary" ? "is not text" : "is not a file";
    return { submodules: [], note: `(.gitmodules ${why} — submodules not read)` };
  } catch (err) {
    rethrowFatal(err);
    return { submodules: [], note: `(.gitmodules could not be read: ${errorCode(err).replace(/_/g, " ")})` };
  }
}

/** The call's repositories as seen once: several submodules of one repository cost one request. */
export type RepoCache = Map<string, Promise<{ defaultBranch: string } | { code: string }>>;

function submoduleRepo(git: Git, repo: RepoName, cache: RepoCache) {
  const key = fullName(repo).toLowerCase();
  let hit = cache.get(key);
  if (!hit) {
    hit = git.gh.request<{ default_branch: string }>("GET /repos/{owner}/{repo}", repoParams(repo)).then(
      (res) => ({ defaultBranch: res.data.default_branch }),
      (err: unknown) => {
        rethrowFatal(err);
        return { code: errorCode(err) };
      },
    );
    cache.set(key, hit);
  }
  return hit;
}

/**
 * One submodule of `superproject` at its head `sha` on `branch`: the commit the gitlink pins and,
 * when its repository can be read, how far that commit is ahead of / behind the branch the
 * submodule tracks (.gitmodules `branch`, `.` meaning the superproject's branch, else the
 * repository's default branch).
 */
export async function followSubmodule(git: Git, superproject: RepoName, sha: string, branch: string, sub: Submodule, cache: RepoCache): Promise<SubmoduleRow> {
  const url = cleanText(sub.url ?? "").slice(0, URL_SHOWN);
  const label = cleanText(sub.path).slice(0, 1024);
  const name = cleanText(sub.name).slice(0, 256) || label;
  const row = (statusText: string, error: string, more: Partial<SubmoduleRow> = {}): SubmoduleRow => ({ label, path: url || label, statusText, error, submodule: { name, url }, ...more });
  if (!isSafeRepoPath(sub.path)) return row("(submodule path escapes repository — rejected)", "submodule_path_rejected");
  let pinned: string;
  try {
    const res = await git.gh.request<{ type?: string; sha?: string } | unknown[]>("GET /repos/{owner}/{repo}/contents/{path}", { ...repoParams(superproject), path: sub.path, ref: sha });
    const entry = Array.isArray(res.data) ? null : res.data;
    if (entry?.type !== "submodule" || !entry.sha) return row("(no gitlink at this path — .gitmodules names it, but the tree pins no commit there)", "submodule_not_pinned");
    pinned = entry.sha;
  } catch (err) {
    rethrowFatal(err);
    if (isNotFound(err)) return row("(no gitlink at this path — .gitmodules names it, but the tree pins no commit there)", "submodule_not_pinned");
    return row(`(gitlink could not be read: ${errorCode(err).replace(/_/g, " ")})`, errorCode(err));
  }
  const pin = { headSha: pinned, headAbbrev: pinned.slice(0, 7) };
  if (!sub.url) return row(`(pinned ${pin.headAbbrev}; .gitmodules gives no url — not followed)`, "submodule_url_unrecognized", pin);
  const host = githubHost(apiBase(git.ctx.env));
  const target = submoduleTarget(sub.url, superproject, host);
  if ("code" in target) return row(target.reason.replace(/^\(/, `(pinned ${pin.headAbbrev}; `), target.code, pin);
  const repository = fullName(target.repo);
  const seen = await submoduleRepo(git, target.repo, cache);
  if ("code" in seen) {
    const why =
      seen.code === "github_not_found" || seen.code === "github_forbidden" ? "not found, or not visible to the tenant's GitHub credentials" : `could not be read: ${seen.code.replace(/_/g, " ")}`;
    return row(`(pinned ${pin.headAbbrev}; ${repository} ${why})`, "submodule_unreachable", { ...pin, submodule: { name, url, repository } });
  }
  const tracked = sub.branch === "." ? branch : (sub.branch ?? seen.defaultBranch);
  if (!isSafeRef(tracked)) {
    return row(`(pinned ${pin.headAbbrev}; .gitmodules branch is outside the safe ref token set — not compared)`, "unsafe_ref_token", { ...pin, submodule: { name, url, repository } });
  }
  try {
    const compare = await git.gh.request<{ ahead_by: number; behind_by: number }>("GET /repos/{owner}/{repo}/compare/{basehead}", {
      ...repoParams(target.repo),
      basehead: `${tracked}...${pinned}`,
      per_page: 1,
    });
    const { ahead_by: ahead, behind_by: behind } = compare.data;
    return {
      label,
      path: `https://${host}/${repository}/tree/${pinned}`,
      ok: true,
      statusText: statusHeader(`HEAD (pinned ${pin.headAbbrev})`, tracked, ahead, behind),
      base: tracked,
      ...pin,
      ahead,
      behind,
      submodule: { name, url, repository },
    };
  } catch (err) {
    rethrowFatal(err);
    const code = isNotFound(err) ? "submodule_commit_not_found" : errorCode(err);
    const why = isNotFound(err) ? `the pinned commit or branch ${tracked} is not in ${repository}` : `${repository} could not be compared: ${code.replace(/_/g, " ")}`;
    return row(`(pinned ${pin.headAbbrev}; ${why})`, code, { ...pin, submodule: { name, url, repository } });
  }
}
