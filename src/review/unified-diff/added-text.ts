/**
 * The lines a diff adds to one file, as one text to scan, and the way back from a place in that
 * text to the new file's line: review_diff's secret scan and the invariants both report a
 * finding at the line the diff adds, not at the joined text's line.
 */
import type { ChangedFileView } from "../pipeline/stages";

export interface AddedText {
  text: string;
  /** The new file's line of the added line at 0-based `index` of the joined text (1 when unknown). */
  lineOf(index: number): number;
  /** The new file's line holding UTF-16 offset `offset` of the joined text. */
  lineAt(offset: number): number;
}

export function addedText(file: Pick<ChangedFileView, "added" | "addedLines">): AddedText {
  const text = file.added.join("\n");
  // Offsets where each added line starts in `text`, for a binary search per finding.
  const starts: number[] = [];
  let at = 0;
  for (const line of file.added) {
    starts.push(at);
    at += line.length + 1;
  }
  const lineOf = (index: number) => file.addedLines?.[index] ?? 1;
  return {
    text,
    lineOf,
    lineAt(offset) {
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= offset) lo = mid;
        else hi = mid - 1;
      }
      return lineOf(lo);
    },
  };
}
