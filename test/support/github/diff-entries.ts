/** A real `git show` diff as the per-file entries GitHub's pull request files and compare APIs answer with. */

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
