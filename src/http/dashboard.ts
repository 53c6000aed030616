/**
 * The team's dashboard at /app (docs/dashboard.md): server-rendered pages on the same data as the
 * tools, read and written only through the tools' own registry (never a second path to the data),
 * for the signed-in person's tenant. Sign-in exchanges an API key for an `HttpOnly` session cookie;
 * every form carries a CSRF token; the pages run no script they did not ship themselves.
 */
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { appSessionOf, APP_SESSION_COOKIE, APP_SESSION_HOURS, endAppSession, startAppSession } from "../auth/app-session";
import { identityForApiKey } from "../auth/identity";
import type { Ctx } from "../core/context";
import { systemClock } from "../core/time";
import { dbOf } from "../db/client";
import { APP_STYLESHEET } from "../web/app/layout";
import { ActivityItems, OverviewPage, type OverviewData } from "../web/app/overview";
import { LIVE_SCRIPT } from "../web/app/live";
import { AppSignInPage } from "../web/app/signin";
import { csrfOk, issueCsrf } from "../web/security";
import { callerBuckets, charge, requestMeter } from "./rate-limit";
import { DASHBOARD_PATH, html, read, viewerOf, type AppEnv } from "./dashboard-pages";
import { registerLedger } from "./dashboard-ledger";
import { registerActions } from "./dashboard-actions";
import { registerBoard } from "./dashboard-board";
import { registerWork } from "./dashboard-work";
import { registerKnowledge } from "./dashboard-knowledge";
import { registerPlans } from "./dashboard-plans";

export { DASHBOARD_PATH };
export const dashboardRoutes = new Hono<AppEnv>();

type Row = Record<string, unknown>;

dashboardRoutes.get("/live.js", (c) => c.body(LIVE_SCRIPT, 200, { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff" }));

dashboardRoutes.get("/style.css", (c) => c.body(APP_STYLESHEET, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=300" }));

dashboardRoutes.get("/signin", (c) => html(c, AppSignInPage({ csrf: issueCsrf(c) })));

dashboardRoutes.post("/signin", async (c) => {
  const form = await c.req.formData().catch(() => null);
  if (!form || !csrfOk(c, form, new URL(c.req.url).origin)) return html(c, AppSignInPage({ csrf: issueCsrf(c), error: "The form expired or came from another site. Try again." }), 403);
  const key = form.get("api_key");
  const identity = typeof key === "string" ? await identityForApiKey(dbOf({ d1: c.env.DB }), key.trim()) : null;
  if (!identity) return html(c, AppSignInPage({ csrf: issueCsrf(c), error: "That key is not a live API key of this server." }), 401);
  const token = await startAppSession(dbOf({ d1: c.env.DB }), identity, form.get("readonly") === "1" ? "readonly" : "full", systemClock.now());
  setCookie(c, APP_SESSION_COOKIE, token, { path: "/", secure: true, httpOnly: true, sameSite: "Lax", maxAge: APP_SESSION_HOURS * 3600 });
  return c.redirect(DASHBOARD_PATH, 303);
});

dashboardRoutes.post("/signout", async (c) => {
  const form = await c.req.formData().catch(() => null);
  if (!form || !csrfOk(c, form, new URL(c.req.url).origin)) return c.text("The form expired or came from another site.", 403);
  await endAppSession(dbOf({ d1: c.env.DB }), getCookie(c, APP_SESSION_COOKIE));
  deleteCookie(c, APP_SESSION_COOKIE, { path: "/", secure: true });
  return c.redirect(`${DASHBOARD_PATH}/signin`, 303);
});

// Every other page needs a live session; its ctx is the signed-in person's, counted in their key's limits.
dashboardRoutes.use("*", async (c, next) => {
  const session = await appSessionOf(dbOf({ d1: c.env.DB }), getCookie(c, APP_SESSION_COOKIE), systemClock.now());
  if (!session) {
    // A page goes to the sign-in page; the live script's fragments must not swap the sign-in page in.
    if (c.req.method === "GET" && !c.req.path.startsWith(`${DASHBOARD_PATH}/live/`)) return c.redirect(`${DASHBOARD_PATH}/signin`, 303);
    return c.text("Sign in first.", 401);
  }
  const buckets = callerBuckets(c.env, { ...session, limits: null });
  const counted = await charge(c.env, buckets);
  if (counted.throttle) return c.text(`Too many requests; try again in ${counted.throttle.retryAfterSeconds} s.`, 429, { "Retry-After": String(counted.throttle.retryAfterSeconds) });
  c.set("session", session);
  c.set("ctx", {
    env: c.env,
    d1: c.env.DB,
    tenantId: session.tenantId,
    actorId: session.actorId,
    actorName: session.actorName,
    operator: session.operator,
    sessionId: "",
    clock: systemClock,
    meter: requestMeter(c.env, buckets, counted),
    waitUntil: (p) => c.executionCtx.waitUntil(p),
  });
  await next();
});

/** Live reservations of the tenant's first repositories (a dashboard shows a glance, not every row). */
async function reservations(ctx: Ctx): Promise<Row[]> {
  const repos = (await read<{ items: Row[] }>(ctx, "repo_query", { limit: 20 })).items;
  const out: Row[] = [];
  for (const repo of repos) {
    const page = await read<{ items: Row[] }>(ctx, "path_reservations", { repository_id: repo.id, limit: 100 });
    out.push(...page.items.map((r) => ({ ...r, repository: repo.slug })));
  }
  return out;
}

async function overview(ctx: Ctx): Promise<OverviewData> {
  const [me, projects, runs, claims, held, activity, actors] = await Promise.all([
    read(ctx, "whoami"),
    read<{ items: Row[] }>(ctx, "project_query", { detail: "full", limit: 50 }),
    read<{ items: Row[] }>(ctx, "run_query", { status: ["running"], limit: 100 }),
    read<{ items: Row[] }>(ctx, "task_query", { status: ["in_progress"], limit: 200 }),
    reservations(ctx),
    read<{ items: Row[] }>(ctx, "activity_query", { limit: 50 }),
    read<{ items: Row[] }>(ctx, "actor_query", { limit: 200 }),
  ]);
  const byId = new Map(actors.items.map((a) => [String(a.id), a]));
  const holders = new Set([...runs.items.map((r) => r.actor_id), ...claims.items.map((t) => t.assignee_actor_id), ...held.map((r) => r.actor_id)].filter(Boolean).map(String));
  const agents = [...holders].map((id) => ({
    actor: byId.get(id) ?? { id, name: id },
    runs: runs.items.filter((r) => r.actor_id === id),
    claims: claims.items.filter((t) => t.assignee_actor_id === id),
    reservations: held.filter((r) => r.actor_id === id),
    lastActivity: activity.items.find((a) => a.actor_id === id),
  }));
  return { now: ctx.clock.now(), me, projects: projects.items, agents, activity: activity.items };
}

// The live script's fragments: the same components, fresh, for a part of a page already shown.
dashboardRoutes.get("/live/feed", async (c) => {
  const ctx = c.get("ctx");
  const activity = await read<{ items: Row[] }>(ctx, "activity_query", { limit: 50 });
  return html(c, ActivityItems({ items: activity.items, now: ctx.clock.now() }));
});

dashboardRoutes.get("/", async (c) => html(c, OverviewPage({ viewer: await viewerOf(c), data: await overview(c.get("ctx")) })));

registerLedger(dashboardRoutes);
registerActions(dashboardRoutes);
registerBoard(dashboardRoutes);
registerWork(dashboardRoutes);
registerKnowledge(dashboardRoutes);
registerPlans(dashboardRoutes);
