import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/** The object that holds one MCP session (by its Mcp-Session-Id). */
export const sessionStub = (env: Env, id: string) => env.SESSIONS.get(env.SESSIONS.idFromName(id));

/** Sessions idle this long end by themselves (an alarm clears their storage). */
export const SESSION_IDLE_MS = 24 * 60 * 60 * 1000;
/** A touch rewrites the record only this often, so busy sessions do not write on every call. */
const TOUCH_EVERY_MS = 60 * 1000;

export interface SessionRecord {
  tenantId: string;
  actorId: string;
  createdAt: string;
  lastSeenAt: string;
  protocolVersion: string;
  clientName: string;
  clientVersion: string;
  /**
   * The run the session's writes are attributed to, once its first write minted one, and when
   * its heartbeat was last refreshed (so busy sessions refresh it about once a minute, not per call).
   */
  run?: SessionRun;
  /** The level the client set with logging/setLevel (2025 revisions); absent until it does. */
  logLevel?: string;
  /** The client declared form elicitation at initialize, so a confirmation can be asked on a call's stream. */
  elicits?: boolean;
  /** The client declared sampling at initialize (only the conformance fixtures ask for it). */
  samples?: boolean;
  /** Resources the client subscribed to (resources/subscribe); their updates ride the session's GET stream. */
  subscriptions?: string[];
  /**
   * The agent client's own session id its requests carry (X-Agent-Session-Id and the like), once
   * recorded in client_sessions: kept here so the mapping is written when it changes, not per request.
   */
  clientSessionId?: string;
}

/** Questions one session may have waiting at once (each holds a tool call open). */
const MAX_OPEN_QUESTIONS = 16;

interface OpenQuestion {
  deadline: number;
  /** Set once the asking call waits; an answer that comes first is kept in `answer`. */
  resolve?: (answer: string | null) => void;
  /** The answer, as the JSON text of the client's response. */
  answer?: string;
}

export interface SessionRun {
  id: string;
  heartbeatAt: string;
}

/**
 * One MCP session (one object per Mcp-Session-Id). Keeping it here rather than in isolate
 * memory lets any isolate serve any request of the session.
 */
export class SessionDO extends DurableObject<Env> {
  /**
   * Questions the server asked the client (elicitation/create on a call's stream), by their wire
   * id. In memory: the asking call holds an RPC to this object open while it waits, so the object
   * stays up; if it restarts, the asking call is told so at once rather than waiting.
   */
  private readonly questions = new Map<string, OpenQuestion>();

  /**
   * The record as last read or written: every request of a session reads it (touch), and reading
   * it from storage costs more CPU than the rest of the touch. The object is the only writer of its
   * storage, so the copy cannot go stale; undefined until first read, null once the session ended.
   */
  private cached: SessionRecord | null | undefined;

  private async load(): Promise<SessionRecord | null> {
    if (this.cached === undefined) this.cached = (await this.ctx.storage.get<SessionRecord>("session")) ?? null;
    // A copy: callers change what they get before saving it, and a failed save must leave the cache as storage is.
    return this.cached && structuredClone(this.cached);
  }

  private async save(record: SessionRecord): Promise<void> {
    await this.ctx.storage.put("session", record);
    this.cached = structuredClone(record);
  }

  /** Registers a question before it is sent, so an answer that outruns the wait is not refused. False when too many are open. */
  async expectAnswer(id: string, waitMs: number): Promise<boolean> {
    const now = Date.now();
    for (const [key, q] of this.questions) if (q.deadline < now) this.questions.delete(key);
    if (this.questions.size >= MAX_OPEN_QUESTIONS) return false;
    this.questions.set(id, { deadline: now + waitMs });
    return true;
  }

  /** The client's answer to question `id` (the JSON text of its response), or null when none came in time. */
  async awaitAnswer(id: string): Promise<string | null> {
    const q = this.questions.get(id);
    if (!q) return null;
    if (q.answer !== undefined) {
      this.questions.delete(id);
      return q.answer;
    }
    return new Promise<string | null>((resolve) => {
      const timer = setTimeout(
        () => {
          this.questions.delete(id);
          resolve(null);
        },
        Math.max(0, q.deadline - Date.now()),
      );
      q.resolve = (answer) => {
        clearTimeout(timer);
        this.questions.delete(id);
        resolve(answer);
      };
    });
  }

  /** Hands the client's answer to the call that asked; false when no question `id` is open (answered, timed out, never asked). */
  async deliverAnswer(id: string, answer: string): Promise<boolean> {
    const q = this.questions.get(id);
    if (!q || q.answer !== undefined) return false;
    if (q.resolve) q.resolve(answer);
    else q.answer = answer;
    return true;
  }

  async open(record: Omit<SessionRecord, "lastSeenAt">): Promise<void> {
    await this.save({ ...record, lastSeenAt: record.createdAt });
    await this.ctx.storage.setAlarm(Date.now() + SESSION_IDLE_MS);
  }

  /** The session, refreshed, or null when it never existed or has ended. */
  async touch(): Promise<SessionRecord | null> {
    const record = await this.load();
    if (!record) return null;
    const now = Date.now();
    if (now - Date.parse(record.lastSeenAt) >= TOUCH_EVERY_MS) {
      record.lastSeenAt = new Date(now).toISOString();
      await this.save(record);
      await this.ctx.storage.setAlarm(now + SESSION_IDLE_MS);
    }
    return record;
  }

  /**
   * Makes `candidate` the session's run unless it already has one, and returns the run that
   * holds the slot (null when the session has ended). One object per session serializes this,
   * so racing first writes agree on one run.
   */
  async claimRun(candidate: SessionRun): Promise<SessionRun | null> {
    const record = await this.load();
    if (!record) return null;
    if (record.run) return record.run;
    record.run = candidate;
    await this.save(record);
    return candidate;
  }

  /** Records a heartbeat refresh of the session's run, if it is still the session's run. */
  async markRunHeartbeat(run: SessionRun): Promise<void> {
    const record = await this.load();
    if (record?.run?.id !== run.id) return;
    record.run = run;
    await this.save(record);
  }

  /** Forgets the session's run if it is still `runId`, so the next write mints a fresh one. */
  async releaseRun(runId: string): Promise<boolean> {
    const record = await this.load();
    if (record?.run?.id !== runId) return false;
    delete record.run;
    await this.save(record);
    return true;
  }

  /** Adds or removes a resource subscription; false when the session is gone. */
  async subscribe(uri: string, on: boolean): Promise<boolean> {
    const record = await this.load();
    if (!record) return false;
    const rest = (record.subscriptions ?? []).filter((u) => u !== uri);
    record.subscriptions = on ? [...rest, uri] : rest;
    await this.save(record);
    return true;
  }

  /** Whether the session (still) subscribes to `uri`. */
  async subscribes(uri: string): Promise<boolean> {
    const record = await this.load();
    return record?.subscriptions?.includes(uri) ?? false;
  }

  /** Records the client's own session id; false when the session is gone. */
  async setClientSession(clientSessionId: string): Promise<boolean> {
    const record = await this.load();
    if (!record) return false;
    record.clientSessionId = clientSessionId;
    await this.save(record);
    return true;
  }

  async setLogLevel(level: string): Promise<void> {
    const record = await this.load();
    if (!record) return;
    record.logLevel = level;
    await this.save(record);
  }

  async end(): Promise<boolean> {
    // A call still waiting for an answer learns at once that none will come.
    for (const q of this.questions.values()) q.resolve?.(null);
    this.questions.clear();
    const existed = (await this.load()) !== null;
    await this.ctx.storage.deleteAll();
    this.cached = null;
    await this.ctx.storage.deleteAlarm();
    return existed;
  }

  override async alarm(): Promise<void> {
    const record = await this.load();
    if (record && Date.now() - Date.parse(record.lastSeenAt) < SESSION_IDLE_MS) {
      await this.ctx.storage.setAlarm(Date.parse(record.lastSeenAt) + SESSION_IDLE_MS);
      return;
    }
    await this.ctx.storage.deleteAll();
    this.cached = null;
  }
}
