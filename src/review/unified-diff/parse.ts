/**
 * Unified diffs as review_diff reads them (seed 004; the reference's src/reviewer/diff/parse.ts).
 *
 * A small parser of our own rather than parse-diff or gitdiff-parser: neither gives everything
 * the review needs at once (parse-diff has no binary or rename detection and repeats the line
 * before a `\ No newline` marker as a change; gitdiff-parser reads `@@ -0,0 +1 @@` as one old
 * line and counts whatever follows the last hunk, such as a format-patch signature). Here each
 * hunk's line counts bound its body, so a removed line that reads `--- x` or `diff --git …`
 * is content, not a header. Both git's `diff --git` sections and plain `---`/`+++` diffs are read.
 * Every tool of the review room reads diffs through it (review_diff, review_changes,
 * check_invariants), so they agree on what a diff's files and lines are.
 */
import { ToolError } from "../../core/errors";
import type { ChangedFileView } from "../pipeline/stages";

/** About 1 MB of diff text; the arguments of one call are capped at 2 MiB in all. */
export const MAX_DIFF_CHARS = 1_000_000;
/** GitHub's own limit on the files of one pull request's diff. */
export const MAX_DIFF_FILES = 3000;

/** The reference's messages for an empty diff and for text that is no diff, which every review tool shares. */
export const MISSING_DIFF_MESSAGE = 'Missing or invalid "diff" argument. Provide a unified diff string.';
export const NO_SCOPE_MESSAGE = "No reviewable changes found in diff scope. Provide a unified diff with at least one changed file.";

export interface DiffLine {
  type: "add" | "remove" | "context";
  content: string;
  oldLine?: number;
  newLine?: number;
}

export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}

export interface DiffFile {
  /** The path before the change (for an added file, the same as newPath, as git's header names it). */
  oldPath: string;
  /** The path after the change (for a deleted file, the path it had). */
  newPath: string;
  /** `new file mode` (or `/dev/null` as the old side): what the reference's classification calls a new file. */
  isNew: boolean;
  isDeleted: boolean;
  isBinary: boolean;
  isRename: boolean;
  isCopy: boolean;
  hunks: DiffHunk[];
  /** Lines the file's hunks add and remove. */
  additions: number;
  deletions: number;
  /**
   * The file's part of the diff text: from its first header line up to the next file's (a
   * language-model prompt quotes it), CRLF read as LF.
   */
  section: string;
}

export interface ParsedDiff {
  files: DiffFile[];
  linesAdded: number;
  linesRemoved: number;
}

/**
 * The reference's test for text shaped like a unified diff (used only to decide whether an
 * input with no parsed files is still a diff): a `diff --git ` start, both file headers, or a hunk.
 */
export function looksLikeUnifiedDiff(diff: string): boolean {
  const text = diff.trimStart();
  if (text.startsWith("diff --git ")) return true;
  return (text.includes("\n--- ") && text.includes("\n+++ ")) || text.includes("\n@@ ");
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
/** A character `.` does not match: a header holding one is not read as a header, as before. */
const LINE_BREAK = /[\r\n\u2028\u2029]/;

/**
 * The two paths of `Binary files X and Y differ` (X up to the last ` and `), or null. Found with
 * indexOf: the regex it replaces backtracked quadratically on a line of many ` and `.
 */
function binaryPaths(line: string): [string, string] | null {
  const head = "Binary files ";
  const tail = " differ";
  if (!line.startsWith(head) || !line.endsWith(tail) || LINE_BREAK.test(line)) return null;
  const middle = line.slice(head.length, line.length - tail.length);
  const at = middle.lastIndexOf(" and ", middle.length - 6);
  return at < 1 ? null : [middle.slice(0, at), middle.slice(at + 5)];
}

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, "\\": 92 };

/** git's C-style quoting of unusual paths ("a/caf\303\251.md"), undone; octal escapes are UTF-8 bytes. */
function unquote(text: string): string {
  if (!(text.length >= 2 && text.startsWith('"') && text.endsWith('"'))) return text;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== "\\") {
      bytes.push(...new TextEncoder().encode(ch));
      continue;
    }
    const next = body[i + 1] ?? "";
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1, i + 4));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 3;
    } else {
      bytes.push(C_ESCAPES[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

const stripPrefix = (path: string, prefix: string) => (path.startsWith(prefix) ? path.slice(prefix.length) : path);

/** One side of a `---`/`+++` line: quotes undone, a trailing timestamp (plain diff) dropped, the a/ or b/ prefix removed. */
function headerPath(rest: string, prefix: "a/" | "b/"): string | null {
  const raw = rest.startsWith('"') ? rest.slice(0, rest.lastIndexOf('"') + 1) : rest.split("\t")[0]!.trimEnd();
  const path = unquote(raw);
  return path === "/dev/null" ? null : stripPrefix(path, prefix);
}

/**
 * The two paths of `diff --git a/X b/Y`. Unquoted paths may hold spaces, so an unrenamed file
 * (both halves equal, the common case) is split in the middle; anything else splits at the
 * first ` b/`, as the reference does, and the `rename`/`---`/`+++` lines that follow correct it.
 */
function gitHeaderPaths(rest: string): { oldPath: string; newPath: string } {
  if (rest.startsWith('"')) {
    const end = rest.indexOf('" ', 1);
    const oldRaw = end > 0 ? rest.slice(0, end + 1) : rest;
    const newRaw = end > 0 ? rest.slice(end + 2) : rest;
    return { oldPath: stripPrefix(unquote(oldRaw), "a/"), newPath: stripPrefix(unquote(newRaw), "b/") };
  }
  if (rest.endsWith('"')) {
    const start = rest.lastIndexOf(' "');
    return { oldPath: stripPrefix(rest.slice(0, start), "a/"), newPath: stripPrefix(unquote(rest.slice(start + 1)), "b/") };
  }
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest[half] === " ") {
    const left = rest.slice(0, half);
    const right = rest.slice(half + 1);
    if (stripPrefix(left, "a/") === stripPrefix(right, "b/")) return { oldPath: stripPrefix(left, "a/"), newPath: stripPrefix(right, "b/") };
  }
  // `a/X b/Y` split at the first ` b/` (X and Y not empty), by indexOf: a regex backtracked
  // quadratically on a line of many ` b/`.
  const b = rest.startsWith("a/") && !LINE_BREAK.test(rest) ? rest.indexOf(" b/", 3) : -1;
  if (b !== -1 && b + 3 < rest.length) return { oldPath: rest.slice(2, b), newPath: rest.slice(b + 3) };
  const space = rest.indexOf(" ");
  return space > 0 ? { oldPath: rest.slice(0, space), newPath: rest.slice(space + 1) } : { oldPath: rest, newPath: rest };
}

const newFile = (oldPath: string, newPath: string): DiffFile => ({
  oldPath,
  newPath,
  isNew: false,
  isDeleted: false,
  isBinary: false,
  isRename: false,
  isCopy: false,
  hunks: [],
  additions: 0,
  deletions: 0,
  section: "",
});

/**
 * Parses a unified diff. Text before the first file (a commit message, a format-patch header) is
 * ignored, and so is a hunk before any file header; text after a file's last hunk (a format-patch
 * signature) is in no hunk, only in that file's section. Throws invalid_input past MAX_DIFF_FILES
 * files: a partial read would review, or check invariants on, part of the change unnoticed.
 */
export function parseUnifiedDiff(text: string): ParsedDiff {
  const files: DiffFile[] = [];
  /** The line each file's section starts at. */
  const starts: number[] = [];
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  let file: DiffFile | null = null;
  /** The current file came from `diff --git` and has not had its `---` header yet. */
  let awaitingHeaders = false;
  let hunk: DiffHunk | null = null;
  let oldLeft = 0;
  let newLeft = 0;
  let oldNo = 0;
  let newNo = 0;

  const open = (f: DiffFile, at: number) => {
    if (files.length >= MAX_DIFF_FILES) {
      throw new ToolError("invalid_input", `The diff changes more than ${MAX_DIFF_FILES} files.`, {
        hint: `Review it in parts of at most ${MAX_DIFF_FILES} files (e.g. one diff per directory).`,
      });
    }
    files.push(f);
    starts.push(at);
    file = f;
    hunk = null;
    oldLeft = newLeft = 0;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;

    if (hunk && (oldLeft > 0 || newLeft > 0)) {
      const h: DiffHunk = hunk;
      const c = line[0];
      if (c === "+" && newLeft > 0) {
        h.lines.push({ type: "add", content: line.slice(1), newLine: newNo++ });
        newLeft--;
        file!.additions++;
        continue;
      }
      if (c === "-" && oldLeft > 0) {
        h.lines.push({ type: "remove", content: line.slice(1), oldLine: oldNo++ });
        oldLeft--;
        file!.deletions++;
        continue;
      }
      // Some tools strip the single space of an empty context line.
      if ((c === " " || line === "") && oldLeft > 0 && newLeft > 0) {
        h.lines.push({ type: "context", content: line.slice(1), oldLine: oldNo++, newLine: newNo++ });
        oldLeft--;
        newLeft--;
        continue;
      }
      if (c === "\\") continue;
      // A hunk shorter than its header says: what follows is read as headers again.
      hunk = null;
    }
    if (line.startsWith("\\")) continue;

    if (line.startsWith("diff --git ")) {
      const { oldPath, newPath } = gitHeaderPaths(line.slice("diff --git ".length));
      open(newFile(oldPath, newPath), i);
      awaitingHeaders = true;
      continue;
    }
    const m = HUNK.exec(line);
    if (m) {
      if (!file) continue;
      const f: DiffFile = file;
      awaitingHeaders = false;
      const h: DiffHunk = {
        oldStart: Number(m[1]),
        oldLines: m[2] === undefined ? 1 : Number(m[2]),
        newStart: Number(m[3]),
        newLines: m[4] === undefined ? 1 : Number(m[4]),
        lines: [],
      };
      f.hunks.push(h);
      hunk = h;
      oldLeft = h.oldLines;
      newLeft = h.newLines;
      oldNo = h.oldStart;
      newNo = h.newStart;
      continue;
    }
    if (line.startsWith("--- ") && (lines[i + 1] ?? "").startsWith("+++ ")) {
      const oldPath = headerPath(line.slice(4), "a/");
      const newPath = headerPath(lines[i + 1]!.slice(4), "b/");
      // A plain diff (no `diff --git` line) starts each file with these two headers.
      if (!file || !awaitingHeaders) open(newFile(oldPath ?? newPath ?? "", newPath ?? oldPath ?? ""), i);
      i++;
      const f: DiffFile = file!;
      awaitingHeaders = false;
      if (oldPath === null) f.isNew = true;
      if (newPath === null) f.isDeleted = true;
      if (oldPath !== null) f.oldPath = oldPath;
      if (newPath !== null) f.newPath = newPath;
      else if (oldPath !== null) f.newPath = oldPath;
      if (oldPath === null && newPath !== null) f.oldPath = newPath;
      continue;
    }
    const binary = binaryPaths(line);
    if (binary) {
      if (!file || !awaitingHeaders) {
        const oldPath = headerPath(binary[0], "a/");
        const newPath = headerPath(binary[1], "b/");
        open(newFile(oldPath ?? newPath ?? "", newPath ?? oldPath ?? ""), i);
        if (oldPath === null) file!.isNew = true;
        if (newPath === null) file!.isDeleted = true;
      }
      file!.isBinary = true;
      awaitingHeaders = false;
      continue;
    }
    if (!file || !awaitingHeaders) continue;
    const f: DiffFile = file;
    if (line.startsWith("new file mode")) f.isNew = true;
    else if (line.startsWith("deleted file mode")) f.isDeleted = true;
    else if (line === "GIT binary patch") f.isBinary = true;
    else if (line.startsWith("rename from ")) {
      f.isRename = true;
      f.oldPath = unquote(line.slice("rename from ".length));
    } else if (line.startsWith("rename to ")) {
      f.isRename = true;
      f.newPath = unquote(line.slice("rename to ".length));
    } else if (line.startsWith("copy from ")) {
      f.isCopy = true;
      f.oldPath = unquote(line.slice("copy from ".length));
    } else if (line.startsWith("copy to ")) {
      f.isCopy = true;
      f.newPath = unquote(line.slice("copy to ".length));
    }
  }
  files.forEach((f, k) => {
    f.section = lines.slice(starts[k], starts[k + 1] ?? lines.length).join("\n");
  });
  // A header that names no path (`diff --git ` and nothing after) is no file to review.
  const named = files.filter((f) => f.newPath !== "" || f.oldPath !== "");
  return { files: named, linesAdded: named.reduce((n, f) => n + f.additions, 0), linesRemoved: named.reduce((n, f) => n + f.deletions, 0) };
}

/** What became of a file: a copy is a new file, and only git's rename headers make a rename. */
export function fileStatus(file: DiffFile): ChangedFileView["status"] {
  return file.isDeleted ? "deleted" : file.isNew || file.isCopy ? "added" : file.isRename ? "renamed" : "modified";
}

/** A parsed file as the optional stages and the invariants see it (src/review/pipeline/stages.ts). */
export function toChangedFileView(file: DiffFile): ChangedFileView {
  const status = fileStatus(file);
  return {
    path: file.newPath,
    oldPath: status === "added" && !file.isCopy ? "" : file.oldPath,
    status,
    binary: file.isBinary,
    hunks: file.hunks.map((h) => ({ newStart: h.newStart, newLines: h.newLines })),
    added: file.hunks.flatMap((h) => h.lines.filter((l) => l.type === "add").map((l) => l.content)),
    addedLines: file.hunks.flatMap((h) => h.lines.filter((l) => l.type === "add").map((l) => l.newLine!)),
  };
}
