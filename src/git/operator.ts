/**
 * SQL for the `github` operator command (scripts/github.ts): connecting a tenant with a token or
 * a GitHub App installation, disconnecting it, and storing presets. Plain SQL because `wrangler
 * d1 execute` takes no bound parameters; every value is validated, generated or escaped here. The
 * tenant id must already be known (the token is encrypted bound to it).
 */
import { sqlLiteral as quote } from "../db/sql-literal";
import { encryptToken } from "./credentials";
import { presetEntrySchema, type PresetEntry } from "./presets";

const upsert = (tenantId: string, kind: "token" | "app", secret: string, installationId: string, at: string) =>
  `INSERT INTO github_credentials (tenant_id, kind, secret, installation_id, created_at, updated_at) VALUES (${quote(tenantId)}, '${kind}', ${quote(secret)}, ${quote(installationId)}, '${at}', '${at}')
   ON CONFLICT (tenant_id) DO UPDATE SET kind = excluded.kind, secret = excluded.secret, installation_id = excluded.installation_id, updated_at = excluded.updated_at`;

export async function setTokenSql(tenantId: string, token: string, credentialsKey: string, now = new Date()): Promise<string> {
  const t = token.trim();
  if (!/^[\x21-\x7e]{20,400}$/.test(t)) throw new Error("the token must be 20–400 printable characters without spaces (a GitHub token such as github_pat_… or ghp_…)");
  return upsert(tenantId, "token", await encryptToken(t, tenantId, credentialsKey), "", now.toISOString());
}

export function setInstallationSql(tenantId: string, installationId: string, now = new Date()): string {
  if (!/^\d{1,20}$/.test(installationId)) throw new Error("--installation-id must be the numeric id of the App installation");
  return upsert(tenantId, "app", "", installationId, now.toISOString());
}

export const clearSql = (tenantId: string) => `DELETE FROM github_credentials WHERE tenant_id = ${quote(tenantId)}`;

const PRESET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** A preset from JSON text ({nestedRoots?, parityPairs?, workspaceRootHint?}), validated as the tools read it. */
export function setPresetSql(tenantId: string, name: string, json: string, now = new Date()): string {
  if (!PRESET_NAME.test(name)) throw new Error("--name must be letters, digits, . _ - (max 100)");
  const entry: PresetEntry = presetEntrySchema.strict().parse(JSON.parse(json));
  return `INSERT INTO git_presets (tenant_id, name, nested_roots, parity_pairs, workspace_root_hint, updated_at) VALUES (${quote(tenantId)}, ${quote(name)}, ${quote(JSON.stringify(entry.nestedRoots ?? []))}, ${quote(JSON.stringify(entry.parityPairs ?? []))}, ${quote(entry.workspaceRootHint ?? "")}, '${now.toISOString()}')
   ON CONFLICT (tenant_id, name) DO UPDATE SET nested_roots = excluded.nested_roots, parity_pairs = excluded.parity_pairs, workspace_root_hint = excluded.workspace_root_hint, updated_at = excluded.updated_at`;
}

export function deletePresetSql(tenantId: string, name: string): string {
  if (!PRESET_NAME.test(name)) throw new Error("--name must be letters, digits, . _ - (max 100)");
  return `DELETE FROM git_presets WHERE tenant_id = ${quote(tenantId)} AND name = ${quote(name)}`;
}

/** A tenant's own webhook secret (the one typed into the repository's webhook settings), encrypted like a token. */
export async function setWebhookSecretSql(tenantId: string, secret: string, credentialsKey: string, now = new Date()): Promise<string> {
  const s = secret.trim();
  if (!/^[\x21-\x7e]{16,256}$/.test(s)) throw new Error("the webhook secret must be 16–256 printable characters without spaces (e.g. openssl rand -hex 32)");
  const at = now.toISOString();
  return `INSERT INTO github_webhook_secrets (tenant_id, secret, created_at, updated_at) VALUES (${quote(tenantId)}, ${quote(await encryptToken(s, tenantId, credentialsKey))}, '${at}', '${at}')
   ON CONFLICT (tenant_id) DO UPDATE SET secret = excluded.secret, updated_at = excluded.updated_at`;
}

const DELIVERY_ID = /^[A-Za-z0-9-]{1,100}$/;

/**
 * Queues a stored delivery for the next webhook_retry run with a fresh attempt count. Processing
 * needs the Worker's code, so the command only marks it; the payload must have been kept.
 */
export function replaySql(deliveryId: string, tenantId?: string): string {
  if (!DELIVERY_ID.test(deliveryId)) throw new Error("--delivery must be the X-GitHub-Delivery id");
  return `UPDATE webhook_deliveries SET status = 'failed', attempts = 0, error = 'replay requested', attempted_at = NULL
   WHERE delivery_id = ${quote(deliveryId)} AND tenant_id <> '' AND payload <> ''${tenantId ? ` AND tenant_id = ${quote(tenantId)}` : ""} RETURNING tenant_id, event`;
}
