import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { ringTaskFollowers } from "./inbox";
import { REVIEW_TASK_DRIVER } from "../review/reactive/task";
import { syncRow } from "../review/reactive/model";
import { RESULT_KEY, runStep, type Snapshot, type SteerOutcome, type StepEnv, stepGapMs } from "../review/reactive-sessions/runner";
import { applyOutcome, nextSteps, type ReviewResult, type SessionState, settle, TERMINAL } from "../review/reactive-sessions/plan";
import { batchReviewer } from "../review/reactive-sessions/batch-reviewer";

const STATE = "state";
/** An ended session's live state is kept this long (its row in D1 keeps a copy for good). */
export const RETAIN_MS = 7 * 24 * 60 * 60_000;

/**
 * One reactive review session (src/review/reactive-sessions/runner.ts), named by tenant and session id. It holds
 * the plan, each batch's findings and the merged result, and its alarm runs the next step; a
 * pause clears the alarm, a resume sets it again. The object serializes everything done to the
 * session, so a pause that arrives while a step runs is kept when the step's outcome is recorded.
 */
export class ReviewSessionDO extends DurableObject<Env> {
  private load(): Promise<SessionState | undefined> {
    return this.ctx.storage.get<SessionState>(STATE);
  }

  private async save(state: SessionState): Promise<void> {
    await this.ctx.storage.put(STATE, state);
  }

  private async result(): Promise<ReviewResult | null> {
    return (await this.ctx.storage.get<ReviewResult>(RESULT_KEY)) ?? null;
  }

  /** The next alarm: the next step after the gap (or a retry's backoff), or, once the session has ended, the cleanup. */
  private async schedule(state: SessionState, retryInMs: number | null): Promise<void> {
    if (state.status === "executing") await this.ctx.storage.setAlarm(Date.now() + Math.max(stepGapMs(this.env), retryInMs ?? 0));
    else if (TERMINAL.has(state.status)) await this.ctx.storage.setAlarm(Date.parse(state.finishedAt ?? state.updatedAt) + RETAIN_MS);
    else await this.ctx.storage.deleteAlarm();
  }

  /** Takes a new session and arms its first step. A repeated start keeps the session it already has. */
  async start(state: SessionState): Promise<void> {
    if (await this.load()) return;
    await this.save(state);
    await this.schedule(state, null);
  }

  async snapshot(): Promise<Snapshot | null> {
    const state = await this.load();
    return state ? { state, result: await this.result() } : null;
  }

  async pause(): Promise<SteerOutcome | null> {
    const state = await this.load();
    if (!state) return null;
    if (state.status !== "executing") return { changed: false, state };
    state.status = "paused";
    state.updatedAt = new Date().toISOString();
    await this.save(state);
    await this.schedule(state, null);
    await syncRow(this.env.DB, state, null);
    return { changed: true, state };
  }

  async resume(): Promise<SteerOutcome | null> {
    const state = await this.load();
    if (!state) return null;
    if (state.status !== "paused") return { changed: false, state };
    state.status = "executing";
    // The pause was not a stall: the stalled clock starts again from the resume.
    state.updatedAt = state.lastActivityAt = new Date().toISOString();
    await this.save(state);
    await this.schedule(state, null);
    await syncRow(this.env.DB, state, null);
    return { changed: true, state };
  }

  /** Ends a session that a newer head made stale. */
  async cancel(reason: string): Promise<void> {
    const state = await this.load();
    if (!state || TERMINAL.has(state.status)) return;
    state.status = "cancelled";
    state.error = reason;
    state.updatedAt = state.finishedAt = new Date().toISOString();
    await this.save(state);
    await this.schedule(state, null);
    await syncRow(this.env.DB, state, await this.result());
  }

  override async alarm(): Promise<void> {
    const state = await this.load();
    if (!state) return;
    if (TERMINAL.has(state.status)) {
      if (Date.now() >= Date.parse(state.finishedAt ?? state.updatedAt) + RETAIN_MS) await this.ctx.storage.deleteAll();
      else await this.schedule(state, null);
      return;
    }
    if (state.status !== "executing") return;
    const due = nextSteps(state);
    const numbers = new Set(due.map((s) => s.number));
    for (const s of state.steps) if (numbers.has(s.number)) s.status = "running";
    state.lastActivityAt = new Date().toISOString();
    await this.save(state);

    const x: StepEnv = { env: this.env, store: this.ctx.storage, reviewer: batchReviewer(), waitUntil: (p) => this.ctx.waitUntil(p) };
    const outcomes = await Promise.all(
      due.map(async (s) => {
        const startedAt = Date.now();
        const outcome = await runStep(x, state, s);
        return { number: s.number, startedAt, finishedAt: Date.now(), outcome };
      }),
    );

    // Read again: a pause or a cancel may have arrived while the steps ran.
    const fresh = (await this.load()) ?? state;
    let retryInMs: number | null = null;
    for (const o of outcomes) {
      const r = applyOutcome(fresh, o.number, o.startedAt, o.finishedAt, o.outcome);
      if (r.retryInMs !== null) retryInMs = Math.max(retryInMs ?? 0, r.retryInMs);
    }
    settle(fresh, Date.now());
    await this.save(fresh);
    await this.schedule(fresh, retryInMs);
    await syncRow(this.env.DB, fresh, await this.result());
    // Owners of MCP tasks following this session hear it moved.
    await ringTaskFollowers(this.env, fresh.spec.tenantId, REVIEW_TASK_DRIVER, "session_id", fresh.spec.sessionId);
  }
}
