/**
 * Creating tenants, actors and keys. Produces plain SQL so the same statements run from the
 * `keys` command (through `wrangler d1 execute`, which takes no bound parameters) and from
 * tests; every interpolated value is validated or generated here, never free text.
 */
import { sha256Hex, uuidv7 } from "../db/ids";
import { sqlLiteral } from "../db/sql-literal";

export const SLUG = /^[a-z0-9][a-z0-9._-]{0,62}$/;
export const SLUG_RULE = "1 to 63 characters of lowercase letters, digits, '.', '_' and '-', starting with a letter or digit";

/** The slug closest to `text` (lowercased, other characters as '-'), or "" when nothing of it is usable. */
export function suggestSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 63)
    .replace(/[._-]+$/, "");
}

/** Refuses a tenant or actor name that is not a slug, saying the rule and the nearest slug to use instead. */
export function assertSlug(what: "tenant" | "actor", text: string): void {
  if (SLUG.test(text)) return;
  const suggestion = suggestSlug(text);
  throw new Error(`${what} '${text}' is not a slug: a ${what} name is ${SLUG_RULE}.${suggestion ? ` Try --${what} ${suggestion}` : ""}`);
}
export const KEY_PREFIX = "alk_";

/** The operator commands' lookup of a tenant by its slug (validated, so nothing else reaches the SQL). */
export function tenantIdSql(slug: string): string {
  assertSlug("tenant", slug);
  return `SELECT id FROM tenants WHERE slug = ${sqlLiteral(slug)}`;
}

/** What a key may do: `agent` (the default), or `operator` (may override leases and act on others' runs). */
export const KEY_ROLES = ["agent", "operator"] as const;
export type KeyRole = (typeof KEY_ROLES)[number];

export function generateApiKey(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  const b64 = btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
  return `${KEY_PREFIX}${b64}`;
}

export const hashApiKey = (key: string): Promise<string> => sha256Hex(key);

export interface ProvisionedKey {
  key: string;
  statements: string[];
}

/**
 * SQL that creates the tenant and actor if they do not exist yet, and a new key for the actor.
 * The key is returned once; only its hash is in the SQL. The role belongs to the key, not the
 * actor, so one actor may hold an everyday agent key and a separate operator key.
 */
export async function provisionKey(tenant: string, actor: string, now: Date = new Date(), label = "", role: KeyRole = "agent"): Promise<ProvisionedKey> {
  assertSlug("tenant", tenant);
  if (!KEY_ROLES.includes(role)) throw new Error(`role must be one of ${KEY_ROLES.join(", ")}`);
  assertSlug("actor", actor);
  if (!/^[\w .:-]{0,100}$/.test(label)) throw new Error("label may hold letters, digits, spaces and . _ : - (max 100)");
  const key = generateApiKey();
  const at = now.toISOString();
  const hash = await hashApiKey(key);
  const tenantId = `(SELECT id FROM tenants WHERE slug = '${tenant}')`;
  const actorId = `(SELECT id FROM actors WHERE tenant_id = ${tenantId} AND name = '${actor}')`;
  return {
    key,
    statements: [
      `INSERT OR IGNORE INTO tenants (id, slug, name, created_at) VALUES ('${uuidv7()}', '${tenant}', '${tenant}', '${at}')`,
      `INSERT OR IGNORE INTO actors (id, tenant_id, name, kind, display_name, created_at) VALUES ('${uuidv7()}', ${tenantId}, '${actor}', 'agent', '${actor}', '${at}')`,
      `INSERT INTO api_keys (id, tenant_id, actor_id, key_hash, prefix, label, role, created_at) VALUES ('${uuidv7()}', ${tenantId}, ${actorId}, '${hash}', '${key.slice(0, 10)}', '${label}', '${role}', '${at}')`,
    ],
  };
}

/** SQL that revokes every live key whose text starts with `prefix` (as shown at creation). */
export function revokeKeySql(prefix: string, now: Date = new Date()): string {
  if (!/^alk_[A-Za-z0-9_-]{1,6}$/.test(prefix)) throw new Error("prefix must be the 10-character key prefix shown by `keys list`");
  return `UPDATE api_keys SET revoked_at = '${now.toISOString()}' WHERE prefix = '${prefix}' AND revoked_at IS NULL`;
}
