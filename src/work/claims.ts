/**
 * Leased claims on tasks. D1 stays the system of record and every claim is a single
 * compare-and-swap statement, so no task is ever handed to two actors whatever the
 * interleaving. ClaimsDO (one per project scope) serializes claim-next calls so racing
 * agents queue instead of losing CAS races, and keeps an alarm at the earliest lease expiry.
 */
import { uuidv7 } from "../db/ids";
import { iso } from "../db/time";

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
  | { claimed: true; taskId: string; projectId: string; leaseExpiresAt: string; extended: boolean }
  | { claimed: false; reason: "pool_empty" | "held" | "blocked" | "closed" | "assigned_elsewhere"; holder?: string | null; leaseExpiresAt?: string | null };

/** A task in `t` that nothing blocks (every dependency done or cancelled). */
const UNBLOCKED = `NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks b ON b.id = d.depends_on_task_id
  WHERE d.tenant_id = t.tenant_id AND d.task_id = t.id AND b.status NOT IN ('done', 'cancelled'))`;

/** Open to a new claimant: unassigned todo, or in progress under a lease that has run out. */
const CLAIMABLE = `((t.status = 'todo' AND t.assignee_actor_id IS NULL)
  OR (t.status = 'in_progress' AND t.lease_expires_at IS NOT NULL AND t.lease_expires_at <= ?))`;

/**
 * The task.claimed row of a claim by id, inserted only if the claim statement right before it
 * changed a row (same atomic batch). The claimed task is found by what the claim just wrote to it.
 */
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

/** Claims the best ready task in scope, or reports the pool empty. */
export async function claimNext(d1: D1Database, s: ClaimScope): Promise<ClaimOutcome> {
  const now = iso(s.now);
  const lease = iso(new Date(s.now.getTime() + s.leaseSeconds * 1000));
  const scope: string[] = ["t.tenant_id = ?"];
  const params: unknown[] = [s.tenantId];
  if (s.projectId) { scope.push("t.project_id = ?"); params.push(s.projectId); }
  if (s.label) { scope.push("EXISTS (SELECT 1 FROM json_each(t.labels) l WHERE l.value = ?)"); params.push(s.label); }
  if (s.repositoryIds?.length) {
    scope.push(`EXISTS (SELECT 1 FROM project_repositories pr WHERE pr.tenant_id = t.tenant_id AND pr.project_id = t.project_id
                 AND pr.repository_id IN (SELECT value FROM json_each(?)))`);
    params.push(JSON.stringify(s.repositoryIds));
  }
  // Several attempts only matter without the Durable Object in front (tests, direct calls):
  // a lost race finds the next candidate.
  for (let attempt = 0; attempt < 5; attempt++) {
    // The task.claimed row picks the candidate and the claim takes exactly the task it names,
    // in one atomic batch. (Finding the task after the claim by assignee, lease and time could
    // not tell apart two tasks the same actor claimed at the same instant.)
    const activityId = uuidv7(s.now.getTime());
    const [, claimed] = await d1.batch<{ id: string; project_id: string }>([
      d1
        .prepare(
          `INSERT INTO activity (id, tenant_id, at, actor_id, verb, object_type, object_id, project_id, summary, severity, session_id, run_id, metadata)
           SELECT ?, t.tenant_id, ?, ?, 'task.claimed', 'task', t.id, t.project_id, 'claimed until ' || ?, 'info', ?, ?, '{}'
           FROM tasks t JOIN projects p ON p.id = t.project_id AND p.deleted_at IS NULL
           WHERE ${scope.join(" AND ")} AND ${CLAIMABLE} AND ${UNBLOCKED}
           ORDER BY t.priority ASC, t.created_at ASC, t.id ASC LIMIT 1`,
        )
        .bind(activityId, now, s.actorId, lease, s.sessionId, s.runId ?? null, ...params, now),
      d1
        .prepare(
          `UPDATE tasks SET status = 'in_progress', assignee_actor_id = ?, lease_expires_at = ?, claimed_at = ?, updated_at = ?
           WHERE id = (SELECT object_id FROM activity WHERE id = ?)
             AND ((status = 'todo' AND assignee_actor_id IS NULL) OR (status = 'in_progress' AND lease_expires_at <= ?))
           RETURNING id, project_id`,
        )
        .bind(s.actorId, lease, now, now, activityId, now),
    ]);
    const row = claimed!.results[0];
    if (row) return { claimed: true, taskId: row.id, projectId: row.project_id, leaseExpiresAt: lease, extended: false };
    const any = await d1
      .prepare(`SELECT 1 FROM tasks t WHERE ${scope.join(" AND ")} AND ${CLAIMABLE} AND ${UNBLOCKED} LIMIT 1`)
      .bind(...params, now)
      .first();
    if (!any) return { claimed: false, reason: "pool_empty" };
  }
  return { claimed: false, reason: "pool_empty" };
}

/** Claims one task by compare-and-swap; re-claiming your own extends its lease. */
export async function claimTask(d1: D1Database, s: ClaimScope & { taskId: string }): Promise<ClaimOutcome> {
  const now = iso(s.now);
  const lease = iso(new Date(s.now.getTime() + s.leaseSeconds * 1000));
  const [claimed] = await d1.batch<{ id: string; project_id: string; claimed_at: string }>([
    d1
      .prepare(
        `UPDATE tasks AS t SET status = 'in_progress', lease_expires_at = ?, updated_at = ?,
           claimed_at = CASE WHEN t.status = 'in_progress' AND t.assignee_actor_id = ? THEN COALESCE(t.claimed_at, ?) ELSE ? END,
           assignee_actor_id = ?
         WHERE t.tenant_id = ? AND t.id = ? AND ${UNBLOCKED}
           AND (${CLAIMABLE} OR (t.status = 'todo' AND t.assignee_actor_id = ?) OR (t.status = 'in_progress' AND t.assignee_actor_id = ?))
         RETURNING id, project_id, claimed_at`,
      )
      .bind(lease, now, s.actorId, now, now, s.actorId, s.tenantId, s.taskId, now, s.actorId, s.actorId),
    claimActivity(d1, s, lease),
  ]);
  const row = claimed!.results[0];
  // A re-claim keeps the original claimed_at, which is how an extension shows.
  if (row) return { claimed: true, taskId: row.id, projectId: row.project_id, leaseExpiresAt: lease, extended: row.claimed_at !== now };
  // Say why, from the task as it is now.
  const t = await d1
    .prepare(`SELECT t.status, t.assignee_actor_id, t.lease_expires_at, NOT (${UNBLOCKED}) AS blocked FROM tasks t WHERE t.tenant_id = ? AND t.id = ?`)
    .bind(s.tenantId, s.taskId)
    .first<{ status: string; assignee_actor_id: string | null; lease_expires_at: string | null; blocked: number }>();
  if (!t || t.status === "done" || t.status === "cancelled") return { claimed: false, reason: "closed" };
  if (t.blocked) return { claimed: false, reason: "blocked" };
  if (t.status === "todo") return { claimed: false, reason: "assigned_elsewhere", holder: t.assignee_actor_id };
  return { claimed: false, reason: "held", holder: t.assignee_actor_id, leaseExpiresAt: t.lease_expires_at };
}

/**
 * Returns tasks whose lease ran out to the pool (todo, unassigned), recording task.lease_expired
 * for each in the same batch as its release. Bounded per call; `taskIds` narrows it to the
 * tasks an alarm tracks. Every write re-checks expiry, so a lease extended meanwhile survives.
 */
export async function reapExpiredLeases(d1: D1Database, now: Date, taskIds?: string[], limit = 500): Promise<number> {
  const at = iso(now);
  const narrow = taskIds ? ` AND id IN (SELECT value FROM json_each(?))` : "";
  const expired = await d1
    .prepare(`SELECT id FROM tasks WHERE status = 'in_progress' AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?${narrow} LIMIT ?`)
    .bind(at, ...(taskIds ? [JSON.stringify(taskIds)] : []), limit)
    .all<{ id: string }>();
  const stillExpired = `status = 'in_progress' AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?`;
  let released = 0;
  for (let i = 0; i < expired.results.length; i += 50) {
    const statements = expired.results.slice(i, i + 50).flatMap(({ id }) => [
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

/**
 * Claims an open handoff for one of its recipients: a single compare-and-swap, so on a
 * multi-recipient request exactly one recipient wins. Claiming one you already hold is a no-op.
 */
export async function claimHandoff(d1: D1Database, s: { tenantId: string; actorId: string; sessionId: string; runId?: string | null; handoffId: string; now: Date }): Promise<HandoffClaimOutcome> {
  const now = iso(s.now);
  const [claimed] = await d1.batch<{ id: string }>([
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
  ]);
  if (claimed!.results.length > 0) return { claimed: true, already: false };
  const h = await d1
    .prepare(
      `SELECT h.status, h.claimed_by, EXISTS (SELECT 1 FROM handoff_recipients r WHERE r.tenant_id = h.tenant_id AND r.handoff_id = h.id AND r.actor_id = ?) AS recipient
       FROM handoffs h WHERE h.tenant_id = ? AND h.id = ?`,
    )
    .bind(s.actorId, s.tenantId, s.handoffId)
    .first<{ status: string; claimed_by: string | null; recipient: number }>();
  if (!h || !h.recipient) return { claimed: false, reason: "not_recipient", holder: null };
  if (h.status === "claimed" && h.claimed_by === s.actorId) return { claimed: true, already: true };
  if (h.status === "claimed") return { claimed: false, reason: "taken", holder: h.claimed_by };
  return { claimed: false, reason: "closed", holder: h.claimed_by };
}
