/** Paths a caller names inside the repository under review, checked before anything is read. */
import { excerpt, invalidInput } from "../../core/errors";
import { isSafeRepoPath } from "../../git/tokens";

/** Repository-relative paths as the seed's workspace-relative ones: `./` dropped; options, absolute paths and `..` refused. */
export function normalizePaths(paths: readonly string[], field: string): string[] {
  return paths.map((raw, i) => {
    const p = raw.trim().replace(/^(?:\.\/)+/, "");
    if (p.startsWith("-")) throw invalidInput(`${field}[${i}] '${excerpt(raw)}': option-like paths are not allowed.`, "Pass paths relative to the repository root, e.g. src/index.ts.");
    if (p.split("/").includes("..")) throw invalidInput(`${field}[${i}] '${excerpt(raw)}': path traversal is not allowed.`, "Pass paths inside the repository, without '..'.");
    if (!isSafeRepoPath(p))
      throw invalidInput(`${field}[${i}] '${excerpt(raw)}' is not a repository-relative path.`, "Pass paths relative to the repository root, with forward slashes, e.g. src/index.ts.");
    return p;
  });
}
