import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { activityItemSchema } from "../shared";
import { openTasksFor, taskSummarySchema } from "../tasks/summary";
import {
  type ActorRow,
  actorSchema,
  digestStatements,
  getActor,
  type InboxItem,
  inboxItemSchema,
  type RecentDecision,
  recentDecisionSchema,
  seenSinceStatements,
  tenantSlugStatement,
  toActor,
  type Unread,
  unreadSchema,
} from "./model";

export const whoamiTool = defineTool({
  name: "whoami",
  title: "Who am I",
  toolset: "identity",
  description: "Call first in any run: who you are, your open tasks, your inbox, handoffs waiting on you, unread notifications and mentions, and what others did since you were last seen.",
  input: z.object({
    include: z
      .array(z.enum(["delta_items"]))
      .max(5)
      .optional()
      .describe("delta_items: list the activity since you were last seen."),
  }),
  output: z.object({
    actor: actorSchema.describe("You."),
    tenant: z.object({ id: z.string().describe("Tenant id."), slug: z.string().describe("Tenant slug.") }).describe("Your tenant."),
    session_id: z.string().describe('This MCP session\'s id, or "".'),
    open_tasks: z.array(taskSummarySchema).describe("Tasks assigned to you that are not done or cancelled, highest priority first (up to 20)."),
    inbox: z
      .object({
        count: z.number().int().describe("Handoffs addressed to you, not yet acknowledged, that are open, claimed or answered (resolved and cancelled ones leave the inbox)."),
        items: z.array(inboxItemSchema).describe("The oldest ten of them (inbox has them all)."),
      })
      .describe("Your inbox."),
    handoffs_waiting: z
      .object({
        count: z.number().int().describe("Handoffs addressed to you that wait on you: open (nobody has claimed them) or claimed by you and not yet answered."),
        items: z.array(inboxItemSchema).describe("The oldest ten of them."),
      })
      .describe("What others wait on you for."),
    notifications: z
      .object({
        unread_count: z.number().int().describe("Your unread notifications."),
        items: z.array(unreadSchema).describe("The newest ten of them (notification_query in the collab toolset reads them all and marks them read)."),
      })
      .describe("Your unread notifications."),
    mentions: z
      .object({
        open_count: z.number().int().describe("Unread notifications that mention you in a comment."),
        items: z.array(unreadSchema).describe("The newest ten; object_id is the comment (comment_query in the collab toolset reads its thread)."),
      })
      .describe("Comments that mention you, not yet read."),
    recent_decisions: z.array(recentDecisionSchema).describe("The tenant's five newest decisions."),
    delta: z
      .object({
        since: z.string().describe('Your previous last_seen_at, or "" on your first call.'),
        activity_count: z.number().int().describe("Activity by others since then."),
        items: z.array(activityItemSchema).describe('That activity, newest first (with include: ["delta_items"]).'),
      })
      .describe("What changed since you were last seen."),
    hints: z.object({ next: z.array(z.string()).describe("Suggested next calls.") }).describe("Orientation."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  queryable: true,
  run: async (ctx, input) => {
    const now = iso(ctx.clock.now());
    const [actorRes, tenantRes] = await ctx.d1.batch<ActorRow & { slug: string }>([getActor(ctx, ctx.actorId), tenantSlugStatement(ctx)]);
    const row = actorRes!.results[0]!;
    const since = row.last_seen_at ?? "";
    const seenSeq = row.last_seen_activity_seq ?? 0;
    const wantItems = input.include?.includes("delta_items") ?? false;
    // One batch is one transaction: the count, the items and the new high-water mark all see the
    // same activity, so nothing falls between two whoami calls.
    const [countRes, itemsRes] = await ctx.d1.batch<{ n: number } & z.infer<typeof activityItemSchema>>([...seenSinceStatements(ctx, seenSeq, wantItems ? 50 : 0, now)]);
    const [openTasks, [inboxCount, inboxItems, waitingCount, waitingItems, unreadCount, unreadItems, mentionCount, mentionItems, decisions]] = await Promise.all([
      openTasksFor(ctx, ctx.actorId, 20),
      ctx.d1.batch<{ n: number } & InboxItem & Unread & RecentDecision>([...digestStatements(ctx)]),
    ]);
    const handoff = ({ id, kind, title, status, from_actor_id, created_at }: InboxItem) => ({ id, kind, title, status, from_actor_id, created_at });
    const note = ({ id, kind, object_type, object_id, summary, from_actor_id, created_at }: Unread) => ({ id, kind, object_type, object_id, summary, from_actor_id, created_at });
    const next = [
      ...((waitingCount!.results[0]?.n ?? 0) > 0 ? ["handoff_claim the handoffs waiting on you, then handoff_respond (inbox lists them)"] : []),
      ...(openTasks.length > 0 ? [`task_get ${openTasks[0]!.ref} to resume your highest-priority task`] : ["task_claim to take the next ready task", "project_query to see the projects"]),
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
