/**
 * The dashboard's plans pages (docs/dashboard.md: Plans): the saved plans with their progress and
 * the approval requests waiting, and one plan with its steps, approvals and diagrams. Every value is
 * read through the tools as the signed-in person; an approval is answered through the same
 * respond_approval action the inbox posts to.
 */
import type { Context, Hono } from "hono";
import type { Ctx } from "../core/context";
import type { Approval } from "../plans/approvals/model";
import { DIAGRAM_KINDS } from "../plans/diagrams/draw";
import type { Plan } from "../plans/document/schema";
import type { Progress, StepState } from "../plans/progress/engine";
import type { PlanMeta } from "../plans/store/model";
import { PLAN_STATUSES } from "../plans/document/schema";
import { PLANS_PATH, PlanPage, PlansPage, type Diagram, type PlansData } from "../web/app/plans";
import { namer, nextQuery, param, read, toolPage, viewerOf, type AppEnv } from "./dashboard-pages";

type Page<T> = { items: T[]; next_cursor?: string };
type ProgressView = { implied_status: string; progress: Progress; steps: StepState[] };

const PLANS_SHOWN = 20;
/** Pending requests the plans page lists (newest first); the inbox has every one addressed to you. */
const WAITING_SHOWN = 50;
/** A plan's approval requests its page lists, newest first. */
const PLAN_APPROVALS_SHOWN = 50;

const DIAGRAM_LABELS: Record<(typeof DIAGRAM_KINDS)[number], string> = {
  dependencies: "Dependencies",
  gantt: "Schedule (Gantt)",
  architecture: "Files by directory",
};

async function plansData(c: Context<AppEnv>): Promise<PlansData> {
  const ctx = c.get("ctx");
  const status = param(c, "status", 30);
  const cursor = param(c, "cursor", 200);
  const [plans, waiting, who] = await Promise.all([
    read<Page<PlanMeta>>(ctx, "list_plans", { status: status || undefined, cursor: cursor || undefined, limit: PLANS_SHOWN }),
    read<Page<Approval>>(ctx, "list_approvals", { status: "pending", limit: WAITING_SHOWN }),
    namer(ctx),
  ]);
  const progress = await Promise.all(plans.items.map((p) => read<ProgressView>(ctx, "view_progress", { plan_id: p.id })));
  return {
    now: ctx.clock.now(),
    status,
    statuses: PLAN_STATUSES,
    plans: plans.items,
    progress: new Map(plans.items.map((p, i) => [p.id, progress[i]!.progress])),
    waiting: waiting.items,
    me: ctx.actorId,
    who,
    older: nextQuery({ status }, plans.next_cursor),
  };
}

/** The three diagrams visualize_plan draws of the plan's current version, in the order a reader wants them. */
async function diagrams(ctx: Ctx, planId: string): Promise<Diagram[]> {
  const kinds = ["dependencies", "gantt", "architecture"] as const;
  const drawn = await Promise.all(kinds.map((k) => read<{ mermaid: string; notes: string[] }>(ctx, "visualize_plan", { plan_id: planId, diagram_type: k })));
  return kinds.map((kind, i) => ({ kind, label: DIAGRAM_LABELS[kind], mermaid: drawn[i]!.mermaid, notes: drawn[i]!.notes }));
}

async function planPage(c: Context<AppEnv>) {
  const ctx = c.get("ctx");
  const id = c.req.param("id") ?? "";
  // load_plan first: another tenant's id or a malformed one is the page's 404 or 400 before anything else runs.
  const { plan, meta } = await read<{ plan: Plan; meta: PlanMeta }>(ctx, "load_plan", { plan_id: id });
  const [progress, approvals, drawn, who] = await Promise.all([
    read<ProgressView>(ctx, "view_progress", { plan_id: meta.id }),
    read<Page<Approval>>(ctx, "list_approvals", { plan_id: meta.id, limit: PLAN_APPROVALS_SHOWN }),
    diagrams(ctx, meta.id),
    namer(ctx),
  ]);
  return PlanPage({
    viewer: await viewerOf(c),
    data: {
      now: ctx.clock.now(),
      meta,
      goal: plan.goal,
      milestones: plan.milestones,
      implied: progress.implied_status,
      progress: progress.progress,
      steps: progress.steps,
      effort: new Map(plan.steps.filter((s) => s.estimated_effort).map((s) => [s.step_number, s.estimated_effort])),
      approvals: approvals.items,
      diagrams: drawn,
      me: ctx.actorId,
      who,
    },
  });
}

export function registerPlans(routes: Hono<AppEnv>): void {
  routes.get("/plans", (c) => toolPage(c, async () => PlansPage({ viewer: await viewerOf(c), data: await plansData(c) }), [PLANS_PATH, "All plans"]));
  routes.get("/plans/:id", (c) => toolPage(c, () => planPage(c), [PLANS_PATH, "All plans"]));
}
