/**
 * Plain numbered SQL files (`0001_init.sql`, wrangler/D1's `migrations/`, Flyway's `V2__x.sql`,
 * golang-migrate's `1_x.up.sql`, diesel's `<name>/up.sql`), applied in file-name order with
 * numbers compared as numbers. Down migrations are not read: they undo, they do not record what
 * the schema became. A dbmate or goose file carries both halves; only the part before its
 * `-- migrate:down` / `-- +goose Down` marker is read.
 *
 * A file name that starts with a `YYYYMMDDHHMMSS` stamp gives the migration's time; otherwise the
 * caller's mtime does (index.ts).
 */
import { baseName, dirName, naturalCompare, timeFromStamp, type Migration, type MigrationFile } from "./model";

const DOWN_MARKERS = ["-- migrate:down", "-- +goose Down", "-- +goose down"];

export const isSqlFile = (f: MigrationFile): boolean => f.path.toLowerCase().endsWith(".sql");

function isDown(path: string): boolean {
  const base = baseName(path).toLowerCase();
  return base === "down" || base.endsWith(".down") || /^u\d/.test(base);
}

/** A migration's own name: the file's, or its folder's when the file is only `up.sql`. */
function migrationName(path: string): string {
  const base = baseName(path);
  if (base.toLowerCase() === "up") return baseName(dirName(path)) || base;
  return base.toLowerCase().endsWith(".up") ? base.slice(0, -3) : base;
}

/** The part of a file before a down marker that starts a line. */
function upPart(text: string): string {
  let cut = text.length;
  for (const marker of DOWN_MARKERS) {
    for (let at = text.indexOf(marker); at >= 0 && at < cut; at = text.indexOf(marker, at + 1)) {
      if (at === 0 || text[at - 1] === "\n") {
        cut = at;
        break;
      }
    }
  }
  return text.slice(0, cut);
}

export function sqlMigrations(files: MigrationFile[], warnings: Set<string>): Migration[] {
  const sql = files.filter(isSqlFile);
  const down = sql.filter((f) => isDown(f.path));
  if (down.length > 0) warnings.add(`${down.length} down migration file(s) not read`);
  return sql
    .filter((f) => !isDown(f.path))
    .sort((a, b) => naturalCompare(a.path, b.path))
    .map((f) => {
      const name = migrationName(f.path);
      return { path: f.path, name, time: timeFromStamp(name), mtime: f.mtime, text: upPart(f.text) };
    });
}
