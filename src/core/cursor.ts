/** Keyset cursors shared by every paged list. */
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { invalidInput } from "./errors";

/**
 * Keyset cursors: the sort values of the last row returned, opaque to callers. Stable under
 * concurrent inserts because the next page starts strictly after a row, not at an offset.
 */
export function encodeKeyset(values: ReadonlyArray<string | number | null>): string {
  return btoa(unescape(encodeURIComponent(JSON.stringify({ k: values })))).replace(/=+$/, "");
}

/**
 * One page of rows fetched with LIMIT limit + 1 (the extra row only says a next page exists),
 * and the cursor that resumes after the page's last row.
 */
export function keysetPage<R>(rows: R[], limit: number, keyOf: (last: R) => ReadonlyArray<string | number | null>): { page: R[]; cursor: { next_cursor?: string } } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { page, cursor: rows.length > limit && last !== undefined ? { next_cursor: encodeKeyset(keyOf(last)) } : {} };
}

export function decodeKeyset(cursor: string | undefined, arity: number): Array<string | number | null> | null {
  if (cursor === undefined || cursor === "") return null;
  try {
    const v = JSON.parse(decodeURIComponent(escape(atob(cursor)))) as { k?: unknown };
    if (Array.isArray(v.k) && v.k.length === arity && v.k.every((x) => x === null || typeof x === "string" || typeof x === "number")) {
      return v.k as Array<string | number | null>;
    }
  } catch {
    // fall through
  }
  throw invalidInput(`cursor '${cursor.slice(0, 40)}' is not a cursor this tool issued.`, "Pass next_cursor from the previous page of the same query unchanged, or omit cursor.");
}

/**
 * The condition that resumes a newest-first listing ordered by (time DESC, id DESC) after the
 * cursor's row, or undefined for the first page.
 */
export function afterTimeAndId(cursor: string | undefined, time: SQLWrapper, id: SQLWrapper): SQL | undefined {
  const after = decodeKeyset(cursor, 2);
  if (!after) return undefined;
  return sql`(${time} < ${after[0]} OR (${time} = ${after[0]} AND ${id} < ${after[1]}))`;
}
