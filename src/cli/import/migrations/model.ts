/**
 * The shapes shared by the migration readers: a file as the caller hands it over, one migration
 * in the order its tool applies it, the schema change read from one statement, the change event
 * the change ledger imports, and the limits that bound the work on a folder nobody vetted.
 */
import type { ChangeType, EntityType } from "../../../changes/vocab";

export const MIGRATION_FORMATS = ["sql", "prisma", "drizzle", "alembic"] as const;
export type MigrationFormat = (typeof MIGRATION_FORMATS)[number];

/** A file of the folder: its path relative to the folder ("/"-separated), its text, and its mtime in ms when known. */
export interface MigrationFile {
  path: string;
  text: string;
  mtime?: number;
}

/** One migration, in the order its tool applies it. */
export interface Migration {
  /** The file the statements come from (for alembic, the revision's .py file). */
  path: string;
  /** The migration's own name, slugged into the changeset id. */
  name: string;
  /** The time the format itself records (Prisma folder name, drizzle journal, Alembic Create Date), if any. */
  time?: Date;
  mtime?: number;
  text: string;
}

/** A schema change read from one statement, before it is dated and keyed. */
export interface Change {
  entity_path: string;
  entity_type: Extract<EntityType, "column" | "table" | "index" | "schema">;
  change_type: ChangeType;
  rename_from?: string;
  /** Where it came from: the statement's index in its file (for alembic, the op call's). */
  statement: string;
  /** The text quoted in the reasoning: the statement, or the one column definition inside it. */
  quote: string;
}

/** What `change_import` takes for one event. */
export interface MigrationEvent {
  entity_path: string;
  entity_type: Change["entity_type"];
  change_type: ChangeType;
  reasoning: string;
  timestamp: string;
  import_key: string;
  changeset_id: string;
  rename_from?: string;
  project?: string;
}

export interface MigrationLimits {
  /** Bytes of one file read; the rest is cut with a warning. */
  fileBytes: number;
  /** Bytes read over the whole folder; later migrations are left out with a warning. */
  folderBytes: number;
  /** Statements (or Alembic op calls) read in one file. */
  statementsPerFile: number;
  /** Tokens kept for one statement: a longer one is skipped with a warning. */
  tokensPerStatement: number;
  /** Parentheses nested in one statement: a deeper one is skipped with a warning. */
  parenDepth: number;
  /** Events in one answer. */
  events: number;
}

export const DEFAULT_LIMITS: MigrationLimits = {
  fileBytes: 2 * 1024 * 1024,
  folderBytes: 16 * 1024 * 1024,
  statementsPerFile: 5_000,
  tokensPerStatement: 100_000,
  parenDepth: 200,
  events: 20_000,
};

/** Longest identifier taken into an entity path: a longer one is not a real schema's name. */
export const MAX_NAME = 128;
/** A name fit for an entity path: not empty, not over MAX_NAME, no control characters; null otherwise. */
export function usableName(name: string): string | null {
  if (name === "" || name.length > MAX_NAME) return null;
  for (let k = 0; k < name.length; k++) if (name.charCodeAt(k) < 32 || name.charCodeAt(k) === 127) return null;
  return name;
}

/** Length of the reasoning text of one event. */
export const REASONING_MAX = 500;

/** Names shared across the files of one folder: which table an index was created on, for a later DROP INDEX that names only the index. */
export interface ReadState {
  indexTables: Map<string, string>;
  warnings: Set<string>;
  limits: MigrationLimits;
}

export const newState = (limits: MigrationLimits): ReadState => ({ indexTables: new Map(), warnings: new Set(), limits });

/** What one file's reader hands back. */
export interface FileReading {
  changes: Change[];
  skipped: number;
}

/** `a/b/0002_users.sql` → `0002_users`: a path's last segment without its extension. */
export function baseName(path: string): string {
  const last = path.slice(path.lastIndexOf("/") + 1);
  const dot = last.lastIndexOf(".");
  return dot > 0 ? last.slice(0, dot) : last;
}

/** The folder part of a path, "" at the top. */
export const dirName = (path: string): string => path.slice(0, Math.max(0, path.lastIndexOf("/")));

/**
 * Orders names as people number files: digit runs compare as numbers, so `2_x.sql` comes before
 * `10_x.sql`, and equal numbers fall back to plain text order (`01` and `1` stay distinct).
 */
export function naturalCompare(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(j);
    if (isDigit(ca) && isDigit(cb)) {
      let ei = i;
      let ej = j;
      while (ei < a.length && isDigit(a.charCodeAt(ei))) ei++;
      while (ej < b.length && isDigit(b.charCodeAt(ej))) ej++;
      const da = a.slice(i, ei).replace(/^0+/, "");
      const db = b.slice(j, ej).replace(/^0+/, "");
      if (da.length !== db.length) return da.length - db.length;
      if (da !== db) return da < db ? -1 : 1;
      i = ei;
      j = ej;
      continue;
    }
    if (ca !== cb) return ca - cb;
    i++;
    j++;
  }
  if (a.length - i !== b.length - j) return a.length - i - (b.length - j);
  return a < b ? -1 : a > b ? 1 : 0;
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** A `YYYYMMDDHHMMSS` prefix (Prisma folders, dbmate and knex-style files) as a UTC instant, or undefined when there is none or it is no real date. */
export function timeFromStamp(name: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?!\d)/.exec(name);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}.000Z`);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 19) !== `${y}-${mo}-${d}T${h}:${mi}:${s}`) return undefined;
  return date;
}
