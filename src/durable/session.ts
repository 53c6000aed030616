import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

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
