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
    d1.prepare(
      `UPDATE oauth_grants SET revoked_at = ?, revoked_reason = 'replaced'
       WHERE user_id = ? AND client_id = ? AND revoked_at IS NULL AND grant_id <> ? AND (? = 0 OR redirect_uri = ?)`,
    ).bind(at, g.userId, g.clientId, g.grantId, cimd ? 1 : 0, g.redirectUri),
    d1.prepare(
      `INSERT OR IGNORE INTO oauth_grants (grant_id, tenant_id, actor_id, user_id, client_id, client_name, redirect_uri, scope,
         signed_in_with, github_login, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).bind(g.grantId, g.tenantId, g.actorId, g.userId, g.clientId, g.clientName, g.redirectUri, g.scope.join(" "),
      g.signedInWith, g.githubLogin ?? null, at, g.expiresAt.toISOString()),
  ]);
}

/**
 * A live grant's tenant rate-limit overrides (null when the tenant has none), or undefined when the
 * grant is revoked or unknown. One query serves both the revocation check and the limits.
 */
export async function grantLimits(d1: D1Database, grantId: string, tenantId: string): Promise<LimitOverrides | null | undefined> {
  const row = await d1.prepare(
    `SELECT g.revoked_at AS revokedAt, r.tenant_id AS overridden, r.key_per_min AS keyPerMin, r.tenant_per_min AS tenantPerMin
     FROM oauth_grants g LEFT JOIN tenant_rate_limits r ON r.tenant_id = g.tenant_id
     WHERE g.grant_id = ? AND g.tenant_id = ?`,
  ).bind(grantId, tenantId).first<{ revokedAt: string | null; overridden: string | null; keyPerMin: number | null; tenantPerMin: number | null }>();
  if (!row || row.revokedAt) return undefined;
  return row.overridden ? { keyPerMin: row.keyPerMin, tenantPerMin: row.tenantPerMin } : null;
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
  const row = await d1.prepare(
    `SELECT m.tenant_id AS tenantId, m.actor_id AS actorId, a.name AS actorName, m.role, m.github_user_id AS githubUserId
     FROM oauth_github_users m JOIN actors a ON a.id = m.actor_id AND a.tenant_id = m.tenant_id WHERE m.login = ?`,
  ).bind(login.toLowerCase()).first<{ tenantId: string; actorId: string; actorName: string; role: string; githubUserId: number | null }>();
  if (!row) return null;
  if (row.githubUserId === null) {
    await d1.prepare("UPDATE oauth_github_users SET github_user_id = ? WHERE login = ? AND github_user_id IS NULL").bind(githubUserId, login.toLowerCase()).run();
  } else if (row.githubUserId !== githubUserId) {
    return null;
  }
  return { tenantId: row.tenantId, actorId: row.actorId, actorName: row.actorName, operator: row.role === "operator" };
}
