/** Identity and directory (seed 001): whoami, register_actor, actor_query. */
import { z } from "zod";
import { and, asc, count, desc, eq, gt, inArray, isNull, ne, or, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Ctx } from "../../core/context";
import { dbOf, fromColumnNames, statementOf } from "../../db/client";
import { stillHolding } from "../../db/compare-and-swap";
import { activity, actors, decisions, handoffRecipients, handoffs, notifications, tenants } from "../../db/schema";
import { activityItemFields, jsonArray } from "../shared";
import { notificationSchema, pinnedNotice } from "../collab/model";

export const ACTOR_KINDS = ["agent", "human", "service"] as const;

export const actorSchema = z.object({
  id: z.string().describe("Actor id."),
  external_ref: z.string().describe("Stable external reference (unique per tenant), e.g. claude-code."),
  kind: z.enum(ACTOR_KINDS).describe("agent, human or service."),
  display_name: z.string().describe("Human-readable name."),
  group: z.string().describe('Group or team, or "".'),
  role: z.string().describe('Role, or "".'),
  capabilities: z.array(z.string()).describe('What the actor can do, e.g. ["typescript", "review"].'),
  created_at: z.string().describe("When the actor was registered."),
  last_seen_at: z.string().describe('When it last called whoami, or "".'),
});
export type Actor = z.infer<typeof actorSchema>;

export interface ActorRow {
  id: string;
  name: string;
  kind: string;
  display_name: string;
  group_name: string;
  role: string;
  capabilities: string;
  created_at: string;
  last_seen_at: string | null;
  last_seen_activity_seq?: number;
}

/** An actor row's fields, keyed by SQL column name so rows keep the shape the tools read. */
const actorFields = {
  id: actors.id,
  name: actors.name,
  kind: actors.kind,
  display_name: actors.displayName,
  group_name: actors.groupName,
  role: actors.role,
  capabilities: actors.capabilities,
  created_at: actors.createdAt,
  last_seen_at: actors.lastSeenAt,
  last_seen_activity_seq: actors.lastSeenActivitySeq,
};

/** One actor of the caller's tenant, by a condition on the actors table; joins a batch. */
const actorStatement = (ctx: Ctx, match: SQL) =>
  statementOf(
    ctx.d1,
    dbOf(ctx)
      .select(actorFields)
      .from(actors)
      .where(and(eq(actors.tenantId, ctx.tenantId), match)),
  );

export function toActor(r: ActorRow): Actor {
  return {
    id: r.id,
    external_ref: r.name,
    kind: (ACTOR_KINDS as readonly string[]).includes(r.kind) ? (r.kind as Actor["kind"]) : "agent",
    display_name: r.display_name || r.name,
    group: r.group_name,
    role: r.role,
    capabilities: jsonArray<string>(r.capabilities),
    created_at: r.created_at,
    last_seen_at: r.last_seen_at ?? "",
  };
}

export const getActor = (ctx: Ctx, id: string) => actorStatement(ctx, eq(actors.id, id));

export const recentDecisionSchema = z.object({
  id: z.string().describe("Decision id."),
  title: z.string().describe("Title."),
  status: z.string().describe("Status."),
  project_id: z.string().nullable().describe("Project, or null."),
  at: z.string().describe("When it was logged."),
});
export type RecentDecision = z.infer<typeof recentDecisionSchema>;

export const inboxItemSchema = z.object({
  id: z.string().describe("Handoff id."),
  kind: z.string().describe("handoff, question, review, collab or approval."),
  title: z.string().describe("Title."),
  status: z.string().describe("Status."),
  from_actor_id: z.string().describe("Who asked."),
  created_at: z.string().describe("When."),
});
export type InboxItem = z.infer<typeof inboxItemSchema>;

export const unreadSchema = notificationSchema.omit({ read_at: true });
export type Unread = z.infer<typeof unreadSchema>;

/** An unread notification's fields, keyed by SQL column name as the digest returns them. */
const unreadFields = {
  id: notifications.id,
  kind: notifications.kind,
  object_type: notifications.objectType,
  object_id: notifications.objectId,
  summary: notifications.summary,
  from_actor_id: notifications.fromActorId,
  created_at: notifications.createdAt,
};

/** The actor registered under a name (external_ref); joins a batch. */
export const actorByNameStatement = (ctx: Ctx, name: string) => actorStatement(ctx, eq(actors.name, name));

/** actor_query's filter, and where the page resumes. */
export interface ActorFilter {
  kind?: string;
  group?: string;
  /** Actors whose capabilities list this one. */
  capability?: string;
  /** Case-insensitive text in name, display name or role. */
  q?: string;
  /** The cursor's position: only actors named after it. */
  afterName?: string | number | null;
}

/** A page of actors that pass the filter, by name. */
export async function listActors(ctx: Ctx, f: ActorFilter, limit: number): Promise<ActorRow[]> {
  const where = and(
    eq(actors.tenantId, ctx.tenantId),
    f.kind !== undefined ? eq(actors.kind, f.kind) : undefined,
    f.group !== undefined ? eq(actors.groupName, f.group) : undefined,
    f.capability !== undefined ? sql`EXISTS (SELECT 1 FROM json_each(${actors.capabilities}) c WHERE c.value = ${f.capability})` : undefined,
    f.q !== undefined ? sql`(instr(lower(${actors.name}), lower(${f.q})) > 0 OR instr(lower(${actors.displayName}), lower(${f.q})) > 0 OR instr(lower(${actors.role}), lower(${f.q})) > 0)` : undefined,
    f.afterName !== undefined ? gt(actors.name, f.afterName as string) : undefined,
  );
  return (await dbOf(ctx).select(actorFields).from(actors).where(where).orderBy(asc(actors.name)).limit(limit).all()) as ActorRow[];
}

export interface ActorInsert {
  id: string;
  name: string;
  kind: string;
  displayName: string;
  group: string;
  role: string;
  capabilities: string;
  now: string;
}

/** Insert-or-nothing on the unique (tenant, name) index; returns the id only when it inserted. */
export function insertActorStatement(ctx: Ctx, a: ActorInsert): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .insert(actors)
      // drizzle writes null for a column left out (SQLite has no DEFAULT in VALUES): the migrations' defaults are spelled out.
      .values({
        id: a.id,
        tenantId: ctx.tenantId,
        name: a.name,
        kind: a.kind,
        displayName: a.displayName,
        groupName: a.group,
        role: a.role,
        capabilities: a.capabilities,
        createdAt: a.now,
        updatedAt: a.now,
        lastSeenAt: null,
        lastSeenActivitySeq: 0,
      })
      .onConflictDoNothing({ target: [actors.tenantId, actors.name] })
      .returning({ id: actors.id }),
  );
}

/** Compare-and-swap update of an actor's columns: applies only while each still holds its `previous` value; returns the id when it did. */
export function updateActorStatement(ctx: Ctx, name: string, changes: Array<[keyof ActorRow, string | undefined]>, previous: ActorRow, now: string): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .update(actors)
      .set({ ...fromColumnNames(actors, Object.fromEntries(changes)), updatedAt: now })
      .where(
        and(
          eq(actors.tenantId, ctx.tenantId),
          eq(actors.name, name),
          ...stillHolding(
            actors,
            { ...previous },
            changes.map(([c]) => c),
          ),
        ),
      )
      .returning({ id: actors.id }),
  );
}

export const tenantSlugStatement = (ctx: Ctx) => statementOf(ctx.d1, dbOf(ctx).select({ slug: tenants.slug }).from(tenants).where(eq(tenants.id, ctx.tenantId)));

/**
 * whoami's delta, in the order it must run in one batch (one transaction): the count of others' activity
 * after `seenSeq`, up to `items` of those entries, then the caller's new high-water mark.
 */
export function seenSinceStatements(ctx: Ctx, seenSeq: number, items: number, now: string): D1PreparedStatement[] {
  const db = dbOf(ctx);
  return [
    statementOf(
      ctx.d1,
      db
        .select({ n: count().as("n") })
        .from(activity)
        .where(and(eq(activity.tenantId, ctx.tenantId), ne(activity.actorId, ctx.actorId), gt(activity.seq, seenSeq))),
    ),
    statementOf(
      ctx.d1,
      db
        .select(activityItemFields)
        .from(activity)
        .where(and(eq(activity.tenantId, ctx.tenantId), ne(activity.actorId, ctx.actorId), gt(activity.seq, seenSeq)))
        .orderBy(desc(activity.seq))
        .limit(items),
    ),
    statementOf(
      ctx.d1,
      db
        .update(actors)
        .set({ lastSeenAt: now, lastSeenActivitySeq: sql`(SELECT COALESCE(MAX(${activity.seq}), 0) FROM ${activity} WHERE ${activity.tenantId} = ${ctx.tenantId})` })
        .where(and(eq(actors.tenantId, ctx.tenantId), eq(actors.id, ctx.actorId))),
    ),
  ];
}

/**
 * whoami's digest for the caller, as count/items pairs: inbox, handoffs waiting, unread notifications, open mentions;
 * then the tenant's five latest decisions.
 */
export function digestStatements(ctx: Ctx): D1PreparedStatement[] {
  const db = dbOf(ctx);
  const r = alias(handoffRecipients, "r");
  const h = alias(handoffs, "h");
  const inboxFields = { id: h.id, kind: h.kind, title: h.title, status: h.status, from_actor_id: h.fromActorId, created_at: h.createdAt };
  const on = and(eq(h.tenantId, r.tenantId), eq(h.id, r.handoffId));
  /** The count and the first ten of the handoffs addressed to the caller that pass `where`, oldest first. */
  const addressed = (where: SQL | undefined) => {
    const match = and(eq(r.tenantId, ctx.tenantId), eq(r.actorId, ctx.actorId), where);
    return [
      statementOf(
        ctx.d1,
        db
          .select({ n: count().as("n") })
          .from(r)
          .innerJoin(h, on)
          .where(match),
      ),
      statementOf(ctx.d1, db.select(inboxFields).from(r).innerJoin(h, on).where(match).orderBy(h.createdAt).limit(10)),
    ];
  };
  /** The count and the ten latest of the caller's notifications that pass `where`. */
  const notices = (where: SQL | undefined) => [
    statementOf(
      ctx.d1,
      db
        .select({ n: count().as("n") })
        .from(notifications)
        .where(where),
    ),
    statementOf(ctx.d1, db.select(unreadFields).from(notifications).where(where).orderBy(desc(pinnedNotice), desc(notifications.seq)).limit(10)),
  ];
  // The inbox tool's rule: handoffs addressed to you, still live or answered, until you ack them.
  const unacked = and(isNull(r.ackedAt), inArray(h.status, ["open", "claimed", "responded"]));
  // Waiting on you: nobody has taken it yet, or you took it and have not answered.
  const waiting = or(eq(h.status, "open"), and(eq(h.status, "claimed"), eq(h.claimedBy, r.actorId)));
  const unread = and(eq(notifications.tenantId, ctx.tenantId), eq(notifications.actorId, ctx.actorId), isNull(notifications.readAt));
  return [
    ...addressed(unacked),
    ...addressed(waiting),
    ...notices(unread),
    ...notices(and(unread, eq(notifications.kind, "mention"))),
    statementOf(
      ctx.d1,
      db
        .select({ id: decisions.id, title: decisions.title, status: decisions.status, project_id: decisions.projectId, at: sql`${decisions.createdAt}`.as("at") })
        .from(decisions)
        .where(eq(decisions.tenantId, ctx.tenantId))
        .orderBy(desc(decisions.seq))
        .limit(5),
    ),
  ];
}
