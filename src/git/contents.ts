/**
 * One file of a repository at a ref, through the contents API (`GET …/contents/{path}?ref=`):
 * one request, the text decoded. GitHub inlines a file's content up to 1 MB; past that, or for a
 * directory, a symlink or a submodule, there is no text to give, and the answer says which.
 */
import { GitHubError, type GitHubClient } from "./client";
import type { RepoName } from "./tokens";

/** Base64 (GitHub wraps it in lines) to the UTF-8 text it encodes. */
export const decodeBase64 = (text: string) => new TextDecoder().decode(Uint8Array.from(atob(text.replace(/\s+/g, "")), (c) => c.charCodeAt(0)));

export type RepoFile =
  | { kind: "file"; text: string; size: number; sha: string }
  | { kind: "missing" }
  /** A directory, symlink or submodule: no text of its own. */
  | { kind: "not_a_file"; type: string }
  | { kind: "too_large"; size: number }
  /** Bytes that are not UTF-8 text. */
  | { kind: "binary"; size: number };

interface ContentsAnswer {
  type?: string;
  content?: string;
  encoding?: string;
  size?: number;
  sha?: string;
}

/**
 * `path` of `repo` at `ref`. A 404 is `missing` (the caller knows whether the repository itself
 * exists); every other GitHub failure is thrown as the GitHubError it is.
 */
export async function readRepoFile(gh: Pick<GitHubClient, "request">, repo: RepoName, path: string, ref: string, maxBytes: number): Promise<RepoFile> {
  let file: ContentsAnswer | unknown[];
  try {
    file = (await gh.request<ContentsAnswer | unknown[]>("GET /repos/{owner}/{repo}/contents/{path}", { owner: repo.owner, repo: repo.name, path, ref })).data;
  } catch (err) {
    if (err instanceof GitHubError && err.code === "github_not_found") return { kind: "missing" };
    throw err;
  }
  if (Array.isArray(file)) return { kind: "not_a_file", type: "dir" };
  if (file.type !== "file") return { kind: "not_a_file", type: file.type ?? "unknown" };
  const size = file.size ?? 0;
  if (size > maxBytes || file.content === undefined || file.encoding !== "base64") return { kind: "too_large", size };
  const bytes = Uint8Array.from(atob(file.content.replace(/\s+/g, "")), (c) => c.charCodeAt(0));
  let text: string;
  try {
    // A BOM is kept (ignoreBOM), so a file rewritten whole keeps it.
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return { kind: "binary", size };
  }
  if (text.includes("\0")) return { kind: "binary", size };
  return { kind: "file", text, size, sha: file.sha ?? "" };
}
