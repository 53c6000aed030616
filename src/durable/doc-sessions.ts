import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/**
 * The document store's sessions (seed 003 `docs_session`) of one actor in one tenant: one object
 * per tenant+actor (see docSessionStub). The object is the only record of them, so every change
 * is one synchronous SQLite transaction inside it: racing calls queue at the object and none
 * can overwrite another's pin.
 *
 * Methods answer outcomes instead of throwing: an error's class and fields do not survive the
 * RPC boundary, and the service maps each refusal to its ToolError.
 */

export type PinKind = "path" | "hash";

export interface PinEntry {
  kind: PinKind;
  /** A normalized glob (kind path) or a full lowercase SHA-256 hex digest (kind hash). */
  value: string;
}

export interface SessionView {
  name: string;
  description: string;
  warm: boolean;
  started_at: string;
  /** When `start` last made this existing session current again, or null. */
  resumed_at: string | null;
  pins: number;
}

export type StartOutcome = { ok: true; session: SessionView; resumed: boolean; previous: string | null; sessions: number } | { ok: false; reason: "too_many_sessions"; names: string[] };

export type StopOutcome = { ok: true; name: string; cleared: boolean; pins_dropped: number; pins_kept: number; was_current: boolean } | { ok: false; reason: "no_active_session" | "not_found" };

export type PinOutcome =
  | { ok: true; session: string; added: PinEntry[]; already: PinEntry[]; total_pins: number }
  | { ok: false; reason: "no_active_session" }
  | { ok: false; reason: "too_many_pins"; session: string; total_pins: number };

export type UnpinOutcome =
  { ok: true; session: string; removed: PinEntry[]; total_pins: number } | { ok: false; reason: "no_active_session" } | { ok: false; reason: "not_pinned"; session: string; pins: PinEntry[] };

export interface CurrentSession extends SessionView {
  pinned: PinEntry[];
}

interface SessionRow extends Record<string, SqlStorageValue> {
  name: string;
  description: string;
  warm: number;
  started_at: string;
  resumed_at: string | null;
  pins: number;
}

const SESSION_SELECT = `SELECT s.name, s.description, s.warm, s.started_at, s.resumed_at,
  (SELECT COUNT(*) FROM pins p WHERE p.session = s.name) AS pins FROM sessions s`;

const view = (r: SessionRow): SessionView => ({
  name: r.name,
  description: r.description,
  warm: r.warm === 1,
  started_at: r.started_at,
  resumed_at: r.resumed_at,
  pins: r.pins,
});

export class DocSessionDO extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS sessions (
        name TEXT PRIMARY KEY, description TEXT NOT NULL, warm INTEGER NOT NULL, started_at TEXT NOT NULL, resumed_at TEXT)`);
      ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS pins (
        session TEXT NOT NULL, kind TEXT NOT NULL, value TEXT NOT NULL, pinned_at TEXT NOT NULL, PRIMARY KEY (session, kind, value))`);
      // One row, key 'current': the session pin/unpin act on and list/search scope to.
      ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    });
  }

  private get sql(): SqlStorage {
    return this.ctx.storage.sql;
  }

  private currentName(): string | null {
    const row = this.sql.exec<{ value: string }>(`SELECT value FROM state WHERE key = 'current'`).toArray()[0];
    return row?.value ?? null;
  }

  private session(name: string): SessionView | null {
    const row = this.sql.exec<SessionRow>(`${SESSION_SELECT} WHERE s.name = ?`, name).toArray()[0];
    return row ? view(row) : null;
  }

  private pinsOf(name: string): PinEntry[] {
    return this.sql.exec<{ kind: PinKind; value: string }>(`SELECT kind, value FROM pins WHERE session = ? ORDER BY pinned_at, rowid`, name).toArray();
  }

  private pinCount(name: string): number {
    return this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM pins WHERE session = ?`, name).one().n;
  }

  /**
   * Makes `name` the current session, creating it or resuming it (its pins kept) when it exists.
   * The session that was current before stays, not current, until stopped.
   */
  async start(input: { name: string; description: string | null; warm: boolean; now: string; maxSessions: number }): Promise<StartOutcome> {
    return this.ctx.storage.transactionSync((): StartOutcome => {
      const previous = this.currentName();
      const existing = this.session(input.name);
      if (existing) {
        this.sql.exec(`UPDATE sessions SET description = COALESCE(?, description), warm = ?, resumed_at = ? WHERE name = ?`, input.description, input.warm ? 1 : 0, input.now, input.name);
      } else {
        const names = this.sql
          .exec<{ name: string }>(`SELECT name FROM sessions ORDER BY started_at, rowid`)
          .toArray()
          .map((r) => r.name);
        if (names.length >= input.maxSessions) return { ok: false, reason: "too_many_sessions", names };
        this.sql.exec(`INSERT INTO sessions (name, description, warm, started_at, resumed_at) VALUES (?, ?, ?, ?, NULL)`, input.name, input.description ?? "", input.warm ? 1 : 0, input.now);
      }
      this.sql.exec(`INSERT INTO state (key, value) VALUES ('current', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, input.name);
      const sessions = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM sessions`).one().n;
      return { ok: true, session: this.session(input.name)!, resumed: existing !== null, previous: previous === input.name ? null : previous, sessions };
    });
  }

  /**
   * Stops `name` (the current session when null). `clear` forgets the session and its pins;
   * without it the session is kept, not current, and `start` with its name resumes it.
   * Stopping the current session leaves no session current.
   */
  async stop(input: { name: string | null; clear: boolean }): Promise<StopOutcome> {
    return this.ctx.storage.transactionSync((): StopOutcome => {
      const current = this.currentName();
      const name = input.name ?? current;
      if (name === null) return { ok: false, reason: "no_active_session" };
      if (!this.session(name)) return { ok: false, reason: "not_found" };
      const pins = this.pinCount(name);
      if (input.clear) {
        this.sql.exec(`DELETE FROM pins WHERE session = ?`, name);
        this.sql.exec(`DELETE FROM sessions WHERE name = ?`, name);
      }
      if (current === name) this.sql.exec(`DELETE FROM state WHERE key = 'current'`);
      return { ok: true, name, cleared: input.clear, pins_dropped: input.clear ? pins : 0, pins_kept: input.clear ? 0 : pins, was_current: current === name };
    });
  }

  /** Records pins on the current session; all of them or, past the cap, none. */
  async pin(input: { entries: PinEntry[]; now: string; maxPins: number }): Promise<PinOutcome> {
    return this.ctx.storage.transactionSync((): PinOutcome => {
      const session = this.currentName();
      if (session === null) return { ok: false, reason: "no_active_session" };
      const added: PinEntry[] = [];
      const already: PinEntry[] = [];
      for (const e of input.entries) {
        const exists = this.sql.exec(`SELECT 1 FROM pins WHERE session = ? AND kind = ? AND value = ?`, session, e.kind, e.value).toArray().length > 0;
        (exists ? already : added).push(e);
      }
      const total = this.pinCount(session);
      if (total + added.length > input.maxPins) return { ok: false, reason: "too_many_pins", session, total_pins: total };
      for (const e of added) {
        this.sql.exec(`INSERT INTO pins (session, kind, value, pinned_at) VALUES (?, ?, ?, ?)`, session, e.kind, e.value, input.now);
      }
      return { ok: true, session, added, already, total_pins: total + added.length };
    });
  }

  /**
   * Removes pins of the current session: the glob exactly as recorded (kind path), or every
   * hash pin that starts with `value` (kind hash, a full hash or a prefix).
   */
  async unpin(input: PinEntry): Promise<UnpinOutcome> {
    return this.ctx.storage.transactionSync((): UnpinOutcome => {
      const session = this.currentName();
      if (session === null) return { ok: false, reason: "no_active_session" };
      const removed =
        input.kind === "path"
          ? this.sql.exec<{ kind: PinKind; value: string }>(`DELETE FROM pins WHERE session = ? AND kind = 'path' AND value = ? RETURNING kind, value`, session, input.value).toArray()
          : this.sql
              .exec<{ kind: PinKind; value: string }>(
                `DELETE FROM pins WHERE session = ? AND kind = 'hash' AND substr(value, 1, ?) = ? RETURNING kind, value`,
                session,
                input.value.length,
                input.value,
              )
              .toArray();
      if (removed.length === 0) return { ok: false, reason: "not_pinned", session, pins: this.pinsOf(session) };
      return { ok: true, session, removed, total_pins: this.pinCount(session) };
    });
  }

  /** The current session with its pins, or null when none is current. */
  async current(): Promise<CurrentSession | null> {
    const name = this.currentName();
    if (name === null) return null;
    const s = this.session(name);
    return s ? { ...s, pinned: this.pinsOf(name) } : null;
  }

  /** Every session of this actor, oldest first, and which one is current. */
  async list(): Promise<{ current: string | null; sessions: SessionView[] }> {
    const sessions = this.sql.exec<SessionRow>(`${SESSION_SELECT} ORDER BY s.started_at, s.rowid`).toArray().map(view);
    return { current: this.currentName(), sessions };
  }
}
