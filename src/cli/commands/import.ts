/**
 * `import git` walks a registered repository's history through change_import_git, a page per call
 * (each fits the Worker's limits), until `--count` commits or the history since `--since` is done.
 * `import migrations` reads a migration folder on this machine and sends its schema changes to
 * change_import in batches. Both are idempotent on the server's import keys: a re-run imports
 * nothing twice, so an interrupted import is resumed by running it again.
 */
import { takeBool, takeString, UsageError, type Split } from "../args";
import type { Envelope, Ledger } from "../connection";
import { EXIT, printError, type Out } from "../output";
import { progress } from "../progress";
import { MIGRATION_FORMATS, readMigrationFolder, readMigrations, type MigrationFormat } from "../import/migrations";

/** change_import_git's cap on commits per call. */
const GIT_PAGE = 50;
/** change_import's cap on events per call. */
const EVENT_BATCH = 100;
/** Warnings printed at the end; the rest are counted. */
const SHOWN_WARNINGS = 20;

function count(words: Split, name: string, fallback: number): number {
  const raw = takeString(words, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} takes a whole number above 0.`, `Example: --${name} 200`);
  return n;
}

function failed(out: Out, envelope: Envelope): number {
  const e = envelope.error ?? { code: "tool_error", message: "the import failed" };
  printError(out, e.code, e.message, e.hint);
  return EXIT.toolError;
}

function finish(out: Out, summary: Record<string, unknown>, warnings: string[]): number {
  if (out.json) out.stdout(JSON.stringify({ ok: true, ...summary, warnings }, null, 2));
  else {
    out.stdout(
      Object.entries(summary)
        .map(([k, v]) => `${k}: ${v}`)
        .join("\n"),
    );
    for (const w of warnings.slice(0, SHOWN_WARNINGS)) out.stderr(`warning: ${w}`);
    if (warnings.length > SHOWN_WARNINGS) out.stderr(`(${warnings.length - SHOWN_WARNINGS} more warnings; --json lists them all)`);
  }
  return EXIT.ok;
}

async function importGit(ledger: Ledger, words: Split, out: Out): Promise<number> {
  const repo = words.positionals.shift() ?? takeString(words, "repo");
  if (!repo) throw new UsageError("import git needs a registered repository.", "agent-ledger import git owner/name [--since 90.days] [--count 200]");
  const limit = count(words, "count", 200);
  const base: Record<string, unknown> = { repo };
  for (const key of ["since", "branch", "changeset_id", "project"]) {
    const v = takeString(words, key);
    if (v !== undefined) base[key] = v;
  }
  const bar = progress(out, `import git ${repo}`);
  const totals = { repo, commits: 0, imported: 0, skipped: 0 };
  const warnings: string[] = [];
  let cursor: string | undefined;
  do {
    const page = Math.min(GIT_PAGE, limit - totals.commits);
    const { envelope } = await ledger.call("change_import_git", { ...base, max_commits: page, ...(cursor ? { cursor } : {}) });
    if (!envelope.ok) return failed(out, envelope);
    totals.commits += Number(envelope.commits ?? 0);
    totals.imported += Number(envelope.imported ?? 0);
    totals.skipped += Number(envelope.skipped ?? 0);
    warnings.push(...((envelope.warnings as string[]) ?? []));
    cursor = envelope.next_cursor as string | undefined;
    bar.update(totals.commits, limit, `${totals.imported} event(s) imported`);
  } while (cursor && totals.commits < limit);
  bar.finish(`import git ${repo}: ${totals.commits} commit(s), ${totals.imported} event(s) imported, ${totals.skipped} already there`);
  return finish(out, { ...totals, more: Boolean(cursor) }, warnings);
}

async function importMigrations(ledger: Ledger, words: Split, out: Out): Promise<number> {
  const folder = words.positionals.shift();
  if (!folder) throw new UsageError("import migrations needs a folder.", "agent-ledger import migrations ./migrations [--format sql|prisma|drizzle|alembic] [--dry-run]");
  const format = takeString(words, "format");
  if (format !== undefined && !(MIGRATION_FORMATS as readonly string[]).includes(format))
    throw new UsageError(`--format is one of ${MIGRATION_FORMATS.join(", ")}.`, "Leave it out to detect the format from the folder.");
  const project = takeString(words, "project");
  const dryRun = takeBool(words, "dry-run");
  const read = await readMigrationFolder(folder);
  const reading = readMigrations(read.files, { format: format as MigrationFormat | undefined, project });
  const warnings = [...read.warnings, ...reading.warnings];
  if (dryRun) {
    if (out.json) out.stdout(JSON.stringify({ ok: true, format: reading.format, events: reading.events, skipped: reading.skipped, warnings }, null, 2));
    else {
      for (const e of reading.events) out.stdout(`${e.timestamp} ${e.change_type.padEnd(12)} ${e.entity_path}${e.rename_from ? ` (from ${e.rename_from})` : ""}`);
      out.stderr(`${reading.format}: ${reading.events.length} event(s) from ${read.files.length} file(s), ${reading.skipped} statement(s) skipped; dry run: nothing sent.`);
    }
    return EXIT.ok;
  }
  const bar = progress(out, `import migrations ${folder}`);
  const totals = { format: reading.format, files: read.files.length, events: reading.events.length, imported: 0, skipped: 0, statements_skipped: reading.skipped };
  for (let i = 0; i < reading.events.length; i += EVENT_BATCH) {
    const { envelope } = await ledger.call("change_import", { events: reading.events.slice(i, i + EVENT_BATCH) });
    if (!envelope.ok) return failed(out, envelope);
    totals.imported += Number(envelope.imported ?? 0);
    totals.skipped += Number(envelope.skipped ?? 0);
    warnings.push(...((envelope.warnings as string[]) ?? []));
    bar.update(Math.min(i + EVENT_BATCH, reading.events.length), reading.events.length);
  }
  bar.finish(`import migrations: ${totals.imported} event(s) imported, ${totals.skipped} already there`);
  return finish(out, totals, warnings);
}

export async function importCommand(ledger: Ledger, words: Split, out: Out): Promise<number> {
  const what = words.positionals.shift();
  if (what === "git") return importGit(ledger, words, out);
  if (what === "migrations") return importMigrations(ledger, words, out);
  throw new UsageError("import takes git or migrations.", "agent-ledger import git owner/name | agent-ledger import migrations ./migrations");
}
