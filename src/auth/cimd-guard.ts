/**
 * Client ID Metadata Documents only from public addresses (docs/protocol.md: Connecting hosted clients).
 *
 * The OAuth provider fetches a client's metadata document whenever a request names a client by
 * URL, with the platform's plain `fetch`: any host, redirects followed, no hook to intercept it.
 * So before the provider sees such a request this module fetches the document itself under the
 * rules `download` applies (src/net/public-fetch.ts: https only, no literal or resolved address
 * that is loopback, private, link-local or reserved, no local names, every redirect re-checked),
 * and the request is refused unless that fetch succeeds. The same goes for the `jwks_uri` a
 * document names, which the provider fetches when the client authenticates with a signed JWT.
 *
 * What is left open is what public-fetch.ts states: a name may resolve publicly here and
 * privately a moment later for the provider's own fetch (DNS rebinding), and a server can answer
 * the provider differently than it answered this check. Production Workers cannot reach private
 * networks at all; these checks are what keeps `wrangler dev` and self-hosted workerd safe.
 */
import { readCapped } from "../http/body";
import { ToolError } from "../core/errors";
import { publicFetch } from "../net/public-fetch";

/** The provider's own cap on a metadata document; a larger one fails there anyway. */
export const CIMD_MAX_BYTES = 5 * 1024;
/** Key sets are larger than metadata; the provider reads at most 64 KiB of one too. */
const JWKS_MAX_BYTES = 64 * 1024;
/** The provider gives its own fetch 10 s; the check gets the same. */
const CHECK_TIMEOUT_MS = 10_000;
const MAX_REDIRECTS = 3;
/** A token request is a handful of short fields; a larger body is refused rather than read. */
export const MAX_TOKEN_BODY_BYTES = 64 * 1024;

/**
 * True when the provider would resolve `clientId` by fetching it: an https URL with a path
 * after its authority. Deliberately a little wider than the provider's test (any https URL that
 * parses), so no spelling the provider fetches slips past unchecked.
 */
export function fetchesAsCimd(clientId: string): boolean {
  if (!URL.canParse(clientId)) return false;
  return new URL(clientId).protocol === "https:";
}

/**
 * Origins exempt from the address rules, for local development only (a CIMD host on loopback in
 * the end-to-end tests): OAUTH_CIMD_LOCAL_ORIGINS, comma-separated, exact origins.
 */
function exempt(clientId: string, localOrigins: string | undefined): boolean {
  if (!localOrigins) return false;
  const origin = new URL(clientId).origin;
  return localOrigins.split(",").some((o) => o.trim() !== "" && o.trim() === origin);
}

const fetchOptions = (maxBytes: number) => ({ maxBytes, timeoutMs: CHECK_TIMEOUT_MS, maxRedirects: MAX_REDIRECTS });

function jwksUriOf(bytes: Uint8Array): string | null {
  try {
    const doc = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    const uri = doc && typeof doc === "object" ? (doc as { jwks_uri?: unknown }).jwks_uri : undefined;
    return typeof uri === "string" ? uri : null;
  } catch {
    // Not JSON: the provider refuses the document itself, with nothing fetched beyond it.
    return null;
  }
}

/**
 * Why the provider must not be handed `clientId`, or null when it may. Fetches the document (and
 * its jwks_uri) under the public-address rules; any failure refuses, since the provider's fetch
 * of the same URL would fail or reach somewhere it must not.
 */
export async function cimdRefusal(clientId: string, localOrigins?: string): Promise<string | null> {
  if (!fetchesAsCimd(clientId) || exempt(clientId, localOrigins)) return null;
  try {
    const doc = await publicFetch(clientId, fetchOptions(CIMD_MAX_BYTES));
    const jwksUri = jwksUriOf(doc.bytes);
    if (jwksUri !== null) await publicFetch(jwksUri, fetchOptions(JWKS_MAX_BYTES));
    return null;
  } catch (err) {
    if (err instanceof ToolError) return err.message;
    console.error("CIMD address check failed unexpectedly", err);
    return "its address could not be checked";
  }
}

/** The unverified `iss` of a JWT client assertion: the provider looks the client up by it when client_id is absent. */
function assertionIssuer(assertion: string): string | null {
  const payload = assertion.split(".")[1];
  if (!payload || payload.length > 16 * 1024) return null;
  try {
    const json = atob(payload.replace(/-/g, "+").replace(/_/g, "/"));
    const iss = (JSON.parse(json) as { iss?: unknown }).iss;
    return typeof iss === "string" ? iss : null;
  } catch {
    return null;
  }
}

function basicClientId(header: string | null): string | null {
  const text = header?.trim() ?? "";
  // The provider splits the scheme at a space or a tab; so must this, or a tab would slip past.
  const gap = [" ", "\t"]
    .map((c) => text.indexOf(c))
    .filter((i) => i >= 0)
    .sort((a, b) => a - b)[0];
  if (gap === undefined || text.slice(0, gap).toLowerCase() !== "basic") return null;
  try {
    const credentials = atob(text.slice(gap).trim());
    const colon = credentials.indexOf(":");
    return colon < 0 ? null : decodeURIComponent(credentials.slice(0, colon).replace(/\+/g, " "));
  } catch {
    return null;
  }
}

export type TokenRequestClients = { ids: string[] } | { refused: string; tooLarge?: true };

/**
 * Every client id a token or revocation request could make the provider look up: its
 * `client_id`, the Basic credentials' user, a client assertion's issuer. Refused when the body is
 * larger than MAX_TOKEN_BODY_BYTES or repeats a client field (as the provider would refuse it;
 * here it also keeps one request from naming many URLs to check). Reads a copy of the body.
 */
export async function tokenRequestClientIds(request: Request): Promise<TokenRequestClients> {
  const bytes = await readCapped(request.clone(), MAX_TOKEN_BODY_BYTES);
  if (bytes === null) return { refused: `A token request may be at most ${MAX_TOKEN_BODY_BYTES / 1024} KiB.`, tooLarge: true };
  const form = new URLSearchParams(new TextDecoder().decode(bytes));
  const field = (name: string) => form.getAll(name).filter((v) => v !== "");
  const clientIds = field("client_id");
  const assertions = field("client_assertion");
  if (clientIds.length > 1 || assertions.length > 1) return { refused: "client_id and client_assertion must not be repeated." };
  const ids = [...clientIds];
  const basic = basicClientId(request.headers.get("Authorization"));
  if (basic !== null) ids.push(basic);
  const iss = assertions[0] === undefined ? null : assertionIssuer(assertions[0]);
  if (iss !== null) ids.push(iss);
  return { ids: [...new Set(ids)] };
}
