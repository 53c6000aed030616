/**
 * Shared setup of the identity and projects room tests (test/work/identity.test.ts, test/work/projects.test.ts).
 * Tasks are inserted with SQL where a test needs them without the task tools. Each test has its own tenant
 * because D1 keeps rows between tests in a file.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { Ctx } from "../../src/core/context";
import { count, makeCtx, ok, seedIdentity, TestClock, type Structured, type TestIdentity, refusedWithoutWrites } from "./helpers";

export const T0 = "2026-06-01T12:00:00.000Z";
export const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const KEY_RULE = /^[A-Za-z][A-Za-z0-9]{1,15}$/;

export interface World {
  slug: string;
  id: TestIdentity;
  clock: TestClock;
  ctx: Ctx;
  /** Another actor of the same tenant, sharing the clock. */
  other(name: string, sessionId?: string): Promise<{ id: TestIdentity; ctx: Ctx }>;
}

/** A fresh tenant with one caller and a clock at T0. */
export async function world(name: string, actor = "agent", sessionId = "sess-1"): Promise<World> {
  const slug = `wip-${name}-${crypto.randomUUID().slice(0, 8)}`;
  const id = await seedIdentity(slug, actor);
  const clock = new TestClock(new Date(T0));
  return {
    slug,
    id,
    clock,
    ctx: makeCtx(id, clock, sessionId),
    other: async (n, s = "sess-other") => {
      const oid = await seedIdentity(slug, n);
      return { id: oid, ctx: makeCtx(oid, clock, s) };
    },
  };
}

/** Asserts a failed call with `code`, a full error body, and nothing written anywhere in the tenant. */
export const rejects = (ctx: Ctx, tool: string, args: unknown, code: string): Promise<Structured> => refusedWithoutWrites(ctx, tool, args, code, () => tenantRows(ctx.tenantId));

/** Row counts (and the latest change) of everything the identity and projects tools write, for one tenant. */
export async function tenantRows(tenantId: string) {
  return {
    actors: await count("SELECT COUNT(*) AS n FROM actors WHERE tenant_id = ?", tenantId),
    projects: await count("SELECT COUNT(*) AS n FROM projects WHERE tenant_id = ?", tenantId),
    activity: await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", tenantId),
    pendingKeys: await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE tenant_id = ? AND status = 'pending'", tenantId),
    projectState: await env.DB.prepare(
      "SELECT group_concat(id || ':' || key || ':' || title || ':' || status || ':' || ifnull(parent_project_id, '-') || ':' || updated_at, '|') AS s FROM (SELECT * FROM projects WHERE tenant_id = ? ORDER BY id)",
    )
      .bind(tenantId)
      .first<{ s: string | null }>()
      .then((r) => r?.s ?? ""),
  };
}

export async function activityRows(tenantId: string, where = "1 = 1", ...params: unknown[]) {
  const rows = await env.DB.prepare(`SELECT * FROM activity WHERE tenant_id = ? AND ${where} ORDER BY seq`)
    .bind(tenantId, ...params)
    .all<Structured>();
  return rows.results;
}

export async function createProject(ctx: Ctx, args: Record<string, unknown>): Promise<Structured> {
  return (await ok(ctx, "project_create", args)).project as Structured;
}

export interface TaskSpec {
  seq: number;
  title?: string;
  status?: "todo" | "in_progress" | "in_review" | "done" | "cancelled";
  priority?: number;
  assignee?: string | null;
  createdAt?: string;
  labels?: string[];
  dueOn?: string | null;
  dependsOn?: string[];
}

/** Inserts a task (and its dependency edges) the way the task tools will store one. */
export async function insertTask(tenantId: string, createdBy: string, projectId: string, t: TaskSpec): Promise<string> {
  const id = crypto.randomUUID();
  const created = t.createdAt ?? at(t.seq * 1000);
  await env.DB.prepare(
    `INSERT INTO tasks (id, tenant_id, project_id, seq, title, status, priority, assignee_actor_id, due_on, labels, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(
      id,
      tenantId,
      projectId,
      t.seq,
      t.title ?? `task ${t.seq}`,
      t.status ?? "todo",
      t.priority ?? 2,
      t.assignee ?? null,
      t.dueOn ?? null,
      JSON.stringify(t.labels ?? []),
      createdBy,
      created,
      created,
    )
    .run();
  for (const dep of t.dependsOn ?? []) {
    await env.DB.prepare(`INSERT INTO task_deps (tenant_id, task_id, depends_on_task_id, created_at) VALUES (?, ?, ?, ?)`).bind(tenantId, id, dep, created).run();
  }
  return id;
}

/** The context of a session whose run is `run` (the registry derives keys within a run). */
export const inRun = (ctx: Ctx, run: string): Ctx => ({ ...ctx, ensureRun: async () => run });

export const refs = (tasks: Structured[]) => tasks.map((t) => t.ref as string);
export const keys = (items: Structured[]) => items.map((p) => p.key as string);
export const names = (items: Structured[]) => items.map((a) => a.external_ref as string);

/** Walks every page of a list tool and returns all items, asserting each page's size. */
export async function walk(ctx: Ctx, tool: string, args: Record<string, unknown>, limit: number): Promise<{ items: Structured[]; pages: number }> {
  const items: Structured[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await ok(ctx, tool, { ...args, limit, ...(cursor ? { cursor } : {}) });
    pages++;
    expect(r.items.length).toBeLessThanOrEqual(limit);
    if (r.next_cursor !== undefined) expect(r.items.length).toBe(limit);
    items.push(...(r.items as Structured[]));
    cursor = r.next_cursor as string | undefined;
    expect(pages).toBeLessThan(50);
  } while (cursor);
  return { items, pages };
}
