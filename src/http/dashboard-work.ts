/**
 * The dashboard's runs and code pages (docs/dashboard.md: Runs, Code): read-only, every value read
 * through the tools as the signed-in person, so tenancy and input checks are the tools' own.
 */
import type { Context, Hono } from "hono";
import type { Ctx } from "../core/context";
import { RUN_STATUSES, type Run } from "../work/runs/model";
import { CODE_PATH, CodePage, type CodeData } from "../web/app/code";
import { RUNS_PATH, RunPage, RunsPage, type Produced, type RunsData } from "../web/app/runs";
import { namer, nextQuery, param, read, toolPage, viewerOf, type AppEnv } from "./dashboard-pages";

type Row = Record<string, unknown>;
type Page<T> = { items: T[]; next_cursor?: string };

/** Runs whose rollup one page reads (a run_summary each); past it a run shows no rollup. */
const SUMMARY_READS = 30;

async function produced(ctx: Ctx, runs: Run[]): Promise<Map<string, Produced>> {
  const shown = runs.slice(0, SUMMARY_READS);
  const sums = await Promise.all(shown.map((r) => read<Produced>(ctx, "run_summary", { run_id: r.id })));
  return new Map(shown.map((r, i) => [r.id, sums[i]!]));
}

async function runsData(c: Context<AppEnv>): Promise<RunsData> {
  const ctx = c.get("ctx");
  const status = param(c, "status", 20);
  const cursor = param(c, "cursor", 200);
  const [found, who] = await Promise.all([read<Page<Run>>(ctx, "run_query", { status: status ? [status] : undefined, cursor: cursor || undefined, limit: 100 }), namer(ctx)]);
  return { now: ctx.clock.now(), status, statuses: RUN_STATUSES, runs: found.items, who, produced: await produced(ctx, found.items), older: nextQuery({ status }, found.next_cursor) };
}

async function runPage(c: Context<AppEnv>) {
  const ctx = c.get("ctx");
  const ref = c.req.param("id") ?? "";
  const got = await read<{ run: Run; children: Run[]; children_truncated: boolean }>(ctx, "run_get", {
    ...(ref.startsWith("run-") ? { run_key: ref } : { run_id: ref }),
    include_children: true,
  });
  const [summary, activity, who, childProduced] = await Promise.all([
    read<Produced>(ctx, "run_summary", { run_id: got.run.id }),
    read<Page<Row>>(ctx, "activity_query", { run_id: got.run.id, limit: 100 }),
    namer(ctx),
    produced(ctx, got.children),
  ]);
  return RunPage({
    viewer: await viewerOf(c),
    data: { now: ctx.clock.now(), run: got.run, produced: summary, children: got.children, childrenMore: got.children_truncated, childProduced, activity: activity.items, who },
  });
}

async function codeData(c: Context<AppEnv>): Promise<CodeData> {
  const ctx = c.get("ctx");
  const session = param(c, "session", 128);
  const cursor = param(c, "cursor", 200);
  // The freshness last checked: a page view does not ask GitHub for every repository's head.
  const [indexes, sessions, review] = await Promise.all([
    read<{ items: Row[] }>(ctx, "index_status", { check_head: false }),
    read<Page<Row>>(ctx, "list_review_sessions", { limit: 20, cursor: cursor || undefined }),
    session ? read<NonNullable<CodeData["review"]>>(ctx, "get_review_status", { session_id: session }) : undefined,
  ]);
  return { now: ctx.clock.now(), indexes: indexes.items, sessions: sessions.items, olderSessions: nextQuery({}, sessions.next_cursor), session, review };
}

export function registerWork(routes: Hono<AppEnv>): void {
  routes.get("/runs", (c) => toolPage(c, async () => RunsPage({ viewer: await viewerOf(c), data: await runsData(c) }), [RUNS_PATH, "All runs"]));
  routes.get("/runs/:id", (c) => toolPage(c, () => runPage(c), [RUNS_PATH, "All runs"]));
  routes.get("/code", (c) => toolPage(c, async () => CodePage({ viewer: await viewerOf(c), data: await codeData(c) }), [CODE_PATH, "Code"]));
}
