/**
 * The plan store in D1: a row per plan (plans) and every version of its document (plan_versions,
 * append-only). Writes are single batches whose first statement is a compare-and-swap, so two writers
 * racing for the same plan cannot both win, and a losing writer changes nothing.
 */
import { z } from "zod";
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { dbOf, jsonValues, statementOf } from "../../db/client";
import { afterTimeAndId } from "../../core/cursor";
import { handoffs, planApprovals, plans, planStepTasks, planSteps, planVersions } from "../../db/schema";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import { ToolError } from "../../core/errors";
import { PLAN_STATUSES, planSchema, type Plan, type PlanStatus } from "../document/schema";
import { jsonArray, activityStatement } from "../../work/shared";

/** Versions one plan keeps. History is never rewritten, so past this a plan is saved under a new id. */
export const MAX_VERSIONS = 100;

export const CHANGE_TYPES = ["created", "modified", "rolled_back"] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

export const planMetaSchema = z.object({
  id: z.string().describe("Plan id."),
  name: z.string().describe("Plan name (load_plan finds it case-insensitively)."),
  goal: z.string().describe("The plan's goal (first 300 characters)."),
  status: z.enum(PLAN_STATUSES).describe("ready after a save; the approval and execution tools move it on."),
  tags: z.array(z.string()).describe("Tags."),
  version: z.number().int().describe("Current version."),
  step_count: z.number().int().describe("Steps in the current version."),
  created_at: z.string().describe("When the plan was first saved."),
  created_by: z.string().describe("Actor id of who first saved it."),
  updated_at: z.string().describe("When it last changed."),
  updated_by: z.string().describe("Actor id of who changed it last."),
});
export type PlanMeta = z.infer<typeof planMetaSchema>;

interface PlanRow {
  id: string;
  name: string;
  goal: string;
  status: PlanStatus;
  tags: string;
  current_version: number;
  step_count: number;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
}
/** A plan row's fields, keyed by SQL column name (the PlanRow shape). */
const planFields = {
  id: plans.id,
  name: plans.name,
  goal: plans.goal,
  status: plans.status,
  tags: plans.tags,
  current_version: plans.currentVersion,
  step_count: plans.stepCount,
  created_at: plans.createdAt,
  created_by: plans.createdBy,
  updated_at: plans.updatedAt,
  updated_by: plans.updatedBy,
};

export const toMeta = (r: PlanRow): PlanMeta => ({
  id: r.id,
  name: r.name,
  goal: r.goal,
  status: r.status,
  tags: jsonArray<string>(r.tags),
  version: r.current_version,
  step_count: r.step_count,
  created_at: r.created_at,
  created_by: r.created_by,
  updated_at: r.updated_at,
  updated_by: r.updated_by,
});

const GOAL_PREVIEW = 300;

export const planNotFound = (id: string) => new ToolError("not_found", `Plan ${id} not found`, { hint: "list_plans shows the plans you can use." });

export async function findPlan(ctx: Ctx, id: string): Promise<PlanMeta | null> {
  const row = await dbOf(ctx)
    .select(planFields)
    .from(plans)
    .where(and(eq(plans.tenantId, ctx.tenantId), eq(plans.id, id)))
    .get();
  return row ? toMeta(row as PlanRow) : null;
}

export async function getPlan(ctx: Ctx, id: string): Promise<PlanMeta> {
  const meta = await findPlan(ctx, id);
  if (!meta) throw planNotFound(id);
  return meta;
}

/** Names need not be unique: a name shared by several plans means the one changed last. */
export async function findPlanByName(ctx: Ctx, name: string): Promise<PlanMeta | null> {
  const row = await dbOf(ctx)
    .select(planFields)
    .from(plans)
    .where(and(eq(plans.tenantId, ctx.tenantId), eq(plans.nameLower, name.trim().toLowerCase())))
    .orderBy(desc(plans.updatedAt), desc(plans.id))
    .limit(1)
    .get();
  return row ? toMeta(row as PlanRow) : null;
}

export interface VersionRow {
  version: number;
  plan: string;
  change_type: ChangeType;
  change_summary: string;
  created_at: string;
  created_by: string;
}

export async function readVersion(ctx: Ctx, planId: string, version: number): Promise<Plan> {
  const row = await dbOf(ctx)
    .select({ plan: planVersions.plan })
    .from(planVersions)
    .where(and(eq(planVersions.tenantId, ctx.tenantId), eq(planVersions.planId, planId), eq(planVersions.version, version)))
    .get();
  if (!row) {
    throw new ToolError("not_found", `Version ${version} not found for plan ${planId}`, { hint: "view_history lists the plan's versions." });
  }
  return parseStored(row.plan);
}

/** Stored plans were validated on the way in; parsing again keeps the type honest. */
export const parseStored = (json: string): Plan => planSchema.parse(JSON.parse(json));

export async function listVersions(ctx: Ctx, planId: string, limit: number): Promise<VersionRow[]> {
  const v = planVersions;
  return (await dbOf(ctx)
    .select({ version: v.version, plan: v.plan, change_type: v.changeType, change_summary: v.changeSummary, created_at: v.createdAt, created_by: v.createdBy })
    .from(v)
    .where(and(eq(v.tenantId, ctx.tenantId), eq(v.planId, planId)))
    .orderBy(desc(v.version))
    .limit(limit)
    .all()) as VersionRow[];
}

/**
 * The activity row of a plan write, recorded only when the statement before it in the batch
 * changed a row, so the timeline (activity_query, whoami) shows what landed and nothing else.
 */
export const planActivity = (ctx: Ctx, planId: string, verb: string, summary: string): D1PreparedStatement =>
  activityStatement(ctx, { verb, objectType: "plan", objectId: planId, summary: summary.slice(0, 500), ifPreviousChanged: true });

/** A plan id that is taken, as the reference words it. */
export const planExists = (id: string) =>
  new ToolError("conflict", `Plan with ID ${id} already exists. Use overwrite: true to replace.`, {
    hint: "Pass overwrite: true to save this as the plan's next version (earlier versions stay in view_history), or give the plan another id.",
  });

/** Stores a new plan at version 1. Throws planExists when the id is taken, even by a racing call. */
export async function insertPlan(ctx: Ctx, plan: Plan, meta: { name: string; tags: string[] }): Promise<PlanMeta> {
  const now = plan.updated_at;
  const [inserted] = await ctx.d1.batch<PlanRow>([
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .insert(plans)
        .values({
          tenantId: ctx.tenantId,
          id: plan.id,
          name: meta.name,
          nameLower: meta.name.toLowerCase(),
          goal: plan.goal.slice(0, GOAL_PREVIEW),
          status: "ready",
          tags: JSON.stringify(meta.tags),
          currentVersion: 1,
          stepCount: plan.steps.length,
          createdAt: now,
          createdBy: ctx.actorId,
          updatedAt: now,
          updatedBy: ctx.actorId,
        })
        .onConflictDoNothing()
        .returning(planFields),
    ),
    // Only when the row above was inserted: a taken id leaves the other plan's history alone.
    // Hand SQL: drizzle cannot guard an INSERT…SELECT on `changes() > 0`.
    ctx.d1
      .prepare(
        `INSERT INTO plan_versions (tenant_id, plan_id, version, plan, change_type, change_summary, created_at, created_by)
                SELECT ?, ?, 1, ?, 'created', 'Plan saved', ?, ? WHERE changes() > 0`,
      )
      .bind(ctx.tenantId, plan.id, JSON.stringify(plan), now, ctx.actorId),
    planActivity(ctx, plan.id, "plan.created", `saved plan ${meta.name} (${plan.steps.length} steps)`),
  ]);
  const row = inserted!.results[0];
  if (!row) throw planExists(plan.id);
  return toMeta(row);
}

/**
 * Appends `plan` as the version after `from.version` and makes it current, with `change.status`
 * (appendFollowingSteps in progress/engine.ts says which). Fails with conflict when another write moved the
 * plan on first, or the plan has MAX_VERSIONS versions.
 */
export async function appendVersion(ctx: Ctx, from: PlanMeta, plan: Plan, change: { type: ChangeType; summary: string; name?: string; tags?: string[]; status: PlanStatus }): Promise<PlanMeta> {
  if (from.version >= MAX_VERSIONS) {
    throw new ToolError("conflict", `Plan ${from.id} has ${from.version} versions, the most one plan keeps.`, {
      hint: "Save the plan under a new id (history is never rewritten), or delete_plan this one first.",
    });
  }
  const name = change.name ?? from.name;
  const tags = change.tags ?? from.tags;
  const [updated] = await ctx.d1.batch<PlanRow>([
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .update(plans)
        .set({
          name,
          nameLower: name.toLowerCase(),
          goal: plan.goal.slice(0, GOAL_PREVIEW),
          status: change.status,
          tags: JSON.stringify(tags),
          currentVersion: plan.version,
          stepCount: plan.steps.length,
          updatedAt: plan.updated_at,
          updatedBy: ctx.actorId,
        })
        .where(and(eq(plans.tenantId, ctx.tenantId), eq(plans.id, from.id), eq(plans.currentVersion, from.version)))
        .returning(planFields),
    ),
    // Hand SQL: drizzle cannot guard an INSERT…SELECT on `changes() > 0`.
    ctx.d1
      .prepare(
        `INSERT INTO plan_versions (tenant_id, plan_id, version, plan, change_type, change_summary, created_at, created_by)
                SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE changes() > 0`,
      )
      .bind(ctx.tenantId, from.id, plan.version, JSON.stringify(plan), change.type, change.summary, plan.updated_at, ctx.actorId),
    planActivity(ctx, from.id, change.type === "rolled_back" ? "plan.rolled_back" : "plan.updated", `plan ${name} v${plan.version}: ${change.summary}`),
  ]);
  const row = updated!.results[0];
  if (!row) throw movedOn(from);
  return toMeta(row);
}

const movedOn = (from: PlanMeta) =>
  new ToolError("conflict", `Plan ${from.id} changed while this call ran (it was at version ${from.version}); your change was not stored.`, {
    hint: "Read it again with load_plan, then save your change on top of the current version.",
    retryable: true,
  });

/** Name and tags only: they are the plan's labels, not its content, so no version is added. */
export async function relabel(ctx: Ctx, from: PlanMeta, labels: { name: string; tags: string[] }): Promise<PlanMeta> {
  const row = await dbOf(ctx)
    .update(plans)
    .set({ name: labels.name, nameLower: labels.name.toLowerCase(), tags: JSON.stringify(labels.tags), updatedAt: iso(ctx.clock.now()), updatedBy: ctx.actorId })
    .where(and(eq(plans.tenantId, ctx.tenantId), eq(plans.id, from.id), eq(plans.currentVersion, from.version)))
    .returning(planFields)
    .get();
  if (!row) throw movedOn(from);
  return toMeta(row as PlanRow);
}

/**
 * Deletes a plan, its whole history, its steps' state and task links (the tasks themselves stay)
 * and its approval requests (a pending one's handoff is cancelled); returns how many versions
 * went, or null when there was no plan.
 */
export async function deletePlan(ctx: Ctx, id: string): Promise<number | null> {
  const now = iso(ctx.clock.now());
  const db = dbOf(ctx);
  // 'pending' as a literal, as plan_approvals' partial index is declared.
  const pendingHandoffs = db
    .select({ handoff_id: planApprovals.handoffId })
    .from(planApprovals)
    .where(and(eq(planApprovals.tenantId, ctx.tenantId), eq(planApprovals.planId, id), sql`${planApprovals.status} = 'pending'`));
  const [deleted, , versions] = await ctx.d1.batch([
    statementOf(
      ctx.d1,
      db
        .delete(plans)
        .where(and(eq(plans.tenantId, ctx.tenantId), eq(plans.id, id)))
        .returning({ id: plans.id }),
    ),
    planActivity(ctx, id, "plan.deleted", `deleted plan ${id}`),
    statementOf(ctx.d1, db.delete(planVersions).where(and(eq(planVersions.tenantId, ctx.tenantId), eq(planVersions.planId, id)))),
    statementOf(ctx.d1, db.delete(planSteps).where(and(eq(planSteps.tenantId, ctx.tenantId), eq(planSteps.planId, id)))),
    statementOf(ctx.d1, db.delete(planStepTasks).where(and(eq(planStepTasks.tenantId, ctx.tenantId), eq(planStepTasks.planId, id)))),
    // A pending approval of a plan that is gone asks nobody anything: its handoff leaves the inbox.
    statementOf(
      ctx.d1,
      db
        .update(handoffs)
        .set({ status: "cancelled", resolution: "cancelled", resolutionNote: "The plan was deleted.", updatedAt: now })
        .where(and(eq(handoffs.tenantId, ctx.tenantId), inArray(handoffs.status, ["open", "claimed"]), inArray(handoffs.id, pendingHandoffs))),
    ),
    statementOf(ctx.d1, db.delete(planApprovals).where(and(eq(planApprovals.tenantId, ctx.tenantId), eq(planApprovals.planId, id)))),
  ]);
  if (deleted!.results.length === 0) return null;
  return versions!.meta.changes;
}

export interface ListFilter {
  status?: PlanStatus;
  tags?: string[];
  limit: number;
  /** list_plans' cursor as the caller sent it: the (updated_at, id) of the last plan of the previous page. */
  cursor?: string;
}

/** Newest change first; a plan matches tags when it has any of them (the reference's rule). */
export async function listPlans(ctx: Ctx, f: ListFilter): Promise<PlanMeta[]> {
  const rows = await dbOf(ctx)
    .select(planFields)
    .from(plans)
    .where(
      and(
        eq(plans.tenantId, ctx.tenantId),
        f.status ? eq(plans.status, f.status) : undefined,
        f.tags && f.tags.length > 0
          ? sql`EXISTS (SELECT 1 FROM json_each(${plans.tags}) t WHERE t.value IN (${sql.join(
              f.tags.map((tag) => sql`${tag}`),
              sql`, `,
            )}))`
          : undefined,
        afterTimeAndId(f.cursor, plans.updatedAt, plans.id),
      ),
    )
    .orderBy(desc(plans.updatedAt), desc(plans.id))
    .limit(f.limit)
    .all();
  return rows.map((r) => toMeta(r as PlanRow));
}

/**
 * Moves a plan's status (approval and execution do) without adding a version: status is where the
 * plan stands, not what it says. Compare-and-swap on the version the caller read and on the statuses
 * it may leave, so a status set for one version never lands on a newer one; null when either moved.
 */
export async function setPlanStatus(ctx: Ctx, from: PlanMeta, to: PlanStatus, leaving: readonly PlanStatus[] = [from.status]): Promise<PlanMeta | null> {
  if (leaving.length === 0) return null;
  const row = await dbOf(ctx)
    .update(plans)
    .set({ status: to, updatedAt: iso(ctx.clock.now()), updatedBy: ctx.actorId })
    .where(and(eq(plans.tenantId, ctx.tenantId), eq(plans.id, from.id), eq(plans.currentVersion, from.version), inArray(plans.status, jsonValues(leaving))))
    .returning(planFields)
    .get();
  return row ? toMeta(row as PlanRow) : null;
}
