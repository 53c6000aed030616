import { z } from "zod";
import { iso } from "../../db/time";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { cursorField, afterTimeAndId, limitField, keysetPage } from "../shared";
import { findTask } from "../tasks/model";
import { HANDOFF_KINDS, HANDOFF_STATUSES, type HandoffRow, handoffSchema, inboxStatements, listHandoffs, toHandoff } from "./model";

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
    const where = ["h.tenant_id = ?"];
    const params: unknown[] = [ctx.tenantId];
    const toMe = "EXISTS (SELECT 1 FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id AND r.actor_id = ?)";
    if (input.direction === "to_me") {
      where.push(toMe);
      params.push(ctx.actorId);
    } else if (input.direction === "from_me") {
      where.push("h.from_actor_id = ?");
      params.push(ctx.actorId);
    }
    if (input.status?.length) {
      where.push(`h.status IN (${input.status.map(() => "?").join(", ")})`);
      params.push(...input.status);
    }
    if (input.type?.length) {
      where.push(`h.kind IN (${input.type.map(() => "?").join(", ")})`);
      params.push(...input.type);
    }
    if (input.related_task_id) {
      where.push("h.related_task_id = ?");
      params.push((await findTask(ctx, input.related_task_id)).id);
    }
    const after = afterTimeAndId(input.cursor, "h.created_at", "h.id");
    if (after) {
      where.push(after.sql);
      params.push(...after.params);
    }
    const rows = await listHandoffs(ctx, where, params, input.limit + 1);
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
