/**
 * drizzle-kit's output: `<tag>.sql` files beside `meta/_journal.json`, whose entries give the order
 * (`idx`) and the time (`when`, ms since the epoch). A .sql file the journal does not list was never
 * applied by drizzle and is not read; a listed one that is missing is reported. Without a journal
 * (drizzle-kit's newer `<stamp>_<name>/migration.sql` folders) the folder names give both.
 */
import { dirName, naturalCompare, type Migration, type MigrationFile } from "./model";
import { stampedFolderMigrations } from "./prisma";

/** Bytes of journal parsed: a real one holds a line per migration. */
const MAX_JOURNAL = 4 * 1024 * 1024;

export const isJournal = (f: MigrationFile): boolean => f.path === "meta/_journal.json" || f.path.endsWith("/meta/_journal.json");

interface Entry {
  idx: number;
  when: number;
  tag: string;
}

export function drizzleMigrations(files: MigrationFile[], warnings: Set<string>): Migration[] {
  const journals = files.filter(isJournal).sort((a, b) => naturalCompare(a.path, b.path));
  const journal = journals[0];
  if (!journal) return stampedFolderMigrations(files);
  if (journals.length > 1) warnings.add(`several drizzle journals; only ${journal.path} was read`);
  const entries = journalEntries(journal, warnings);
  const root = dirName(dirName(journal.path));
  const prefix = root === "" ? "" : `${root}/`;
  const byPath = new Map(files.map((f) => [f.path, f]));
  const listed = new Set<string>();
  const out: Migration[] = [];
  for (const e of entries) {
    const path = `${prefix}${e.tag}.sql`;
    listed.add(path);
    const file = byPath.get(path);
    if (!file) {
      warnings.add(`${path}: in the journal but not in the folder`);
      continue;
    }
    const time = new Date(e.when);
    out.push({ path, name: e.tag, time: Number.isNaN(time.getTime()) ? undefined : time, mtime: file.mtime, text: file.text });
  }
  const unlisted = files.filter((f) => f.path.endsWith(".sql") && f.path.startsWith(prefix) && !f.path.slice(prefix.length).includes("/") && !listed.has(f.path));
  if (unlisted.length > 0) warnings.add(`${unlisted.length} .sql file(s) not in the drizzle journal were not read`);
  return out;
}

function journalEntries(journal: MigrationFile, warnings: Set<string>): Entry[] {
  if (journal.text.length > MAX_JOURNAL) {
    warnings.add(`${journal.path}: larger than ${MAX_JOURNAL} characters; not read`);
    return [];
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(journal.text);
  } catch {
    warnings.add(`${journal.path}: not valid JSON; not read`);
    return [];
  }
  const raw = (parsed as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(raw)) {
    warnings.add(`${journal.path}: no entries array; not read`);
    return [];
  }
  const entries: Entry[] = [];
  let bad = 0;
  for (const e of raw as unknown[]) {
    const { idx, when, tag } = (e ?? {}) as Partial<Record<keyof Entry, unknown>>;
    // A tag is a file name: one that climbs out of the folder or into another is refused.
    if (typeof idx === "number" && typeof when === "number" && typeof tag === "string" && /^[\w.-]{1,200}$/.test(tag) && !tag.includes("..")) entries.push({ idx, when, tag });
    else bad++;
  }
  if (bad > 0) warnings.add(`${journal.path}: ${bad} malformed entr${bad === 1 ? "y" : "ies"} skipped`);
  return entries.sort((a, b) => a.idx - b.idx);
}
