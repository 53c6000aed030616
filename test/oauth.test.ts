import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { listGrantsSql, mapGithubSql, revokeGrantSql } from "../src/auth/oauth-admin";
import worker from "../src/index";
import { ALL_TOOLS } from "../src/mcp/registry";
import { dohAnswer } from "./doh";
import { connectClient, seedIdentity, workerFetch } from "./helpers";
import { authorizeUrl, authorizeWithKey, Browser, decide, hiddenField, pkcePair, registerClient, signInWithKey, tokenRequest, type Fetcher } from "./oauth-flow";

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
    grant_type: "authorization_code", code: redirect.searchParams.get("code")!, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier, resource: `${BASE}/mcp`,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { access_token: string; refresh_token: string; scope: string };
  return { ...body, clientId, redirect };
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
    const clientId = (await (await registerClient(viaWorker, BASE, { client_name: "GH Client", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" })).json() as { client_id: string }).client_id;
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
      grant_type: "authorization_code", code: redirect.searchParams.get("code")!, redirect_uri: REDIRECT, client_id: made.client_id, code_verifier: verifier, resource: `${BASE}/mcp`,
    });
    expect(token.status, await token.clone().text()).toBe(200);
    const secretful = (await (await create(boss.key, { client_name: "Server-side connector", redirect_uris: ["https://connector.example/cb"], confidential: true })).json()) as { client_secret?: string };
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
