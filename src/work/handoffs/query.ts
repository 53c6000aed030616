import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { cursorField, limitField, keysetPage } from "../shared";
import { findTask } from "../tasks/model";
import { HANDOFF_KINDS, HANDOFF_STATUSES, type HandoffFilter, type HandoffRow, handoffSchema, inboxStatements, listHandoffs, toHandoff } from "./model";

export const handoffQueryTool = defineTool({
  name: "handoff_query",
  title: "Find handoffs",
  toolset: "handoffs",
  description: "List handoffs, newest first: to_me, from_me (yours, with their answers) or any.",
  input: z.object({
    direction: z.enum(["to_me", "from_me", "any"]).default("to_me").describe("Whose handoffs."),
    status: z.array(z.enum(HANDOFF_STATUSES)).max(5).optional().describe("Only these statuses."),
    type: z.array(z.enum(HANDOFF_KINDS)).max(5).optional().describe("Only these kinds."),
    related_task_id: z.string().min(1).max(100).optional().describe("Only handoffs about this task."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({ items: z.array(handoffSchema).describe("Handoffs."), next_cursor: z.string().optional().describe("Pass as cursor for the next page.") }),
  fields: true,
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const filter: HandoffFilter = {
      direction: input.direction,
      statuses: input.status,
      kinds: input.type,
      relatedTaskId: input.related_task_id ? (await findTask(ctx, input.related_task_id)).id : undefined,
      cursor: input.cursor,
    };
    const rows = await listHandoffs(ctx, filter, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.created_at, last.id]);
    return { items: page.map(toHandoff), ...cursor };
  },
  summarize: (r) => `${r.items.length} handoff(s).`,
});

export const inboxTool = defineTool({
  name: "inbox",
  title: "Your inbox",
  toolset: "handoffs",
  description: "Cheap poll of unacknowledged handoffs to you, oldest first; ack them after you act.",
  input: z.object({
    kinds: z.array(z.enum(HANDOFF_KINDS)).max(5).optional().describe("Only these kinds."),
    ack: z.array(z.string().min(1).max(100)).max(200).optional().describe("Ids you have acted on."),
    limit: limitField(50, 200),
  }),
  output: z.object({
    items: z.array(handoffSchema).describe("Unacknowledged handoffs addressed to you, oldest first."),
    acked: z.number().int().describe("How many of ack were acknowledged now (ids not addressed to you do not count)."),
    total: z.number().int().describe("Unacknowledged items in all."),
  }),
  fields: true,
  cost: { items: "ack" },
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const now = iso(ctx.clock.now());
    const [acked, items, total] = await ctx.d1.batch<HandoffRow & { n: number }>([...inboxStatements(ctx, input.kinds, input.ack ?? [], input.limit, now)]);
    return { items: (items!.results as HandoffRow[]).map(toHandoff), acked: acked!.results.length, total: total!.results[0]?.n ?? 0 };
  },
  summarize: (r) => `${r.total} item(s) in your inbox${r.acked ? `, ${r.acked} acknowledged` : ""}.`,
});
