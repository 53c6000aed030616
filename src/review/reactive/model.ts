/**
 * The reactive review room's model: the sessions' rows in D1 (review_sessions; the live state is
 * in each session's Durable Object) and the session fields every verb answers with. The session
 * itself and its steps are src/review/reactive-sessions/runner.ts.
 */
import { z } from "zod";
import { type ReviewResult, SESSION_STATUSES, type SessionState, TERMINAL } from "../reactive-sessions/plan";

export const sessionIdField = z.string().trim().min(1).max(128).describe("The session_id reactive_review_pr returned.");
export const statusField = z.enum(SESSION_STATUSES).describe("executing, paused, completed, failed or cancelled (replaced by a review of a newer head).");

export const progressSchema = z.object({
  completed_steps: z.number().int().describe("Steps done (completed or skipped)."),
  total_steps: z.number().int().describe("Steps in the plan (a webhook session's plan grows once its files are listed)."),
  percentage: z.number().int().describe("completed_steps / total_steps, 0–100."),
});

interface SessionRow {
  id: string;
  status: SessionState["status"];
  state: string | null;
  result: string | null;
}

export async function findSessionRow(d1: D1Database, tenantId: string, id: string): Promise<SessionRow | null> {
  return d1.prepare(`SELECT id, status, state, result FROM review_sessions WHERE tenant_id = ? AND id = ?`).bind(tenantId, id).first<SessionRow>();
}

/** Writes what the object holds into the session's row; the whole state and the result once it has ended. */
export async function syncRow(d1: D1Database, state: SessionState, result: ReviewResult | null): Promise<void> {
  const done = state.steps.filter((s) => s.status === "completed" || s.status === "skipped").length;
  const ended = TERMINAL.has(state.status);
  await d1
    .prepare(
      `UPDATE review_sessions SET status = ?, total_steps = ?, completed_steps = ?, findings_count = ?, error = ?, updated_at = ?, finished_at = ?,
       review_id = ?, review_url = ?, result = coalesce(?, result), state = ?
     WHERE tenant_id = ? AND id = ?`,
    )
    .bind(
      state.status,
      state.steps.length,
      done,
      state.findingsCount,
      state.error,
      state.updatedAt,
      state.finishedAt,
      state.review?.id ?? null,
      state.review?.url ?? null,
      result ? JSON.stringify(result) : null,
      ended ? JSON.stringify(state) : null,
      state.spec.tenantId,
      state.spec.sessionId,
    )
    .run();
}

/** The pull request's sessions still running or paused, other than `except`. */
export async function activeSessionIds(d1: D1Database, tenantId: string, repo: string, pullNumber: number, except: string): Promise<string[]> {
  const active = await d1
    .prepare(`SELECT id FROM review_sessions WHERE tenant_id = ? AND repo = ? AND pull_number = ? AND status IN ('executing', 'paused') AND id <> ?`)
    .bind(tenantId, repo, pullNumber, except)
    .all<{ id: string }>();
  return active.results.map((r) => r.id);
}

/** The session's row as it starts: what it reviews and who started it. */
export async function insertSessionRow(d1: D1Database, state: SessionState, repo: string): Promise<void> {
  const spec = state.spec;
  await d1
    .prepare(
      `INSERT INTO review_sessions (tenant_id, id, repo, pull_number, commit_hash, base_ref, source, status, total_steps, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(spec.tenantId, spec.sessionId, repo, spec.pullNumber, spec.commitHash, spec.baseRef, spec.source, state.status, state.steps.length, spec.actorId, spec.createdAt, spec.createdAt)
    .run();
}

/** The newest session that reviewed (or is reviewing) this head of the pull request. */
export async function sessionOfHead(d1: D1Database, tenantId: string, repo: string, pullNumber: number, head: string): Promise<{ id: string; status: string } | null> {
  return d1
    .prepare(
      `SELECT id, status FROM review_sessions WHERE tenant_id = ? AND repo = ? AND pull_number = ? AND commit_hash = ? AND status IN ('executing', 'paused', 'completed')
     ORDER BY created_at DESC LIMIT 1`,
    )
    .bind(tenantId, repo, pullNumber, head)
    .first<{ id: string; status: string }>();
}
