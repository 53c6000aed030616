/**
 * The drizzle schema (src/db/schema.ts) against the migrated database: the migrations are the
 * truth, so a column renamed, retyped or dropped on either side fails here rather than at run time.
 */
import { env } from "cloudflare:workers";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";

/**
 * Tables the migrations create that schema.ts leaves out on purpose, each with why. FTS5 virtual
 * tables and their shadow tables are left out by rule (drizzle cannot describe them).
 */
const HAND_SQL_TABLES: Record<string, string> = {};

interface PragmaColumn {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

interface ColumnShape {
  name: string;
  affinity: string;
  notNull: boolean;
  /** Position in the primary key, 1-based; 0 when not part of it. */
  pk: number;
}

/** SQLite's type-affinity rules (https://www.sqlite.org/datatype3.html §3.1), in their order. */
function affinity(declared: string): string {
  const t = declared.toUpperCase();
  if (t.includes("INT")) return "INTEGER";
  if (t.includes("CHAR") || t.includes("CLOB") || t.includes("TEXT")) return "TEXT";
  if (t === "" || t.includes("BLOB")) return "BLOB";
  if (t.includes("REAL") || t.includes("FLOA") || t.includes("DOUB")) return "REAL";
  return "NUMERIC";
}

// A primary-key column cannot hold NULL in any table the project writes, and drizzle marks every
// primaryKey() column NOT NULL whether or not the SQL spells it out; so NOT NULL is compared as
// "NOT NULL or in the primary key" on both sides.
const shape = (name: string, declared: string, notNull: boolean, pk: number): ColumnShape => ({
  name,
  affinity: affinity(declared),
  notNull: notNull || pk > 0,
  pk,
});

function drizzleShapes(table: SQLiteTable): ColumnShape[] {
  const config = getTableConfig(table);
  const composite = config.primaryKeys[0]?.columns.map((c) => c.name) ?? [];
  return config.columns.map((c) => shape(c.name, c.getSQLType(), c.notNull, c.primary ? 1 : composite.indexOf(c.name) + 1)).sort((a, b) => a.name.localeCompare(b.name));
}

async function databaseShapes(table: string): Promise<ColumnShape[]> {
  const { results } = await env.DB.prepare(`SELECT name, type, "notnull", pk FROM pragma_table_info(?)`).bind(table).all<PragmaColumn>();
  return results.map((c) => shape(c.name, c.type, c.notnull === 1, c.pk)).sort((a, b) => a.name.localeCompare(b.name));
}

const drizzleTables: SQLiteTable[] = Object.values(schema as Record<string, unknown>).filter((v): v is SQLiteTable => v instanceof SQLiteTable);

async function migratedTables(): Promise<string[]> {
  const { results } = await env.DB.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name`).all<{ name: string; sql: string | null }>();
  const virtual = results.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql ?? "")).map((t) => t.name);
  const shadow = (name: string) => virtual.some((v) => name.startsWith(`${v}_`) && /^(data|idx|content|docsize|config)$/.test(name.slice(v.length + 1)));
  return results.map((t) => t.name).filter((n) => !virtual.includes(n) && !shadow(n) && !/^(sqlite_|d1_|_cf_)/.test(n));
}

describe("drizzle schema against the migrations", () => {
  it("declares each table once", () => {
    const names = drizzleTables.map((t) => getTableConfig(t).name);
    expect(names.length).toBeGreaterThan(50);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it("every table in schema.ts has the migrated table's columns: names, affinity, NOT NULL, primary key", async () => {
    const drift: Record<string, { schema: ColumnShape[]; migrations: ColumnShape[] }> = {};
    for (const table of drizzleTables) {
      const name = getTableConfig(table).name;
      const declared = drizzleShapes(table);
      const migrated = await databaseShapes(name);
      if (JSON.stringify(declared) !== JSON.stringify(migrated)) {
        // Only the columns that differ, so the failure names the drift and nothing else.
        const key = (c: ColumnShape) => JSON.stringify(c);
        const onlyIn = (a: ColumnShape[], b: ColumnShape[]) => a.filter((c) => !b.some((d) => key(d) === key(c)));
        drift[name] = { schema: onlyIn(declared, migrated), migrations: onlyIn(migrated, declared) };
      }
    }
    expect(drift).toEqual({});
  });

  it("every table the migrations create is in schema.ts or on the hand-SQL list", async () => {
    const declared = new Set(drizzleTables.map((t) => getTableConfig(t).name));
    const missing = (await migratedTables()).filter((n) => !declared.has(n) && !(n in HAND_SQL_TABLES));
    expect(missing).toEqual([]);
  });

  it("the hand-SQL list names only tables the migrations create and schema.ts does not", async () => {
    const migrated = new Set(await migratedTables());
    const declared = new Set(drizzleTables.map((t) => getTableConfig(t).name));
    const stale = Object.keys(HAND_SQL_TABLES).filter((n) => !migrated.has(n) || declared.has(n));
    expect(stale).toEqual([]);
  });
});
