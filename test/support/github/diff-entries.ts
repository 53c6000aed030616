/** A real `git show` diff as the per-file entries GitHub's pull request files and compare APIs answer with. */
import { exampleItem } from "./fake";

export interface DiffEntry {
  filename: string;
  status: string;
  additions: number;
  deletions: number;
  patch: string;
}

/** `patch` is each file's part from its first `@@`, as GitHub gives it. */
export function diffEntries(diff: string): DiffEntry[] {
  return diff
    .split(/^(?=diff --git )/m)
    .filter((p) => p.trim())
    .map((part) => {
      const [, from, to] = /^diff --git a\/(\S+) b\/(\S+)/.exec(part)!;
      const patch = part.slice(part.indexOf("\n@@") + 1).replace(/\n$/, "");
      const lines = patch.split("\n");
      return {
        filename: to!,
        status: /^new file mode/m.test(part) ? "added" : /^deleted file mode/m.test(part) ? "removed" : from !== to ? "renamed" : "modified",
        additions: lines.filter((l) => l.startsWith("+")).length,
        deletions: lines.filter((l) => l.startsWith("-")).length,
        patch,
      };
    });
}

/** GitHub's own diff entry example for `repo` at `sha`, carrying a fixture file. */
export const pullRequestFile = (repo: string, f: DiffEntry, sha: string) =>
  exampleItem("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", {
    ...f,
    changes: f.additions + f.deletions,
    blob_url: `https://github.com/${repo}/blob/${sha}/${f.filename}`,
    raw_url: `https://github.com/${repo}/raw/${sha}/${f.filename}`,
    contents_url: `https://api.github.com/repos/${repo}/contents/${f.filename}?ref=${sha}`,
  });
