import { describe, expect, it } from "vitest";
import { detectFormat, MIGRATION_FORMATS, readMigrations, type MigrationEvent, type MigrationFile } from "../../../src/cli/import/migrations/index";

const lines = (events: MigrationEvent[]): string[] => events.map((e) => `${e.change_type} ${e.entity_type} ${e.entity_path}${e.rename_from ? ` <- ${e.rename_from}` : ""}`);
const MTIME = Date.UTC(2025, 5, 1, 12, 0, 0);

describe("detectFormat", () => {
  const f = (path: string, text = ""): MigrationFile => ({ path, text });
  it("tells each format by its files, the more specific first", () => {
    expect(detectFormat([f("0000_init.sql"), f("meta/_journal.json"), f("meta/0000_snapshot.json")])).toBe("drizzle");
    expect(detectFormat([f("migration_lock.toml"), f("20240101120000_init/migration.sql")])).toBe("prisma");
    expect(detectFormat([f("20240101120000_init/migration.sql")])).toBe("prisma");
    expect(detectFormat([f("env.py", "config = 1"), f("versions/abc_init.py", 'revision = "abc"\ndown_revision = None\ndef upgrade():\n    pass\n')])).toBe("alembic");
    expect(detectFormat([f("0001_init.sql"), f("README.md")])).toBe("sql");
    expect(detectFormat([f("README.md"), f("versions/__init__.py")])).toBeNull();
  });

  it("gives way to an explicit format", () => {
    const r = readMigrations([{ path: "20240101120000_init/migration.sql", text: "CREATE TABLE a (id int);" }], { format: "sql", now: new Date(MTIME) });
    expect(r.format).toBe("sql");
    expect(r.events[0]!.import_key).toBe("migration:sql:20240101120000_init/migration.sql:0:a");
  });

  it("takes each format by name, reading only that format's files", () => {
    const files: MigrationFile[] = [
      { path: "0001_plain.sql", text: "CREATE TABLE plain (id int);", mtime: MTIME },
      { path: "20240101000000_p/migration.sql", text: "CREATE TABLE stamped (id int);", mtime: MTIME },
      { path: "versions/a.py", text: 'revision = "a"\ndown_revision = None\ndef upgrade():\n    op.create_table("py")\n', mtime: MTIME },
    ];
    const tables = Object.fromEntries(
      MIGRATION_FORMATS.map((format) => [
        format,
        readMigrations(files, { format })
          .events.filter((e) => e.entity_type === "table")
          .map((e) => e.entity_path),
      ]),
    );
    expect(tables).toEqual({ sql: ["plain", "stamped"], prisma: ["stamped"], drizzle: ["stamped"], alembic: ["py"] });
  });

  it("says so when there is nothing to read", () => {
    const r = readMigrations([{ path: "notes.txt", text: "CREATE TABLE a (id int);" }]);
    expect(r.events).toEqual([]);
    expect(r.warnings).toContain("no migration files found (.sql files, a drizzle journal, Prisma folders or Alembic revisions)");
  });
});

describe("readMigrations: plain SQL folders", () => {
  it("applies files in number order (10 after 9), skips down files and dbmate's down half, and dates each by its mtime", () => {
    const files: MigrationFile[] = [
      { path: "migrations/10_late.sql", text: "ALTER TABLE a ADD COLUMN ten int;", mtime: MTIME + 10_000 },
      { path: "migrations/9_early.up.sql", text: "ALTER TABLE a ADD COLUMN nine int;", mtime: MTIME + 9_000 },
      { path: "migrations/9_early.down.sql", text: "ALTER TABLE a DROP COLUMN nine;", mtime: MTIME },
      { path: "migrations/1_init.sql", text: "-- migrate:up\nCREATE TABLE a (id int);\n\n-- migrate:down\nDROP TABLE a;\n", mtime: MTIME + 1_000 },
    ];
    const r = readMigrations(files);
    expect(lines(r.events)).toEqual(["create table a", "add column a.id", "add column a.nine", "add column a.ten"]);
    expect(r.events.map((e) => e.timestamp)).toEqual(["2025-06-01T12:00:01.000Z", "2025-06-01T12:00:01.000Z", "2025-06-01T12:00:09.000Z", "2025-06-01T12:00:10.000Z"]);
    expect(r.events.map((e) => e.changeset_id)).toEqual(["1-init", "1-init", "9-early", "10-late"]);
    expect(r.warnings).toContain("1 down migration file(s) not read");
  });

  it("takes a YYYYMMDDHHMMSS name's time over the mtime, and never dates a migration before the one applied ahead of it", () => {
    const files: MigrationFile[] = [
      { path: "20230102030405_first.sql", text: "CREATE TABLE a (id int);", mtime: MTIME },
      { path: "20230102030406_second.sql", text: "DROP TABLE a;", mtime: MTIME },
      { path: "zz_third.sql", text: "CREATE TABLE b (id int);", mtime: Date.UTC(2020, 0, 1) },
    ];
    const r = readMigrations(files);
    expect(r.events.map((e) => `${e.entity_path} ${e.timestamp}`)).toEqual([
      "a 2023-01-02T03:04:05.000Z",
      "a.id 2023-01-02T03:04:05.000Z",
      "a 2023-01-02T03:04:06.000Z",
      "b 2023-01-02T03:04:06.000Z",
      "b.id 2023-01-02T03:04:06.000Z",
    ]);
  });

  it("dates a file with no time at all by `now`, with a warning; sets project and the changeset prefix", () => {
    const r = readMigrations([{ path: "./db\\0001_Add Users!.sql", text: "CREATE TABLE users (id int);" }], { now: new Date(MTIME), project: "shop", changesetPrefix: "schema-" });
    expect(r.events[0]).toEqual({
      entity_path: "users",
      entity_type: "table",
      change_type: "create",
      reasoning: "Migration db/0001_Add Users!.sql, statement 0: CREATE TABLE users (id int);",
      timestamp: "2025-06-01T12:00:00.000Z",
      import_key: "migration:sql:db/0001_Add Users!.sql:0:users",
      changeset_id: "schema-0001-add-users",
      project: "shop",
    });
    expect(r.warnings).toContain("1 migration(s) had no time of their own and no mtime; dated now");
  });

  it("gives the same events, keys included, when run twice on the same folder", () => {
    const files: MigrationFile[] = [{ path: "1.sql", text: "CREATE TABLE a (id int); CREATE INDEX ON a (id); ALTER TABLE a RENAME COLUMN id TO key;", mtime: MTIME }];
    expect(readMigrations(files)).toEqual(readMigrations(files));
  });

  it("stops at the folder's read budget with a warning naming where", () => {
    const files: MigrationFile[] = ["1", "2", "3"].map((n) => ({ path: `${n}.sql`, text: `CREATE TABLE t${n} (id int);`, mtime: MTIME }));
    const r = readMigrations(files, { limits: { folderBytes: 40 } });
    expect(r.events.map((e) => e.entity_path)).toEqual(["t1", "t1.id"]);
    expect(r.warnings).toContain("the folder's read budget (40 characters) ran out: 2 migration(s) from 2.sql on were not read");
  });
});

describe("readMigrations: Prisma", () => {
  it("orders by folder name, dates by its stamp, and reads Prisma's SQL (enums and foreign keys included)", () => {
    const files: MigrationFile[] = [
      { path: "migrations/migration_lock.toml", text: 'provider = "postgresql"\n', mtime: MTIME },
      {
        path: "migrations/20240315093000_add_posts/migration.sql",
        mtime: MTIME,
        text: `-- CreateTable
CREATE TABLE "Post" (
    "id" SERIAL NOT NULL,
    "title" TEXT NOT NULL,
    "authorId" INTEGER NOT NULL,

    CONSTRAINT "Post_pkey" PRIMARY KEY ("id")
);

-- AddForeignKey
ALTER TABLE "Post" ADD CONSTRAINT "Post_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
`,
      },
      {
        path: "migrations/20240101000000_init/migration.sql",
        mtime: MTIME,
        text: `-- CreateEnum
CREATE TYPE "Role" AS ENUM ('USER', 'ADMIN');

-- CreateTable
CREATE TABLE "User" (
    "id" SERIAL NOT NULL,
    "email" TEXT NOT NULL,
    "role" "Role" NOT NULL DEFAULT 'USER',

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");
`,
      },
      {
        path: "migrations/20240402101500_rename_title/migration.sql",
        mtime: MTIME,
        text: `/*
  Warnings:
  - You are about to drop the column \`title\` on the \`Post\` table. All the data in the column will be lost.
*/
-- AlterTable
ALTER TABLE "Post" DROP COLUMN "title",
ADD COLUMN     "headline" TEXT NOT NULL;
`,
      },
    ];
    const r = readMigrations(files);
    expect(r.format).toBe("prisma");
    expect(lines(r.events)).toEqual([
      "create table User",
      "add column User.id",
      "add column User.email",
      "add column User.role",
      "index_add index User.User_email_key",
      "create table Post",
      "add column Post.id",
      "add column Post.title",
      "add column Post.authorId",
      "modify table Post",
      "remove column Post.title",
      "add column Post.headline",
    ]);
    expect(r.skipped).toBe(1);
    expect(r.events[0]!.timestamp).toBe("2024-01-01T00:00:00.000Z");
    expect(r.events.at(-1)!.timestamp).toBe("2024-04-02T10:15:00.000Z");
    expect(r.events.at(-1)!.changeset_id).toBe("20240402101500-rename-title");
    expect(r.events.at(-1)!.import_key).toBe("migration:prisma:migrations/20240402101500_rename_title/migration.sql:0:Post.headline");
  });
});

describe("readMigrations: drizzle", () => {
  const journal = (entries: unknown[]): string => JSON.stringify({ version: "7", dialect: "sqlite", entries });

  it("follows the journal's order and `when`, reads breakpoint-separated SQLite statements, and leaves unlisted files out", () => {
    const files: MigrationFile[] = [
      {
        path: "drizzle/meta/_journal.json",
        text: journal([
          { idx: 1, version: "6", when: 1718000000000, tag: "0001_brave_thor", breakpoints: true },
          { idx: 0, version: "6", when: 1717000000000, tag: "0000_calm_loki", breakpoints: true },
          { idx: 2, version: "6", when: 1719000000000, tag: "0002_gone", breakpoints: true },
        ]),
      },
      {
        path: "drizzle/0000_calm_loki.sql",
        text: "CREATE TABLE `accounts` (\n\t`id` text PRIMARY KEY NOT NULL,\n\t`name` text NOT NULL\n);\n--> statement-breakpoint\nCREATE UNIQUE INDEX `accounts_name_unique` ON `accounts` (`name`);",
      },
      { path: "drizzle/0001_brave_thor.sql", text: "ALTER TABLE `accounts` ADD `plan` text DEFAULT 'free';\n--> statement-breakpoint\nDROP INDEX `accounts_name_unique`;" },
      { path: "drizzle/9999_stray.sql", text: "DROP TABLE accounts;" },
    ];
    const r = readMigrations(files);
    expect(r.format).toBe("drizzle");
    expect(lines(r.events)).toEqual([
      "create table accounts",
      "add column accounts.id",
      "add column accounts.name",
      "index_add index accounts.accounts_name_unique",
      "add column accounts.plan",
      "index_remove index accounts.accounts_name_unique",
    ]);
    expect(r.events[0]!.timestamp).toBe(new Date(1717000000000).toISOString());
    expect(r.events.at(-1)!.timestamp).toBe(new Date(1718000000000).toISOString());
    expect(r.events.at(-1)!.changeset_id).toBe("0001-brave-thor");
    expect(r.warnings).toEqual(expect.arrayContaining(["drizzle/0002_gone.sql: in the journal but not in the folder", "1 .sql file(s) not in the drizzle journal were not read"]));
  });

  it("refuses a broken journal or entries whose tag leaves the folder, with warnings", () => {
    expect(readMigrations([{ path: "meta/_journal.json", text: "{not json" }]).warnings).toContain("meta/_journal.json: not valid JSON; not read");
    const r = readMigrations([
      {
        path: "meta/_journal.json",
        text: journal([
          { idx: 0, when: 1, tag: "../../etc/passwd" },
          { idx: 1, when: "x", tag: "a" },
          { idx: 2, when: 2, tag: "ok" },
        ]),
      },
      { path: "ok.sql", text: "CREATE TABLE ok (id int);" },
    ]);
    expect(lines(r.events)).toEqual(["create table ok", "add column ok.id"]);
    expect(r.warnings).toContain("meta/_journal.json: 2 malformed entries skipped");
  });
});

const ALEMBIC_HEAD = (rev: string, down: string, date: string, extra = ""): string => `"""${extra}

Revision ID: ${rev}
Revises: ${down}
Create Date: ${date}

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa
`;

describe("readMigrations: Alembic", () => {
  const files: MigrationFile[] = [
    {
      path: "versions/c3d4_rename_and_batch.py",
      mtime: MTIME,
      text: `${ALEMBIC_HEAD("c3d4", "b2c3", "2024-03-03 09:00:00.000000", "rename and batch")}
revision: str = "c3d4"
down_revision: Union[str, None] = "b2c3"
branch_labels = None


def upgrade() -> None:
    op.rename_table("account", "accounts")
    op.alter_column("accounts", "name", new_column_name="display_name", existing_type=sa.String(100))
    with op.batch_alter_table("accounts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("plan", sa.String(20), nullable=True))
        batch_op.alter_column("plan", type_=sa.Text())
        batch_op.drop_column("legacy")
        batch_op.create_index(batch_op.f("ix_accounts_plan"), ["plan"], unique=False)
    op.execute("ALTER TABLE accounts ADD COLUMN note text; UPDATE accounts SET note = ''")
    op.bulk_insert(accounts_table, [{"id": 1}])


def downgrade() -> None:
    op.drop_table("accounts")
`,
    },
    {
      path: "versions/a1b2_create_account.py",
      mtime: MTIME,
      text: `${ALEMBIC_HEAD("a1b2", "", "2024-01-01 10:00:00.123456", "create account table")}
# revision identifiers, used by Alembic.
revision = 'a1b2'
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'account',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('name', sa.String(50), nullable=False),
        sa.Column("description", sa.Unicode(200)),
        sa.Column(name="legacy", type_=sa.Text()),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index(op.f('ix_account_name'), 'account', ['name'], unique=True)


def downgrade():
    op.drop_index(op.f('ix_account_name'), table_name='account')
    op.drop_table('account')
`,
    },
    {
      path: "versions/b2c3_add_email.py",
      mtime: MTIME,
      text: `${ALEMBIC_HEAD("b2c3", "a1b2", "2024-02-02 08:30:00", "add email")}
revision = "b2c3"
down_revision = "a1b2"


def upgrade():
    # op.add_column("account", sa.Column("commented_out", sa.Text()))
    op.add_column("account", sa.Column("email", sa.String(255), nullable=True))
    op.drop_index("ix_account_name")
    op.create_foreign_key("fk_account_owner", "account", "owner", ["owner_id"], ["id"])
    op.drop_constraint("uq_old", "account", type_="unique")


def downgrade():
    op.drop_column("account", "email")
`,
    },
  ];

  it("orders revisions by the down_revision chain and dates them by Create Date", () => {
    const r = readMigrations(files);
    expect(r.format).toBe("alembic");
    expect(lines(r.events)).toEqual([
      "create table account",
      "add column account.id",
      "add column account.name",
      "add column account.description",
      "add column account.legacy",
      "index_add index account.ix_account_name",
      "add column account.email",
      "index_remove index account.ix_account_name",
      "modify table account",
      "modify table account",
      "rename table accounts <- account",
      "rename column accounts.display_name <- accounts.name",
      "add column accounts.plan",
      "retype column accounts.plan",
      "remove column accounts.legacy",
      "index_add index accounts.ix_accounts_plan",
      "add column accounts.note",
    ]);
    expect(r.events[0]!.timestamp).toBe("2024-01-01T10:00:00.123Z");
    expect(r.events.at(-1)!.timestamp).toBe("2024-03-03T09:00:00.000Z");
    expect(r.events[0]!.changeset_id).toBe("a1b2-create-account");
    expect(r.events.at(-1)!.import_key).toBe("migration:alembic:versions/c3d4_rename_and_batch.py:6.0:accounts.note");
    expect(r.events.at(-1)!.reasoning).toBe("Migration versions/c3d4_rename_and_batch.py, statement 6.0: ALTER TABLE accounts ADD COLUMN note text;");
    expect(r.events[6]!.reasoning).toBe('Migration versions/b2c3_add_email.py, statement 0: op.add_column("account", sa.Column("email", sa.String(255), nullable=True))');
    // create_foreign_key and drop_constraint each count as a change of their table; the UPDATE and bulk_insert change no schema.
    expect(r.skipped).toBe(2);
  });

  it("reads what downgrade() does not: nothing of it becomes an event", () => {
    const r = readMigrations(files);
    expect(r.events.filter((e) => e.change_type === "delete")).toEqual([]);
  });

  it("puts a merge revision after both its parents and reports a parent the folder lacks", () => {
    const rev = (id: string, down: string, date: string, table: string): MigrationFile => ({
      path: `versions/${id}.py`,
      text: `${ALEMBIC_HEAD(id, down, date)}\nrevision = "${id}"\ndown_revision = ${down}\n\ndef upgrade():\n    op.create_table("${table}")\n`,
    });
    const r = readMigrations([
      rev("m", '("x", "y")', "2024-01-01 00:00:00", "merged"),
      rev("y", '"root"', "2024-01-03 00:00:00", "from_y"),
      rev("x", '"root"', "2024-01-02 00:00:00", "from_x"),
      rev("root", '"missing"', "2024-01-01 00:00:00", "first"),
    ]);
    expect(r.events.map((e) => e.entity_path)).toEqual(["first", "from_x", "from_y", "merged"]);
    // The merge's Create Date is earlier than its parents': it takes the later one.
    expect(r.events[3]!.timestamp).toBe("2024-01-03T00:00:00.000Z");
    expect(r.warnings).toContain("versions/root.py: down_revision missing is not in the folder; read as a first revision");
  });

  it("reads a cycle last with a warning, and an unterminated string up to where it starts", () => {
    const r = readMigrations([
      { path: "versions/p.py", text: 'revision = "p"\ndown_revision = "q"\ndef upgrade():\n    op.create_table("p")\n' },
      { path: "versions/q.py", text: 'revision = "q"\ndown_revision = "p"\ndef upgrade():\n    op.create_table("q")\n    op.add_column("q", sa.Column("broken\n' },
    ]);
    expect(r.events.map((e) => e.entity_path)).toEqual(["p", "q"]);
    expect(r.warnings).toEqual(expect.arrayContaining(["revisions in a down_revision cycle, read last: p, q", "versions/q.py: unterminated string; the text after it was not read"]));
  });
});
