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
  async open(record: Omit<SessionRecord, "lastSeenAt">): Promise<void> {
    await this.ctx.storage.put("session", { ...record, lastSeenAt: record.createdAt });
    await this.ctx.storage.setAlarm(Date.now() + SESSION_IDLE_MS);
  }

  /** The session, refreshed, or null when it never existed or has ended. */
  async touch(): Promise<SessionRecord | null> {
    const record = await this.ctx.storage.get<SessionRecord>("session");
    if (!record) return null;
    const now = Date.now();
    if (now - Date.parse(record.lastSeenAt) >= TOUCH_EVERY_MS) {
      record.lastSeenAt = new Date(now).toISOString();
      await this.ctx.storage.put("session", record);
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
    const record = await this.ctx.storage.get<SessionRecord>("session");
    if (!record) return null;
    if (record.run) return record.run;
    record.run = candidate;
    await this.ctx.storage.put("session", record);
    return candidate;
  }

  /** Records a heartbeat refresh of the session's run, if it is still the session's run. */
  async markRunHeartbeat(run: SessionRun): Promise<void> {
    const record = await this.ctx.storage.get<SessionRecord>("session");
    if (record?.run?.id !== run.id) return;
    record.run = run;
    await this.ctx.storage.put("session", record);
  }

  /** Forgets the session's run if it is still `runId`, so the next write mints a fresh one. */
  async releaseRun(runId: string): Promise<boolean> {
    const record = await this.ctx.storage.get<SessionRecord>("session");
    if (record?.run?.id !== runId) return false;
    delete record.run;
    await this.ctx.storage.put("session", record);
    return true;
  }

  async setLogLevel(level: string): Promise<void> {
    const record = await this.ctx.storage.get<SessionRecord>("session");
    if (!record) return;
    record.logLevel = level;
    await this.ctx.storage.put("session", record);
  }

  async end(): Promise<boolean> {
    const existed = (await this.ctx.storage.get("session")) !== undefined;
    await this.ctx.storage.deleteAll();
    await this.ctx.storage.deleteAlarm();
    return existed;
  }

  override async alarm(): Promise<void> {
    const record = await this.ctx.storage.get<SessionRecord>("session");
    if (record && Date.now() - Date.parse(record.lastSeenAt) < SESSION_IDLE_MS) {
      await this.ctx.storage.setAlarm(Date.parse(record.lastSeenAt) + SESSION_IDLE_MS);
      return;
    }
    await this.ctx.storage.deleteAll();
  }
}
