/**
 * The Worker's front door: one OAuthProvider per canonical origin in front of the Hono app. The
 * provider answers discovery, registration, token and revocation itself, checks the credential of
 * every /mcp request (OAuth token or API key), and hands everything else to the app unchanged.
 */
import { OAuthProvider } from "@cloudflare/workers-oauth-provider";
import { type Context, Hono } from "hono";
import { app } from "./app";
import { KEY_PREFIX } from "./auth/provision";
import { apiKeyGrant, canonicalOrigin, MCP_PATH, providerOptions, REGISTER_PATH, TOKEN_PATH } from "./auth/oauth";
import type { Env } from "./env";
import { cimdTokenGuard, registrationGuard } from "./http/oauth-guards";
import { originGuard } from "./http/origin";
import { tokenEndpoint } from "./http/token-endpoint";
import { AI_CATALOG_PATH, aiCatalogRoute, SERVER_CARD_PATH, serverCardRoute } from "./http/server-card";

// The resource and issuer are fixed per provider, so each origin the Worker is reached on (a
// custom domain, workers.dev, a loopback port) gets its own; a handful at most in practice.
const MAX_PROVIDERS = 8;
const providers = new Map<string, { ttlKey: string; provider: OAuthProvider<Env> }>();

function providerFor(origin: string, env: Env): OAuthProvider<Env> {
  const ttlKey = env.OAUTH_ACCESS_TOKEN_TTL ?? "";
  const hit = providers.get(origin);
  if (hit && hit.ttlKey === ttlKey) return hit.provider;
  if (providers.size >= MAX_PROVIDERS) providers.delete(providers.keys().next().value!);
  const provider = new OAuthProvider<Env>(providerOptions(origin, { fetch: app.fetch }, env));
  providers.set(origin, { ttlKey, provider });
  return provider;
}

export const edge = new Hono<{ Bindings: Env }>();

// Discovery before connecting: public documents that hold nothing of a tenant, so they come before
// the DNS-rebinding guard and the credential check, and any page may read them.
edge.get(SERVER_CARD_PATH, serverCardRoute);
edge.get(AI_CATALOG_PATH, aiCatalogRoute);

// DNS-rebinding protection comes before the credential check, as it did before OAuth.
edge.use(MCP_PATH, originGuard());
edge.use(`${MCP_PATH}/*`, originGuard());

// The provider's unauthenticated endpoints: registration bounded and rate limited, client URLs checked before it fetches them.
edge.use(REGISTER_PATH, registrationGuard);
edge.use(TOKEN_PATH, cimdTokenGuard);

/** The API key a request to /mcp or below it bears in the form the provider accepts, or null. */
function apiKeyBearer(request: Request, url: URL): string | null {
  if (url.pathname !== MCP_PATH && !url.pathname.startsWith(`${MCP_PATH}/`)) return null;
  const header = request.headers.get("Authorization");
  const scheme = "Bearer ";
  if (!header?.startsWith(scheme + KEY_PREFIX)) return null;
  const token = header.slice(scheme.length);
  return /[\s,]/.test(token) ? null : token;
}

/**
 * An agent's call with a known API key, answered as the provider would answer it (the same props
 * and auth on the context, the same handler) without its per-request routing, which costs more CPU
 * than the rest of the edge. Anything else (a browser's request, which gets CORS headers; a token;
 * an unknown key, whose refusal the provider words; another origin) goes through the provider.
 */
async function apiKeyCall(c: Context<{ Bindings: Env }>, url: URL, origin: string): Promise<Response | null> {
  if (origin !== url.origin || c.req.method === "OPTIONS" || c.req.raw.headers.has("Origin")) return null;
  const token = apiKeyBearer(c.req.raw, url);
  const grant = token ? await apiKeyGrant(c.env, token, origin) : null;
  if (!token || !grant) return null;
  // What the provider sets for an external token: its props, and auth with no scope of its own.
  const ctx = c.executionCtx as ExecutionContext & { props?: unknown; auth?: unknown };
  ctx.props = grant.props;
  ctx.auth = { token, audience: grant.audience, scope: [] };
  return app.fetch(c.req.raw, { ...c.env }, ctx);
}

edge.all("*", async (c) => {
  const url = new URL(c.req.url);
  const origin = canonicalOrigin(url);
  const fast = await apiKeyCall(c, url, origin);
  if (fast) return fast;
  const request = origin === url.origin ? c.req.raw : new Request(`${origin}${url.pathname}${url.search}`, c.req.raw);
  // A copy: the provider caches its helpers on env as OAUTH_PROVIDER, and they belong to one origin.
  const env = { ...c.env };
  const forward = (r: Request) => providerFor(origin, c.env).fetch(r, env, c.executionCtx as ExecutionContext<unknown>);
  return url.pathname === TOKEN_PATH ? tokenEndpoint(request, env, forward) : forward(request);
});
