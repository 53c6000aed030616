/**
 * `agent-ledger import migrations <folder>`'s pure part: a migration folder's files in, change
 * events for the change ledger out. No network, no clock unless no time is known (see below).
 *
 * - format: the option, else detected from the files (detect.ts).
 * - order: the format's own (file names, Prisma folders, the drizzle journal, Alembic's revision
 *   chain); events come oldest first.
 * - timestamp: the migration's own time when its format records one (Prisma folder name, drizzle
 *   journal `when`, Alembic `Create Date:`, a `YYYYMMDDHHMMSS` file-name prefix), else the file's
 *   mtime as the caller passes it, else `now` (with a warning). A migration dated before the one
 *   applied ahead of it (mtimes of a fresh checkout often are) takes that one's time instead, so
 *   time order never contradicts apply order.
 * - import_key: `migration:<format>:<file path>:<statement index>:<entity_path>`, stable across
 *   re-runs of the same folder (a second event with the same key within one statement gets `#2`).
 * - changeset_id: `changesetPrefix` + a slug of the migration's name (`0002_add_email` → `0002-add-email`).
 * - reasoning: the migration's file and statement, and the statement (or column definition) quoted, within 500 characters.
 */
import { clip } from "../../../core/text";
import { WorkBudget } from "../../../core/work-budget";
import { alembicMigrations, readAlembic } from "./alembic";
import { detectFormat } from "./detect";
import { drizzleMigrations } from "./drizzle";
import { DEFAULT_LIMITS, newState, REASONING_MAX, type Migration, type MigrationEvent, type MigrationFile, type MigrationFormat, type MigrationLimits } from "./model";
import { sqlMigrations } from "./plain";
import { stampedFolderMigrations } from "./prisma";
import { readSql } from "./sql";

export { readMigrationFolder } from "./read-folder";
export { detectFormat } from "./detect";
export { MIGRATION_FORMATS, type MigrationEvent, type MigrationFile, type MigrationFormat, type MigrationLimits } from "./model";

export interface ReadOptions {
  format?: MigrationFormat;
  /** Set on every event when given. */
  project?: string;
  /** Put before every changeset slug (e.g. "billing-"). */
  changesetPrefix?: string;
  /** The time of a migration that has neither its own time nor an mtime. Default: the current time. */
  now?: Date;
  limits?: Partial<MigrationLimits>;
}

export interface MigrationReading {
  format: MigrationFormat;
  events: MigrationEvent[];
  /** Statements (Alembic: op calls) that changed nothing this reader knows: DML, functions, views, grants… */
  skipped: number;
  warnings: string[];
}

const SLUG_MAX = 100;

export function readMigrations(files: MigrationFile[], options: ReadOptions = {}): MigrationReading {
  const limits: MigrationLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const state = newState(limits);
  const normalized = files.map((f) => ({ ...f, path: normalizePath(f.path) }));
  const detected = options.format ?? detectFormat(normalized);
  if (detected === null) state.warnings.add("no migration files found (.sql files, a drizzle journal, Prisma folders or Alembic revisions)");
  const format = detected ?? "sql";
  const migrations = plan(format, normalized, state.warnings);
  const budget = new WorkBudget(limits.folderBytes);
  const events: MigrationEvent[] = [];
  const keys = new Set<string>();
  let skipped = 0;
  let previous = -Infinity;
  let undated = 0;
  for (const [n, m] of migrations.entries()) {
    if (!budget.take(Math.min(m.text.length, limits.fileBytes))) {
      state.warnings.add(`the folder's read budget (${limits.folderBytes} characters) ran out: ${migrations.length - n} migration(s) from ${m.path} on were not read`);
      break;
    }
    const reading = format === "alembic" ? readAlembic(m, state) : readSql(m.text, m.path, state);
    skipped += reading.skipped;
    const own = m.time?.getTime() ?? m.mtime;
    if (own === undefined || !Number.isFinite(own)) undated++;
    const time = Math.max(own !== undefined && Number.isFinite(own) ? own : (options.now ?? new Date()).getTime(), previous);
    previous = time;
    const timestamp = new Date(time).toISOString();
    const changeset_id = `${options.changesetPrefix ?? ""}${slug(m.name)}`;
    for (const c of reading.changes) {
      if (events.length >= limits.events) {
        state.warnings.add(`only the first ${limits.events} events were kept`);
        return done(format, events, skipped, state.warnings, undated);
      }
      const base = `migration:${format}:${m.path}:${c.statement}:${c.entity_path}`;
      let import_key = base;
      for (let k = 2; keys.has(import_key); k++) import_key = `${base}#${k}`;
      keys.add(import_key);
      const event: MigrationEvent = {
        entity_path: c.entity_path,
        entity_type: c.entity_type,
        change_type: c.change_type,
        reasoning: clip(`Migration ${m.path}, statement ${c.statement}: ${c.quote}`, REASONING_MAX),
        timestamp,
        import_key,
        changeset_id,
      };
      if (c.rename_from !== undefined) event.rename_from = c.rename_from;
      if (options.project !== undefined) event.project = options.project;
      events.push(event);
    }
  }
  return done(format, events, skipped, state.warnings, undated);
}

function done(format: MigrationFormat, events: MigrationEvent[], skipped: number, warnings: Set<string>, undated: number): MigrationReading {
  if (undated > 0) warnings.add(`${undated} migration(s) had no time of their own and no mtime; dated now`);
  return { format, events, skipped, warnings: [...warnings] };
}

function plan(format: MigrationFormat, files: MigrationFile[], warnings: Set<string>): Migration[] {
  switch (format) {
    case "prisma":
      return stampedFolderMigrations(files);
    case "drizzle":
      return drizzleMigrations(files, warnings);
    case "alembic":
      return alembicMigrations(files, warnings);
    case "sql":
      return sqlMigrations(files, warnings);
  }
}

/** `.\\a\\b.sql` and `./a//b.sql` → `a/b.sql`: one spelling per file, so keys stay stable across platforms. */
function normalizePath(path: string): string {
  let p = path.replaceAll("\\", "/");
  while (p.includes("//")) p = p.replaceAll("//", "/");
  while (p.startsWith("./")) p = p.slice(2);
  return p.startsWith("/") ? p.slice(1) : p;
}

/** Lower-case letters and digits, other runs as one "-": `20240101120000_Add Users` → `20240101120000-add-users`. */
function slug(name: string): string {
  let out = "";
  let dash = false;
  for (const ch of name.toLowerCase()) {
    if ((ch >= "a" && ch <= "z") || (ch >= "0" && ch <= "9")) {
      if (dash && out !== "") out += "-";
      out += ch;
      dash = false;
    } else dash = true;
    if (out.length >= SLUG_MAX) break;
  }
  return out === "" ? "migration" : out;
}
