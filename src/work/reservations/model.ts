/**
 * Path reservations: an actor holds paths or globs of a registered repository, exclusive or
 * shared, under a lease. Reserving and releasing run in the repository's ClaimsDO one call at a
 * time (reserveIn, releaseIn), so the read of live reservations and the write that follows cannot
 * interleave with another reserver's; D1 is the record. Writes through the server (commits,
 * merges, cherry-picks) ask writeConflicts before they touch GitHub.
 */
import { and, eq, gt, inArray, isNull, ne, or, sql } from "drizzle-orm";
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { iso } from "../../core/time";
import { dbOf } from "../../db/client";
import { uuidv7 } from "../../db/ids";
import { pathReservations, tasks } from "../../db/schema";
import { deliverNotices, type Notice } from "../collab/inbox";
import { activityStatement } from "../shared";
import type { KnownStatus } from "../tasks/model";
import { patternMatches, patternsOverlap } from "./globs";

export interface Reservation {
  id: string;
  repository_id: string;
  actor_id: string;
  pattern: string;
  exclusive: boolean;
  task_id: string | null;
  reason: string;
  fencing_token: number;
  created_at: string;
  expires_at: string;
}

export const reservationSchema = z.object({
  id: z.string().describe("Reservation id."),
  repository_id: z.string().describe("Repository id."),
  actor_id: z.string().describe("Who holds it."),
  pattern: z.string().describe("The path or glob held."),
  exclusive: z.boolean().describe("Exclusive (nobody else writes or reserves these paths) or shared."),
  task_id: z.string().nullable().describe("The task it is tied to (finishing or releasing the task releases it), or null."),
  reason: z.string().describe("Why it is held."),
  fencing_token: z.number().int().describe("The lease's fencing token: a renewal keeps it, a new reservation gets a higher one."),
  created_at: z.string().describe("When it was first reserved."),
  expires_at: z.string().describe("When the lease runs out unless renewed."),
});

const r = pathReservations;

const reservationFields = {
  id: r.id,
  repository_id: r.repositoryId,
  actor_id: r.actorId,
  pattern: r.pattern,
  exclusive: r.exclusive,
  task_id: r.taskId,
  reason: r.reason,
  fencing_token: r.fencingToken,
  created_at: r.createdAt,
  expires_at: r.expiresAt,
};

const toReservation = (row: Omit<Reservation, "exclusive"> & { exclusive: number }): Reservation => ({ ...row, exclusive: row.exclusive === 1 });

/** A reservation counts while nobody released it and its lease has not run out. */
const live = (tenantId: string, repositoryId: string, now: string) => and(eq(r.tenantId, tenantId), eq(r.repositoryId, repositoryId), isNull(r.releasedAt), gt(r.expiresAt, now));

/** A page of live reservations: after keyset [created_at, id], at most `limit` rows, optionally one holder's. */
export interface ReservationPage {
  after: readonly [string, string] | null;
  limit: number;
  actorId?: string;
}

/** The repository's live reservations, oldest first (all of them, or one page). */
export async function liveReservations(d1: D1Database, tenantId: string, repositoryId: string, now: string, page?: ReservationPage): Promise<Reservation[]> {
  const after = page?.after ? or(gt(r.createdAt, page.after[0]), and(eq(r.createdAt, page.after[0]), gt(r.id, page.after[1]))) : undefined;
  const query = dbOf({ d1 })
    .select(reservationFields)
    .from(r)
    .where(and(live(tenantId, repositoryId, now), page?.actorId ? eq(r.actorId, page.actorId) : undefined, after))
    .orderBy(r.createdAt, r.id);
  const rows = page ? await query.limit(page.limit).all() : await query.all();
  return rows.map(toReservation);
}

export interface ReserveRequest {
  tenantId: string;
  repositoryId: string;
  actorId: string;
  sessionId: string;
  /** Normalized patterns (globs.normalizePattern), distinct. */
  patterns: string[];
  exclusive: boolean;
  leaseSeconds: number;
  taskId: string | null;
  reason: string;
  nowMs: number;
}

/** A requested pattern and the live reservation of someone else it cannot sit beside. */
export interface Conflict {
  pattern: string;
  held: Reservation;
}

/**
 * Live reservations one repository may hold at once. Every write through the server and every
 * reserve reads them all, so the set is bounded; a team needs far fewer (folders, not files).
 */
export const MAX_LIVE_RESERVATIONS = 1000;

export type ReserveOutcome =
  { reserved: true; reservations: Reservation[]; fencing_token: number; renewed: string[] } | { reserved: false; conflicts: Conflict[]; full?: false } | { reserved: false; conflicts: []; full: true };

/**
 * Two reservations collide when different actors hold them, their patterns can cover a common path,
 * and either is exclusive: shared holders sit together, an exclusive one sits alone.
 */
function conflictsWith(held: readonly Reservation[], actorId: string, patterns: readonly string[], exclusive: boolean): Conflict[] {
  const out: Conflict[] = [];
  for (const pattern of patterns) {
    for (const h of held) {
      if (h.actor_id !== actorId && (exclusive || h.exclusive) && patternsOverlap(pattern, h.pattern)) out.push({ pattern, held: h });
    }
  }
  return out;
}

/**
 * Reserves every pattern or none. A pattern the actor already holds is renewed: the new lease,
 * mode, task and reason, and its fencing token kept. The others are new reservations under the
 * repository's next fencing token. Run it in the repository's ClaimsDO (reserveIn): the token is
 * read, then written, in that one queue.
 */
export async function reservePaths(d1: D1Database, q: ReserveRequest): Promise<ReserveOutcome> {
  const now = iso(new Date(q.nowMs));
  const expires = iso(new Date(q.nowMs + q.leaseSeconds * 1000));
  const held = await liveReservations(d1, q.tenantId, q.repositoryId, now);
  const conflicts = conflictsWith(held, q.actorId, q.patterns, q.exclusive);
  if (conflicts.length > 0) return { reserved: false, conflicts };

  const db = dbOf({ d1 });
  const mine = new Map(held.filter((h) => h.actor_id === q.actorId).map((h) => [h.pattern, h]));
  const renewed = q.patterns.filter((p) => mine.has(p));
  const fresh = q.patterns.filter((p) => !mine.has(p));
  if (held.length + fresh.length > MAX_LIVE_RESERVATIONS) return { reserved: false, conflicts: [], full: true };
  const top = await db
    .select({ token: sql<number>`COALESCE(MAX(${r.fencingToken}), 0)` })
    .from(r)
    .where(and(eq(r.tenantId, q.tenantId), eq(r.repositoryId, q.repositoryId)))
    .get();
  const token = (top?.token ?? 0) + 1;
  const statements: D1PreparedStatement[] = [];
  for (const p of renewed) {
    const { sql: text, params } = db
      .update(r)
      .set({ expiresAt: expires, exclusive: q.exclusive ? 1 : 0, taskId: q.taskId, reason: q.reason })
      .where(eq(r.id, mine.get(p)!.id))
      .toSQL();
    statements.push(d1.prepare(text).bind(...params));
  }
  for (const p of fresh) {
    const { sql: text, params } = db
      .insert(r)
      .values({
        id: uuidv7(q.nowMs),
        tenantId: q.tenantId,
        repositoryId: q.repositoryId,
        actorId: q.actorId,
        pattern: p,
        exclusive: q.exclusive ? 1 : 0,
        taskId: q.taskId,
        reason: q.reason,
        fencingToken: token,
        sessionId: q.sessionId,
        createdAt: now,
        expiresAt: expires,
      })
      .toSQL();
    statements.push(d1.prepare(text).bind(...params));
  }
  if (statements.length > 0) await d1.batch(statements);
  const after = (await liveReservations(d1, q.tenantId, q.repositoryId, now)).filter((h) => h.actor_id === q.actorId && q.patterns.includes(h.pattern));
  return {
    reserved: true,
    reservations: after,
    fencing_token: fresh.length > 0 ? token : Math.max(...after.map((h) => h.fencing_token)),
    renewed,
  };
}

export interface ReleaseRequest {
  tenantId: string;
  repositoryId: string;
  actorId: string;
  /** Release these reservations of the actor; with neither ids nor patterns, all of them in the repository. */
  ids?: string[];
  patterns?: string[];
  nowMs: number;
}

/** Ends the actor's live reservations named (or all in the repository); returns what it ended. */
export async function releasePaths(d1: D1Database, q: ReleaseRequest): Promise<Reservation[]> {
  const now = iso(new Date(q.nowMs));
  const rows = await dbOf({ d1 })
    .update(r)
    .set({ releasedAt: now })
    .where(and(live(q.tenantId, q.repositoryId, now), eq(r.actorId, q.actorId), q.ids?.length ? inArray(r.id, q.ids) : undefined, q.patterns?.length ? inArray(r.pattern, q.patterns) : undefined))
    .returning(reservationFields)
    .all();
  return rows.map(toReservation).sort((a, b) => (a.created_at === b.created_at ? a.id.localeCompare(b.id) : a.created_at.localeCompare(b.created_at)));
}

/** Ends every live reservation tied to a task (the task was finished, cancelled or let go). */
export async function releaseTaskReservations(d1: D1Database, tenantId: string, taskId: string, nowMs: number): Promise<number> {
  const now = iso(new Date(nowMs));
  const rows = await dbOf({ d1 })
    .update(r)
    .set({ releasedAt: now })
    .where(and(eq(r.tenantId, tenantId), eq(r.taskId, taskId), isNull(r.releasedAt), gt(r.expiresAt, now)))
    .returning({ id: r.id })
    .all();
  return rows.length;
}

/** A path a write would touch and the live exclusive reservation of someone else that covers it. */
export interface WriteConflict {
  path: string;
  held: Reservation;
}

/** What stands in the way of `actorId` writing `paths` (normalized) in the repository now. */
export async function writeConflicts(d1: D1Database, tenantId: string, repositoryId: string, actorId: string, paths: readonly string[], now: string): Promise<WriteConflict[]> {
  const others = await dbOf({ d1 })
    .select(reservationFields)
    .from(r)
    .where(and(live(tenantId, repositoryId, now), ne(r.actorId, actorId), eq(r.exclusive, 1)))
    .orderBy(r.createdAt, r.id)
    .all();
  const out: WriteConflict[] = [];
  for (const path of paths) {
    for (const h of others) if (patternMatches(h.pattern, path)) out.push({ path, held: toReservation(h) });
  }
  return out;
}

/**
 * A person behind the writer's client confirmed a write over others' reservations: the override is
 * kept in the activity log (severity warn) and each holder is told which of their paths were written.
 */
export async function recordOverride(ctx: Ctx, repo: { id: string; slug: string }, conflicts: readonly WriteConflict[], tool: string): Promise<void> {
  const byReservation = new Map<string, { held: Reservation; paths: string[] }>();
  for (const c of conflicts) {
    const entry = byReservation.get(c.held.id) ?? { held: c.held, paths: [] };
    entry.paths.push(c.path);
    byReservation.set(c.held.id, entry);
  }
  const shown = (paths: string[]) => paths.slice(0, 3).join(", ") + (paths.length > 3 ? ` and ${paths.length - 3} more` : "");
  const all = [...byReservation.values()];
  await ctx.d1.batch([
    activityStatement(ctx, {
      verb: "paths.override",
      objectType: "repository",
      objectId: repo.id,
      summary: `${ctx.actorName} wrote over reserved paths in ${repo.slug} (${tool}): ${shown(conflicts.map((c) => c.path))}`.slice(0, 500),
      severity: "warn",
      metadata: { tool, reservations: all.slice(0, 20).map((e) => ({ id: e.held.id, actor_id: e.held.actor_id, pattern: e.held.pattern, paths: e.paths.slice(0, 20) })) },
    }),
  ]);
  await deliverNotices(
    ctx,
    all.map((e) => ({
      actorId: e.held.actor_id,
      kind: "paths.overridden",
      objectType: "repository",
      objectId: repo.id,
      summary: `${ctx.actorName} wrote ${shown(e.paths)} in ${repo.slug} over your reservation ${e.held.pattern} (${tool}, confirmed by the person behind their client)`,
      fromActorId: ctx.actorId,
    })),
  );
}

/** Whether `token` is one of the actor's live reservations in the repository (a stale one is not). */
export async function holdsToken(d1: D1Database, tenantId: string, repositoryId: string, actorId: string, token: number, now: string): Promise<boolean> {
  const row = await dbOf({ d1 })
    .select({ id: r.id })
    .from(r)
    .where(and(live(tenantId, repositoryId, now), eq(r.actorId, actorId), eq(r.fencingToken, token)))
    .limit(1)
    .get();
  return row !== undefined;
}

/** The ClaimsDO that serializes a repository's reservations. */
export const reservationsStub = (ctx: Pick<Ctx, "env" | "tenantId">, repositoryId: string) => ctx.env.CLAIMS.get(ctx.env.CLAIMS.idFromName(`${ctx.tenantId}:repo:${repositoryId}`));

/**
 * A task's reservations end with its work: the catalog calls this after a task's status changed,
 * and a task finished, cancelled or given back to the pool lets its paths go.
 */
export async function followTaskReservations(ctx: Pick<Ctx, "d1" | "tenantId" | "clock">, taskId: string, known?: KnownStatus): Promise<void> {
  const task =
    known ??
    (await dbOf(ctx)
      .select({ status: tasks.status, assignee: tasks.assigneeActorId })
      .from(tasks)
      .where(and(eq(tasks.tenantId, ctx.tenantId), eq(tasks.id, taskId)))
      .get());
  if (!task) return;
  if (task.status === "done" || task.status === "cancelled" || (task.status === "todo" && task.assignee === null)) {
    await releaseTaskReservations(ctx.d1, ctx.tenantId, taskId, ctx.clock.now().getTime());
  }
}

/**
 * A push made outside this server (it arrived by webhook) that changed reserved paths: each holder
 * of a live reservation covering a changed file hears of it, once per push and reservation. The
 * pusher is a GitHub account, not an actor, so every holder is told, the pusher's own included.
 */
export async function notifyPushedPaths(
  ctx: Pick<Ctx, "d1" | "tenantId" | "actorId" | "clock"> & Partial<Pick<Ctx, "env" | "waitUntil">>,
  push: { repositoryId: string; slug: string; branch: string; after: string; pusher: string; files: readonly string[] },
): Promise<number> {
  const now = iso(ctx.clock.now());
  const held = await liveReservations(ctx.d1, ctx.tenantId, push.repositoryId, now);
  if (held.length === 0 || push.files.length === 0) return 0;
  const notices: Notice[] = [];
  for (const h of held) {
    const touched = push.files.filter((f) => patternMatches(h.pattern, f));
    if (touched.length === 0) continue;
    const shown = touched.slice(0, 3).join(", ") + (touched.length > 3 ? ` and ${touched.length - 3} more` : "");
    notices.push({
      actorId: h.actor_id,
      kind: "paths.pushed",
      objectType: "repository",
      objectId: push.repositoryId,
      summary: `${push.pusher || "someone"} pushed ${push.after.slice(0, 7)} to ${push.slug}@${push.branch} changing ${shown}, under your reservation ${h.pattern}`,
      fromActorId: ctx.actorId,
      dedupeKey: `push:${push.after}:${h.id}`,
    });
  }
  await deliverNotices(ctx, notices);
  return notices.length;
}
