import { getTableColumns, sql, type SQL, type Table } from "drizzle-orm";
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = DrizzleD1Database<typeof schema>;

export const createDb = (d1: D1Database): Db => drizzle(d1, { schema });

// One drizzle instance per D1 binding: building one walks the whole schema, and the binding
// outlives the request, so requests of an isolate share it.
const instances = new WeakMap<D1Database, Db>();

/** The drizzle instance over a request's D1 binding. */
export function dbOf(ctx: { d1: D1Database }): Db {
  let db = instances.get(ctx.d1);
  if (!db) {
    db = createDb(ctx.d1);
    instances.set(ctx.d1, db);
  }
  return db;
}

/**
 * A drizzle query as a plain D1 statement, for a batch that also carries statements built
 * elsewhere without drizzle (the feed's row, an embedding job): one batch, one transaction, as before.
 */
export const statementOf = (d1: D1Database, query: { toSQL(): { sql: string; params: unknown[] } }): D1PreparedStatement => {
  const { sql, params } = query.toSQL();
  return d1.prepare(sql).bind(...params);
};

/** A drizzle row keyed by its SQL column names (what content hashes and SQL-facing code read). */
export function byColumnName<T extends Table>(table: T, row: Partial<T["$inferInsert"]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    if (key in row) out[column.name] = (row as Record<string, unknown>)[key];
  }
  return out;
}

/** The reverse of byColumnName: a row keyed by SQL column names as a drizzle insert takes it (unknown names are dropped). */
export function fromColumnNames<T extends Table>(table: T, row: Record<string, unknown>): T["$inferInsert"] {
  const out: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    if (column.name in row) out[key] = row[column.name];
  }
  return out as T["$inferInsert"];
}

/** A list bound as one JSON parameter, for `inArray`: any length fits D1's cap on bound parameters. */
export const jsonValues = (values: readonly unknown[]): SQL => sql`(SELECT value FROM json_each(${JSON.stringify(values)}))`;
