/** Identity and directory (seed 001): whoami, register_actor, actor_query. */
import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../db/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { activityItemSchema, ACTIVITY_ITEM_COLUMNS, activityStatement, cursorField, decodeKeyset, jsonArray, limitField, keysetPage } from "../shared";
import { notificationSchema } from "../collab/model";
import { openTasksFor, taskSummarySchema } from "../tasks/summary";

export const ACTOR_KINDS = ["agent", "human", "service"] as const;

export const actorSchema = z.object({
  id: z.string().describe("Actor id."),
  external_ref: z.string().describe("Stable external reference (unique per tenant), e.g. claude-code."),
  kind: z.enum(ACTOR_KINDS).describe("agent, human or service."),
  display_name: z.string().describe("Human-readable name."),
  group: z.string().describe("Group or team, or \"\"."),
  role: z.string().describe("Role, or \"\"."),
  capabilities: z.array(z.string()).describe("What the actor can do, e.g. [\"typescript\", \"review\"]."),
  created_at: z.string().describe("When the actor was registered."),
  last_seen_at: z.string().describe("When it last called whoami, or \"\"."),
});
export type Actor = z.infer<typeof actorSchema>;

interface ActorRow {
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

const ACTOR_COLUMNS = "id, name, kind, display_name, group_name, role, capabilities, created_at, last_seen_at, last_seen_activity_seq";

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

const getActor = (ctx: Ctx, id: string) =>
  ctx.d1.prepare(`SELECT ${ACTOR_COLUMNS} FROM actors WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, id);

const recentDecisionSchema = z.object({
  id: z.string().describe("Decision id."),
  title: z.string().describe("Title."),
  status: z.string().describe("Status."),
  project_id: z.string().nullable().describe("Project, or null."),
  at: z.string().describe("When it was logged."),
});
type RecentDecision = z.infer<typeof recentDecisionSchema>;

const inboxItemSchema = z.object({
  id: z.string().describe("Handoff id."),
  kind: z.string().describe("handoff, question, review, collab or approval."),
  title: z.string().describe("Title."),
  status: z.string().describe("Status."),
  from_actor_id: z.string().describe("Who asked."),
  created_at: z.string().describe("When."),
});
type InboxItem = z.infer<typeof inboxItemSchema>;

const unreadSchema = notificationSchema.omit({ read_at: true });
type Unread = z.infer<typeof unreadSchema>;

const UNREAD_COLUMNS = "id, kind, object_type, object_id, summary, from_actor_id, created_at";

export const whoamiTool = defineTool({
  name: "whoami",
  title: "Who am I",
  toolset: "identity",
  description:
    "Call first in any run: who you are, your open tasks, your inbox, handoffs waiting on you, unread notifications and mentions, and what others did since you were last seen.",
  input: z.object({
    include: z.array(z.enum(["delta_items"])).max(5).optional().describe("delta_items: list the activity since you were last seen."),
  }),
  output: z.object({
    actor: actorSchema.describe("You."),
    tenant: z.object({ id: z.string().describe("Tenant id."), slug: z.string().describe("Tenant slug.") }).describe("Your tenant."),
    session_id: z.string().describe("This MCP session's id, or \"\"."),
    open_tasks: z.array(taskSummarySchema).describe("Tasks assigned to you that are not done or cancelled, highest priority first (up to 20)."),
    inbox: z.object({
      count: z.number().int().describe("Handoffs addressed to you, not yet acknowledged, that are open, claimed or answered (resolved and cancelled ones leave the inbox)."),
      items: z.array(inboxItemSchema).describe("The oldest ten of them (inbox has them all)."),
    }).describe("Your inbox."),
    handoffs_waiting: z.object({
      count: z.number().int().describe("Handoffs addressed to you that wait on you: open (nobody has claimed them) or claimed by you and not yet answered."),
      items: z.array(inboxItemSchema).describe("The oldest ten of them."),
    }).describe("What others wait on you for."),
    notifications: z.object({
      unread_count: z.number().int().describe("Your unread notifications."),
      items: z.array(unreadSchema).describe("The newest ten of them (notification_query in the collab toolset reads them all and marks them read)."),
    }).describe("Your unread notifications."),
    mentions: z.object({
      open_count: z.number().int().describe("Unread notifications that mention you in a comment."),
      items: z.array(unreadSchema).describe("The newest ten; object_id is the comment (comment_query in the collab toolset reads its thread)."),
    }).describe("Comments that mention you, not yet read."),
    recent_decisions: z.array(recentDecisionSchema).describe("The tenant's five newest decisions."),
    delta: z.object({
      since: z.string().describe("Your previous last_seen_at, or \"\" on your first call."),
      activity_count: z.number().int().describe("Activity by others since then."),
      items: z.array(activityItemSchema).describe("That activity, newest first (with include: [\"delta_items\"])."),
    }).describe("What changed since you were last seen."),
    hints: z.object({ next: z.array(z.string()).describe("Suggested next calls.") }).describe("Orientation."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  queryable: true,
  run: async (ctx, input) => {
    const now = iso(ctx.clock.now());
    const [actorRes, tenantRes] = await ctx.d1.batch<ActorRow & { slug: string }>([
      getActor(ctx, ctx.actorId),
      ctx.d1.prepare(`SELECT slug FROM tenants WHERE id = ?`).bind(ctx.tenantId),
    ]);
    const row = actorRes!.results[0]!;
    const since = row.last_seen_at ?? "";
    const seenSeq = row.last_seen_activity_seq ?? 0;
    const wantItems = input.include?.includes("delta_items") ?? false;
    // One batch is one transaction: the count, the items and the new high-water mark all see the
    // same activity, so nothing falls between two whoami calls.
    const [countRes, itemsRes] = await ctx.d1.batch<{ n: number } & z.infer<typeof activityItemSchema>>([
      ctx.d1.prepare(`SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND actor_id <> ? AND seq > ?`).bind(ctx.tenantId, ctx.actorId, seenSeq),
      ctx.d1
        .prepare(`SELECT ${ACTIVITY_ITEM_COLUMNS} FROM activity WHERE tenant_id = ? AND actor_id <> ? AND seq > ? ORDER BY seq DESC LIMIT ?`)
        .bind(ctx.tenantId, ctx.actorId, seenSeq, wantItems ? 50 : 0),
      ctx.d1
        .prepare(`UPDATE actors SET last_seen_at = ?, last_seen_activity_seq = (SELECT COALESCE(MAX(seq), 0) FROM activity WHERE tenant_id = ?) WHERE tenant_id = ? AND id = ?`)
        .bind(now, ctx.tenantId, ctx.tenantId, ctx.actorId),
    ]);
    // The inbox tool's rule: handoffs addressed to you, still live or answered, until you ack them.
    const unacked = `FROM handoff_recipients r JOIN handoffs h ON h.tenant_id = r.tenant_id AND h.id = r.handoff_id
      WHERE r.tenant_id = ? AND r.actor_id = ? AND r.acked_at IS NULL AND h.status IN ('open', 'claimed', 'responded')`;
    // Waiting on you: nobody has taken it yet, or you took it and have not answered.
    const waiting = `FROM handoff_recipients r JOIN handoffs h ON h.tenant_id = r.tenant_id AND h.id = r.handoff_id
      WHERE r.tenant_id = ? AND r.actor_id = ? AND (h.status = 'open' OR (h.status = 'claimed' AND h.claimed_by = r.actor_id))`;
    const unread = `FROM notifications WHERE tenant_id = ? AND actor_id = ? AND read_at IS NULL`;
    const mention = `${unread} AND kind = 'mention'`;
    const [openTasks, [inboxCount, inboxItems, waitingCount, waitingItems, unreadCount, unreadItems, mentionCount, mentionItems, decisions]] = await Promise.all([
      openTasksFor(ctx, ctx.actorId, 20),
      ctx.d1.batch<{ n: number } & InboxItem & Unread & RecentDecision>([
        ctx.d1.prepare(`SELECT COUNT(*) AS n ${unacked}`).bind(ctx.tenantId, ctx.actorId),
        ctx.d1.prepare(`SELECT h.id, h.kind, h.title, h.status, h.from_actor_id, h.created_at ${unacked} ORDER BY h.created_at ASC LIMIT 10`).bind(ctx.tenantId, ctx.actorId),
        ctx.d1.prepare(`SELECT COUNT(*) AS n ${waiting}`).bind(ctx.tenantId, ctx.actorId),
        ctx.d1.prepare(`SELECT h.id, h.kind, h.title, h.status, h.from_actor_id, h.created_at ${waiting} ORDER BY h.created_at ASC LIMIT 10`).bind(ctx.tenantId, ctx.actorId),
        ctx.d1.prepare(`SELECT COUNT(*) AS n ${unread}`).bind(ctx.tenantId, ctx.actorId),
        ctx.d1.prepare(`SELECT ${UNREAD_COLUMNS} ${unread} ORDER BY seq DESC LIMIT 10`).bind(ctx.tenantId, ctx.actorId),
        ctx.d1.prepare(`SELECT COUNT(*) AS n ${mention}`).bind(ctx.tenantId, ctx.actorId),
        ctx.d1.prepare(`SELECT ${UNREAD_COLUMNS} ${mention} ORDER BY seq DESC LIMIT 10`).bind(ctx.tenantId, ctx.actorId),
        ctx.d1.prepare(`SELECT id, title, status, project_id, created_at AS at FROM decisions WHERE tenant_id = ? ORDER BY seq DESC LIMIT 5`).bind(ctx.tenantId),
      ]),
    ]);
    const handoff = ({ id, kind, title, status, from_actor_id, created_at }: InboxItem) => ({ id, kind, title, status, from_actor_id, created_at });
    const note = ({ id, kind, object_type, object_id, summary, from_actor_id, created_at }: Unread) => ({ id, kind, object_type, object_id, summary, from_actor_id, created_at });
    const next = [
      ...((waitingCount!.results[0]?.n ?? 0) > 0 ? ["handoff_claim the handoffs waiting on you, then handoff_respond (inbox lists them)"] : []),
      ...(openTasks.length > 0
        ? [`task_get ${openTasks[0]!.ref} to resume your highest-priority task`]
        : ["task_claim to take the next ready task", "project_query to see the projects"]),
    ];
    return {
      actor: { ...toActor(row), last_seen_at: now },
      tenant: { id: ctx.tenantId, slug: tenantRes!.results[0]?.slug ?? "" },
      session_id: ctx.sessionId,
      open_tasks: openTasks,
      inbox: { count: inboxCount!.results[0]?.n ?? 0, items: inboxItems!.results.map(handoff) },
      handoffs_waiting: { count: waitingCount!.results[0]?.n ?? 0, items: waitingItems!.results.map(handoff) },
      notifications: { unread_count: unreadCount!.results[0]?.n ?? 0, items: unreadItems!.results.map(note) },
      mentions: { open_count: mentionCount!.results[0]?.n ?? 0, items: mentionItems!.results.map(note) },
      recent_decisions: decisions!.results.map(({ id, title, status, project_id, at }) => ({ id, title, status, project_id, at })),
      delta: { since, activity_count: countRes!.results[0]?.n ?? 0, items: itemsRes!.results },
      hints: { next },
    };
  },
  summarize: (r) => `You are ${r.actor.external_ref} (${r.actor.kind}) with ${r.open_tasks.length} open task(s); ${r.delta.activity_count} change(s) since you were last seen.`,
});

const textField = (max: number, description: string) => z.string().max(max).optional().describe(description);

export const registerActorTool = defineTool({
  name: "register_actor",
  title: "Register an actor",
  toolset: "identity",
  description:
    "Register an agent, human or service, idempotent by external_ref.",
  input: z.object({
    external_ref: z.string().min(1).max(200).regex(/^[^\s\p{Cc}]+$/u, "external_ref must not contain spaces or control characters").describe("Stable unique reference (claude-code, alice@example.com)."),
    kind: z.enum(ACTOR_KINDS).optional().describe("agent (default), human or service."),
    display_name: textField(200, "Human-readable name; defaults to external_ref."),
    group: textField(100, "Group or team."),
    role: textField(100, "Role, e.g. reviewer."),
    capabilities: z.array(z.string().min(1).max(100)).max(50).optional().describe("What the actor can do."),
    update: z.boolean().optional().describe("Replace an existing actor's differing fields."),
  }),
  output: z.object({
    actor: actorSchema.describe("The registered actor."),
    created: z.boolean().describe("True when this call created it; false when it already existed."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const now = iso(ctx.clock.now());
    const id = uuidv7();
    // Insert-or-nothing on the unique (tenant, external_ref) index: racing calls converge.
    const [inserted, , registered] = await ctx.d1.batch<ActorRow>([
      ctx.d1
        .prepare(
          `INSERT INTO actors (id, tenant_id, name, kind, display_name, group_name, role, capabilities, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, name) DO NOTHING RETURNING id`,
        )
        .bind(id, ctx.tenantId, input.external_ref, input.kind ?? "agent", input.display_name ?? input.external_ref, input.group ?? "",
          input.role ?? "", JSON.stringify(input.capabilities ?? []), now, now),
      activityStatement(ctx, { verb: "actor.registered", objectType: "actor", objectId: id, summary: `registered ${input.kind ?? "agent"} ${input.external_ref}`, ifPreviousChanged: true }),
      ctx.d1.prepare(`SELECT ${ACTOR_COLUMNS} FROM actors WHERE tenant_id = ? AND name = ?`).bind(ctx.tenantId, input.external_ref),
    ]);
    if (inserted!.results.length > 0) return { actor: toActor(registered!.results[0]!), created: true };
    const existing = registered!.results[0]!;
    const patch: Array<[keyof ActorRow, string | undefined]> = [
      ["kind", input.kind], ["display_name", input.display_name], ["group_name", input.group], ["role", input.role],
      ["capabilities", input.capabilities && JSON.stringify(input.capabilities)],
    ];
    // Only fields that differ: a repeated re-registration writes nothing.
    const differing = patch.filter(([column, value]) => value !== undefined && value !== existing[column]) as Array<[keyof ActorRow, string]>;
    if (differing.length === 0) return { actor: toActor(existing), created: false };
    const names = differing.map(([c]) => (c === "group_name" ? "group" : c)).join(", ");
    // Another caller may have registered this actor a moment ago: replacing its fields unasked would
    // acknowledge its registration and then lose it.
    if (!input.update) {
      throw new ToolError("conflict", `Actor '${input.external_ref}' is already registered with a different ${names}; nothing was changed.`, {
        hint: "Omit those fields to resolve the actor as it is (actor_query shows it), or pass update: true to replace them.",
      });
    }
    // Compare-and-swap on the values read, so two racing updates cannot both be acknowledged.
    const [updated, , after] = await ctx.d1.batch<ActorRow>([
      ctx.d1
        .prepare(`UPDATE actors SET ${differing.map(([c]) => `${c} = ?`).join(", ")}, updated_at = ?
                  WHERE tenant_id = ? AND name = ? AND ${differing.map(([c]) => `${c} IS ?`).join(" AND ")} RETURNING id`)
        .bind(...differing.map(([, v]) => v), now, ctx.tenantId, input.external_ref, ...differing.map(([c]) => existing[c])),
      activityStatement(ctx, {
        verb: "actor.updated", objectType: "actor", objectId: existing.id, summary: `updated ${input.external_ref}`,
        metadata: { changed: differing.map(([c]) => c), previous: Object.fromEntries(differing.map(([c]) => [c, existing[c]])) }, ifPreviousChanged: true,
      }),
      ctx.d1.prepare(`SELECT ${ACTOR_COLUMNS} FROM actors WHERE tenant_id = ? AND name = ?`).bind(ctx.tenantId, input.external_ref),
    ]);
    const current = after!.results[0]!;
    if (updated!.results.length === 0 && !differing.every(([c, v]) => current[c] === v)) {
      throw new ToolError("conflict", `Actor '${input.external_ref}' was changed by another call while this one ran; nothing was changed.`, {
        hint: "Re-read it with actor_query; to replace what it holds now, retry with update: true.",
      });
    }
    return { actor: toActor(current), created: false };
  },
  summarize: (r) => `${r.created ? "Registered" : "Resolved"} ${r.actor.external_ref} (${r.actor.id}).`,
});

export const actorQueryTool = defineTool({
  name: "actor_query",
  title: "Find actors",
  toolset: "identity",
  description: "Find actors by kind, group, capability or text, e.g. before assigning or sending a handoff.",
  input: z.object({
    kind: z.enum(ACTOR_KINDS).optional().describe("Only this kind."),
    group: z.string().max(100).optional().describe("Exact group."),
    capability: z.string().max(100).optional().describe("Actors that list this capability."),
    q: z.string().max(200).optional().describe("Case-insensitive text in external_ref, display name or role."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(actorSchema).describe("Matching actors."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page; absent on the last page."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const where = ["tenant_id = ?"];
    const params: unknown[] = [ctx.tenantId];
    if (input.kind) { where.push("kind = ?"); params.push(input.kind); }
    if (input.group) { where.push("group_name = ?"); params.push(input.group); }
    if (input.capability) { where.push("EXISTS (SELECT 1 FROM json_each(actors.capabilities) c WHERE c.value = ?)"); params.push(input.capability); }
    if (input.q?.trim()) {
      where.push("(instr(lower(name), lower(?)) > 0 OR instr(lower(display_name), lower(?)) > 0 OR instr(lower(role), lower(?)) > 0)");
      params.push(input.q.trim(), input.q.trim(), input.q.trim());
    }
    const after = decodeKeyset(input.cursor, 1);
    if (after) { where.push("name > ?"); params.push(after[0]); }
    const rows = await ctx.d1
      .prepare(`SELECT ${ACTOR_COLUMNS} FROM actors WHERE ${where.join(" AND ")} ORDER BY name LIMIT ?`)
      .bind(...params, input.limit + 1)
      .all<ActorRow>();
    const { page, cursor } = keysetPage(rows.results, input.limit, (last) => [last.name]);
    return {
      items: page.map(toActor),
      ...cursor,
    };
  },
  summarize: (r) => `${r.items.length} actor(s).`,
});
