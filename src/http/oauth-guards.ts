/**
 * Checks in front of the OAuth provider's own endpoints (docs/protocol.md: Connecting hosted clients), which
 * anyone may call without a credential: dynamic registration is rate limited per source address
 * and its body bounded before the provider parses it, and a token or revocation request that
 * names a client by URL has that URL checked before the provider fetches it (src/auth/cimd-guard.ts).
 */
import type { MiddlewareHandler } from "hono";
import { cimdRefusal, tokenRequestClientIds } from "../auth/cimd-guard";
import type { Env } from "../env";
import { parseIPv6 } from "../net/public-fetch";
import { declaredTooLarge, readCapped } from "./body";
import { perMinute, throttled, throttleError } from "./rate-limit";

type Guard = MiddlewareHandler<{ Bindings: Env }>;

export const DEFAULT_REGISTER_PER_MIN = 30;
/** Ten redirect URIs of 2,000 characters and the other bounded fields fit with room to spare. */
export const MAX_REGISTRATION_BODY_BYTES = 64 * 1024;

const NO_STORE = { "Cache-Control": "no-store" };

/** An RFC 6749 / 7591 error body. */
const oauthError = (error: string, description: string, status: 400 | 401 | 413 | 429, headers: Record<string, string> = {}) =>
  Response.json({ error, error_description: description }, { status, headers: { ...NO_STORE, ...headers } });

/**
 * Who is registering, for the counter's name. Cloudflare sets CF-Connecting-IP on every request
 * (and `wrangler dev` does on loopback); an IPv6 source counts by its /64, which one subscriber
 * usually holds whole. Without the header (the test pool, a bare workerd) every request shares one
 * counter: the limit still holds, for everyone together.
 */
export function registrationSource(request: Request): string {
  const ip = request.headers.get("CF-Connecting-IP")?.trim() ?? "";
  const v6 = ip.includes(":") ? parseIPv6(ip) : null;
  if (v6) return [...v6.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("") + "::/64";
  return ip === "" ? "unknown" : ip.slice(0, 64);
}

/** POST /oauth/register: counted per source, then refused above MAX_REGISTRATION_BODY_BYTES; the metadata's own bounds are checked in the provider's registration callback. */
export const registrationGuard: Guard = async (c, next) => {
  if (c.req.method !== "POST") return next();
  const limit = perMinute(c.env.OAUTH_REGISTER_PER_MIN, DEFAULT_REGISTER_PER_MIN);
  const throttle = await throttled(c.env, [{ scope: "registration", name: `register:${registrationSource(c.req.raw)}`, perMinute: limit }]);
  if (throttle) {
    return oauthError("rate_limited", throttleError(throttle).message, 429, { "Retry-After": String(throttle.retryAfterSeconds) });
  }
  const tooLarge = () => oauthError("invalid_client_metadata", `The registration body is larger than ${MAX_REGISTRATION_BODY_BYTES} bytes.`, 413);
  if (declaredTooLarge(c.req.raw, MAX_REGISTRATION_BODY_BYTES)) return tooLarge();
  if ((await readCapped(c.req.raw.clone(), MAX_REGISTRATION_BODY_BYTES)) === null) return tooLarge();
  return next();
};

/** POST /oauth/token (tokens and revocation): every client id it names by URL must pass the address rules. */
export const cimdTokenGuard: Guard = async (c, next) => {
  if (c.req.method !== "POST") return next();
  const clients = await tokenRequestClientIds(c.req.raw);
  if ("refused" in clients) return oauthError("invalid_request", clients.refused, clients.tooLarge ? 413 : 400);
  for (const id of clients.ids) {
    const refused = await cimdRefusal(id, c.env.OAUTH_CIMD_LOCAL_ORIGINS);
    if (refused !== null) return oauthError("invalid_client", `The client's metadata document is not fetched: ${refused}`, 401);
  }
  return next();
};
