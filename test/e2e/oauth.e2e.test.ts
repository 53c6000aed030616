/**
 * OAuth as a hosted connector meets it, against `wrangler dev`: the MCP SDK's client OAuth support
 * (discovery from the 401, registration by CIMD and DCR, PKCE, token, refresh), with the sign-in and
 * consent forms submitted as the person at the browser would, then the failures a client can hit.
 */
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { describe, expect, inject, it } from "vitest";
import { operatorCommand } from "../../scripts/wrangler";
import { authorizeUrl, Browser, decide, pkcePair, signInWithKey, tokenRequest, type Fetcher } from "../support/oauth-flow";
import { ACCESS_TOKEN_TTL_SECONDS, E2E_REDIRECT as REDIRECT } from "./support/oauth-server";

const send: Fetcher = (url, init) => fetch(url, init);

/** An in-memory OAuthClientProvider whose "browser" is the test: it keeps the authorization URL for the test to open. */
class TestProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorization?: URL;
  constructor(readonly clientMetadataUrl?: string) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "E2E DCR client", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorization = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const base = inject("baseUrl");
const srv = {
  key: inject("oauthKey"),
  cimdClientId: inject("cimdClientId"),
  oauth: (args: string[]) => operatorCommand("oauth", args, { persistTo: inject("persistTo"), env: { XDG_CONFIG_HOME: inject("configHome") } }),
  keys: (args: string[]) => operatorCommand("keys", args, { persistTo: inject("persistTo"), env: { XDG_CONFIG_HOME: inject("configHome") } }),
};

const mcpClient = async (provider: TestProvider, query = "") => {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp${query}`), { authProvider: provider });
  const client = new Client({ name: "e2e-oauth", version: "1.0.0" });
  await client.connect(transport);
  return client;
};

/** What the person at the browser does with the URL the client opened: sign in with a key, choose, allow. */
async function consentInBrowser(authorization: URL, key: string, access: "full" | "readonly" = "full"): Promise<URL> {
  const browser = new Browser(send);
  const consent = await signInWithKey(browser, authorization.toString(), key);
  expect(consent.status).toBe(200);
  return decide(browser, base, await consent.text(), "allow", access);
}

/** The SDK client's whole first connection: 401, discovery, registration, authorization, token, then a connected client. */
async function connectWithOAuth(provider: TestProvider, access: "full" | "readonly" = "full", query = ""): Promise<{ client: Client; back: URL }> {
  await expect(mcpClient(provider, query)).rejects.toThrow(/Unauthorized/);
  expect(provider.authorization).toBeDefined();
  const back = await consentInBrowser(provider.authorization!, srv.key, access);
  expect(await auth(provider, { serverUrl: `${base}/mcp`, authorizationCode: back.searchParams.get("code")! })).toBe("AUTHORIZED");
  return { client: await mcpClient(provider, query), back };
}

/** The HTTP status /mcp answers a tools/list with this bearer token. */
async function mcpStatus(token: string): Promise<number> {
  const res = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${token}`, "MCP-Protocol-Version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  await res.body?.cancel();
  return res.status;
}

const structured = (r: unknown) => (r as { structuredContent: Record<string, any> }).structuredContent;

/** A token from the front channel by hand, for the failure cases the SDK would never send. */
async function codeFor(clientId: string, challenge: string): Promise<string> {
  const back = await consentInBrowser(new URL(authorizeUrl(base, { clientId, redirectUri: REDIRECT, challenge })), srv.key);
  return back.searchParams.get("code")!;
}

let early: { token: string; at: number };

describe("OAuth end to end (wrangler dev, MCP SDK client)", () => {
  it("DCR: discovery from the 401, registration, PKCE authorization with consent, token, a tool call", async () => {
    const provider = new TestProvider();
    const { client, back } = await connectWithOAuth(provider);
    const url = provider.authorization!;
    expect(url.origin + url.pathname).toBe(`${base}/authorize`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("resource")).toBe(`${base}/mcp`);
    expect(back.searchParams.get("iss")).toBe(base);
    expect(provider.info?.client_id).toBeTruthy();
    expect(provider.info?.client_id).not.toMatch(/^https:/);
    const who = structured(await client.callTool({ name: "whoami", arguments: {} }));
    expect(who.ok).toBe(true);
    expect(JSON.stringify(who)).toContain("hosted");
    early = { token: provider.saved!.access_token, at: Date.now() };
    expect(provider.saved!.expires_in).toBe(ACCESS_TOKEN_TTL_SECONDS);
    await client.close();
  });

  it("CIMD: the client id is its metadata document's URL, fetched by the server", async () => {
    const provider = new TestProvider(srv.cimdClientId);
    const { client } = await connectWithOAuth(provider);
    expect(provider.info?.client_id).toBe(srv.cimdClientId);
    expect(provider.authorization!.searchParams.get("client_id")).toBe(srv.cimdClientId);
    expect(structured(await client.callTool({ name: "whoami", arguments: {} })).ok).toBe(true);
    await client.close();
  });

  it("refreshes with rotation: the newest refresh token works; a superseded one is refused and ends the grant", async () => {
    const provider = new TestProvider();
    (await connectWithOAuth(provider)).client.close();
    const clientId = provider.info!.client_id;
    const r0 = provider.saved!.refresh_token!;
    const first = await tokenRequest(send, base, { grant_type: "refresh_token", refresh_token: r0, client_id: clientId });
    expect(first.status).toBe(200);
    const t1 = (await first.json()) as OAuthTokens;
    expect(t1.refresh_token).not.toBe(r0);
    const second = await tokenRequest(send, base, { grant_type: "refresh_token", refresh_token: t1.refresh_token!, client_id: clientId });
    expect(second.status).toBe(200);
    const t2 = (await second.json()) as OAuthTokens;
    provider.saved = t2;
    const client = await mcpClient(provider);
    expect(structured(await client.callTool({ name: "whoami", arguments: {} })).ok).toBe(true);
    await client.close();
    // Reuse of a rotated-out token is theft or a broken client: the whole grant ends (RFC 9700 §4.14.2).
    const stale = await tokenRequest(send, base, { grant_type: "refresh_token", refresh_token: r0, client_id: clientId });
    expect(stale.status).toBe(400);
    expect(((await stale.json()) as { error: string }).error).toBe("invalid_grant");
    expect(await mcpStatus(t2.access_token)).toBe(401);
  });

  it("revocation (RFC 7009) ends an access token; an operator's revoke ends a grant", async () => {
    const provider = new TestProvider();
    (await connectWithOAuth(provider)).client.close();
    const clientId = provider.info!.client_id;
    const revoked = await tokenRequest(send, base, { token: provider.saved!.access_token, token_type_hint: "access_token", client_id: clientId });
    expect(revoked.status).toBe(200);
    expect(await mcpStatus(provider.saved!.access_token)).toBe(401);

    const again = new TestProvider();
    (await connectWithOAuth(again)).client.close();
    const grants = JSON.parse(await srv.oauth(["grants", "--tenant", "e2e-oauth", "--quiet"])) as Array<{ grant_id: string; status: string; client_name: string }>;
    const live = grants.filter((g) => g.status === "live");
    expect(live.length).toBeGreaterThan(0);
    expect(await mcpStatus(again.saved!.access_token)).toBe(200);
    for (const g of live) await srv.oauth(["revoke", "--tenant", "e2e-oauth", "--grant", g.grant_id, "--quiet"]);
    expect(await mcpStatus(again.saved!.access_token)).toBe(401);
    const refresh = await tokenRequest(send, base, { grant_type: "refresh_token", refresh_token: again.saved!.refresh_token!, client_id: again.info!.client_id });
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant");
  }, 180_000);

  it("revoking the API key a grant was signed in with ends the grant: its access token and its refresh are refused", async () => {
    const key = (await srv.keys(["create", "--tenant", "e2e-oauth", "--actor", "revokee", "--quiet"])).trim();
    const provider = new TestProvider();
    await expect(mcpClient(provider)).rejects.toThrow(/Unauthorized/);
    const back = await consentInBrowser(provider.authorization!, key);
    expect(await auth(provider, { serverUrl: `${base}/mcp`, authorizationCode: back.searchParams.get("code")! })).toBe("AUTHORIZED");
    expect(await mcpStatus(provider.saved!.access_token)).toBe(200);
    await srv.keys(["revoke", "--prefix", key.slice(0, 10), "--quiet"]);
    expect(await mcpStatus(provider.saved!.access_token)).toBe(401);
    const refresh = await tokenRequest(send, base, { grant_type: "refresh_token", refresh_token: provider.saved!.refresh_token!, client_id: provider.info!.client_id });
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant");
    const grants = JSON.parse(await srv.oauth(["grants", "--tenant", "e2e-oauth", "--quiet"])) as Array<{ actor: string; status: string }>;
    expect(grants.filter((g) => g.actor === "revokee").map((g) => g.status)).toEqual(["revoked (key_revoked)"]);
  }, 180_000);

  it("a rotated-out refresh token presented once more than the one tolerated retry ends the grant, the newest tokens with it", async () => {
    const provider = new TestProvider();
    (await connectWithOAuth(provider)).client.close();
    const refresh = async (token: string) => {
      const res = await tokenRequest(send, base, { grant_type: "refresh_token", refresh_token: token, client_id: provider.info!.client_id });
      return { status: res.status, ...((await res.json()) as { error?: string; access_token?: string; refresh_token?: string }) };
    };
    const first = provider.saved!.refresh_token!;
    expect((await refresh(first)).status).toBe(200);
    const retried = await refresh(first);
    expect(retried.status).toBe(200);
    expect(await refresh(first)).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(await refresh(retried.refresh_token!)).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(await mcpStatus(retried.access_token!)).toBe(401);
  }, 180_000);

  it("refuses a wrong verifier, a reused code, a wrong redirect URI and a wrong resource", async () => {
    const provider = new TestProvider();
    (await connectWithOAuth(provider)).client.close();
    const clientId = provider.info!.client_id;
    const { verifier, challenge } = await pkcePair();
    const exchange = (code: string, over: Record<string, string> = {}) =>
      tokenRequest(send, base, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier, resource: `${base}/mcp`, ...over });
    const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

    expect(await errorOf(await exchange(await codeFor(clientId, challenge), { code_verifier: (await pkcePair()).verifier }))).toBe("invalid_grant");
    const code = await codeFor(clientId, challenge);
    expect((await exchange(code)).status).toBe(200);
    expect(await errorOf(await exchange(code))).toBe("invalid_grant");
    expect(await errorOf(await exchange(await codeFor(clientId, challenge), { redirect_uri: "http://127.0.0.1:47616/other" }))).toBe("invalid_grant");
    expect(await errorOf(await exchange(await codeFor(clientId, challenge), { resource: "https://elsewhere.example/mcp" }))).toBe("invalid_target");
    // At the authorization endpoint, another resource is answered at the client's redirect URI.
    const wrong = await fetch(authorizeUrl(base, { clientId, redirectUri: REDIRECT, challenge, resource: "https://elsewhere.example/mcp" }), { redirect: "manual" });
    expect(wrong.status).toBe(302);
    expect(new URL(wrong.headers.get("Location")!).searchParams.get("error")).toBe("invalid_target");
    // A redirect URI the client never registered is never redirected to.
    const unregistered = await fetch(authorizeUrl(base, { clientId, redirectUri: "http://127.0.0.1:47616/other", challenge }), { redirect: "manual" });
    expect(unregistered.status).toBe(400);
  });

  it("a read-only token lists only read tools and cannot call a write tool, whatever the URL asks", async () => {
    const provider = new TestProvider();
    const { client } = await connectWithOAuth(provider, "readonly", "?readonly=0");
    expect(provider.saved!.scope).toBe("ledger:read");
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("blame");
    for (const write of ["project_create", "task_create", "log_change", "whoami"]) expect(names).not.toContain(write);
    const write = await client.callTool({ name: "project_create", arguments: { title: "Nope", key: "NOPE" } }).catch((e: Error) => ({ isError: true, error: e.message }));
    expect((write as { isError?: boolean }).isError).toBe(true);
    await client.close();
  });

  it(
    "an expired access token is refused with the challenge, so the client refreshes",
    async () => {
      const wait = early.at + (ACCESS_TOKEN_TTL_SECONDS + 2) * 1000 - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const res = await fetch(`${base}/mcp`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${early.token}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get("WWW-Authenticate")).toMatch(/error="invalid_token"/);
      expect(res.headers.get("WWW-Authenticate")).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    },
    (ACCESS_TOKEN_TTL_SECONDS + 30) * 1000,
  );

  it("API keys keep working on /mcp beside OAuth", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${inject("keyB")}` } } });
    const client = new Client({ name: "e2e-key", version: "1.0.0" });
    await client.connect(transport);
    expect(JSON.stringify(structured(await client.callTool({ name: "whoami", arguments: {} })))).toContain("cursor");
    await client.close();
  });
});
