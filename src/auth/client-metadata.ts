/**
 * Bounds on what a client may say about itself at dynamic registration (RFC 7591): the provider
 * stores every field it knows, and the consent page shows some of them, so each one has a stated
 * size. The operator route (src/http/oauth-clients.ts) takes its name and URI bounds from here.
 */

export const MAX_CLIENT_NAME_CHARS = 200;
export const MAX_REDIRECT_URIS = 10;
export const MAX_URI_CHARS = 2000;
const MAX_CONTACTS = 10;
const MAX_CONTACT_CHARS = 320;
/** grant_types, response_types and the like: short tokens, few of them. */
const MAX_TOKEN_LIST = 10;
const MAX_TOKEN_CHARS = 100;
/** Any other string (software_id, software_version, scope, …) and any other list. */
const MAX_OTHER_CHARS = 1000;
const MAX_OTHER_LIST = 20;
/** Localized variants (`client_name#fr`, …) and unknown fields together. */
const MAX_FIELDS = 50;

const URI_FIELDS = new Set(["client_uri", "logo_uri", "policy_uri", "tos_uri", "jwks_uri"]);
const TOKEN_FIELDS = new Set(["token_endpoint_auth_method", "token_endpoint_auth_signing_alg"]);
const TOKEN_LISTS = new Set(["grant_types", "response_types", "token_endpoint_auth_methods_supported", "token_endpoint_auth_signing_alg_values_supported"]);

export interface MetadataProblem {
  code: "invalid_client_metadata" | "invalid_redirect_uri";
  description: string;
}

const metadata = (description: string): MetadataProblem => ({ code: "invalid_client_metadata", description });

/** The longest a string field may be; `client_name#fr` is bounded as `client_name`. */
function stringLimit(field: string): number {
  const base = field.split("#")[0]!;
  if (base === "client_name") return MAX_CLIENT_NAME_CHARS;
  if (URI_FIELDS.has(base)) return MAX_URI_CHARS;
  if (TOKEN_FIELDS.has(base)) return MAX_TOKEN_CHARS;
  return MAX_OTHER_CHARS;
}

function listLimits(field: string): { entries: number; chars: number } {
  if (field === "contacts") return { entries: MAX_CONTACTS, chars: MAX_CONTACT_CHARS };
  if (TOKEN_LISTS.has(field)) return { entries: MAX_TOKEN_LIST, chars: MAX_TOKEN_CHARS };
  return { entries: MAX_OTHER_LIST, chars: MAX_OTHER_CHARS };
}

/** The field's name as quoted in a refusal: a caller's key can be long too. */
const named = (field: string) => (field.length <= 60 ? field : `${field.slice(0, 60)}…`);

function redirectUrisProblem(uris: unknown): MetadataProblem | null {
  if (!Array.isArray(uris)) return null; // the provider refuses a missing or malformed list itself
  if (uris.length > MAX_REDIRECT_URIS) {
    return { code: "invalid_redirect_uri", description: `redirect_uris lists ${uris.length} URIs; at most ${MAX_REDIRECT_URIS} are accepted.` };
  }
  const long = uris.findIndex((u) => typeof u === "string" && u.length > MAX_URI_CHARS);
  if (long >= 0) {
    return { code: "invalid_redirect_uri", description: `redirect_uris[${long}] is ${(uris[long] as string).length} characters; at most ${MAX_URI_CHARS} are accepted.` };
  }
  return null;
}

/**
 * The first field of a registration that is over its bound, or null. Only sizes are judged here;
 * what the values mean is the provider's and redirectUrisProblem's (src/auth/oauth.ts) to check.
 */
export function clientMetadataProblem(raw: Record<string, unknown>): MetadataProblem | null {
  const fields = Object.keys(raw);
  if (fields.length > MAX_FIELDS) return metadata(`The registration has ${fields.length} fields; at most ${MAX_FIELDS} are accepted.`);
  const redirect = redirectUrisProblem(raw.redirect_uris);
  if (redirect) return redirect;
  for (const field of fields) {
    if (field === "redirect_uris") continue;
    const value = raw[field];
    if (typeof value === "string") {
      const max = stringLimit(field);
      if (value.length > max) return metadata(`${named(field)} is ${value.length} characters; at most ${max} are accepted.`);
    } else if (Array.isArray(value)) {
      const { entries, chars } = listLimits(field);
      if (value.length > entries) return metadata(`${named(field)} lists ${value.length} entries; at most ${entries} are accepted.`);
      if (value.some((v) => typeof v === "string" && v.length > chars)) return metadata(`An entry of ${named(field)} is longer than ${chars} characters.`);
    }
  }
  return null;
}
