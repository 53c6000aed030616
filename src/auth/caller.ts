/**
 * Who is calling /mcp, whatever the credential. The OAuth provider validates the bearer token (an
 * OAuth access token, or an API key through resolveExternalToken) and hands the route `ctx.props`
 * and `ctx.auth`; this module turns them into one Caller.
 */
import type { Context } from "hono";
import type { Env } from "../env";
import type { Identity, LimitOverrides } from "./identity";
import { grantStanding } from "./oauth-grants";

/** Read-only callers see only tools whose readOnlyHint is true, whatever the URL asks. */
export type Access = "full" | "readonly";

/** The scopes a client can request; ledger:write implies ledger:read (MCP asks servers to honour such implications). */
export const SCOPE_READ = "ledger:read";
export const SCOPE_WRITE = "ledger:write";
export const SCOPES = [SCOPE_READ, SCOPE_WRITE] as const;

export const accessOf = (scopes: readonly string[]): Access => (scopes.includes(SCOPE_WRITE) ? "full" : "readonly");
export const scopesFor = (access: Access): string[] => (access === "full" ? [SCOPE_READ, SCOPE_WRITE] : [SCOPE_READ]);
/** The most an authorization request may be granted; asking for no scope is asking for the default (both). */
export const requestedAccess = (scope: readonly string[]): Access => (scope.length === 0 ? "full" : accessOf(scope));
/** What the person chose on the consent page, never more than the client asked for. */
export const cappedAccess = (asked: Access, chosen: Access): Access => (asked === "readonly" ? "readonly" : chosen);

/** The props every authenticated /mcp request carries, one shape for both credentials. */
export interface CallerProps {
  tenantId: string;
  actorId: string;
  actorName: string;
  /** The role of the key that signed in (or of the GitHub mapping); an operator key may sign in, its grant stays operator. */
  operator: boolean;
  /** For an OAuth grant, the access the user approved; each token's own scope can only narrow it. */
  scope: Access;
  via: "api_key" | "oauth";
  /** Set for OAuth callers once the authorization code is exchanged. */
  grantId?: string;
  /** Set for OAuth grants signed in with an API key: the key's id (the grant's D1 row keeps it too, and that is what is checked). */
  signingKeyId?: string;
  /** Set for API-key callers: the key's id names its rate-limit counter. */
  keyId?: string;
  /** Set for API-key callers, read (and cached) with the key. */
  limits?: LimitOverrides | null;
}

export interface Caller extends CallerProps {
  /** The rate-limit counter this caller is counted in: its API key, or its OAuth grant. */
  keyId: string;
  limits: LimitOverrides | null;
}

export function apiKeyProps(identity: Identity): CallerProps {
  const { tenantId, actorId, actorName, operator, keyId, limits } = identity;
  return { tenantId, actorId, actorName, operator, scope: "full", via: "api_key", keyId, limits };
}

interface AuthContext {
  props?: CallerProps;
  auth?: { scope?: string[] };
}

function authOf(c: Context<{ Bindings: Env }>): AuthContext {
  try {
    return c.executionCtx as unknown as AuthContext;
  } catch {
    // No execution context: the request did not come through the provider, so it carries no caller.
    return {};
  }
}

/** The access a request's credential allows: a token's own scope, capped by what its grant approved. */
export function accessOfRequest(c: Context<{ Bindings: Env }>): Access {
  const { props, auth } = authOf(c);
  if (!props) return "readonly";
  if (props.via === "api_key") return props.scope;
  return props.scope === "full" && accessOf(auth?.scope ?? []) === "full" ? "full" : "readonly";
}

/**
 * The caller of an authenticated /mcp request, or null when its OAuth grant has ended: revoked by
 * an operator, its API key revoked, its GitHub mapping changed (the grant's D1 row and what it
 * rests on are read every time, not cached, so an ending takes effect at the next request). The
 * operator role is the key's or mapping's as it is now.
 */
export async function callerOf(c: Context<{ Bindings: Env }>): Promise<Caller | null> {
  const { props } = authOf(c);
  if (!props) return null;
  if (props.via === "api_key") return props.keyId ? { ...props, keyId: props.keyId, limits: props.limits ?? null } : null;
  if (!props.grantId) return null;
  const standing = await grantStanding(c.env.DB, props.grantId, props.tenantId);
  if (!standing) return null;
  const operator = standing.operator ?? props.operator;
  return { ...props, operator, scope: accessOfRequest(c), keyId: `grant-${props.grantId}`, limits: standing.limits };
}
