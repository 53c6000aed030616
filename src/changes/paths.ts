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

/** Escapes LIKE's metacharacters so `_`, `%` and `\` match literally (with `ESCAPE '\'`). */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * SQL for "exact path, or a dotted prefix of it" on events aliased `e`: `users` covers
 * `users.email` but not `usersX` or `users_x`. The prefix half is case-insensitive (LIKE);
 * the range on the NOCASE index keeps it an index seek rather than a scan.
 */
export function pathMatchSql(path: string): { sql: string; params: string[] } {
  return {
    sql: `(e.entity_path COLLATE NOCASE >= ? AND e.entity_path COLLATE NOCASE < ?
           AND (e.entity_path = ? OR e.entity_path LIKE ? ESCAPE '\\'))`,
    params: [path, `${path}/`, path, `${escapeLike(path)}.%`],
  };
}

/** Whether `a` and `b` are the same entity or one is a dotted prefix of the other. */
export function pathsRelated(a: string, b: string): boolean {
  if (a === b) return true;
  const la = a.toLowerCase();
  const lb = b.toLowerCase();
  return lb.startsWith(`${la}.`) || la.startsWith(`${lb}.`);
}

/** The dotted ancestors of a path: `a.b.c` → `a`, `a.b`. */
export function dottedAncestors(path: string): string[] {
  const out: string[] = [];
  for (let i = path.indexOf("."); i > 0; i = path.indexOf(".", i + 1)) out.push(path.slice(0, i));
  return out;
}
