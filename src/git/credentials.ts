/**
 * Where a tenant's GitHub credentials come from. Each tenant has its own: a token (stored
 * encrypted with the Worker secret GITHUB_CREDENTIALS_KEY, bound to the tenant) or a GitHub App
 * installation (the app's id and private key are Worker secrets; installation tokens are minted
 * with a WebCrypto-signed JWT and cached until shortly before they expire). No tool ever returns
 * a credential; they are written by the `github` command (docs/git.md: Connecting a tenant).
 */
import { eq } from "drizzle-orm";
import { dbOf } from "../db/client";
import { githubCredentials } from "../db/schema";
import type { Env } from "../env";
import { ToolError } from "../core/errors";
import { GitHubClient, GitHubError, type TokenSource } from "./client";

export const DEFAULT_API_BASE = "https://api.github.com";

interface CredentialRow {
  kind: "token" | "app";
  secret: string;
  installation_id: string;
}

export const notConfigured = (detail: string) =>
  new ToolError("github_not_configured", `GitHub is not configured for your tenant: ${detail}`, {
    hint: "An operator connects the tenant with `npm run github -- set-token --tenant <slug>` (a fine-grained token) or `set-installation` (a GitHub App installation); see docs/git.md, Connecting a tenant.",
  });

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unb64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

async function secretKey(secret: string): Promise<CryptoKey> {
  if (secret.length < 32) throw new Error("GITHUB_CREDENTIALS_KEY must be at least 32 characters");
  const raw = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret));
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** AES-GCM with the tenant id as associated data: a ciphertext copied to another tenant does not decrypt. */
export async function encryptToken(token: string, tenantId: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: new TextEncoder().encode(tenantId) }, await secretKey(secret), new TextEncoder().encode(token));
  return `v1:${b64(iv)}:${b64(new Uint8Array(ct))}`;
}

export async function decryptToken(stored: string, tenantId: string, secret: string): Promise<string> {
  const [version, iv, ct] = stored.split(":");
  if (version !== "v1" || !iv || !ct) throw new Error("unrecognized credential format");
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: unb64(iv), additionalData: new TextEncoder().encode(tenantId) }, await secretKey(secret), unb64(ct));
  return new TextDecoder().decode(plain);
}

// ---------------------------------------------------------------------------------------------
// GitHub App: a JWT signed with the app's RSA key (RS256), exchanged for an installation token.

const der = {
  len(n: number): number[] {
    if (n < 0x80) return [n];
    const bytes: number[] = [];
    for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
    return [0x80 | bytes.length, ...bytes];
  },
  wrap(tag: number, body: number[]): number[] {
    return [tag, ...der.len(body.length), ...body];
  },
};

/** GitHub hands out PKCS#1 keys ("BEGIN RSA PRIVATE KEY"); WebCrypto imports PKCS#8, so wrap it. */
export function pemToPkcs8(pem: string): Uint8Array {
  const body = pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, "").replace(/\s+/g, "");
  const bytes = Array.from(unb64(body));
  if (!/BEGIN RSA PRIVATE KEY/.test(pem)) return Uint8Array.from(bytes);
  const rsaEncryption = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00];
  return Uint8Array.from(der.wrap(0x30, [0x02, 0x01, 0x00, ...der.wrap(0x30, rsaEncryption), ...der.wrap(0x04, bytes)]));
}

const b64url = (bytes: Uint8Array) => b64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

export async function appJwt(appId: string, privateKeyPem: string, now: Date): Promise<string> {
  const key = await crypto.subtle.importKey("pkcs8", pemToPkcs8(privateKeyPem), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
  const enc = (v: unknown) => b64url(new TextEncoder().encode(JSON.stringify(v)));
  const iat = Math.floor(now.getTime() / 1000) - 60; // GitHub allows for clock drift this way
  const unsigned = `${enc({ alg: "RS256", typ: "JWT" })}.${enc({ iat, exp: iat + 9 * 60, iss: appId })}`;
  const sig = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, new TextEncoder().encode(unsigned));
  return `${unsigned}.${b64url(new Uint8Array(sig))}`;
}

/** Installation tokens live an hour; reuse one until five minutes before it expires. */
const REFRESH_BEFORE_MS = 5 * 60_000;
const installationTokens = new Map<string, { token: string; expiresAt: number }>();

async function installationToken(env: Env, installationId: string, apiBase: string, fetchFn?: typeof fetch): Promise<string> {
  if (!env.GITHUB_APP_ID || !env.GITHUB_APP_PRIVATE_KEY) throw notConfigured("the tenant uses a GitHub App installation, but GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY are not set on the server");
  const cacheKey = `${apiBase} ${env.GITHUB_APP_ID} ${installationId}`;
  const hit = installationTokens.get(cacheKey);
  if (hit && hit.expiresAt - Date.now() > REFRESH_BEFORE_MS) return hit.token;
  const jwt = await appJwt(env.GITHUB_APP_ID, env.GITHUB_APP_PRIVATE_KEY, new Date());
  const client = new GitHubClient({ apiBase, token: async () => jwt, fetch: fetchFn });
  const res = await client.request<{ token: string; expires_at: string }>("POST /app/installations/{installation_id}/access_tokens", { installation_id: installationId }, {});
  installationTokens.set(cacheKey, { token: res.data.token, expiresAt: Date.parse(res.data.expires_at) });
  return res.data.token;
}

/** Forgets cached installation tokens (tests; a revoked installation). */
export const clearInstallationTokens = () => installationTokens.clear();

/** The token source for a tenant; the lookup happens on first use, so tools that fail validation never touch it. */
export function tenantTokenSource(env: Env, tenantId: string, fetchFn?: typeof fetch): TokenSource {
  let cached: Promise<string> | null = null;
  return () => {
    cached ??= (async () => {
      const row = (await dbOf({ d1: env.DB })
        .select({ kind: githubCredentials.kind, secret: githubCredentials.secret, installation_id: githubCredentials.installationId })
        .from(githubCredentials)
        .where(eq(githubCredentials.tenantId, tenantId))
        .get()) as CredentialRow | undefined;
      if (!row) throw notConfigured("no token or GitHub App installation is set for it");
      if (row.kind === "app") return installationToken(env, row.installation_id, apiBase(env), fetchFn);
      if (!env.GITHUB_CREDENTIALS_KEY) throw notConfigured("the server's GITHUB_CREDENTIALS_KEY secret is not set, so the stored token cannot be read");
      try {
        return await decryptToken(row.secret, tenantId, env.GITHUB_CREDENTIALS_KEY);
      } catch {
        throw notConfigured("the stored token cannot be decrypted with the server's GITHUB_CREDENTIALS_KEY (was the key rotated?)");
      }
    })();
    // A failed lookup is not remembered: the next call tries again.
    cached.catch(() => (cached = null));
    return cached;
  };
}

export const apiBase = (env: Env) => env.GITHUB_API_URL || DEFAULT_API_BASE;

/** The client for the calling tenant. */
export function githubFor(env: Env, tenantId: string, fetchFn?: typeof fetch): GitHubClient {
  return new GitHubClient({ apiBase: apiBase(env), token: tenantTokenSource(env, tenantId, fetchFn), fetch: fetchFn });
}

/**
 * GitHubError → the envelope's error. Tools map the codes that mean something in their own
 * terms (a 404 on a source branch is source_not_found) before falling back to this.
 */
export function githubToolError(err: unknown): unknown {
  if (!(err instanceof GitHubError)) return err;
  const hints: Record<string, string> = {
    github_not_found: "Check the repository (owner/name) and ref; the credentials must be able to see the repository.",
    github_conflict: "Re-read the branch and retry; nothing was forced.",
    github_unprocessable: "Check the arguments against what GitHub says was wrong.",
    github_auth_failed: "The tenant's GitHub credentials were refused; an operator should set a fresh token or installation.",
    github_forbidden: "The credentials lack a permission this needs (contents: write for commits and merges).",
    github_rate_limited: `Wait until ${err.resetAt ?? "the limit resets"} and retry.`,
    github_unavailable: "GitHub is unavailable; retry shortly.",
    github_error: "Retry; if it persists, report it with the time of the call.",
  };
  return new ToolError(err.code, err.message, { hint: hints[err.code] ?? hints.github_error!, retryable: err.retryable });
}
