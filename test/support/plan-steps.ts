/** A plan whose steps move (a diamond plus an independent step), and readings of where its steps and tasks stand: the step and plan_to_tasks tests share them. */
import { env } from "cloudflare:workers";
import type { Ctx } from "../../src/core/context";
import { ok, type World } from "./helpers";

/** 1 → (2, 3) → 4, and 5 on its own: a diamond plus an independent step. */
export function plan(id: string, extra: Record<string, unknown> = {}): { id: string; goal: string; steps: Array<Record<string, unknown>> } {
  return {
    id,
    goal: "Add rate limiting to the public API",
    steps: [
      {
        step_number: 1,
        title: "Add a limiter module",
        priority: "high",
        files_to_create: [{ path: "src/http/limit.ts", change_type: "create" }],
        acceptance_criteria: ["limit.ts exports a token bucket"],
      },
      { step_number: 2, title: "Wire it into the router", depends_on: [1], files_to_modify: [{ path: "src/http/router.ts" }] },
      { step_number: 3, title: "Document the limits", depends_on: [1], priority: "low" },
      { step_number: 4, title: "Tests", depends_on: [2, 3], acceptance_criteria: ["429 after the limit", "headers carry the remaining budget"] },
      { step_number: 5, title: "Dashboard panel" },
    ],
    ...extra,
  };
}

export async function saved(w: World, id = "rl"): Promise<void> {
  await ok(w.ctx, "save_plan", { plan: plan(id) });
}

export const statuses = async (ctx: Ctx, id: string) =>
  Object.fromEntries(((await ok(ctx, "view_progress", { plan_id: id })).steps as Array<{ step_number: number; status: string }>).map((s) => [s.step_number, s.status]));

export const stepRows = (ctx: Ctx) => async () => ({
  steps: (await env.DB.prepare(`SELECT * FROM plan_steps WHERE tenant_id = ? ORDER BY plan_id, step_number`).bind(ctx.tenantId).all()).results,
  links: (await env.DB.prepare(`SELECT * FROM plan_step_tasks WHERE tenant_id = ? ORDER BY plan_id, step_number`).bind(ctx.tenantId).all()).results,
  tasks: (await env.DB.prepare(`SELECT id, status, assignee_actor_id FROM tasks WHERE tenant_id = ? ORDER BY id`).bind(ctx.tenantId).all()).results,
  plans: (await env.DB.prepare(`SELECT id, status FROM plans WHERE tenant_id = ? ORDER BY id`).bind(ctx.tenantId).all()).results,
});
