/** Identity and directory (seed 001): whoami, register_actor, actor_query. */
import { z } from "zod";
import type { Ctx } from "../../core/context";
import { ACTIVITY_ITEM_COLUMNS, jsonArray } from "../shared";
import { notificationSchema } from "../collab/model";

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

export const ACTOR_COLUMNS = "id, name, kind, display_name, group_name, role, capabilities, created_at, last_seen_at, last_seen_activity_seq";

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

export const getActor = (ctx: Ctx, id: string) => ctx.d1.prepare(`SELECT ${ACTOR_COLUMNS} FROM actors WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, id);

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

export const UNREAD_COLUMNS = "id, kind, object_type, object_id, summary, from_actor_id, created_at";

/** The actor registered under a name (external_ref); joins a batch. */
export const actorByNameStatement = (ctx: Ctx, name: string) => ctx.d1.prepare(`SELECT ${ACTOR_COLUMNS} FROM actors WHERE tenant_id = ? AND name = ?`).bind(ctx.tenantId, name);

/** A page of actors that pass the filter, by name. */
export async function listActors(ctx: Ctx, where: string[], params: unknown[], limit: number): Promise<ActorRow[]> {
  return (
    await ctx.d1
      .prepare(`SELECT ${ACTOR_COLUMNS} FROM actors WHERE ${where.join(" AND ")} ORDER BY name LIMIT ?`)
      .bind(...params, limit)
      .all<ActorRow>()
  ).results;
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
  return ctx.d1
    .prepare(
      `INSERT INTO actors (id, tenant_id, name, kind, display_name, group_name, role, capabilities, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, name) DO NOTHING RETURNING id`,
    )
    .bind(a.id, ctx.tenantId, a.name, a.kind, a.displayName, a.group, a.role, a.capabilities, a.now, a.now);
}

/** Compare-and-swap update of an actor's columns: applies only while each still holds its `previous` value; returns the id when it did. */
export function updateActorStatement(ctx: Ctx, name: string, changes: Array<[keyof ActorRow, string | undefined]>, previous: ActorRow, now: string): D1PreparedStatement {
  return ctx.d1
    .prepare(
      `UPDATE actors SET ${changes.map(([c]) => `${c} = ?`).join(", ")}, updated_at = ?
                  WHERE tenant_id = ? AND name = ? AND ${changes.map(([c]) => `${c} IS ?`).join(" AND ")} RETURNING id`,
    )
    .bind(...changes.map(([, v]) => v), now, ctx.tenantId, name, ...changes.map(([c]) => previous[c]));
}

export const tenantSlugStatement = (ctx: Ctx) => ctx.d1.prepare(`SELECT slug FROM tenants WHERE id = ?`).bind(ctx.tenantId);

/**
 * whoami's delta, in the order it must run in one batch (one transaction): the count of others' activity
 * after `seenSeq`, up to `items` of those entries, then the caller's new high-water mark.
 */
export function seenSinceStatements(ctx: Ctx, seenSeq: number, items: number, now: string): D1PreparedStatement[] {
  return [
    ctx.d1.prepare(`SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND actor_id <> ? AND seq > ?`).bind(ctx.tenantId, ctx.actorId, seenSeq),
    ctx.d1.prepare(`SELECT ${ACTIVITY_ITEM_COLUMNS} FROM activity WHERE tenant_id = ? AND actor_id <> ? AND seq > ? ORDER BY seq DESC LIMIT ?`).bind(ctx.tenantId, ctx.actorId, seenSeq, items),
    ctx.d1
      .prepare(`UPDATE actors SET last_seen_at = ?, last_seen_activity_seq = (SELECT COALESCE(MAX(seq), 0) FROM activity WHERE tenant_id = ?) WHERE tenant_id = ? AND id = ?`)
      .bind(now, ctx.tenantId, ctx.tenantId, ctx.actorId),
  ];
}

/**
 * whoami's digest for the caller, as count/items pairs: inbox, handoffs waiting, unread notifications, open mentions;
 * then the tenant's five latest decisions.
 */
export function digestStatements(ctx: Ctx): D1PreparedStatement[] {
  // The inbox tool's rule: handoffs addressed to you, still live or answered, until you ack them.
  const unacked = `FROM handoff_recipients r JOIN handoffs h ON h.tenant_id = r.tenant_id AND h.id = r.handoff_id
      WHERE r.tenant_id = ? AND r.actor_id = ? AND r.acked_at IS NULL AND h.status IN ('open', 'claimed', 'responded')`;
  // Waiting on you: nobody has taken it yet, or you took it and have not answered.
  const waiting = `FROM handoff_recipients r JOIN handoffs h ON h.tenant_id = r.tenant_id AND h.id = r.handoff_id
      WHERE r.tenant_id = ? AND r.actor_id = ? AND (h.status = 'open' OR (h.status = 'claimed' AND h.claimed_by = r.actor_id))`;
  const unread = `FROM notifications WHERE tenant_id = ? AND actor_id = ? AND read_at IS NULL`;
  const mention = `${unread} AND kind = 'mention'`;
  return [
    ctx.d1.prepare(`SELECT COUNT(*) AS n ${unacked}`).bind(ctx.tenantId, ctx.actorId),
    ctx.d1.prepare(`SELECT h.id, h.kind, h.title, h.status, h.from_actor_id, h.created_at ${unacked} ORDER BY h.created_at ASC LIMIT 10`).bind(ctx.tenantId, ctx.actorId),
    ctx.d1.prepare(`SELECT COUNT(*) AS n ${waiting}`).bind(ctx.tenantId, ctx.actorId),
    ctx.d1.prepare(`SELECT h.id, h.kind, h.title, h.status, h.from_actor_id, h.created_at ${waiting} ORDER BY h.created_at ASC LIMIT 10`).bind(ctx.tenantId, ctx.actorId),
    ctx.d1.prepare(`SELECT COUNT(*) AS n ${unread}`).bind(ctx.tenantId, ctx.actorId),
    ctx.d1.prepare(`SELECT ${UNREAD_COLUMNS} ${unread} ORDER BY seq DESC LIMIT 10`).bind(ctx.tenantId, ctx.actorId),
    ctx.d1.prepare(`SELECT COUNT(*) AS n ${mention}`).bind(ctx.tenantId, ctx.actorId),
    ctx.d1.prepare(`SELECT ${UNREAD_COLUMNS} ${mention} ORDER BY seq DESC LIMIT 10`).bind(ctx.tenantId, ctx.actorId),
    ctx.d1.prepare(`SELECT id, title, status, project_id, created_at AS at FROM decisions WHERE tenant_id = ? ORDER BY seq DESC LIMIT 5`).bind(ctx.tenantId),
  ];
}
