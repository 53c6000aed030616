/**
 * Memory that knows when the code moved: notes, decisions and code refs linked to paths of a
 * registered repository (memory_paths), and the stale marks a push to that repository's default
 * branch leaves on them and on change-ledger decision events of the files it changed
 * (memory_stale_marks). One mark per object: the newest commit wins. Writing or confirming the
 * object clears its mark (cleared_at); only a commit made after that marks it again.
 */
import { and, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { invalidInput } from "../../core/errors";
import { iso } from "../../core/time";
import { dbOf, jsonValues, statementOf } from "../../db/client";
import { memoryPaths, memoryStaleMarks, projectRepositories, repositories } from "../../db/schema";
import { findRepositoryId } from "../repos/model";
import { isGlob, matcherOf, normalizePattern } from "../reservations/globs";

/** What can be linked to paths. */
export type LinkedType = "note" | "decision" | "code_ref";
/** What can carry a stale mark: the linked objects, and change-ledger decision events. */
export type MarkedType = LinkedType | "change_event";

export const MAX_LINKED_PATHS = 50;
/** A pattern (512 characters at most) behind an `owner/name:` prefix (200). */
const LINKED_PATH_MAX = 712;
/** Links and change events one push looks at; the rest wait for the next push. */
const MAX_LINKS_PER_PUSH = 5000;
const MAX_EVENTS_PER_PUSH = 2000;
/** Distinct changed files a push is matched on, and pattern-by-path trials spent matching them. */
const MAX_FILES_PER_PUSH = 5000;
const MATCH_BUDGET = 200_000;

export const staleSchema = z
  .object({
    commit: z.string().describe("The commit that changed a linked path."),
    path: z.string().describe("The file it changed."),
    at: z.string().describe("The commit's time."),
  })
  .nullable();
export type Stale = z.infer<typeof staleSchema>;

export const PATHS_DESCRIPTION = "Paths/globs it is about; a push there marks it stale.";

/** The `paths` input of the tools that link: repository-relative paths or globs, optionally `owner/name:` first. */
export const linkedPathsField = (description: string) => z.array(z.string().trim().min(1).max(LINKED_PATH_MAX)).max(MAX_LINKED_PATHS).describe(description);

export interface Link {
  repositoryId: string;
  pattern: string;
}

const SLUG = /^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/;

/**
 * Links from a caller's paths: `owner/name:src/auth/**` names its repository, a bare path or glob
 * goes to `fallback` (the object's own repository: its project's, its code ref's). Patterns are
 * normalized as path_reserve normalizes them; duplicates collapse.
 */
export async function resolveLinks(ctx: Ctx, raw: readonly string[], fallback: () => Promise<string | null>): Promise<Link[]> {
  const byRepo = new Map<string, string>();
  let fallbackId: string | null | undefined;
  const out = new Map<string, Link>();
  for (const text of raw) {
    const colon = text.indexOf(":");
    const prefix = colon > 0 ? text.slice(0, colon) : "";
    let repositoryId: string;
    let rest = text;
    if (prefix.length <= 200 && SLUG.test(prefix)) {
      rest = text.slice(colon + 1);
      repositoryId = byRepo.get(prefix) ?? (await findRepositoryId(ctx, prefix));
      byRepo.set(prefix, repositoryId);
    } else {
      if (fallbackId === undefined) fallbackId = await fallback();
      if (fallbackId === null) {
        throw invalidInput(
          `path '${text.slice(0, 80)}' names no repository, and there is no single repository to link it to.`,
          "Prefix it with its repository, as in acme/api:src/auth/**, or link the project to one primary repository (repo_link).",
        );
      }
      repositoryId = fallbackId;
    }
    const pattern = normalizePattern(rest);
    out.set(`${repositoryId}\n${pattern}`, { repositoryId, pattern });
  }
  return [...out.values()];
}

/**
 * The repository a bare path of a note or decision belongs to: its project's only primary
 * repository (else its only linked one); for a tenant-wide object, the tenant's only repository.
 */
export async function defaultRepository(ctx: Ctx, projectId: string | null): Promise<string | null> {
  const db = dbOf(ctx);
  if (projectId) {
    const linked = await db
      .select({ id: projectRepositories.repositoryId, role: projectRepositories.role })
      .from(projectRepositories)
      .where(and(eq(projectRepositories.tenantId, ctx.tenantId), eq(projectRepositories.projectId, projectId)))
      .limit(100)
      .all();
    const primaries = linked.filter((l) => l.role === "primary");
    if (primaries.length === 1) return primaries[0]!.id;
    return linked.length === 1 ? linked[0]!.id : null;
  }
  const all = await db.select({ id: repositories.id }).from(repositories).where(eq(repositories.tenantId, ctx.tenantId)).limit(2).all();
  return all.length === 1 ? all[0]!.id : null;
}

const linksOf = (ctx: Ctx, type: LinkedType, id: string) => and(eq(memoryPaths.tenantId, ctx.tenantId), eq(memoryPaths.objectType, type), eq(memoryPaths.objectId, id));

/**
 * The statements that link `links` to the object, for the write's batch; `replace` unlinks the
 * rest first. `guard`, when given, is a condition the batch's write makes true (its
 * compare-and-swap took): without it these statements change nothing.
 */
export function linkStatements(ctx: Ctx, type: LinkedType, id: string, links: readonly Link[], now: string, opts: { replace: boolean; guard?: SQL }): D1PreparedStatement[] {
  const db = dbOf(ctx);
  const guard = opts.guard ?? sql`1`;
  return [
    ...(opts.replace ? [statementOf(ctx.d1, db.delete(memoryPaths).where(and(linksOf(ctx, type, id), guard)))] : []),
    ...links.map((l) =>
      statementOf(
        ctx.d1,
        // INSERT…SELECT, so the guard rides on the insert itself; columns in the table's order.
        db
          .insert(memoryPaths)
          .select(sql`SELECT ${ctx.tenantId}, ${type}, ${id}, ${l.repositoryId}, ${l.pattern}, ${now} WHERE ${guard}`)
          .onConflictDoNothing(),
      ),
    ),
  ];
}

/** An object's linked paths, in a stable order. */
export async function currentLinks(ctx: Ctx, type: LinkedType, id: string): Promise<Link[]> {
  const rows = await dbOf(ctx)
    .select({ repositoryId: memoryPaths.repositoryId, pattern: memoryPaths.pattern })
    .from(memoryPaths)
    .where(linksOf(ctx, type, id))
    .orderBy(memoryPaths.repositoryId, memoryPaths.pattern)
    .limit(MAX_LINKED_PATHS * 2)
    .all();
  return rows;
}

/** Whether two sets of links are the same set. */
export function sameLinks(a: readonly Link[], b: readonly Link[]): boolean {
  const key = (l: Link) => `${l.repositoryId}\n${l.pattern}`;
  const left = new Set(a.map(key));
  return left.size === new Set(b.map(key)).size && b.every((l) => left.has(key(l)));
}

/** An object's linked paths as callers write them: `owner/name:pattern`, sorted. */
export async function linkedPaths(ctx: Ctx, type: LinkedType, id: string): Promise<string[]> {
  const rows = await dbOf(ctx)
    .select({ slug: repositories.slug, pattern: memoryPaths.pattern })
    .from(memoryPaths)
    .innerJoin(repositories, and(eq(repositories.tenantId, memoryPaths.tenantId), eq(repositories.id, memoryPaths.repositoryId)))
    .where(linksOf(ctx, type, id))
    .limit(MAX_LINKED_PATHS * 2)
    .all();
  return rows.map((r) => `${r.slug}:${r.pattern}`).sort();
}

/** The object was written or confirmed: its live mark (if any) is cleared; `guard` as for linkStatements. */
export function clearMarkStatement(ctx: Ctx, type: MarkedType, id: string, now: string, guard: SQL = sql`1`): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .update(memoryStaleMarks)
      .set({ clearedAt: now })
      .where(and(eq(memoryStaleMarks.tenantId, ctx.tenantId), eq(memoryStaleMarks.objectType, type), eq(memoryStaleMarks.objectId, id), isNull(memoryStaleMarks.clearedAt), guard)),
  );
}

/**
 * A row's live mark as JSON text (parseStale reads it), a correlated subquery on the object's
 * table named `alias` (its `tenant_id` and `id`). The alias and type are this module's constants,
 * never a caller's text.
 */
export function staleColumn(alias: "n" | "d" | "e", type: MarkedType): SQL.Aliased<string | null> {
  return sql<string | null>`(SELECT json_object('commit', sm.commit_sha, 'path', sm.path, 'at', sm.changed_at) FROM memory_stale_marks sm
      WHERE sm.tenant_id = ${sql.raw(alias)}.tenant_id AND sm.object_type = '${sql.raw(type)}' AND sm.object_id = ${sql.raw(alias)}.id AND sm.cleared_at IS NULL)`.as("stale");
}

/**
 * The ids of the tenant's objects of `type` with a live mark, as a subquery for `id IN (…)`: not
 * correlated, so SQLite builds the set once rather than probing the marks for every row it scans.
 */
export function liveMarkIds(tenantId: string, type: MarkedType): SQL {
  return sql`(SELECT sm.object_id FROM memory_stale_marks sm WHERE sm.tenant_id = ${tenantId} AND sm.object_type = ${type} AND sm.cleared_at IS NULL)`;
}

/** A mark in words: "code changed by abc1234 on 2026-06-01 (src/auth.ts)". */
export const describeStale = (s: NonNullable<Stale>): string => `code changed by ${s.commit.slice(0, 7)} on ${s.at.slice(0, 10)} (${s.path})`;

/** A result's text when some items carry a stale mark: how many, and how to answer it. */
export function staleAdvice(items: readonly { stale?: Stale }[], answer: string): string {
  const n = items.filter((i) => i.stale).length;
  return n === 0 ? "" : ` ${n} marked stale (a push changed a linked path since): check against the code, then ${answer}.`;
}

export function parseStale(text: string | null | undefined): Stale {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as { commit?: unknown; path?: unknown; at?: unknown };
    return typeof v.commit === "string" && typeof v.path === "string" && typeof v.at === "string" ? { commit: v.commit, path: v.path, at: v.at } : null;
  } catch {
    return null;
  }
}

/** The live marks of these objects, by `type:id`. */
export async function staleMarks(ctx: Ctx, objects: readonly { type: MarkedType; id: string }[]): Promise<Map<string, NonNullable<Stale>>> {
  const out = new Map<string, NonNullable<Stale>>();
  if (objects.length === 0) return out;
  const m = memoryStaleMarks;
  const rows = await dbOf(ctx)
    .select({ type: m.objectType, id: m.objectId, commit: m.commitSha, path: m.path, at: m.changedAt })
    .from(m)
    .where(
      and(eq(m.tenantId, ctx.tenantId), isNull(m.clearedAt), inArray(m.objectType, jsonValues([...new Set(objects.map((o) => o.type))])), inArray(m.objectId, jsonValues(objects.map((o) => o.id)))),
    )
    .all();
  for (const r of rows) out.set(`${r.type}:${r.id}`, { commit: r.commit, path: r.path, at: r.at });
  return out;
}

/** The literal start of a pattern, before its first wildcard: every path it covers starts so. */
export const literalPrefix = (pattern: string): string => {
  const i = pattern.search(/[*?]/);
  return i < 0 ? pattern : pattern.slice(0, i);
};

/** The file an entity path is about: `src/a.ts::login` is in `src/a.ts`. */
export const filePart = (entityPath: string): string => {
  const i = entityPath.indexOf("::");
  return i > 0 ? entityPath.slice(0, i) : entityPath;
};

export interface PushedChange {
  sha: string;
  /** The commit's timestamp (ISO-8601). */
  at: string;
  files: readonly string[];
}

export interface MemoryPush {
  repositoryId: string;
  slug: string;
  name: string;
  commits: readonly PushedChange[];
}

interface Change {
  sha: string;
  at: string;
  file: string;
}

interface Mark {
  type: MarkedType;
  id: string;
  change: Change;
}

/**
 * Marks what a default-branch push changed under: each linked note, decision and code ref whose
 * paths cover a changed file, and each change-ledger decision event (revisit, expiry or stale_when
 * set) of a changed file in the repository's projects. An object is marked only by a commit made
 * after it was last written or confirmed, and a code ref or event never by its own commit (the
 * webhook's back-fill has just tied events to the commits that explain them). Returns how many
 * marks were set or moved to a newer commit.
 */
export async function markPushedMemory(ctx: Ctx, push: MemoryPush): Promise<number> {
  // Per file, the newest commit of the push that touched it.
  const newest = new Map<string, Change>();
  for (const c of push.commits) {
    for (const file of c.files) {
      const had = newest.get(file);
      if (!had ? newest.size < MAX_FILES_PER_PUSH : had.at <= c.at) newest.set(file, { sha: c.sha, at: c.at, file });
    }
  }
  if (newest.size === 0) return 0;
  const changes = [...newest.values()];
  const marks = [...(await linkMarks(ctx, push.repositoryId, newest, changes)), ...(await eventMarks(ctx, push, newest))];
  if (marks.length === 0) return 0;

  const db = dbOf(ctx);
  const now = iso(ctx.clock.now());
  const m = memoryStaleMarks;
  const statements = marks.map((k) =>
    statementOf(
      ctx.d1,
      db
        .insert(m)
        .values({
          tenantId: ctx.tenantId,
          objectType: k.type,
          objectId: k.id,
          repositoryId: push.repositoryId,
          commitSha: k.change.sha,
          path: k.change.file,
          changedAt: k.change.at,
          markedAt: now,
          clearedAt: null,
        })
        .onConflictDoUpdate({
          target: [m.tenantId, m.objectType, m.objectId],
          set: { repositoryId: push.repositoryId, commitSha: k.change.sha, path: k.change.file, changedAt: k.change.at, markedAt: now, clearedAt: null },
          // A newer commit moves a live mark; a cleared one comes back only for a commit after the clearing.
          setWhere: sql`(${m.clearedAt} IS NULL AND excluded.changed_at > ${m.changedAt}) OR (${m.clearedAt} IS NOT NULL AND excluded.changed_at > ${m.clearedAt})`,
        })
        .returning({ id: m.objectId }),
    ),
  );
  let written = 0;
  for (let i = 0; i < statements.length; i += 50) for (const r of await ctx.d1.batch(statements.slice(i, i + 50))) written += r.results.length;
  return written;
}

/** The newest change after `asOf` among `changes` that `pattern` covers, skipping `own` (a commit prefix), within the budget. */
function newestCovered(pattern: string, newest: Map<string, Change>, changes: readonly Change[], asOf: string, own: string, budget: { left: number }): Change | null {
  const eligible = (c: Change | undefined): c is Change => c !== undefined && c.at > asOf && (own === "" || !c.sha.startsWith(own));
  if (!isGlob(pattern)) {
    const c = newest.get(pattern);
    return eligible(c) ? c : null;
  }
  const prefix = literalPrefix(pattern);
  const matches = matcherOf(pattern);
  let best: Change | null = null;
  for (const c of changes) {
    if (!c.file.startsWith(prefix) || !eligible(c) || (best && best.at >= c.at)) continue;
    if (budget.left-- <= 0) break;
    if (matches(c.file)) best = c;
  }
  return best;
}

async function linkMarks(ctx: Ctx, repositoryId: string, newest: Map<string, Change>, changes: readonly Change[]): Promise<Mark[]> {
  const mp = memoryPaths;
  const sm = memoryStaleMarks;
  // Written out: when each object was last written, by its kind (a deleted code ref has none), and a code ref's own commit.
  const rows = await dbOf(ctx)
    .select({
      type: mp.objectType,
      id: mp.objectId,
      pattern: mp.pattern,
      cleared_at: sm.clearedAt,
      written_at: sql<string | null>`CASE ${mp.objectType}
        WHEN 'note' THEN (SELECT k.updated_at FROM knowledge_notes k WHERE k.tenant_id = ${mp.tenantId} AND k.id = ${mp.objectId})
        WHEN 'decision' THEN (SELECT d.status_changed_at FROM decisions d WHERE d.tenant_id = ${mp.tenantId} AND d.id = ${mp.objectId})
        WHEN 'code_ref' THEN (SELECT c.created_at FROM code_refs c WHERE c.tenant_id = ${mp.tenantId} AND c.id = ${mp.objectId} AND c.deleted_at IS NULL)
      END`,
      own_sha: sql<string | null>`CASE ${mp.objectType} WHEN 'code_ref' THEN (SELECT c.sha FROM code_refs c WHERE c.tenant_id = ${mp.tenantId} AND c.id = ${mp.objectId}) END`,
    })
    .from(mp)
    .leftJoin(sm, and(eq(sm.tenantId, mp.tenantId), eq(sm.objectType, mp.objectType), eq(sm.objectId, mp.objectId)))
    .where(and(eq(mp.tenantId, ctx.tenantId), eq(mp.repositoryId, repositoryId)))
    .limit(MAX_LINKS_PER_PUSH)
    .all();
  const budget = { left: MATCH_BUDGET };
  const best = new Map<string, Mark>();
  for (const r of rows) {
    if (r.written_at === null) continue;
    const asOf = r.cleared_at && r.cleared_at > r.written_at ? r.cleared_at : r.written_at;
    const change = newestCovered(r.pattern, newest, changes, asOf, (r.own_sha ?? "").toLowerCase(), budget);
    if (!change) continue;
    const key = `${r.type}:${r.id}`;
    const had = best.get(key);
    if (!had || had.change.at < change.at) best.set(key, { type: r.type as LinkedType, id: r.id, change });
  }
  return [...best.values()];
}

/**
 * Change-ledger decision events on the changed files: the entity path is the file, or
 * `file::symbol` in it. Hand SQL: json_each drives the seek into events' path index, an exact
 * match and a `file::` range, which drizzle cannot say. An event belongs to the repository by the
 * back-fill's rule (src/server/webhooks.ts): its project is a project linked to the repository (by
 * key), or the repository itself (owner/name or name).
 */
async function eventMarks(ctx: Ctx, push: MemoryPush, newest: Map<string, Change>): Promise<Mark[]> {
  const files = JSON.stringify([...newest.keys()]);
  const rows = await ctx.d1
    .prepare(
      `SELECT e.id, e.entity_path, e.timestamp, e.git_commit, sm.cleared_at FROM (
         SELECT e.seq FROM json_each(?1) f CROSS JOIN events e ON e.tenant_id = ?2 AND e.entity_path = f.value
         UNION
         SELECT e.seq FROM json_each(?1) f CROSS JOIN events e ON e.tenant_id = ?2 AND e.entity_path >= f.value || '::' AND e.entity_path < f.value || ':;'
       ) hit
       CROSS JOIN events e ON e.seq = hit.seq
       LEFT JOIN memory_stale_marks sm ON sm.tenant_id = e.tenant_id AND sm.object_type = 'change_event' AND sm.object_id = e.id
       WHERE (e.revisit_due <> '' OR e.expires_when <> '' OR e.stale_when <> '')
         AND (lower(e.project) IN (lower(?3), lower(?4))
              OR lower(e.project) IN (SELECT lower(p.key) FROM project_repositories pr JOIN projects p ON p.tenant_id = pr.tenant_id AND p.id = pr.project_id
                                      WHERE pr.tenant_id = ?2 AND pr.repository_id = ?5 AND p.deleted_at IS NULL))
       LIMIT ?6`,
    )
    .bind(files, ctx.tenantId, push.slug, push.name, push.repositoryId, MAX_EVENTS_PER_PUSH)
    .all<{ id: string; entity_path: string; timestamp: string; git_commit: string; cleared_at: string | null }>();
  const out: Mark[] = [];
  for (const r of rows.results) {
    const change = newest.get(filePart(r.entity_path));
    if (!change) continue;
    const asOf = r.cleared_at && r.cleared_at > r.timestamp ? r.cleared_at : r.timestamp;
    const own = r.git_commit.toLowerCase();
    if (change.at <= asOf || (own !== "" && change.sha.startsWith(own))) continue;
    out.push({ type: "change_event", id: r.id, change });
  }
  return out;
}
