/**
 * Watches (seed 003 session `watch`) over GitHub: a tenant names a repository folder (or file)
 * and a branch; every push to that branch re-imports the files under it that changed and deletes
 * the documents of files that were removed. A sync compares the branch's tree with the blobs the
 * store last imported, so a missed or cut-short sync is made good by the next push.
 */
import { and, asc, count, eq, isNull, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf } from "../../db/client";
import { uuidv7 } from "../../db/ids";
import { docGithubSources, docWatches, documents } from "../../db/schema";
import { iso } from "../../core/time";
import { githubFor, githubToolError } from "../../git/credentials";
import type { RepoName } from "../../git/tokens";
import type { Ctx } from "../../core/context";
import { ToolError } from "../../core/errors";
import { type GitHubImportResult, pathNotFound, prepareImport, RequestBudget, runImport, within } from "./import";
import { deleteDocument } from "../store/store";

/** Watches one tenant may hold: each push to a watched repository may sync all of them. */
export const MAX_WATCHES = 50;
/** GitHub requests one push delivery may spend on watches, across all of them. */
export const PUSH_REQUEST_BUDGET = 200;
/** Files one push delivery re-imports, across all watches; the rest wait for the next push. */
export const PUSH_MAX_FILES = 50;
/** Documents one sync deletes for removed files; the rest go on the next push. */
export const MAX_DELETES_PER_SYNC = 100;
/** GitHub lists at most this many commits in a push payload; a longer push has an incomplete file list. */
const PAYLOAD_COMMIT_CAP = 2048;

export interface WatchRow {
  id: string;
  session: string;
  repo: string;
  repo_key: string;
  repo_path: string;
  ref: string;
  prefix: string;
  created_at: string;
  last_commit: string | null;
  last_synced_at: string | null;
  last_note: string | null;
}

/** A watch row's fields, keyed by SQL column name so rows keep the shape the tools return. */
const watchFields = {
  id: docWatches.id,
  session: docWatches.session,
  repo: docWatches.repo,
  repo_key: docWatches.repoKey,
  repo_path: docWatches.repoPath,
  ref: docWatches.ref,
  prefix: docWatches.prefix,
  created_at: docWatches.createdAt,
  last_commit: docWatches.lastCommit,
  last_synced_at: docWatches.lastSyncedAt,
  last_note: docWatches.lastNote,
};

export interface WatchTarget {
  session: string;
  repo: string;
  /** Repository path ('' for the root). */
  path: string;
  /** A branch; '' follows the default branch. */
  ref: string;
  /** Store folder; undefined for the import's default (the watched path's folder). */
  prefix?: string;
}

export interface SyncOutcome {
  import: GitHubImportResult | null;
  deleted: string[];
  note: string;
}

/**
 * Documents this tenant imported from the watched files that the listing no longer holds:
 * deleted from the store, unless the live document was replaced since (another hash), which is
 * then someone else's content and stays.
 */
async function deleteRemoved(ctx: Ctx, w: { repo_key: string; repo_path: string; prefix: string }, listed: Set<string>, singleFile: boolean): Promise<{ deleted: string[]; more: boolean }> {
  const s = alias(docGithubSources, "s");
  const d = alias(documents, "d");
  const rows = await dbOf(ctx)
    .select({ path: s.path, repo_path: s.repoPath, doc_hash: s.docHash, live_hash: d.hash })
    .from(s)
    .leftJoin(d, and(eq(d.tenantId, s.tenantId), eq(d.path, s.path), isNull(d.deletedAt)))
    .where(
      and(
        eq(s.tenantId, ctx.tenantId),
        eq(s.repoKey, w.repo_key),
        w.repo_path === ""
          ? undefined
          : // Hand SQL inside: the folder test counts characters as SQLite does (length()), with no LIKE wildcards.
            or(eq(s.repoPath, w.repo_path), sql`substr(${s.repoPath}, 1, length(${w.repo_path}) + 1) = ${w.repo_path} || '/'`),
      ),
    )
    .all();
  const gone = rows.filter((r) => (singleFile ? r.repo_path === w.repo_path : within(r.repo_path, w.repo_path)) && within(r.path, w.prefix) && !listed.has(r.repo_path));
  const deleted: string[] = [];
  for (const r of gone.slice(0, MAX_DELETES_PER_SYNC)) {
    if (r.live_hash === r.doc_hash) {
      try {
        await deleteDocument(ctx, { path: r.path });
        deleted.push(r.path);
      } catch (err) {
        // Deleted meanwhile by someone else: the outcome is the same.
        if (!(err instanceof ToolError && err.code === "not_found")) throw err;
      }
    }
    await dbOf(ctx)
      .delete(docGithubSources)
      .where(and(eq(docGithubSources.tenantId, ctx.tenantId), eq(docGithubSources.path, r.path), eq(docGithubSources.docHash, r.doc_hash)))
      .run();
  }
  return { deleted, more: gone.length > MAX_DELETES_PER_SYNC };
}

/**
 * Brings the store in line with the watched files at `ref` (a branch or the pushed commit).
 * `prefix` undefined is the import's default (the watched path's folder). When the watched path
 * itself is gone, a push sync deletes what was imported from it; enabling a watch refuses instead.
 */
export async function syncWatch(
  ctx: Ctx,
  gh: RequestBudget,
  w: { repo: string; path: string; prefix?: string },
  ref: string | undefined,
  maxFiles: number,
  opts: { deleteWhenMissing: boolean },
): Promise<SyncOutcome & { prefix: string }> {
  const prep = await prepareImport(ctx, { repo: w.repo, path: w.path, ref, prefix: w.prefix === "" ? "/" : w.prefix });
  const repoKey = `${prep.repo.owner}/${prep.repo.name}`.toLowerCase();
  let run;
  try {
    run = await runImport(ctx, gh, prep, { skipUnchanged: true, maxFiles });
  } catch (err) {
    if (!(opts.deleteWhenMissing && err instanceof ToolError && err.code === "path_not_found")) throw err;
    const { deleted, more } = await deleteRemoved(ctx, { repo_key: repoKey, repo_path: prep.path, prefix: prep.prefix }, new Set(), false);
    return { import: null, deleted, prefix: prep.prefix, note: `'${prep.path}' no longer exists; ${deleted.length} document(s) deleted${more ? " (more on the next push)" : ""}` };
  }
  const r = run.result;
  const { deleted, more } = await deleteRemoved(ctx, { repo_key: repoKey, repo_path: prep.path, prefix: run.prefix }, run.listed, run.kind === "file");
  const parts = [`${r.imported.length} imported`, `${r.unchanged} unchanged`, `${deleted.length} deleted`];
  if (r.skipped.length) parts.push(`${r.skipped.length} skipped`);
  if (r.truncated) parts.push(`${r.remaining} left for the next push`);
  if (more) parts.push("more deletions on the next push");
  return { import: r, deleted, prefix: run.prefix, note: parts.join(", ") };
}

/** The watch's key columns, as stored. */
function keyOf(t: WatchTarget, repo: RepoName) {
  return { session: t.session, repo: `${repo.owner}/${repo.name}`, repo_key: `${repo.owner}/${repo.name}`.toLowerCase(), repo_path: t.path, ref: t.ref };
}

/**
 * Records a watch and syncs it once, so the store holds the watched files from the start (and
 * the import's source records let later pushes skip unchanged blobs). Enabling an existing watch
 * again just syncs it.
 */
export async function enableWatch(ctx: Ctx, t: WatchTarget): Promise<{ watch: WatchRow; sync: SyncOutcome }> {
  const prep = await prepareImport(ctx, { repo: t.repo, path: t.path, ref: t.ref || undefined, prefix: t.prefix });
  const key = keyOf({ ...t, path: prep.path }, prep.repo);
  // Checked before the first sync, so a refused watch imports nothing.
  const held = await dbOf(ctx)
    .select({
      n: count(),
      same: sql<number>`COALESCE(SUM(${docWatches.session} = ${key.session} AND ${docWatches.repoKey} = ${key.repo_key} AND ${docWatches.repoPath} = ${key.repo_path} AND ${docWatches.ref} = ${key.ref}), 0)`,
    })
    .from(docWatches)
    .where(eq(docWatches.tenantId, ctx.tenantId))
    .get();
  if ((held?.n ?? 0) >= MAX_WATCHES && (held?.same ?? 0) === 0) {
    throw new ToolError("too_many_watches", `This tenant already has ${MAX_WATCHES} watches.`, {
      hint: "Disable watches you no longer need (watch with enable: false), or watch a common parent folder instead.",
    });
  }
  const gh = new RequestBudget(githubFor(ctx.env, ctx.tenantId), PUSH_REQUEST_BUDGET);
  let sync;
  try {
    sync = await syncWatch(ctx, gh, { repo: t.repo, path: prep.path, prefix: t.prefix }, t.ref || undefined, PUSH_MAX_FILES * 2, { deleteWhenMissing: false });
  } catch (err) {
    throw githubToolError(err);
  }
  if (sync.import === null) throw pathNotFound(prep.path, key.repo, t.ref || "the default branch");
  const prefix = sync.prefix;
  const now = iso(ctx.clock.now());
  const row = await dbOf(ctx)
    .insert(docWatches)
    .values({
      tenantId: ctx.tenantId,
      id: uuidv7(ctx.clock.now().getTime()),
      session: key.session,
      repo: key.repo,
      repoKey: key.repo_key,
      repoPath: key.repo_path,
      ref: key.ref,
      prefix,
      createdBy: ctx.actorId,
      createdAt: now,
      lastCommit: sync.import.commit,
      lastSyncedAt: now,
      lastNote: sync.note,
    })
    .onConflictDoUpdate({
      target: [docWatches.tenantId, docWatches.session, docWatches.repoKey, docWatches.repoPath, docWatches.ref, docWatches.prefix],
      set: { lastCommit: sql`excluded.last_commit`, lastSyncedAt: sql`excluded.last_synced_at`, lastNote: sql`excluded.last_note` },
    })
    .returning(watchFields)
    .get();
  return { watch: row!, sync };
}

/** Removes the watches on a target (all prefixes unless one is named); not_found when there were none. */
export async function disableWatch(ctx: Ctx, t: WatchTarget): Promise<WatchRow[]> {
  const prep = await prepareImport(ctx, { repo: t.repo, path: t.path });
  const key = keyOf({ ...t, path: prep.path }, prep.repo);
  const prefix = t.prefix === undefined ? null : prep.prefix;
  const removed = await dbOf(ctx)
    .delete(docWatches)
    .where(
      and(
        eq(docWatches.tenantId, ctx.tenantId),
        eq(docWatches.session, key.session),
        eq(docWatches.repoKey, key.repo_key),
        eq(docWatches.repoPath, key.repo_path),
        eq(docWatches.ref, key.ref),
        prefix === null ? undefined : eq(docWatches.prefix, prefix),
      ),
    )
    .returning(watchFields)
    .all();
  if (removed.length === 0) {
    throw new ToolError("not_found", `No watch on ${key.repo}${key.repo_path ? `:${key.repo_path}` : ""}${key.ref ? `@${key.ref}` : ""}${key.session ? ` in session '${key.session}'` : ""}.`, {
      hint: "Name the watch as it was enabled (session, repo, path, ref); listWatches shows them.",
    });
  }
  return removed;
}

/**
 * A session's watches end with it (docs_session stop calls this). Session names are per actor, so
 * only the calling actor's watches of that name go.
 */
export async function dropWatchesForSession(ctx: Ctx, session: string): Promise<number> {
  const res = await dbOf(ctx)
    .delete(docWatches)
    .where(and(eq(docWatches.tenantId, ctx.tenantId), eq(docWatches.session, session), eq(docWatches.createdBy, ctx.actorId)))
    .run();
  return res.meta.changes ?? 0;
}

export async function listWatches(ctx: Ctx, session?: string): Promise<WatchRow[]> {
  return dbOf(ctx)
    .select(watchFields)
    .from(docWatches)
    .where(and(eq(docWatches.tenantId, ctx.tenantId), session === undefined ? undefined : eq(docWatches.session, session)))
    .orderBy(asc(docWatches.createdAt), asc(docWatches.id))
    .limit(MAX_WATCHES)
    .all();
}

// ---------------------------------------------------------------------------------------------
// Push deliveries

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * The paths a push touched, from its payload; null when the payload cannot tell (a new or
 * force-pushed branch, or more commits than GitHub lists), and every watch on the branch syncs.
 */
function touchedPaths(payload: Json): Set<string> | null {
  const commits = arr(payload.commits);
  if (payload.created === true || payload.forced === true || commits.length >= PAYLOAD_COMMIT_CAP) return null;
  const out = new Set<string>();
  for (const c of commits.map(obj)) for (const f of [...arr(c.added), ...arr(c.modified), ...arr(c.removed)]) if (typeof f === "string") out.add(f);
  return out;
}

/**
 * The push hook (src/server/webhooks.ts): syncs this tenant's watches on the pushed repository and
 * branch. The delivery belongs to one tenant already, and only that tenant's watches are read.
 * Returns a note for the delivery's outcome, or null when no watch was concerned. A watch that
 * fails is noted (and its last_note says why) without failing the delivery: the next push syncs
 * it from the tree again.
 */
export async function applyDocWatches(ctx: Ctx, payload: Json): Promise<string | null> {
  const repository = obj(payload.repository);
  const repoKey = str(repository.full_name).toLowerCase();
  const ref = str(payload.ref);
  const after = str(payload.after).toLowerCase();
  if (!repoKey || !ref.startsWith("refs/heads/") || payload.deleted === true || !/^[0-9a-f]{40}$/.test(after)) return null;
  const branch = ref.slice("refs/heads/".length);
  const watches = (
    await dbOf(ctx)
      .select(watchFields)
      .from(docWatches)
      .where(and(eq(docWatches.tenantId, ctx.tenantId), eq(docWatches.repoKey, repoKey)))
      .orderBy(asc(docWatches.createdAt), asc(docWatches.id))
      .limit(MAX_WATCHES)
      .all()
  ).filter((w) => (w.ref || str(repository.default_branch)) === branch);
  if (watches.length === 0) return null;

  const touched = touchedPaths(payload);
  const gh = new RequestBudget(githubFor(ctx.env, ctx.tenantId), PUSH_REQUEST_BUDGET);
  let filesLeft = PUSH_MAX_FILES;
  const notes: string[] = [];
  for (const w of watches) {
    const label = `${w.repo}${w.repo_path ? `:${w.repo_path}` : ""}`;
    if (touched && ![...touched].some((f) => within(f, w.repo_path))) {
      notes.push(`${label}: no watched file changed`);
      continue;
    }
    let note: string;
    if (gh.left < 5 || filesLeft === 0) {
      note = "not synced: this push's budget is spent; the next push syncs it";
    } else {
      try {
        const s = await syncWatch(ctx, gh, { repo: w.repo, path: w.repo_path, prefix: w.prefix }, after, filesLeft, { deleteWhenMissing: true });
        filesLeft -= s.import?.imported.length ?? 0;
        note = s.note;
      } catch (err) {
        const mapped = githubToolError(err);
        note = `sync failed (${mapped instanceof ToolError ? mapped.code : "internal_error"}): ${mapped instanceof Error ? mapped.message.slice(0, 300) : "unexpected error"}`;
      }
    }
    await dbOf(ctx)
      .update(docWatches)
      .set({ lastCommit: after, lastSyncedAt: iso(ctx.clock.now()), lastNote: note })
      .where(and(eq(docWatches.tenantId, ctx.tenantId), eq(docWatches.id, w.id)))
      .run();
    notes.push(`${label}: ${note}`);
  }
  return `doc watches: ${notes.join("; ")}`.slice(0, 1000);
}
