/**
 * The authorization endpoint (README: Connecting hosted clients): sign in with an API key or with
 * GitHub, then consent. The provider validates the request and issues the code (src/auth/oauth.ts);
 * these routes decide who signs in and what they allow.
 */
import { AuthorizationError, authorizationErrorRedirect, CimdFetchError, type AuthRequest, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { Hono, type Context } from "hono";
import { cappedAccess, type CallerProps, requestedAccess, scopesFor } from "../auth/caller";
import { githubAuthorizeUrl, GithubSignInError, githubSignInConfigured, githubUserFor, githubWebBase, randomToken, GITHUB_CALLBACK_PATH } from "../auth/github-signin";
import { identityForApiKey } from "../auth/identity";
import { cimdRefusal } from "../auth/cimd-guard";
import { MAX_CLIENT_NAME_CHARS } from "../auth/client-metadata";
import { canonicalOrigin, redirectUrisProblem, type PendingGrantProps } from "../auth/oauth";
import { githubActor } from "../auth/oauth-grants";
import { dbOf } from "../db/client";
import { sha256Hex } from "../db/ids";
import type { Env } from "../env";
import { excerpt } from "../core/errors";
import { ALL_TOOLS, TOOLSETS } from "../server/registry";
import { ConsentPage, MessagePage, SignInPage, type ToolsetLine } from "../web/pages";
import { csrfOk, issueCsrf, pageHeaders, STYLESHEET, STYLESHEET_PATH } from "../web/security";

type AppEnv = { Bindings: Env };

/** Who signed in, kept server-side under the consent handle until the user decides. */
interface SignedIn {
  tenantId: string;
  tenantSlug: string;
  actorId: string;
  actorName: string;
  operator: boolean;
  signedInWith: "api_key" | "github";
  githubLogin?: string;
  /** The API key that signed in: the grant ends when it is revoked. */
  keyId?: string;
}

const CONSENT_TTL_SECONDS = 600;
const consentKey = async (handle: string) => `ledger-consent:${await sha256Hex(handle)}`;

const helpers = (c: Context<AppEnv>): OAuthHelpers => {
  if (!c.env.OAUTH_PROVIDER) throw new Error("the OAuth provider did not hand this request on");
  return c.env.OAUTH_PROVIDER;
};
const ownOrigin = (c: Context<AppEnv>) => canonicalOrigin(new URL(c.req.url));
const originOf = (uri: string) => {
  try {
    return new URL(uri).origin;
  } catch {
    return "";
  }
};

function page(c: Context<AppEnv>, body: string | Promise<string>, status: 200 | 400 | 401 | 403 = 200, formTargets: string[] = [], extra?: Headers) {
  const headers = new Headers(extra);
  for (const [k, v] of Object.entries(pageHeaders(formTargets))) headers.set(k, v);
  headers.set("Content-Type", "text/html; charset=utf-8");
  for (const cookie of c.res.headers.getSetCookie()) headers.append("Set-Cookie", cookie);
  return Promise.resolve(body).then((html) => new Response(`<!doctype html>${html}`, { status, headers }));
}

const message = (c: Context<AppEnv>, status: 400 | 401 | 403, title: string, text: string, hint?: string, extra?: Headers) =>
  page(c, (<MessagePage title={title} message={text} hint={hint} />).toString(), status, [], extra);

/**
 * Parses and checks an authorization request, or answers for it: an error the client may hear
 * (its redirect URI is validated) goes back to it; anything else is shown here, never redirected.
 */
async function authRequest(c: Context<AppEnv>): Promise<AuthRequest | Response> {
  const oauth = helpers(c);
  // Before the provider fetches a client's metadata document, the address rules decide whether it may.
  const refused = await cimdRefusal(new URL(c.req.url).searchParams.get("client_id") ?? "", c.env.OAUTH_CIMD_LOCAL_ORIGINS);
  if (refused !== null) {
    return message(
      c,
      400,
      "App not verified",
      `This app names itself by a URL this server does not fetch: ${refused}`,
      "An app that signs in by URL must publish its client metadata at a public https address. Ask the app's publisher, or connect another way.",
    );
  }
  let request: AuthRequest;
  try {
    request = await oauth.parseAuthRequest(c.req.raw);
  } catch (err) {
    if (err instanceof AuthorizationError && err.redirectTo) return c.redirect(err.redirectTo, 302);
    if (err instanceof AuthorizationError) return message(c, 400, "Sign-in request refused", `${err.code}: ${err.description}`, "Start again from the app you are connecting.");
    if (err instanceof CimdFetchError) return message(c, 400, "App not verified", "The app's client metadata document could not be read.", "Try again later, or ask the app's publisher.");
    throw err;
  }
  // The provider lets confidential clients skip PKCE; this server asks it of every client.
  if (request.codeChallengeMethod !== "S256" || !request.codeChallenge) {
    return c.redirect(authorizationErrorRedirect(request, "invalid_request", "PKCE with code_challenge_method=S256 is required."), 302);
  }
  const client = await oauth.lookupClient(request.clientId);
  const problem = client ? redirectUrisProblem(client.redirectUris) : "unknown client";
  if (problem) {
    // A CIMD client is registered by its document: one listing a redirect URI MCP forbids is refused whole, here.
    return message(c, 400, "App refused", `invalid_client_metadata: ${problem}.`, "Only https and loopback http redirect URIs are accepted.");
  }
  return request;
}

/**
 * The provider's description of a client, with what the client wrote about itself cut to size:
 * a metadata document may carry a name of thousands of characters, and a page shows it whole.
 */
async function describeClient(oauth: OAuthHelpers, request: AuthRequest) {
  const client = await oauth.describeConsent(request);
  return { ...client, clientName: excerpt(client.clientName, MAX_CLIENT_NAME_CHARS) };
}

function toolsets(): { full: ToolsetLine[]; readonly: ToolsetLine[]; optIn: string[] } {
  const lines = (readonly: boolean) =>
    TOOLSETS.filter((t) => t.default)
      .map((t) => ({
        id: t.id,
        description: t.description,
        tools: ALL_TOOLS.filter((d) => d.toolset === t.id && (!readonly || d.annotations.readOnly)).length,
      }))
      .filter((t) => t.tools > 0);
  return { full: lines(false), readonly: lines(true), optIn: TOOLSETS.filter((t) => !t.default).map((t) => t.id) };
}

async function tenantSlug(d1: D1Database, tenantId: string): Promise<string> {
  const row = await d1.prepare("SELECT slug FROM tenants WHERE id = ?").bind(tenantId).first<{ slug: string }>();
  return row?.slug ?? tenantId;
}

/** The consent page, once someone has signed in; `extra` carries cookies an earlier step set or clears. */
async function showConsent(c: Context<AppEnv>, request: AuthRequest, who: SignedIn, extra?: Headers): Promise<Response> {
  const oauth = helpers(c);
  const client = await describeClient(oauth, request);
  const consent = await oauth.beginConsent(request);
  await c.env.OAUTH_KV.put(await consentKey(consent.handle), JSON.stringify(who), { expirationTtl: CONSENT_TTL_SECONDS });
  const headers = new Headers(consent.headers);
  for (const cookie of extra?.getSetCookie() ?? []) headers.append("Set-Cookie", cookie);
  // A client asking for nothing gets the default (both scopes); one asking only to read is offered only that.
  const access = requestedAccess(request.scope);
  const html = (<ConsentPage client={client} handle={consent.handle} actor={who.actorName} tenant={who.tenantSlug} operator={who.operator} access={access} toolsets={toolsets()} />).toString();
  return page(c, html, 200, [originOf(request.redirectUri)], headers);
}

async function showSignIn(c: Context<AppEnv>, request: AuthRequest, status: 200 | 401 = 200, error?: string): Promise<Response> {
  const client = await describeClient(helpers(c), request);
  const csrf = issueCsrf(c);
  const github = githubSignInConfigured(c.env);
  const action = `/authorize${new URL(c.req.url).search}`;
  const html = (<SignInPage client={client} action={action} csrf={csrf} github={github} error={error} />).toString();
  return page(c, html, status, [originOf(request.redirectUri), ...(github ? [githubWebBase(c.env)] : [])]);
}

export const oauthRoutes = new Hono<AppEnv>();

oauthRoutes.get(STYLESHEET_PATH, (c) => c.body(STYLESHEET, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=3600" }));

oauthRoutes.get("/authorize", async (c) => {
  const request = await authRequest(c);
  return request instanceof Response ? request : showSignIn(c, request);
});

oauthRoutes.post("/authorize", async (c) => {
  const form = await c.req.formData();
  if (!csrfOk(c, form, ownOrigin(c))) return message(c, 403, "Form expired", "This sign-in form was not sent by this page (or its cookie expired).", "Go back to the app and start signing in again.");
  const request = await authRequest(c);
  if (request instanceof Response) return request;

  if (form.get("signin") === "github") {
    if (!githubSignInConfigured(c.env)) return message(c, 400, "GitHub sign-in is off", "This server has no GitHub OAuth app configured.", "Sign in with an API key instead.");
    const verifier = randomToken();
    const { state, headers } = await helpers(c).beginUpstream(request, { data: { verifier } });
    headers.set("Location", await githubAuthorizeUrl(c.env, ownOrigin(c), state, verifier));
    return new Response(null, { status: 302, headers });
  }

  const key = String(form.get("api_key") ?? "").trim();
  const identity = await identityForApiKey(dbOf({ d1: c.env.DB }), key);
  if (!identity) return showSignIn(c, request, 401, "That is not a live API key. Check it was pasted whole, or ask an operator for a new one.");
  return showConsent(c, request, {
    tenantId: identity.tenantId,
    tenantSlug: await tenantSlug(c.env.DB, identity.tenantId),
    actorId: identity.actorId,
    actorName: identity.actorName,
    operator: identity.operator,
    signedInWith: "api_key",
    keyId: identity.keyId,
  });
});

oauthRoutes.get(GITHUB_CALLBACK_PATH, async (c) => {
  const oauth = helpers(c);
  let resumed;
  try {
    resumed = await oauth.finishUpstream<{ verifier: string }>(c.req.raw);
  } catch (err) {
    if (err instanceof AuthorizationError) return message(c, 400, "Sign-in expired", err.description, "Go back to the app and start signing in again.");
    throw err;
  }
  const { request, data, headers } = resumed;
  const code = c.req.query("code");
  if (c.req.query("error") || !code) {
    headers.set("Location", authorizationErrorRedirect(request, "access_denied", "GitHub sign-in was declined."));
    return new Response(null, { status: 302, headers });
  }
  let user;
  try {
    user = await githubUserFor(c.env, ownOrigin(c), code, data.verifier);
  } catch (err) {
    if (err instanceof GithubSignInError) return message(c, 400, "GitHub sign-in failed", err.message, "Go back to the app and try again.", headers);
    throw err;
  }
  const actor = await githubActor(c.env.DB, user.login, user.id);
  if (!actor) {
    return message(
      c,
      403,
      "Not allowed to sign in",
      `The GitHub account @${user.login} is not mapped to an actor of any tenant on this server.`,
      `Ask an operator to run: npm run oauth -- map-github --login ${user.login} --tenant <tenant> --actor <actor>`,
      headers,
    );
  }
  return showConsent(c, request, { ...actor, tenantSlug: await tenantSlug(c.env.DB, actor.tenantId), signedInWith: "github", githubLogin: user.login.toLowerCase() }, headers);
});

oauthRoutes.post("/authorize/consent", async (c) => {
  const oauth = helpers(c);
  const form = await c.req.formData();
  const handle = String(form.get("handle") ?? "");
  const storeKey = await consentKey(handle);
  try {
    if (form.get("decision") !== "allow") {
      const denied = await oauth.denyConsent(c.req.raw, handle);
      await c.env.OAUTH_KV.delete(storeKey);
      return new Response(null, { status: 302, headers: denied.headers });
    }
    const who = await c.env.OAUTH_KV.get<SignedIn>(storeKey, "json");
    // Approved as the client asked; the form can narrow that, never widen it (the page offers no more, and a forged post gets no more).
    const approved = await oauth.approveConsent(c.req.raw, handle);
    const access = cappedAccess(requestedAccess(approved.request.scope), form.get("access") === "readonly" ? "readonly" : "full");
    const request = { ...approved.request, scope: scopesFor(access) };
    await c.env.OAUTH_KV.delete(storeKey);
    if (!who) return message(c, 400, "Sign-in expired", "The sign-in behind this page is no longer known.", "Go back to the app and start again.");
    const client = await describeClient(oauth, request);
    const caller: CallerProps = { tenantId: who.tenantId, actorId: who.actorId, actorName: who.actorName, operator: who.operator, scope: access, via: "oauth" };
    const props: PendingGrantProps = {
      ...caller,
      pending: { clientName: client.clientName, redirectUri: request.redirectUri, signedInWith: who.signedInWith, githubLogin: who.githubLogin, keyId: who.keyId },
    };
    const { redirectTo } = await oauth.completeAuthorization({
      request,
      // The actor id: unique across tenants, and free of ':' as the provider requires.
      userId: who.actorId,
      metadata: { tenantId: who.tenantId },
      scope: scopesFor(access),
      props,
    });
    approved.headers.set("Location", redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  } catch (err) {
    if (err instanceof AuthorizationError)
      return message(c, 400, "Consent expired", err.description, "The page expired, was already used, or was opened in another browser. Start again from the app.");
    throw err;
  }
});
