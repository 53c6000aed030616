/**
 * The people's actions on the dashboard (docs/dashboard.md "Acting"): answering handoffs, reviews
 * and approvals, marking notifications read, commenting on, reassigning and releasing tasks, and
 * overseer messages. Each is a POST form, checked for its CSRF token and refused to a read-only
 * session, that runs one tool as the signed-in person (the tools' own rules and tenancy hold, and
 * there is no second write path) and redirects back with the outcome. And /app/inbox, the page
 * most of them are answered from.
 */
import type { Context, Hono } from "hono";
import type { Ctx } from "../core/context";
import { ToolError } from "../core/errors";
import { INBOX_PATH, InboxPage, type InboxData } from "../web/app/inbox";
import { csrfOk } from "../web/security";
import { DASHBOARD_PATH, errorPage, html, read, viewerOf, type AppEnv } from "./dashboard-pages";
import { setFlash } from "./dashboard-flash";

type Row = Record<string, unknown>;
type C = Context<AppEnv>;

// The tools take ids and task refs up to 100 characters; anything else is refused before any tool runs.
const ID_MAX = 100;
const isId = (v: string) => v.length <= ID_MAX && /^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(v);
const BACK_MAX = 500;
const MENTIONS_MAX = 20;
const COMMENT_MAX = 20_000;
const LIST_MAX = 200;
const MENTION_TRAILER = ".,;:!?)]}'\"";

const field = (form: FormData, name: string): string => {
  const v = form.get(name);
  return typeof v === "string" ? v : "";
};
const fields = (form: FormData, name: string): string[] => form.getAll(name).filter((v): v is string => typeof v === "string" && v !== "");

/**
 * Where a form returns to: a dashboard path it names, never another site (an open redirect would
 * let a link bounce a signed-in person anywhere), else the action's own page.
 */
export function backPath(value: string, fallback: string): string {
  if (!value || value.length > BACK_MAX || !value.startsWith(DASHBOARD_PATH) || value.includes("\\")) return fallback;
  const probe = "https://dashboard.invalid";
  const url = new URL(value, probe);
  if (url.origin !== probe || (url.pathname !== DASHBOARD_PATH && !url.pathname.startsWith(`${DASHBOARD_PATH}/`))) return fallback;
  return `${url.pathname}${url.search}`;
}

/** The actors a comment names with `@name`, as comment_add's mentions (at most 20, each once). */
export function mentionsIn(body: string): string[] {
  if (body.length > COMMENT_MAX) return [];
  const out = new Set<string>();
  for (const word of body.split(/\s+/)) {
    if (!word.startsWith("@")) continue;
    let name = word.slice(1);
    while (name && MENTION_TRAILER.includes(name.at(-1)!)) name = name.slice(0, -1);
    if (name && name.length <= 200) out.add(name);
    if (out.size >= MENTIONS_MAX) break;
  }
  return [...out];
}

/** An operator's override of another's live lease, as task_assign and task_release take it. */
function leaseOverride(form: FormData): Row {
  if (field(form, "force") !== "1") return {};
  return { force: true, reason: field(form, "reason").trim() || undefined };
}

/** A tool's refusal of the id in the path: not found (another tenant's id among them) or malformed. */
function refusalPage(c: C, e: unknown) {
  if (e instanceof ToolError && e.code === "not_found") return errorPage(c, 404, e.message, e.hint);
  if (e instanceof ToolError && e.code === "invalid_input") return errorPage(c, 400, e.message, e.hint);
  throw e;
}

interface Action {
  /** Where to return when the form names nowhere, given the path's id. */
  fallback: (id: string) => string;
  /** A read that fails for an id the caller cannot see, before the action runs. */
  target?: (ctx: Ctx, id: string) => Promise<unknown>;
  /** The action's own not_found is about the path's id: answer 404 rather than an outcome. */
  missingIs404?: boolean;
  /** Runs the tool(s); returns what to tell the person. */
  run: (ctx: Ctx, form: FormData, id: string) => Promise<string>;
}

function action(routes: Hono<AppEnv>, pattern: string, spec: Action): void {
  routes.post(pattern, async (c) => {
    const id = c.req.param("id") ?? "";
    if (pattern.includes(":id") && !isId(id)) return errorPage(c, 400, "That is not an id this server gives out.", "Follow a link from the dashboard's pages.");
    const form = await c.req.formData().catch(() => null);
    if (!form || !csrfOk(c, form, new URL(c.req.url).origin)) return errorPage(c, 403, "The form expired or came from another site.", "Reload the page and try again.");
    if (c.get("session").access !== "full") return errorPage(c, 403, "This session is read-only: it changes nothing.", "Sign out and sign in again without read-only to act.");
    const ctx = c.get("ctx");
    const back = backPath(field(form, "back"), spec.fallback(id));
    if (spec.target) {
      try {
        await spec.target(ctx, id);
      } catch (e) {
        return refusalPage(c, e);
      }
    }
    try {
      setFlash(c, { ok: true, message: await spec.run(ctx, form, id) });
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      if (spec.missingIs404 && e.code === "not_found") return refusalPage(c, e);
      setFlash(c, { ok: false, message: e.message, hint: e.hint });
    }
    return c.redirect(back, 303);
  });
}

/** Takes answered handoffs out of the person's inbox, as an agent acks after acting. */
const ack = (ctx: Ctx, ids: string[]) => read<{ acked: number }>(ctx, "inbox", { ack: ids, limit: 1 });

const taskPage = (id: string) => `${DASHBOARD_PATH}/tasks/${encodeURIComponent(id)}`;
const taskExists = (ctx: Ctx, id: string) => read(ctx, "task_get", { task_id: id });

// Pending requests are listed newest first; an inbox's older ones may sit a few pages in.
const APPROVAL_PAGES = 5;

/** The pending approval requests behind the inbox's approval handoffs, by handoff id. */
async function pendingApprovals(ctx: Ctx, handoffs: Row[]): Promise<Map<string, Row>> {
  const wanted = new Set(handoffs.filter((h) => h.kind === "approval").map((h) => String(h.id)));
  const found = new Map<string, Row>();
  let cursor: string | undefined;
  for (let page = 0; page < APPROVAL_PAGES && found.size < wanted.size; page++) {
    const listed = await read<{ items: Row[]; next_cursor?: string }>(ctx, "list_approvals", { status: "pending", limit: 100, cursor });
    for (const a of listed.items) if (wanted.has(String(a.handoff_id))) found.set(String(a.handoff_id), a);
    cursor = listed.next_cursor;
    if (!cursor) break;
  }
  return found;
}

async function inboxData(ctx: Ctx): Promise<InboxData> {
  const [box, notices, actors] = await Promise.all([
    read<{ items: Row[]; total: number }>(ctx, "inbox", { limit: 50 }),
    read<{ items: Row[]; unread_count: number }>(ctx, "notification_query", { limit: 50 }),
    read<{ items: Row[] }>(ctx, "actor_query", { limit: LIST_MAX }),
  ]);
  return {
    now: ctx.clock.now(),
    me: ctx.actorId,
    handoffs: box.items,
    total: box.total,
    approvals: await pendingApprovals(ctx, box.items),
    notifications: notices.items,
    unread: notices.unread_count,
    actors: actors.items,
  };
}

export function registerActions(routes: Hono<AppEnv>): void {
  routes.get("/inbox", async (c) => html(c, InboxPage({ viewer: await viewerOf(c), data: await inboxData(c.get("ctx")) })));

  action(routes, "/handoffs/:id/respond", {
    fallback: () => INBOX_PATH,
    missingIs404: true,
    run: async (ctx, form, id) => {
      const response: Row = {};
      for (const [name, key] of [
        ["verdict", "verdict"],
        ["option", "chosen_option"],
        ["text", "text"],
      ] as const) {
        const value = field(form, name).trim();
        if (value) response[key] = value;
      }
      const { handoff } = await read<{ handoff: Row }>(ctx, "handoff_respond", { handoff_id: id, response });
      await ack(ctx, [id]);
      return handoff.verdict ? `Review answered: ${String(handoff.verdict).replace("_", " ")}.` : `Answered: ${String(handoff.title)}`;
    },
  });

  action(routes, "/handoffs/:id/claim", {
    fallback: () => INBOX_PATH,
    missingIs404: true,
    run: async (ctx, _form, id) => {
      const { handoff } = await read<{ handoff: Row }>(ctx, "handoff_claim", { handoff_id: id });
      return `You hold ${String(handoff.title)}; the other recipients see it taken.`;
    },
  });

  action(routes, "/handoffs/:id/ack", {
    fallback: () => INBOX_PATH,
    run: async (ctx, _form, id) => {
      const { acked } = await ack(ctx, [id]);
      // Another tenant's id, or one not addressed to this person, acknowledges nothing.
      if (acked === 0) throw new ToolError("not_found", "That handoff is not in your inbox.", { hint: "It may have been acknowledged already." });
      return "Taken out of your inbox.";
    },
    missingIs404: true,
  });

  action(routes, "/approvals/:id/respond", {
    fallback: () => INBOX_PATH,
    missingIs404: true,
    run: async (ctx, form, id) => {
      const answer = await read<{ request: Row; plan_status: string | null; warnings?: string[] }>(ctx, "respond_approval", {
        request_id: id,
        action: field(form, "action") || undefined,
        comment: field(form, "comment").trim() || undefined,
        modifications: field(form, "modifications").trim() || undefined,
      });
      await ack(ctx, [String(answer.request.handoff_id)]);
      const plan = answer.plan_status ? ` The plan is ${answer.plan_status}.` : "";
      return `Approval request ${String(answer.request.status).replace("_", " ")}.${plan}${answer.warnings ? ` ${answer.warnings.join(" ")}` : ""}`;
    },
  });

  action(routes, "/notifications/read", {
    fallback: () => INBOX_PATH,
    run: async (ctx, form) => {
      const { marked } = await read<{ marked: number }>(ctx, "notification_mark_read", { ids: fields(form, "id") });
      return `${marked} notification(s) marked read.`;
    },
  });

  action(routes, "/tasks/:id/comment", {
    fallback: taskPage,
    target: taskExists,
    run: async (ctx, form, id) => {
      const body = field(form, "body");
      const mentions = mentionsIn(body);
      const { notified } = await read<{ notified: string[] }>(ctx, "comment_add", { object_type: "task", object_id: id, body, mentions: mentions.length ? mentions : undefined });
      return `Commented on ${id}${notified.length ? `; ${notified.length} actor(s) notified` : ""}.`;
    },
  });

  action(routes, "/tasks/:id/assign", {
    fallback: taskPage,
    target: taskExists,
    run: async (ctx, form, id) => {
      const assignee = field(form, "assignee").trim();
      const { task } = await read<{ task: Row }>(ctx, "task_assign", { task_id: id, actor_id: assignee === "" ? null : assignee, ...leaseOverride(form) });
      return assignee ? `${String(task.ref)} is assigned to ${assignee}.` : `${String(task.ref)} is assigned to nobody.`;
    },
  });

  action(routes, "/tasks/:id/release", {
    fallback: taskPage,
    target: taskExists,
    run: async (ctx, form, id) => {
      const { task } = await read<{ task: Row }>(ctx, "task_release", { task_id: id, note: field(form, "note").trim() || undefined, ...leaseOverride(form) });
      return `${String(task.ref)} is back in the pool.`;
    },
  });

  action(routes, "/overseer", {
    fallback: () => DASHBOARD_PATH,
    run: async (ctx, form) => {
      const { delivered } = await read<{ delivered: string[] }>(ctx, "overseer_message", { to: fields(form, "to"), message: field(form, "message") });
      return `Overseer message delivered to ${delivered.length} agent(s); it tops their inbox until read.`;
    },
  });
}
