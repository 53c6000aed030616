/**
 * Reads a migration folder from disk (Node) for readMigrations: the files a format needs (.sql,
 * .py, a drizzle journal, Prisma's lock file), each with its mtime, within bounds on the number of
 * files, the bytes of each and of all, and the depth. Hidden folders, node_modules and __pycache__
 * are not entered. A symlink is followed only when it resolves inside the folder, and a folder
 * reached twice through links is read once.
 */
import { lstat, open, readdir, realpath, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { MigrationFile } from "./model";

export interface FolderLimits {
  files: number;
  /** Bytes read from one file; the rest is left out with a warning. */
  fileBytes: number;
  totalBytes: number;
  depth: number;
}

export const DEFAULT_FOLDER_LIMITS: FolderLimits = { files: 5_000, fileBytes: 2 * 1024 * 1024, totalBytes: 16 * 1024 * 1024, depth: 8 };

export interface FolderReading {
  files: MigrationFile[];
  warnings: string[];
}

const SKIPPED_DIRS = new Set(["node_modules", "__pycache__"]);

const wanted = (name: string): boolean => /\.(sql|py)$/i.test(name) || name === "_journal.json" || name === "migration_lock.toml";

export async function readMigrationFolder(folder: string, options: Partial<FolderLimits> = {}): Promise<FolderReading> {
  const limits = { ...DEFAULT_FOLDER_LIMITS, ...options };
  const root = await realpath(folder);
  const files: MigrationFile[] = [];
  const warnings = new Set<string>();
  const seen = new Set<string>([root]);
  let total = 0;
  let outside = 0;
  const inside = (real: string): boolean => real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
  const stack: { dir: string; depth: number }[] = [{ dir: root, depth: 0 }];
  walk: while (stack.length > 0) {
    const { dir, depth } = stack.pop()!;
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
    for (const entry of entries) {
      const full = join(dir, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      let real = full;
      if (entry.isSymbolicLink()) {
        try {
          real = await realpath(full);
        } catch {
          continue;
        }
        if (!inside(real)) {
          outside++;
          continue;
        }
        const target = await stat(real);
        isDir = target.isDirectory();
        isFile = target.isFile();
      }
      if (isDir) {
        if (entry.name.startsWith(".") || SKIPPED_DIRS.has(entry.name) || seen.has(real)) continue;
        if (depth + 1 > limits.depth) {
          warnings.add(`folders deeper than ${limits.depth} levels were not read`);
          continue;
        }
        seen.add(real);
        stack.push({ dir: real, depth: depth + 1 });
        continue;
      }
      if (!isFile || !wanted(entry.name)) continue;
      if (files.length >= limits.files) {
        warnings.add(`only the first ${limits.files} files were read`);
        break walk;
      }
      const info = await lstat(real);
      const want = Math.min(info.size, limits.fileBytes);
      if (total + want > limits.totalBytes) {
        warnings.add(`the folder's read budget (${limits.totalBytes} bytes) ran out at ${relPath(root, full)}; it and the files after it were not read`);
        break walk;
      }
      if (want < info.size) warnings.add(`${relPath(root, full)}: only the first ${limits.fileBytes} bytes were read`);
      total += want;
      files.push({ path: relPath(root, full), text: await readHead(real, want), mtime: info.mtimeMs });
    }
  }
  if (outside > 0) warnings.add(`${outside} symlink(s) pointing out of the folder were not followed`);
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, warnings: [...warnings] };
}

/** A path inside the folder, "/"-separated whatever the platform. */
const relPath = (root: string, full: string): string => relative(root, full).split(sep).join("/");

async function readHead(path: string, bytes: number): Promise<string> {
  const handle = await open(path, "r");
  try {
    const buf = Buffer.alloc(bytes);
    let got = 0;
    while (got < bytes) {
      const { bytesRead } = await handle.read(buf, got, bytes - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return new TextDecoder().decode(buf.subarray(0, got));
  } finally {
    await handle.close();
  }
}
