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
import { ErrorPage } from "../web/app/errors";
import { html, read, viewerOf, type AppEnv } from "./dashboard";

type Page<T> = { items: T[]; next_cursor?: string };
type Project = { id: string; key: string; title: string };

/** How a tool's refusal reads on a page: what a person's input can cause (invalid_input, invalid_since, …). */
const statusOf = (code: string): number | undefined => (code === "not_found" ? 404 : code.startsWith("invalid_") ? 400 : undefined);

/** Renders a page, or the error page when a tool refuses the person's input. */
export async function answer(c: Context<AppEnv>, back: [string, string], render: () => Promise<unknown>) {
  try {
    return html(c, await render());
  } catch (e) {
    const status = e instanceof ToolError ? statusOf(e.code) : undefined;
    if (!status || !(e instanceof ToolError)) throw e;
    return html(c, ErrorPage({ viewer: await viewerOf(c), error: { status, message: e.message, hint: e.hint }, back }), status);
  }
}

/** A query parameter, bounded before any tool sees it (the tools bound it again). */
export function param(c: Context, name: string, max: number): string {
  const v = (c.req.query(name) ?? "").trim();
  if (v.length > max) throw new ToolError("invalid_input", `${name} is longer than ${max} characters.`, { hint: "Shorten it." });
  return v;
}

/** The query string of the page after this one: the same filters, plus the tool's cursor. */
function nextQuery(filters: Record<string, string>, cursor: string | undefined): string | undefined {
  if (!cursor) return undefined;
  const q = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
  q.set("cursor", cursor);
  return q.toString();
}

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
// decision_query reads decisions by listing only: a decision and the older ones it supersedes are
// found by walking the listing back from the newest, up to this many pages of 200.
const SCAN_PAGES = 25;

/** A decision and its supersede chain (oldest first), read from decision_query's own listing. */
async function decisionChain(ctx: Ctx, id: string): Promise<{ decision: Decision; chain: Decision[] }> {
  if (!DECISION_ID.test(id)) throw new ToolError("invalid_input", "That is not a decision id.", { hint: "Decision ids are UUIDs; pick one from the decision log." });
  const seen = new Map<string, Decision>();
  const oldestMissing = (): string | undefined => {
    let at = id;
    for (let d = seen.get(at); d; d = seen.get(at)) {
      if (!d.supersedes_decision_id) return undefined;
      at = d.supersedes_decision_id;
    }
    return at;
  };
  let cursor: string | undefined;
  for (let i = 0; i < SCAN_PAGES && oldestMissing(); i++) {
    const page = await read<Page<Decision>>(ctx, "decision_query", { limit: 200, cursor });
    for (const d of page.items) seen.set(d.id, d);
    cursor = page.next_cursor;
    if (!cursor) break;
  }
  const decision = seen.get(id);
  if (!decision) throw notFound("decision", id, cursor ? `It is not among the newest ${SCAN_PAGES * 200} decisions; decision_query lists them all.` : "The decision log lists them.");
  const older: Decision[] = [];
  for (let d = decision.supersedes_decision_id ? seen.get(decision.supersedes_decision_id) : undefined; d; d = d.supersedes_decision_id ? seen.get(d.supersedes_decision_id) : undefined)
    older.unshift(d);
  const newer: Decision[] = [];
  // Everything newer than the decision was read before it; the bound guards against a malformed chain.
  for (let d = decision.superseded_by ? seen.get(decision.superseded_by) : undefined; d && newer.length < seen.size; d = d.superseded_by ? seen.get(d.superseded_by) : undefined) newer.push(d);
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
  routes.get("/decisions", (c) => answer(c, [DECISIONS_PATH, "All decisions"], async () => DecisionsPage({ viewer: await viewerOf(c), data: await decisionsData(c) })));
  routes.get("/decisions/:id", (c) => answer(c, [DECISIONS_PATH, "All decisions"], () => decisionPage(c)));
  routes.get("/changes", (c) => answer(c, [CHANGES_PATH, "All changes"], async () => ChangesPage({ viewer: await viewerOf(c), data: await changesData(c) })));
  routes.get("/changes/changesets/:id", (c) => answer(c, [CHANGES_PATH, "All changes"], () => changesetPage(c)));
}
