/**
 * Prisma Migrate's folders: `<YYYYMMDDHHMMSS>_<name>/migration.sql` beside `migration_lock.toml`.
 * The folder name gives both the order and the time (UTC, as Prisma stamps it); the SQL is read by
 * sql.ts. drizzle-kit's newer layout (no journal, `<stamp>_<name>/migration.sql`) is read the same way.
 */
import { baseName, dirName, timeFromStamp, type Migration, type MigrationFile } from "./model";

/** `…/<stamp>_<name>/migration.sql` → the folder name, or null for any other path. */
export function stampedFolder(path: string): string | null {
  if (baseName(path) !== "migration" || !path.endsWith(".sql")) return null;
  const folder = baseName(dirName(path));
  return timeFromStamp(folder) ? folder : null;
}

export function stampedFolderMigrations(files: MigrationFile[]): Migration[] {
  const found: Migration[] = [];
  for (const f of files) {
    const folder = stampedFolder(f.path);
    if (folder) found.push({ path: f.path, name: folder, time: timeFromStamp(folder), mtime: f.mtime, text: f.text });
  }
  return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
