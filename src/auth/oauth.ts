/**
 * OAuth 2.1 for hosted MCP clients (docs/protocol.md: Connecting hosted clients), on
 * @cloudflare/workers-oauth-provider: the provider owns discovery, registration, the token and
 * revocation endpoints and token validation; this module supplies its policy — the resource, the
 * scopes, the redirect-URI rule, API keys as a second credential, and the D1 grant mirror.
 */
import { getOAuthApi, OAuthError, type OAuthHelpers, type OAuthProviderOptions } from "@cloudflare/workers-oauth-provider";
import { dbOf } from "../db/client";
import type { Env } from "../env";
import { accessOf, apiKeyProps, type CallerProps, SCOPES } from "./caller";
import { clientMetadataProblem } from "./client-metadata";
import { identityForApiKey } from "./identity";
import { endGrant, grantStanding, markProviderEnded, recordGrant } from "./oauth-grants";

export const MCP_PATH = "/mcp";
/** Agent hook endpoints (src/http/hooks.ts): below /mcp, so the provider checks their credential as it checks /mcp's. */
export const HOOKS_PATH = `${MCP_PATH}/hooks`;
export const AUTHORIZE_PATH = "/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";

/** Access tokens live an hour; OAUTH_ACCESS_TOKEN_TTL (seconds, at least 60, KV's floor) overrides it. */
export const DEFAULT_ACCESS_TOKEN_TTL = 3600;
/** A grant (its refresh token) lives 30 days from sign-in, however often it is refreshed. */
export const REFRESH_TOKEN_TTL = 30 * 24 * 3600;

// String tests rather than a regular expression: the host is the caller's, and every call to /mcp
// asks. (The profile put 0.25 ms a call on the regex and 0.1–0.2 ms on this; little of either is
// the test itself.)
export const isLoopbackHost = (host: string) => host === "localhost" || host === "[::1]" || isLoopbackV4(host);

function isLoopbackV4(host: string): boolean {
  const parts = host.split(".");
  return parts.length === 4 && parts[0] === "127" && parts.every((p) => p.length >= 1 && p.length <= 3 && [...p].every((ch) => ch >= "0" && ch <= "9"));
}

/**
 * The origin tokens are issued for. Workers are served over https; plain http is kept only for
 * loopback (`wrangler dev`, `npm start`). A request that reached the Worker over plain http on
 * another host is treated as its https twin, so an API key keeps working there as it always has.
 */
export function canonicalOrigin(url: URL): string {
  return url.protocol === "http:" && !isLoopbackHost(url.hostname) ? `https://${url.host}` : url.origin;
}

/**
 * Why a redirect URI may not be registered, or null when it may: MCP's authorization spec allows
 * only https and loopback http. The provider stores other schemes beside a compliant one (and
 * refuses them when used); this server refuses the whole registration instead.
 */
export function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== "string") return "a redirect URI must be a string";
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `'${uri.slice(0, 200)}' is not an absolute URL`;
  }
  if (url.username || url.password || uri.includes("#")) return `'${uri.slice(0, 200)}' must not carry userinfo or a fragment`;
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) return null;
  return `'${uri.slice(0, 200)}' must use https, or http on a loopback host (127.0.0.1, [::1], localhost)`;
}

/** The first problem among a client's redirect URIs, or null. */
export function redirectUrisProblem(uris: unknown): string | null {
  if (!Array.isArray(uris) || uris.length === 0) return "redirect_uris must list at least one URI";
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) return problem;
  }
  return null;
}

export const isCimdClientId = (clientId: string) => {
  try {
    const url = new URL(clientId);
    return url.protocol === "https:" && url.pathname.length > 1;
  } catch {
    return false;
  }
};

/** What /authorize stores in a grant's props before its code is exchanged; `pending` goes to the D1 mirror, not to /mcp. */
export interface PendingGrantProps extends CallerProps {
  pending: { clientName: string; redirectUri: string; signedInWith: "api_key" | "github"; githubLogin?: string; keyId?: string };
}

function accessTokenTtl(env: Env): number {
  const n = Number(env.OAUTH_ACCESS_TOKEN_TTL);
  return Number.isSafeInteger(n) && n >= 60 ? n : DEFAULT_ACCESS_TOKEN_TTL;
}

const jsonRpcUnauthorized = (status: number, headers: Record<string, string>, description: string) =>
  new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: `Unauthorized: ${description}` }, id: null }), {
    status,
    headers: { ...headers, "Content-Type": "application/json" },
  });

/**
 * What an API key on /mcp stands for: API keys keep working there beside OAuth, the key's identity
 * becoming the caller, bound by policy to `origin`'s resource. Null for an unknown or revoked key.
 * The provider asks this of every key it sees; the edge asks it first for an agent's plain call.
 */
export async function apiKeyGrant(env: Env, token: string, origin: string): Promise<{ props: CallerProps; audience: string } | null> {
  const identity = await identityForApiKey(dbOf({ d1: env.DB }), token);
  return identity ? { props: apiKeyProps(identity), audience: `${origin}${MCP_PATH}` } : null;
}

/** The provider's options for one canonical origin; `handler` serves /mcp (with props) and every other route. */
export function providerOptions(origin: string, handler: ExportedHandler<Env>, env: Env): OAuthProviderOptions<Env> {
  const resource = `${origin}${MCP_PATH}`;
  return {
    apiRoute: MCP_PATH,
    apiHandler: handler as OAuthProviderOptions<Env>["apiHandler"],
    defaultHandler: handler,
    authorizeEndpoint: AUTHORIZE_PATH,
    tokenEndpoint: TOKEN_PATH,
    clientRegistrationEndpoint: REGISTER_PATH,
    clientIdMetadataDocumentEnabled: true,
    accessTokenTTL: accessTokenTtl(env),
    refreshTokenTTL: REFRESH_TOKEN_TTL,
    scopesSupported: [...SCOPES],
    // Asking for both by default: a connector that can only read is the exception, and the consent page lets the user narrow it.
    requiredScopes: [...SCOPES],
    resourceMetadata: {
      resource,
      authorization_servers: [origin],
      bearer_methods_supported: ["header"],
      resource_name: "agent-ledger",
    },
    clientRegistrationCallback: ({ clientMetadata }) => {
      const oversized = clientMetadataProblem(clientMetadata);
      if (oversized) return oversized;
      const problem = redirectUrisProblem(clientMetadata.redirect_uris);
      return problem ? { code: "invalid_redirect_uri", description: `Refused: ${problem}.` } : undefined;
    },
    resolveExternalToken: ({ token, env: e }) => apiKeyGrant(e, token, origin),
    tokenExchangeCallback: async (o) => {
      if (o.grantType === "authorization_code") {
        const { pending, ...props } = o.props as PendingGrantProps;
        const granted: CallerProps = { ...props, grantId: o.grantId, scope: accessOf(o.scope), ...(pending.keyId ? { signingKeyId: pending.keyId } : {}) };
        const now = new Date();
        await recordGrant(
          o.env.DB,
          {
            grantId: o.grantId,
            tenantId: props.tenantId,
            actorId: props.actorId,
            userId: o.userId,
            clientId: o.clientId,
            clientName: pending.clientName,
            redirectUri: pending.redirectUri,
            scope: o.scope,
            signedInWith: pending.signedInWith,
            githubLogin: pending.githubLogin,
            keyId: pending.keyId,
            createdAt: now,
            expiresAt: new Date(now.getTime() + REFRESH_TOKEN_TTL * 1000),
          },
          isCimdClientId(o.clientId),
        );
        return { newProps: granted, accessTokenProps: granted };
      }
      if (o.grantType === "refresh_token") {
        const props = o.props as CallerProps;
        // invalid_grant makes the provider delete the grant and its tokens from KV too.
        if (!props.grantId || !(await grantStanding(o.env.DB, props.grantId, props.tenantId))) {
          throw new OAuthError("invalid_grant", { description: "This grant was revoked, or the key or GitHub login it was signed in with was; sign in again." });
        }
      }
      return undefined;
    },
    // /mcp's refusals stay JSON-RPC errors, with the provider's challenge (naming the resource metadata) kept.
    onError: ({ status, headers, description, internal }) => (internal.category === "protected-resource" && status === 401 ? jsonRpcUnauthorized(status, headers, description) : undefined),
  };
}

// The provider's helpers outside a request need an origin to be built, but what they are used for
// here (revoking a grant, purging expired data) touches only OAUTH_KV, which no origin changes.
const KV_ONLY_ORIGIN = "https://agent-ledger.invalid";

/** The provider's helpers for work outside a request: the maintenance job, ending a grant from the token endpoint. */
export function oauthHelpers(env: Env): OAuthHelpers {
  const notServed: ExportedHandler<Env> = { fetch: () => new Response(null, { status: 404 }) };
  return getOAuthApi(providerOptions(KV_ONLY_ORIGIN, notServed, env), env);
}

/**
 * Ends a grant in the mirror (the first reason recorded stays) and at the provider, whose refresh
 * token and every access token it issued stop at once.
 */
export async function endGrantEverywhere(env: Env, grantId: string, userId: string, reason: string, now = new Date()): Promise<void> {
  await endGrant(env.DB, grantId, reason, now);
  await oauthHelpers(env).revokeGrant(grantId, userId);
  await markProviderEnded(env.DB, grantId, now);
}

/** The Bearer challenge /mcp answers a refused credential with (the provider's own, for a caller refused after it). */
export function bearerChallenge(requestUrl: string, description: string, error: "invalid_token" | "insufficient_scope" = "invalid_token"): string {
  const origin = canonicalOrigin(new URL(requestUrl));
  return (
    `Bearer realm="OAuth", resource_metadata="${origin}/.well-known/oauth-protected-resource${MCP_PATH}", error="${error}", ` +
    `scope="${SCOPES.join(" ")}", error_description="${description.replace(/["\\]/g, "")}"`
  );
}
