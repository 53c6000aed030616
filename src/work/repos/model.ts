/** Repositories and code refs (seed 001): where "done" points at real code. */
import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../db/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { invalidInput, notFound, ToolError } from "../../core/errors";
import { activityStatement, afterTimeAndId, cursorField, decodeKeyset, limitField, keysetPage } from "../shared";
import { findObject } from "../collab/model";
import { findProject } from "../projects/model";
import { runFilterValue, runRepoContext, type RunRepoContext } from "../runs/model";
import { findTask } from "../tasks/model";

export interface RemoteParts { host: string; owner: string; name: string; url: string }

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
    try { u = new URL(text); } catch { return null; }
    if (!["https:", "http:", "ssh:", "git:"].includes(u.protocol)) return null;
    host = u.hostname;
    path = u.pathname;
  }
  // Dot segments ("..", "%2e%2e") are refused before URL parsing would quietly resolve them away.
  if (/(^|[/\\:])(?:\.|%2e){1,2}(?=[/\\?#]|$)/i.test(text)) return null;
  const parts = path.replace(/^\/+|\/+$/g, "").replace(/\.git$/i, "").split("/");
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
function redactRemote(raw: string): string {
  return raw.trim().replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^\s/]*@/i, "$1***@").replace(/[?#].*$/s, "");
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
const REPO_COLUMNS = "id, host, owner, name, slug, remote_url, default_branch, created_at";

/** The SQL condition (on a `repositories` row aliased `alias`) matching a reference by id, owner/name or remote URL. */
export function repoRefCondition(ref: string, alias = "repositories"): { sql: string; params: string[] } {
  const remote = normalizeRemote(ref)?.url ?? "";
  return { sql: `(${alias}.id = ? OR ${alias}.slug = ? COLLATE NOCASE OR ${alias}.remote_url = ?)`, params: [ref.trim(), ref.trim(), remote] };
}

/** A registered repository of the caller's tenant, by id, owner/name or remote URL. */
export async function findRepository(ctx: Ctx, ref: string): Promise<Repository> {
  const match = repoRefCondition(ref);
  const row = await ctx.d1
    .prepare(`SELECT ${REPO_COLUMNS} FROM repositories WHERE tenant_id = ? AND ${match.sql} LIMIT 1`)
    .bind(ctx.tenantId, ...match.params)
    .first<Repository>();
  if (!row) throw notFound("repository", ref, "Register it with repo_register, or list them with repo_query.");
  return row;
}

/** Registers a repository for the caller's tenant, or finds it; repo_register and the GitHub App webhooks share it. */
export async function registerRepository(ctx: Ctx, parts: RemoteParts, defaultBranch: string): Promise<{ repository: Repository; created: boolean }> {
  const id = uuidv7();
  const now = iso(ctx.clock.now());
  const [inserted, , found] = await ctx.d1.batch<Repository>([
    ctx.d1
      .prepare(`INSERT INTO repositories (id, tenant_id, host, owner, name, slug, remote_url, default_branch, created_by, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`)
      .bind(id, ctx.tenantId, parts.host, parts.owner, parts.name, `${parts.owner}/${parts.name}`, parts.url, defaultBranch, ctx.actorId, now),
    activityStatement(ctx, { verb: "repo.registered", objectType: "repository", objectId: id, summary: `registered ${parts.owner}/${parts.name}`, ifPreviousChanged: true }),
    ctx.d1.prepare(`SELECT ${REPO_COLUMNS} FROM repositories WHERE tenant_id = ? AND remote_url = ?`).bind(ctx.tenantId, parts.url),
  ]);
  return { repository: found!.results[0]!, created: inserted!.results.length > 0 };
}

/** A registered repository of the caller's tenant by its normalized remote URL, or null. */
export async function repositoryByRemote(ctx: Ctx, parts: RemoteParts): Promise<Repository | null> {
  return ctx.d1.prepare(`SELECT ${REPO_COLUMNS} FROM repositories WHERE tenant_id = ? AND remote_url = ?`).bind(ctx.tenantId, parts.url).first<Repository>();
}

export const repoRegisterTool = defineTool({
  name: "repo_register",
  title: "Register a repository",
  toolset: "repos",
  // The remote's credentials are stripped by the tool itself before anything is stored or echoed.
  verbatim: ["remote_url"],
  description: "Resolve or register a git repository, de-duplicated by its normalized remote URL (credentials are stripped and never stored). Pass remote_url (a URL, or owner/name alone), or owner and name (host defaults to github.com). A default_branch given for a repository already registered with another one is refused with conflict (the registered one stands). The server cannot see your working directory, so there is no autodetection here.",
  input: z.object({
    remote_url: z.string().max(500).optional().describe("The remote (https://github.com/acme/api(.git), git@github.com:acme/api.git, ssh://…) or owner/name alone."),
    host: z.string().max(200).optional().describe("Git host (default github.com) when giving owner and name."),
    owner: z.string().max(100).optional().describe("Owner, with name."),
    name: z.string().max(100).optional().describe("Repository name, with owner."),
    slug: z.string().max(200).optional().describe("owner/name (or a remote URL), instead of owner and name."),
    default_branch: z.string().min(1).max(200).optional().describe("Default branch (default main); fixed at registration."),
  }),
  output: z.object({ repository: repositorySchema.describe("The repository."), created: z.boolean().describe("False when it was already registered.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    // Either field takes either form: a remote URL or owner/name alone.
    const remote = input.remote_url ?? input.slug ?? (input.owner && input.name ? `${input.owner}/${input.name}` : undefined);
    if (!remote) throw invalidInput("Nothing to register.", "Pass remote_url (the output of `git remote get-url origin`, or owner/name), or owner and name.");
    const parts = parseRepoRef(remote, input.host);
    if (!parts) throw invalidInput(`'${redactRemote(remote)}' is not a repository remote this server understands.`, "Use owner/name, https://host/owner/name, git@host:owner/name.git or ssh://git@host/owner/name.");
    const result = await registerRepository(ctx, parts, input.default_branch ?? "main");
    // Found, not created: a default branch the caller named but did not get would be a write acknowledged and dropped.
    if (!result.created && input.default_branch !== undefined && input.default_branch !== result.repository.default_branch) {
      throw new ToolError("conflict", `${result.repository.slug} is already registered with default branch '${result.repository.default_branch}', not '${input.default_branch}'.`, {
        hint: "Omit default_branch to resolve the registered repository; its default branch is fixed at registration.",
      });
    }
    return result;
  },
  summarize: (r) => `${r.created ? "Registered" : "Found"} ${r.repository.slug} (${r.repository.id}).`,
});

export const REPO_ROLES = ["primary", "dependency", "docs"] as const;

export const repoLinkTool = defineTool({
  name: "repo_link",
  title: "Link a repository to a project",
  toolset: "repos",
  description: "Link a project to a registered repository, with a role (primary, dependency or docs). Linking again with the same role, or with none, changes nothing. Changing the role is deliberate: pass the role you replace as expected_role; a different role without it is refused with conflict.",
  input: z.object({
    project_id: z.string().min(1).max(100).describe("Project id or key."),
    repository_id: z.string().min(1).max(200).optional().describe("Repository id (or owner/name)."),
    repo_slug: z.string().min(1).max(200).optional().describe("owner/name, instead of repository_id."),
    role: z.enum(REPO_ROLES).optional().describe("primary, dependency or docs; a new link defaults to primary, an existing one keeps its role unless given."),
    expected_role: z.enum(REPO_ROLES).optional().describe("To change an existing link's role: the role it has now (else conflict). Needs role."),
  }),
  output: z.object({ project_id: z.string().describe("Project."), repository: repositorySchema.describe("Repository."), role: z.enum(REPO_ROLES).describe("The link's role.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const ref = input.repository_id ?? input.repo_slug;
    if (!ref) throw invalidInput("repository_id or repo_slug is required.", "Name the repository to link.");
    if (input.expected_role && !input.role) throw invalidInput("expected_role needs role, the role to change it to.", "Pass role, or drop expected_role.");
    const [project, repo] = await Promise.all([findProject(ctx, input.project_id), findRepository(ctx, ref)]);
    const role = input.role ?? "primary";
    const key = [ctx.tenantId, project.id, repo.id] as const;
    // Compare-and-swap: a new link, or a role change from exactly the role the caller named.
    const write = input.expected_role
      ? ctx.d1.prepare(`UPDATE project_repositories SET role = ? WHERE tenant_id = ? AND project_id = ? AND repository_id = ? AND role = ? AND role <> ?`)
        .bind(role, ...key, input.expected_role, role)
      : ctx.d1.prepare(`INSERT INTO project_repositories (tenant_id, project_id, repository_id, role, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`)
        .bind(...key, role, iso(ctx.clock.now()));
    const [, , link] = await ctx.d1.batch<{ role: (typeof REPO_ROLES)[number] }>([
      write,
      activityStatement(ctx, {
        verb: "repo.linked", objectType: "project", objectId: project.id, projectId: project.id, summary: `${repo.slug} linked as ${role}`,
        metadata: input.expected_role ? { repository_id: repo.id, previous_role: input.expected_role } : { repository_id: repo.id }, ifPreviousChanged: true,
      }),
      ctx.d1.prepare(`SELECT role FROM project_repositories WHERE tenant_id = ? AND project_id = ? AND repository_id = ?`).bind(...key),
    ]);
    const stored = link!.results[0]?.role;
    if (!stored) {
      throw new ToolError("conflict", `${repo.slug} is not linked to ${project.key}, so it has no role ${input.expected_role} to replace.`, { hint: "Drop expected_role to link it." });
    }
    if (input.role && stored !== input.role) {
      throw new ToolError("conflict", `${repo.slug} is linked to ${project.key} as ${stored}${input.expected_role ? `, not ${input.expected_role}` : ""}; the link was left as it is.`, {
        hint: `To make it ${input.role}, retry with expected_role: ${stored}.`,
      });
    }
    return { project_id: project.id, repository: repo, role: stored };
  },
  summarize: (r) => `${r.repository.slug} is a ${r.role} repository of the project.`,
});

export const repoQueryTool = defineTool({
  name: "repo_query",
  title: "Find repositories",
  toolset: "repos",
  description: "List the tenant's repositories, by slug order; project_id shows a project's linked repositories with their roles.",
  input: z.object({
    repository_id: z.string().min(1).max(200).optional().describe("One repository (id or owner/name)."),
    slug: z.string().min(1).max(200).optional().describe("Exact owner/name (case-insensitive)."),
    project_id: z.string().min(1).max(100).optional().describe("Only repositories linked to this project."),
    host: z.string().min(1).max(200).optional().describe("Only this host."),
    q: z.string().max(200).optional().describe("Text in owner/name."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(repositorySchema.extend({ role: z.string().optional().describe("The link's role, with project_id.") })).describe("Repositories."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const where = ["r.tenant_id = ?"];
    const params: unknown[] = [ctx.tenantId];
    let join = "";
    let role = "";
    if (input.project_id) {
      join = "JOIN project_repositories pr ON pr.tenant_id = r.tenant_id AND pr.repository_id = r.id AND pr.project_id = ?";
      role = ", pr.role";
      params.unshift((await findProject(ctx, input.project_id)).id);
    }
    if (input.repository_id) { where.push("(r.id = ? OR r.slug = ? COLLATE NOCASE)"); params.push(input.repository_id, input.repository_id); }
    if (input.slug) { where.push("r.slug = ? COLLATE NOCASE"); params.push(input.slug); }
    if (input.host) { where.push("r.host = ?"); params.push(input.host.toLowerCase()); }
    if (input.q?.trim()) { where.push("instr(lower(r.slug), lower(?)) > 0"); params.push(input.q.trim()); }
    const after = decodeKeyset(input.cursor, 2);
    if (after) { where.push("(r.slug > ? OR (r.slug = ? AND r.id > ?))"); params.push(after[0], after[0], after[1]); }
    const rows = await ctx.d1
      .prepare(`SELECT r.id, r.host, r.owner, r.name, r.slug, r.remote_url, r.default_branch, r.created_at${role} FROM repositories r ${join}
                WHERE ${where.join(" AND ")} ORDER BY r.slug, r.id LIMIT ?`)
      .bind(...params, input.limit + 1)
      .all<Repository & { role?: string }>();
    const { page, cursor } = keysetPage(rows.results, input.limit, (last) => [last.slug, last.id]);
    return { items: page, ...cursor };
  },
  summarize: (r) => `${r.items.length} repository(ies).`,
});

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
export const CODE_REF_COLUMNS = "id, object_type, object_id, ref_type, repository_id, sha, branch, pr_number, pr_url, pr_state, title, url, run_id, created_by, created_at";

const SHA = z.string().max(64).regex(/^[0-9a-fA-F]{7,64}$/, "sha must be 7–64 hex characters");
const refFields = {
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
  return { ref: { ...r, branch, sha: r.sha ?? (sameBranch ? run.headSha ?? undefined : undefined) }, repositoryId: repositoryId ?? run.repositoryId };
}

export async function addCodeRef(ctx: Ctx, objectType: (typeof CODE_REF_OBJECTS)[number], objectId: string, projectId: string | null, input: RefInput): Promise<CodeRef> {
  const run = await runRepoContext(ctx, input.run_id);
  const filled = withRunContext(input, input.repository_id ? (await findRepository(ctx, input.repository_id)).id : null, run);
  const r = filled.ref;
  checkRefShape(r);
  let repositoryId = filled.repositoryId;
  if (!repositoryId && projectId) {
    const primaries = await ctx.d1
      .prepare(`SELECT repository_id FROM project_repositories WHERE tenant_id = ? AND project_id = ? AND role = 'primary' LIMIT 2`)
      .bind(ctx.tenantId, projectId)
      .all<{ repository_id: string }>();
    if (primaries.results.length === 1) repositoryId = primaries.results[0]!.repository_id;
  }
  const id = uuidv7();
  const now = iso(ctx.clock.now());
  const label = r.ref_type === "commit" ? r.sha!.toLowerCase().slice(0, 12) : r.ref_type === "pr" ? `PR ${r.pr_number ?? r.pr_url}` : (r.branch ?? r.title ?? r.url ?? "");
  await ctx.d1.batch([
    ctx.d1
      .prepare(`INSERT INTO code_refs (id, tenant_id, object_type, object_id, ref_type, repository_id, sha, branch, pr_number, pr_url, pr_state, title, url, run_id, created_by, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .bind(id, ctx.tenantId, objectType, objectId, r.ref_type, repositoryId, r.sha?.toLowerCase() ?? null, r.branch ?? null, r.pr_number ?? null,
        r.pr_url ?? null, r.pr_state ?? (r.ref_type === "pr" ? "open" : null), r.title ?? "", r.url ?? null, run?.runId ?? null, ctx.actorId, now),
    activityStatement(ctx, { verb: "code_ref.added", objectType, objectId, projectId, summary: `${r.ref_type} ${label}`, metadata: { code_ref_id: id } }),
  ]);
  return (await ctx.d1.prepare(`SELECT ${CODE_REF_COLUMNS} FROM code_refs WHERE id = ?`).bind(id).first<CodeRef>())!;
}

export const taskCodeRefTool = defineTool({
  name: "task_code_ref",
  title: "Record a task's code",
  toolset: "repos",
  description: "Record the code that delivered a task: a commit, branch, PR, tag or compare. This is the evidence requires_evidence asks for. Repository, branch and sha default from your current run (its last run_heartbeat), so a commit is often just task_id and ref_type; the repository otherwise defaults to the project's only primary repository.",
  input: z.object({ task_id: z.string().min(1).max(100).describe("The task (id or KEY-number)."), ...refFields }),
  output: z.object({ code_ref: codeRefSchema.describe("The recorded ref.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, { task_id, ...r }) => {
    const task = await findTask(ctx, task_id);
    return { code_ref: await addCodeRef(ctx, "task", task.id, task.project_id, r) };
  },
  summarize: (r) => `Recorded ${r.code_ref.ref_type} ${r.code_ref.id}.`,
});

export const codeRefAddTool = defineTool({
  name: "code_ref_add",
  title: "Add a code ref",
  toolset: "repos",
  description: "Attach a code reference (commit, branch, PR, tag, compare) to a task, decision, note or project. Same run-context defaults as task_code_ref.",
  input: z.object({
    object_type: z.enum(CODE_REF_OBJECTS).describe("task, decision, note or project."),
    object_id: z.string().min(1).max(100).describe("The object's id."),
    ...refFields,
  }),
  output: z.object({ code_ref: codeRefSchema.describe("The recorded ref.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, { object_type, object_id, ...r }) => {
    if (object_type === "task") {
      const task = await findTask(ctx, object_id);
      return { code_ref: await addCodeRef(ctx, "task", task.id, task.project_id, r) };
    }
    const target = await findObject(ctx, object_type, object_id);
    return { code_ref: await addCodeRef(ctx, object_type, target.id, target.projectId, r) };
  },
  summarize: (r) => `Recorded ${r.code_ref.ref_type} ${r.code_ref.id}.`,
});

/**
 * Writes a code ref's changed fields and their activity (pr.merged / pr.closed when a PR ends,
 * code_ref.updated otherwise); code_ref_update and the pull_request webhook share it.
 */
export async function applyCodeRefChange(ctx: Ctx, before: CodeRef, next: Record<string, string | null>): Promise<{ code_ref: CodeRef; changed: string[] }> {
  const changed = Object.keys(next).filter((k) => next[k] !== before[k as keyof CodeRef]);
  if (changed.length === 0) return { code_ref: before, changed };
  const prMove = changed.includes("pr_state") && (next.pr_state === "merged" || next.pr_state === "closed");
  // The same project the ref's code_ref.added went to, so the move shows on that project's timeline.
  const projectId = before.object_type === "project" ? before.object_id
    : before.object_type === "task" || before.object_type === "decision"
      ? (await ctx.d1.prepare(`SELECT project_id FROM ${before.object_type === "task" ? "tasks" : "decisions"} WHERE tenant_id = ? AND id = ?`)
        .bind(ctx.tenantId, before.object_id).first<{ project_id: string | null }>())?.project_id ?? null
      : null;
  // Compare-and-swap on the fields being changed: a change decided on a stale read (say, moving a PR
  // that was merged meanwhile) is refused instead of overwriting the other write.
  const [updated] = await ctx.d1.batch<{ id: string }>([
    ctx.d1.prepare(`UPDATE code_refs SET ${changed.map((c) => `${c} = ?`).join(", ")} WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL AND ${changed.map((c) => `${c} IS ?`).join(" AND ")} RETURNING id`)
      .bind(...changed.map((c) => next[c]), ctx.tenantId, before.id, ...changed.map((c) => before[c as keyof CodeRef] ?? null)),
    activityStatement(ctx, {
      verb: prMove ? `pr.${next.pr_state}` : "code_ref.updated", objectType: before.object_type, objectId: before.object_id, projectId,
      summary: prMove ? `PR ${before.pr_number ?? before.pr_url} ${next.pr_state}` : `code ref ${changed.join(", ")} changed`, metadata: { code_ref_id: before.id, changed },
      ifPreviousChanged: true,
    }),
  ]);
  if (updated!.results.length === 0) {
    const current = await ctx.d1.prepare(`SELECT ${CODE_REF_COLUMNS} FROM code_refs WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, before.id).first<CodeRef>();
    // Someone else made the same change: one write, already done.
    if (current && changed.every((c) => current[c as keyof CodeRef] === next[c])) return { code_ref: current, changed: [] };
    throw new ToolError("conflict", `Code ref ${before.id} changed (${changed.join(", ")}) while this call ran; your change was not stored.`, {
      hint: "Re-read it with code_ref_query and decide again from what it holds now.",
    });
  }
  return { code_ref: (await ctx.d1.prepare(`SELECT ${CODE_REF_COLUMNS} FROM code_refs WHERE id = ?`).bind(before.id).first<CodeRef>())!, changed };
}

export const codeRefUpdateTool = defineTool({
  name: "code_ref_update",
  title: "Update a code ref",
  toolset: "repos",
  description: "Move a PR forward (pr_state open, draft, merged, closed) or fix a ref's sha, title or url. A PR that becomes merged or closed records pr.merged / pr.closed on the timeline.",
  input: z.object({
    code_ref_id: z.string().min(1).max(100).describe("The code ref."),
    patch: z.object({
      pr_state: z.enum(PR_STATES).optional().describe("New PR state."),
      sha: SHA.optional().describe("Commit SHA."),
      title: z.string().max(300).optional().describe("Title."),
      url: z.string().url().max(500).optional().describe("Link."),
    }).strict().refine((p) => Object.keys(p).length > 0, "patch names no field").describe("Fields to change."),
  }),
  output: z.object({ code_ref: codeRefSchema.describe("The ref after the change."), changed: z.array(z.string()).describe("Fields that changed.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const before = await ctx.d1.prepare(`SELECT ${CODE_REF_COLUMNS} FROM code_refs WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL`).bind(ctx.tenantId, input.code_ref_id).first<CodeRef>();
    if (!before) throw notFound("code ref", input.code_ref_id, "code_ref_query lists them.");
    if (input.patch.pr_state && before.ref_type !== "pr") throw invalidInput("pr_state applies to PR refs only.", "Drop pr_state for this ref.");
    // A merged PR stays merged; a closed one may be reopened.
    if (input.patch.pr_state && before.pr_state === "merged" && input.patch.pr_state !== "merged") {
      throw new ToolError("invalid_transition", "A merged PR cannot move to another state.", { hint: "Record a new PR ref for follow-up work." });
    }
    const next: Record<string, string | null> = {};
    if (input.patch.pr_state !== undefined) next.pr_state = input.patch.pr_state;
    if (input.patch.sha !== undefined) next.sha = input.patch.sha.toLowerCase();
    if (input.patch.title !== undefined) next.title = input.patch.title;
    if (input.patch.url !== undefined) next.url = input.patch.url;
    return applyCodeRefChange(ctx, before, next);
  },
  summarize: (r) => `Code ref ${r.code_ref.id}: ${r.changed.join(", ") || "no change"}.`,
});

export const codeRefQueryTool = defineTool({
  name: "code_ref_query",
  title: "Find code refs",
  toolset: "repos",
  description: "What code delivered this work: code refs by object, repository, ref type, PR state or run, newest first.",
  input: z.object({
    object_type: z.enum(CODE_REF_OBJECTS).optional().describe("Kind of object."),
    object_id: z.string().min(1).max(100).optional().describe("The object (a task may be given by KEY-number)."),
    repository_id: z.string().min(1).max(200).optional().describe("Repository id or owner/name."),
    ref_type: z.enum(REF_TYPES).optional().describe("Only this ref type."),
    pr_state: z.enum(PR_STATES).optional().describe("Only PRs in this state."),
    run_id: z.string().min(1).max(100).optional().describe("Only refs recorded in this run (run_key or run id)."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({ items: z.array(codeRefSchema).describe("Code refs, newest first."), next_cursor: z.string().optional().describe("Pass as cursor for the next page.") }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const where = ["tenant_id = ?", "deleted_at IS NULL"];
    const params: unknown[] = [ctx.tenantId];
    if (input.object_type) { where.push("object_type = ?"); params.push(input.object_type); }
    if (input.object_id) {
      // Resolved the way code_ref_add resolves it: a task by KEY-number, a project by key.
      const id = input.object_type === "task" || input.object_type === "project"
        ? (await findObject(ctx, input.object_type, input.object_id)).id
        : !input.object_type && /^[A-Za-z][A-Za-z0-9]{1,15}-\d+$/.test(input.object_id) ? (await findTask(ctx, input.object_id)).id : input.object_id;
      where.push("object_id = ?");
      params.push(id);
    }
    if (input.repository_id) { where.push("repository_id = ?"); params.push((await findRepository(ctx, input.repository_id)).id); }
    if (input.ref_type) { where.push("ref_type = ?"); params.push(input.ref_type); }
    if (input.pr_state) { where.push("pr_state = ?"); params.push(input.pr_state); }
    if (input.run_id) { where.push("run_id = ?"); params.push(await runFilterValue(ctx, input.run_id)); }
    const after = afterTimeAndId(input.cursor, "created_at", "id");
    if (after) { where.push(after.sql); params.push(...after.params); }
    const rows = await ctx.d1
      .prepare(`SELECT ${CODE_REF_COLUMNS} FROM code_refs WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`)
      .bind(...params, input.limit + 1)
      .all<CodeRef>();
    const { page, cursor } = keysetPage(rows.results, input.limit, (last) => [last.created_at, last.id]);
    return { items: page, ...cursor };
  },
  summarize: (r) => `${r.items.length} code ref(s).`,
});

/** Forgets a repository (its GitHub App access was removed); its code refs and recorded commits stay as history. */
export async function unregisterRepository(ctx: Ctx, repo: Repository): Promise<void> {
  await ctx.d1.batch([
    ctx.d1.prepare(`DELETE FROM project_repositories WHERE tenant_id = ? AND repository_id = ?`).bind(ctx.tenantId, repo.id),
    ctx.d1.prepare(`DELETE FROM repositories WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, repo.id),
    activityStatement(ctx, { verb: "repo.unregistered", objectType: "repository", objectId: repo.id, summary: `unregistered ${repo.slug}`, ifPreviousChanged: true }),
  ]);
}
