/**
 * Path globs and session scopes, one meaning everywhere in the document store (list, search, grep,
 * delete, update, pins): picomatch with dotfiles included, and a pattern without '/' matching the
 * file name in any folder (the seed's `*.tmp`).
 */
import picomatch from "picomatch";
import { excerpt, invalidInput } from "../core/errors";
import type { DocScope } from "./shared";

export function globMatcher(patterns: readonly string[]): (path: string) => boolean {
  if (patterns.length === 0) return () => false;
  const matchers = patterns.map((p) => {
    const glob = p.replace(/^\.?\/+/, "");
    try {
      return picomatch(glob, { dot: true, basename: !glob.includes("/") });
    } catch {
      throw invalidInput(`'${excerpt(p, 100)}' is not a valid glob`, "Use a glob such as 'docs/**/*.md' or '*.txt'.");
    }
  });
  return (path) => matchers.some((m) => m(path));
}

/** Whether a live document is within a session's pins; null when the scope restricts nothing. */
export function scopeMatcher(scope: DocScope | null | undefined): ((path: string, hash: string) => boolean) | null {
  if (!scope || (scope.patterns.length === 0 && scope.hashes.length === 0)) return null;
  const globs = globMatcher(scope.patterns);
  const hashes = scope.hashes.map((h) => h.toLowerCase());
  return (path, hash) => globs(path) || hashes.some((h) => hash.startsWith(h));
}
