/**
 * Leased claims on tasks. D1 stays the system of record and every claim is a single
 * compare-and-swap statement, so no task is ever handed to two actors whatever the
 * interleaving. ClaimsDO (one per project scope) serializes claim-next calls so racing
 * agents queue instead of losing CAS races, commits the claims that queued meanwhile in one
 * D1 batch (./group.ts), and keeps an alarm at the earliest lease expiry.
 *
 * A lease also guards writes: while it is live only its holder changes the task (an operator may
 * force, with a reason), and every new claim raises the task's fencing token, so a write carrying
 * the token of an expired or superseded lease is refused. The guard is a condition inside the
 * write's own UPDATE (leaseGuardSql), never a read followed by a write.
 */
import { z } from "zod";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import { invalidInput, ToolError } from "../../core/errors";
import { and, eq, inArray, isNotNull, lte, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { dbOf, jsonValues } from "../../db/client";
import { actors, handoffs, tasks } from "../../db/schema";
import { type BatchMember, commitAlone } from "./group";

export const DEFAULT_LEASE_SECONDS = 3600;

export interface ClaimScope {
  tenantId: string;
  actorId: string;
  sessionId: string;
  /** The run the claim is attributed to, or null outside a session. */
  runId?: string | null;
  /** Claim this task (compare-and-swap); otherwise the best ready task in scope. */
  taskId?: string;
  projectId?: string;
  label?: string;
  /** Only tasks of projects linked to one of these repositories. */
  repositoryIds?: string[];
  leaseSeconds: number;
  now: Date;
}

export type ClaimOutcome =
  | { claimed: true; taskId: string; projectId: string; ref: string; leaseExpiresAt: string; extended: boolean; fencingToken: number }
  | { claimed: false; reason: "pool_empty" | "held" | "blocked" | "closed" | "assigned_elsewhere" | "in_review"; holder?: string | null; leaseExpiresAt?: string | null };

/** A task in `t` that nothing blocks (every dependency done or cancelled). */
const UNBLOCKED = `NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks b ON b.id = d.depends_on_task_id
  WHERE d.tenant_id = t.tenant_id AND d.task_id = t.id AND b.status NOT IN ('done', 'cancelled'))`;

/**
 * The two ways a task is open to a new claimant: unassigned todo, or in progress under a lease
 * that has run out (`now` names the parameter). `status` is the column the status is read from:
 * the task's, or the copy a label's row keeps of it.
 */
const openTodo = (status = "t.status") => `${status} = 'todo' AND t.assignee_actor_id IS NULL`;
const leaseRanOut = (now = "?", status = "t.status") => `${status} = 'in_progress' AND t.lease_expires_at IS NOT NULL AND t.lease_expires_at <= ${now}`;
const claimable = (now = "?") => `((${openTodo()}) OR (${leaseRanOut(now)}))`;

/**
 * The claimed task's reference (KEY-seq), returned by the claim itself, so what the answer reads
 * by reference (its prior attempts) need not wait for the task to be read first. The updated row's
 * columns are named bare: SQLite does not see a table alias inside a RETURNING subquery.
 */
const RETURNED_REF = `(SELECT p.key FROM projects p WHERE p.id = project_id) || '-' || seq AS ref`;

/** Tasks as the claim reads name them: `t`, which UNBLOCKED correlates with. */
const t = alias(tasks, "t");
/** A lease holder, joined to its task for readLease. */
const a = alias(actors, "a");
/** Handoffs as claimHandoff's read names them: `h`, which its recipient subquery correlates with. */
const h = alias(handoffs, "h");

/**
 * The task.claimed row of a claim by id, inserted only if the claim statement right before it
 * changed a row (same atomic batch). The claimed task is found by what the claim just wrote to it.
 */
// Hand SQL: INSERT…SELECT that runs only if the claim before it changed a row (changes() > 0).
function claimActivity(d1: D1Database, s: ClaimScope, lease: string): D1PreparedStatement {
  return d1
    .prepare(
      `INSERT INTO activity (id, tenant_id, at, actor_id, verb, object_type, object_id, project_id, summary, severity, session_id, run_id, metadata)
       SELECT ?, t.tenant_id, ?, ?, 'task.claimed', 'task', t.id, t.project_id, 'claimed until ' || t.lease_expires_at, 'info', ?, ?, '{}'
       FROM tasks t WHERE changes() > 0 AND t.tenant_id = ? AND t.assignee_actor_id = ? AND t.lease_expires_at = ? AND t.updated_at = ?
         ${s.taskId ? "AND t.id = ?" : ""} ORDER BY t.id LIMIT 1`,
    )
    .bind(uuidv7(s.now.getTime()), iso(s.now), s.actorId, s.sessionId, s.runId ?? null, s.tenantId, s.actorId, lease, iso(s.now), ...(s.taskId ? [s.taskId] : []));
}

const leaseEnd = (s: ClaimScope) => iso(new Date(s.now.getTime() + s.leaseSeconds * 1000));

/** What the claims object tracks of a claim's answer: the lease it handed out. */
const leaseOf = (o: ClaimOutcome) => (o.claimed ? { taskId: o.taskId, expiresAt: o.leaseExpiresAt } : null);

/** A task claim as a member of a group commit: claim-next, or by id when the scope names a task. */
export function taskClaim(d1: D1Database, s: ClaimScope): BatchMember<ClaimOutcome> {
  if (s.taskId) return claimByIdMember(d1, { ...s, taskId: s.taskId });
  const attempt = claimNextAttempt(d1, s);
  // A candidate picked but not taken is a race lost to a writer outside this batch: retry alone.
  return { statements: attempt.statements, settle: async (results) => (await attempt.settle(results)) ?? claimNext(d1, s), leaseOf };
}

/**
 * The best claimable, unblocked task in scope (its id, tenant_id, project_id), by priority, then
 * oldest, then id: the better of the best task in each claimable state. Each state's pick walks an
 * index in that order (migrations/0054) and stops at its first unblocked task, where one pick over
 * both states would sort every claimable task in scope first.
 */
export function claimCandidate(s: ClaimScope): { sql: string; params: unknown[] } {
  // With a label, the walk is the label's own range of task_labels (migrations/0056) in the state's
  // status, in the same order, so tasks without the label or in another status are never visited.
  const o = s.label ? "tl" : "t";
  const from = s.label ? "task_labels tl JOIN tasks t ON t.id = tl.task_id" : "tasks t";
  const scope: string[] = [`${o}.tenant_id = ?`];
  const params: unknown[] = [s.tenantId];
  if (s.projectId) {
    scope.push(`${o}.project_id = ?`);
    params.push(s.projectId);
  }
  if (s.label) {
    scope.push("tl.label = ?");
    params.push(s.label);
  }
  if (s.repositoryIds?.length) {
    scope.push(`EXISTS (SELECT 1 FROM project_repositories pr WHERE pr.tenant_id = t.tenant_id AND pr.project_id = t.project_id
                 AND pr.repository_id IN (SELECT value FROM json_each(?)))`);
    params.push(JSON.stringify(s.repositoryIds));
  }
  // Hand SQL: a compound of ordered LIMIT-1 subqueries, which drizzle's query builder cannot nest.
  const best = (state: string) => `SELECT * FROM (SELECT t.id, t.tenant_id, t.project_id, t.priority, t.created_at
    FROM ${from} JOIN projects p ON p.id = t.project_id AND p.deleted_at IS NULL
    WHERE ${scope.join(" AND ")} AND ${state} AND ${UNBLOCKED}
    ORDER BY ${o}.priority ASC, ${o}.created_at ASC, ${s.label ? "tl.task_id" : "t.id"} ASC LIMIT 1)`;
  return {
    sql: `SELECT c.id, c.tenant_id, c.project_id FROM (${best(openTodo(o + ".status"))} UNION ALL ${best(leaseRanOut("?", o + ".status"))}) c
      ORDER BY c.priority ASC, c.created_at ASC, c.id ASC LIMIT 1`,
    params: [...params, ...params, iso(s.now)],
  };
}

/**
 * One claim-next attempt: the task.claimed row picks the candidate and the claim takes exactly the
 * task it names, in one atomic batch. (Finding the task after the claim by assignee, lease and time
 * could not tell apart two tasks the same actor claimed at the same instant.) Settles to null when a
 * candidate was picked but the claim lost it.
 */
function claimNextAttempt(d1: D1Database, s: ClaimScope): BatchMember<ClaimOutcome | null> {
  const now = iso(s.now);
  const lease = leaseEnd(s);
  const candidate = claimCandidate(s);
  return {
    statements: () => {
      const activityId = uuidv7(s.now.getTime());
      // Hand SQL: the activity row is an INSERT…SELECT picking the candidate, the claim a compare-and-swap on it.
      return [
        d1
          .prepare(
            `INSERT INTO activity (id, tenant_id, at, actor_id, verb, object_type, object_id, project_id, summary, severity, session_id, run_id, metadata)
             SELECT ?, c.tenant_id, ?, ?, 'task.claimed', 'task', c.id, c.project_id, 'claimed until ' || ?, 'info', ?, ?, '{}'
             FROM (${candidate.sql}) c`,
          )
          .bind(activityId, now, s.actorId, lease, s.sessionId, s.runId ?? null, ...candidate.params),
        d1
          .prepare(
            `UPDATE tasks SET status = 'in_progress', assignee_actor_id = ?, lease_expires_at = ?, claimed_at = ?, updated_at = ?, lease_token = lease_token + 1
             WHERE id = (SELECT object_id FROM activity WHERE id = ?)
               AND ((status = 'todo' AND assignee_actor_id IS NULL) OR (status = 'in_progress' AND lease_expires_at <= ?))
             RETURNING id, project_id, lease_token, ${RETURNED_REF}`,
          )
          .bind(s.actorId, lease, now, now, activityId, now),
      ];
    },
    settle: async ([picked, claimed]) => {
      const row = claimed!.results[0] as { id: string; project_id: string; lease_token: number; ref: string } | undefined;
      if (row) return { claimed: true, taskId: row.id, projectId: row.project_id, ref: row.ref, leaseExpiresAt: lease, extended: false, fencingToken: row.lease_token };
      // Nothing picked: no claimable task in scope as the batch saw it.
      return picked!.meta.changes === 0 ? { claimed: false, reason: "pool_empty" } : null;
    },
  };
}

/** Claims the best ready task in scope, or reports the pool empty. */
export async function claimNext(d1: D1Database, s: ClaimScope): Promise<ClaimOutcome> {
  // Several attempts only matter without the Durable Object in front (tests, direct calls):
  // a lost race finds the next candidate.
  for (let attempt = 0; attempt < 5; attempt++) {
    const outcome = await commitAlone(d1, claimNextAttempt(d1, s));
    if (outcome) return outcome;
  }
  return { claimed: false, reason: "pool_empty" };
}

/**
 * Claims one task by compare-and-swap; re-claiming your own live lease extends it and keeps its
 * fencing token. Any other claim (a new one, or yours after your lease ran out) is a new lease
 * with the next token, so writes made under the old one can be told apart.
 */
function claimByIdMember(d1: D1Database, s: ClaimScope & { taskId: string }): BatchMember<ClaimOutcome> {
  const now = iso(s.now);
  const lease = leaseEnd(s);
  // ?1 lease, ?2 now, ?3 actor, ?4 tenant, ?5 task.
  const liveOwn = `(t.status = 'in_progress' AND t.assignee_actor_id = ?3 AND t.lease_expires_at IS NOT NULL AND t.lease_expires_at > ?2)`;
  return {
    // Hand SQL: the claim is a compare-and-swap whose SET and WHERE reuse the lease conditions' text.
    statements: () => [
      d1
        .prepare(
          `UPDATE tasks AS t SET status = 'in_progress', lease_expires_at = ?1, updated_at = ?2,
             claimed_at = CASE WHEN ${liveOwn} THEN COALESCE(t.claimed_at, ?2) ELSE ?2 END,
             lease_token = CASE WHEN ${liveOwn} THEN t.lease_token ELSE t.lease_token + 1 END,
             assignee_actor_id = ?3
           WHERE t.tenant_id = ?4 AND t.id = ?5 AND ${UNBLOCKED}
             AND (${claimable("?2")} OR (t.status = 'todo' AND t.assignee_actor_id = ?3) OR (t.status = 'in_progress' AND t.assignee_actor_id = ?3))
           RETURNING id, project_id, claimed_at, lease_token, ${RETURNED_REF}`,
        )
        .bind(lease, now, s.actorId, s.tenantId, s.taskId),
      claimActivity(d1, s, lease),
    ],
    settle: async ([claimed]) => {
      const row = claimed!.results[0] as { id: string; project_id: string; claimed_at: string; lease_token: number; ref: string } | undefined;
      // An extension keeps the original claimed_at, which is how it shows.
      if (row) return { claimed: true, taskId: row.id, projectId: row.project_id, ref: row.ref, leaseExpiresAt: lease, extended: row.claimed_at !== now, fencingToken: row.lease_token };
      return whyNotClaimed(d1, s);
    },
    leaseOf,
  };
}

/**
 * Why a claim by id was refused, from the task as it is now (in a group commit: after the whole
 * group, which only ever moves a task further from claimable by someone else).
 */
async function whyNotClaimed(d1: D1Database, s: ClaimScope & { taskId: string }): Promise<ClaimOutcome> {
  const task = (await dbOf({ d1 })
    .select({
      status: t.status,
      assignee_actor_id: t.assigneeActorId,
      lease_expires_at: t.leaseExpiresAt,
      // Written out: UNBLOCKED correlates with `t.`, which drizzle drops inside fields of a single-table select.
      blocked: sql<number>`NOT (${sql.raw(UNBLOCKED)})`.as("blocked"),
    })
    .from(t)
    .where(and(eq(t.tenantId, s.tenantId), eq(t.id, s.taskId)))
    .get()) as { status: string; assignee_actor_id: string | null; lease_expires_at: string | null; blocked: number } | undefined;
  if (!task || task.status === "done" || task.status === "cancelled") return { claimed: false, reason: "closed" };
  if (task.blocked) return { claimed: false, reason: "blocked" };
  if (task.status === "todo") return { claimed: false, reason: "assigned_elsewhere", holder: task.assignee_actor_id };
  // A task in review is nobody's to claim: its assignee finishes it (or is sent back to work) by the verdict.
  if (task.status === "in_review") return { claimed: false, reason: "in_review", holder: task.assignee_actor_id };
  return { claimed: false, reason: "held", holder: task.assignee_actor_id, leaseExpiresAt: task.lease_expires_at };
}

/**
 * Returns tasks whose lease ran out to the pool (todo, unassigned), recording task.lease_expired
 * for each in the same batch as its release. Bounded per call; `taskIds` narrows it to the
 * tasks an alarm tracks. Every write re-checks expiry, so a lease extended meanwhile survives.
 */
export async function reapExpiredLeases(d1: D1Database, now: Date, taskIds?: string[], limit = 500): Promise<number> {
  const at = iso(now);
  const expired = await dbOf({ d1 })
    .select({ id: tasks.id })
    .from(tasks)
    .where(and(eq(tasks.status, "in_progress"), isNotNull(tasks.leaseExpiresAt), lte(tasks.leaseExpiresAt, at), taskIds ? inArray(tasks.id, jsonValues(taskIds)) : undefined))
    .limit(limit)
    .all();
  // Hand SQL: each release is an INSERT…SELECT and a compare-and-swap that re-check expiry in their own WHERE.
  const stillExpired = `status = 'in_progress' AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?`;
  let released = 0;
  for (let i = 0; i < expired.length; i += 50) {
    const statements = expired.slice(i, i + 50).flatMap(({ id }) => [
      d1
        .prepare(
          `INSERT INTO activity (id, tenant_id, at, actor_id, verb, object_type, object_id, project_id, summary, severity, session_id, metadata)
           SELECT ?, tenant_id, ?, COALESCE(assignee_actor_id, ''), 'task.lease_expired', 'task', id, project_id,
                  'lease expired at ' || lease_expires_at || '; back in the pool', 'warn', '', '{}'
           FROM tasks WHERE id = ? AND ${stillExpired}`,
        )
        .bind(uuidv7(now.getTime()), at, id, at),
      d1
        .prepare(`UPDATE tasks SET status = 'todo', assignee_actor_id = NULL, lease_expires_at = NULL, claimed_at = NULL, updated_at = ? WHERE id = ? AND ${stillExpired} RETURNING id`)
        .bind(at, id, at),
    ]);
    const results = await d1.batch<{ id: string }>(statements);
    released += results.filter((_, j) => j % 2 === 1).reduce((n, r) => n + r.results.length, 0);
  }
  return released;
}

export type HandoffClaimOutcome = { claimed: true; already: boolean } | { claimed: false; reason: "not_recipient" | "taken" | "closed"; holder: string | null };

/** What a handoff claim needs to know. */
export interface HandoffClaim {
  tenantId: string;
  actorId: string;
  sessionId: string;
  runId?: string | null;
  handoffId: string;
  now: Date;
}

/**
 * Claims an open handoff for one of its recipients: a single compare-and-swap, so on a
 * multi-recipient request exactly one recipient wins. Claiming one you already hold is a no-op.
 */
export async function claimHandoff(d1: D1Database, s: HandoffClaim): Promise<HandoffClaimOutcome> {
  return commitAlone(d1, handoffClaim(d1, s));
}

/** A handoff claim as a member of a group commit. */
export function handoffClaim(d1: D1Database, s: HandoffClaim): BatchMember<HandoffClaimOutcome> {
  const now = iso(s.now);
  return {
    // Hand SQL: a compare-and-swap, and its activity row only if it changed a row (changes() > 0).
    statements: () => [
      d1
        .prepare(
          `UPDATE handoffs SET status = 'claimed', claimed_by = ?, updated_at = ?
           WHERE tenant_id = ? AND id = ? AND status = 'open'
             AND EXISTS (SELECT 1 FROM handoff_recipients r WHERE r.tenant_id = handoffs.tenant_id AND r.handoff_id = handoffs.id AND r.actor_id = ?)
           RETURNING id`,
        )
        .bind(s.actorId, now, s.tenantId, s.handoffId, s.actorId),
      d1
        .prepare(
          `INSERT INTO activity (id, tenant_id, at, actor_id, verb, object_type, object_id, project_id, summary, severity, session_id, run_id, metadata)
           SELECT ?, tenant_id, ?, ?, 'handoff.claimed', 'work_request', id, related_project_id, 'claimed: ' || title, 'info', ?, ?, '{}'
           FROM handoffs WHERE changes() > 0 AND tenant_id = ? AND id = ?`,
        )
        .bind(uuidv7(s.now.getTime()), now, s.actorId, s.sessionId, s.runId ?? null, s.tenantId, s.handoffId),
    ],
    settle: async ([claimed]) => {
      if (claimed!.results.length > 0) return { claimed: true, already: false };
      const handoff = (await dbOf({ d1 })
        .select({
          status: h.status,
          claimed_by: h.claimedBy,
          // Written out: the subquery correlates with `h.`, which drizzle drops inside fields of a single-table select.
          recipient: sql<number>`EXISTS (SELECT 1 FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id AND r.actor_id = ${s.actorId})`.as("recipient"),
        })
        .from(h)
        .where(and(eq(h.tenantId, s.tenantId), eq(h.id, s.handoffId)))
        .get()) as { status: string; claimed_by: string | null; recipient: number } | undefined;
      if (!handoff || !handoff.recipient) return { claimed: false, reason: "not_recipient", holder: null };
      if (handoff.status === "claimed" && handoff.claimed_by === s.actorId) return { claimed: true, already: true };
      if (handoff.status === "claimed") return { claimed: false, reason: "taken", holder: handoff.claimed_by };
      return { claimed: false, reason: "closed", holder: handoff.claimed_by };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The lease as a guard on writes (task_update, task_assign, task_release).

/** The inputs every lease-guarded task write takes. */
export const leaseWriteFields = {
  fencing_token: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().describe("task_claim's fencing_token; a stale lease's is refused."),
  force: z.boolean().optional().describe("Operator keys: override another's live lease (needs reason)."),
  reason: z.string().trim().min(1).max(500).optional().describe("Why you force (with force: true)."),
};

/** What a write says about the lease it acts under. */
export interface LeaseIntent {
  /** The caller's fencing token, when it passed one. */
  fencingToken?: number;
  /** An operator's override of another actor's live lease. */
  force?: { reason: string };
}

/** Validates the lease inputs of a write: force needs a reason and an operator key. */
export function leaseIntent(ctx: Ctx, input: { fencing_token?: number; force?: boolean; reason?: string }): LeaseIntent {
  if (input.force && !input.reason) throw invalidInput("force needs a reason.", "Say in reason (up to 500 characters) why the lease is overridden; it is kept on the timeline.");
  if (input.reason !== undefined && !input.force) throw invalidInput("reason goes with force: true.", "Drop reason, or pass force: true with it (operator keys only).");
  if (input.force && !ctx.operator) {
    throw new ToolError("operator_required", "force overrides another actor's lease, which only an operator key may do.", {
      hint: "Without force: wait for the lease to run out, or ask its holder (comment_add with mentions, or handoff_create). An operator key (npm run keys -- create … --operator) may force with a reason.",
    });
  }
  return { ...(input.fencing_token !== undefined ? { fencingToken: input.fencing_token } : {}), ...(input.force ? { force: { reason: input.reason! } } : {}) };
}

/** A task's lease as the guard reads it. */
export interface LeaseState {
  status: string;
  assignee_actor_id: string | null;
  lease_expires_at: string | null;
  lease_token: number;
  /** The assignee's name, for messages. */
  holder_name: string | null;
}

export async function readLease(d1: D1Database, tenantId: string, taskId: string): Promise<LeaseState> {
  const row = (await dbOf({ d1 })
    .select({ status: t.status, assignee_actor_id: t.assigneeActorId, lease_expires_at: t.leaseExpiresAt, lease_token: t.leaseToken, holder_name: a.name })
    .from(t)
    .leftJoin(a, and(eq(a.tenantId, t.tenantId), eq(a.id, t.assigneeActorId)))
    .where(and(eq(t.tenantId, tenantId), eq(t.id, taskId)))
    .get()) as LeaseState | undefined;
  // The task was read in this tenant a moment ago; tasks are never deleted.
  if (!row) throw new ToolError("conflict", "The task disappeared while this call ran.", { hint: "Re-read it with task_get.", retryable: false });
  return row;
}

/** A lease counts while the task is in progress under it and it has not run out. */
export const leaseIsLive = (l: Pick<LeaseState, "status" | "assignee_actor_id" | "lease_expires_at">, now: string): boolean =>
  l.status === "in_progress" && l.assignee_actor_id !== null && l.lease_expires_at !== null && l.lease_expires_at > now;

/** The holder a forced write overrode, for its activity row and the holder's notification. */
export interface Overridden {
  actorId: string;
  name: string;
  leaseExpiresAt: string;
}

/**
 * Refuses, from the lease as read, a write the lease does not allow: a stale fencing token, or
 * another actor's live lease without force. Returns whose lease a forced write overrides. The
 * write itself repeats the rule in its WHERE (leaseGuardSql), so a lease that changes after this
 * read still cannot be written through.
 */
export function checkLease(lease: LeaseState, actorId: string, now: string, intent: LeaseIntent, ref: string): Overridden | null {
  const live = leaseIsLive(lease, now);
  const holder = `${lease.holder_name ?? "another actor"} (${lease.assignee_actor_id})`;
  if (intent.fencingToken !== undefined) {
    const yours = lease.assignee_actor_id === actorId && lease.lease_token === intent.fencingToken;
    // A lease ended by a move out of in_progress (lease_expires_at cleared) leaves the token good for
    // its holder until the task changes hands or is claimed again: finishing a reviewed task needs no re-claim.
    if (!yours || (lease.lease_expires_at !== null && !live)) {
      const why = yours
        ? `your lease on ${ref} ran out at ${lease.lease_expires_at}`
        : live && lease.assignee_actor_id === actorId
          ? `it is not the token of your current lease on ${ref} (live until ${lease.lease_expires_at})`
          : live
            ? `${ref} was claimed again since: ${holder} holds it until ${lease.lease_expires_at}`
            : `the lease it belonged to is over (${ref} is ${lease.status}${lease.assignee_actor_id ? `, assigned to ${holder}` : ", unassigned"})`;
      // Only an in-progress task can be claimed, so only there does re-claiming lead anywhere.
      const hint =
        lease.status === "in_progress" || lease.status === "todo"
          ? "Re-claim the task with task_claim (it returns the current fencing_token) and re-read it with task_get before writing: someone may have changed it meanwhile."
          : `${ref} is ${lease.status}, which no lease covers: re-read it with task_get, then write without fencing_token.`;
      throw new ToolError("stale_fencing_token", `fencing_token ${intent.fencingToken} is stale: ${why}.`, { hint });
    }
  }
  if (!live || lease.assignee_actor_id === actorId) return null;
  if (!intent.force) {
    throw new ToolError("lease_held", `${ref} is leased to ${holder} until ${lease.lease_expires_at}; only the holder may change it until then.`, {
      hint: `Wait for the lease to run out at ${lease.lease_expires_at}, or ask ${lease.holder_name ?? "the holder"} (comment_add with mentions, or handoff_create). An operator key may override it with force: true and a reason.`,
    });
  }
  return { actorId: lease.assignee_actor_id!, name: lease.holder_name ?? "", leaseExpiresAt: lease.lease_expires_at! };
}

/**
 * checkLease's rule as a condition on the tasks row being written (no table alias), with its
 * parameters. A forced write is a compare-and-swap on the lease it read, so the holder it records
 * as overridden is the one it actually overrode.
 */
// Hand SQL: the guard goes into other rooms' hand-written UPDATEs as SQL text.
export function leaseGuardSql(actorId: string, now: string, intent: LeaseIntent, seen: LeaseState): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (intent.fencingToken !== undefined) {
    parts.push("(assignee_actor_id = ? AND lease_token = ? AND (lease_expires_at IS NULL OR (status = 'in_progress' AND lease_expires_at > ?)))");
    params.push(actorId, intent.fencingToken, now);
  }
  if (intent.force) {
    parts.push("(assignee_actor_id IS ? AND lease_token = ?)");
    params.push(seen.assignee_actor_id, seen.lease_token);
  } else {
    parts.push("NOT (status = 'in_progress' AND assignee_actor_id IS NOT NULL AND assignee_actor_id <> ? AND lease_expires_at IS NOT NULL AND lease_expires_at > ?)");
    params.push(actorId, now);
  }
  return { sql: parts.join(" AND "), params };
}

/** What a forced write adds to its activity row: who was overridden, until when, and why. */
export function forcedMetadata(intent: LeaseIntent, overridden: Overridden | null): Record<string, unknown> {
  if (!intent.force) return {};
  return { forced: true, reason: intent.force.reason, overridden_actor_id: overridden?.actorId ?? null, overridden_lease_expires_at: overridden?.leaseExpiresAt ?? null };
}

/**
 * The overridden holder's notification, inserted only if the statement before it (the write's
 * activity row) was, so it lands with the write or not at all.
 */
export function overrideNotification(ctx: Ctx, taskId: string, ref: string, intent: LeaseIntent, overridden: Overridden | null): D1PreparedStatement[] {
  if (!intent.force || !overridden) return [];
  // Hand SQL: INSERT…SELECT that runs only if the statement before it changed a row (changes() > 0).
  return [
    ctx.d1
      .prepare(
        `INSERT INTO notifications (id, tenant_id, actor_id, kind, object_type, object_id, summary, from_actor_id, created_at)
                SELECT ?, ?, ?, 'lease_overridden', 'task', ?, ?, ?, ? WHERE changes() > 0`,
      )
      .bind(uuidv7(), ctx.tenantId, overridden.actorId, taskId, `${ctx.actorName} overrode your lease on ${ref}: ${intent.force.reason}`.slice(0, 300), ctx.actorId, iso(ctx.clock.now())),
  ];
}
