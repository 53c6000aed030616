import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/**
 * Request counters (README: Rate limits). One object per thing limited — `key:<key id>`,
 * `tenant:<tenant id>`, a webhook source — so a runaway key only ever queues behind itself, and
 * each check is one round trip to one small object.
 *
 * The window slides: the previous minute's count is weighted by how much of it still overlaps
 * the last 60 seconds (Cloudflare's own limiter uses the same estimate), so a burst at a minute
 * boundary cannot get twice the limit through as a fixed window would allow.
 */
export const WINDOW_MS = 60_000;

export interface WindowState {
  /** Start of the current window, a multiple of WINDOW_MS. */
  start: number;
  count: number;
  /** The count of the window before `start`. */
  previous: number;
}

export type Verdict = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

const EMPTY: WindowState = { start: 0, count: 0, previous: 0 };

/** The state at `now`: the window rolls over, and anything older than the previous window is forgotten. */
export function advance(s: WindowState, now: number): WindowState {
  const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
  // An isolate's clock a little behind the last caller's stays in the current window.
  if (start <= s.start) return s;
  if (start === s.start + WINDOW_MS) return { start, count: 0, previous: s.count };
  return { start, count: 0, previous: 0 };
}

const estimate = (s: WindowState, now: number) => s.previous * (1 - Math.min(Math.max(now - s.start, 0), WINDOW_MS) / WINDOW_MS) + s.count;

/**
 * Seconds until one more request would be let through, if no other arrives meanwhile: within
 * this window while the previous one's weight fades, or else once this window becomes the previous.
 */
function retryAfter(s: WindowState, limit: number, now: number): number {
  const at = s.count + 1 <= limit
    ? s.start + WINDOW_MS * (1 - (limit - s.count - 1) / s.previous)
    : s.start + WINDOW_MS + WINDOW_MS * (1 - (limit - 1) / s.count);
  return Math.max(1, Math.ceil((at - now) / 1000));
}

/** Counts one request against `limit` per minute. A refused request is not counted. */
export function decide(s: WindowState, limit: number, now: number): { state: WindowState; verdict: Verdict } {
  const cur = advance(s, now);
  const used = estimate(cur, now);
  if (used + 1 <= limit) return { state: { ...cur, count: cur.count + 1 }, verdict: { allowed: true, remaining: Math.floor(limit - used - 1) } };
  return { state: cur, verdict: { allowed: false, retryAfterSeconds: retryAfter(cur, limit, now) } };
}

export class RateLimitDO extends DurableObject<Env> {
  private ready = false;

  /**
   * Counts a request against `perMinute` (at least 1; callers skip the call when a limit is off).
   * Synchronous storage only, so concurrent requests cannot interleave inside a check.
   */
  hit(perMinute: number): Verdict {
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    const before = this.stored() ?? EMPTY;
    const { state, verdict } = decide(before, perMinute, now);
    if (state.start !== before.start || state.count !== before.count || state.previous !== before.previous) {
      sql.exec(
        `INSERT INTO counter (id, start, count, previous) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET start = excluded.start, count = excluded.count, previous = excluded.previous`,
        state.start, state.count, state.previous,
      );
      // Once a minute at most (when the window rolls): an object nobody calls clears itself.
      if (state.start !== before.start) void this.ctx.storage.setAlarm(state.start + 2 * WINDOW_MS);
    }
    return verdict;
  }

  /** Two quiet windows leave nothing to remember: the object's storage goes, so unused keys cost nothing. */
  override async alarm(): Promise<void> {
    const row = this.stored();
    if (row && Date.now() < row.start + 2 * WINDOW_MS) {
      await this.ctx.storage.setAlarm(row.start + 2 * WINDOW_MS);
      return;
    }
    await this.ctx.storage.deleteAll();
    this.ready = false;
  }

  /** The stored window, or null for a fresh (or cleared) object; exposed for tests and operators. */
  stored(): WindowState | null {
    const sql = this.ctx.storage.sql;
    if (!this.ready) {
      sql.exec(`CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY CHECK (id = 1), start INTEGER NOT NULL, count INTEGER NOT NULL, previous INTEGER NOT NULL)`);
      this.ready = true;
    }
    return sql.exec<{ start: number; count: number; previous: number }>(`SELECT start, count, previous FROM counter WHERE id = 1`).toArray()[0] ?? null;
  }
}
