import { getTableColumns, sql, type SQL, type Table } from "drizzle-orm";

/**
 * A compare-and-swap's guard: each column named (by its SQL name, as the rows read name it) still holds the
 * value read. `IS`, not `=`, so a column read as null matches only while it is still null.
 */
export function stillHolding<T extends Table>(table: T, read: Record<string, unknown>, names: readonly string[]): SQL[] {
  const columns = new Map(Object.values(getTableColumns(table)).map((c) => [c.name, c]));
  return names.map((name) => {
    const column = columns.get(name);
    if (!column) throw new Error(`${name} is not a column of the table`);
    return sql`${column} IS ${read[name] ?? null}`;
  });
}
