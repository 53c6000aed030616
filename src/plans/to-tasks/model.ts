/**
 * The links from a plan's steps to the work-ledger tasks that track them (plan_step_tasks). The
 * progress engine reads them (src/plans/progress/engine.ts); plan_to_tasks writes them here.
 */
import type { Ctx } from "../../core/context";
import { dbOf, statementOf } from "../../db/client";
import { planStepTasks } from "../../db/schema";

/** Links one step to its task; the table's key refuses a second link, so racing calls cannot both link a step. */
export const linkStepStatement = (ctx: Ctx, planId: string, stepNumber: number, taskId: string, now: string): D1PreparedStatement =>
  statementOf(ctx.d1, dbOf(ctx).insert(planStepTasks).values({ tenantId: ctx.tenantId, planId, stepNumber, taskId, createdAt: now }));
