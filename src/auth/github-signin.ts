/**
 * "Sign in with GitHub" (docs/operations.md: OAuth in production): the web flow of a GitHub OAuth app, with PKCE,
 * asking for no scope (a user's public login and id are all this server needs). Base URLs come from
 * GITHUB_OAUTH_URL and GITHUB_API_URL, so GitHub Enterprise (and the tests' fake) work the same.
 */
import type { Env } from "../env";
import { apiBase } from "../git/credentials";

export const GITHUB_CALLBACK_PATH = "/oauth/github/callback";

export const githubSignInConfigured = (env: Env) => Boolean(env.GITHUB_OAUTH_CLIENT_ID && env.GITHUB_OAUTH_CLIENT_SECRET);
export const githubWebBase = (env: Env) => (env.GITHUB_OAUTH_URL || "https://github.com").replace(/\/+$/, "");

/** A failure of the exchange with GitHub, said in words a person signing in can act on. */
export class GithubSignInError extends Error {}

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

export function randomToken(bytes = 32): string {
  const b = new Uint8Array(bytes);
  crypto.getRandomValues(b);
  return base64url(b);
}

export async function s256(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
}

export async function githubAuthorizeUrl(env: Env, origin: string, state: string, verifier: string): Promise<string> {
  const url = new URL(`${githubWebBase(env)}/login/oauth/authorize`);
  url.searchParams.set("client_id", env.GITHUB_OAUTH_CLIENT_ID!);
  url.searchParams.set("redirect_uri", `${origin}${GITHUB_CALLBACK_PATH}`);
  url.searchParams.set("state", state);
  url.searchParams.set("code_challenge", await s256(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("allow_signup", "false");
  return url.toString();
}

/** Exchanges GitHub's code for a token and returns whose it is; the token itself is dropped. */
export async function githubUserFor(env: Env, origin: string, code: string, verifier: string): Promise<{ login: string; id: number }> {
  const exchange = await fetch(`${githubWebBase(env)}/login/oauth/access_token`, {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded", "User-Agent": "agent-ledger" },
    body: new URLSearchParams({
      client_id: env.GITHUB_OAUTH_CLIENT_ID!,
      client_secret: env.GITHUB_OAUTH_CLIENT_SECRET!,
      code,
      redirect_uri: `${origin}${GITHUB_CALLBACK_PATH}`,
      code_verifier: verifier,
    }),
  });
  // GitHub answers a refused exchange with 200 and an `error` field.
  const token = (await exchange.json().catch(() => ({}))) as { access_token?: unknown; error?: unknown };
  if (!exchange.ok || typeof token.access_token !== "string") {
    throw new GithubSignInError(`GitHub did not accept the sign-in${typeof token.error === "string" ? ` (${token.error.slice(0, 60)})` : ""}.`);
  }
  const user = await fetch(`${apiBase(env)}/user`, {
    headers: { Authorization: `Bearer ${token.access_token}`, Accept: "application/vnd.github+json", "User-Agent": "agent-ledger" },
  });
  const body = (await user.json().catch(() => ({}))) as { login?: unknown; id?: unknown };
  if (!user.ok || typeof body.login !== "string" || typeof body.id !== "number") throw new GithubSignInError("GitHub did not say who signed in.");
  return { login: body.login, id: body.id };
}
