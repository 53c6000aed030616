/**
 * Pre-registered OAuth clients (docs/operations.md: OAuth in production): an operator registers a hosted
 * client (a team's own connector, a client that does neither CIMD nor dynamic registration) with
 * its name and redirect URIs, and hands the client id (and secret, for a confidential client) to
 * whoever configures it. `npm run oauth -- create-client` calls this route.
 *
 * The provider keeps clients in its own KV format, reachable only from inside the Worker, which is
 * why this is a route and not a database command. It takes an operator API key, never an OAuth
 * token: registering clients is administration, not something a signed-in client may do.
 */
import { Hono } from "hono";
import { z } from "zod";
import { MAX_CLIENT_NAME_CHARS, MAX_REDIRECT_URIS, MAX_URI_CHARS } from "../auth/client-metadata";
import { bearerKey, identityForApiKey } from "../auth/identity";
import { redirectUrisProblem } from "../auth/oauth";
import { dbOf } from "../db/client";
import type { Env } from "../env";

const body = z
  .object({
    client_name: z.string().trim().min(1).max(MAX_CLIENT_NAME_CHARS),
    redirect_uris: z.array(z.string().max(MAX_URI_CHARS)).min(1).max(MAX_REDIRECT_URIS),
    /** A confidential client gets a secret and authenticates at the token endpoint; a public one uses PKCE alone. */
    confidential: z.boolean().optional(),
  })
  .strict();

const refuse = (code: string, message: string, status: 400 | 401 | 403) =>
  Response.json({ ok: false, error: { code, message, hint: "POST /oauth/clients with an operator API key and {client_name, redirect_uris, confidential?}.", retryable: false } }, { status });

export const oauthClientRoutes = new Hono<{ Bindings: Env }>();

oauthClientRoutes.post("/oauth/clients", async (c) => {
  const key = bearerKey(c.req.header("Authorization"));
  const identity = key ? await identityForApiKey(dbOf({ d1: c.env.DB }), key) : null;
  if (!identity) return refuse("unauthorized", "An operator API key is required (Authorization: Bearer …).", 401);
  if (!identity.operator) return refuse("forbidden", "Only an operator key may register OAuth clients.", 403);
  if (!c.env.OAUTH_PROVIDER) throw new Error("the OAuth provider did not hand this request on");
  const parsed = body.safeParse(await c.req.json().catch(() => null));
  if (!parsed.success)
    return refuse(
      "invalid_input",
      parsed.error.issues
        .map((i) => `${i.path.join(".") || "body"}: ${i.message}`)
        .join("; ")
        .slice(0, 500),
      400,
    );
  const problem = redirectUrisProblem(parsed.data.redirect_uris);
  if (problem) return refuse("invalid_redirect_uri", problem, 400);
  const client = await c.env.OAUTH_PROVIDER.createClient({
    clientName: parsed.data.client_name,
    redirectUris: parsed.data.redirect_uris,
    tokenEndpointAuthMethod: parsed.data.confidential ? "client_secret_basic" : "none",
    grantTypes: ["authorization_code", "refresh_token"],
    responseTypes: ["code"],
  });
  return c.json(
    {
      ok: true,
      client_id: client.clientId,
      ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
      client_name: client.clientName,
      redirect_uris: client.redirectUris,
      token_endpoint_auth_method: client.tokenEndpointAuthMethod,
      registered_by: identity.actorName,
    },
    201,
  );
});
