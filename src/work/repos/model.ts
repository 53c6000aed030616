/** Repositories and code refs (seed 001): where "done" points at real code. */
import { z } from "zod";
import { and, desc, eq, isNull, ne, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { dbOf, fromColumnNames, statementOf } from "../../db/client";
import { stillHolding } from "../../db/compare-and-swap";
import { afterTimeAndId } from "../../core/cursor";
import { codeRefs, decisions, projectRepositories, repositories, tasks } from "../../db/schema";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import { invalidInput, notFound, ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import { runRepoContext, type RunRepoContext } from "../runs/model";

export interface RemoteParts {
  host: string;
  owner: string;
  name: string;
  url: string;
}

/**
 * Normalizes a git remote (https, ssh or scp-style; credentials dropped; `.git` and trailing
 * slashes removed) to `https://host/owner/name`, lower-cased, so one repository has one key.
 */
export function normalizeRemote(raw: string): RemoteParts | null {
  const text = raw.trim();
  let host: string;
  let path: string;
  const scp = /^[^@\s/]+@([^:\s/]+):(.+)$/.exec(text);
  if (scp) {
    host = scp[1]!;
    path = scp[2]!;
  } else {
    let u: URL;
    try {
      u = new URL(text);
    } catch {
      return null;
    }
    if (!["https:", "http:", "ssh:", "git:"].includes(u.protocol)) return null;
    host = u.hostname;
    path = u.pathname;
  }
  // Dot segments ("..", "%2e%2e") are refused before URL parsing would quietly resolve them away.
  if (/(^|[/\\:])(?:\.|%2e){1,2}(?=[/\\?#]|$)/i.test(text)) return null;
  const parts = path
    .replace(/^\/+|\/+$/g, "")
    .replace(/\.git$/i, "")
    .split("/");
  if (parts.length !== 2 || parts.some((p) => !/^[A-Za-z0-9._-]+$/.test(p) || /^\.+$/.test(p))) return null;
  const [owner, name] = parts as [string, string];
  host = host.toLowerCase();
  return { host, owner, name, url: `https://${host}/${owner}/${name}`.toLowerCase() };
}

/**
 * A repository named any way a person would: a remote URL (https, ssh or scp-style) or owner/name
 * alone (on `host`, github.com unless given).
 */
export function parseRepoRef(raw: string, host = "github.com"): RemoteParts | null {
  const text = raw.trim();
  return /^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/.test(text) ? normalizeRemote(`https://${host}/${text}`) : normalizeRemote(text);
}

/** A remote as it may be echoed back: user-info (any credentials) and query or fragment removed. */
export function redactRemote(raw: string): string {
  return raw
    .trim()
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^\s/]*@/i, "$1***@")
    .replace(/[?#].*$/s, "");
}

export const repositorySchema = z.object({
  id: z.string().describe("Repository id."),
  host: z.string().describe("Git host, e.g. github.com."),
  owner: z.string().describe("Owner."),
  name: z.string().describe("Name."),
  slug: z.string().describe("owner/name."),
  remote_url: z.string().describe("Normalized remote URL (no credentials)."),
  default_branch: z.string().describe("Default branch."),
  created_at: z.string().describe("When it was registered."),
});
export type Repository = z.infer<typeof repositorySchema>;

/** A repository row's fields, keyed by SQL column name so rows keep the shape the tools return. */
const repoFields = {
  id: repositories.id,
  host: repositories.host,
  owner: repositories.owner,
  name: repositories.name,
  slug: repositories.slug,
  remote_url: repositories.remoteUrl,
  default_branch: repositories.defaultBranch,
  created_at: repositories.createdAt,
};

/** The caller's tenant's repository at a normalized remote URL (the unique key). */
const repositoryByRemoteQuery = (ctx: Ctx, url: string) =>
  dbOf(ctx)
    .select(repoFields)
    .from(repositories)
    .where(and(eq(repositories.tenantId, ctx.tenantId), eq(repositories.remoteUrl, url)));

/** The condition (on a `repositories` row, or an alias of it) matching a reference by id, owner/name or remote URL. */
export function repoRefMatch(ref: string, r: { id: SQLWrapper; slug: SQLWrapper; remoteUrl: SQLWrapper } = repositories): SQL {
  const value = ref.trim();
  const remote = normalizeRemote(ref)?.url ?? "";
  // `COLLATE NOCASE` so owner/name matches whatever its case, as before.
  return or(eq(r.id, value), sql`${r.slug} = ${value} COLLATE NOCASE`, eq(r.remoteUrl, remote))!;
}

/** A registered repository of the caller's tenant, by id, owner/name or remote URL. */
export async function findRepository(ctx: Ctx, ref: string): Promise<Repository> {
  const row = await dbOf(ctx)
    .select(repoFields)
    .from(repositories)
    .where(and(eq(repositories.tenantId, ctx.tenantId), repoRefMatch(ref)))
    .limit(1)
    .get();
  if (!row) throw notFound("repository", ref, "Register it with repo_register, or list them with repo_query.");
  return row;
}

/** Registers a repository for the caller's tenant, or finds it; repo_register and the GitHub App webhooks share it. */
export async function registerRepository(ctx: Ctx, parts: RemoteParts, defaultBranch: string): Promise<{ repository: Repository; created: boolean }> {
  const id = uuidv7();
  const now = iso(ctx.clock.now());
  const [inserted, , found] = await ctx.d1.batch<Repository>([
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .insert(repositories)
        .values({
          id,
          tenantId: ctx.tenantId,
          host: parts.host,
          owner: parts.owner,
          name: parts.name,
          slug: `${parts.owner}/${parts.name}`,
          remoteUrl: parts.url,
          defaultBranch,
          createdBy: ctx.actorId,
          createdAt: now,
        })
        .onConflictDoNothing()
        .returning({ id: repositories.id }),
    ),
    activityStatement(ctx, { verb: "repo.registered", objectType: "repository", objectId: id, summary: `registered ${parts.owner}/${parts.name}`, ifPreviousChanged: true }),
    statementOf(ctx.d1, repositoryByRemoteQuery(ctx, parts.url)),
  ]);
  return { repository: found!.results[0]!, created: inserted!.results.length > 0 };
}

/** A registered repository of the caller's tenant by its normalized remote URL, or null. */
export async function repositoryByRemote(ctx: Ctx, parts: RemoteParts): Promise<Repository | null> {
  return (await repositoryByRemoteQuery(ctx, parts.url).get()) ?? null;
}

/** The tenant's repositories as owner and name, by owner then name, at most `limit` (ask one more than you show to know there are more). */
export async function repositoryNames(ctx: Ctx, limit: number): Promise<{ owner: string; name: string }[]> {
  return dbOf(ctx)
    .select({ owner: repositories.owner, name: repositories.name })
    .from(repositories)
    .where(eq(repositories.tenantId, ctx.tenantId))
    .orderBy(repositories.owner, repositories.name)
    .limit(limit)
    .all();
}

export const REPO_ROLES = ["primary", "dependency", "docs"] as const;

export const REF_TYPES = ["commit", "branch", "pr", "tag", "compare"] as const;
export const PR_STATES = ["open", "draft", "merged", "closed"] as const;
export const CODE_REF_OBJECTS = ["task", "decision", "note", "project"] as const;

export const codeRefSchema = z.object({
  id: z.string().describe("Code ref id."),
  object_type: z.enum(CODE_REF_OBJECTS).describe("What it is evidence for."),
  object_id: z.string().describe("That object's id."),
  ref_type: z.enum(REF_TYPES).describe("commit, branch, pr, tag or compare."),
  repository_id: z.string().nullable().describe("Repository, or null."),
  sha: z.string().nullable().describe("Commit SHA, or null."),
  branch: z.string().nullable().describe("Branch, or null."),
  pr_number: z.number().int().nullable().describe("PR number, or null."),
  pr_url: z.string().nullable().describe("PR URL, or null."),
  pr_state: z.enum(PR_STATES).nullable().describe("PR state, or null."),
  title: z.string().describe("Title."),
  url: z.string().nullable().describe("Link, or null."),
  run_id: z.string().nullable().describe("Run it was recorded in, or null."),
  created_by: z.string().describe("Who recorded it."),
  created_at: z.string().describe("When."),
});
export type CodeRef = z.infer<typeof codeRefSchema>;

/** A code ref row's fields, keyed by SQL column name so rows keep the shape the tools return (the webhooks read them too). */
export const codeRefFields = {
  id: codeRefs.id,
  object_type: codeRefs.objectType,
  object_id: codeRefs.objectId,
  ref_type: codeRefs.refType,
  repository_id: codeRefs.repositoryId,
  sha: codeRefs.sha,
  branch: codeRefs.branch,
  pr_number: codeRefs.prNumber,
  pr_url: codeRefs.prUrl,
  pr_state: codeRefs.prState,
  title: codeRefs.title,
  url: codeRefs.url,
  run_id: codeRefs.runId,
  created_by: codeRefs.createdBy,
  created_at: codeRefs.createdAt,
};

/** A code ref by a condition on the code_refs table, or undefined. */
const codeRefWhere = async (ctx: Ctx, match: SQL | undefined): Promise<CodeRef | undefined> => (await dbOf(ctx).select(codeRefFields).from(codeRefs).where(match).get()) as CodeRef | undefined;

export const SHA = z
  .string()
  .max(64)
  .regex(/^[0-9a-fA-F]{7,64}$/, "sha must be 7–64 hex characters");
export const refFields = {
  ref_type: z.enum(REF_TYPES).describe("commit (needs sha), branch (needs branch), pr (needs pr_number or pr_url), tag (needs title or sha), compare (needs url)."),
  repository_id: z.string().min(1).max(200).optional().describe("Repository id or owner/name; defaults to the run's repository (run_heartbeat), else the project's only primary repository."),
  sha: SHA.optional().describe("Commit SHA; defaults to the run's HEAD when the ref is on the run's repository and branch."),
  branch: z.string().min(1).max(250).optional().describe("Branch name; defaults to the run's branch when the ref is on the run's repository."),
  pr_number: z.number().int().min(1).optional().describe("Pull request number."),
  pr_url: z.string().url().max(500).optional().describe("Pull request URL."),
  pr_state: z.enum(PR_STATES).optional().describe("open, draft, merged or closed."),
  title: z.string().max(300).optional().describe("Title (the tag name for tags)."),
  url: z.string().url().max(500).optional().describe("Link (required for compare)."),
  run_id: z.string().min(1).max(100).optional().describe("The run it was recorded in (run_key or run id); defaults to your current run."),
};
export type RefInput = z.infer<z.ZodObject<typeof refFields>>;

function checkRefShape(r: RefInput): void {
  const need: Record<(typeof REF_TYPES)[number], [boolean, string]> = {
    commit: [!!r.sha, "a commit needs sha"],
    branch: [!!r.branch, "a branch needs branch"],
    pr: [!!(r.pr_number || r.pr_url), "a pr needs pr_number or pr_url"],
    tag: [!!(r.title || r.sha), "a tag needs title (its name) or sha"],
    compare: [!!r.url, "a compare needs url"],
  };
  const [ok, why] = need[r.ref_type];
  if (!ok) throw invalidInput(`${why}.`, "Add the field the ref_type needs.");
  if (r.pr_state && r.ref_type !== "pr") throw invalidInput("pr_state is only for ref_type pr.", "Drop pr_state, or use ref_type pr.");
}

/**
 * Fills a ref from the run it is recorded in: the run's repository when none is named, and its
 * branch and HEAD only where they describe the same place (same repository; the HEAD only on the
 * run's branch), so a ref to another repository or branch never borrows the run's commit.
 */
function withRunContext(r: RefInput, repositoryId: string | null, run: RunRepoContext | null): { ref: RefInput; repositoryId: string | null } {
  if (!run) return { ref: r, repositoryId };
  const sameRepo = !repositoryId || !run.repositoryId || repositoryId === run.repositoryId;
  if (!sameRepo) return { ref: r, repositoryId };
  const branch = r.branch ?? run.branch ?? undefined;
  const sameBranch = !r.branch || r.branch === run.branch;
  return { ref: { ...r, branch, sha: r.sha ?? (sameBranch ? (run.headSha ?? undefined) : undefined) }, repositoryId: repositoryId ?? run.repositoryId };
}

/**
 * Records a code ref. `alongside`, given the new ref's id, repository and time, returns statements
 * to write in the same batch (the paths linked to it).
 */
export async function addCodeRef(
  ctx: Ctx,
  objectType: (typeof CODE_REF_OBJECTS)[number],
  objectId: string,
  projectId: string | null,
  input: RefInput,
  alongside?: (ref: { id: string; repositoryId: string | null; now: string }) => Promise<D1PreparedStatement[]>,
): Promise<CodeRef> {
  const run = await runRepoContext(ctx, input.run_id);
  const filled = withRunContext(input, input.repository_id ? (await findRepository(ctx, input.repository_id)).id : null, run);
  const r = filled.ref;
  checkRefShape(r);
  let repositoryId = filled.repositoryId;
  if (!repositoryId && projectId) {
    const primaries = await dbOf(ctx)
      .select({ repository_id: projectRepositories.repositoryId })
      .from(projectRepositories)
      .where(and(eq(projectRepositories.tenantId, ctx.tenantId), eq(projectRepositories.projectId, projectId), eq(projectRepositories.role, "primary")))
      .limit(2)
      .all();
    if (primaries.length === 1) repositoryId = primaries[0]!.repository_id;
  }
  const id = uuidv7();
  const now = iso(ctx.clock.now());
  const label = r.ref_type === "commit" ? r.sha!.toLowerCase().slice(0, 12) : r.ref_type === "pr" ? `PR ${r.pr_number ?? r.pr_url}` : (r.branch ?? r.title ?? r.url ?? "");
  const extra = alongside ? await alongside({ id, repositoryId, now }) : [];
  await ctx.d1.batch([
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .insert(codeRefs)
        .values({
          id,
          tenantId: ctx.tenantId,
          objectType,
          objectId,
          refType: r.ref_type,
          repositoryId,
          sha: r.sha?.toLowerCase() ?? null,
          branch: r.branch ?? null,
          prNumber: r.pr_number ?? null,
          prUrl: r.pr_url ?? null,
          prState: r.pr_state ?? (r.ref_type === "pr" ? "open" : null),
          title: r.title ?? "",
          url: r.url ?? null,
          runId: run?.runId ?? null,
          createdBy: ctx.actorId,
          createdAt: now,
          deletedAt: null,
        }),
    ),
    activityStatement(ctx, { verb: "code_ref.added", objectType, objectId, projectId, summary: `${r.ref_type} ${label}`, metadata: { code_ref_id: id } }),
    ...extra,
  ]);
  return (await codeRefWhere(ctx, eq(codeRefs.id, id)))!;
}

/**
 * Writes a code ref's changed fields and their activity (pr.merged / pr.closed when a PR ends,
 * code_ref.updated otherwise); code_ref_update and the pull_request webhook share it.
 */
export async function applyCodeRefChange(ctx: Ctx, before: CodeRef, next: Record<string, string | null>): Promise<{ code_ref: CodeRef; changed: string[] }> {
  const changed = Object.keys(next).filter((k) => next[k] !== before[k as keyof CodeRef]);
  if (changed.length === 0) return { code_ref: before, changed };
  const prMove = changed.includes("pr_state") && (next.pr_state === "merged" || next.pr_state === "closed");
  // The same project the ref's code_ref.added went to, so the move shows on that project's timeline.
  const projectId =
    before.object_type === "project"
      ? before.object_id
      : before.object_type === "task" || before.object_type === "decision"
        ? ((before.object_type === "task"
            ? await dbOf(ctx)
                .select({ project_id: tasks.projectId })
                .from(tasks)
                .where(and(eq(tasks.tenantId, ctx.tenantId), eq(tasks.id, before.object_id)))
                .get()
            : await dbOf(ctx)
                .select({ project_id: decisions.projectId })
                .from(decisions)
                .where(and(eq(decisions.tenantId, ctx.tenantId), eq(decisions.id, before.object_id)))
                .get()
          )?.project_id ?? null)
        : null;
  // Compare-and-swap on the fields being changed: a change decided on a stale read (say, moving a PR
  // that was merged meanwhile) is refused instead of overwriting the other write.
  const [updated] = await ctx.d1.batch<{ id: string }>([
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .update(codeRefs)
        .set(fromColumnNames(codeRefs, Object.fromEntries(changed.map((c) => [c, next[c]]))))
        .where(and(eq(codeRefs.tenantId, ctx.tenantId), eq(codeRefs.id, before.id), isNull(codeRefs.deletedAt), ...stillHolding(codeRefs, before, changed)))
        .returning({ id: codeRefs.id }),
    ),
    activityStatement(ctx, {
      verb: prMove ? `pr.${next.pr_state}` : "code_ref.updated",
      objectType: before.object_type,
      objectId: before.object_id,
      projectId,
      summary: prMove ? `PR ${before.pr_number ?? before.pr_url} ${next.pr_state}` : `code ref ${changed.join(", ")} changed`,
      metadata: { code_ref_id: before.id, changed },
      ifPreviousChanged: true,
    }),
  ]);
  if (updated!.results.length === 0) {
    const current = await codeRefWhere(ctx, and(eq(codeRefs.tenantId, ctx.tenantId), eq(codeRefs.id, before.id)));
    // Someone else made the same change: one write, already done.
    if (current && changed.every((c) => current[c as keyof CodeRef] === next[c])) return { code_ref: current, changed: [] };
    throw new ToolError("conflict", `Code ref ${before.id} changed (${changed.join(", ")}) while this call ran; your change was not stored.`, {
      hint: "Re-read it with code_ref_query and decide again from what it holds now.",
    });
  }
  return { code_ref: (await codeRefWhere(ctx, eq(codeRefs.id, before.id)))!, changed };
}

/** Forgets a repository (its GitHub App access was removed); its code refs and recorded commits stay as history. */
export async function unregisterRepository(ctx: Ctx, repo: Repository): Promise<void> {
  await ctx.d1.batch([
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .delete(projectRepositories)
        .where(and(eq(projectRepositories.tenantId, ctx.tenantId), eq(projectRepositories.repositoryId, repo.id))),
    ),
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .delete(repositories)
        .where(and(eq(repositories.tenantId, ctx.tenantId), eq(repositories.id, repo.id))),
    ),
    activityStatement(ctx, { verb: "repo.unregistered", objectType: "repository", objectId: repo.id, summary: `unregistered ${repo.slug}`, ifPreviousChanged: true }),
  ]);
}

/** Which repositories repo_query reads: the caller's tenant's, narrowed by what the caller asked for (the project already resolved). */
export interface RepositoryFilter {
  /** Only the repositories linked to this project; rows then carry the link's role. */
  projectId?: string;
  /** One repository, by id or owner/name. */
  ref?: string;
  slug?: string;
  host?: string;
  /** Case-insensitive text in owner/name. */
  q?: string;
  /** The cursor's keyset (slug, id), to resume after it. */
  after?: ReadonlyArray<string | number | null> | null;
}

/** A page of repositories that pass the filter, by slug. */
export async function listRepositories(ctx: Ctx, f: RepositoryFilter, limit: number): Promise<Array<Repository & { role?: string }>> {
  const r = repositories;
  const where = and(
    eq(r.tenantId, ctx.tenantId),
    // `COLLATE NOCASE` so owner/name matches whatever its case, as before.
    f.ref !== undefined ? or(eq(r.id, f.ref), sql`${r.slug} = ${f.ref} COLLATE NOCASE`) : undefined,
    f.slug !== undefined ? sql`${r.slug} = ${f.slug} COLLATE NOCASE` : undefined,
    f.host !== undefined ? eq(r.host, f.host) : undefined,
    f.q !== undefined ? sql`instr(lower(${r.slug}), lower(${f.q})) > 0` : undefined,
    f.after ? sql`(${r.slug} > ${f.after[0]} OR (${r.slug} = ${f.after[0]} AND ${r.id} > ${f.after[1]}))` : undefined,
  );
  const pr = projectRepositories;
  const query =
    f.projectId !== undefined
      ? dbOf(ctx)
          .select({ ...repoFields, role: pr.role })
          .from(r)
          .innerJoin(pr, and(eq(pr.tenantId, r.tenantId), eq(pr.repositoryId, r.id), eq(pr.projectId, f.projectId)))
      : dbOf(ctx).select(repoFields).from(r);
  return query.where(where).orderBy(r.slug, r.id).limit(limit).all();
}

type LinkKey = readonly [tenantId: string, projectId: string, repositoryId: string];

const linkIs = ([tenantId, projectId, repositoryId]: LinkKey) =>
  and(eq(projectRepositories.tenantId, tenantId), eq(projectRepositories.projectId, projectId), eq(projectRepositories.repositoryId, repositoryId));

/** A role change of a project's link to a repository, only from exactly `from` (compare-and-swap). */
export function changeLinkRoleStatement(ctx: Ctx, key: LinkKey, from: string, to: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .update(projectRepositories)
      .set({ role: to })
      .where(and(linkIs(key), eq(projectRepositories.role, from), ne(projectRepositories.role, to))),
  );
}

/** A new link of a project to a repository; an existing link is left as it is. */
export function insertLinkStatement(ctx: Ctx, key: LinkKey, role: string, now: string): D1PreparedStatement {
  const [tenantId, projectId, repositoryId] = key;
  return statementOf(ctx.d1, dbOf(ctx).insert(projectRepositories).values({ tenantId, projectId, repositoryId, role, createdAt: now }).onConflictDoNothing());
}

/** The role a project's link to a repository holds (no row when unlinked). */
export function linkRoleStatement(ctx: Ctx, key: LinkKey): D1PreparedStatement {
  return statementOf(ctx.d1, dbOf(ctx).select({ role: projectRepositories.role }).from(projectRepositories).where(linkIs(key)));
}

/** A live (not deleted) code ref, or null. */
export async function findLiveCodeRef(ctx: Ctx, id: string): Promise<CodeRef | null> {
  return (await codeRefWhere(ctx, and(eq(codeRefs.tenantId, ctx.tenantId), eq(codeRefs.id, id), isNull(codeRefs.deletedAt)))) ?? null;
}

/** Which code refs code_ref_query reads: the caller's tenant's live refs, narrowed by what the caller asked for (ids already resolved). */
export interface CodeRefFilter {
  objectType?: string;
  objectId?: string;
  repositoryId?: string;
  refType?: string;
  prState?: string;
  runId?: string;
  /** The previous page's cursor, to resume after its last ref. */
  cursor?: string;
}

/** A page of code refs that pass the filter, newest first. */
export async function listCodeRefs(ctx: Ctx, f: CodeRefFilter, limit: number): Promise<CodeRef[]> {
  const where = and(
    eq(codeRefs.tenantId, ctx.tenantId),
    isNull(codeRefs.deletedAt),
    f.objectType !== undefined ? eq(codeRefs.objectType, f.objectType) : undefined,
    f.objectId !== undefined ? eq(codeRefs.objectId, f.objectId) : undefined,
    f.repositoryId !== undefined ? eq(codeRefs.repositoryId, f.repositoryId) : undefined,
    f.refType !== undefined ? eq(codeRefs.refType, f.refType) : undefined,
    f.prState !== undefined ? eq(codeRefs.prState, f.prState) : undefined,
    f.runId !== undefined ? eq(codeRefs.runId, f.runId) : undefined,
    afterTimeAndId(f.cursor, codeRefs.createdAt, codeRefs.id),
  );
  return (await dbOf(ctx).select(codeRefFields).from(codeRefs).where(where).orderBy(desc(codeRefs.createdAt), desc(codeRefs.id)).limit(limit).all()) as CodeRef[];
}

/** A repository of the caller's tenant, by id or owner/name. */
export async function findRepositoryId(ctx: Ctx, ref: string): Promise<string> {
  const row = await dbOf(ctx)
    .select({ id: repositories.id })
    .from(repositories)
    // `COLLATE NOCASE` so owner/name matches whatever its case, as before.
    .where(and(eq(repositories.tenantId, ctx.tenantId), or(eq(repositories.id, ref), sql`${repositories.slug} = ${ref} COLLATE NOCASE`)))
    .limit(1)
    .get();
  if (!row) throw notFound("repository", ref, "Pass a registered repository's id or owner/name (repo_query lists them).");
  return row.id;
}
