/** Pieces every work-ledger room shares: actor references, activity rows, keyset cursors. */
// SQL stays here: resolveActor and activityStatement are used by every room, and any one room's model would make every other room import it.
import { z } from "zod";
import { and, eq, or, sql } from "drizzle-orm";
import { dbOf } from "../db/client";
import { activity, actors } from "../db/schema";
import { uuidv7 } from "../db/ids";
import { iso } from "../core/time";
import { encodeKeyset } from "../core/cursor";
import type { Ctx } from "../core/context";
import { notFound } from "../core/errors";

/** An actor reference as tools take it: an actor id, its external_ref, or "me". */
export const actorRefField = (description: string) => z.string().min(1).max(200).describe(`${description} Actor id, external_ref or "me".`);

/**
 * Resolves an actor reference to an actor id in the caller's tenant. Another tenant's actor is
 * simply not found.
 */
export async function resolveActor(ctx: Ctx, ref: string): Promise<string> {
  const value = ref.trim();
  if (value === "me") return ctx.actorId;
  const row = await dbOf(ctx)
    .select({ id: actors.id })
    .from(actors)
    .where(and(eq(actors.tenantId, ctx.tenantId), or(eq(actors.id, value), eq(actors.name, value))))
    .limit(1)
    .get();
  if (!row) throw notFound("actor", value, 'Use actor_query to find actor ids, or "me" for yourself.');
  return row.id;
}

/** An SQL condition and its parameters, for a statement of a batch that must act only when another write of the batch landed. */
export interface Condition {
  sql: string;
  params: unknown[];
}

export interface ActivityInput {
  verb: string;
  objectType: string;
  objectId: string;
  projectId?: string | null;
  summary: string;
  metadata?: Record<string, unknown>;
  severity?: "info" | "warn" | "critical";
  /**
   * Record only if the statement just before this one in the batch changed a row (SQLite's
   * changes()), so a conditional write and its activity stay all-or-nothing in one batch.
   */
  ifPreviousChanged?: boolean;
}

/** The activity row a write appends, to go in the same D1 batch as the write itself. */
// Hand SQL: INSERT…SELECT so the `changes() > 0` guard (ifPreviousChanged) can ride on the same statement, which drizzle cannot say.
export function activityStatement(ctx: Ctx, a: ActivityInput): D1PreparedStatement {
  const now = ctx.clock.now();
  return ctx.d1
    .prepare(
      `INSERT INTO activity (id, tenant_id, at, actor_id, verb, object_type, object_id, project_id, summary, severity, session_id, run_id, metadata)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?${a.ifPreviousChanged ? " WHERE changes() > 0" : ""}`,
    )
    .bind(
      uuidv7(now.getTime()),
      ctx.tenantId,
      iso(now),
      ctx.actorId,
      a.verb,
      a.objectType,
      a.objectId,
      a.projectId ?? null,
      a.summary,
      a.severity ?? "info",
      ctx.sessionId,
      ctx.runId ?? null,
      JSON.stringify(a.metadata ?? {}),
    );
}

export { decodeKeyset, keysetPage } from "../core/cursor";

export const limitField = (def: number, max: number) => z.number().int().min(1).max(max).default(def).describe("Results to return.");

export const cursorField = z.string().max(500).optional().describe("next_cursor of the previous page.");

/** Parses a JSON column that should hold an array, tolerating damage. */
export function jsonArray<T>(text: string | null | undefined): T[] {
  try {
    const v: unknown = JSON.parse(text ?? "[]");
    return Array.isArray(v) ? (v as T[]) : [];
  } catch {
    return [];
  }
}

/** An ISO calendar date (YYYY-MM-DD) that exists. */
export const dateField = (description: string) =>
  z
    .string()
    .max(10)
    .regex(/^\d{4}-\d{2}-\d{2}$/, "expected a date as YYYY-MM-DD")
    .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d), "not a calendar date")
    .describe(description);

/** A field that also takes null (meaning "clear it"), keeping its description where clients read it. */
export const clearable = <T extends z.ZodType>(field: T) => field.nullable().describe(`${field.description ?? ""} null clears.`.trim());

/** An activity row as reads return it (whoami's delta, briefs, task_get). */
export const activityItemSchema = z.object({
  at: z.string().describe("When it happened."),
  verb: z.string().describe("What happened, e.g. task.created."),
  object_type: z.string().describe("Kind of object."),
  object_id: z.string().describe("The object's id."),
  actor_id: z.string().describe("Who did it."),
  actor_name: z.string().describe('Their name ("" if the actor is gone).'),
  summary: z.string().describe("One line."),
});
export type ActivityItem = z.infer<typeof activityItemSchema>;

/**
 * An activity row's actor by name (people read names, not ids), for a select from `activity`. Written out: the
 * subquery correlates with `activity.`, which drizzle leaves unqualified inside fields of a single-table select.
 */
export const activityActorName = sql<string>`COALESCE((SELECT name FROM actors WHERE actors.tenant_id = activity.tenant_id AND actors.id = activity.actor_id), '')`.as("actor_name");

/** An ActivityItem's fields, keyed by SQL column name, for a select from `activity`. */
export const activityItemFields = {
  at: activity.at,
  verb: activity.verb,
  object_type: activity.objectType,
  object_id: activity.objectId,
  actor_id: activity.actorId,
  actor_name: activityActorName,
  summary: activity.summary,
};

/**
 * How many items a list inside a single-object answer (task_get, project_brief, run_get) carries
 * at most. Such answers stay small however much piles up on one object; the list tools page the
 * rest.
 */
export const EMBEDDED_LIST_MAX = 50;

export const listInfoSchema = z.object({
  total: z.number().int().describe("How many there are in all."),
  returned: z.number().int().describe("How many this answer carries."),
  next_cursor: z.string().optional().describe("When more exist and the list tool continues this order: its cursor, resuming right after the last item returned."),
  more: z
    .object({
      tool: z.string().describe("The list tool that returns the rest."),
      arguments: z.record(z.string(), z.unknown()).describe("Its arguments (with cursor when next_cursor is given)."),
    })
    .optional()
    .describe("When more exist than returned: the call that pages the rest."),
});
export type ListInfo = z.infer<typeof listInfoSchema>;

/** The `lists` field of a single-object answer: one entry per bounded list in it. */
export const listsSchema = <K extends string>(lists: Record<K, string>) =>
  z
    .object(Object.fromEntries(Object.entries<string>(lists).map(([k, what]) => [k, listInfoSchema.describe(what)])) as Record<K, typeof listInfoSchema>)
    .describe(`For each list above (at most ${EMBEDDED_LIST_MAX} items each): how many exist in all, and when more exist, the call that pages the rest.`);

/**
 * Bounds one list of a single-object answer: at most `max` of `rows` (fetched with LIMIT max + 1
 * in the list tool's own order, so its cursor continues the list; the extra row only says more
 * exist), and the entry that says how many exist in all and how to page the rest. `cursorOf`
 * gives the list tool's keyset for a row; without it the pointer starts that tool from its first page.
 */
export function embeddedList<R>(
  rows: R[],
  total: number,
  pager: { tool: string; arguments: Record<string, unknown>; cursorOf?: (last: R) => ReadonlyArray<string | number | null> },
  max = EMBEDDED_LIST_MAX,
): { items: R[]; info: ListInfo } {
  const items = rows.slice(0, max);
  const info: ListInfo = { total: Math.max(total, items.length), returned: items.length };
  if (rows.length > max) {
    const last = items[items.length - 1];
    const cursor = pager.cursorOf && last !== undefined ? encodeKeyset(pager.cursorOf(last)) : undefined;
    if (cursor) info.next_cursor = cursor;
    info.more = { tool: pager.tool, arguments: { ...pager.arguments, ...(cursor ? { cursor } : {}) } };
  }
  return { items, info };
}
