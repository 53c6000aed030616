/**
 * Refresh-token reuse detection (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2). The provider rotates a
 * grant's refresh token on every use but keeps accepting the token it replaced, with no limit, and
 * each use of that one rotates again, cutting off the token the client holds. So a thief holding an
 * old token could refresh forever while the rightful client is refused. Here every token a grant
 * rotated out is remembered (as its SHA-256, in oauth_refresh_tokens), and a presented token is
 * judged before the provider sees it: a first use, the one retry a client whose response was lost
 * may make within REFRESH_RETRY_GRACE_MS, or reuse, which ends the whole grant.
 */
import { and, eq, inArray, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import { dbOf } from "../db/client";
import { sha256Hex } from "../db/ids";
import { oauthGrants, oauthRefreshTokens as tokens } from "../db/schema";

/**
 * How long after a rotation the token it replaced may be presented once more: long enough for a
 * client to retry a refresh whose response never arrived, short enough to leave a thief little room.
 */
export const REFRESH_RETRY_GRACE_MS = 30_000;

export interface PresentedRefresh {
  /** SHA-256 of the token, as stored. */
  tokenId: string;
  grantId: string;
  userId: string;
}

export type RefreshVerdict =
  /** Never rotated out: the provider decides, and a success is recorded. */
  | { kind: "first" }
  /** The one tolerated retry; the token its first rotation issued never reached the client. */
  | { kind: "retry"; successorId: string | null }
  /** A rotated-out token presented again: the grant ends. */
  | { kind: "reuse" };

/** The provider's refresh tokens are `<user id>:<grant id>:<secret>`; anything else is left to it to refuse. */
export async function presentedRefresh(token: string): Promise<PresentedRefresh | null> {
  const parts = token.split(":");
  if (parts.length !== 3 || parts.some((p) => p.length === 0)) return null;
  return { tokenId: await sha256Hex(token), userId: parts[0]!, grantId: parts[1]! };
}

const withinGrace = (rotatedAt: string, now: Date) => now.getTime() - Date.parse(rotatedAt) <= REFRESH_RETRY_GRACE_MS;

/**
 * Judges a presented token. One statement counts the presentation and reads the token's record,
 * so two racing retries cannot both be the tolerated one.
 */
export async function judgeRefresh(d1: D1Database, t: PresentedRefresh, now: Date): Promise<RefreshVerdict> {
  const row = await dbOf({ d1 })
    .update(tokens)
    .set({ retries: sql`${tokens.retries} + 1` })
    .where(and(eq(tokens.tokenId, t.tokenId), eq(tokens.grantId, t.grantId)))
    .returning({ retries: tokens.retries, rotatedAt: tokens.rotatedAt, successorId: tokens.successorId })
    .get();
  if (!row) return { kind: "first" };
  return row.retries === 1 && withinGrace(row.rotatedAt, now) ? { kind: "retry", successorId: row.successorId } : { kind: "reuse" };
}

/**
 * Records that the provider rotated `t` out and issued `issuedId`. Finding it already recorded
 * means another request presented the same token at the same moment: that one counts as the
 * retry, and a third is reuse.
 */
export async function recordRotation(d1: D1Database, t: PresentedRefresh, issuedId: string, now: Date): Promise<"recorded" | "reuse"> {
  const row = await dbOf({ d1 })
    .insert(tokens)
    .values({ tokenId: t.tokenId, grantId: t.grantId, rotatedAt: now.toISOString(), successorId: issuedId, retries: 0 })
    .onConflictDoUpdate({ target: tokens.tokenId, set: { retries: sql`${tokens.retries} + 1` } })
    .returning({ retries: tokens.retries, rotatedAt: tokens.rotatedAt })
    .get();
  if (!row || row.retries === 0) return "recorded";
  return row.retries === 1 && withinGrace(row.rotatedAt, now) ? "recorded" : "reuse";
}

/**
 * After the tolerated retry the provider holds only the newest token; the one the first rotation
 * issued is spent, so whoever presents it later (a thief who won the race, or the client the thief
 * raced) ends the grant, and with it the other's tokens.
 */
export async function spendSuccessor(d1: D1Database, t: PresentedRefresh, successorId: string | null, issuedId: string, now: Date): Promise<void> {
  if (!successorId) return;
  await dbOf({ d1 })
    .insert(tokens)
    .values({ tokenId: successorId, grantId: t.grantId, rotatedAt: now.toISOString(), successorId: issuedId, retries: 1 })
    .onConflictDoUpdate({ target: tokens.tokenId, set: { retries: sql`MAX(${tokens.retries}, 1)` } })
    .run();
}

/** Rotation records of grants that have ended or expired (and of grants the mirror never knew), a bounded batch. */
export async function dropEndedRotations(d1: D1Database, now: Date, limit: number): Promise<number> {
  const db = dbOf({ d1 });
  // rowid bounds the delete: SQLite's DELETE takes no LIMIT.
  const ended = db
    .select({ rowid: sql`${tokens}.rowid` })
    .from(tokens)
    .leftJoin(oauthGrants, eq(oauthGrants.grantId, tokens.grantId))
    .where(or(isNull(oauthGrants.grantId), isNotNull(oauthGrants.revokedAt), lte(oauthGrants.expiresAt, now.toISOString())))
    .limit(limit);
  const res = await db
    .delete(tokens)
    .where(inArray(sql`rowid`, ended))
    .run();
  return res.meta.changes ?? 0;
}
