/**
 * Scoring ranked answers against the question set: recall@10 over distinct files (a file counts
 * once, at its best rank, so ten chunks of one file are one answer) and the reciprocal rank of the
 * first relevant file among them (0 when none is in the first ten).
 */
import type { Question } from "./code-questions";

export const CUTOFF = 10;

/** Distinct paths in rank order, each at its first (best) rank. */
export const distinctFiles = (paths: string[]): string[] => [...new Set(paths)];

/** A file's 1-based rank among distinct files, or '-' when the answer does not hold it. */
export function fileRank(rankedPaths: string[], path: string): string {
  const i = distinctFiles(rankedPaths).indexOf(path);
  return i < 0 ? "-" : String(i + 1);
}

export interface Score {
  recall: number;
  rr: number;
  missed: string[];
}

export function score(q: Question, rankedPaths: string[]): Score {
  const top = distinctFiles(rankedPaths).slice(0, CUTOFF);
  const found = q.relevant.filter((p) => top.includes(p));
  const first = top.findIndex((p) => q.relevant.includes(p));
  return { recall: found.length / q.relevant.length, rr: first < 0 ? 0 : 1 / (first + 1), missed: q.relevant.filter((p) => !top.includes(p)) };
}

export interface ModeFigures {
  recall: number;
  mrr: number;
}

export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

export function summarize(scores: Score[]): ModeFigures {
  return { recall: mean(scores.map((s) => s.recall)), mrr: mean(scores.map((s) => s.rr)) };
}
