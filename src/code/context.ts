/**
 * get_context_for_prompt's packing: the most relevant files for a question, each as a whole file
 * when it is small and as its matching chunks (with a little surrounding code) otherwise, then
 * the files they import when asked, until the token budget is spent. Files the caller pins (an
 * active plan's) go first, whether or not the question matches them. Tokens are estimated at
 * about 3.5 characters each for code (the estimate is stated in the answer).
 */
import { and, eq, inArray } from "drizzle-orm";
import { dbOf, jsonValues } from "../db/client";
import { codeFiles } from "../db/schema";
import type { Env } from "../env";
import { searchCode, type Hit } from "./retrieval";
import type { IndexRow } from "./store";
import { importsOf } from "./symbols";

export const CHARS_PER_TOKEN = 3.5;
export const estimateTokens = (text: string) => Math.ceil(text.length / CHARS_PER_TOKEN);
/** A file this small goes in whole. */
const WHOLE_FILE_TOKENS = 1_200;
/** Lines of surrounding code kept around a matching chunk. */
const CONTEXT_LINES = 3;

export interface ContextRequest {
  query: string;
  maxFiles: number;
  tokenBudget: number;
  includeRelated: boolean;
  minRelevance: number;
  pathFilter: (path: string) => boolean;
  /** Paths put in first (those the index has), at most half of maxFiles, in this order. */
  pinned?: readonly string[];
}

export interface PackedFile {
  repo: string;
  path: string;
  language: string;
  relevance: number;
  reason: "pinned" | "match" | "related";
  whole: boolean;
  line_ranges: [number, number][];
  tokens: number;
  content: string;
}

export interface Packed {
  files: PackedFile[];
  candidates: number;
  tokens_used: number;
  truncated: boolean;
  mode: string;
  note: string;
}

interface FileRow {
  generation: string;
  path: string;
  language: string;
  text: string;
}

/** The files named, keyed generation NUL path: one statement per generation, not one per file. */
async function loadFiles(d1: D1Database, tenantId: string, keys: { generation: string; path: string }[]): Promise<Map<string, FileRow>> {
  const byGeneration = new Map<string, string[]>();
  for (const k of keys) byGeneration.set(k.generation, [...(byGeneration.get(k.generation) ?? []), k.path]);
  const out = new Map<string, FileRow>();
  for (const [generation, paths] of byGeneration) {
    const rows = await dbOf({ d1 })
      .select({ generation: codeFiles.generation, path: codeFiles.path, language: codeFiles.language, text: codeFiles.text })
      .from(codeFiles)
      .where(and(eq(codeFiles.tenantId, tenantId), eq(codeFiles.generation, generation), inArray(codeFiles.path, jsonValues(paths))));
    for (const row of rows) out.set(`${row.generation}\u0000${row.path}`, row);
  }
  return out;
}

/** Merged, padded line ranges of a file's matching chunks. */
function rangesOf(hits: Hit[], lineCount: number): [number, number][] {
  const spans = hits.map((h) => [Math.max(1, h.start_line - CONTEXT_LINES), Math.min(lineCount, h.end_line + CONTEXT_LINES)] as [number, number]).sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s[0] <= last[1] + 1) last[1] = Math.max(last[1], s[1]);
    else merged.push([s[0], s[1]]);
  }
  return merged;
}

/** Lines from the top of a file that fit in a whole small file's tokens. */
function headLines(lines: string[]): number {
  let chars = 0;
  let n = 0;
  while (n < lines.length && chars + lines[n]!.length + 1 <= WHOLE_FILE_TOKENS * CHARS_PER_TOKEN) chars += lines[n++]!.length + 1;
  return Math.max(1, n);
}

function excerpt(lines: string[], ranges: [number, number][]): string {
  return ranges.map(([a, b]) => `// lines ${a}-${b}\n${lines.slice(a - 1, b).join("\n")}`).join("\n// …\n");
}

/** Of `paths`, those some index has, as file keys, in the order given, at most `max`. */
async function pinnedKeys(d1: D1Database, tenantId: string, indexes: IndexRow[], paths: readonly string[], max: number): Promise<string[]> {
  if (paths.length === 0 || max <= 0) return [];
  const rows = await dbOf({ d1 })
    .select({ generation: codeFiles.generation, path: codeFiles.path })
    .from(codeFiles)
    .where(and(eq(codeFiles.tenantId, tenantId), inArray(codeFiles.generation, jsonValues(indexes.map((i) => i.generation))), inArray(codeFiles.path, jsonValues(paths))));
  const order = new Map(paths.map((p, i) => [p, i]));
  const gens = new Map(indexes.map((ix, i) => [ix.generation, i]));
  return rows
    .sort((a, b) => order.get(a.path)! - order.get(b.path)! || gens.get(a.generation)! - gens.get(b.generation)!)
    .slice(0, max)
    .map((r) => `${r.generation}\u0000${r.path}`);
}

export async function packContext(env: Env, tenantId: string, indexes: IndexRow[], req: ContextRequest): Promise<Packed> {
  const names = new Map(indexes.map((i) => [i.generation, `${i.owner}/${i.name}`]));
  const found = await searchCode(env, tenantId, indexes, { query: req.query, topK: req.maxFiles * 6, pool: 4, mode: "hybrid", filter: (c) => req.pathFilter(c.path) });
  const hits = found.hits.filter((h) => h.relevance >= req.minRelevance);
  // Pinned files first, then files ranked by their best chunk; later chunks of a chosen file join it.
  const pinned = new Set(await pinnedKeys(env.DB, tenantId, indexes, (req.pinned ?? []).filter(req.pathFilter), Math.ceil(req.maxFiles / 2)));
  const byFile = new Map<string, Hit[]>([...pinned].map((k) => [k, []]));
  for (const h of hits) {
    const key = `${h.generation}\u0000${h.path}`;
    if (!byFile.has(key) && byFile.size >= req.maxFiles) continue;
    byFile.set(key, [...(byFile.get(key) ?? []), h]);
  }
  const files = await loadFiles(
    env.DB,
    tenantId,
    [...byFile.keys()].map((k) => ({ generation: k.split("\u0000")[0]!, path: k.split("\u0000")[1]! })),
  );
  const out: PackedFile[] = [];
  let used = 0;
  let truncated = false;
  const add = (f: PackedFile) => {
    if (used + f.tokens > req.tokenBudget) {
      truncated = true;
      return false;
    }
    out.push(f);
    used += f.tokens;
    return true;
  };
  for (const [key, fileHits] of byFile) {
    const file = files.get(key);
    if (!file) continue;
    const lines = file.text.split("\n");
    const wholeTokens = estimateTokens(file.text);
    const whole = wholeTokens <= WHOLE_FILE_TOKENS || wholeTokens <= (req.tokenBudget - used) / Math.max(1, req.maxFiles - out.length) / 2;
    // A pinned file the question does not match is shown from its top.
    const head: [number, number][] = [[1, headLines(lines)]];
    const ranges: [number, number][] = whole ? [[1, lines.length]] : fileHits.length > 0 ? rangesOf(fileHits, lines.length) : head;
    const content = whole ? file.text : excerpt(lines, ranges);
    const entry: PackedFile = {
      repo: names.get(file.generation) ?? "",
      path: file.path,
      language: file.language,
      relevance: fileHits[0]?.relevance ?? 0,
      reason: pinned.has(key) ? "pinned" : "match",
      whole,
      line_ranges: ranges,
      tokens: estimateTokens(content),
      content,
    };
    if (!add(entry) && !whole) continue;
    if (!out.includes(entry)) {
      // Over budget whole: its best chunk alone may still fit.
      const best = fileHits.length > 0 ? rangesOf([fileHits[0]!], lines.length) : head;
      const bit = excerpt(lines, best);
      add({ ...entry, whole: false, line_ranges: best, tokens: estimateTokens(bit), content: bit });
    }
  }
  if (req.includeRelated && used < req.tokenBudget) {
    const chosen = new Set(out.map((f) => `${f.repo}\u0000${f.path}`));
    for (const index of indexes) {
      const mine = out.filter((f) => f.repo === names.get(index.generation)).map((f) => f.path);
      const related = (await importsOf(env.DB, tenantId, index.generation, mine))
        .map((r) => r.target_path)
        .filter((p, i, a) => a.indexOf(p) === i && !chosen.has(`${names.get(index.generation)}\u0000${p}`) && req.pathFilter(p));
      const loaded = await loadFiles(
        env.DB,
        tenantId,
        related.map((path) => ({ generation: index.generation, path })),
      );
      for (const path of related) {
        const file = loaded.get(`${index.generation}\u0000${path}`);
        if (!file) continue;
        const tokens = estimateTokens(file.text);
        if (tokens > WHOLE_FILE_TOKENS) continue; // a big dependency would crowd out the matches
        const lineCount = file.text.split("\n").length;
        add({
          repo: names.get(index.generation) ?? "",
          path: file.path,
          language: file.language,
          relevance: 0,
          reason: "related",
          whole: true,
          line_ranges: [[1, lineCount]],
          tokens,
          content: file.text,
        });
      }
    }
  }
  return { files: out, candidates: hits.length, tokens_used: used, truncated, mode: found.mode, note: found.note };
}
