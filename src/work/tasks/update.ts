/** task_update (state machine, optimistic concurrency, done gates) and task_assign. */
import { z } from "zod";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { excerpt, invalidInput, ToolError } from "../../core/errors";
import { checkLease, forcedMetadata, leaseGuardSql, leaseIntent, type LeaseIntent, leaseWriteFields, overrideNotification, readLease } from "../claims/model";
import { activityStatement, actorRefField, clearable, dateField, resolveActor } from "../shared";
import { handoffStatements, liveReview, noLiveReview, reviewStanding } from "../handoffs/model";
import { type Criterion, criterionSchema, findTask, LABEL, REOPEN, type Task, taskRefField, taskSchema, taskEvidenceCount, taskStatusChanged, TRANSITIONS, updateTaskStatement } from "./model";
import { TASK_STATUSES, type TaskStatus } from "./summary";
import { announceNotices } from "../collab/inbox";

/** Reasons a task may not be done yet, checked in this order; the first one refuses. */
async function doneGate(ctx: Ctx, task: Task, criteria: Criterion[], requiresEvidence: boolean, reviewer: string | null): Promise<void> {
  const unmet = criteria.find((c) => !c.met);
  if (unmet) {
    throw new ToolError("criteria_unmet", `Acceptance criterion not met: "${unmet.text}"`, {
      hint: "Do the work, then mark the criterion met (patch criteria_updates: [{index, met: true}], or the whole acceptance_criteria) before moving to done.",
    });
  }
  const [evidence, review] = await Promise.all([taskEvidenceCount(ctx, task.id), reviewer ? reviewStanding(ctx, task, reviewer) : Promise.resolve(null)]);
  if (requiresEvidence && (evidence?.n ?? 0) === 0) {
    throw new ToolError("evidence_required", "This task requires evidence before done: no code ref or attachment is recorded on it.", {
      hint: "Record the delivering commit or PR with task_code_ref, or attach a file or link with attach_add, then retry.",
    });
  }
  if (!reviewer) return;
  if (!review) {
    throw new ToolError("review_pending", "This task's reviewer has not been asked for a review yet.", {
      hint: "Move it to in_review (which opens the review handoff) and wait for the reviewer's handoff_respond with verdict approved, or clear reviewer_actor_id.",
    });
  }
  if (review.verdict === "changes_requested" || review.verdict === "rejected") {
    throw new ToolError("review_not_approved", `The latest review of ${task.ref} (handoff ${review.handoff_id}) is ${review.verdict}.`, {
      hint: "Address the review, then move the task to in_review again: that opens a fresh review handoff, and its approval unlocks done.",
    });
  }
  if (!review.approved) {
    const self = review.verdict === "approved" && review.responded_by === reviewer;
    throw new ToolError("review_pending", `Done needs the reviewer's approval on ${task.ref}'s latest review (handoff ${review.handoff_id}): ${review.reason}.`, {
      hint: self
        ? "Nobody approves their own work: set reviewer_actor_id to someone else, move the task to in_review again and wait for their approval."
        : review.verdict === null
          ? "Wait for the reviewer's handoff_respond with verdict approved (inbox shows it to them)."
          : "Move the task to in_review again so the reviewer is asked afresh, and wait for their approval.",
    });
  }
}

const criterionUpdateSchema = z
  .object({
    index: z.number().int().min(0).max(49).optional().describe("The item's position in acceptance_criteria, from 0."),
    text: z.string().trim().min(1).max(1000).optional().describe("Or the item's exact text."),
    met: z.boolean().describe("Whether it is met now."),
  })
  .strict()
  .refine((u) => (u.index === undefined) !== (u.text === undefined), "name the item by index or by text, one of the two");
type CriterionUpdate = z.infer<typeof criterionUpdateSchema>;

/** The checklist with some items marked met or unmet; the rest as they were. */
function applyCriteriaUpdates(criteria: Criterion[], updates: CriterionUpdate[], ref: string): Criterion[] {
  const next = criteria.map((c) => ({ ...c }));
  for (const u of updates) {
    const at = u.index ?? next.findIndex((c) => c.text === u.text);
    const item = next[at];
    if (!item) {
      const which = u.index !== undefined ? `index ${u.index}` : `text "${excerpt(u.text ?? "", 80)}"`;
      throw invalidInput(
        `${ref} has no acceptance criterion at ${which} (it has ${criteria.length}).`,
        criteria.length > 0 ? `Name an item by index 0–${criteria.length - 1} or by its exact text; task_get shows the checklist.` : "Add the checklist with patch.acceptance_criteria first.",
      );
    }
    item.met = u.met;
  }
  return next;
}

const patchSchema = z
  .object({
    status: z.enum(TASK_STATUSES).optional().describe("New status, along the state machine."),
    title: z.string().trim().min(1).max(300).optional().describe("New title."),
    body: z.string().max(65_536).optional().describe("New description."),
    priority: z.number().int().min(0).max(4).optional().describe("0 (highest) to 4."),
    assignee_actor_id: clearable(actorRefField("Assignee.")).optional(),
    due_on: clearable(dateField("Due date (YYYY-MM-DD).")).optional(),
    labels: z.array(LABEL).max(20).optional().describe("Replaces the labels."),
    acceptance_criteria: z.array(criterionSchema).max(50).optional().describe("Replaces the checklist."),
    criteria_updates: z.array(criterionUpdateSchema).min(1).max(50).optional().describe("Changes checklist items one by one (the rest stay as they are); not with acceptance_criteria."),
    requires_evidence: z.boolean().optional().describe("Whether done needs a code ref or attachment."),
    reviewer_actor_id: clearable(actorRefField("Reviewer.")).optional(),
    allow_reopen: z.boolean().optional().describe("Allow reopening a done or cancelled task."),
    expected_status: z.enum(TASK_STATUSES).optional().describe("Fail with conflict unless the status is still this."),
  })
  .strict();
type Patch = z.infer<typeof patchSchema>;

function checkTransition(from: TaskStatus, to: TaskStatus, allowReopen: boolean): void {
  if (from === to) return;
  const allowed = [...TRANSITIONS[from], ...(allowReopen ? REOPEN[from] : [])];
  if (!allowed.includes(to)) {
    const reopen = REOPEN[from].length > 0 && !allowReopen ? ` With allow_reopen: true it may move to ${REOPEN[from].join(" or ")}.` : "";
    throw new ToolError("invalid_transition", `A ${from} task cannot move to ${to}.`, {
      hint: allowed.length > 0 ? `From ${from} it may move to: ${allowed.join(", ")}.${reopen}` : `${from} is terminal.${reopen}`,
    });
  }
}

type Lease = "held" | "released" | "none";
export interface TaskUpdateResult {
  task: Task;
  changed: string[];
  lease: Lease;
  review_handoff: { id: string; to: string[]; opened: boolean } | null;
}

/** What task_update and task_assign answer besides the task. */
const updateOutput = z.object({
  task: taskSchema.describe("The task after the change."),
  changed: z.array(z.string()).describe("Columns that changed."),
  lease: z.enum(["held", "released", "none"]).describe("The lease after this call: held, released (ended by this call; your fencing_token stays good while the task is yours) or none."),
  review_handoff: z
    .object({
      id: z.string().describe("Handoff id."),
      to: z.array(z.string()).describe("The reviewer."),
      opened: z.boolean().describe("False when it was already open."),
    })
    .nullable()
    .describe("The review handoff a move to in_review opened for the reviewer, or null."),
});

/**
 * Applies a patch with every rule task_update promises; task_assign reuses it. Another actor's
 * live lease refuses the write unless an operator forces it (intent), and a fencing token must be
 * the caller's lease's, live or released by a move out of in_progress; both are re-checked inside the UPDATE itself.
 */
export async function updateTask(ctx: Ctx, ref: string, patch: Patch, verb = "task.updated", intent: LeaseIntent = {}): Promise<TaskUpdateResult> {
  const task = await findTask(ctx, ref);
  const now = iso(ctx.clock.now());
  const lease = await readLease(ctx.d1, ctx.tenantId, task.id);
  const overridden = checkLease(lease, ctx.actorId, now, intent, task.ref);
  if (patch.expected_status && patch.expected_status !== task.status) {
    throw new ToolError("conflict", `The task's status is ${task.status}, not ${patch.expected_status}: it moved since you read it.`, {
      hint: "Re-read the task with task_get and decide again.",
      retryable: false,
    });
  }
  const to = patch.status ?? task.status;
  checkTransition(task.status, to, patch.allow_reopen ?? false);

  const next: Record<string, unknown> = {};
  if (patch.title !== undefined) next.title = patch.title;
  if (patch.body !== undefined) next.body = patch.body;
  if (patch.priority !== undefined) next.priority = patch.priority;
  if (patch.due_on !== undefined) next.due_on = patch.due_on;
  if (patch.labels !== undefined) next.labels = JSON.stringify([...new Set(patch.labels)]);
  if (patch.acceptance_criteria !== undefined && patch.criteria_updates !== undefined) {
    throw invalidInput("patch has both acceptance_criteria and criteria_updates.", "Replace the checklist with acceptance_criteria, or change items with criteria_updates, not both.");
  }
  const criteria = patch.acceptance_criteria ?? (patch.criteria_updates ? applyCriteriaUpdates(task.acceptance_criteria, patch.criteria_updates, task.ref) : task.acceptance_criteria);
  if (patch.acceptance_criteria !== undefined || patch.criteria_updates !== undefined) next.acceptance_criteria = JSON.stringify(criteria);
  if (patch.requires_evidence !== undefined) next.requires_evidence = patch.requires_evidence ? 1 : 0;
  if (patch.assignee_actor_id !== undefined) next.assignee_actor_id = patch.assignee_actor_id === null ? null : await resolveActor(ctx, patch.assignee_actor_id);
  if (patch.reviewer_actor_id !== undefined) next.reviewer_actor_id = patch.reviewer_actor_id === null ? null : await resolveActor(ctx, patch.reviewer_actor_id);
  const reviewer = next.reviewer_actor_id !== undefined ? (next.reviewer_actor_id as string | null) : task.reviewer_actor_id;
  // A lease belongs to whoever claimed the task: handing the task to someone else ends it, and
  // the new assignee claims it afresh (with a new fencing token) when they start.
  if (next.assignee_actor_id !== undefined && next.assignee_actor_id !== task.assignee_actor_id && lease.lease_expires_at !== null) {
    next.lease_expires_at = null;
    next.claimed_at = null;
  }

  if (to !== task.status) {
    next.status = to;
    if (to === "done") {
      await doneGate(ctx, task, criteria, patch.requires_evidence ?? task.requires_evidence, reviewer);
      next.done_at = now;
    }
    if (task.status === "done") next.done_at = null;
    // Leaving in_progress ends the claim's lease.
    if (to !== "in_progress") {
      next.lease_expires_at = null;
      next.claimed_at = null;
    }
  }
  const current: Record<string, unknown> = {
    ...task,
    labels: JSON.stringify(task.labels),
    acceptance_criteria: JSON.stringify(task.acceptance_criteria),
    requires_evidence: task.requires_evidence ? 1 : 0,
  };
  const columns = Object.keys(next).filter((k) => next[k] !== current[k]);
  if (columns.length === 0) return { task, changed: [], lease: leaseOutcome(lease.lease_expires_at, task.lease_expires_at), review_handoff: null };
  // Bookkeeping columns move with status; they are not what the caller asked to change.
  const changed = columns.filter((c) => !["done_at", "lease_expires_at", "claimed_at"].includes(c));
  const guard = leaseGuardSql(ctx.actorId, now, intent, lease);
  // Item updates apply to the checklist as read: a racing change to another item is a conflict, not lost.
  const checklist = patch.criteria_updates ? { sql: " AND acceptance_criteria = ?", params: [current.acceptance_criteria] } : { sql: "", params: [] };
  const summary = to !== task.status ? `${task.ref} ${task.status} → ${to}` : `${task.ref}: ${changed.join(", ")}`;
  const statements: D1PreparedStatement[] = [
    updateTaskStatement(ctx, task, next, columns, guard, checklist, now),
    activityStatement(ctx, {
      verb: to !== task.status ? `task.${to}` : verb,
      objectType: "task",
      objectId: task.id,
      projectId: task.project_id,
      summary: intent.force ? `${summary} (forced${overridden ? ` over ${overridden.name}'s lease` : ""}: ${intent.force.reason})` : summary,
      metadata: { changed, from: task.status, to, ...forcedMetadata(intent, overridden) },
      severity: intent.force ? "warn" : "info",
      ifPreviousChanged: true,
    }),
    ...overrideNotification(ctx, task.id, task.ref, intent, overridden),
  ];
  let openedReview: string | null = null;
  if (to === "in_review" && task.status !== "in_review" && reviewer) {
    // The review handoff opens with the move (the statement before it changed a row), unless one
    // is already open for this task and reviewer. The reviewer is notified as any recipient is.
    const open = noLiveReview(ctx, task.id, reviewer);
    const review = handoffStatements(
      ctx,
      {
        kind: "review",
        title: `Review ${task.ref}: ${task.title}`,
        body: `Please review ${task.ref}. Answer with handoff_respond.`,
        recipients: [reviewer],
        options: [],
        allowFreeText: true,
        relatedTaskId: task.id,
        relatedProjectId: task.project_id,
        fingerprint: `review:${task.id}:${reviewer}`,
      },
      { sql: `changes() > 0 AND ${open.sql}`, params: open.params },
    );
    statements.push(...review.statements);
    openedReview = review.id;
  }
  const [updated] = await ctx.d1.batch<{ id: string }>(statements);
  // A kick for whoever may have been told (the overridden holder, the reviewer); a spare one is harmless.
  if (updated!.results.length > 0) await announceNotices(ctx, [...(overridden ? [overridden.actorId] : []), ...(openedReview && reviewer ? [reviewer] : [])]);
  if (updated!.results.length === 0) {
    // Say why from the task as it is now: the lease moved (refused as such), or its status did.
    const nowLease = await readLease(ctx.d1, ctx.tenantId, task.id);
    checkLease(nowLease, ctx.actorId, now, intent, task.ref);
    throw new ToolError("conflict", `${task.ref} changed while this call ran${nowLease.status !== task.status ? ` (it is ${nowLease.status} now)` : ""}.`, {
      hint: "Re-read it with task_get and retry.",
      retryable: true,
    });
  }
  if (to !== task.status) await taskStatusChanged(ctx, task.id);
  const after = await findTask(ctx, task.id);
  const moved = to === "in_review" && task.status !== "in_review" && reviewer ? await liveReview(ctx, task.id, reviewer) : null;
  return {
    task: after,
    changed,
    lease: leaseOutcome(lease.lease_expires_at, after.lease_expires_at),
    review_handoff: moved && { ...moved, opened: moved.id === openedReview },
  };
}

/** What a write did to the claim's lease, so the caller knows whether its fencing_token still leads anywhere. */
const leaseOutcome = (before: string | null, after: string | null): Lease => (after !== null ? "held" : before !== null ? "released" : "none");

export const taskUpdateTool = defineTool({
  name: "task_update",
  title: "Update a task",
  toolset: "tasks",
  description: "Patch a task. Status follows the state machine; done waits for criteria, evidence and reviewer (guide: tasks-and-deps). Another actor's live lease refuses it.",
  input: z.object({
    task_id: taskRefField("The task."),
    patch: patchSchema.refine((p) => Object.keys(p).some((k) => k !== "allow_reopen" && k !== "expected_status"), "patch names no field to change").describe("Fields to change."),
    ...leaseWriteFields,
  }),
  output: updateOutput,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: (ctx, input) => updateTask(ctx, input.task_id, input.patch, "task.updated", leaseIntent(ctx, input)),
  summarize: (r) => {
    if (!r.changed.length) return `${r.task.ref}: nothing to change.`;
    const review = r.review_handoff ? ` Review handoff ${r.review_handoff.id} ${r.review_handoff.opened ? "opened" : "already open"} for ${r.review_handoff.to.join(", ")}.` : "";
    return `${r.task.ref}: ${r.changed.join(", ")} changed (now ${r.task.status}); lease ${r.lease}.${review}`;
  },
});

export const taskAssignTool = defineTool({
  name: "task_assign",
  title: "Assign a task",
  toolset: "tasks",
  description: 'Assign a task to an actor, "me" or no one (null), under task_update\'s lease rules.',
  input: z.object({
    task_id: taskRefField("The task."),
    actor_id: clearable(actorRefField("The new assignee.")),
    ...leaseWriteFields,
  }),
  output: updateOutput,
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: (ctx, input) => updateTask(ctx, input.task_id, { assignee_actor_id: input.actor_id }, "task.assigned", leaseIntent(ctx, input)),
  summarize: (r) => `${r.task.ref} is assigned to ${r.task.assignee_actor_id ?? "no one"}.`,
});
