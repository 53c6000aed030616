/**
 * The added lines of each file of a unified diff: all the invariants look at. Hunks are followed
 * by their line counts, so an added line that happens to start with "++ " or "diff --git" is
 * content, not a header. Git diffs (`diff --git a/… b/…`) and plain ones (`--- a` / `+++ b`)
 * are read; a deleted file is named by its old path.
 */

export interface AddedLines {
  /** The file's path after the change (its old path when deleted). */
  path: string;
  /** Its path before the change ('' for an added file). */
  oldPath: string;
  added: string[];
}

/** Files past this many are not read: a diff this wide is beyond what one call reviews. */
export const MAX_DIFF_FILES = 3000;

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;

/** `a/x`, `"a/x y"`, `/dev/null` → the repository path ('' for /dev/null). */
function headerPath(raw: string): string {
  let p = raw.replace(/\t.*$/, "").trim();
  if (p.startsWith('"') && p.endsWith('"') && p.length >= 2) p = p.slice(1, -1).replace(/\\(["\\])/g, "$1");
  if (p === "/dev/null") return "";
  return /^[ab]\//.test(p) ? p.slice(2) : p;
}

/** `diff --git a/x b/y` → [x, y] when the two halves can be told apart (same path, or b/ found once). */
function gitHeaderPaths(rest: string): [string, string] | null {
  const m = /^a\/(.+) b\/(.+)$/.exec(rest) ?? /^"a\/(.+)" "b\/(.+)"$/.exec(rest);
  return m ? [m[1]!, m[2]!] : null;
}

export function addedLinesByFile(diff: string): AddedLines[] {
  const files: AddedLines[] = [];
  let file: AddedLines | null = null;
  /** Between a `diff --git` line and its first hunk: `---`/`+++` belong to that file. */
  let gitHeader = false;
  let oldLeft = 0;
  let newLeft = 0;
  const open = (oldPath: string, path: string): AddedLines | null => {
    if (files.length >= MAX_DIFF_FILES) return null;
    const f: AddedLines = { path, oldPath, added: [] };
    files.push(f);
    return f;
  };
  for (const raw of diff.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (oldLeft > 0 || newLeft > 0) {
      if (line.startsWith("+")) {
        file!.added.push(line.slice(1));
        newLeft--;
      } else if (line.startsWith("-")) oldLeft--;
      else if (!line.startsWith("\\")) {
        oldLeft--;
        newLeft--;
      }
      continue;
    }
    if (line.startsWith("diff --git ")) {
      const paths = gitHeaderPaths(line.slice("diff --git ".length));
      file = open(paths?.[0] ?? "", paths?.[1] ?? "");
      if (!file) break;
      gitHeader = true;
    } else if (line.startsWith("--- ")) {
      const oldPath = headerPath(line.slice(4));
      // A plain diff has no `diff --git` line: its `---` starts the file.
      if (!gitHeader) file = open(oldPath, oldPath);
      if (!file) break;
      file.oldPath = oldPath;
    } else if (line.startsWith("+++ ") && file) {
      file.path = headerPath(line.slice(4)) || file.oldPath;
    } else if (gitHeader && line.startsWith("rename from ")) file!.oldPath = line.slice(12);
    else if (gitHeader && line.startsWith("rename to ")) file!.path = line.slice(10);
    else if (gitHeader && line.startsWith("new file mode")) file!.oldPath = "";
    else {
      const h = HUNK.exec(line);
      if (h && file) {
        gitHeader = false;
        oldLeft = h[1] === undefined ? 1 : Number(h[1]);
        newLeft = h[2] === undefined ? 1 : Number(h[2]);
      }
    }
  }
  return files.filter((f) => f.path !== "");
}
