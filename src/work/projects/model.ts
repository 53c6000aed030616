/** Projects (seed 001): project_create, project_update, project_query, project_brief. */
import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../db/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { notFound, ToolError } from "../../core/errors";
import {
  activityItemSchema, ACTIVITY_ITEM_COLUMNS, activityStatement, actorRefField, clearable, cursorField, dateField, afterTimeAndId, EMBEDDED_LIST_MAX, embeddedList, limitField, listsSchema,
  resolveActor, keysetPage,
} from "../shared";
import { repoRefCondition } from "../repos/model";
import { TASK_STATE_SQL, TASK_STATUSES, TASK_SUMMARY_COLUMNS, taskSummarySchema, toTaskSummary, type TaskSummaryRow } from "../tasks/summary";

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

const PROJECT_COLUMNS = `id, key, title, summary, description, status, parent_project_id, owner_actor_id, start_on, target_on, created_by, created_at, updated_at`;

const KEY_RULE = /^[A-Za-z][A-Za-z0-9]{1,15}$/;

/** A key from a title: initials of its words, or its first letters. */
export function keyFromTitle(title: string): string {
  // NFKD splits accented letters into letter + combining mark; drop the marks so "Café" stays one word.
  const words = title.normalize("NFKD").replace(/\p{M}+/gu, "").replace(/[^A-Za-z0-9 ]+/g, " ").trim().split(/\s+/).filter(Boolean);
  const letters = words.length >= 2 ? words.map((w) => w[0]).join("") : (words[0] ?? "");
  const key = letters.replace(/^[0-9]+/, "").slice(0, 6).toUpperCase();
  return key.length >= 2 ? key : `P${key || "X"}`.padEnd(2, "X");
}

/** A project by id or key (case-insensitive), among live projects of the caller's tenant. */
/** A live project of the caller's tenant by id or key (case-insensitive), or null. */
export async function lookupProject(ctx: Ctx, ref: string): Promise<Project | null> {
  return ctx.d1
    .prepare(`SELECT ${PROJECT_COLUMNS} FROM projects WHERE tenant_id = ? AND deleted_at IS NULL AND (id = ? OR key = ? COLLATE NOCASE) LIMIT 1`)
    .bind(ctx.tenantId, ref.trim(), ref.trim())
    .first<Project>();
}

export async function findProject(ctx: Ctx, ref: string): Promise<Project> {
  const row = await lookupProject(ctx, ref);
  if (!row) throw notFound("project", ref, "Use project_query to list projects, by id or key.");
  return row;
}

function checkDates(start: string | null | undefined, target: string | null | undefined): void {
  if (start && target && start > target) {
    throw new ToolError("invalid_dates", `start_on ${start} is after target_on ${target}.`, { hint: "Set a start date on or before the target date." });
  }
}

/** Whether making `parentId` the parent of `projectId` would close a loop. */
// Binds, in order: the would-be parent, the tenant, the project being re-parented.
const PARENT_CYCLE_SQL = `WITH RECURSIVE up(id) AS (
    SELECT ?
    UNION SELECT p.parent_project_id FROM projects p JOIN up ON p.id = up.id
    WHERE p.tenant_id = ? AND p.parent_project_id IS NOT NULL)
  SELECT 1 FROM up WHERE id = ?`;

async function checkParent(ctx: Ctx, parentRef: string, projectId: string | null): Promise<string> {
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

export const projectCreateTool = defineTool({
  name: "project_create",
  title: "Create a project",
  toolset: "projects",
  description: "Create a project; its key (unique, from the title when omitted) prefixes task refs (KEY-number).",
  input: z.object({
    title: z.string().trim().min(1).max(200).describe("Title."),
    key: z.string().max(16).regex(KEY_RULE, "key must be 2–16 letters or digits, starting with a letter").optional().describe("Short key: 2–16 letters or digits."),
    summary: z.string().max(2000).optional().describe("One-paragraph summary."),
    description: z.string().max(20000).optional().describe("Longer description."),
    status: z.enum(PROJECT_STATUSES).default("active").describe("Initial status."),
    parent_project_id: z.string().max(100).optional().describe("Parent project id or key."),
    owner_actor_id: actorRefField("Owner.").optional(),
    start_on: dateField("Start date (YYYY-MM-DD).").optional(),
    target_on: dateField("Target date (YYYY-MM-DD).").optional(),
  }),
  output: z.object({ project: projectSchema.describe("The new project.") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    checkDates(input.start_on, input.target_on);
    const parentId = input.parent_project_id ? await checkParent(ctx, input.parent_project_id, null) : null;
    const ownerId = input.owner_actor_id ? await resolveActor(ctx, input.owner_actor_id) : null;
    const now = iso(ctx.clock.now());
    const id = uuidv7();
    // Keys are stored upper-case, so task refs read the same whoever typed them (API-12).
    const base = (input.key ?? keyFromTitle(input.title)).toUpperCase();
    // An explicit key must be free; a derived one takes the first free suffix.
    const candidates = input.key ? [base] : [base, ...Array.from({ length: 20 }, (_, i) => `${base.slice(0, 14)}${i + 2}`)];
    for (const key of candidates) {
      const [inserted] = await ctx.d1.batch<{ id: string }>([
        ctx.d1
          .prepare(
            `INSERT INTO projects (id, tenant_id, key, title, summary, description, status, parent_project_id, owner_actor_id, start_on, target_on, created_by, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
          )
          .bind(id, ctx.tenantId, key, input.title, input.summary ?? "", input.description ?? "", input.status, parentId, ownerId,
            input.start_on ?? null, input.target_on ?? null, ctx.actorId, now, now),
        activityStatement(ctx, { verb: "project.created", objectType: "project", objectId: id, projectId: id, summary: `created project ${key}: ${input.title}`, ifPreviousChanged: true }),
      ]);
      if (inserted!.results.length === 0) continue;
      return { project: await findProject(ctx, id) };
    }
    throw new ToolError("key_taken", `Project key '${base}' is already used by a live project in this tenant.`, {
      hint: "Pass another key, or omit key to have one derived from the title.",
    });
  },
  summarize: (r) => `Created project ${r.project.key} (${r.project.id}).`,
});

const nullableDate = (d: string) => clearable(dateField(d)).optional();

export const projectUpdateTool = defineTool({
  name: "project_update",
  title: "Update a project",
  toolset: "projects",
  description: "Patch a project: only the fields named change; null clears dates, owner and parent.",
  input: z.object({
    project_id: z.string().min(1).max(100).describe("Project id or key."),
    patch: z
      .object({
        title: z.string().trim().min(1).max(200).optional().describe("New title."),
        summary: z.string().max(2000).optional().describe("New summary."),
        description: z.string().max(20000).optional().describe("New description."),
        status: z.enum(PROJECT_STATUSES).optional().describe("New status."),
        start_on: nullableDate("Start date (YYYY-MM-DD)."),
        target_on: nullableDate("Target date (YYYY-MM-DD)."),
        owner_actor_id: clearable(actorRefField("Owner.")).optional(),
        parent_project_id: clearable(z.string().max(100).describe("Parent project id or key.")).optional(),
      })
      .strict()
      .refine((p) => Object.keys(p).length > 0, "patch names no field")
      .describe("The fields to change."),
  }),
  output: z.object({ project: projectSchema.describe("The project after the change."), changed: z.array(z.string()).describe("Fields whose value changed.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const before = await findProject(ctx, input.project_id);
    const p = input.patch;
    const next: Record<string, string | null> = {};
    for (const f of ["title", "summary", "description", "status", "start_on", "target_on"] as const) if (p[f] !== undefined) next[f] = p[f];
    checkDates(p.start_on !== undefined ? p.start_on : before.start_on, p.target_on !== undefined ? p.target_on : before.target_on);
    if (p.owner_actor_id !== undefined) next.owner_actor_id = p.owner_actor_id === null ? null : await resolveActor(ctx, p.owner_actor_id);
    if (p.parent_project_id !== undefined) next.parent_project_id = p.parent_project_id === null ? null : await checkParent(ctx, p.parent_project_id, before.id);
    const changed = Object.keys(next).filter((k) => next[k] !== before[k as keyof Project]);
    if (changed.length === 0) return { project: before, changed };
    const now = iso(ctx.clock.now());
    const sets = changed.map((k) => `${k} = ?`);
    const values = changed.map((k) => next[k]);
    // The cycle check runs again inside the update, so two racing re-parents cannot make a loop.
    const cycleGuard = changed.includes("parent_project_id") && next.parent_project_id
      ? ` AND NOT EXISTS (${PARENT_CYCLE_SQL})`
      : "";
    const guardParams = cycleGuard ? [next.parent_project_id, ctx.tenantId, before.id] : [];
    const [updated] = await ctx.d1.batch<{ id: string }>([
      ctx.d1.prepare(`UPDATE projects SET ${sets.join(", ")}, updated_at = ? WHERE tenant_id = ? AND id = ?${cycleGuard} RETURNING id`)
        .bind(...values, now, ctx.tenantId, before.id, ...guardParams),
      activityStatement(ctx, {
        verb: "project.updated", objectType: "project", objectId: before.id, projectId: before.id,
        summary: `updated ${changed.join(", ")} of ${before.key}`, metadata: { changed }, ifPreviousChanged: true,
      }),
    ]);
    if (updated!.results.length === 0) {
      throw new ToolError("cycle", "The new parent would create a cycle (the hierarchy changed while this call ran).", { hint: "Re-read the projects and pick another parent." });
    }
    return { project: await findProject(ctx, before.id), changed };
  },
  summarize: (r) => (r.changed.length ? `Updated ${r.changed.join(", ")} of ${r.project.key}.` : `No change to ${r.project.key}.`),
});

const taskCountsSchema = z.object({
  total: z.number().int().describe("All tasks."),
  by_status: z.record(z.string(), z.number().int()).describe("Count per status."),
  ready: z.number().int().describe("Open tasks whose dependencies are all done."),
  blocked: z.number().int().describe("Open tasks waiting on a dependency."),
});

async function taskCounts(ctx: Ctx, projectIds: string[]): Promise<Map<string, z.infer<typeof taskCountsSchema>>> {
  const out = new Map<string, z.infer<typeof taskCountsSchema>>();
  for (const id of projectIds) out.set(id, { total: 0, by_status: Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])), ready: 0, blocked: 0 });
  for (let i = 0; i < projectIds.length; i += 90) {
    const chunk = projectIds.slice(i, i + 90);
    const rows = await ctx.d1
      .prepare(
        `SELECT t.project_id, t.status, (${TASK_STATE_SQL}) AS state, COUNT(*) AS n
         FROM tasks t WHERE t.tenant_id = ? AND t.project_id IN (${chunk.map(() => "?").join(", ")}) GROUP BY t.project_id, t.status, state`,
      )
      .bind(ctx.tenantId, ...chunk)
      .all<{ project_id: string; status: string; state: string; n: number }>();
    for (const r of rows.results) {
      const c = out.get(r.project_id)!;
      c.total += r.n;
      c.by_status[r.status] = (c.by_status[r.status] ?? 0) + r.n;
      if (r.state === "ready") c.ready += r.n;
      if (r.state === "blocked") c.blocked += r.n;
    }
  }
  return out;
}

export const projectQueryTool = defineTool({
  name: "project_query",
  title: "Find projects",
  toolset: "projects",
  description: "List or search projects, newest first.",
  input: z.object({
    project_id: z.string().max(100).optional().describe("One project, by id or key."),
    status: z.array(z.enum(PROJECT_STATUSES)).max(6).optional().describe("Only these statuses."),
    q: z.string().max(200).optional().describe("Case-insensitive text in key, title or summary."),
    owner_actor_id: actorRefField("Only projects owned by this actor.").optional(),
    repository_id: z.string().min(1).max(500).optional().describe("Only projects linked to this repository: its id, owner/name or remote URL."),
    detail: z.enum(["summary", "full"]).default("summary").describe("full adds task_counts."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(projectSchema.extend({ task_counts: taskCountsSchema.optional().describe("With detail: 'full'.") })).describe("Projects."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page; absent on the last page."),
  }),
  fields: true,
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const where = ["tenant_id = ?", "deleted_at IS NULL"];
    const params: unknown[] = [ctx.tenantId];
    if (input.project_id) { where.push("(id = ? OR key = ? COLLATE NOCASE)"); params.push(input.project_id, input.project_id); }
    if (input.status?.length) { where.push(`status IN (${input.status.map(() => "?").join(", ")})`); params.push(...input.status); }
    if (input.q?.trim()) {
      where.push("(instr(lower(key), lower(?)) > 0 OR instr(lower(title), lower(?)) > 0 OR instr(lower(summary), lower(?)) > 0)");
      params.push(input.q.trim(), input.q.trim(), input.q.trim());
    }
    if (input.owner_actor_id) { where.push("owner_actor_id = ?"); params.push(await resolveActor(ctx, input.owner_actor_id)); }
    if (input.repository_id) {
      const repo = repoRefCondition(input.repository_id, "r");
      where.push(`EXISTS (SELECT 1 FROM project_repositories pr JOIN repositories r ON r.tenant_id = pr.tenant_id AND r.id = pr.repository_id
                  WHERE pr.tenant_id = projects.tenant_id AND pr.project_id = projects.id AND ${repo.sql})`);
      params.push(...repo.params);
    }
    const after = afterTimeAndId(input.cursor, "created_at", "id");
    if (after) { where.push(after.sql); params.push(...after.params); }
    const rows = await ctx.d1
      .prepare(`SELECT ${PROJECT_COLUMNS} FROM projects WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`)
      .bind(...params, input.limit + 1)
      .all<Project>();
    const { page, cursor } = keysetPage(rows.results, input.limit, (last) => [last.created_at, last.id]);
    const counts = input.detail === "full" ? await taskCounts(ctx, page.map((p) => p.id)) : null;
    return {
      items: page.map((p) => (counts ? { ...p, task_counts: counts.get(p.id)! } : p)),
      ...cursor,
    };
  },
  summarize: (r) => `${r.items.length} project(s).`,
});

export const projectBriefTool = defineTool({
  name: "project_brief",
  title: "Project brief",
  toolset: "projects",
  description:
    "One-call orientation on a project: status, top tasks, decisions, knowledge, repositories, activity.",
  input: z.object({
    project: z.string().min(1).max(100).describe("Project key or id."),
    max_tasks: z.number().int().min(0).max(50).default(10).describe("Open tasks to include."),
    max_decisions: z.number().int().min(0).max(50).default(10).describe("Recent decisions to include."),
    max_knowledge: z.number().int().min(0).max(50).default(10).describe("Knowledge titles to include."),
    max_activity: z.number().int().min(0).max(100).default(20).describe("Recent activity items."),
  }),
  output: z.object({
    project: projectSchema.describe("The project."),
    task_counts: taskCountsSchema.describe("Task counts."),
    top_open_tasks: z.array(taskSummarySchema).describe("Open tasks: ready first, then by priority."),
    recent_decisions: z.array(z.object({ id: z.string().describe("Decision id."), title: z.string().describe("Title."), status: z.string().describe("Status."), at: z.string().describe("When logged.") })).describe("Recent decisions, newest first."),
    knowledge: z
      .array(z.object({ id: z.string().describe("Note id."), title: z.string().describe("Title."), kind: z.string().describe("note, runbook, finding or snippet."), updated_at: z.string().describe("Last changed.") }))
      .describe("The project's knowledge notes, most recently changed first (knowledge_search for their text)."),
    repositories: z.array(z.object({ id: z.string().describe("Repository id."), slug: z.string().describe("owner/name."), role: z.string().describe("Role.") }))
      .describe(`Linked repositories, by role then slug (up to ${EMBEDDED_LIST_MAX}).`),
    recent_activity: z.array(activityItemSchema).describe("Recent activity in the project, newest first."),
    lists: listsSchema({ repositories: "Linked repositories (repo_query with project_id lists them all, by slug)." }),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const project = await findProject(ctx, input.project);
    const [tasksRes, activityRes, reposRes, decisionsRes, notesRes] = await ctx.d1.batch<TaskSummaryRow & z.infer<typeof activityItemSchema> & { id: string; slug: string; role: string; title: string; status: string; at: string }>([
      ctx.d1
        .prepare(
          `SELECT * FROM (SELECT ${TASK_SUMMARY_COLUMNS}, t.created_at AS created FROM tasks t JOIN projects p ON p.id = t.project_id
             WHERE t.tenant_id = ? AND t.project_id = ? AND t.status NOT IN ('done', 'cancelled'))
           ORDER BY CASE state WHEN 'ready' THEN 0 ELSE 1 END, priority ASC, created ASC LIMIT ?`,
        )
        .bind(ctx.tenantId, project.id, input.max_tasks),
      ctx.d1
        .prepare(`SELECT ${ACTIVITY_ITEM_COLUMNS} FROM activity WHERE tenant_id = ? AND project_id = ? ORDER BY seq DESC LIMIT ?`)
        .bind(ctx.tenantId, project.id, input.max_activity),
      ctx.d1
        .prepare(`SELECT r.id, r.slug, pr.role, COUNT(*) OVER () AS n FROM project_repositories pr JOIN repositories r ON r.id = pr.repository_id AND r.tenant_id = pr.tenant_id
                  WHERE pr.tenant_id = ? AND pr.project_id = ? ORDER BY pr.role, r.slug LIMIT ?`)
        .bind(ctx.tenantId, project.id, EMBEDDED_LIST_MAX + 1),
      ctx.d1
        .prepare(`SELECT id, title, status, created_at AS at FROM decisions WHERE tenant_id = ? AND project_id = ? ORDER BY seq DESC LIMIT ?`)
        .bind(ctx.tenantId, project.id, input.max_decisions),
      ctx.d1
        .prepare(`SELECT id, title, kind AS status, updated_at AS at FROM knowledge_notes WHERE tenant_id = ? AND project_id = ? ORDER BY updated_at DESC, seq DESC LIMIT ?`)
        .bind(ctx.tenantId, project.id, input.max_knowledge),
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
  },
  summarize: (r) => `${r.project.key} (${r.project.status}): ${r.task_counts.total} task(s), ${r.task_counts.ready} ready, ${r.task_counts.blocked} blocked.`,
});
