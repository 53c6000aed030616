/** Retrieval: semantic_search, codebase_retrieval and get_file (seed 004's context and search tools). */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { cached } from "../cache";
import { searchCode, type Chunk, type Hit } from "../retrieval";
import { filesAt, type IndexRow } from "../store";
import { indexedOf, indexedSchema, liveIndexes, optionalRepoField, refField } from "./common";

const queryField = z.string().trim().min(1).max(1000).describe("What you are looking for, in words or identifiers.");

export const hitSchema = z.object({
  repo: z.string().describe("owner/name."),
  path: z.string().describe("File path in the repository."),
  start_line: z.number().int().describe("First line (1-based)."),
  end_line: z.number().int().describe("Last line (inclusive)."),
  symbol: z.string().describe("The enclosing definition, or ''."),
  language: z.string().describe("Language."),
  relevance: z.number().describe("0–1, relative to the best hit of this answer."),
  content: z.string().describe("The chunk's code."),
});

type HitOut = z.infer<typeof hitSchema>;

const repoNames = (indexes: IndexRow[]) => new Map(indexes.map((i) => [i.generation, `${i.owner}/${i.name}`]));

function hitsOut(hits: Hit[], indexes: IndexRow[]): HitOut[] {
  const names = repoNames(indexes);
  return hits.map((h) => ({
    repo: names.get(h.generation) ?? "",
    path: h.path,
    start_line: h.start_line,
    end_line: h.end_line,
    symbol: h.symbol,
    language: h.language,
    relevance: h.relevance,
    content: h.text,
  }));
}

/** The answer as markdown, for agents that read the text content. */
export function hitsMarkdown(query: string, hits: HitOut[], note: string): string {
  if (hits.length === 0) return `No code found for "${query}".${note ? `\n\n_${note}_` : ""}`;
  const parts = [`## ${hits.length} result(s) for "${query}"`];
  hits.forEach((h, i) => {
    parts.push(`### ${i + 1}. ${h.repo}: ${h.path}:${h.start_line}-${h.end_line}${h.symbol ? ` (${h.symbol})` : ""} · relevance ${h.relevance.toFixed(2)}`);
    parts.push("```" + h.language + "\n" + h.content.replace(/\n$/, "") + "\n```");
  });
  if (note) parts.push(`_${note}_`);
  return parts.join("\n\n");
}

const searchOutput = z.object({
  results: z.array(hitSchema).describe("Best first."),
  indexes: z.array(indexedSchema).describe("The indexes searched and the commits they reflect."),
  mode: z.enum(["hybrid", "keyword", "semantic"]).describe("How results were ranked."),
  note: z.string().describe("Anything to know about this ranking (a skipped pass), or ''."),
});

const cacheKeyOf = (indexes: IndexRow[]) => indexes.map((i) => `${i.generation}@${i.commit_sha}`);

export const semanticSearchTool = defineTool({
  name: "semantic_search",
  title: "Search code by meaning",
  toolset: "code",
  description: "Find code snippets by meaning (embeddings fused with a code-aware keyword index) in indexed repositories.",
  input: z.object({
    query: queryField,
    top_k: z.number().int().min(1).max(50).default(10).describe("Number of results."),
    mode: z.enum(["fast", "deep"]).default("fast").describe("deep draws more candidates (more recall, slower)."),
    bypass_cache: z.boolean().default(false).describe("Skip cached answers."),
    timeout_ms: z.number().int().min(1).max(60_000).optional().describe("Cap on time spent ranking; past it, keyword results only."),
    repo: optionalRepoField,
  }),
  output: searchOutput,
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const indexes = await liveIndexes(ctx, input.repo);
    const args = { query: input.query, top_k: input.top_k, mode: input.mode };
    return cached(ctx.tenantId, ["semantic_search", cacheKeyOf(indexes), args], input.bypass_cache, async () => {
      const r = await searchCode(ctx.env, ctx.tenantId, indexes, {
        query: input.query,
        topK: input.top_k,
        pool: input.mode === "deep" ? 10 : 3,
        mode: "hybrid",
        ...(input.timeout_ms ? { deadlineMs: input.timeout_ms } : {}),
      });
      return { results: hitsOut(r.hits, indexes), indexes: indexes.map(indexedOf), mode: r.mode, note: r.note };
    });
  },
  text: (r, input) => hitsMarkdown(input.query, r.results, r.note),
});

const TEST_PATH = /(^|\/)(tests?|__tests__|spec|specs|testdata|fixtures)\/|\.(test|spec)\.[a-z0-9]+$|_test\.go$|(^|\/)test_[^/]*\.py$|_test\.py$/i;
export const isTestPath = (path: string) => TEST_PATH.test(path);

const extOf = (path: string) => {
  const m = /\.[^./]+$/.exec(path);
  return m ? m[0].toLowerCase() : "";
};

export const codebaseRetrievalTool = defineTool({
  name: "codebase_retrieval",
  title: "Retrieve code with filters",
  toolset: "code",
  description: "Search indexed code by meaning and keywords, filtered by file type and path; test files are left out unless asked for.",
  input: z.object({
    query: queryField,
    options: z
      .object({
        top_k: z.number().int().min(1).max(50).default(10).describe("Results limit."),
        file_types: z.array(z.string().min(1).max(20)).max(20).optional().describe("Only these extensions (.ts, .py)."),
        exclude_paths: z.array(z.string().min(1).max(300)).max(20).optional().describe("Leave out paths starting with these."),
        include_tests: z.boolean().default(false).describe("Include test files."),
      })
      .strict()
      .default({ top_k: 10, include_tests: false })
      .describe("Filters."),
    repo: optionalRepoField,
  }),
  output: searchOutput.extend({
    filters_applied: z
      .object({
        file_types: z.array(z.string()).describe("Extensions kept."),
        exclude_paths: z.array(z.string()).describe("Path prefixes left out."),
        include_tests: z.boolean().describe("Whether tests were kept."),
      })
      .describe("The filters as applied."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const indexes = await liveIndexes(ctx, input.repo);
    const o = input.options;
    const types = (o.file_types ?? []).map((t) => (t.startsWith(".") ? t : `.${t}`).toLowerCase());
    const excluded = o.exclude_paths ?? [];
    const filter = (c: Chunk) => (types.length === 0 || types.includes(extOf(c.path))) && !excluded.some((p) => c.path.startsWith(p.replace(/^\.?\//, ""))) && (o.include_tests || !isTestPath(c.path));
    const r = await searchCode(ctx.env, ctx.tenantId, indexes, { query: input.query, topK: o.top_k, pool: 8, mode: "hybrid", filter });
    return {
      results: hitsOut(r.hits, indexes),
      indexes: indexes.map(indexedOf),
      mode: r.mode,
      note: r.note,
      filters_applied: { file_types: types, exclude_paths: excluded, include_tests: o.include_tests },
    };
  },
  text: (r, input) => hitsMarkdown(input.query, r.results, r.note),
});

export const getFileTool = defineTool({
  name: "get_file",
  title: "Read a file",
  toolset: "code",
  description: "A file's contents as indexed, with size, line count and the commit; start_line/end_line read part of a long file.",
  input: z.object({
    path: z.string().trim().min(1).max(1024).describe("File path relative to the repository root."),
    include_metadata: z.boolean().default(true).describe("Include the commit and when it was indexed."),
    start_line: z.number().int().min(1).optional().describe("First line to return."),
    end_line: z.number().int().min(1).optional().describe("Last line to return."),
    repo: optionalRepoField,
    ref: refField,
  }),
  output: z.object({
    path: z.string().describe("File path."),
    content: z.string().describe("The contents (the lines asked for)."),
    size: z.number().int().describe("File size in bytes."),
    lines: z.number().int().describe("Total line count."),
    language: z.string().describe("Language."),
    metadata: z
      .object({
        last_modified: z.string().describe("When the index took this content."),
        git_status: z.string().describe("Always 'committed': the content is the indexed commit's."),
        repo: z.string().describe("owner/name."),
        ref: z.string().describe("The ref indexed."),
        commit: z.string().describe("The commit the content is from."),
      })
      .optional()
      .describe("With include_metadata."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const indexes = await liveIndexes(ctx, input.repo, input.ref);
    const path = input.path.replace(/^\.?\/+/, "");
    const rows = await filesAt(
      ctx.d1,
      ctx.tenantId,
      path,
      indexes.map((i) => i.generation),
    );
    if (rows.length === 0) {
      throw new ToolError("file_not_found", `${path} is not in the index${input.repo ? ` of ${input.repo}` : ""}.`, {
        hint: "Paths are relative to the repository root; semantic_search or symbol_search find files. Binary, vendored, generated and lock files are not indexed.",
      });
    }
    if (rows.length > 1) {
      const names = repoNames(indexes);
      throw new ToolError("ambiguous_path", `${path} is in ${rows.length} indexed repositories: ${rows.map((r) => names.get(r.generation)).join(", ")}.`, { hint: "Pass repo." });
    }
    const file = rows[0]!;
    const index = indexes.find((i) => i.generation === file.generation)!;
    let content = file.text;
    if (input.start_line !== undefined || input.end_line !== undefined) {
      const all = file.text.split("\n");
      content = all.slice((input.start_line ?? 1) - 1, input.end_line ?? all.length).join("\n");
    }
    return {
      path: file.path,
      content,
      size: file.size,
      lines: file.lines,
      language: file.language,
      ...(input.include_metadata
        ? { metadata: { last_modified: index.last_indexed_at, git_status: "committed", repo: `${index.owner}/${index.name}`, ref: index.ref, commit: index.commit_sha } }
        : {}),
    };
  },
  summarize: (r) => `${r.path}: ${r.lines} line(s), ${r.size} bytes.`,
});

export const searchTools = [semanticSearchTool, codebaseRetrievalTool, getFileTool];
