/**
 * An OAuth client and a person at a browser, as plain HTTP: the workerd tests and the end-to-end
 * tests drive the sign-in and consent forms with it (the e2e's SDK client hands it the URL).
 */
export type Fetcher = (url: string, init?: RequestInit) => Promise<Response>;

/** A browser's cookie jar over a fetch that does not follow redirects. */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(private readonly send: Fetcher) {}

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set("Cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await this.send(url, { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "";
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  /** Posts a form as a browser does, with its Origin. */
  postForm(url: string, fields: Record<string, string>, origin = new URL(url).origin): Promise<Response> {
    return this.fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: origin },
      body: new URLSearchParams(fields).toString(),
    });
  }
}

export const hiddenField = (html: string, name: string): string | null => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]?.replace(/&amp;/g, "&") ?? null;

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const raw = new Uint8Array(32);
  crypto.getRandomValues(raw);
  const verifier = base64url(raw);
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

export function authorizeUrl(base: string, o: { clientId: string; redirectUri: string; challenge?: string; scope?: string; state?: string; resource?: string }): string {
  const url = new URL(`${base}/authorize`);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", o.clientId);
  url.searchParams.set("redirect_uri", o.redirectUri);
  if (o.challenge) {
    url.searchParams.set("code_challenge", o.challenge);
    url.searchParams.set("code_challenge_method", "S256");
  }
  url.searchParams.set("state", o.state ?? "st-1");
  url.searchParams.set("scope", o.scope ?? "ledger:read ledger:write");
  url.searchParams.set("resource", o.resource ?? `${base}/mcp`);
  return url.toString();
}

/** Opens the sign-in page and signs in with an API key; returns the consent page's response. */
export async function signInWithKey(browser: Browser, authorize: string, key: string): Promise<Response> {
  const page = await browser.fetch(authorize);
  if (page.status !== 200) throw new Error(`sign-in page answered ${page.status}: ${await page.text()}`);
  const csrf = hiddenField(await page.text(), "csrf");
  const url = new URL(authorize);
  return browser.postForm(`${url.origin}/authorize${url.search}`, { csrf: csrf ?? "", api_key: key, signin: "key" });
}

/** Submits the consent form; returns the redirect's Location. */
export async function decide(browser: Browser, base: string, consentHtml: string, decision: "allow" | "deny", access: "full" | "readonly" = "full"): Promise<URL> {
  const handle = hiddenField(consentHtml, "handle");
  if (!handle) throw new Error(`no consent handle in: ${consentHtml.slice(0, 500)}`);
  const res = await browser.postForm(`${base}/authorize/consent`, { handle, decision, access });
  if (res.status !== 302) throw new Error(`consent answered ${res.status}: ${await res.text()}`);
  return new URL(res.headers.get("Location")!);
}

/** The whole front channel with an API key: returns the code (and the rest of the redirect). */
export async function authorizeWithKey(
  send: Fetcher,
  base: string,
  o: { clientId: string; redirectUri: string; challenge: string; key: string; access?: "full" | "readonly"; scope?: string },
): Promise<URL> {
  const browser = new Browser(send);
  const consent = await signInWithKey(browser, authorizeUrl(base, o), o.key);
  if (consent.status !== 200) throw new Error(`sign-in answered ${consent.status}: ${await consent.text()}`);
  return decide(browser, base, await consent.text(), "allow", o.access ?? "full");
}

export async function tokenRequest(send: Fetcher, base: string, fields: Record<string, string>): Promise<Response> {
  return send(`${base}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
}

export async function registerClient(send: Fetcher, base: string, metadata: Record<string, unknown>): Promise<Response> {
  return send(`${base}/oauth/register`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(metadata) });
}
