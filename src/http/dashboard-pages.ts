/**
 * What every dashboard page shares (src/http/dashboard.ts mounts the pages): the path, the context
 * the session middleware sets, the pages' headers, reading a tool as the signed-in person, the
 * header's viewer, and the error page a tool's refusal becomes.
 */
import type { Context } from "hono";
import type { AppSession } from "../auth/app-session";
import { runTool } from "../core/call";
import type { Ctx } from "../core/context";
import { ToolError } from "../core/errors";
import type { Env } from "../env";
import { findTool } from "../server/registry";
import { ErrorPage } from "../web/app/errors";
import type { Viewer } from "../web/app/layout";
import { issueCsrf, pageHeaders } from "../web/security";
import { takeFlash } from "./dashboard-flash";

export const DASHBOARD_PATH = "/app";

export type AppEnv = { Bindings: Env; Variables: { session: AppSession; ctx: Ctx } };

type Row = Record<string, unknown>;

/** The pages' own headers: the sign-in pages' strict policy, plus the dashboard's own script. */
function headers(): Record<string, string> {
  const base = pageHeaders();
  return { ...base, "Content-Security-Policy": base["Content-Security-Policy"]!.replace("default-src 'none'", "default-src 'none'; script-src 'self'; connect-src 'self'") };
}

export const html = (c: Context, body: unknown, status = 200) => c.html(body as string, status as 200, headers());

/** A tool's answer for a page, run as the signed-in person through the registry. */
export async function read<T = Row>(ctx: Ctx, name: string, args: Record<string, unknown> = {}): Promise<T> {
  return runTool<T>(findTool(name)!, ctx, args);
}

/** How a tool's refusal reads as a page: what the person's input (an id, a filter) can cause. */
const REFUSAL_STATUS = (code: string): 400 | 404 | 429 | undefined => (code.endsWith("not_found") ? 404 : code === "rate_limited" ? 429 : code.startsWith("invalid_") ? 400 : undefined);

/** The error page, with the way back when there is one. */
export async function errorPage(c: Context<AppEnv>, status: 400 | 403 | 404 | 429, message: string, hint?: string, back?: [string, string]) {
  return html(c, ErrorPage({ viewer: await viewerOf(c), error: { status, message, hint }, back }), status);
}

/** A page, or the error page when a tool refuses what the person asked for; anything else is a fault. */
export async function toolPage(c: Context<AppEnv>, render: () => Promise<unknown>, back?: [string, string]) {
  try {
    return html(c, await render());
  } catch (e) {
    const status = e instanceof ToolError ? REFUSAL_STATUS(e.code) : undefined;
    if (!status || !(e instanceof ToolError)) throw e;
    return errorPage(c, status, e.message, e.hint, back);
  }
}

export async function viewerOf(c: Context<AppEnv>): Promise<Viewer> {
  const session = c.get("session");
  const me = await read<{ tenant: { slug: string } }>(c.get("ctx"), "whoami");
  return { name: session.actorName, tenant: me.tenant.slug, access: session.access, csrf: issueCsrf(c), operator: session.operator, flash: takeFlash(c) };
}

/** Actor id → the name a person reads (the directory's first 200; one it lacks shows by id). */
export async function actorNames(ctx: Ctx): Promise<Map<string, string>> {
  const actors = await read<{ items: Row[] }>(ctx, "actor_query", { limit: 200 });
  return new Map(actors.items.map((a) => [String(a.id), String(a.display_name || a.external_ref || a.id)]));
}

/** actorNames as a function, for pages that name many people. */
export async function namer(ctx: Ctx): Promise<(id: string) => string> {
  const names = await actorNames(ctx);
  return (id) => names.get(id) ?? id;
}

/** A query parameter, bounded before any tool sees it (the tools bound it again). */
export function param(c: Context, name: string, max: number): string {
  const v = (c.req.query(name) ?? "").trim();
  if (v.length > max) throw new ToolError("invalid_input", `${name} is longer than ${max} characters.`, { hint: "Shorten it." });
  return v;
}

/** The query string of the page after this one: the same filters, plus the tool's cursor. */
export function nextQuery(filters: Record<string, string>, cursor: string | undefined): string | undefined {
  if (!cursor) return undefined;
  const q = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
  q.set("cursor", cursor);
  return q.toString();
}
