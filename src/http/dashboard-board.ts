/**
 * The dashboard's projects, project board and task page (docs/dashboard.md: Projects and the board), read through
 * the tools as the signed-in person. Filters the tools lack (repository, plan) are applied here, to
 * a bounded page of tasks.
 */
import type { Context, Hono } from "hono";
import type { Ctx } from "../core/context";
import { ToolError } from "../core/errors";
import { BoardPage, LANES, Lanes, ProjectsPage, type BoardData, type BoardFilters, type Card, type LaneId } from "../web/app/board";
import { TaskPage, type TaskData } from "../web/app/task";
import { actorNames, html, read, toolPage, viewerOf, type AppEnv } from "./dashboard-pages";

type Row = Record<string, unknown>;
type Page = { items: Row[]; next_cursor?: string };

/** Open tasks one board view reads (pages of 200), and the done lane's newest. */
const OPEN_MAX = 600;
const DONE_MAX = 50;
/** Blocked cards whose blockers are read (one task_get each); past it a card says only that it is blocked. */
const BLOCKER_READS = 24;
/** Code refs read for the repository filter. */
const REPO_REFS_MAX = 600;
const FILTER_MAX = 200;

/** A filter value the tools do not know is the caller's bad input, not a missing page. */
async function asFilter<T>(what: string, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ToolError && (e.code === "not_found" || e.code === "plan_not_found" || e.code === "invalid_input"))
      throw new ToolError("invalid_input", `Unknown ${what}: ${e.message}`, { hint: "Pick a value from the filter form, or clear the filters." });
    throw e;
  }
}

/** Follows next_cursor until `max` items are read; `more` says the list went on. */
async function pages(ctx: Ctx, tool: string, args: Row, max: number): Promise<{ items: Row[]; more: boolean }> {
  const items: Row[] = [];
  let cursor: string | undefined;
  do {
    const p = await read<Page>(ctx, tool, { ...args, limit: Math.min(200, max - items.length), cursor });
    items.push(...p.items);
    cursor = p.next_cursor;
  } while (cursor && items.length < max);
  return { items, more: cursor !== undefined };
}

function filtersOf(c: Context<AppEnv>): BoardFilters {
  const q = (name: string) => {
    const v = (c.req.query(name) ?? "").trim();
    if (v.length > FILTER_MAX) throw new ToolError("invalid_input", `The ${name} filter is longer than ${FILTER_MAX} characters.`, { hint: "Pick a value from the filter form." });
    return v;
  };
  return { label: q("label"), assignee: q("assignee"), repository: q("repository"), plan: q("plan") };
}

const laneOf = (t: Row): LaneId => (t.status === "todo" ? (t.state === "blocked" ? "blocked" : "ready") : (t.status as LaneId));

async function board(ctx: Ctx, key: string, f: BoardFilters): Promise<BoardData> {
  const found = await read<Page>(ctx, "project_query", { project_id: key, limit: 1 });
  const project = found.items[0];
  if (!project) throw new ToolError("not_found", `No project ${key}.`, { hint: "The projects page lists this tenant's projects." });
  const query = { project_id: project.id, label: f.label || undefined, assignee_actor_id: f.assignee || undefined };
  const [open, done, repoTasks, planTasks, actors, repos, plans] = await Promise.all([
    asFilter("label or assignee", pages(ctx, "task_query", { ...query, status: ["todo", "in_progress", "in_review"] }, OPEN_MAX)),
    asFilter("label or assignee", read<Page>(ctx, "task_query", { ...query, status: ["done"], order_by: "updated", limit: DONE_MAX })),
    f.repository ? asFilter("repository", pages(ctx, "code_ref_query", { repository_id: f.repository, object_type: "task" }, REPO_REFS_MAX)) : null,
    f.plan ? asFilter("plan", read<{ steps: Row[] }>(ctx, "view_progress", { plan_id: f.plan })) : null,
    read<Page>(ctx, "actor_query", { limit: 200 }),
    read<Page>(ctx, "repo_query", { limit: 100 }),
    read<Page>(ctx, "list_plans", { limit: 100 }),
  ]);
  const inRepo = repoTasks ? new Set(repoTasks.items.map((r) => String(r.object_id))) : null;
  const inPlan = planTasks ? new Set(planTasks.steps.map((s) => (s.task as Row | null)?.id).filter(Boolean)) : null;
  const keep = (t: Row) => (!inRepo || inRepo.has(String(t.id))) && (!inPlan || inPlan.has(t.id));
  const names = new Map(actors.items.map((a) => [String(a.id), String(a.display_name || a.external_ref || a.id)]));
  const tasks = [...open.items, ...done.items].filter(keep);
  const blocked = tasks.filter((t) => t.state === "blocked").slice(0, BLOCKER_READS);
  const blockers = new Map(await Promise.all(blocked.map(async (t) => [t.id, (await read<{ blockers: Row[] }>(ctx, "task_get", { task_id: t.id })).blockers] as const)));
  const lanes = Object.fromEntries(LANES.map((l) => [l.id, { cards: [] as Card[], more: false }])) as BoardData["lanes"];
  for (const t of tasks)
    lanes[laneOf(t)].cards.push({ task: t, assignee: t.assignee_actor_id ? (names.get(String(t.assignee_actor_id)) ?? String(t.assignee_actor_id)) : "", blockers: blockers.get(t.id) });
  lanes.done.more = done.next_cursor !== undefined;
  return { now: ctx.clock.now(), project, lanes, filters: f, options: { actors: actors.items, repos: repos.items, plans: plans.items }, truncated: open.more };
}

/** A code ref's page on its host: the URL it was recorded with when that is http(s), else one built from the repository. */
function codeRefHref(r: Row, repos: Map<string, Row>): string | null {
  const url = String(r.pr_url ?? r.url ?? "");
  if (/^https?:\/\//i.test(url)) return url;
  const repo = repos.get(String(r.repository_id));
  if (!repo) return null;
  const base = `https://${String(repo.host)}/${String(repo.slug)}`;
  if (r.ref_type === "pr" && r.pr_number) return `${base}/pull/${String(r.pr_number)}`;
  if (r.sha) return `${base}/commit/${String(r.sha)}`;
  if (r.branch) return `${base}/tree/${encodeURIComponent(String(r.branch))}`;
  return base;
}

async function taskData(ctx: Ctx, id: string): Promise<TaskData> {
  const detail = await read<Row & { task: Row }>(ctx, "task_get", { task_id: id });
  const taskId = detail.task.id;
  const [deps, dependents, refs, attachments, reviews, activity, names, repos] = await Promise.all([
    read<Page>(ctx, "task_query", { dependencies_of: taskId, limit: 100 }),
    read<Page>(ctx, "task_query", { dependents_of: taskId, limit: 100 }),
    read<Page>(ctx, "code_ref_query", { object_type: "task", object_id: taskId, limit: 100 }),
    read<Page>(ctx, "attachment_query", { object_type: "task", object_id: taskId, limit: 100 }),
    read<Page>(ctx, "handoff_query", { direction: "any", type: ["review"], related_task_id: taskId, limit: 50 }),
    read<Page>(ctx, "activity_query", { object_type: "task", object_id: taskId, limit: 50 }),
    actorNames(ctx),
    read<Page>(ctx, "repo_query", { limit: 200 }),
  ]);
  const repoById = new Map(repos.items.map((r) => [String(r.id), r]));
  return {
    now: ctx.clock.now(),
    detail,
    dependencies: deps.items,
    dependents: dependents.items,
    codeRefs: refs.items.map((r) => ({ ...r, href: codeRefHref(r, repoById) })),
    attachments: attachments.items,
    reviews: reviews.items,
    activity: activity.items,
    names,
  };
}

export function registerBoard(routes: Hono<AppEnv>): void {
  routes.get("/projects", (c) =>
    toolPage(c, async () => ProjectsPage({ viewer: await viewerOf(c), projects: (await read<Page>(c.get("ctx"), "project_query", { detail: "full", limit: 200 })).items })),
  );
  routes.get("/projects/:key", (c) => toolPage(c, async () => BoardPage({ viewer: await viewerOf(c), data: await board(c.get("ctx"), c.req.param("key"), filtersOf(c)) })));
  // The live script's refresh of the lanes: the same read, the lanes alone; a refusal is a status the script skips.
  routes.get("/live/board/:key", async (c) => {
    try {
      return html(c, Lanes({ data: await board(c.get("ctx"), c.req.param("key"), filtersOf(c)) }));
    } catch (e) {
      if (e instanceof ToolError) return c.text(e.message, e.code === "not_found" ? 404 : 400);
      throw e;
    }
  });
  routes.get("/tasks/:id", (c) => toolPage(c, async () => TaskPage({ viewer: await viewerOf(c), data: await taskData(c.get("ctx"), c.req.param("id")) })));
}
