/**
 * The key that seals input_required request state (src/server/server.ts). Every isolate must agree on
 * it, since the client's retry may land anywhere: the Worker secret REQUEST_STATE_KEY, or else a key
 * derived from GITHUB_CREDENTIALS_KEY (a secret every deployment with git tools already has). With
 * neither, a per-isolate random key still protects the state but a retry that lands on another
 * isolate is refused, so production should set one; `npm start` and the tests run one isolate.
 */
import type { Env } from "../env";

let isolateKey: string | undefined;
const derived = new Map<string, string>();

const b64url = (bytes: ArrayBuffer | Uint8Array) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

export async function requestStateKey(env: Env): Promise<string> {
  if (env.REQUEST_STATE_KEY && env.REQUEST_STATE_KEY.length >= 32) return env.REQUEST_STATE_KEY;
  const base = env.REQUEST_STATE_KEY || env.GITHUB_CREDENTIALS_KEY;
  if (base) {
    let key = derived.get(base);
    if (!key) {
      // HMAC as a key derivation: the credentials key itself never signs anything a client sees.
      const hmac = await crypto.subtle.importKey("raw", new TextEncoder().encode(base), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      key = b64url(await crypto.subtle.sign("HMAC", hmac, new TextEncoder().encode("agent-ledger request state v1")));
      derived.set(base, key);
    }
    return key;
  }
  isolateKey ??= b64url(crypto.getRandomValues(new Uint8Array(32)));
  return isolateKey;
}
