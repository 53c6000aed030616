/**
 * Path globs with one meaning wherever a caller filters paths (the document store's list, search,
 * grep, delete, update and pins; the code index's prompt context): picomatch with dotfiles
 * included, and a pattern without '/' matching the file name in any folder (the seed's `*.tmp`).
 */
import picomatch from "picomatch";
import { excerpt, invalidInput } from "./errors";

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
