import { fillPlaceholders, getTableColumns, type Placeholder, sql, type SQL, type Table } from "drizzle-orm";
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { bindingOf } from "./coalesce";
import * as schema from "./schema";

export type Db = DrizzleD1Database<typeof schema>;

export const createDb = (d1: D1Database): Db => drizzle(d1, { schema });

// One drizzle instance per D1 binding: building one walks the whole schema, and the binding
// outlives the request, so requests of an isolate share it.
const instances = new WeakMap<D1Database, Db>();

/** The drizzle instance over a request's D1 binding. */
export function dbOf(ctx: { d1: D1Database }): Db {
  // A request's coalescing binding (./coalesce.ts) lives only as long as the request: drizzle runs
  // on the binding under it, and its queries go straight to D1.
  const binding = bindingOf(ctx.d1);
  let db = instances.get(binding);
  if (!db) {
    db = createDb(binding);
    instances.set(binding, db);
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

/**
 * A drizzle query built once and bound per call: `build` gets a placeholder for each value that
 * changes between calls, its SQL text is kept, and each call binds that call's values. For the
 * statements every claim and write runs: building a select with drizzle costs a few hundred
 * microseconds of CPU, more than a local D1 read of one row. Rows come back as D1 gives them, keyed
 * by the names the SQL gives its columns, so the query's fields are keyed by SQL column name.
 */
export function compiled<K extends string>(
  names: readonly K[],
  build: (db: Db, values: { [N in K]: Placeholder<N> }) => { toSQL(): { sql: string; params: unknown[] } },
): (d1: D1Database, values: Record<K, unknown>) => D1PreparedStatement {
  let query: { sql: string; params: unknown[] } | undefined;
  return (d1, values) => {
    // The text does not depend on the binding, only building it needs an instance.
    query ??= build(dbOf({ d1 }), Object.fromEntries(names.map((n) => [n, sql.placeholder(n)])) as { [N in K]: Placeholder<N> }).toSQL();
    return d1.prepare(query.sql).bind(...fillPlaceholders(query.params, values));
  };
}

/**
 * compiled, for a query whose shape varies with the call (which filters it gives, which columns a
 * row has): one compiled statement per shape, named by the caller. Shapes come from callers'
 * arguments, so at most `max` are kept, the oldest dropped first.
 */
export class CompiledShapes {
  private readonly byShape = new Map<string, (d1: D1Database, values: Record<string, unknown>) => D1PreparedStatement>();

  constructor(private readonly max = 256) {}

  /** The statement of `shape`, built by `build` the first time (over placeholders named as `values`' keys), bound to `values`. */
  statement(d1: D1Database, shape: string, values: Record<string, unknown>, build: (db: Db, p: Record<string, Placeholder>) => { toSQL(): { sql: string; params: unknown[] } }): D1PreparedStatement {
    let statement = this.byShape.get(shape);
    if (!statement) {
      statement = compiled(Object.keys(values), build);
      if (this.byShape.size >= this.max) this.byShape.delete(this.byShape.keys().next().value!);
      this.byShape.set(shape, statement);
    }
    return statement(d1, values);
  }
}

/**
 * `insert(table).values(row)` compiled once per set of columns a row gives: for the rows every
 * write inserts. A row carrying an object (a SQL expression, bytes) is built per call.
 */
export function compiledInsert<T extends SQLiteTable>(table: T): (d1: D1Database, row: T["$inferInsert"]) => D1PreparedStatement {
  const shapes = new CompiledShapes();
  return (d1, row) => {
    const given = Object.entries(row as Record<string, unknown>).filter(([, v]) => v !== undefined);
    if (given.some(([, v]) => v !== null && typeof v === "object")) return statementOf(d1, dbOf({ d1 }).insert(table).values(row));
    given.sort(([a], [b]) => (a < b ? -1 : 1));
    return shapes.statement(d1, given.map(([k]) => k).join(","), Object.fromEntries(given), (db, p) => db.insert(table).values(p as T["$inferInsert"]));
  };
}

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
