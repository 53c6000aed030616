/**
 * The reactive review room's model: the sessions' rows in D1 (review_sessions; the live state is
 * in each session's Durable Object) and the session fields every verb answers with. The session
 * itself and its steps are src/review/reactive-sessions/runner.ts.
 */
import { z } from "zod";
import { and, desc, eq, inArray, ne, sql } from "drizzle-orm";
import { dbOf } from "../../db/client";
import { reviewSessions } from "../../db/schema";
import { afterTimeAndId } from "../../core/cursor";
import { type ReviewResult, SESSION_STATUSES, type SessionState, type SessionStatus, TERMINAL } from "../reactive-sessions/plan";

export const sessionIdField = z.string().trim().min(1).max(128).describe("The session_id reactive_review_pr returned.");
/** A pull request number as GitHub issues them (a 32-bit positive integer). */
export const pullNumberField = z.number().int().min(1).max(2_147_483_647);
export const statusField = z.enum(SESSION_STATUSES).describe("executing, paused, completed, failed or cancelled (replaced by a review of a newer head).");

/** Fields of a session that get_review_status and list_review_sessions both answer, worded once. */
export const sessionFields = {
  session_id: z.string().describe("The session."),
  pull_number: z.number().int().nullable().describe("The pull request reviewed and published to, or null for a commit range."),
  commit_hash: z.string().describe("The full head sha reviewed."),
  base_ref: z.string().describe("The base the change is compared with."),
  source: z.enum(["tool", "webhook"]).describe("tool (reactive_review_pr) or webhook (a pull_request delivery)."),
  created_at: z.string().describe("When it started."),
  updated_at: z.string().describe("When it last changed."),
  error: z.string().nullable().describe("Why it failed or was cancelled."),
  review_url: z.string().nullable().describe("The published pull-request review, once posted."),
  findings_count: z.number().int().describe("Findings so far (after merging, once the merge step has run)."),
};

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
  const s = reviewSessions;
  const row = await dbOf({ d1 })
    .select({ id: s.id, status: s.status, state: s.state, result: s.result })
    .from(s)
    .where(and(eq(s.tenantId, tenantId), eq(s.id, id)))
    .get();
  return (row as SessionRow | undefined) ?? null;
}

/** Writes what the object holds into the session's row; the whole state and the result once it has ended. */
export async function syncRow(d1: D1Database, state: SessionState, result: ReviewResult | null): Promise<void> {
  const done = state.steps.filter((s) => s.status === "completed" || s.status === "skipped").length;
  const ended = TERMINAL.has(state.status);
  const s = reviewSessions;
  await dbOf({ d1 })
    .update(s)
    .set({
      status: state.status,
      totalSteps: state.steps.length,
      completedSteps: done,
      findingsCount: state.findingsCount,
      error: state.error,
      updatedAt: state.updatedAt,
      finishedAt: state.finishedAt,
      reviewId: state.review?.id ?? null,
      reviewUrl: state.review?.url ?? null,
      // The result once written stays: a later sync without one keeps it.
      result: sql`coalesce(${result ? JSON.stringify(result) : null}, ${s.result})`,
      state: ended ? JSON.stringify(state) : null,
    })
    .where(and(eq(s.tenantId, state.spec.tenantId), eq(s.id, state.spec.sessionId)))
    .run();
}

/** The pull request's sessions still running or paused, other than `except`. */
export async function activeSessionIds(d1: D1Database, tenantId: string, repo: string, pullNumber: number, except: string): Promise<string[]> {
  const s = reviewSessions;
  const active = await dbOf({ d1 })
    .select({ id: s.id })
    .from(s)
    .where(and(eq(s.tenantId, tenantId), eq(s.repo, repo), eq(s.pullNumber, pullNumber), inArray(s.status, ["executing", "paused"]), ne(s.id, except)))
    .all();
  return active.map((r) => r.id);
}

/** The session's row as it starts: what it reviews and who started it. */
export async function insertSessionRow(d1: D1Database, state: SessionState, repo: string): Promise<void> {
  const spec = state.spec;
  await dbOf({ d1 })
    .insert(reviewSessions)
    .values({
      tenantId: spec.tenantId,
      id: spec.sessionId,
      repo,
      pullNumber: spec.pullNumber,
      commitHash: spec.commitHash,
      baseRef: spec.baseRef,
      source: spec.source,
      status: state.status,
      totalSteps: state.steps.length,
      // The migration's defaults, spelled out: drizzle's insert names every column.
      completedSteps: 0,
      findingsCount: 0,
      createdBy: spec.actorId,
      createdAt: spec.createdAt,
      updatedAt: spec.createdAt,
    })
    .run();
}

/** The newest session that reviewed (or is reviewing) this head of the pull request. */
export async function sessionOfHead(d1: D1Database, tenantId: string, repo: string, pullNumber: number, head: string): Promise<{ id: string; status: string } | null> {
  const s = reviewSessions;
  const row = await dbOf({ d1 })
    .select({ id: s.id, status: s.status })
    .from(s)
    .where(and(eq(s.tenantId, tenantId), eq(s.repo, repo), eq(s.pullNumber, pullNumber), eq(s.commitHash, head), inArray(s.status, ["executing", "paused", "completed"])))
    .orderBy(desc(s.createdAt))
    .limit(1)
    .get();
  return row ?? null;
}

export interface SessionFilter {
  /** owner/name lowercased, as repoKey gives it. */
  repo?: string;
  pullNumber?: number;
  statuses?: readonly SessionStatus[];
  /** next_cursor of the previous page. */
  cursor?: string;
}

/**
 * The tenant's sessions, newest first (created_at, then id), up to `limit`: the query
 * list_review_sessions runs. Two indexes in that order (migrations/0053), the tenant's and one
 * repository's, keep a page from sorting every session.
 */
export function sessionListQuery(d1: D1Database, tenantId: string, f: SessionFilter, limit: number) {
  const s = reviewSessions;
  return dbOf({ d1 })
    .select({
      id: s.id,
      repo: s.repo,
      pullNumber: s.pullNumber,
      commitHash: s.commitHash,
      baseRef: s.baseRef,
      source: s.source,
      status: s.status,
      totalSteps: s.totalSteps,
      completedSteps: s.completedSteps,
      findingsCount: s.findingsCount,
      error: s.error,
      reviewUrl: s.reviewUrl,
      createdBy: s.createdBy,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
      finishedAt: s.finishedAt,
    })
    .from(s)
    .where(
      and(
        eq(s.tenantId, tenantId),
        f.repo !== undefined ? eq(s.repo, f.repo) : undefined,
        f.pullNumber !== undefined ? eq(s.pullNumber, f.pullNumber) : undefined,
        f.statuses !== undefined ? inArray(s.status, [...f.statuses]) : undefined,
        afterTimeAndId(f.cursor, s.createdAt, s.id),
      ),
    )
    .orderBy(desc(s.createdAt), desc(s.id))
    .limit(limit);
}
