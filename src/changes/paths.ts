import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
/**
 * Entity paths. Every write and every query goes through `canonicalPath`, so
 * `./src/auth.py::login` and `src/auth.py::login` are one entity. Case is kept on purpose.
 */
export function canonicalPath(raw: string): string {
  const trimmed = raw.trim();
  let p = trimmed.replace(/\\/g, "/").replace(/\/{2,}/g, "/");
  while (p.startsWith("./")) p = p.slice(2);
  return p === "" ? trimmed : p;
}

/**
 * SQL true when `column` contains `needle` (a bound text, or a parameter's name such as `?1`): a
 * literal substring with ASCII case folded, as LIKE '%…%' with escapes would match. Not LIKE
 * itself: D1 refuses LIKE patterns longer than 50 bytes.
 */
export const contains = (column: SQLWrapper, needle: SQLWrapper): SQL => sql`instr(lower(${column}), lower(${needle})) > 0`;

/**
 * SQL for "exact path, or a dotted prefix of it" on an entity path column: `users` covers
 * `users.email` but not `usersX` or `users_x`. The prefix half is case-insensitive (ASCII,
 * like LIKE); the range on the NOCASE index keeps it an index seek rather than a scan.
 *
 * The range [P, P + "/") under NOCASE holds exactly the paths that start with P (ASCII case
 * folded) followed by nothing or a character sorting before "/"; the character right after
 * P must then be ".". No LIKE: D1 refuses LIKE patterns over 50 bytes, and paths run to 1024.
 */
export function pathMatch(column: SQLiteColumn, path: string): SQL {
  return sql`(${column} COLLATE NOCASE >= ${path} AND ${column} COLLATE NOCASE < ${`${path}/`}
           AND (${column} = ${path} OR substr(${column}, length(${path}) + 1, 1) = '.'))`;
}

/**
 * SQL for an entity path's name key, the form under which near-identical names meet: ASCII case
 * folded, the separators `::`, `:`, `/`, `_` and `-` read as `.`, and one plural `s` dropped from
 * the end of every segment. `src/Auth.py::login` and `src/auth.py::login` share a key, as do
 * `users.email`, `user.email` and `users_email`; `users.email` and `users.email_verified` do not.
 * It is SQL, not TypeScript, so there is one definition: migrations/0039 indexes this exact
 * expression over `entity_path` (keep the two texts identical, or the index goes unused).
 */
export const nameKeySql = (column: string): string =>
  `rtrim(replace(replace(replace(replace(replace(replace(lower(${column}), '::', '.'), ':', '.'), '/', '.'), '_', '.'), '-', '.') || '.', 's.', '.'), '.')`;

/** The dotted ancestors of a path: `a.b.c` → `a`, `a.b`. */
export function dottedAncestors(path: string): string[] {
  const out: string[] = [];
  for (let i = path.indexOf("."); i > 0; i = path.indexOf(".", i + 1)) out.push(path.slice(0, i));
  return out;
}
