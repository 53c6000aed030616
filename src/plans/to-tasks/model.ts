/**
 * The links from a plan's steps to the work-ledger tasks that track them (plan_step_tasks). The
 * progress engine reads them (src/plans/progress/engine.ts); plan_to_tasks writes them here.
 */
import type { Ctx } from "../../core/context";

/** Links one step to its task; the table's key refuses a second link, so racing calls cannot both link a step. */
export const linkStepStatement = (ctx: Ctx, planId: string, stepNumber: number, taskId: string, now: string): D1PreparedStatement =>
  ctx.d1.prepare(`INSERT INTO plan_step_tasks (tenant_id, plan_id, step_number, task_id, created_at) VALUES (?, ?, ?, ?, ?)`).bind(ctx.tenantId, planId, stepNumber, taskId, now);
