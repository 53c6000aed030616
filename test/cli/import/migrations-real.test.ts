import { mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readMigrationFolder, readMigrations, type MigrationEvent } from "../../../src/cli/import/migrations/index";

/**
 * A real migration folder: graphile-worker's sql/ (pinned devDependency), twenty numbered Postgres
 * files written for psql-style `:GRAPHILE_WORKER_SCHEMA` substitution, with plpgsql bodies,
 * triggers, views and table rebuilds between the DDL.
 */
const GRAPHILE = join(process.cwd(), "node_modules", "graphile-worker");

const byPath = (events: MigrationEvent[], file: string): string[] =>
  events.filter((e) => e.import_key.startsWith(`migration:sql:${file}:`)).map((e) => `${e.change_type} ${e.entity_path}${e.rename_from ? ` <- ${e.rename_from}` : ""}`);

describe("readMigrationFolder + readMigrations on graphile-worker 0.18.0", () => {
  let events: MigrationEvent[] = [];
  let reading: ReturnType<typeof readMigrations>;

  beforeAll(async () => {
    expect(JSON.parse(await readFile(join(GRAPHILE, "package.json"), "utf8")).version).toBe("0.18.0");
    const folder = await readMigrationFolder(join(GRAPHILE, "sql"));
    expect(folder.warnings).toEqual([]);
    expect(folder.files.map((f) => f.path)).toEqual(Array.from({ length: 20 }, (_, i) => `0000${String(i + 1).padStart(2, "0")}.sql`));
    expect(folder.files.every((f) => typeof f.mtime === "number")).toBe(true);
    reading = readMigrations(folder.files);
    events = reading.events;
  });

  it("reads it as a plain SQL folder without warnings, everything else counted as skipped", () => {
    expect(reading.format).toBe("sql");
    expect(reading.warnings).toEqual([]);
    expect(events).toHaveLength(71);
    expect(reading.skipped).toBe(115);
  });

  it("finds the two tables and the unnamed index the first migration creates", () => {
    expect(byPath(events, "000001.sql")).toEqual([
      "create job_queues",
      "add job_queues.queue_name",
      "add job_queues.job_count",
      "add job_queues.locked_at",
      "add job_queues.locked_by",
      "create jobs",
      "add jobs.id",
      "add jobs.queue_name",
      "add jobs.task_identifier",
      "add jobs.payload",
      "add jobs.priority",
      "add jobs.run_at",
      "add jobs.attempts",
      "add jobs.max_attempts",
      "add jobs.last_error",
      "add jobs.created_at",
      "add jobs.updated_at",
      "index_add jobs.jobs_priority_run_at_id_idx",
    ]);
  });

  it("finds the later column adds, the index swap (its drop matched to the unnamed index by Postgres's name for it) and the retypes", () => {
    expect(byPath(events, "000002.sql")).toEqual(["add jobs.key", "add jobs.locked_at", "add jobs.locked_by"]);
    expect(byPath(events, "000006.sql")).toEqual(["index_add jobs.jobs_priority_run_at_id_locked_at_without_failures_idx", "index_remove jobs.jobs_priority_run_at_id_idx"]);
    expect(byPath(events, "000011.sql").slice(0, 5)).toEqual([
      "retype jobs.attempts",
      "retype jobs.max_attempts",
      "retype jobs.priority",
      "rename jobs_legacy <- jobs",
      "rename job_queues_legacy <- job_queues",
    ]);
    expect(byPath(events, "000016.sql")).toEqual([
      "rename _private_jobs <- jobs",
      "rename _private_job_queues <- job_queues",
      "rename _private_tasks <- tasks",
      "rename _private_known_crontabs <- known_crontabs",
    ]);
  });

  it("quotes the real statement, keeps events in apply order and changesets per file", () => {
    const add = events.find((e) => e.entity_path === "jobs.revision")!;
    expect(add.reasoning).toBe("Migration 000005.sql, statement 0: alter table :GRAPHILE_WORKER_SCHEMA.jobs add column revision int default 0 not null;");
    expect(add.changeset_id).toBe("000005");
    const files = events.map((e) => e.import_key.split(":")[2]!);
    expect(files).toEqual([...files].sort());
    const times = events.map((e) => e.timestamp);
    expect(times).toEqual([...times].sort());
  });
});

describe("readMigrationFolder", () => {
  let dir: string;
  let outside: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mig-folder-"));
    outside = await mkdtemp(join(tmpdir(), "mig-outside-"));
    await writeFile(join(outside, "secret.sql"), "CREATE TABLE secret (id int);");
    await mkdir(join(dir, "prisma", "20240101000000_init"), { recursive: true });
    await mkdir(join(dir, "node_modules", "x"), { recursive: true });
    await mkdir(join(dir, ".git"), { recursive: true });
    await writeFile(join(dir, "prisma", "migration_lock.toml"), 'provider = "sqlite"');
    await writeFile(join(dir, "prisma", "20240101000000_init", "migration.sql"), "CREATE TABLE a (id int);");
    await writeFile(join(dir, "prisma", "notes.md"), "not read");
    await writeFile(join(dir, "node_modules", "x", "1.sql"), "not read");
    await writeFile(join(dir, ".git", "1.sql"), "not read");
    await writeFile(join(dir, "big.sql"), "x".repeat(3000));
    await utimes(join(dir, "big.sql"), new Date(Date.UTC(2024, 0, 2)), new Date(Date.UTC(2024, 0, 2)));
    await symlink(join(outside, "secret.sql"), join(dir, "link-out.sql"));
    await symlink(outside, join(dir, "dir-out"));
    await symlink(join(dir, "prisma"), join(dir, "loop"));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it("reads the migration files with their mtimes, follows no link out of the folder and enters no folder twice", async () => {
    const r = await readMigrationFolder(dir);
    expect(r.files.map((f) => f.path)).toEqual(["big.sql", "prisma/20240101000000_init/migration.sql", "prisma/migration_lock.toml"]);
    expect(r.files[0]!.mtime).toBe(Date.UTC(2024, 0, 2));
    expect(r.warnings).toEqual(["2 symlink(s) pointing out of the folder were not followed"]);
  });

  it("cuts a file at the per-file bound and stops at the total and file-count bounds, with warnings", async () => {
    const cut = await readMigrationFolder(dir, { fileBytes: 100 });
    expect(cut.files[0]!.text).toHaveLength(100);
    expect(cut.warnings).toContain("big.sql: only the first 100 bytes were read");
    const total = await readMigrationFolder(dir, { totalBytes: 1000 });
    expect(total.files).toEqual([]);
    expect(total.warnings).toContain("the folder's read budget (1000 bytes) ran out at big.sql; it and the files after it were not read");
    const count = await readMigrationFolder(dir, { files: 1 });
    expect(count.files).toHaveLength(1);
    expect(count.warnings).toContain("only the first 1 files were read");
  });

  it("rejects a folder that does not exist", async () => {
    await expect(readMigrationFolder(join(dir, "missing"))).rejects.toThrow(/ENOENT/);
  });
});
