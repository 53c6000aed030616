/**
 * The dashboard's sessions: a person signs in at /app with an API key, which is exchanged for a
 * random token in an `HttpOnly` cookie. Only the token's SHA-256 is stored. A session stands only
 * while the key it came from is live and the session has not expired: revoking the key signs the
 * dashboard out at the next page, as it does for the key's OAuth grants.
 */
import { and, eq, gt, isNull } from "drizzle-orm";
import type { Db } from "../db/client";
import { actors, apiKeys, appSessions } from "../db/schema";
import { randomToken, s256 } from "./github-signin";
import type { Access } from "./caller";
import type { Identity } from "./identity";

/** A working day and a bit: long enough not to nag, short enough that a lost cookie ends soon. */
export const APP_SESSION_HOURS = 12;
export const APP_SESSION_COOKIE = "__Host-ledger-app";

export interface AppSession {
  tenantId: string;
  actorId: string;
  actorName: string;
  operator: boolean;
  keyId: string;
  access: Access;
}

/** Starts a session for a signed-in key; returns the token for the cookie. */
export async function startAppSession(db: Db, identity: Identity, access: Access, now: Date): Promise<string> {
  const token = randomToken();
  await db.insert(appSessions).values({
    tokenHash: await s256(token),
    tenantId: identity.tenantId,
    actorId: identity.actorId,
    keyId: identity.keyId,
    access,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + APP_SESSION_HOURS * 3600_000).toISOString(),
  });
  return token;
}

/** The session a cookie names, or null: unknown, expired, or its key revoked. */
export async function appSessionOf(db: Db, token: string | undefined, now: Date): Promise<AppSession | null> {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const row = await db
    .select({ tenantId: appSessions.tenantId, actorId: appSessions.actorId, keyId: appSessions.keyId, access: appSessions.access, actorName: actors.name, role: apiKeys.role })
    .from(appSessions)
    .innerJoin(apiKeys, and(eq(apiKeys.id, appSessions.keyId), eq(apiKeys.tenantId, appSessions.tenantId), isNull(apiKeys.revokedAt)))
    .innerJoin(actors, and(eq(actors.id, appSessions.actorId), eq(actors.tenantId, appSessions.tenantId)))
    .where(and(eq(appSessions.tokenHash, await s256(token)), gt(appSessions.expiresAt, now.toISOString())))
    .get();
  if (!row) return null;
  return { tenantId: row.tenantId, actorId: row.actorId, actorName: row.actorName, operator: row.role === "operator", keyId: row.keyId, access: row.access };
}

export async function endAppSession(db: Db, token: string | undefined): Promise<void> {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return;
  await db.delete(appSessions).where(eq(appSessions.tokenHash, await s256(token)));
}
