/**
 * The dashboard's decision log and change ledger (docs/dashboard.md): read-only pages, every value
 * read through the tools as the signed-in person, so tenancy and input checks are the tools' own.
 */
import type { Context, Hono } from "hono";
import type { ChangeEvent } from "../changes/events";
import type { Ctx } from "../core/context";
import { notFound, ToolError } from "../core/errors";
import { DECISION_STATUSES, type Decision } from "../work/decisions/model";
import { CHANGES_PATH, ChangesetPage, ChangesPage, type Attempt, type Blame, type ChainCheck, type ChangesData } from "../web/app/changes";
import { DECISIONS_PATH, DecisionPage, DecisionsPage, type DecisionsData } from "../web/app/decisions";
import { nextQuery, param, read, toolPage, viewerOf, type AppEnv } from "./dashboard-pages";

type Page<T> = { items: T[]; next_cursor?: string };
type Project = { id: string; key: string; title: string };

const projectsOf = async (ctx: Ctx) => (await read<Page<Project>>(ctx, "project_query", { limit: 200 })).items;

async function decisionsData(c: Context<AppEnv>): Promise<DecisionsData> {
  const ctx = c.get("ctx");
  const q = param(c, "q", 500);
  const project = param(c, "project", 100);
  const status = param(c, "status", 20);
  const cursor = param(c, "cursor", 200);
  const semantic = c.req.query("semantic") === "1";
  const [found, projects] = await Promise.all([
    read<Page<Decision & { similarity?: number | null }> & { mode: string; note: string }>(ctx, "decision_query", {
      q: q || undefined,
      semantic: q ? semantic : undefined,
      project_id: project || undefined,
      status: status ? [status] : undefined,
      cursor: cursor || undefined,
      limit: 50,
    }),
    projectsOf(ctx),
  ]);
  const titles = new Map(found.items.map((d) => [d.id, d.title]));
  return {
    now: ctx.clock.now(),
    q,
    semantic,
    project,
    status,
    statuses: DECISION_STATUSES,
    projects,
    items: found.items,
    mode: found.mode,
    note: found.note,
    older: nextQuery({ q, project, status }, found.next_cursor),
    titles,
  };
}

const DECISION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// A supersede chain longer than this many hops either way is shown cut at the bound.
const CHAIN_MAX = 50;

/** A decision and its supersede chain (oldest first), one decision_query lookup by id per hop. */
async function decisionChain(ctx: Ctx, id: string): Promise<{ decision: Decision; chain: Decision[] }> {
  if (!DECISION_ID.test(id)) throw new ToolError("invalid_input", "That is not a decision id.", { hint: "Decision ids are UUIDs; pick one from the decision log." });
  const one = async (at: string) => (await read<Page<Decision>>(ctx, "decision_query", { ids: [at], limit: 1 })).items[0];
  const decision = await one(id);
  if (!decision) throw notFound("decision", id, "The decision log lists them.");
  const seen = new Set([decision.id]);
  /** The decisions one way along the chain from `decision`, nearest first. */
  const walk = async (next: (d: Decision) => string | null | undefined): Promise<Decision[]> => {
    const out: Decision[] = [];
    for (let at = next(decision); at && !seen.has(at) && out.length < CHAIN_MAX;) {
      const d = await one(at);
      if (!d) break;
      seen.add(d.id);
      out.push(d);
      at = next(d);
    }
    return out;
  };
  const older = (await walk((d) => d.supersedes_decision_id)).reverse();
  const newer = await walk((d) => d.superseded_by);
  return { decision, chain: [...older, decision, ...newer] };
}

async function decisionPage(c: Context<AppEnv>) {
  const ctx = c.get("ctx");
  const { decision, chain } = await decisionChain(ctx, c.req.param("id") ?? "");
  const [projects, actors] = await Promise.all([projectsOf(ctx), read<Page<{ id: string; display_name: string; external_ref: string }>>(ctx, "actor_query", { limit: 200 })]);
  return DecisionPage({
    viewer: await viewerOf(c),
    data: { now: ctx.clock.now(), decision, chain, project: projects.find((p) => p.id === decision.project_id), actors: actors.items },
  });
}

const verifyChain = (ctx: Ctx) => read<ChainCheck>(ctx, "change_verify", { limit: 5000 });

async function changesData(c: Context<AppEnv>): Promise<ChangesData> {
  const ctx = c.get("ctx");
  const path = param(c, "path", 1024);
  const since = param(c, "since", 64) || "7d";
  const cursor = param(c, "cursor", 200) || undefined;
  const now = ctx.clock.now();
  if (path) {
    const [timeline, blame, attempts, verify] = await Promise.all([
      read<Page<ChangeEvent>>(ctx, "change_diff", { entity_path: path, limit: 50, cursor }),
      read<Blame>(ctx, "blame", { entity_path: path }),
      read<{ items: Attempt[]; note: string }>(ctx, "prior_attempts", { entity_path: path, limit: 50 }),
      verifyChain(ctx),
    ]);
    return { now, path, since, timeline: { items: timeline.items, older: nextQuery({ path }, timeline.next_cursor) }, blame, attempts, verify };
  }
  const [history, verify] = await Promise.all([read<Page<ChangeEvent>>(ctx, "change_history", { since, limit: 50, cursor }), verifyChain(ctx)]);
  return { now, path, since, history: { items: history.items, older: nextQuery({ since }, history.next_cursor) }, verify };
}

async function changesetPage(c: Context<AppEnv>) {
  const ctx = c.get("ctx");
  const slug = c.req.param("id") ?? "";
  const found = await read<Page<ChangeEvent>>(ctx, "changeset", { changeset_id: slug, limit: 1000 });
  // The tool answers an unknown slug (or another tenant's) with an empty page, not an error.
  if (found.items.length === 0) throw new ToolError("not_found", `No events found for changeset '${slug}'.`, { hint: "Changesets are listed beside the recent history." });
  return ChangesetPage({ viewer: await viewerOf(c), slug, items: found.items, more: Boolean(found.next_cursor), now: ctx.clock.now() });
}

export function registerLedger(routes: Hono<AppEnv>): void {
  routes.get("/decisions", (c) => toolPage(c, async () => DecisionsPage({ viewer: await viewerOf(c), data: await decisionsData(c) }), [DECISIONS_PATH, "All decisions"]));
  routes.get("/decisions/:id", (c) => toolPage(c, () => decisionPage(c), [DECISIONS_PATH, "All decisions"]));
  routes.get("/changes", (c) => toolPage(c, async () => ChangesPage({ viewer: await viewerOf(c), data: await changesData(c) }), [CHANGES_PATH, "All changes"]));
  routes.get("/changes/changesets/:id", (c) => toolPage(c, () => changesetPage(c), [CHANGES_PATH, "All changes"]));
}
