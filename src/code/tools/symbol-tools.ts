/** Symbols: symbol_search, symbol_definition, symbol_references, find_callers, find_callees, impact_analysis. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import type { IndexRow } from "../store";
import { callsWithin, definitionsOf, fileLines, findSymbols, importersOf, referencesTo, type RefRow, type SymbolRow } from "../symbols";
import { indexedOf, indexesField, liveIndexes, optionalRepoField } from "./common";

const symbolField = z.string().trim().min(1).max(300).describe("A symbol: a name (login) or qualified name (UserService.login).");

const defSchema = z.object({
  repo: z.string().describe("owner/name."),
  name: z.string().describe("The name."),
  qualified: z.string().describe("Qualified name (Class.method)."),
  kind: z.string().describe("function, method, class, interface, type, …"),
  path: z.string().describe("File path."),
  start_line: z.number().int().describe("First line."),
  end_line: z.number().int().describe("Last line."),
  exported: z.boolean().describe("Visible outside its module."),
  signature: z.string().describe("Its first line(s)."),
});

const refSchema = z.object({
  repo: z.string().describe("owner/name."),
  path: z.string().describe("File path."),
  line: z.number().int().describe("Line."),
  enclosing: z.string().describe("The definition it sits in, or '' at top level."),
  kind: z.enum(["call", "reference"]).describe("call or reference."),
  text: z.string().describe("The line's code."),
});

const names = (indexes: IndexRow[]) => new Map(indexes.map((i) => [i.generation, `${i.owner}/${i.name}`]));

const defOut = (indexes: IndexRow[]) => {
  const n = names(indexes);
  return (s: SymbolRow): z.infer<typeof defSchema> => ({
    repo: n.get(s.generation) ?? "",
    name: s.name,
    qualified: s.qualified,
    kind: s.kind,
    path: s.path,
    start_line: s.start_line,
    end_line: s.end_line,
    exported: s.exported === 1,
    signature: s.signature,
  });
};

/** References with their line of code, reading each file once. */
async function refsOut(ctx: Ctx, indexes: IndexRow[], refs: RefRow[]): Promise<z.infer<typeof refSchema>[]> {
  const n = names(indexes);
  const files = new Map<string, string[]>();
  for (const r of refs) {
    const key = `${r.generation}\u0000${r.path}`;
    if (!files.has(key)) files.set(key, (await fileLines(ctx.d1, ctx.tenantId, r.generation, r.path, 1, Number.MAX_SAFE_INTEGER)).split("\n"));
  }
  return refs.map((r) => ({
    repo: n.get(r.generation) ?? "",
    path: r.path,
    line: r.line,
    enclosing: r.enclosing,
    kind: r.kind === "call" ? "call" : "reference",
    text: (files.get(`${r.generation}\u0000${r.path}`)?.[r.line - 1] ?? "").trim().slice(0, 300),
  }));
}

const gensOf = (indexes: IndexRow[]) => indexes.map((i) => i.generation);

export const symbolSearchTool = defineTool({
  name: "symbol_search",
  title: "Find symbols",
  toolset: "code",
  description: "Find definitions by name (exact, then prefix, then substring; exported first).",
  input: z.object({
    query: z.string().trim().min(1).max(200).describe("A name or part of one."),
    kind: z.string().trim().min(1).max(40).optional().describe("Only this kind (function, class, method, …)."),
    top_k: z.number().int().min(1).max(100).default(20).describe("Results limit."),
    repo: optionalRepoField,
  }),
  output: z.object({ items: z.array(defSchema).describe("Definitions, best match first."), indexes: indexesField }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const indexes = await liveIndexes(ctx, input.repo);
    const rows = await findSymbols(ctx.d1, ctx.tenantId, gensOf(indexes), input.query, input.kind, input.top_k);
    return { items: rows.map(defOut(indexes)), indexes: indexes.map(indexedOf) };
  },
  summarize: (r) => `${r.items.length} symbol(s).`,
});

async function definitionsOrFail(ctx: Ctx, indexes: IndexRow[], symbol: string, path?: string): Promise<SymbolRow[]> {
  const defs = await definitionsOf(ctx.d1, ctx.tenantId, gensOf(indexes), symbol, path);
  if (defs.length === 0) {
    throw new ToolError("symbol_not_found", `No definition of '${symbol.slice(0, 100)}'${path ? ` in ${path}` : ""} is indexed.`, {
      hint: "symbol_search finds names by part; a qualified name is Class.method.",
    });
  }
  return defs;
}

export const symbolDefinitionTool = defineTool({
  name: "symbol_definition",
  title: "Go to definition",
  toolset: "code",
  description: "A symbol's definitions with their code.",
  input: z.object({ symbol: symbolField, path: z.string().max(1024).optional().describe("Only the definition in this file."), repo: optionalRepoField }),
  output: z.object({
    items: z.array(defSchema.extend({ code: z.string().describe("The definition's code (up to 300 lines).") })).describe("Definitions."),
    indexes: indexesField,
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const indexes = await liveIndexes(ctx, input.repo);
    const defs = await definitionsOrFail(ctx, indexes, input.symbol, input.path);
    const out = defOut(indexes);
    const items = [];
    for (const d of defs) items.push({ ...out(d), code: await fileLines(ctx.d1, ctx.tenantId, d.generation, d.path, d.start_line, Math.min(d.end_line, d.start_line + 299)) });
    return { items, indexes: indexes.map(indexedOf) };
  },
  summarize: (r) => r.items.map((d) => `${d.qualified} at ${d.path}:${d.start_line}`).join("; "),
});

export const symbolReferencesTool = defineTool({
  name: "symbol_references",
  title: "Find references",
  toolset: "code",
  description: "Where a symbol's name is used (calls and other references), with each line of code.",
  input: z.object({ symbol: symbolField, top_k: z.number().int().min(1).max(500).default(100).describe("Results limit."), repo: optionalRepoField }),
  output: z.object({ items: z.array(refSchema).describe("References by file and line."), indexes: indexesField }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const indexes = await liveIndexes(ctx, input.repo);
    const refs = await referencesTo(ctx.d1, ctx.tenantId, gensOf(indexes), input.symbol, false, input.top_k);
    return { items: await refsOut(ctx, indexes, refs), indexes: indexes.map(indexedOf) };
  },
  summarize: (r) => `${r.items.length} reference(s).`,
});

const callerSchema = z.object({
  repo: z.string().describe("owner/name."),
  caller: z.string().describe("The calling definition, or '' for top-level code."),
  path: z.string().describe("File path."),
  lines: z.array(z.number().int()).describe("Lines of the calls."),
});

export const findCallersTool = defineTool({
  name: "find_callers",
  title: "Find callers",
  toolset: "code",
  description: "The definitions that call a symbol, with the lines of the calls.",
  input: z.object({ symbol: symbolField, top_k: z.number().int().min(1).max(200).default(50).describe("Callers limit."), repo: optionalRepoField }),
  output: z.object({ items: z.array(callerSchema).describe("Callers by file."), indexes: indexesField }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const indexes = await liveIndexes(ctx, input.repo);
    const refs = await referencesTo(ctx.d1, ctx.tenantId, gensOf(indexes), input.symbol, true, 2_000);
    const n = names(indexes);
    const grouped = new Map<string, z.infer<typeof callerSchema>>();
    for (const r of refs) {
      const key = `${r.generation}\u0000${r.path}\u0000${r.enclosing}`;
      const g = grouped.get(key) ?? { repo: n.get(r.generation) ?? "", caller: r.enclosing, path: r.path, lines: [] };
      g.lines.push(r.line);
      grouped.set(key, g);
    }
    return { items: [...grouped.values()].slice(0, input.top_k), indexes: indexes.map(indexedOf) };
  },
  summarize: (r) => `${r.items.length} caller(s).`,
});

export const findCalleesTool = defineTool({
  name: "find_callees",
  title: "Find callees",
  toolset: "code",
  description: "What a definition calls, each resolved to its definitions where the index has them.",
  input: z.object({ symbol: symbolField, path: z.string().max(1024).optional().describe("The definition in this file."), repo: optionalRepoField }),
  output: z.object({
    items: z
      .array(
        z.object({
          name: z.string().describe("The name called."),
          lines: z.array(z.number().int()).describe("Lines of the calls."),
          definitions: z.array(defSchema).describe("Where it is defined (up to 5), or [] when outside the index."),
        }),
      )
      .describe("Callees in call order."),
    caller: z.array(defSchema).describe("The definition(s) read."),
    indexes: indexesField,
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const indexes = await liveIndexes(ctx, input.repo);
    const defs = await definitionsOrFail(ctx, indexes, input.symbol, input.path);
    const out = defOut(indexes);
    const byName = new Map<string, number[]>();
    for (const d of defs) for (const c of await callsWithin(ctx.d1, ctx.tenantId, d, 1_000)) byName.set(c.name, [...(byName.get(c.name) ?? []), c.line]);
    const items = [];
    for (const [name, lines] of byName) {
      const targets = await definitionsOf(ctx.d1, ctx.tenantId, gensOf(indexes), name);
      items.push({ name, lines, definitions: targets.slice(0, 5).map(out) });
    }
    return { items, caller: defs.map(out), indexes: indexes.map(indexedOf) };
  },
  summarize: (r) => `${r.items.length} callee(s).`,
});

const MAX_IMPACT_FILES = 500;

export const impactAnalysisTool = defineTool({
  name: "impact_analysis",
  title: "Impact analysis",
  toolset: "code",
  description: "Given paths or symbols: the files and definitions that depend on them, through imports (transitively, to depth) and references.",
  input: z.object({
    paths: z.array(z.string().min(1).max(1024)).max(50).optional().describe("Files that change."),
    symbols: z.array(z.string().min(1).max(300)).max(50).optional().describe("Symbols that change."),
    depth: z.number().int().min(1).max(4).default(2).describe("Import hops to follow."),
    repo: optionalRepoField,
  }),
  output: z.object({
    files: z
      .array(
        z.object({
          repo: z.string().describe("owner/name."),
          path: z.string().describe("A dependent file."),
          depth: z.number().int().describe("Import hops from a changed file (0: references a changed symbol directly)."),
          via: z.string().describe("The changed file or symbol it depends on."),
        }),
      )
      .describe("Dependent files, nearest first."),
    symbols: z
      .array(
        z.object({
          repo: z.string().describe("owner/name."),
          symbol: z.string().describe("A definition that uses a changed symbol ('' for top-level code)."),
          path: z.string().describe("Its file."),
          uses: z.string().describe("The changed symbol it uses."),
        }),
      )
      .describe("Dependent definitions."),
    indexes: indexesField,
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    if (!input.paths?.length && !input.symbols?.length) throw new ToolError("invalid_input", "impact_analysis needs paths or symbols.", { hint: 'Pass paths: ["src/a.ts"] or symbols: ["login"].' });
    const indexes = await liveIndexes(ctx, input.repo);
    const n = names(indexes);
    const files: { repo: string; path: string; depth: number; via: string }[] = [];
    const symbols: { repo: string; symbol: string; path: string; uses: string }[] = [];
    for (const index of indexes) {
      const seen = new Set(input.paths ?? []);
      let frontier = [...seen].map((p) => ({ path: p, via: p }));
      for (let depth = 1; depth <= input.depth && frontier.length > 0 && files.length < MAX_IMPACT_FILES; depth++) {
        const via = new Map(frontier.map((f) => [f.path, f.via]));
        const next = [];
        for (const imp of await importersOf(ctx.d1, ctx.tenantId, index.generation, [...via.keys()])) {
          if (seen.has(imp.path)) continue;
          seen.add(imp.path);
          const origin = via.get(imp.target_path) ?? imp.target_path;
          files.push({ repo: n.get(index.generation)!, path: imp.path, depth, via: origin });
          next.push({ path: imp.path, via: origin });
        }
        frontier = next;
      }
      for (const s of input.symbols ?? []) {
        for (const r of await referencesTo(ctx.d1, ctx.tenantId, [index.generation], s, false, 2_000)) {
          if (!symbols.some((x) => x.path === r.path && x.symbol === r.enclosing && x.uses === s)) symbols.push({ repo: n.get(index.generation)!, symbol: r.enclosing, path: r.path, uses: s });
          if (!seen.has(r.path)) {
            seen.add(r.path);
            files.push({ repo: n.get(index.generation)!, path: r.path, depth: 0, via: s });
          }
        }
      }
    }
    files.sort((a, b) => a.depth - b.depth || a.path.localeCompare(b.path));
    return { files: files.slice(0, MAX_IMPACT_FILES), symbols: symbols.slice(0, MAX_IMPACT_FILES), indexes: indexes.map(indexedOf) };
  },
  summarize: (r) => `${r.files.length} dependent file(s), ${r.symbols.length} dependent definition(s).`,
});

export const symbolTools = [symbolSearchTool, symbolDefinitionTool, symbolReferencesTool, findCallersTool, findCalleesTool, impactAnalysisTool];
