import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { claimHandoff, claimNext, claimTask, reapExpiredLeases, type ClaimOutcome, type ClaimScope, type HandoffClaimOutcome } from "../work/claims/model";
import { type ReleaseRequest, releasePaths, type Reservation, type ReserveOutcome, type ReserveRequest, reservePaths } from "../work/reservations/model";

/**
 * One per claim scope (a project, or a tenant's whole pool). It runs that scope's claims one at
 * a time, so racing agents queue instead of losing compare-and-swap races in D1, and it keeps an
 * alarm at the earliest lease expiry it has handed out, which sends expired work back to the pool.
 * D1 stays the system of record: the claim itself is a single CAS statement there. A repository's
 * path reservations queue in an object of their own (`<tenant>:repo:<repository id>`), since a
 * repository's paths are shared by every project linked to it.
 */
export class ClaimsDO extends DurableObject<Env> {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS leases (task_id TEXT PRIMARY KEY, expires_at TEXT NOT NULL)`);
    });
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  async claim(scope: Omit<ClaimScope, "now"> & { nowMs: number }): Promise<ClaimOutcome> {
    return this.serialized(async () => {
      const s: ClaimScope = { ...scope, now: new Date(scope.nowMs) };
      const outcome = s.taskId ? await claimTask(this.env.DB, { ...s, taskId: s.taskId }) : await claimNext(this.env.DB, s);
      if (outcome.claimed) await this.track(outcome.taskId, outcome.leaseExpiresAt);
      return outcome;
    });
  }

  /** Claims a handoff for a recipient, queued with the scope's other claims. */
  async claimHandoff(args: { tenantId: string; actorId: string; sessionId: string; runId?: string | null; handoffId: string; nowMs: number }): Promise<HandoffClaimOutcome> {
    return this.serialized(() => claimHandoff(this.env.DB, { ...args, now: new Date(args.nowMs) }));
  }

  /** Reserves paths of the repository this object serializes (named `<tenant>:repo:<repository id>`). */
  async reservePaths(request: ReserveRequest): Promise<ReserveOutcome> {
    return this.serialized(() => reservePaths(this.env.DB, request));
  }

  /** Releases reservations, in the same queue as reserving, so a release never races a renewal. */
  async releasePaths(request: ReleaseRequest): Promise<Reservation[]> {
    return this.serialized(() => releasePaths(this.env.DB, request));
  }

  /** Remembers a lease and keeps the alarm at the earliest one. */
  async track(taskId: string, expiresAt: string): Promise<void> {
    this.ctx.storage.sql.exec(`INSERT INTO leases (task_id, expires_at) VALUES (?, ?) ON CONFLICT (task_id) DO UPDATE SET expires_at = excluded.expires_at`, taskId, expiresAt);
    await this.arm();
  }

  private async arm(): Promise<void> {
    const next = this.ctx.storage.sql.exec<{ at: string | null }>(`SELECT MIN(expires_at) AS at FROM leases`).one().at;
    if (next === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Date.parse(next));
  }

  override async alarm(): Promise<void> {
    // In the same queue as claims, so a re-claim cannot slip between reading and clearing leases.
    await this.serialized(() => this.releaseDue());
  }

  private async releaseDue(): Promise<void> {
    const now = new Date();
    const due = this.ctx.storage.sql
      .exec<{ task_id: string }>(`SELECT task_id FROM leases WHERE expires_at <= ?`, now.toISOString())
      .toArray()
      .map((r) => r.task_id);
    if (due.length > 0) {
      // Tasks released, extended or finished meanwhile are left alone by the re-check in D1.
      await reapExpiredLeases(this.env.DB, now, due);
      this.ctx.storage.sql.exec(`DELETE FROM leases WHERE task_id IN (SELECT value FROM json_each(?))`, JSON.stringify(due));
    }
    await this.arm();
  }

  /** Leases this object tracks (for tests and operators). */
  async tracked(): Promise<Array<{ task_id: string; expires_at: string }>> {
    return this.ctx.storage.sql.exec<{ task_id: string; expires_at: string }>(`SELECT task_id, expires_at FROM leases ORDER BY expires_at`).toArray();
  }
}
