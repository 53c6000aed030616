/**
 * Reads over the symbol tables a parse writes (definitions, references, imports), for the symbol
 * tools and impact analysis. Every read takes the live generations of the indexes asked for.
 */
import { and, asc, desc, eq, inArray, ne, or, sql, type SQL } from "drizzle-orm";
import { dbOf, jsonValues } from "../db/client";
import { likeLiteral } from "../db/like";
import { codeFiles, codeImports, codeSymbolRefs, codeSymbols } from "../db/schema";

export interface SymbolRow {
  generation: string;
  name: string;
  qualified: string;
  kind: string;
  path: string;
  start_line: number;
  end_line: number;
  exported: number;
  signature: string;
}

export interface RefRow {
  generation: string;
  name: string;
  path: string;
  line: number;
  enclosing: string;
  kind: string;
}

/** A symbol row's fields, keyed by SQL column name so rows keep the shape the tools read. */
const symbolFields = {
  generation: codeSymbols.generation,
  name: codeSymbols.name,
  qualified: codeSymbols.qualified,
  kind: codeSymbols.kind,
  path: codeSymbols.path,
  start_line: codeSymbols.startLine,
  end_line: codeSymbols.endLine,
  exported: codeSymbols.exported,
  signature: codeSymbols.signature,
};

const refFields = {
  generation: codeSymbolRefs.generation,
  name: codeSymbolRefs.name,
  path: codeSymbolRefs.path,
  line: codeSymbolRefs.line,
  enclosing: codeSymbolRefs.enclosing,
  kind: codeSymbolRefs.kind,
};

/** The last segment of a qualified name (UserService.login → login), which references record. */
export const simpleName = (symbol: string) =>
  symbol
    .split(/[.:#]+/)
    .filter(Boolean)
    .pop() ?? symbol;

/** The tenant's definitions in these generations that also pass `conditions`, as both definition reads select them. */
const definitionsIn = (d1: D1Database, tenantId: string, generations: string[], ...conditions: Array<SQL | undefined>) =>
  dbOf({ d1 })
    .select(symbolFields)
    .from(codeSymbols)
    .where(and(eq(codeSymbols.tenantId, tenantId), inArray(codeSymbols.generation, jsonValues(generations)), ...conditions));

/** Definitions by name: exact (case-insensitive) first, then prefix, then substring; exported before not. */
export async function findSymbols(d1: D1Database, tenantId: string, generations: string[], query: string, kind: string | undefined, limit: number): Promise<SymbolRow[]> {
  const q = query.toLowerCase();
  const qualified = q.includes(".") ? q : "";
  const t = codeSymbols;
  return definitionsIn(
    d1,
    tenantId,
    generations,
    kind ? eq(t.kind, kind) : undefined,
    // LIKE … ESCAPE, which drizzle's like() cannot say.
    or(sql`${t.nameLower} LIKE ${`%${likeLiteral(q)}%`} ESCAPE '\\'`, qualified ? sql`lower(${t.qualified}) = ${qualified}` : undefined),
  )
    .orderBy(
      sql`CASE WHEN lower(${t.qualified}) = ${q} THEN 0 WHEN ${t.nameLower} = ${simpleName(q)} THEN 1 WHEN ${t.nameLower} LIKE ${`${likeLiteral(q)}%`} ESCAPE '\\' THEN 2 ELSE 3 END`,
      desc(t.exported),
      sql`length(${t.name})`,
      asc(t.path),
      asc(t.startLine),
    )
    .limit(limit);
}

/** Definitions of exactly this symbol (a qualified name matches itself; a plain name every definition of it). */
export async function definitionsOf(d1: D1Database, tenantId: string, generations: string[], symbol: string, path?: string): Promise<SymbolRow[]> {
  const t = codeSymbols;
  return definitionsIn(d1, tenantId, generations, symbol.includes(".") ? eq(t.qualified, symbol) : or(eq(t.qualified, symbol), eq(t.name, symbol)), path ? eq(t.path, path) : undefined)
    .orderBy(desc(t.exported), asc(t.path), asc(t.startLine))
    .limit(50);
}

/** References to a name, calls only when asked. */
export async function referencesTo(d1: D1Database, tenantId: string, generations: string[], symbol: string, callsOnly: boolean, limit: number): Promise<RefRow[]> {
  const t = codeSymbolRefs;
  return dbOf({ d1 })
    .select(refFields)
    .from(t)
    .where(and(eq(t.tenantId, tenantId), inArray(t.generation, jsonValues(generations)), eq(t.name, simpleName(symbol)), callsOnly ? eq(t.kind, "call") : undefined))
    .orderBy(asc(t.path), asc(t.line))
    .limit(limit);
}

/** The calls made inside a definition (its body's references of kind call). */
export async function callsWithin(d1: D1Database, tenantId: string, def: SymbolRow, limit: number): Promise<RefRow[]> {
  const t = codeSymbolRefs;
  return dbOf({ d1 })
    .select(refFields)
    .from(t)
    .where(
      and(
        eq(t.tenantId, tenantId),
        eq(t.generation, def.generation),
        eq(t.path, def.path),
        eq(t.kind, "call"),
        // LIKE … ESCAPE, which drizzle's like() cannot say.
        or(eq(t.enclosing, def.qualified), sql`${t.enclosing} LIKE ${`${likeLiteral(def.qualified)}.%`} ESCAPE '\\'`),
      ),
    )
    .orderBy(asc(t.line))
    .limit(limit);
}

/** Files that import any of these paths (one generation). */
export async function importersOf(d1: D1Database, tenantId: string, generation: string, paths: string[]): Promise<{ path: string; target_path: string }[]> {
  if (paths.length === 0) return [];
  const t = codeImports;
  return dbOf({ d1 })
    .selectDistinct({ path: t.path, target_path: t.targetPath })
    .from(t)
    .where(and(eq(t.tenantId, tenantId), eq(t.generation, generation), inArray(t.targetPath, jsonValues(paths))))
    .orderBy(asc(t.path));
}

/** The files a file imports (resolved within the repository), for related-file context. */
export async function importsOf(d1: D1Database, tenantId: string, generation: string, paths: string[]): Promise<{ path: string; target_path: string }[]> {
  if (paths.length === 0) return [];
  const t = codeImports;
  return dbOf({ d1 })
    .selectDistinct({ path: t.path, target_path: t.targetPath })
    .from(t)
    .where(and(eq(t.tenantId, tenantId), eq(t.generation, generation), inArray(t.path, jsonValues(paths)), ne(t.targetPath, "")))
    .orderBy(asc(t.path));
}

/** Lines start..end of an indexed file (1-based, inclusive), or '' when the file is gone. */
export async function fileLines(d1: D1Database, tenantId: string, generation: string, path: string, start: number, end: number): Promise<string> {
  const row = await dbOf({ d1 })
    .select({ text: codeFiles.text })
    .from(codeFiles)
    .where(and(eq(codeFiles.tenantId, tenantId), eq(codeFiles.generation, generation), eq(codeFiles.path, path)))
    .get();
  return row
    ? row.text
        .split("\n")
        .slice(start - 1, end)
        .join("\n")
    : "";
}
