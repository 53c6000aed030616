import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { listGrantsSql, mapGithubSql, revokeGrantSql } from "../../src/auth/oauth-admin";
import { grantStanding } from "../../src/auth/oauth-grants";
import { revokeKeySql } from "../../src/auth/provision";
import { REFRESH_RETRY_GRACE_MS } from "../../src/auth/refresh-rotation";
import { OAUTH_PURGE_JOB, OAUTH_PURGE_LIMITS, purgeOAuth } from "../../src/cron/oauth-purge";
import worker from "../../src/index";
import { iconSvg } from "../../src/server/icons";
import { ALL_TOOLS } from "../../src/server/registry";
import { dohAnswer } from "../support/doh";
import { connectClient, seedIdentity, workerFetch } from "../support/helpers";
import { authorizeUrl, authorizeWithKey, Browser, decide, hiddenField, pkcePair, registerClient, signInWithKey, tokenRequest, type Fetcher } from "../support/oauth-flow";

const BASE = "https://ledger.test";
const REDIRECT = "http://127.0.0.1:33418/callback";
const send: Fetcher = (url, init) => workerFetch(url, init);

async function dcrClient(redirectUris = [REDIRECT]): Promise<string> {
  const res = await registerClient(send, BASE, { client_name: "Test Client", redirect_uris: redirectUris, token_endpoint_auth_method: "none" });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** A signed-in client's tokens, the way a hosted connector gets them. */
async function tokensFor(key: string, access: "full" | "readonly" = "full") {
  const clientId = await dcrClient();
  const { verifier, challenge } = await pkcePair();
  const redirect = await authorizeWithKey(send, BASE, { clientId, redirectUri: REDIRECT, challenge, key, access });
  const res = await tokenRequest(send, BASE, {
    grant_type: "authorization_code",
    code: redirect.searchParams.get("code")!,
    redirect_uri: REDIRECT,
    client_id: clientId,
    code_verifier: verifier,
    resource: `${BASE}/mcp`,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { access_token: string; refresh_token: string; scope: string };
  return { ...body, clientId, redirect };
}

/** The status /mcp answers a tools/list with this bearer token. */
async function mcpStatus(token: string): Promise<number> {
  const res = await send(`${BASE}/mcp`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${token}`, "MCP-Protocol-Version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  await res.body?.cancel();
  return res.status;
}

type TokenAnswer = { status: number; error?: string; access_token?: string; refresh_token?: string; scope?: string };

async function refreshWith(refreshToken: string, clientId: string): Promise<TokenAnswer> {
  const res = await tokenRequest(send, BASE, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });
  return { status: res.status, ...((await res.json()) as Omit<TokenAnswer, "status">) };
}

async function grantStatus(tenant: string): Promise<string[]> {
  return (await env.DB.prepare(listGrantsSql(tenant)).all<{ status: string }>()).results.map((r) => r.status);
}

const structured = (r: unknown) => (r as { structuredContent: Record<string, any> }).structuredContent;

describe("OAuth discovery", () => {
  it("publishes authorization-server metadata (RFC 8414) with PKCE S256, CIMD, DCR, revocation and iss", async () => {
    const res = await send(`${BASE}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    const meta = (await res.json()) as Record<string, any>;
    expect(meta).toMatchObject({
      issuer: BASE,
      authorization_endpoint: `${BASE}/authorize`,
      token_endpoint: `${BASE}/oauth/token`,
      registration_endpoint: `${BASE}/oauth/register`,
      revocation_endpoint: `${BASE}/oauth/token`,
      code_challenge_methods_supported: ["S256"],
      scopes_supported: ["ledger:read", "ledger:write"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      response_types_supported: ["code"],
    });
  });

  it("publishes protected-resource metadata (RFC 9728) for /mcp", async () => {
    const meta = (await (await send(`${BASE}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, any>;
    expect(meta).toMatchObject({ resource: `${BASE}/mcp`, authorization_servers: [BASE], scopes_supported: ["ledger:read", "ledger:write"] });
  });

  it("answers /mcp without a credential, or with an unknown token, with a challenge naming that metadata", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    const none = await send(`${BASE}/mcp`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
    expect(none.status).toBe(401);
    expect(none.headers.get("WWW-Authenticate")).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`);
    const forged = await send(`${BASE}/mcp`, { method: "POST", headers: { "Content-Type": "application/json", Authorization: "Bearer u:g:forged" }, body });
    expect(forged.status).toBe(401);
    expect(forged.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    expect(((await forged.json()) as { error: { code: number } }).error.code).toBe(-32001);
  });
});

describe("client registration refuses redirect URIs that are neither https nor loopback http", () => {
  it.each([
    ["remote http", ["http://app.example/callback"]],
    ["remote http beside a good one", ["http://app.example/callback", REDIRECT]],
    ["a private-use scheme beside a good one", ["cursor://anysphere.cursor-mcp/oauth/callback", REDIRECT]],
  ])("DCR: %s", async (_label, uris) => {
    const res = await registerClient(send, BASE, { client_name: "Bad", redirect_uris: uris, token_endpoint_auth_method: "none" });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; error_description: string };
    // With no compliant URI at all the provider refuses first (invalid_client_metadata); beside a compliant one, this server does.
    expect(["invalid_redirect_uri", "invalid_client_metadata"]).toContain(body.error);
    expect(body.error_description).toMatch(/https, or http on a loopback host/);
  });

  it("DCR: accepts https and loopback http (127.0.0.1, [::1], localhost)", async () => {
    await dcrClient(["https://app.example/cb", "http://127.0.0.1:9/cb", "http://[::1]:9/cb", "http://localhost:9/cb"]);
  });

  it("CIMD: a metadata document listing a remote http redirect URI is refused at /authorize; a compliant one signs in", async () => {
    const docs: Record<string, unknown> = {
      "https://client.example/bad.json": { client_id: "https://client.example/bad.json", client_name: "Bad CIMD", redirect_uris: [REDIRECT, "http://remote.example/cb"] },
      "https://client.example/good.json": { client_id: "https://client.example/good.json", client_name: "Good CIMD", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" },
    };
    const fetched: string[] = [];
    vi.mocked(globalThis.fetch).mockImplementation(async (input) => {
      const url = input instanceof Request ? input.url : String(input);
      const dns = dohAnswer(url);
      if (dns) return dns;
      fetched.push(url);
      if (docs[url]) return Response.json(docs[url], { headers: { "Cache-Control": "no-store" } });
      throw new Error(`Unexpected outbound request in a test: ${url}`);
    });
    const { challenge } = await pkcePair();
    const bad = await send(authorizeUrl(BASE, { clientId: "https://client.example/bad.json", redirectUri: REDIRECT, challenge }));
    expect(bad.status).toBe(400);
    const text = await bad.text();
    expect(text).toContain("invalid_client_metadata");
    expect(text).toContain("http://remote.example/cb");
    const good = await send(authorizeUrl(BASE, { clientId: "https://client.example/good.json", redirectUri: REDIRECT, challenge }));
    expect(good.status).toBe(200);
    expect(await good.text()).toContain("client.example");
    expect(new Set(fetched)).toEqual(new Set(["https://client.example/bad.json", "https://client.example/good.json"]));
  });
});

describe("sign-in and consent pages", () => {
  it("serve a strict CSP, refuse framing, and name the client and where access goes", async () => {
    const clientId = await dcrClient();
    const { challenge } = await pkcePair();
    const res = await send(authorizeUrl(BASE, { clientId, redirectUri: REDIRECT, challenge }));
    expect(res.status).toBe(200);
    const csp = res.headers.get("Content-Security-Policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' http://127.0.0.1:33418");
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers.get("X-Frame-Options")).toBe("DENY");
    const html = await res.text();
    expect(html).toContain("Test Client");
    expect(html).toContain("127.0.0.1");
    expect(html).toContain("an app on your computer");
    expect(html).not.toContain("<script");
  });

  it("link a favicon that the Worker serves as the server's mark, and /favicon.ico answers it too", async () => {
    const clientId = await dcrClient();
    const { challenge } = await pkcePair();
    const html = await (await send(authorizeUrl(BASE, { clientId, redirectUri: REDIRECT, challenge }))).text();
    const href = html.match(/<link rel="icon" type="image\/svg\+xml" href="([^"]+)"/)?.[1];
    expect(href, html).toBeDefined();
    for (const path of [href!, "/favicon.ico"]) {
      const icon = await send(new URL(path, BASE).href);
      expect(icon.status, path).toBe(200);
      expect(icon.headers.get("Content-Type")).toBe("image/svg+xml");
      expect(await icon.text()).toBe(iconSvg("agent-ledger"));
    }
  });

  it("refuses a sign-in form without its CSRF token, or posted from another origin", async () => {
    const id = await seedIdentity("oauth-csrf", "agent");
    const clientId = await dcrClient();
    const { challenge } = await pkcePair();
    const authorize = authorizeUrl(BASE, { clientId, redirectUri: REDIRECT, challenge });
    const browser = new Browser(send);
    const csrf = hiddenField(await (await browser.fetch(authorize)).text(), "csrf")!;
    const target = `${BASE}/authorize${new URL(authorize).search}`;
    expect((await browser.postForm(target, { api_key: id.key, signin: "key" })).status).toBe(403);
    expect((await browser.postForm(target, { csrf: "x".repeat(43), api_key: id.key, signin: "key" })).status).toBe(403);
    expect((await browser.postForm(target, { csrf, api_key: id.key, signin: "key" }, "https://evil.example")).status).toBe(403);
    // Another browser (no cookie) replaying the token is refused too.
    expect((await new Browser(send).postForm(target, { csrf, api_key: id.key, signin: "key" })).status).toBe(403);
    expect((await browser.postForm(target, { csrf, api_key: id.key, signin: "key" })).status).toBe(200);
  });

  it("says so when the pasted key is not live, and shows the consent page for a live one", async () => {
    const id = await seedIdentity("oauth-pages", "writer");
    const clientId = await dcrClient();
    const { challenge } = await pkcePair();
    const browser = new Browser(send);
    const wrong = await signInWithKey(browser, authorizeUrl(BASE, { clientId, redirectUri: REDIRECT, challenge }), "alk_not-a-key");
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("not a live API key");
    const consent = await signInWithKey(browser, authorizeUrl(BASE, { clientId, redirectUri: REDIRECT, challenge }), id.key);
    expect(consent.status).toBe(200);
    expect(consent.headers.get("X-Frame-Options")).toBe("DENY");
    const html = await consent.text();
    for (const text of ["Test Client", "writer", "oauth-pages", "ledger:read", "ledger:write", "Allow", "Deny", "tasks"]) expect(html).toContain(text);
  });

  it("Deny sends access_denied back to the client with its state and the issuer (RFC 9207)", async () => {
    const id = await seedIdentity("oauth-deny", "agent");
    const clientId = await dcrClient();
    const { challenge } = await pkcePair();
    const browser = new Browser(send);
    const consent = await signInWithKey(browser, authorizeUrl(BASE, { clientId, redirectUri: REDIRECT, challenge, state: "s-42" }), id.key);
    const back = await decide(browser, BASE, await consent.text(), "deny");
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe("s-42");
    expect(back.searchParams.get("iss")).toBe(BASE);
    expect(back.searchParams.get("code")).toBeNull();
  });

  it("requires PKCE S256 of every client", async () => {
    const clientId = await dcrClient();
    const res = await send(authorizeUrl(BASE, { clientId, redirectUri: REDIRECT }), { redirect: "manual" });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get("Location")!);
    expect(back.searchParams.get("error")).toBe("invalid_request");
  });

  it("GitHub: an unmapped user gets a clear refusal page; once mapped, the consent page", async () => {
    const ghEnv = { ...env, GITHUB_OAUTH_CLIENT_ID: "gh-client", GITHUB_OAUTH_CLIENT_SECRET: "gh-secret" };
    const viaWorker: Fetcher = async (url, init) => {
      const ctx = createExecutionContext();
      const res = await worker.fetch(new Request(url, init), ghEnv, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    };
    const exchanges: URLSearchParams[] = [];
    vi.mocked(globalThis.fetch).mockImplementation(async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url === "https://github.com/login/oauth/access_token") {
        exchanges.push(new URLSearchParams(String(init?.body)));
        return Response.json({ access_token: "gho_fake", token_type: "bearer", scope: "" });
      }
      if (url === "https://api.github.com/user") return Response.json({ login: "Octo-Cat", id: 4242 });
      throw new Error(`Unexpected outbound request in a test: ${url}`);
    });
    const id = await seedIdentity("oauth-gh", "octo");
    const clientId = ((await (await registerClient(viaWorker, BASE, { client_name: "GH Client", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" })).json()) as { client_id: string })
      .client_id;
    const { challenge } = await pkcePair();

    async function throughGithub(): Promise<Response> {
      const browser = new Browser(viaWorker);
      const authorize = authorizeUrl(BASE, { clientId, redirectUri: REDIRECT, challenge });
      const page = await browser.fetch(authorize);
      const html = await page.text();
      expect(html).toContain("Sign in with GitHub");
      expect(page.headers.get("Content-Security-Policy")).toContain("https://github.com");
      const toGithub = await browser.postForm(`${BASE}/authorize${new URL(authorize).search}`, { csrf: hiddenField(html, "csrf")!, signin: "github" });
      expect(toGithub.status).toBe(302);
      const gh = new URL(toGithub.headers.get("Location")!);
      expect(gh.origin + gh.pathname).toBe("https://github.com/login/oauth/authorize");
      expect(gh.searchParams.get("client_id")).toBe("gh-client");
      expect(gh.searchParams.get("code_challenge_method")).toBe("S256");
      expect(gh.searchParams.get("redirect_uri")).toBe(`${BASE}/oauth/github/callback`);
      return browser.fetch(`${BASE}/oauth/github/callback?code=gh-code&state=${encodeURIComponent(gh.searchParams.get("state")!)}`);
    }

    const refused = await throughGithub();
    expect(refused.status).toBe(403);
    const text = await refused.text();
    expect(text).toContain("@Octo-Cat is not mapped");
    expect(text).toContain("npm run oauth -- map-github");
    expect(exchanges[0]!.get("client_secret")).toBe("gh-secret");
    expect(exchanges[0]!.get("code_verifier")).toMatch(/^[A-Za-z0-9_-]{43}$/);

    await env.DB.prepare(mapGithubSql("Octo-Cat", "oauth-gh", "octo", "agent")).run();
    const consent = await throughGithub();
    expect(consent.status).toBe(200);
    const html = await consent.text();
    expect(html).toContain("octo");
    expect(html).toContain("oauth-gh");
    expect(id.actorName).toBe("octo");
    // The first sign-in pinned the GitHub account: another account holding the login later is refused.
    const pinned = await env.DB.prepare("SELECT github_user_id AS n FROM oauth_github_users WHERE login = 'octo-cat'").first<{ n: number }>();
    expect(pinned!.n).toBe(4242);
  });
});

describe("tokens at /mcp", () => {
  it("a full token calls tools as the key's actor, and the grant is mirrored in D1", async () => {
    const id = await seedIdentity("oauth-full", "hosted");
    const t = await tokensFor(id.key);
    expect(t.redirect.searchParams.get("iss")).toBe(BASE);
    expect(t.scope.split(" ").sort()).toEqual(["ledger:read", "ledger:write"]);
    const { client } = await connectClient(t.access_token);
    const who = structured(await client.callTool({ name: "whoami", arguments: {} }));
    expect(who.ok).toBe(true);
    expect(JSON.stringify(who)).toContain("hosted");
    const created = structured(await client.callTool({ name: "project_create", arguments: { title: "Via OAuth", key: "OAU" } }));
    expect(created.ok).toBe(true);
    const rows = await env.DB.prepare(listGrantsSql("oauth-full")).all<Record<string, string>>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]).toMatchObject({ actor: "hosted", client_name: "Test Client", scope: "ledger:read ledger:write", signed_in_with: "api_key", status: "live" });
  });

  it("a read-only token sees only read-only tools whatever the URL asks, and cannot call a write tool", async () => {
    const id = await seedIdentity("oauth-ro", "reader");
    const t = await tokensFor(id.key, "readonly");
    expect(t.scope).toBe("ledger:read");
    const { client } = await connectClient(t.access_token, "/mcp?readonly=0&toolsets=all");
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    const readOnly = new Set(ALL_TOOLS.filter((d) => d.annotations.readOnly).map((d) => d.name));
    for (const tool of tools) expect(readOnly.has(tool.name), tool.name).toBe(true);
    const write = await client.callTool({ name: "project_create", arguments: { title: "Nope", key: "NOPE" } }).catch((e: Error) => ({ isError: true, message: e.message }));
    expect(JSON.stringify(write)).toMatch(/project_create/);
    expect((write as { isError?: boolean }).isError).toBe(true);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM projects WHERE key = 'NOPE'").first<{ n: number }>()).toEqual({ n: 0 });
    // On the wire it is a step-up challenge: 403 insufficient_scope naming the scope to ask for.
    const raw = await workerFetch("http://ledger.test/mcp?toolsets=all", {
      method: "POST",
      headers: { Authorization: `Bearer ${t.access_token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "project_create", arguments: { title: "Nope", key: "NOPE" } } }),
    });
    expect(raw.status).toBe(403);
    expect(raw.headers.get("WWW-Authenticate")).toMatch(/error="insufficient_scope"/);
    expect(raw.headers.get("WWW-Authenticate")).toContain('scope="ledger:read ledger:write"');
    expect(((await raw.json()) as { id: unknown }).id).toBe(7);
  });

  it("keeps tenants apart: a token sees its own tenant's data only", async () => {
    const a = await seedIdentity("oauth-iso-a", "alice");
    const b = await seedIdentity("oauth-iso-b", "bob");
    const { client: keyB } = await connectClient(b.key);
    expect(structured(await keyB.callTool({ name: "project_create", arguments: { title: "Bob's secret", key: "BOB" } })).ok).toBe(true);
    const t = await tokensFor(a.key);
    const { client } = await connectClient(t.access_token);
    const listed = JSON.stringify(await client.callTool({ name: "project_query", arguments: {} }));
    expect(listed).not.toContain("Bob's secret");
    const rows = await env.DB.prepare(listGrantsSql("oauth-iso-b")).all();
    expect(rows.results).toHaveLength(0);
  });

  it("an operator's revoke stops the grant's access token at once and its refresh token", async () => {
    const id = await seedIdentity("oauth-revoke", "agent");
    const t = await tokensFor(id.key);
    const { client } = await connectClient(t.access_token);
    expect(structured(await client.callTool({ name: "whoami", arguments: {} })).ok).toBe(true);
    const [grant] = (await env.DB.prepare(listGrantsSql("oauth-revoke")).all<{ grant_id: string }>()).results;
    // Another tenant's slug revokes nothing.
    await seedIdentity("oauth-revoke-other", "x");
    expect((await env.DB.prepare(revokeGrantSql("oauth-revoke-other", grant!.grant_id)).all()).results).toHaveLength(0);
    expect((await env.DB.prepare(revokeGrantSql("oauth-revoke", grant!.grant_id)).all()).results).toHaveLength(1);
    const res = await send(`${BASE}/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${t.access_token}`, "MCP-Protocol-Version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toContain("resource_metadata=");
    const refresh = await tokenRequest(send, BASE, { grant_type: "refresh_token", refresh_token: t.refresh_token, client_id: t.clientId });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant");
    const [row] = (await env.DB.prepare(listGrantsSql("oauth-revoke")).all<{ status: string }>()).results;
    expect(row!.status).toBe("revoked (operator)");
  });

  it("an operator key may sign in, and its grant keeps the key's own role", async () => {
    const op = await seedIdentity("oauth-roles", "boss", { operator: true });
    const agent = await seedIdentity("oauth-roles", "worker");
    const clientId = await dcrClient();
    const { challenge } = await pkcePair();
    const asOperator = await (await signInWithKey(new Browser(send), authorizeUrl(BASE, { clientId, redirectUri: REDIRECT, challenge }), op.key)).text();
    expect(asOperator).toContain("with the operator role");
    const asAgent = await (await signInWithKey(new Browser(send), authorizeUrl(BASE, { clientId, redirectUri: REDIRECT, challenge }), agent.key)).text();
    expect(asAgent).not.toContain("operator role");
  });
});

describe("pre-registered clients (POST /oauth/clients)", () => {
  const create = (key: string | undefined, body: unknown) =>
    send(`${BASE}/oauth/clients`, { method: "POST", headers: { "Content-Type": "application/json", ...(key ? { Authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) });

  it("lets an operator register a client whose id then signs in and gets tokens; a confidential one gets a secret", async () => {
    const boss = await seedIdentity("oauth-prereg", "boss", { operator: true });
    const res = await create(boss.key, { client_name: "Team connector", redirect_uris: [REDIRECT] });
    expect(res.status, await res.clone().text()).toBe(201);
    const made = (await res.json()) as { client_id: string; client_secret?: string; token_endpoint_auth_method: string; registered_by: string };
    expect(made).toMatchObject({ token_endpoint_auth_method: "none", registered_by: "boss" });
    expect(made.client_secret).toBeUndefined();
    const { verifier, challenge } = await pkcePair();
    const redirect = await authorizeWithKey(send, BASE, { clientId: made.client_id, redirectUri: REDIRECT, challenge, key: boss.key });
    const token = await tokenRequest(send, BASE, {
      grant_type: "authorization_code",
      code: redirect.searchParams.get("code")!,
      redirect_uri: REDIRECT,
      client_id: made.client_id,
      code_verifier: verifier,
      resource: `${BASE}/mcp`,
    });
    expect(token.status, await token.clone().text()).toBe(200);
    const secretful = (await (await create(boss.key, { client_name: "Server-side connector", redirect_uris: ["https://connector.example/cb"], confidential: true })).json()) as {
      client_secret?: string;
    };
    expect(secretful.client_secret?.length).toBeGreaterThan(20);
  });

  it("refuses without an operator key, a non-loopback http redirect, and malformed bodies, registering nothing", async () => {
    const agent = await seedIdentity("oauth-prereg-agent", "agent");
    const boss = await seedIdentity("oauth-prereg-op", "boss", { operator: true });
    const good = { client_name: "X", redirect_uris: [REDIRECT] };
    expect((await create(undefined, good)).status).toBe(401);
    expect((await create("alk_not-a-key", good)).status).toBe(401);
    expect((await create(agent.key, good)).status).toBe(403);
    const plainHttp = await create(boss.key, { client_name: "X", redirect_uris: ["http://connector.example/cb"] });
    expect(plainHttp.status).toBe(400);
    expect(((await plainHttp.json()) as { error: { code: string } }).error.code).toBe("invalid_redirect_uri");
    for (const bad of [{}, { client_name: "X", redirect_uris: [] }, { ...good, extra: 1 }, { client_name: "", redirect_uris: [REDIRECT] }]) {
      const r = await create(boss.key, bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe("invalid_input");
    }
  });
});

describe("a grant ends with the API key that signed it in", () => {
  it("revoking an operator key refuses its grant's access token on /mcp and its refresh; a grant from the actor's other key lives on", async () => {
    const lead = await seedIdentity("oauth-keyend", "lead", { operator: true });
    const other = await seedIdentity("oauth-keyend", "lead", { operator: true });
    const t = await tokensFor(lead.key);
    const kept = await tokensFor(other.key);
    expect(await mcpStatus(t.access_token)).toBe(200);
    const [row] = (await env.DB.prepare("SELECT key_id FROM oauth_grants g JOIN api_keys k ON k.id = g.key_id WHERE k.prefix = ?").bind(lead.key.slice(0, 10)).all()).results;
    expect(row).toBeDefined();

    await env.DB.prepare(revokeKeySql(lead.key.slice(0, 10))).run();
    // No wait: the grant's row and its key are read on every request, so the revocation window is the next request.
    expect(await mcpStatus(t.access_token)).toBe(401);
    const refresh = await refreshWith(t.refresh_token, t.clientId);
    expect(refresh).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(refresh.access_token).toBeUndefined();
    expect(await mcpStatus(kept.access_token)).toBe(200);
    expect((await grantStatus("oauth-keyend")).sort()).toEqual(["live", "revoked (key_revoked)"]);
  });

  it("a GitHub grant stands while its login maps to the same actor, takes the mapping's current role, and ends when it is remapped", async () => {
    const a = await seedIdentity("oauth-ghmap", "gh-a");
    const b = await seedIdentity("oauth-ghmap", "gh-b");
    await env.DB.prepare(mapGithubSql("map-user", "oauth-ghmap", "gh-a", "operator")).run();
    const now = new Date();
    await env.DB.prepare(
      `INSERT INTO oauth_grants (grant_id, tenant_id, actor_id, user_id, client_id, client_name, redirect_uri, scope, signed_in_with, github_login, created_at, expires_at)
       VALUES ('ghgrant-1', ?, ?, ?, 'c', 'C', ?, 'ledger:read ledger:write', 'github', 'map-user', ?, ?)`,
    )
      .bind(a.tenantId, a.actorId, a.actorId, REDIRECT, now.toISOString(), new Date(now.getTime() + 3_600_000).toISOString())
      .run();
    expect(await grantStanding(env.DB, "ghgrant-1", a.tenantId)).toMatchObject({ operator: true });
    await env.DB.prepare(mapGithubSql("map-user", "oauth-ghmap", "gh-a", "agent")).run();
    expect(await grantStanding(env.DB, "ghgrant-1", a.tenantId)).toMatchObject({ operator: false });
    await env.DB.prepare(mapGithubSql("map-user", "oauth-ghmap", b.actorName, "agent")).run();
    expect(await grantStanding(env.DB, "ghgrant-1", a.tenantId)).toBeNull();
    expect(await grantStatus("oauth-ghmap")).toEqual(["revoked (github_mapping_changed)"]);
  });
});

describe("refresh-token rotation and reuse", () => {
  const ageRotations = (grantId: string) =>
    env.DB.prepare("UPDATE oauth_refresh_tokens SET rotated_at = ? WHERE grant_id = ?")
      .bind(new Date(Date.now() - REFRESH_RETRY_GRACE_MS - 1000).toISOString(), grantId)
      .run();
  const grantOf = (token: string) => token.split(":")[1]!;

  it("a chain of refreshes works, each new access token calls /mcp", async () => {
    const id = await seedIdentity("oauth-rot-chain", "a");
    const t = await tokensFor(id.key);
    let refresh = t.refresh_token;
    for (let i = 0; i < 3; i++) {
      const next = await refreshWith(refresh, t.clientId);
      expect(next.status, next.error).toBe(200);
      expect(await mcpStatus(next.access_token!)).toBe(200);
      refresh = next.refresh_token!;
    }
    expect(await grantStatus("oauth-rot-chain")).toEqual(["live"]);
  });

  it("a rotated-out token presented after the grace window is refused and ends the grant: the client's current tokens die too", async () => {
    const id = await seedIdentity("oauth-rot-reuse", "a");
    const t = await tokensFor(id.key);
    const client = await refreshWith(t.refresh_token, t.clientId);
    expect(client.status).toBe(200);
    await ageRotations(grantOf(t.refresh_token));
    const thief = await refreshWith(t.refresh_token, t.clientId);
    expect(thief).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(thief.access_token).toBeUndefined();
    expect(await refreshWith(client.refresh_token!, t.clientId)).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(await mcpStatus(client.access_token!)).toBe(401);
    expect(await mcpStatus(t.access_token)).toBe(401);
    expect(await grantStatus("oauth-rot-reuse")).toEqual(["revoked (refresh_reuse)"]);
  });

  it("tolerates one retry of the just-rotated token within the grace window; a second ends the grant", async () => {
    const id = await seedIdentity("oauth-rot-retry", "a");
    const t = await tokensFor(id.key);
    expect((await refreshWith(t.refresh_token, t.clientId)).status).toBe(200);
    const retried = await refreshWith(t.refresh_token, t.clientId);
    expect(retried.status, retried.error).toBe(200);
    expect(await mcpStatus(retried.access_token!)).toBe(200);
    expect(await refreshWith(t.refresh_token, t.clientId)).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(await refreshWith(retried.refresh_token!, t.clientId)).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(await mcpStatus(retried.access_token!)).toBe(401);
  });

  it("after a tolerated retry, the token the first rotation issued is spent: whoever presents it ends the grant", async () => {
    const id = await seedIdentity("oauth-rot-race", "a");
    const t = await tokensFor(id.key);
    const first = await refreshWith(t.refresh_token, t.clientId);
    const second = await refreshWith(t.refresh_token, t.clientId);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(await refreshWith(first.refresh_token!, t.clientId)).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(await refreshWith(second.refresh_token!, t.clientId)).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(await grantStatus("oauth-rot-race")).toEqual(["revoked (refresh_reuse)"]);
  });

  it("a token two rotations back ends the grant at once, even within the grace window", async () => {
    const id = await seedIdentity("oauth-rot-old", "a");
    const t = await tokensFor(id.key);
    const r2 = await refreshWith(t.refresh_token, t.clientId);
    const r3 = await refreshWith(r2.refresh_token!, t.clientId);
    expect(r3.status).toBe(200);
    expect(await refreshWith(t.refresh_token, t.clientId)).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(await refreshWith(r3.refresh_token!, t.clientId)).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(await mcpStatus(r3.access_token!)).toBe(401);
  });

  it("a token request past the body cap is refused before anything reads it, in the OAuth error shape", async () => {
    const res = await tokenRequest(send, BASE, { grant_type: "refresh_token", refresh_token: "x".repeat(70 * 1024), client_id: "c" });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: "invalid_request", error_description: expect.stringContaining("64 KiB") });
  });

  it("a made-up token naming the grant is refused without ending it (knowing a grant id is no power over it)", async () => {
    const id = await seedIdentity("oauth-rot-forged", "a");
    const t = await tokensFor(id.key);
    const [user, grant] = t.refresh_token.split(":");
    for (let i = 0; i < 3; i++) expect((await refreshWith(`${user}:${grant}:forged${i}`, t.clientId)).status).toBe(400);
    const still = await refreshWith(t.refresh_token, t.clientId);
    expect(still.status, still.error).toBe(200);
    expect(await grantStatus("oauth-rot-forged")).toEqual(["live"]);
  });
});

describe("consent never grants more than the client asked", () => {
  it("a client that asked only to read is offered only read, and a form posting access=full still gets read only", async () => {
    const id = await seedIdentity("oauth-scopecap", "reader");
    const clientId = await dcrClient();
    const { verifier, challenge } = await pkcePair();
    const browser = new Browser(send);
    const consent = await signInWithKey(browser, authorizeUrl(BASE, { clientId, redirectUri: REDIRECT, challenge, scope: "ledger:read" }), id.key);
    expect(consent.status).toBe(200);
    const html = await consent.text();
    expect(html).toContain('value="readonly"');
    expect(html).not.toContain('value="full"');
    const back = await decide(browser, BASE, html, "allow", "full");
    const res = await tokenRequest(send, BASE, {
      grant_type: "authorization_code",
      code: back.searchParams.get("code")!,
      redirect_uri: REDIRECT,
      client_id: clientId,
      code_verifier: verifier,
      resource: `${BASE}/mcp`,
    });
    const token = (await res.json()) as { access_token: string; scope: string };
    expect(token.scope).toBe("ledger:read");
    const [row] = (await env.DB.prepare(listGrantsSql("oauth-scopecap")).all<{ scope: string }>()).results;
    expect(row!.scope).toBe("ledger:read");
    const { client } = await connectClient(token.access_token, "/mcp?toolsets=all");
    const write = await client.callTool({ name: "project_create", arguments: { title: "Nope", key: "CAPX" } }).catch(() => ({ isError: true }));
    expect((write as { isError?: boolean }).isError).toBe(true);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM projects WHERE key = 'CAPX'").first<{ n: number }>()).toEqual({ n: 0 });
  });
});

describe("oauth_purge", () => {
  const unbounded = { ...OAUTH_PURGE_LIMITS, providerBatch: 10_000 };
  const later = () => new Date(Date.now() + 10 * 60_000);

  it("purges expired grants from KV, deletes key-revoked grants there, marks grants the provider dropped, drops their rotation records", async () => {
    const id = await seedIdentity("oauth-purge", "a");
    const revokedByClient = await tokensFor(id.key);
    const keyGone = await seedIdentity("oauth-purge", "b");
    const byKey = await tokensFor(keyGone.key);
    expect((await refreshWith(byKey.refresh_token, byKey.clientId)).status).toBe(200);
    const byKeyGrant = byKey.refresh_token.split(":").slice(0, 2);

    // RFC 7009: the client revokes its refresh token; the provider deletes the grant, the mirror still says live.
    const revoke = await send(`${BASE}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: revokedByClient.refresh_token, token_type_hint: "refresh_token", client_id: revokedByClient.clientId }).toString(),
    });
    expect(revoke.status).toBe(200);
    await env.DB.prepare(revokeKeySql(keyGone.key.slice(0, 10))).run();
    // An expired grant the provider still holds (KV's own expiry is the first line; the purge is the second).
    const expired = { id: "expiredgrant0001", clientId: byKey.clientId, userId: "purge-user", scope: ["ledger:read"], createdAt: 1, expiresAt: 2 };
    await env.OAUTH_KV.put("grant:purge-user:expiredgrant0001", JSON.stringify(expired));
    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM oauth_refresh_tokens WHERE grant_id = ?").bind(byKeyGrant[1]).first<{ n: number }>();
    expect(before!.n).toBe(1);

    const detail = await purgeOAuth(env, later(), unbounded);
    expect(detail).toMatch(/sweep complete/);
    expect(await env.OAUTH_KV.get("grant:purge-user:expiredgrant0001")).toBeNull();
    expect(await env.OAUTH_KV.get(`grant:${byKeyGrant[0]}:${byKeyGrant[1]}`)).toBeNull();
    const statuses = (await env.DB.prepare(listGrantsSql("oauth-purge")).all<{ actor: string; status: string }>()).results;
    expect(Object.fromEntries(statuses.map((r) => [r.actor, r.status]))).toEqual({ a: "revoked (ended_by_provider)", b: "revoked (key_revoked)" });
    const after = await env.DB.prepare("SELECT COUNT(*) AS n FROM oauth_refresh_tokens WHERE grant_id = ?").bind(byKeyGrant[1]).first<{ n: number }>();
    expect(after!.n).toBe(0);
  });

  it("leaves a live grant live, and a grant the provider still holds is only checked", async () => {
    const id = await seedIdentity("oauth-purge-live", "a");
    const t = await tokensFor(id.key);
    await purgeOAuth(env, later(), unbounded);
    expect(await grantStatus("oauth-purge-live")).toEqual(["live"]);
    expect(await mcpStatus(t.access_token)).toBe(200);
  });

  it("works in bounded batches and resumes where it stopped", async () => {
    for (let i = 0; i < 3; i++)
      await env.OAUTH_KV.put(`grant:batch-user:batchgrant000${i}`, JSON.stringify({ id: `batchgrant000${i}`, clientId: "gone", userId: "batch-user", scope: [], createdAt: 1, expiresAt: 2 }));
    const first = await purgeOAuth(env, later(), { ...OAUTH_PURGE_LIMITS, providerBatch: 1 });
    expect(first).toMatch(/more next run/);
    const cursor = await env.DB.prepare("SELECT cursor FROM cron_cursors WHERE job = ?").bind(OAUTH_PURGE_JOB).first<{ cursor: string }>();
    expect(cursor!.cursor).not.toBe("");
    for (let i = 0; i < 50 && (await env.OAUTH_KV.list({ prefix: "grant:batch-user:" })).keys.length > 0; i++) await purgeOAuth(env, later(), { ...OAUTH_PURGE_LIMITS, providerBatch: 1 });
    expect((await env.OAUTH_KV.list({ prefix: "grant:batch-user:" })).keys).toHaveLength(0);
  });
});
