/**
 * Reads over the symbol tables a parse writes (definitions, references, imports), for the symbol
 * tools and impact analysis. Every read takes the live generations of the indexes asked for.
 */
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

const gens = (generations: string[]) => JSON.stringify(generations);

/** The last segment of a qualified name (UserService.login → login), which references record. */
export const simpleName = (symbol: string) =>
  symbol
    .split(/[.:#]+/)
    .filter(Boolean)
    .pop() ?? symbol;

/** Definitions by name: exact (case-insensitive) first, then prefix, then substring; exported before not. */
export async function findSymbols(d1: D1Database, tenantId: string, generations: string[], query: string, kind: string | undefined, limit: number): Promise<SymbolRow[]> {
  const q = query.toLowerCase();
  const qualified = q.includes(".") ? q : "";
  const like = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await d1
    .prepare(
      `SELECT generation, name, qualified, kind, path, start_line, end_line, exported, signature FROM code_symbols
       WHERE tenant_id = ? AND generation IN (SELECT value FROM json_each(?)) AND (? = '' OR kind = ?)
         AND (name_lower LIKE ? ESCAPE '\\' OR (? <> '' AND lower(qualified) = ?))
       ORDER BY CASE WHEN lower(qualified) = ? THEN 0 WHEN name_lower = ? THEN 1 WHEN name_lower LIKE ? ESCAPE '\\' THEN 2 ELSE 3 END,
         exported DESC, length(name), path, start_line
       LIMIT ?`,
    )
    .bind(tenantId, gens(generations), kind ?? "", kind ?? "", like, qualified, qualified, q, simpleName(q), `${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`, limit)
    .all<SymbolRow>();
  return rows.results;
}

/** Definitions of exactly this symbol (a qualified name matches itself; a plain name every definition of it). */
export async function definitionsOf(d1: D1Database, tenantId: string, generations: string[], symbol: string, path?: string): Promise<SymbolRow[]> {
  const rows = await d1
    .prepare(
      `SELECT generation, name, qualified, kind, path, start_line, end_line, exported, signature FROM code_symbols
       WHERE tenant_id = ? AND generation IN (SELECT value FROM json_each(?)) AND (qualified = ? OR (name = ? AND ? NOT LIKE '%.%'))
         AND (? = '' OR path = ?)
       ORDER BY exported DESC, path, start_line LIMIT 50`,
    )
    .bind(tenantId, gens(generations), symbol, symbol, symbol, path ?? "", path ?? "")
    .all<SymbolRow>();
  return rows.results;
}

/** References to a name, calls only when asked. */
export async function referencesTo(d1: D1Database, tenantId: string, generations: string[], symbol: string, callsOnly: boolean, limit: number): Promise<RefRow[]> {
  const rows = await d1
    .prepare(
      `SELECT generation, name, path, line, enclosing, kind FROM code_symbol_refs
       WHERE tenant_id = ? AND generation IN (SELECT value FROM json_each(?)) AND name = ? AND (? = 0 OR kind = 'call')
       ORDER BY path, line LIMIT ?`,
    )
    .bind(tenantId, gens(generations), simpleName(symbol), callsOnly ? 1 : 0, limit)
    .all<RefRow>();
  return rows.results;
}

/** The calls made inside a definition (its body's references of kind call). */
export async function callsWithin(d1: D1Database, tenantId: string, def: SymbolRow, limit: number): Promise<RefRow[]> {
  const rows = await d1
    .prepare(
      `SELECT generation, name, path, line, enclosing, kind FROM code_symbol_refs
       WHERE tenant_id = ? AND generation = ? AND path = ? AND kind = 'call' AND (enclosing = ? OR enclosing LIKE ? ESCAPE '\\')
       ORDER BY line LIMIT ?`,
    )
    .bind(tenantId, def.generation, def.path, def.qualified, `${def.qualified.replace(/[\\%_]/g, (c) => `\\${c}`)}.%`, limit)
    .all<RefRow>();
  return rows.results;
}

/** Files that import any of these paths (one generation). */
export async function importersOf(d1: D1Database, tenantId: string, generation: string, paths: string[]): Promise<{ path: string; target_path: string }[]> {
  if (paths.length === 0) return [];
  const rows = await d1
    .prepare(`SELECT DISTINCT path, target_path FROM code_imports WHERE tenant_id = ? AND generation = ? AND target_path IN (SELECT value FROM json_each(?)) ORDER BY path`)
    .bind(tenantId, generation, JSON.stringify(paths))
    .all<{ path: string; target_path: string }>();
  return rows.results;
}

/** The files a file imports (resolved within the repository), for related-file context. */
export async function importsOf(d1: D1Database, tenantId: string, generation: string, paths: string[]): Promise<{ path: string; target_path: string }[]> {
  if (paths.length === 0) return [];
  const rows = await d1
    .prepare(`SELECT DISTINCT path, target_path FROM code_imports WHERE tenant_id = ? AND generation = ? AND path IN (SELECT value FROM json_each(?)) AND target_path <> '' ORDER BY path`)
    .bind(tenantId, generation, JSON.stringify(paths))
    .all<{ path: string; target_path: string }>();
  return rows.results;
}

/** Lines start..end of an indexed file (1-based, inclusive), or '' when the file is gone. */
export async function fileLines(d1: D1Database, tenantId: string, generation: string, path: string, start: number, end: number): Promise<string> {
  const row = await d1.prepare(`SELECT text FROM code_files WHERE tenant_id = ? AND generation = ? AND path = ?`).bind(tenantId, generation, path).first<{ text: string }>();
  return row
    ? row.text
        .split("\n")
        .slice(start - 1, end)
        .join("\n")
    : "";
}
