/** delete_plan (seed 004 "Persistence Tools"): a plan and everything kept for it. */
import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { planIdParam } from "../document/params";
import { deletePlan, planNotFound } from "./model";

export const deletePlanTool = defineTool({
  name: "delete_plan",
  title: "Delete a plan",
  toolset: "plans",
  description: "Delete a saved plan and its whole version history.",
  input: z.object({ plan_id: planIdParam }),
  output: z.object({
    plan_id: z.string().describe("The deleted plan's id."),
    deleted: z.literal(true).describe("Always true: a missing plan is not_found."),
    versions_deleted: z.number().int().describe("Versions removed with it."),
  }),
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const versions = await deletePlan(ctx, input.plan_id);
    if (versions === null) throw planNotFound(input.plan_id);
    return { plan_id: input.plan_id, deleted: true as const, versions_deleted: versions };
  },
  summarize: (r) => `Deleted plan ${r.plan_id} and ${r.versions_deleted} version(s).`,
});
