/**
 * OAuth housekeeping on the frequent cron, every step bounded so a run fits a Worker's subrequest
 * limit whatever the number of grants:
 * 1. the provider's own purge of expired grants (authorization codes are grants not yet
 *    exchanged) and of orphaned grants and tokens, resumed where the last run stopped;
 * 2. grants the mirror now judges ended (their key revoked, their GitHub mapping changed) are
 *    marked so, and every grant the mirror has ended is deleted from the provider's KV too;
 * 3. grants the mirror still calls live but the provider no longer holds (the client revoked its
 *    refresh token, RFC 7009; the provider purged it) are marked ended, so the listing tells the truth;
 * 4. refresh-rotation records of ended grants are dropped.
 */
import { and, eq, gt, isNotNull, isNull, lte } from "drizzle-orm";
import { oauthHelpers } from "../auth/oauth";
import { endGrant, GRANT_BASIS_JOINS, GRANT_ENDED, grantEndedSql, markProviderEnded } from "../auth/oauth-grants";
import { dropEndedRotations } from "../auth/refresh-rotation";
import { dbOf } from "../db/client";
import { oauthGrants } from "../db/schema";
import { iso } from "../core/time";
import type { Env } from "../env";
import { readCursor, saveCursor } from "./cursor";

export const OAUTH_PURGE_JOB = "oauth_purge";

export interface OAuthPurgeLimits {
  /** KV records the provider's purge examines per run (each a read, some a delete). */
  providerBatch: number;
  /** Mirror rows marked ended per run. */
  ended: number;
  /** Grants deleted from the provider's KV per run (each a list and some deletes). */
  providerRevokes: number;
  /** Live grants checked against the provider's KV per run (one read each). */
  checks: number;
  /** Rotation records dropped per run. */
  rotations: number;
}

export const OAUTH_PURGE_LIMITS: OAuthPurgeLimits = { providerBatch: 50, ended: 100, providerRevokes: 20, checks: 20, rotations: 5000 };

/**
 * A grant this young may not be visible in every KV location yet (KV is eventually consistent,
 * about a minute), so its absence proves nothing.
 */
const KV_SETTLE_MS = 5 * 60_000;

async function providerPurge(env: Env, now: Date, batchSize: number) {
  const saved = await readCursor(env.DB, OAUTH_PURGE_JOB);
  const helpers = oauthHelpers(env);
  let result;
  try {
    result = await helpers.purgeExpiredData({ batchSize, cursor: saved || undefined });
  } catch (err) {
    // A cursor KV no longer honours (it expires) starts the sweep over rather than stopping it for good.
    if (!saved) throw err;
    result = await helpers.purgeExpiredData({ batchSize });
  }
  await saveCursor(env.DB, OAUTH_PURGE_JOB, result.done ? "" : (result.cursor ?? ""), iso(now));
  return result;
}

async function endJudgedGrants(d1: D1Database, now: Date, limit: number): Promise<number> {
  // Hand SQL: the ending is grantEndedSql, SQL text shared with /mcp, the token endpoint and the operator's listing.
  const { results } = await d1
    .prepare(
      `SELECT grant_id AS grantId, ended FROM (SELECT g.grant_id, ${grantEndedSql("?")} AS ended FROM oauth_grants g ${GRANT_BASIS_JOINS} WHERE g.revoked_at IS NULL)
     WHERE ended IS NOT NULL AND ended <> ? LIMIT ?`,
    )
    .bind(iso(now), GRANT_ENDED.expired, limit)
    .all<{ grantId: string; ended: string }>();
  for (const r of results) await endGrant(d1, r.grantId, r.ended, now);
  return results.length;
}

async function endAtProvider(env: Env, now: Date, limit: number): Promise<number> {
  const results = await dbOf({ d1: env.DB })
    .select({ grantId: oauthGrants.grantId, userId: oauthGrants.userId })
    .from(oauthGrants)
    .where(and(isNotNull(oauthGrants.revokedAt), isNull(oauthGrants.providerEndedAt)))
    .limit(limit)
    .all();
  const helpers = oauthHelpers(env);
  for (const r of results) {
    await helpers.revokeGrant(r.grantId, r.userId);
    await markProviderEnded(env.DB, r.grantId, now);
  }
  return results.length;
}

/** Live mirror rows the provider no longer holds, least recently checked first. */
async function endGoneGrants(env: Env, now: Date, limit: number): Promise<number> {
  const results = await dbOf({ d1: env.DB })
    .select({ grantId: oauthGrants.grantId, userId: oauthGrants.userId })
    .from(oauthGrants)
    .where(and(isNull(oauthGrants.revokedAt), gt(oauthGrants.expiresAt, iso(now)), lte(oauthGrants.createdAt, iso(new Date(now.getTime() - KV_SETTLE_MS)))))
    // Never-checked grants first, then the least recently checked.
    .orderBy(isNotNull(oauthGrants.checkedAt), oauthGrants.checkedAt)
    .limit(limit)
    .all();
  let gone = 0;
  for (const r of results) {
    // The provider (1.2.x) keeps a grant under this key until it is revoked, purged or expires.
    if ((await env.OAUTH_KV.get(`grant:${r.userId}:${r.grantId}`)) === null) {
      await endGrant(env.DB, r.grantId, GRANT_ENDED.byProvider, now);
      await markProviderEnded(env.DB, r.grantId, now);
      gone++;
    } else {
      await dbOf({ d1: env.DB })
        .update(oauthGrants)
        .set({ checkedAt: iso(now) })
        .where(eq(oauthGrants.grantId, r.grantId))
        .run();
    }
  }
  return gone;
}

export async function purgeOAuth(env: Env, now: Date, limits: OAuthPurgeLimits = OAUTH_PURGE_LIMITS): Promise<string> {
  const purged = await providerPurge(env, now, limits.providerBatch);
  const ended = await endJudgedGrants(env.DB, now, limits.ended);
  const revoked = await endAtProvider(env, now, limits.providerRevokes);
  const gone = await endGoneGrants(env, now, limits.checks);
  const dropped = await dropEndedRotations(env.DB, now, limits.rotations);
  return (
    `provider purge: ${purged.grantsPurged} grant(s) and ${purged.tokensPurged} token(s) removed (${purged.done ? "sweep complete" : "more next run"}); ` +
    `${ended} grant(s) found ended, ${revoked} deleted from the provider, ${gone} gone from the provider marked ended; ${dropped} rotation record(s) dropped`
  );
}
