/**
 * SQL for `npm run oauth` (scripts/oauth.ts): GitHub logins mapped to actors, and a tenant's OAuth
 * grants. Plain SQL because `wrangler d1 execute` takes no bound parameters; every value is
 * validated or escaped here.
 */
import { GRANT_BASIS_JOINS, GRANT_ENDED, grantEndedSql } from "./oauth-grants";
import { sqlLiteral as quote } from "../db/sql-literal";
import { assertSlug, KEY_ROLES, type KeyRole, tenantIdSql } from "./provision";

/** GitHub's rule for logins: letters, digits and single hyphens, at most 39 characters. */
export const GITHUB_LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
/** The provider's grant ids: 16 characters of its random alphabet. */
export const GRANT_ID = /^[A-Za-z0-9_-]{8,64}$/;

function checkLogin(login: string): string {
  if (!GITHUB_LOGIN.test(login)) throw new Error(`'${login}' is not a GitHub login (letters, digits and single hyphens, up to 39)`);
  return login.toLowerCase();
}

/** Maps a GitHub login to an existing actor of a tenant (replacing an earlier mapping of the login). */
export function mapGithubSql(login: string, tenant: string, actor: string, role: KeyRole, now = new Date()): string {
  const name = checkLogin(login);
  assertSlug("actor", actor);
  if (!KEY_ROLES.includes(role)) throw new Error(`role must be one of ${KEY_ROLES.join(", ")}`);
  return `INSERT INTO oauth_github_users (login, github_user_id, tenant_id, actor_id, role, created_at)
   SELECT ${quote(name)}, NULL, a.tenant_id, a.id, ${quote(role)}, '${now.toISOString()}'
   FROM actors a WHERE a.tenant_id = (${tenantIdSql(tenant)}) AND a.name = ${quote(actor)}
   ON CONFLICT (login) DO UPDATE SET github_user_id = NULL, tenant_id = excluded.tenant_id, actor_id = excluded.actor_id,
     role = excluded.role, created_at = excluded.created_at`;
}

/** Removes a login's mapping and revokes the grants it signed in (its clients must sign in again, and cannot). */
export function unmapGithubSql(login: string, now = new Date()): string[] {
  const name = checkLogin(login);
  return [
    `UPDATE oauth_grants SET revoked_at = '${now.toISOString()}', revoked_reason = 'github login unmapped'
     WHERE github_login = ${quote(name)} AND revoked_at IS NULL`,
    `DELETE FROM oauth_github_users WHERE login = ${quote(name)}`,
  ];
}

export function listGithubSql(tenant?: string): string {
  return `SELECT m.login, t.slug AS tenant, a.name AS actor, m.role, m.github_user_id, m.created_at
   FROM oauth_github_users m JOIN tenants t ON t.id = m.tenant_id JOIN actors a ON a.id = m.actor_id
   ${tenant ? `WHERE m.tenant_id = (${tenantIdSql(tenant)})` : ""} ORDER BY t.slug, m.login`;
}

/**
 * A tenant's grants, newest first. `status` is live, expired, or revoked (with the reason: an
 * operator's revoke, replaced by a newer sign-in, key_revoked, github_mapping_changed,
 * refresh_reuse, ended_by_provider), judged as /mcp judges it, not only from the mirror's column.
 */
export function listGrantsSql(tenant: string, now = new Date()): string {
  return `SELECT grant_id, actor, client_name, client_id, scope, signed_in_with, github_login, created_at,
     CASE WHEN ended IS NULL THEN 'live' WHEN ended = '${GRANT_ENDED.expired}' THEN 'expired' ELSE 'revoked (' || ended || ')' END AS status
   FROM (SELECT g.*, a.name AS actor, ${grantEndedSql(`'${now.toISOString()}'`)} AS ended
     FROM oauth_grants g JOIN actors a ON a.id = g.actor_id ${GRANT_BASIS_JOINS}
     WHERE g.tenant_id = (${tenantIdSql(tenant)}))
   ORDER BY created_at DESC`;
}

/** Revokes one of a tenant's grants: /mcp refuses its access tokens from the next request, the token endpoint its refresh token. */
export function revokeGrantSql(tenant: string, grantId: string, now = new Date()): string {
  if (!GRANT_ID.test(grantId)) throw new Error("--grant must be a grant id as `oauth -- grants` lists it");
  return `UPDATE oauth_grants SET revoked_at = '${now.toISOString()}', revoked_reason = 'operator'
   WHERE grant_id = ${quote(grantId)} AND tenant_id = (${tenantIdSql(tenant)}) AND revoked_at IS NULL RETURNING grant_id`;
}
