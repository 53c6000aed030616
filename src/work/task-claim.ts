/** task_claim and task_release: leased claims through the scope's ClaimsDO. */
import { z } from "zod";
import { iso } from "../db/time";
import type { Ctx } from "../mcp/context";
import { defineTool } from "../mcp/define-tool";
import { notFound, ToolError } from "../mcp/errors";
import { activityStatement } from "./common";
import { findProject, projectSchema } from "./projects";
import { DEFAULT_LEASE_SECONDS } from "./claims";
import { LABEL } from "./task-create";
import { findTask, taskRefField, taskSchema } from "./task-model";

/** The Durable Object that serializes a scope's claims: a project's, or a tenant's whole pool. */
const claimsStub = (ctx: Ctx, projectId: string | null) =>
  ctx.env.CLAIMS.get(ctx.env.CLAIMS.idFromName(`${ctx.tenantId}:${projectId ?? "*"}`));

/** A repository of the caller's tenant, by id or owner/name. */
async function findRepositoryId(ctx: Ctx, ref: string): Promise<string> {
  const row = await ctx.d1
    .prepare(`SELECT id FROM repositories WHERE tenant_id = ? AND (id = ? OR slug = ? COLLATE NOCASE) LIMIT 1`)
    .bind(ctx.tenantId, ref, ref)
    .first<{ id: string }>();
  if (!row) throw notFound("repository", ref, "Pass a registered repository's id or owner/name (repo_query lists them).");
  return row.id;
}

const projectContext = projectSchema.pick({ id: true, key: true, title: true, status: true, summary: true });

export const taskClaimTool = defineTool({
  name: "task_claim",
  title: "Claim a task",
  toolset: "tasks",
  description:
    "Atomically claim work under a lease. With task_id: claim that task (compare-and-swap; re-claiming your own extends the lease). Without: take the highest-priority ready, unassigned task in scope (project, label, repositories), set it in_progress with a lease, and return it with its project context. claimed: false means nothing is claimable (reason says why). A lease that runs out sends the task back to the pool.",
  input: z.object({
    task_id: taskRefField("The task to claim; omit to claim the next ready task.").optional(),
    project_id: z.string().min(1).max(100).optional().describe("Only claim from this project (id or key)."),
    label: LABEL.optional().describe("Only claim tasks with this label."),
    repository_ids: z.array(z.string().min(1).max(200)).min(1).max(20).optional().describe("Only claim tasks of projects linked to one of these repositories (ids or owner/name slugs)."),
    lease_seconds: z.number().int().min(60).max(86_400).default(DEFAULT_LEASE_SECONDS).describe("Lease length in seconds (60–86400, default 3600)."),
  }),
  output: z.object({
    claimed: z.boolean().describe("Whether you hold the task now."),
    reason: z.enum(["", "pool_empty", "held", "blocked", "closed", "assigned_elsewhere"]).describe("Why not, when claimed is false."),
    task: taskSchema.nullable().describe("The claimed task, or null."),
    project_context: projectContext.nullable().describe("Its project, or null."),
    lease_expires_at: z.string().nullable().describe("When the lease runs out, or null."),
    extended: z.boolean().describe("True when this re-claim extended your existing lease."),
    holder_actor_id: z.string().nullable().describe("Who holds the task, when reason is held or assigned_elsewhere."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  // A retried claim (same session and request) gets the task it already claimed, not a second one.
  idempotency: "derived",
  run: async (ctx, input) => {
    const target = input.task_id ? await findTask(ctx, input.task_id) : null;
    const project = input.project_id ? await findProject(ctx, input.project_id) : null;
    const scopeProject = target?.project_id ?? project?.id ?? null;
    const repositoryIds = input.repository_ids ? await Promise.all(input.repository_ids.map((r) => findRepositoryId(ctx, r))) : undefined;
    // A claim by id queues in its task's project, beside that project's claim-next calls.
    const outcome = await claimsStub(ctx, scopeProject).claim({
      tenantId: ctx.tenantId,
      actorId: ctx.actorId,
      sessionId: ctx.sessionId,
      runId: ctx.runId ?? null,
      taskId: target?.id,
      projectId: project?.id,
      label: input.label,
      repositoryIds,
      leaseSeconds: input.lease_seconds,
      nowMs: ctx.clock.now().getTime(),
    });
    if (!outcome.claimed) {
      return {
        claimed: false, reason: outcome.reason, task: null, project_context: null, lease_expires_at: outcome.leaseExpiresAt ?? null,
        extended: false, holder_actor_id: outcome.holder ?? null,
      };
    }
    const task = await findTask(ctx, outcome.taskId);
    const p = await findProject(ctx, task.project_id);
    return {
      claimed: true, reason: "" as const, task, project_context: { id: p.id, key: p.key, title: p.title, status: p.status, summary: p.summary },
      lease_expires_at: outcome.leaseExpiresAt, extended: outcome.extended, holder_actor_id: ctx.actorId,
    };
  },
  summarize: (r) => (r.claimed ? `Claimed ${r.task!.ref} until ${r.lease_expires_at}.` : `Nothing claimed (${r.reason}).`),
});

export const taskReleaseTool = defineTool({
  name: "task_release",
  title: "Release a task",
  toolset: "tasks",
  description: "Give a task you hold back to the pool: in_progress drops to todo, the lease and the assignee are cleared. The note is kept on the timeline (e.g. why you stopped).",
  input: z.object({
    task_id: taskRefField("The task you hold."),
    note: z.string().max(2000).optional().describe("Why you are releasing it; recorded in the activity."),
  }),
  output: z.object({ task: taskSchema.describe("The task, back in the pool.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const task = await findTask(ctx, input.task_id);
    const now = iso(ctx.clock.now());
    const [released] = await ctx.d1.batch<{ id: string }>([
      ctx.d1
        .prepare(`UPDATE tasks SET status = 'todo', assignee_actor_id = NULL, lease_expires_at = NULL, claimed_at = NULL, updated_at = ?
                  WHERE tenant_id = ? AND id = ? AND status = 'in_progress' AND assignee_actor_id = ? RETURNING id`)
        .bind(now, ctx.tenantId, task.id, ctx.actorId),
      activityStatement(ctx, {
        verb: "task.released", objectType: "task", objectId: task.id, projectId: task.project_id,
        summary: input.note ? `released ${task.ref}: ${input.note}` : `released ${task.ref}`, metadata: { note: input.note ?? "" }, ifPreviousChanged: true,
      }),
    ]);
    if (released!.results.length === 0) {
      throw new ToolError("not_claimed", `${task.ref} is not in progress under your claim (it is ${task.status}${task.assignee_actor_id && task.assignee_actor_id !== ctx.actorId ? ", held by another actor" : ""}).`, {
        hint: "Only the actor holding a task can release it; task_get shows its status and assignee.",
      });
    }
    return { task: await findTask(ctx, task.id) };
  },
  summarize: (r) => `${r.task.ref} is back in the pool.`,
});
