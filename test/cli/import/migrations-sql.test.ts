import { describe, expect, it } from "vitest";
import { readMigrations, type MigrationEvent } from "../../../src/cli/import/migrations/index";

/** The events of one SQL file, as `change_type entity_path[ <- rename_from]` lines. */
function changes(sql: string, path = "0001_test.sql"): string[] {
  return lines(readMigrations([{ path, text: sql, mtime: Date.UTC(2024, 0, 1) }]).events);
}

const lines = (events: MigrationEvent[]): string[] => events.map((e) => `${e.change_type} ${e.entity_type} ${e.entity_path}${e.rename_from ? ` <- ${e.rename_from}` : ""}`);

describe("readMigrations: SQL statements", () => {
  it("reads a Postgres CREATE TABLE into the table and one add per column, constraints left out", () => {
    const sql = `
      CREATE TABLE IF NOT EXISTS public."users" (
        id bigserial PRIMARY KEY,
        "email" text NOT NULL,
        key text UNIQUE CHECK (length(key) > 0),
        created_at timestamptz DEFAULT now(),
        CONSTRAINT users_email_key UNIQUE (email),
        FOREIGN KEY (id) REFERENCES other(id),
        PRIMARY KEY (id)
      );`;
    expect(changes(sql)).toEqual(["create table users", "add column users.id", "add column users.email", "add column users.key", "add column users.created_at"]);
  });

  it("reads MySQL tables: backticks, inline KEY and UNIQUE KEY indexes, a column named key with a sized type", () => {
    const sql =
      "CREATE TABLE `orders` (\n  `id` int(11) NOT NULL AUTO_INCREMENT,\n  key varchar(255) DEFAULT 'it''s \\' here',\n  `user_id` int,\n  PRIMARY KEY (`id`),\n  KEY `orders_user_idx` (`user_id`),\n  UNIQUE KEY `orders_key_uq` (`key`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;";
    expect(changes(sql)).toEqual([
      "create table orders",
      "add column orders.id",
      "add column orders.key",
      "add column orders.user_id",
      "index_add index orders.orders_user_idx",
      "index_add index orders.orders_key_uq",
    ]);
  });

  it("reads SQLite's [bracket] and quoted names, and tells them from Postgres arrays", () => {
    const sql = `CREATE TABLE [Post] ([id] INTEGER PRIMARY KEY, tags text[] DEFAULT '{}'::text[], "Title" TEXT);`;
    expect(changes(sql)).toEqual(["create table Post", "add column Post.id", "add column Post.tags", "add column Post.Title"]);
  });

  it("reads every ALTER TABLE action, several per statement", () => {
    const sql = `
      ALTER TABLE users ADD COLUMN age int, ADD nickname text, DROP COLUMN IF EXISTS legacy;
      ALTER TABLE ONLY users ALTER COLUMN age TYPE bigint USING age::bigint;
      ALTER TABLE users ALTER COLUMN age SET DATA TYPE numeric;
      ALTER TABLE users ALTER COLUMN nickname SET NOT NULL;
      ALTER TABLE users RENAME COLUMN nickname TO handle;
      ALTER TABLE users ADD CONSTRAINT users_age_check CHECK (age > 0);
      ALTER TABLE users DROP CONSTRAINT users_age_check;
      ALTER TABLE users RENAME TO accounts;
      ALTER TABLE accounts ENABLE ROW LEVEL SECURITY;`;
    expect(changes(sql)).toEqual([
      "add column users.age",
      "add column users.nickname",
      "remove column users.legacy",
      "retype column users.age",
      "retype column users.age",
      "modify column users.nickname",
      "rename column users.handle <- users.nickname",
      "modify table users",
      "modify table users",
      "rename table accounts <- users",
    ]);
  });

  it("reads MySQL's MODIFY, CHANGE, ADD (a, b), ADD INDEX, DROP INDEX … ON and RENAME TABLE", () => {
    const sql = [
      "ALTER TABLE `t` MODIFY COLUMN `a` bigint NOT NULL;",
      "ALTER TABLE `t` CHANGE `b` `c` varchar(10);",
      "ALTER TABLE `t` CHANGE COLUMN `c` `c` varchar(20);",
      "ALTER TABLE `t` ADD (`d` int, `e` int);",
      "ALTER TABLE `t` ADD INDEX `t_d_idx` (`d`), ADD UNIQUE INDEX `t_e_uq` (`e`);",
      "DROP INDEX `t_d_idx` ON `t`;",
      "ALTER TABLE `t` DROP INDEX `t_e_uq`;",
      "RENAME TABLE `t` TO `u`, `v` TO `w`;",
    ].join("\n");
    expect(changes(sql)).toEqual([
      "modify column t.a",
      "rename column t.c <- t.b",
      "modify column t.c",
      "add column t.d",
      "add column t.e",
      "index_add index t.t_d_idx",
      "index_add index t.t_e_uq",
      "index_remove index t.t_d_idx",
      "index_remove index t.t_e_uq",
      "rename table u <- t",
      "rename table w <- v",
    ]);
  });

  it("keeps indexes under their table: named, unnamed (Postgres's own name), and a DROP INDEX in a later file", () => {
    const files = [
      { path: "0001_a.sql", text: "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS users_email_idx ON ONLY public.users USING btree (lower(email));\nCREATE INDEX ON jobs (priority, run_at, id);" },
      { path: "0002_b.sql", text: "DROP INDEX CONCURRENTLY IF EXISTS public.users_email_idx, jobs_priority_run_at_id_idx CASCADE;\nDROP INDEX never_seen;\nALTER INDEX a_idx RENAME TO b_idx;" },
    ];
    expect(lines(readMigrations(files).events)).toEqual([
      "index_add index users.users_email_idx",
      "index_add index jobs.jobs_priority_run_at_id_idx",
      "index_remove index users.users_email_idx",
      "index_remove index jobs.jobs_priority_run_at_id_idx",
      "index_remove index never_seen",
      "rename index b_idx <- a_idx",
    ]);
  });

  it("reads DROP TABLE lists, schemas, CREATE TABLE … AS, and leaves temporary tables, DML and functions out (counted)", () => {
    const text = `
      CREATE SCHEMA IF NOT EXISTS billing;
      CREATE TEMP TABLE scratch (a int);
      CREATE TABLE billing.snapshot AS SELECT * FROM invoices;
      INSERT INTO invoices (id) VALUES (1);
      CREATE FUNCTION f() RETURNS trigger AS $body$ BEGIN CREATE TABLE fake (x int); RETURN NEW; END; $body$ LANGUAGE plpgsql;
      CREATE VIEW v AS SELECT 1;
      DROP TABLE IF EXISTS a, "b" CASCADE;
      DROP SCHEMA legacy;`;
    const r = readMigrations([{ path: "0001.sql", text, mtime: 0 }]);
    expect(lines(r.events)).toEqual(["create schema billing", "create table snapshot", "delete table a", "delete table b", "delete schema legacy"]);
    expect(r.skipped).toBe(4);
  });

  it("does not split on semicolons inside strings, comments, dollar bodies and SQLite trigger bodies", () => {
    const text = `
      -- ALTER TABLE x ADD COLUMN in_line_comment int;
      /* ALTER TABLE x ADD COLUMN in_block_comment int; */
      INSERT INTO notes VALUES ('; ALTER TABLE x ADD COLUMN in_string int;');
      CREATE TRIGGER t AFTER INSERT ON x BEGIN UPDATE x SET a = CASE WHEN 1 THEN 2 END; DELETE FROM y; END;
      DO $$ BEGIN ALTER TABLE x ADD COLUMN in_dollar int; END $$;
      ALTER TABLE x ADD COLUMN real_one int;`;
    expect(changes(text)).toEqual(["add column x.real_one"]);
  });

  it("reads the psql variable schemas that migration tools substitute (:SCHEMA.table)", () => {
    expect(changes("create table :APP_SCHEMA.jobs (id int);\nalter table :APP_SCHEMA.jobs add column n int;")).toEqual(["create table jobs", "add column jobs.id", "add column jobs.n"]);
  });

  it("quotes the statement in the reasoning, bounded, and keys each event by file, statement and path", () => {
    const long = `CREATE TABLE wide (${Array.from({ length: 200 }, (_, i) => `column_number_${i} text`).join(", ")});`;
    const r = readMigrations([{ path: "db/0007_wide.sql", text: `SELECT 1;\n${long}`, mtime: Date.UTC(2024, 1, 2, 3, 4, 5) }]);
    const table = r.events[0]!;
    expect(table.reasoning.startsWith("Migration db/0007_wide.sql, statement 1: CREATE TABLE wide (column_number_0 text,")).toBe(true);
    expect(table.reasoning.length).toBeLessThanOrEqual(500);
    expect(table.reasoning.endsWith("…")).toBe(true);
    expect(r.events[5]!.reasoning).toBe("Migration db/0007_wide.sql, statement 1: CREATE TABLE wide ( … column_number_4 text");
    expect(table.import_key).toBe("migration:sql:db/0007_wide.sql:1:wide");
    expect(r.events[1]!.import_key).toBe("migration:sql:db/0007_wide.sql:1:wide.column_number_0");
    expect(table.timestamp).toBe("2024-02-02T03:04:05.000Z");
    expect(table.changeset_id).toBe("0007-wide");
  });

  it("keys two events of one statement on one path apart", () => {
    const r = readMigrations([{ path: "1.sql", text: "ALTER TABLE t ALTER COLUMN a TYPE int, ALTER COLUMN a SET NOT NULL, ALTER COLUMN a TYPE bigint;", mtime: 0 }]);
    expect(r.events.map((e) => e.import_key)).toEqual(["migration:sql:1.sql:0:t.a", "migration:sql:1.sql:0:t.a#2"]);
  });

  it("refuses names no real schema has: over-long or with control characters", () => {
    const r = readMigrations([{ path: "1.sql", text: `ALTER TABLE t ADD COLUMN "${"x".repeat(200)}" int; ALTER TABLE t ADD COLUMN "a\nb" int; ALTER TABLE t ADD COLUMN ok int;`, mtime: 0 }]);
    expect(lines(r.events)).toEqual(["add column t.ok"]);
    expect(r.skipped).toBe(2);
  });
});

describe("readMigrations: hostile SQL", () => {
  const time = (f: () => void): number => {
    const t0 = performance.now();
    f();
    return performance.now() - t0;
  };

  it("stops at an unterminated string, comment or dollar body with a warning, keeping what came before", () => {
    for (const [tail, what] of [
      ["INSERT INTO x VALUES ('never closed", "unterminated string"],
      ["/* never closed ALTER TABLE t ADD COLUMN no int;", "unterminated comment"],
      ["DO $fn$ never closed; ALTER TABLE t ADD COLUMN no int;", "unterminated dollar-quoted body"],
      ['ALTER TABLE "never closed ADD COLUMN no int;', "unterminated quoted identifier"],
    ] as const) {
      const r = readMigrations([{ path: "1.sql", text: `ALTER TABLE t ADD COLUMN yes int;\n${tail}`, mtime: 0 }]);
      expect(lines(r.events)).toEqual(["add column t.yes"]);
      expect(r.warnings.join("\n")).toContain(`1.sql: ${what}`);
    }
  });

  it("reads only the first part of a 5 MB file, fast, with a warning, and drops the statement the cut broke", () => {
    const stmt = "INSERT INTO t VALUES ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');\n";
    const text = `CREATE TABLE t (a text);\n${stmt.repeat(Math.ceil((5 * 1024 * 1024) / stmt.length))}ALTER TABLE t ADD COLUMN after_cut int;`;
    let r = readMigrations([]);
    const ms = time(() => (r = readMigrations([{ path: "big.sql", text, mtime: 0 }], { limits: { statementsPerFile: 1_000_000 } })));
    expect(lines(r.events)).toEqual(["create table t", "add column t.a"]);
    expect(r.warnings).toContain(`big.sql: only the first ${2 * 1024 * 1024} characters were read`);
    expect(ms).toBeLessThan(3_000);
  });

  it("reads at most the statement budget of a file of 20,000 statements, with a warning", () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `ALTER TABLE t ADD COLUMN c${i} int;`).join("\n");
    let r = readMigrations([]);
    const ms = time(() => (r = readMigrations([{ path: "many.sql", text, mtime: 0 }])));
    expect(r.events).toHaveLength(5_000);
    expect(r.events.at(-1)!.entity_path).toBe("t.c4999");
    expect(r.warnings).toContain("many.sql: only the first 5000 statements were read");
    expect(ms).toBeLessThan(3_000);
  });

  it("skips a statement nested deeper than the parenthesis bound, with a warning, and reads on", () => {
    const deep = `CREATE TABLE d (x int DEFAULT ${"(".repeat(100_000)}1${")".repeat(100_000)});`;
    let r = readMigrations([]);
    const ms = time(() => (r = readMigrations([{ path: "deep.sql", text: `${deep}\nALTER TABLE d ADD COLUMN y int;`, mtime: 0 }])));
    expect(lines(r.events)).toEqual(["add column d.y"]);
    expect(r.warnings).toContain("deep.sql: statement 0 skipped: parentheses nested deeper than 200");
    expect(ms).toBeLessThan(3_000);
  });

  it("stays linear on input built to make a scanner look back: unclosed brackets, lone dollars, backslashes", () => {
    const text = `${"[".repeat(300_000)}${"$a".repeat(100_000)}${"'x'".repeat(100_000)} \\ CREATE TABLE z (a int);`;
    let r = readMigrations([]);
    // ENGINE=InnoDB turns on MySQL's backslash escapes, the path that looks for backslashes.
    const ms = time(() => (r = readMigrations([{ path: "evil.sql", text: `-- ENGINE=InnoDB\n${text}`, mtime: 0 }])));
    expect(ms).toBeLessThan(3_000);
    expect(r.events).toEqual([]);
    expect(r.skipped).toBe(1);
  });

  it("stops at the folder's event budget with a warning", () => {
    const text = Array.from({ length: 50 }, (_, i) => `CREATE TABLE t${i} (a int, b int);`).join("\n");
    const r = readMigrations([{ path: "1.sql", text, mtime: 0 }], { limits: { events: 10 } });
    expect(r.events).toHaveLength(10);
    expect(r.warnings).toContain("only the first 10 events were kept");
  });
});
