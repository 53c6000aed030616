import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { cursorField, decodeKeyset, limitField, keysetPage } from "../shared";
import { callerNotificationsStatement, callerUnreadCountStatement, markNotificationsRead, type NotificationRow, notificationSchema } from "./model";

export const notificationQueryTool = defineTool({
  name: "notification_query",
  title: "Read your notifications",
  toolset: "collab",
  description: "Your own notifications (only ever yours): unread overseer messages first, then newest first. unread_only: true filters to unread.",
  input: z.object({
    unread_only: z.boolean().default(false).describe("Only unread ones."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(notificationSchema).describe("Notifications, in that order."),
    unread_count: z.number().int().describe("How many are unread in all."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const after = decodeKeyset(input.cursor, 2);
    const [rows, unread] = await ctx.d1.batch<NotificationRow & { n: number }>([
      callerNotificationsStatement(ctx, input.unread_only, after ? [Number(after[0]), Number(after[1])] : null, input.limit + 1),
      callerUnreadCountStatement(ctx),
    ]);
    const { page, cursor } = keysetPage(rows!.results, input.limit, (last) => [last.pinned, last.seq]);
    return {
      items: page.map(({ seq: _seq, n: _n, pinned: _pinned, ...r }) => r),
      unread_count: unread!.results[0]?.n ?? 0,
      ...cursor,
    };
  },
  summarize: (r) => `${r.items.length} notification(s), ${r.unread_count} unread.`,
});

export const notificationMarkReadTool = defineTool({
  name: "notification_mark_read",
  title: "Mark notifications read",
  toolset: "collab",
  description: "Mark some of your notifications read, by id. Ids that are not yours (or do not exist) are not counted. Returns how many were marked.",
  input: z.object({ ids: z.array(z.string().min(1).max(100)).min(1).max(200).describe("Notification ids.") }),
  output: z.object({ marked: z.number().int().describe("How many changed from unread to read.") }),
  cost: { items: "ids" },
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const marked = await markNotificationsRead(ctx, input.ids, iso(ctx.clock.now()));
    return { marked: marked.length };
  },
  summarize: (r) => `${r.marked} marked read.`,
});
