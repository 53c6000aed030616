/**
 * What may reach a GitHub URL. Owner, repository, ref and range values are checked here before
 * any request is built, with the seed's safe-token rules (seed 002, rethunk-git), so user text can
 * never steer a request to another path or host.
 */
import { ToolError } from "../core/errors";

/** GitHub user and organisation names: alphanumerics and single inner hyphens, at most 39. */
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
/** Repository names: letters, digits, `.`, `_`, `-`, at most 100, never `.` or `..`. */
const REPO = /^[A-Za-z0-9._-]{1,100}$/;
const REF_CHARS = /^[A-Za-z0-9_./+-]{1,256}$/;

/** The seed's ref token: [A-Za-z0-9_./+-], 1–256, no leading `-`, `..`, `@{`, `//`, trailing `/`, `.lock` or `.`. */
export function isSafeRef(ref: string): boolean {
  return (
    REF_CHARS.test(ref) &&
    !ref.startsWith("-") &&
    !ref.includes("..") &&
    !ref.includes("@{") &&
    !ref.includes("//") &&
    !ref.endsWith("/") &&
    !ref.endsWith(".lock") &&
    !ref.endsWith(".") &&
    !ref.startsWith("/")
  );
}

export interface RepoName {
  owner: string;
  name: string;
}

export function parseOwnerName(text: string): RepoName | null {
  const m = /^([^/\s]+)\/([^/\s]+)$/.exec(text.trim());
  if (!m) return null;
  const [, owner, name] = m as unknown as [string, string, string];
  const bare = name.replace(/\.git$/, "");
  return OWNER.test(owner) && REPO.test(bare) && bare !== "." && bare !== ".." ? { owner, name: bare } : null;
}

export type ParsedRange = { kind: "two-dot" | "three-dot"; base: string; head: string } | { kind: "single"; ref: string };

/** `A..B`, `A...B` or a single ref, each side a safe ref token; null when unsafe. */
export function parseRange(range: string): ParsedRange | null {
  if (range.includes("....")) return null;
  const three = range.split("...");
  if (three.length === 2) return isSafeRef(three[0]!) && isSafeRef(three[1]!) ? { kind: "three-dot", base: three[0]!, head: three[1]! } : null;
  const two = range.split("..");
  if (two.length === 2) return isSafeRef(two[0]!) && isSafeRef(two[1]!) ? { kind: "two-dot", base: two[0]!, head: two[1]! } : null;
  return isSafeRef(range) ? { kind: "single", ref: range } : null;
}

const PROTECTED = new Set(["main", "master", "dev", "develop", "stable", "trunk", "prod", "production", "head"]);

/** Branches no cleanup ever deletes (the seed's list, case-insensitive). */
export function isProtectedBranch(branch: string): boolean {
  const b = branch.toLowerCase();
  return PROTECTED.has(b) || /^(release|hotfix)[-/]/.test(b);
}

/** A repository file path: relative, no `..` segments, no empty segments, no NUL. */
export function isSafeRepoPath(p: string): boolean {
  if (p.length === 0 || p.length > 4096 || p.startsWith("/") || p.includes("\0") || p.includes("\\")) return false;
  return p.split("/").every((seg) => seg.length > 0 && seg !== "." && seg !== "..");
}

/** The seed's code for a ref outside the safe token set (checked before any request). */
export const unsafeRef = (field: string, value: string) =>
  new ToolError("unsafe_ref_token", `${field} '${value.slice(0, 100)}' contains characters outside the safe ref token set.`, {
    hint: "Use a branch, tag or SHA of [A-Za-z0-9_./+-] (1–256), without .., @{, //, a leading - or a trailing /, . or .lock.",
  });

/** Refuses an unsafe ref before any request; an absent one passes. */
export function assertSafeRef(field: string, value: string | undefined): void {
  if (value !== undefined && !isSafeRef(value)) throw unsafeRef(field, value);
}
