/**
 * Shared setup of the decisions and collab room tests (test/work/decisions.test.ts, test/work/collab.test.ts).
 *
 * Time: the clock sits in the future (T0, 2030) so task claims made here never expire in real
 * time. Each test has its own tenant because D1 keeps rows between the tests of a file.
 */
import { env } from "cloudflare:workers";
import type { Ctx } from "../../src/core/context";
import { count, MINUTE, ok, refusedWithoutWrites, type Structured, newWorld, type World } from "./helpers";

export const T0 = "2030-01-01T00:00:00.000Z";
export const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
export const HOUR = 60 * MINUTE;
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A fresh tenant with one caller ("agent") and a clock at T0. */
export const world = (name: string): Promise<World> => newWorld(`wdc-${name}`, { start: T0 });

export async function project(ctx: Ctx, key: string): Promise<Structured> {
  return (await ok(ctx, "project_create", { title: `Project ${key}`, key })).project as Structured;
}

export async function task(ctx: Ctx, projectId: string, title = "a task"): Promise<Structured> {
  return (await ok(ctx, "task_create", { project_id: projectId, title })).task as Structured;
}

export async function decide(ctx: Ctx, args: Record<string, unknown>): Promise<Structured> {
  return (await ok(ctx, "decision_log", { title: "A decision", choice: "Option A", ...args })).decision as Structured;
}

export async function comment(ctx: Ctx, objectType: string, objectId: string, body: string, extra: Record<string, unknown> = {}): Promise<Structured> {
  return ok(ctx, "comment_add", { object_type: objectType, object_id: objectId, body, ...extra });
}

/** A work request (handoff) row; the handoff tools arrive later. */
export async function insertHandoff(tenantId: string, fromActorId: string, projectId: string | null): Promise<string> {
  const id = crypto.randomUUID();
  await env.DB.prepare(`INSERT INTO handoffs (id, tenant_id, kind, title, from_actor_id, related_project_id, created_at, updated_at) VALUES (?, ?, 'question', 'Which queue?', ?, ?, ?, ?)`)
    .bind(id, tenantId, fromActorId, projectId, T0, T0)
    .run();
  return id;
}

export async function activityRows(tenantId: string, where = "1 = 1", ...params: unknown[]): Promise<Structured[]> {
  const rows = await env.DB.prepare(`SELECT * FROM activity WHERE tenant_id = ? AND ${where} ORDER BY seq`)
    .bind(tenantId, ...params)
    .all<Structured>();
  return rows.results;
}

export async function notificationRows(tenantId: string, actorId?: string): Promise<Structured[]> {
  const rows = await env.DB.prepare(`SELECT * FROM notifications WHERE tenant_id = ? AND (? IS NULL OR actor_id = ?) ORDER BY seq`)
    .bind(tenantId, actorId ?? null, actorId ?? null)
    .all<Structured>();
  return rows.results;
}

/** Walks every page of a cursor-paginated list. */
export async function allPages(ctx: Ctx, tool: string, args: Record<string, unknown>): Promise<{ items: Structured[]; pages: number }> {
  const items: Structured[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await ok(ctx, tool, { ...args, ...(cursor ? { cursor } : {}) });
    items.push(...(r.items as Structured[]));
    cursor = r.next_cursor as string | undefined;
    pages++;
    if (pages > 50) throw new Error("pagination did not end");
  } while (cursor);
  return { items, pages };
}

export const ids = (items: Structured[]) => items.map((x) => x.id as string);
export const sorted = (xs: string[]) => [...xs].sort();

/** Everything the decisions and collab tools write for one tenant, so a refused call can be shown to write nothing. */
export async function tenantState(tenantId: string) {
  const text = (sql: string) =>
    env.DB.prepare(sql)
      .bind(tenantId)
      .first<{ s: string | null }>()
      .then((r) => r?.s ?? "");
  return {
    decisions: await text(
      `SELECT group_concat(id || ':' || ifnull(project_id, '-') || ':' || title || ':' || choice || ':' || status || ':' || status_changed_at || ':' ||
         ifnull(supersedes_decision_id, '-'), '|') AS s FROM (SELECT * FROM decisions WHERE tenant_id = ? ORDER BY seq)`,
    ),
    comments: await count("SELECT COUNT(*) AS n FROM comments WHERE tenant_id = ?", tenantId),
    notifications: await text(`SELECT group_concat(id || ':' || actor_id || ':' || ifnull(read_at, '-'), '|') AS s FROM (SELECT * FROM notifications WHERE tenant_id = ? ORDER BY seq)`),
    activity: await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", tenantId),
    pendingKeys: await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE tenant_id = ? AND status = 'pending'", tenantId),
  };
}

/** Asserts a failed call with `code`, a full error body, and nothing written anywhere in the tenant. */
export const rejects = (ctx: Ctx, tool: string, args: unknown, code: string): Promise<Structured> => refusedWithoutWrites(ctx, tool, args, code, () => tenantState(ctx.tenantId));
