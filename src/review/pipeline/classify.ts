/**
 * What kind of change a diff is (the reference's classifyChange): the first rule that matches
 * wins. It reads the parsed files' new paths, not a caller's changed_files, as the reference does.
 */
import type { ParsedDiff } from "../unified-diff/parse";
import type { ChangeType } from "./types";

const DOC_EXTENSIONS = [".md", ".mdx", ".rst", ".txt"];

export function isDocsPath(path: string): boolean {
  const p = path.toLowerCase();
  return p.startsWith("docs/") || p === "readme.md" || p.endsWith("/readme.md") || DOC_EXTENSIONS.some((ext) => p.endsWith(ext));
}

export function isInfraPath(path: string): boolean {
  const p = path.toLowerCase();
  return (
    p.startsWith(".github/") ||
    p.startsWith("scripts/") ||
    p.startsWith("infra/") ||
    p === "package.json" ||
    p === "package-lock.json" ||
    p === "tsconfig.json" ||
    p === "tsconfig.test.json" ||
    p === "dockerfile" ||
    p.startsWith("docker/") ||
    p.endsWith(".yml") ||
    p.endsWith(".yaml")
  );
}

/** tests/…, …/__tests__/…, *.test.[jt]s, *.spec.[jt]s (case-insensitive); the preflight's test paths too. */
export const TEST_PATTERNS: readonly RegExp[] = [/^tests\//i, /\/__tests__\//i, /\.test\.[jt]s$/i, /\.spec\.[jt]s$/i];

export const isTestPath = (path: string) => TEST_PATTERNS.some((r) => r.test(path));

const BUGFIX_WORDS = /\b(fix|bug|error|null|undefined|regression|crash|leak)\b/i;

/** Lines changed at least this many times, and evenly both ways, read as a refactor. */
const REFACTOR_MIN_CHURN = 20;
const REFACTOR_MIN_BALANCE = 0.6;

export function classifyChange(parsed: ParsedDiff): ChangeType {
  const paths = parsed.files.map((f) => f.newPath);
  if (paths.length === 0) return "refactor";
  if (paths.every(isDocsPath)) return "docs";
  const infra = paths.filter(isInfraPath).length;
  if (infra > 0 && infra >= Math.ceil(paths.length / 2)) return "infra";
  if (parsed.files.some((f) => f.isNew && !isDocsPath(f.newPath))) return "feature";
  const added = parsed.files.flatMap((f) => f.hunks.flatMap((h) => h.lines.filter((l) => l.type === "add").map((l) => l.content)));
  if (BUGFIX_WORDS.test(added.join("\n"))) return "bugfix";
  if (paths.every(isTestPath)) return "refactor";
  const { linesAdded: a, linesRemoved: r } = parsed;
  const balance = Math.min(a, r) / Math.max(1, Math.max(a, r));
  if (a + r >= REFACTOR_MIN_CHURN && balance >= REFACTOR_MIN_BALANCE) return "refactor";
  return "feature";
}
