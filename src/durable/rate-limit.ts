import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/**
 * Rate-limit counters (docs/limits.md: Rate limits). One object per thing limited — `key:<key id>`,
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

/** `window`: the start of the window the units were counted in, so a refund takes them from the same one. */
export type Verdict = { allowed: true; remaining: number; window: number } | { allowed: false; retryAfterSeconds: number };

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
 * Seconds until `cost` more units would be let through, if nothing else arrives meanwhile: within
 * this window while the previous one's weight fades, or else once this window becomes the previous.
 * `cost` is at most `limit` (a larger one never fits; the caller refuses it outright).
 */
function retryAfter(s: WindowState, limit: number, now: number, cost: number): number {
  const at = s.count + cost <= limit ? s.start + WINDOW_MS * (1 - (limit - s.count - cost) / s.previous) : s.start + WINDOW_MS + WINDOW_MS * (1 - (limit - cost) / s.count);
  return Math.max(1, Math.ceil((at - now) / 1000));
}

/**
 * Counts `cost` units (one request, or the ops and items of one call) against `limit` per minute,
 * all or none: a refused call is not counted at all.
 */
export function decide(s: WindowState, limit: number, now: number, cost = 1): { state: WindowState; verdict: Verdict } {
  const cur = advance(s, now);
  const used = estimate(cur, now);
  if (used + cost <= limit) return { state: { ...cur, count: cur.count + cost }, verdict: { allowed: true, remaining: Math.floor(limit - used - cost), window: cur.start } };
  return { state: cur, verdict: { allowed: false, retryAfterSeconds: retryAfter(cur, limit, now, Math.min(cost, limit)) } };
}

/** Takes back `units` counted in `window` (another counter refused the same call), wherever that window now sits. */
export function refunded(s: WindowState, units: number, window: number): WindowState {
  if (window === s.start) return { ...s, count: Math.max(0, s.count - units) };
  if (window === s.start - WINDOW_MS) return { ...s, previous: Math.max(0, s.previous - units) };
  return s;
}

export class RateLimitDO extends DurableObject<Env> {
  private ready = false;

  /**
   * Counts `cost` units (default one request) against `perMinute` (at least 1; callers skip the
   * call when a limit is off). Synchronous storage only, so concurrent requests cannot interleave
   * inside a check.
   */
  hit(perMinute: number, cost = 1): Verdict {
    const before = this.stored() ?? EMPTY;
    const { state, verdict } = decide(before, perMinute, Date.now(), Math.max(1, Math.floor(cost)));
    this.save(before, state);
    return verdict;
  }

  /** Gives back units a hit counted in `window`, when another counter refused the same call. */
  refund(units: number, window: number): void {
    const before = this.stored();
    if (before) this.save(before, refunded(advance(before, Date.now()), units, window));
  }

  private save(before: WindowState, state: WindowState): void {
    if (state.start === before.start && state.count === before.count && state.previous === before.previous) return;
    this.ctx.storage.sql.exec(
      `INSERT INTO counter (id, start, count, previous) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET start = excluded.start, count = excluded.count, previous = excluded.previous`,
      state.start,
      state.count,
      state.previous,
    );
    // Once a minute at most (when the window rolls): an object nobody calls clears itself.
    if (state.start !== before.start) void this.ctx.storage.setAlarm(state.start + 2 * WINDOW_MS);
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
