/**
 * The D1 side of OAuth: the mirror of every grant (so an operator can list a tenant's grants and
 * revoke one with a plain UPDATE, and /mcp and the token endpoint refuse it at once) and the GitHub
 * logins mapped to actors. The grants themselves, their tokens and the clients live in OAUTH_KV.
 */
import { and, eq, isNull, ne } from "drizzle-orm";
import { dbOf, statementOf } from "../db/client";
import { actors, oauthGithubUsers, oauthGrants } from "../db/schema";
import type { LimitOverrides } from "./identity";

export interface GrantRecord {
  grantId: string;
  tenantId: string;
  actorId: string;
  userId: string;
  clientId: string;
  clientName: string;
  redirectUri: string;
  scope: string[];
  signedInWith: "api_key" | "github";
  githubLogin?: string;
  /** The API key that signed in (absent for GitHub): revoking it ends the grant. */
  keyId?: string;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * Records a grant when its code is exchanged, and marks the grants it replaces: the provider revokes
 * a user's earlier grants for the same client (for a Client ID Metadata Document client, only those
 * from the same redirect URI, since its client id is shared by every installation).
 */
export async function recordGrant(d1: D1Database, g: GrantRecord, cimd: boolean): Promise<void> {
  const at = g.createdAt.toISOString();
  const db = dbOf({ d1 });
  await d1.batch([
    statementOf(
      d1,
      db
        .update(oauthGrants)
        .set({ revokedAt: at, revokedReason: "replaced" })
        .where(
          and(
            eq(oauthGrants.userId, g.userId),
            eq(oauthGrants.clientId, g.clientId),
            isNull(oauthGrants.revokedAt),
            ne(oauthGrants.grantId, g.grantId),
            cimd ? eq(oauthGrants.redirectUri, g.redirectUri) : undefined,
          ),
        ),
    ),
    statementOf(
      d1,
      db
        .insert(oauthGrants)
        .values({
          grantId: g.grantId,
          tenantId: g.tenantId,
          actorId: g.actorId,
          userId: g.userId,
          clientId: g.clientId,
          clientName: g.clientName,
          redirectUri: g.redirectUri,
          scope: g.scope.join(" "),
          signedInWith: g.signedInWith,
          githubLogin: g.githubLogin ?? null,
          keyId: g.keyId ?? null,
          createdAt: at,
          expiresAt: g.expiresAt.toISOString(),
        })
        .onConflictDoNothing(),
    ),
  ]);
}

/** The reasons a grant ends besides an operator's revoke ('operator') and a newer grant ('replaced'). */
export const GRANT_ENDED = {
  keyRevoked: "key_revoked",
  githubMapping: "github_mapping_changed",
  expired: "expired",
  refreshReuse: "refresh_reuse",
  /** The provider no longer holds it: the client revoked its refresh token (RFC 7009), or the provider purged it. */
  byProvider: "ended_by_provider",
} as const;

/**
 * Why a grant no longer stands, as an SQL expression over `g` (oauth_grants) and GRANT_BASIS_JOINS
 * (`k`, the key it was signed in with; `m`, its GitHub mapping), NULL while it stands: revoked in
 * the mirror, its key revoked (or deleted), its GitHub login unmapped or mapped to someone else,
 * or past its lifetime. `now` is SQL for the current instant. One definition serves /mcp, the
 * token endpoint, the operator's listing and the maintenance job.
 */
export const grantEndedSql = (now: string): string => `CASE
    WHEN g.revoked_at IS NOT NULL THEN COALESCE(g.revoked_reason, 'revoked')
    WHEN g.key_id IS NOT NULL AND (k.id IS NULL OR k.revoked_at IS NOT NULL) THEN '${GRANT_ENDED.keyRevoked}'
    WHEN g.signed_in_with = 'github' AND (m.login IS NULL OR m.tenant_id <> g.tenant_id OR m.actor_id <> g.actor_id) THEN '${GRANT_ENDED.githubMapping}'
    WHEN g.expires_at <= ${now} THEN '${GRANT_ENDED.expired}'
  END`;
export const GRANT_BASIS_JOINS = "LEFT JOIN api_keys k ON k.id = g.key_id LEFT JOIN oauth_github_users m ON m.login = g.github_login";

export interface GrantStanding {
  /** The tenant's rate-limit overrides, or null when it has none. */
  limits: LimitOverrides | null;
  /** The role of what it was signed in with, read now (null for grants older than key_id: their props decide). */
  operator: boolean | null;
}

/**
 * A standing grant's limits and current role, or null when it has ended or is unknown. Read on
 * every /mcp request and every refresh, never cached, so an ending takes effect at the next one.
 * An ending found here (a revoked key, a changed GitHub mapping) is written to the mirror.
 */
export async function grantStanding(d1: D1Database, grantId: string, tenantId: string, now = new Date()): Promise<GrantStanding | null> {
  // Hand SQL: the ending is grantEndedSql, SQL text shared with the operator's listing and the maintenance job.
  const row = await d1
    .prepare(
      `SELECT ${grantEndedSql("?")} AS ended, g.revoked_at AS revokedAt,
       CASE WHEN g.key_id IS NOT NULL THEN k.role WHEN g.signed_in_with = 'github' THEN m.role END AS role,
       r.tenant_id AS overridden, r.key_per_min AS keyPerMin, r.tenant_per_min AS tenantPerMin
     FROM oauth_grants g ${GRANT_BASIS_JOINS} LEFT JOIN tenant_rate_limits r ON r.tenant_id = g.tenant_id
     WHERE g.grant_id = ? AND g.tenant_id = ?`,
    )
    .bind(now.toISOString(), grantId, tenantId)
    .first<{
      ended: string | null;
      revokedAt: string | null;
      role: string | null;
      overridden: string | null;
      keyPerMin: number | null;
      tenantPerMin: number | null;
    }>();
  if (!row) return null;
  if (row.ended) {
    if (!row.revokedAt && row.ended !== GRANT_ENDED.expired) await endGrant(d1, grantId, row.ended, now);
    return null;
  }
  return {
    limits: row.overridden ? { keyPerMin: row.keyPerMin, tenantPerMin: row.tenantPerMin } : null,
    operator: row.role === null ? null : row.role === "operator",
  };
}

/** Marks a grant ended in the mirror (the first reason stays); true when this call ended it. */
export async function endGrant(d1: D1Database, grantId: string, reason: string, now = new Date()): Promise<boolean> {
  const res = await dbOf({ d1 })
    .update(oauthGrants)
    .set({ revokedAt: now.toISOString(), revokedReason: reason })
    .where(and(eq(oauthGrants.grantId, grantId), isNull(oauthGrants.revokedAt)))
    .run();
  return (res.meta.changes ?? 0) > 0;
}

/** Notes that the provider no longer holds the grant (its KV record and tokens are deleted). */
export async function markProviderEnded(d1: D1Database, grantId: string, now = new Date()): Promise<void> {
  await dbOf({ d1 })
    .update(oauthGrants)
    .set({ providerEndedAt: now.toISOString() })
    .where(and(eq(oauthGrants.grantId, grantId), isNull(oauthGrants.providerEndedAt)))
    .run();
}

export interface GithubSignIn {
  tenantId: string;
  actorId: string;
  actorName: string;
  operator: boolean;
}

/**
 * The actor a GitHub user signs in as, or null when the login is not mapped. The first sign-in
 * records the user's numeric id; after that a different account holding the login (GitHub lets a
 * renamed login be taken) is refused.
 */
export async function githubActor(d1: D1Database, login: string, githubUserId: number): Promise<GithubSignIn | null> {
  const db = dbOf({ d1 });
  const row = await db
    .select({
      tenantId: oauthGithubUsers.tenantId,
      actorId: oauthGithubUsers.actorId,
      actorName: actors.name,
      role: oauthGithubUsers.role,
      githubUserId: oauthGithubUsers.githubUserId,
    })
    .from(oauthGithubUsers)
    .innerJoin(actors, and(eq(actors.id, oauthGithubUsers.actorId), eq(actors.tenantId, oauthGithubUsers.tenantId)))
    .where(eq(oauthGithubUsers.login, login.toLowerCase()))
    .get();
  if (!row) return null;
  if (row.githubUserId === null) {
    await db
      .update(oauthGithubUsers)
      .set({ githubUserId })
      .where(and(eq(oauthGithubUsers.login, login.toLowerCase()), isNull(oauthGithubUsers.githubUserId)))
      .run();
  } else if (row.githubUserId !== githubUserId) {
    return null;
  }
  return { tenantId: row.tenantId, actorId: row.actorId, actorName: row.actorName, operator: row.role === "operator" };
}
