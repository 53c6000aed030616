/**
 * Which tool wrote a migration folder, from its files alone: a drizzle journal, Prisma's lock file,
 * Alembic revisions, timestamped `migration.sql` folders, or plain .sql files, in that order of
 * precedence (a Prisma or drizzle folder holds .sql files too). An explicit format wins over all.
 */
import { isAlembicRevision } from "./alembic";
import { isJournal } from "./drizzle";
import type { MigrationFile, MigrationFormat } from "./model";
import { isSqlFile } from "./plain";
import { stampedFolder } from "./prisma";

export function detectFormat(files: MigrationFile[]): MigrationFormat | null {
  if (files.some(isJournal)) return "drizzle";
  if (files.some((f) => f.path === "migration_lock.toml" || f.path.endsWith("/migration_lock.toml"))) return "prisma";
  if (files.some(isAlembicRevision)) return "alembic";
  if (files.some((f) => stampedFolder(f.path) !== null)) return "prisma";
  if (files.some(isSqlFile)) return "sql";
  return null;
}
