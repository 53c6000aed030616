/** list_approvals (seed 004 "Other plan management tools"): the approval requests, to find one. */
import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { planIdField } from "../document/schema";
import { APPROVAL_STATUSES, approvalSchema, listApprovals } from "./model";
import { keysetPage } from "../../core/cursor";
import { cursorField, limitField } from "../../work/shared";

export const listApprovalsTool = defineTool({
  name: "list_approvals",
  title: "List approval requests",
  toolset: "plans",
  description: "Approval requests, newest first, optionally of one plan and in one status. The ones waiting for you are also in your inbox.",
  input: z.object({
    plan_id: planIdField.optional().describe("Only requests for this plan."),
    status: z.enum(APPROVAL_STATUSES).optional().describe("Only requests in this status."),
    limit: limitField(20, 100),
    cursor: cursorField,
  }),
  output: z.object({
    items: z.array(approvalSchema).describe("Approval requests, newest first."),
    next_cursor: z.string().optional().describe("Pass as cursor for the next page."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const rows = await listApprovals(ctx, { planId: input.plan_id, status: input.status, limit: input.limit + 1, cursor: input.cursor });
    const { page, cursor } = keysetPage(rows, input.limit, (a) => [a.created_at, a.id]);
    return { items: page, ...cursor };
  },
  summarize: (r) => `${r.items.length} approval request(s)${r.next_cursor ? ", more with next_cursor" : ""}.`,
});
