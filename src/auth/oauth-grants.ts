/**
 * The D1 side of OAuth: the mirror of every grant (so an operator can list a tenant's grants and
 * revoke one with a plain UPDATE, and /mcp and the token endpoint refuse it at once) and the GitHub
 * logins mapped to actors. The grants themselves, their tokens and the clients live in OAUTH_KV.
 */
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
  await d1.batch([
    d1
      .prepare(
        `UPDATE oauth_grants SET revoked_at = ?, revoked_reason = 'replaced'
       WHERE user_id = ? AND client_id = ? AND revoked_at IS NULL AND grant_id <> ? AND (? = 0 OR redirect_uri = ?)`,
      )
      .bind(at, g.userId, g.clientId, g.grantId, cimd ? 1 : 0, g.redirectUri),
    d1
      .prepare(
        `INSERT OR IGNORE INTO oauth_grants (grant_id, tenant_id, actor_id, user_id, client_id, client_name, redirect_uri, scope,
         signed_in_with, github_login, key_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        g.grantId,
        g.tenantId,
        g.actorId,
        g.userId,
        g.clientId,
        g.clientName,
        g.redirectUri,
        g.scope.join(" "),
        g.signedInWith,
        g.githubLogin ?? null,
        g.keyId ?? null,
        at,
        g.expiresAt.toISOString(),
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
  const res = await d1.prepare("UPDATE oauth_grants SET revoked_at = ?, revoked_reason = ? WHERE grant_id = ? AND revoked_at IS NULL").bind(now.toISOString(), reason, grantId).run();
  return (res.meta.changes ?? 0) > 0;
}

/** Notes that the provider no longer holds the grant (its KV record and tokens are deleted). */
export async function markProviderEnded(d1: D1Database, grantId: string, now = new Date()): Promise<void> {
  await d1.prepare("UPDATE oauth_grants SET provider_ended_at = ? WHERE grant_id = ? AND provider_ended_at IS NULL").bind(now.toISOString(), grantId).run();
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
  const row = await d1
    .prepare(
      `SELECT m.tenant_id AS tenantId, m.actor_id AS actorId, a.name AS actorName, m.role, m.github_user_id AS githubUserId
     FROM oauth_github_users m JOIN actors a ON a.id = m.actor_id AND a.tenant_id = m.tenant_id WHERE m.login = ?`,
    )
    .bind(login.toLowerCase())
    .first<{ tenantId: string; actorId: string; actorName: string; role: string; githubUserId: number | null }>();
  if (!row) return null;
  if (row.githubUserId === null) {
    await d1.prepare("UPDATE oauth_github_users SET github_user_id = ? WHERE login = ? AND github_user_id IS NULL").bind(githubUserId, login.toLowerCase()).run();
  } else if (row.githubUserId !== githubUserId) {
    return null;
  }
  return { tenantId: row.tenantId, actorId: row.actorId, actorName: row.actorName, operator: row.role === "operator" };
}
