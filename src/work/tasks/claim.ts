/** task_claim and task_release: leased claims through the scope's ClaimsDO. */
import { z } from "zod";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { ToolError } from "../../core/errors";
import { activityStatement } from "../shared";
import { findProject, projectSchema } from "../projects/model";
import { checkLease, DEFAULT_LEASE_SECONDS, forcedMetadata, leaseGuardSql, leaseIntent, leaseWriteFields, overrideNotification, readLease } from "../claims/model";
import { findRepositoryId } from "../repos/model";
import { MAX_PRIOR_ENTRIES, priorAttemptsForTask, priorEntrySchema } from "../memory/prior";
import { findTask, LABEL, releaseTaskStatement, taskRefField, taskSchema, taskStatusChanged } from "./model";
import { announceNotices } from "../collab/inbox";

/** The Durable Object that serializes a scope's claims: a project's, or a tenant's whole pool. */
const claimsStub = (ctx: Ctx, projectId: string | null) => ctx.env.CLAIMS.get(ctx.env.CLAIMS.idFromName(`${ctx.tenantId}:${projectId ?? "*"}`));

const projectContext = projectSchema.pick({ id: true, key: true, title: true, status: true, summary: true });

export const taskClaimTool = defineTool({
  name: "task_claim",
  title: "Claim a task",
  toolset: "tasks",
  description: "Claim a task under a lease (re-claiming extends it), or without task_id the next ready one. claimed: false says why not.",
  input: z.object({
    task_id: taskRefField("The task; omit for the next ready one.").optional(),
    project_id: z.string().min(1).max(100).optional().describe("Only claim from this project (id or key)."),
    label: LABEL.optional().describe("Only claim tasks with this label."),
    repository_ids: z.array(z.string().min(1).max(200)).min(1).max(20).optional().describe("Only tasks of projects linked to one of these repositories (ids or owner/name)."),
    lease_seconds: z.number().int().min(60).max(86_400).default(DEFAULT_LEASE_SECONDS).describe("Lease length in seconds."),
  }),
  output: z.object({
    claimed: z.boolean().describe("Whether you hold the task now."),
    reason: z
      .enum(["", "pool_empty", "held", "blocked", "closed", "assigned_elsewhere", "in_review"])
      .describe("Why not, when claimed is false (in_review: no claim is needed; its assignee's token still finishes it)."),
    task: taskSchema.nullable().describe("The claimed task, or null."),
    project_context: projectContext.nullable().describe("Its project, or null."),
    lease_expires_at: z.string().nullable().describe("When the lease runs out, or null."),
    fencing_token: z
      .number()
      .int()
      .nullable()
      .describe(
        "Your lease's fencing token, or null. Every new claim of the task raises it (an extension keeps it). Pass it as fencing_token on task_update, task_assign and task_release: a write carrying a token from an expired or superseded lease is refused, so a stale agent cannot clobber the next holder.",
      ),
    extended: z.boolean().describe("True when this re-claim extended your existing lease."),
    holder_actor_id: z.string().nullable().describe("Who holds the task, when reason is held, assigned_elsewhere or in_review."),
    prior_attempts: z
      .array(priorEntrySchema)
      .describe(
        `When claimed: what was tried on the task's paths (its code refs' paths, its path reservations, its changeset's entities) and undone, and the decisions about them rejected or superseded; newest first, at most ${MAX_PRIOR_ENTRIES}. Usually empty.`,
      ),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  // A retried claim-next gets the task it already claimed, not a second one; once that task moves
  // (finished, released) it is a new claim. A claim by id runs every time (re-claiming one's own
  // task extends the lease), and an empty answer is not replayed, so a poll sees new tasks at once.
  idempotency: { when: (input) => !input.task_id, keep: (output) => output.claimed },
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
        claimed: false,
        reason: outcome.reason,
        task: null,
        project_context: null,
        lease_expires_at: outcome.leaseExpiresAt ?? null,
        fencing_token: null,
        extended: false,
        holder_actor_id: outcome.holder ?? null,
        prior_attempts: [],
      };
    }
    // The claim is written: its followers run while the task, its project and its prior attempts
    // are read (the claim returned the task's reference, and the project is often already known).
    const [, task, prior, p] = await Promise.all([
      outcome.extended ? undefined : taskStatusChanged(ctx, outcome.taskId, { status: "in_progress", assignee: ctx.actorId }),
      findTask(ctx, outcome.taskId),
      priorAttemptsForTask(ctx, { id: outcome.taskId, ref: outcome.ref }),
      project?.id === outcome.projectId ? project : findProject(ctx, outcome.projectId),
    ]);
    return {
      claimed: true,
      reason: "" as const,
      task,
      project_context: { id: p.id, key: p.key, title: p.title, status: p.status, summary: p.summary },
      lease_expires_at: outcome.leaseExpiresAt,
      fencing_token: outcome.fencingToken,
      extended: outcome.extended,
      holder_actor_id: ctx.actorId,
      prior_attempts: prior,
    };
  },
  summarize: (r) =>
    r.claimed
      ? `Claimed ${r.task!.ref} until ${r.lease_expires_at}.${r.prior_attempts.length > 0 ? ` ${r.prior_attempts.length} prior attempt(s) on its paths were undone or set aside: read prior_attempts.` : ""}`
      : `Nothing claimed (${r.reason}).`,
});

export const taskReleaseTool = defineTool({
  name: "task_release",
  title: "Release a task",
  toolset: "tasks",
  description: "Give a task you hold back to the pool (todo, no assignee).",
  input: z.object({
    task_id: taskRefField("The task you hold."),
    note: z.string().max(2000).optional().describe("Why you are releasing it."),
    ...leaseWriteFields,
  }),
  output: z.object({ task: taskSchema.describe("The task, back in the pool.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const intent = leaseIntent(ctx, input);
    const task = await findTask(ctx, input.task_id);
    const now = iso(ctx.clock.now());
    const lease = await readLease(ctx.d1, ctx.tenantId, task.id);
    const overridden = checkLease(lease, ctx.actorId, now, intent, task.ref);
    // The holder releases its own claim (live or run out); a forced release takes whoever's it is.
    const guard = leaseGuardSql(ctx.actorId, now, intent, lease);
    const summary = input.note ? `released ${task.ref}: ${input.note}` : `released ${task.ref}`;
    const [released] = await ctx.d1.batch<{ id: string }>([
      releaseTaskStatement(ctx, task.id, !!intent.force, guard, now),
      activityStatement(ctx, {
        verb: "task.released",
        objectType: "task",
        objectId: task.id,
        projectId: task.project_id,
        summary: intent.force ? `${summary} (forced${overridden ? ` over ${overridden.name}'s lease` : ""}: ${intent.force.reason})` : summary,
        metadata: { note: input.note ?? "", ...forcedMetadata(intent, overridden) },
        severity: intent.force ? "warn" : "info",
        ifPreviousChanged: true,
      }),
      ...overrideNotification(ctx, task.id, task.ref, intent, overridden),
    ]);
    if (released!.results.length === 0) {
      const nowLease = await readLease(ctx.d1, ctx.tenantId, task.id);
      checkLease(nowLease, ctx.actorId, now, intent, task.ref);
      const other = nowLease.assignee_actor_id && nowLease.assignee_actor_id !== ctx.actorId;
      throw new ToolError(
        "not_claimed",
        `${task.ref} is not in progress under your claim (it is ${nowLease.status}${other ? `, assigned to ${nowLease.holder_name ?? "another actor"} without a live lease` : ""}).`,
        {
          hint: other
            ? "Its lease ran out: claim it with task_claim if you mean to work on it, or reassign it with task_assign."
            : "Only the actor holding a task can release it; task_get shows its status and assignee.",
        },
      );
    }
    if (overridden) await announceNotices(ctx, [overridden.actorId]);
    // Back in the pool is a status change its followers hear of (a plan step; the task's reserved
    // paths go); they leave the task's own row as it is, so it is read beside them.
    const [, back] = await Promise.all([taskStatusChanged(ctx, task.id, { status: "todo", assignee: null }), findTask(ctx, task.id)]);
    return { task: back };
  },
  summarize: (r) => `${r.task.ref} is back in the pool.`,
});
