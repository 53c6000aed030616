/** Projects (seed 001): project_create, project_update, project_query, project_brief. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { and, asc, count, desc, eq, exists, inArray, isNull, notInArray, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { compiled, dbOf, statementOf } from "../../db/client";
import { afterTimeAndId } from "../../core/cursor";
import { activity, decisions, knowledgeNotes, projectRepositories, projects, repositories } from "../../db/schema";
import { notFound, ToolError } from "../../core/errors";
import { activityItemFields, activityItemSchema, EMBEDDED_LIST_MAX, embeddedList } from "../shared";
import { repoRefMatch } from "../repos/model";
import { selectTaskSummaries, TASK_STATE_SQL, TASK_STATUSES, taskSummaryFields, taskT, toTaskSummary, type TaskSummaryRow } from "../tasks/summary";

export const PROJECT_STATUSES = ["planned", "active", "paused", "completed", "archived", "cancelled"] as const;

export const projectSchema = z.object({
  id: z.string().describe("Project id."),
  key: z.string().describe("Short key, unique per tenant (case-insensitive); task refs are KEY-number."),
  title: z.string().describe("Title."),
  summary: z.string().describe("One-paragraph summary."),
  description: z.string().describe("Longer description."),
  status: z.enum(PROJECT_STATUSES).describe("planned, active, paused, completed, archived or cancelled."),
  parent_project_id: z.string().nullable().describe("Parent project, or null."),
  owner_actor_id: z.string().nullable().describe("Owner, or null."),
  start_on: z.string().nullable().describe("Start date, or null."),
  target_on: z.string().nullable().describe("Target date, or null."),
  created_by: z.string().describe("Actor that created it."),
  created_at: z.string().describe("Creation time."),
  updated_at: z.string().describe("Last change."),
});
export type Project = z.infer<typeof projectSchema>;

export const KEY_RULE = /^[A-Za-z][A-Za-z0-9]{1,15}$/;

/** A key from a title: initials of its words, or its first letters. */
export function keyFromTitle(title: string): string {
  // NFKD splits accented letters into letter + combining mark; drop the marks so "Café" stays one word.
  const words = title
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[^A-Za-z0-9 ]+/g, " ")
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  const letters = words.length >= 2 ? words.map((w) => w[0]).join("") : (words[0] ?? "");
  const key = letters
    .replace(/^[0-9]+/, "")
    .slice(0, 6)
    .toUpperCase();
  return key.length >= 2 ? key : `P${key || "X"}`.padEnd(2, "X");
}

/** A project row's fields, keyed by SQL column name so rows keep the shape the tools return. */
const projectFields = {
  id: projects.id,
  key: projects.key,
  title: projects.title,
  summary: projects.summary,
  description: projects.description,
  status: projects.status,
  parent_project_id: projects.parentProjectId,
  owner_actor_id: projects.ownerActorId,
  start_on: projects.startOn,
  target_on: projects.targetOn,
  created_by: projects.createdBy,
  created_at: projects.createdAt,
  updated_at: projects.updatedAt,
};

// Compiled once: every task call looks up its project.
const projectByRef = compiled(["tenant", "ref"], (db, v) =>
  db
    .select(projectFields)
    .from(projects)
    // `COLLATE NOCASE` as the live-key index is declared, so the key lookup stays on it.
    .where(and(eq(projects.tenantId, v.tenant), isNull(projects.deletedAt), or(eq(projects.id, v.ref), sql`${projects.key} = ${v.ref} COLLATE NOCASE`)))
    .limit(1),
);

/** A live project of the caller's tenant by id or key (case-insensitive), or null. */
export async function lookupProject(ctx: Ctx, ref: string): Promise<Project | null> {
  return projectByRef(ctx.d1, { tenant: ctx.tenantId, ref: ref.trim() }).first<Project>();
}

export async function findProject(ctx: Ctx, ref: string): Promise<Project> {
  const row = await lookupProject(ctx, ref);
  if (!row) throw notFound("project", ref, "Use project_query to list projects, by id or key.");
  return row;
}

export function checkDates(start: string | null | undefined, target: string | null | undefined): void {
  if (start && target && start > target) {
    throw new ToolError("invalid_dates", `start_on ${start} is after target_on ${target}.`, { hint: "Set a start date on or before the target date." });
  }
}

/** Whether making `parentId` the parent of `projectId` would close a loop. */
// Binds, in order: the would-be parent, the tenant, the project being re-parented.
export const PARENT_CYCLE_SQL = `WITH RECURSIVE up(id) AS (
    SELECT ?
    UNION SELECT p.parent_project_id FROM projects p JOIN up ON p.id = up.id
    WHERE p.tenant_id = ? AND p.parent_project_id IS NOT NULL)
  SELECT 1 FROM up WHERE id = ?`;

// Hand SQL: the cycle check is a recursive CTE, which drizzle cannot say.
export async function checkParent(ctx: Ctx, parentRef: string, projectId: string | null): Promise<string> {
  const parent = await findProject(ctx, parentRef);
  if (projectId !== null) {
    const loop = await ctx.d1.prepare(PARENT_CYCLE_SQL).bind(parent.id, ctx.tenantId, projectId).first();
    if (loop) {
      throw new ToolError("cycle", `Making ${parent.key} the parent of this project would create a cycle.`, {
        hint: "A project cannot sit under itself or under one of its own sub-projects; pick another parent or clear it with null.",
      });
    }
  }
  return parent.id;
}

export const taskCountsSchema = z.object({
  total: z.number().int().describe("All tasks."),
  by_status: z.record(z.string(), z.number().int()).describe("Count per status."),
  ready: z.number().int().describe("Open tasks whose dependencies are all done."),
  blocked: z.number().int().describe("Open tasks waiting on a dependency."),
});

export async function taskCounts(ctx: Ctx, projectIds: string[]): Promise<Map<string, z.infer<typeof taskCountsSchema>>> {
  const out = new Map<string, z.infer<typeof taskCountsSchema>>();
  for (const id of projectIds) out.set(id, { total: 0, by_status: Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])), ready: 0, blocked: 0 });
  for (let i = 0; i < projectIds.length; i += 90) {
    const chunk = projectIds.slice(i, i + 90);
    const rows = await dbOf(ctx)
      .select({ project_id: taskT.projectId, status: taskT.status, state: sql<string>`(${sql.raw(TASK_STATE_SQL)})`.as("state"), n: count() })
      .from(taskT)
      .where(and(eq(taskT.tenantId, ctx.tenantId), inArray(taskT.projectId, chunk)))
      .groupBy(taskT.projectId, taskT.status, sql`state`)
      .all();
    for (const r of rows) {
      const c = out.get(r.project_id)!;
      c.total += r.n;
      c.by_status[r.status] = (c.by_status[r.status] ?? 0) + r.n;
      if (r.state === "ready") c.ready += r.n;
      if (r.state === "blocked") c.blocked += r.n;
    }
  }
  return out;
}

export interface BriefLimits {
  max_tasks: number;
  max_decisions: number;
  max_knowledge: number;
  max_activity: number;
}

/** project_brief's answer; task_get's include=brief embeds the same. */
export async function readProjectBrief(ctx: Ctx, input: { project: string } & BriefLimits) {
  const project = await findProject(ctx, input.project);
  const pr = alias(projectRepositories, "pr");
  const r = alias(repositories, "r");
  const open = selectTaskSummaries(ctx, { ...taskSummaryFields, created: sql<string>`${taskT.createdAt}`.as("created") })
    .where(and(eq(taskT.tenantId, ctx.tenantId), eq(taskT.projectId, project.id), notInArray(taskT.status, ["done", "cancelled"])))
    .as("open");
  const [tasksRes, activityRes, reposRes, decisionsRes, notesRes] = await ctx.d1.batch<
    TaskSummaryRow & z.infer<typeof activityItemSchema> & { id: string; slug: string; role: string; title: string; status: string; at: string }
  >([
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .select()
        .from(open)
        .orderBy(sql`CASE ${open.state} WHEN 'ready' THEN 0 ELSE 1 END`, asc(open.priority), asc(open.created))
        .limit(input.max_tasks),
    ),
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .select(activityItemFields)
        .from(activity)
        .where(and(eq(activity.tenantId, ctx.tenantId), eq(activity.projectId, project.id)))
        .orderBy(desc(activity.seq))
        .limit(input.max_activity),
    ),
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .select({ id: r.id, slug: r.slug, role: pr.role, n: sql<number>`COUNT(*) OVER ()`.as("n") })
        .from(pr)
        .innerJoin(r, and(eq(r.id, pr.repositoryId), eq(r.tenantId, pr.tenantId)))
        .where(and(eq(pr.tenantId, ctx.tenantId), eq(pr.projectId, project.id)))
        .orderBy(pr.role, r.slug)
        .limit(EMBEDDED_LIST_MAX + 1),
    ),
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .select({ id: decisions.id, title: decisions.title, status: decisions.status, at: sql`${decisions.createdAt}`.as("at") })
        .from(decisions)
        .where(and(eq(decisions.tenantId, ctx.tenantId), eq(decisions.projectId, project.id)))
        .orderBy(desc(decisions.seq))
        .limit(input.max_decisions),
    ),
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .select({ id: knowledgeNotes.id, title: knowledgeNotes.title, status: sql`${knowledgeNotes.kind}`.as("status"), at: sql`${knowledgeNotes.updatedAt}`.as("at") })
        .from(knowledgeNotes)
        .where(and(eq(knowledgeNotes.tenantId, ctx.tenantId), eq(knowledgeNotes.projectId, project.id)))
        .orderBy(desc(knowledgeNotes.updatedAt), desc(knowledgeNotes.seq))
        .limit(input.max_knowledge),
    ),
  ]);
  const counts = await taskCounts(ctx, [project.id]);
  const repoRows = reposRes!.results as unknown as Array<{ id: string; slug: string; role: string; n: number }>;
  // The brief orders by role, repo_query by slug, so the pointer starts repo_query from its first page.
  const repos = embeddedList(repoRows, repoRows[0]?.n ?? 0, { tool: "repo_query", arguments: { project_id: project.id } });
  return {
    project,
    task_counts: counts.get(project.id)!,
    top_open_tasks: (tasksRes!.results as TaskSummaryRow[]).map(toTaskSummary),
    recent_decisions: decisionsRes!.results.map((d) => ({ id: d.id, title: d.title, status: d.status, at: d.at })),
    knowledge: notesRes!.results.map((n) => ({ id: n.id, title: n.title, kind: n.status, updated_at: n.at })),
    repositories: repos.items.map((r) => ({ id: r.id, slug: r.slug, role: r.role })),
    recent_activity: activityRes!.results as Array<z.infer<typeof activityItemSchema>>,
    lists: { repositories: repos.info },
  };
}

/** Which projects project_query reads: the caller's tenant's live projects, narrowed by what the caller asked for (the owner already resolved). */
export interface ProjectFilter {
  /** One project, by id or key. */
  ref?: string;
  statuses?: readonly string[];
  /** Case-insensitive text in key, title or summary. */
  q?: string;
  ownerActorId?: string;
  /** Only projects linked to this repository: its id, owner/name or remote URL. */
  repositoryRef?: string;
  /** The previous page's cursor, to resume after its last project. */
  cursor?: string;
}

/** A page of projects that pass the filter, newest first. */
export async function listProjects(ctx: Ctx, f: ProjectFilter, limit: number): Promise<Project[]> {
  const pr = alias(projectRepositories, "pr");
  const r = alias(repositories, "r");
  const where = and(
    eq(projects.tenantId, ctx.tenantId),
    isNull(projects.deletedAt),
    // `COLLATE NOCASE` as the live-key index is declared.
    f.ref !== undefined ? or(eq(projects.id, f.ref), sql`${projects.key} = ${f.ref} COLLATE NOCASE`) : undefined,
    f.statuses?.length ? inArray(projects.status, [...f.statuses]) : undefined,
    f.q !== undefined
      ? or(sql`instr(lower(${projects.key}), lower(${f.q})) > 0`, sql`instr(lower(${projects.title}), lower(${f.q})) > 0`, sql`instr(lower(${projects.summary}), lower(${f.q})) > 0`)
      : undefined,
    f.ownerActorId !== undefined ? eq(projects.ownerActorId, f.ownerActorId) : undefined,
    f.repositoryRef !== undefined
      ? exists(
          dbOf(ctx)
            .select({ one: sql`1` })
            .from(pr)
            .innerJoin(r, and(eq(r.tenantId, pr.tenantId), eq(r.id, pr.repositoryId)))
            .where(and(eq(pr.tenantId, projects.tenantId), eq(pr.projectId, projects.id), repoRefMatch(f.repositoryRef, r))),
        )
      : undefined,
    afterTimeAndId(f.cursor, projects.createdAt, projects.id),
  );
  return (await dbOf(ctx).select(projectFields).from(projects).where(where).orderBy(desc(projects.createdAt), desc(projects.id)).limit(limit).all()) as Project[];
}

export interface ProjectInsert {
  id: string;
  key: string;
  title: string;
  summary: string;
  description: string;
  status: string;
  parentProjectId: string | null;
  ownerActorId: string | null;
  startOn: string | null;
  targetOn: string | null;
  now: string;
}

/** A new project; returns its id, or nothing when a live project holds the key. */
export function insertProjectStatement(ctx: Ctx, p: ProjectInsert): D1PreparedStatement {
  const { now, ...row } = p;
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .insert(projects)
      // drizzle writes null for a column left out (SQLite has no DEFAULT in VALUES): task_seq's default is spelled out.
      .values({ ...row, tenantId: ctx.tenantId, createdBy: ctx.actorId, createdAt: now, updatedAt: now, taskSeq: 0 })
      .onConflictDoNothing()
      .returning({ id: projects.id }),
  );
}

/**
 * Writes the changed columns; when the parent changes to a project, the cycle check runs again inside the
 * update, so two racing re-parents cannot make a loop. Returns the id when it wrote.
 */
// Hand SQL: the cycle guard is a recursive CTE, which drizzle cannot say.
export function updateProjectStatement(ctx: Ctx, id: string, changes: Record<string, string | null>, changed: string[], now: string): D1PreparedStatement {
  const sets = changed.map((k) => `${k} = ?`);
  const values = changed.map((k) => changes[k]);
  const cycleGuard = changed.includes("parent_project_id") && changes.parent_project_id ? ` AND NOT EXISTS (${PARENT_CYCLE_SQL})` : "";
  const guardParams = cycleGuard ? [changes.parent_project_id, ctx.tenantId, id] : [];
  return ctx.d1.prepare(`UPDATE projects SET ${sets.join(", ")}, updated_at = ? WHERE tenant_id = ? AND id = ?${cycleGuard} RETURNING id`).bind(...values, now, ctx.tenantId, id, ...guardParams);
}
