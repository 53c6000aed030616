import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { type BatchMember, commitTogether } from "../work/claims/group";
import { handoffClaim, reapExpiredLeases, taskClaim, type ClaimOutcome, type ClaimScope, type HandoffClaim, type HandoffClaimOutcome } from "../work/claims/model";
import { type ReleaseRequest, releasePaths, type Reservation, type ReserveOutcome, type ReserveRequest, reservePaths } from "../work/reservations/model";
import { CommitQueue } from "./commit-queue";

/**
 * One per claim scope (a project, or a tenant's whole pool). It runs that scope's claims in one
 * queue, so racing agents queue instead of losing compare-and-swap races in D1; the claims that
 * arrive while a D1 batch is in flight are committed together in the next one (group commit,
 * ./commit-queue.ts), and each is answered only once that batch is written. It keeps an alarm at
 * the earliest lease expiry it has handed out, which sends expired work back to the pool.
 * D1 stays the system of record: each claim is a compare-and-swap statement there. A repository's
 * path reservations queue in an object of their own (`<tenant>:repo:<repository id>`), since a
 * repository's paths are shared by every project linked to it.
 */
export class ClaimsDO extends DurableObject<Env> {
  private readonly queue = new CommitQueue((members) => this.commitGroup(members));

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS leases (task_id TEXT PRIMARY KEY, expires_at TEXT NOT NULL)`);
    });
  }

  async claim(scope: Omit<ClaimScope, "now"> & { nowMs: number }): Promise<ClaimOutcome> {
    return this.queue.join(taskClaim(this.env.DB, { ...scope, now: new Date(scope.nowMs) }));
  }

  /** Claims a handoff for a recipient, queued with the scope's other claims. */
  async claimHandoff(args: Omit<HandoffClaim, "now"> & { nowMs: number }): Promise<HandoffClaimOutcome> {
    return this.queue.join(handoffClaim(this.env.DB, { ...args, now: new Date(args.nowMs) }));
  }

  /** Reserves paths of the repository this object serializes (named `<tenant>:repo:<repository id>`). */
  async reservePaths(request: ReserveRequest): Promise<ReserveOutcome> {
    // It reads the live reservations before it writes, so it takes a turn of its own.
    return this.queue.alone(() => reservePaths(this.env.DB, request));
  }

  /** Releases reservations, in the same queue as reserving, so a release never races a renewal. */
  async releasePaths(request: ReleaseRequest): Promise<Reservation[]> {
    return this.queue.alone(() => releasePaths(this.env.DB, request));
  }

  /** One group's batch, then the leases it handed out, before any member is answered. */
  private async commitGroup(members: ReadonlyArray<BatchMember<unknown>>): Promise<Array<PromiseSettledResult<unknown>>> {
    const settled = await commitTogether(this.env.DB, members);
    const leases = settled.flatMap((s, i) => (s.status === "fulfilled" ? (members[i]!.leaseOf?.(s.value) ?? []) : []));
    if (leases.length > 0) await this.trackAll(leases);
    return settled;
  }

  /** Remembers leases and keeps the alarm at the earliest one. */
  private async trackAll(leases: ReadonlyArray<{ taskId: string; expiresAt: string }>): Promise<void> {
    for (const l of leases) {
      this.ctx.storage.sql.exec(`INSERT INTO leases (task_id, expires_at) VALUES (?, ?) ON CONFLICT (task_id) DO UPDATE SET expires_at = excluded.expires_at`, l.taskId, l.expiresAt);
    }
    await this.arm();
  }

  private async arm(): Promise<void> {
    const next = this.ctx.storage.sql.exec<{ at: string | null }>(`SELECT MIN(expires_at) AS at FROM leases`).one().at;
    if (next === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Date.parse(next));
  }

  override async alarm(): Promise<void> {
    // In the same queue as claims, so a re-claim cannot slip between reading and clearing leases.
    await this.queue.alone(() => this.releaseDue());
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
