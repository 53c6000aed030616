/**
 * The OAuth endpoints anyone may call without a credential: client metadata documents are
 * fetched only from public addresses, and dynamic registration is bounded and rate limited.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { dohAnswer, isDoh, type DnsRecords } from "../support/doh";
import { workerFetch } from "../support/helpers";
import { authorizeUrl, pkcePair, tokenRequest, type Fetcher } from "../support/oauth-flow";

const BASE = "https://ledger.test";
const REDIRECT = "http://127.0.0.1:33418/callback";
const send: Fetcher = (url, init) => workerFetch(url, init);

type Route = () => Response;

/**
 * Stubs the network: DoH answers from `dns` (other names resolve publicly), pages from `routes`;
 * every other request is recorded and fails. `reached` lists every non-DoH URL asked for.
 */
function network(routes: Record<string, Route> = {}, dns: Record<string, DnsRecords> = {}) {
  const reached: string[] = [];
  vi.mocked(globalThis.fetch).mockImplementation(async (input) => {
    const url = input instanceof Request ? input.url : String(input);
    const answer = dohAnswer(url, dns);
    if (answer) return answer;
    reached.push(url);
    const route = routes[url];
    if (!route) throw new Error(`Unexpected outbound request in a test: ${url}`);
    return route();
  });
  return {
    reached,
    lookups: () =>
      vi
        .mocked(globalThis.fetch)
        .mock.calls.map(([i]) => (i instanceof Request ? i.url : String(i)))
        .filter(isDoh),
  };
}

const cimdDoc =
  (clientId: string, extra: Record<string, unknown> = {}): Route =>
  () =>
    Response.json({ client_id: clientId, client_name: "Some App", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", ...extra }, { headers: { "Cache-Control": "no-store" } });

async function authorizeAs(clientId: string): Promise<{ status: number; text: string }> {
  const { challenge } = await pkcePair();
  const res = await send(authorizeUrl(BASE, { clientId, redirectUri: REDIRECT, challenge }));
  return { status: res.status, text: await res.text() };
}

describe("client metadata documents are fetched only from public addresses", () => {
  it.each([
    ["loopback IPv4", "https://127.0.0.1:8443/client.json"],
    ["loopback with a root path", "https://127.0.0.1:8443/"],
    ["localhost", "https://localhost:8443/client.json"],
    ["a name under localhost", "https://app.localhost/client.json"],
    ["IPv6 loopback", "https://[::1]:8443/client.json"],
    ["IPv4-mapped IPv6 loopback", "https://[::ffff:127.0.0.1]/client.json"],
    ["RFC 1918", "https://10.1.2.3/client.json"],
    ["link-local metadata address", "https://169.254.169.254/latest/client.json"],
    ["decimal IPv4", "https://2130706433/client.json"],
    ["hex IPv4", "https://0x7f.0.0.1/client.json"],
    ["octal IPv4", "https://0177.0.0.1/client.json"],
    ["unspecified", "https://0.0.0.0/client.json"],
    ["single-label name", "https://intranet/client.json"],
    ["internal name", "https://metadata.google.internal/client.json"],
  ])("/authorize refuses %s without connecting to it", async (_label, clientId) => {
    const net = network();
    const page = await authorizeAs(clientId);
    expect(page.status).toBe(400);
    expect(page.text).toContain("App not verified");
    expect(page.text).toContain("public https address");
    expect(net.reached).toEqual([]);
  });

  it("/authorize refuses a name whose DNS answers include a private address, before any connection", async () => {
    const net = network({}, { "rebind.example": { A: ["93.184.215.14", "127.0.0.1"] } });
    const page = await authorizeAs("https://rebind.example/client.json");
    expect(page.status).toBe(400);
    expect(page.text).toContain("resolves to 127.0.0.1");
    expect(net.reached).toEqual([]);
    expect(net.lookups().length).toBeGreaterThan(0);
  });

  it("/authorize refuses a public document that redirects to loopback, and never follows the redirect", async () => {
    const clientId = "https://app.example/client.json";
    const net = network({ [clientId]: () => new Response(null, { status: 302, headers: { Location: "https://127.0.0.1:8443/client.json" } }) });
    const page = await authorizeAs(clientId);
    expect(page.status).toBe(400);
    expect(page.text).toContain("127.0.0.1");
    // The check asked once, with redirects off; the provider never fetched it at all.
    expect(net.reached).toEqual([clientId]);
    const init = vi.mocked(globalThis.fetch).mock.calls.find(([i]) => String(i instanceof Request ? i.url : i) === clientId)![1];
    expect(init?.redirect).toBe("manual");
  });

  it("/authorize refuses a document whose jwks_uri is private (the provider would fetch it at the token endpoint)", async () => {
    const clientId = "https://app.example/jwt-client.json";
    const net = network({ [clientId]: cimdDoc(clientId, { jwks_uri: "https://192.168.1.10/jwks.json" }) });
    const page = await authorizeAs(clientId);
    expect(page.status).toBe(400);
    expect(page.text).toContain("192.168.1.10");
    expect(net.reached).toEqual([clientId]);
  });

  it("a document on a public address still signs in, and its name is shown bounded", async () => {
    const clientId = "https://app.example/long-name.json";
    const net = network({ [clientId]: cimdDoc(clientId, { client_name: "N".repeat(4000) }) });
    const page = await authorizeAs(clientId);
    expect(page.status, page.text.slice(0, 300)).toBe(200);
    expect(page.text).toContain("app.example");
    expect(page.text).not.toContain("N".repeat(201));
    expect(net.reached.every((u) => u === clientId)).toBe(true);
  });

  it("the token endpoint refuses a client named by a private URL, however it is named, without connecting", async () => {
    const net = network();
    const loop = "https://127.0.0.1:8443/client.json";
    const basic = (id: string, sep = " ") => ({ Authorization: `Basic${sep}${btoa(`${encodeURIComponent(id)}:secret`)}` });
    const b64url = (o: unknown) => btoa(JSON.stringify(o)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const assertion = `${b64url({ alg: "ES256" })}.${b64url({ iss: loop, sub: loop, aud: `${BASE}/oauth/token` })}.c2ln`;
    const form = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      send(`${BASE}/oauth/token`, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(fields).toString() });
    for (const res of [
      await tokenRequest(send, BASE, { grant_type: "refresh_token", refresh_token: "u:g:x", client_id: loop }),
      await tokenRequest(send, BASE, { token: "u:g:x", client_id: "https://[::1]/c.json" }),
      await form({ grant_type: "refresh_token", refresh_token: "u:g:x" }, basic(loop)),
      await form({ grant_type: "refresh_token", refresh_token: "u:g:x" }, basic(loop, "\t")),
      await form({ grant_type: "refresh_token", refresh_token: "u:g:x", client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", client_assertion: assertion }),
    ]) {
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: "invalid_client" });
    }
    expect(net.reached).toEqual([]);
  });

  it("the token endpoint refuses a repeated client_id and an oversized body before looking anything up", async () => {
    const net = network();
    const twice = await send(`${BASE}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "grant_type=refresh_token&refresh_token=u:g:x&client_id=https%3A%2F%2Fa.example%2Fc&client_id=https%3A%2F%2Fb.example%2Fc",
    });
    expect(twice.status).toBe(400);
    expect(await twice.json()).toMatchObject({ error: "invalid_request" });
    const huge = await tokenRequest(send, BASE, { grant_type: "refresh_token", refresh_token: "x".repeat(70_000) });
    expect(huge.status).toBe(413);
    expect(net.reached).toEqual([]);
    expect(net.lookups()).toEqual([]);
  });
});

const clientCount = async () => (await env.OAUTH_KV.list({ prefix: "client:" })).keys.length;
const register = (metadata: Record<string, unknown>, ip = "198.51.100.1") =>
  send(`${BASE}/oauth/register`, { method: "POST", headers: { "Content-Type": "application/json", "CF-Connecting-IP": ip }, body: JSON.stringify(metadata) });

describe("dynamic client registration is bounded", () => {
  const good = { client_name: "Bounded", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" };

  it("accepts every field at its bound", async () => {
    const res = await register(
      {
        ...good,
        client_name: "n".repeat(200),
        redirect_uris: Array.from({ length: 10 }, (_, i) => `https://app.example/${i}/${"p".repeat(1970)}`),
        client_uri: `https://app.example/${"c".repeat(1980)}`,
        contacts: Array.from({ length: 10 }, (_, i) => `ops${i}@app.example`),
      },
      "198.51.100.2",
    );
    expect(res.status, await res.clone().text()).toBe(201);
  });

  it.each([
    ["a client_name over 200 characters", { client_name: "n".repeat(201) }, "invalid_client_metadata", /client_name is 201 characters/],
    ["a localized client_name over 200", { "client_name#fr": "n".repeat(201) }, "invalid_client_metadata", /client_name#fr/],
    ["11 redirect URIs", { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example/${i}`) }, "invalid_redirect_uri", /at most 10/],
    ["a redirect URI over 2000 characters", { redirect_uris: [`https://app.example/${"p".repeat(2000)}`] }, "invalid_redirect_uri", /at most 2000/],
    ["a logo_uri over 2000 characters", { logo_uri: `https://app.example/${"l".repeat(2000)}` }, "invalid_client_metadata", /logo_uri/],
    ["11 contacts", { contacts: Array.from({ length: 11 }, (_, i) => `c${i}@app.example`) }, "invalid_client_metadata", /contacts lists 11/],
    ["a long software_id", { software_id: "s".repeat(1001) }, "invalid_client_metadata", /software_id/],
    ["60 fields", Object.fromEntries(Array.from({ length: 57 }, (_, i) => [`x_${i}`, "v"])), "invalid_client_metadata", /fields; at most 50/],
  ])("refuses %s, registering nothing", async (_label, extra, code, message) => {
    const before = await clientCount();
    const res = await register({ ...good, ...extra }, "198.51.100.3");
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe(code);
    expect(body.error_description).toMatch(message);
    expect(body.error_description.length).toBeLessThan(300);
    expect(await clientCount()).toBe(before);
  });

  it("refuses a body over 64 KiB before parsing it (a 1 MB client_name)", async () => {
    const before = await clientCount();
    const res = await register({ ...good, client_name: "n".repeat(1_000_000) }, "198.51.100.4");
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: "invalid_client_metadata" });
    expect(await clientCount()).toBe(before);
  });
});

describe("dynamic client registration is rate limited per source", () => {
  const limited = async (req: Request) => {
    const ctx = createExecutionContext();
    const res = await worker.fetch(req, { ...env, OAUTH_REGISTER_PER_MIN: "3" }, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  };
  const attempt = (ip: string) =>
    limited(
      new Request(`${BASE}/oauth/register`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "CF-Connecting-IP": ip },
        body: JSON.stringify({ client_name: "Burst", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
      }),
    );

  it("lets OAUTH_REGISTER_PER_MIN through per address, then answers 429 with Retry-After; other addresses are unaffected", async () => {
    const before = await clientCount();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await attempt("203.0.113.50")).status);
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
    const refused = await attempt("203.0.113.50");
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ error: "rate_limited", error_description: expect.stringContaining("more than 3 OAuth clients") });
    expect(await clientCount()).toBe(before + 3);
    expect((await attempt("203.0.113.51")).status).toBe(201);
  });

  it("counts an IPv6 source by its /64", async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 4; i++) statuses.push((await attempt(`2001:db8:aa:bb::${i}`)).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
    expect((await attempt("2001:db8:aa:cc::1")).status).toBe(201);
  });

  it("counts requests without CF-Connecting-IP (no Cloudflare in front) together, rather than not at all", async () => {
    const anonymous = () =>
      limited(
        new Request(`${BASE}/oauth/register`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ client_name: "Local", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
        }),
      );
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await anonymous()).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
  });
});
