/** The GitHub client (src/git/client.ts), credentials (src/git/credentials.ts) and safe tokens (src/git/tokens.ts). */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EtagCache, GitHubClient, GitHubError } from "../../src/git/client";
import { appJwt, clearInstallationTokens, decryptToken, encryptToken, githubFor, githubToolError, pemToPkcs8 } from "../../src/git/credentials";
import { isProtectedBranch, isSafeRef, isSafeRepoPath, parseOwnerName, parseRange } from "../../src/git/tokens";
import { cleanText } from "../../src/git/untrusted";
import { compact } from "../../src/git/output";
import { ToolError } from "../../src/core/errors";
import { errorBody, example, FAKE_API, FakeGitHub } from "../support/github/fake";
import { seedIdentity } from "../support/helpers";

const REPO = { owner: "octocat", repo: "Hello-World" };
// GitHub's own example lacks `language`, which its schema requires; a real answer has it.
const repoBody = () => example("GET /repos/{owner}/{repo}", { default_branch: "main", language: "TypeScript", source: { language: "TypeScript" } });

function client(gh: FakeGitHub, opts: { waits?: number[]; maxWaitMs?: number; etags?: EtagCache; token?: string } = {}) {
  return new GitHubClient({
    apiBase: gh.apiBase,
    token: async () => opts.token ?? "ghs_test",
    fetch: gh.fetch,
    etags: opts.etags ?? new EtagCache(),
    sleep: async (ms) => void opts.waits?.push(ms),
    maxWaitMs: opts.maxWaitMs,
  });
}

describe("safe tokens", () => {
  it("accepts the seed's ref tokens and refuses the rest", () => {
    for (const ok of ["main", "feature/a-b", "release/1.2.3", "v1.0.0", "a+b", "0123abc"]) expect(isSafeRef(ok), ok).toBe(true);
    for (const bad of ["", "-x", "a..b", "a@{1}", "a//b", "a/", "x.lock", "x.", "a b", "a;b", "a~1", "a^", "/abs", "x".repeat(257)]) expect(isSafeRef(bad), bad).toBe(false);
  });

  it("parses ranges and owner/name, refusing anything that could steer a URL", () => {
    expect(parseRange("main..feature")).toEqual({ kind: "two-dot", base: "main", head: "feature" });
    expect(parseRange("main...feature")).toEqual({ kind: "three-dot", base: "main", head: "feature" });
    expect(parseRange("HEAD")).toEqual({ kind: "single", ref: "HEAD" });
    for (const bad of ["a....b", "a..b..c", "..b", "a~1..b"]) expect(parseRange(bad), bad).toBeNull();
    expect(parseOwnerName("octocat/Hello-World")).toEqual({ owner: "octocat", name: "Hello-World" });
    expect(parseOwnerName("octocat/Hello-World.git")).toEqual({ owner: "octocat", name: "Hello-World" });
    for (const bad of ["octocat", "a/b/c", "../x", "oc tocat/x", "octocat/..", "-bad/x", "a--/x", "evil.com/x?y"]) expect(parseOwnerName(bad), bad).toBeNull();
  });

  it("knows the protected branches and safe repository paths", () => {
    for (const p of ["main", "MASTER", "develop", "release/2.0", "release-2", "hotfix/x", "production", "HEAD"]) expect(isProtectedBranch(p), p).toBe(true);
    for (const p of ["feature/x", "releases", "mainline"]) expect(isProtectedBranch(p), p).toBe(false);
    for (const p of ["src/a.ts", "README.md", "a/b/c"]) expect(isSafeRepoPath(p), p).toBe(true);
    for (const p of ["", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a\\b", "a\u0000b"]) expect(isSafeRepoPath(p), p).toBe(false);
  });

  it("cleans control and invisible characters from GitHub text, and compacts payloads", () => {
    expect(cleanText("fix: bug\u202e\u200b\u0007 done\n\tok")).toBe("fix: bug done\n\tok");
    expect(compact({ a: 0, b: null, c: false, d: "", e: [], f: {}, g: { h: undefined, i: 1 }, j: [{ k: "" }] })).toEqual({ a: 0, g: { i: 1 }, j: [{}] });
  });
});

describe("GitHubClient", () => {
  it("calls only the configured API base, with the token and the API version, encoding path values", async () => {
    const gh = new FakeGitHub().on("GET /repos/{owner}/{repo}/contents/{path}", (req) => ({ status: 404, body: errorBody(`no ${req.path.path}`) }));
    const c = client(gh);
    const err = await c.request("GET /repos/{owner}/{repo}/contents/{path}", { ...REPO, path: "docs/a b#c.md" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitHubError);
    expect(err).toMatchObject({ code: "github_not_found", status: 404, retryable: false });
    expect(gh.requests[0]!.path.path).toBe("docs/a b#c.md");
    expect(gh.requests[0]!.headers.get("authorization")).toBe("Bearer ghs_test");
    expect(gh.requests[0]!.headers.get("x-github-api-version")).toBe("2022-11-28");
    expect(c.url("GET /repos/{owner}/{repo}", { owner: "a/../../evil", repo: "x" }).href).toBe(`${FAKE_API}/repos/a%2F..%2F..%2Fevil/x`);
    expect(() => new GitHubClient({ apiBase: "http://api.github.com", token: async () => "t" })).toThrow(/https/);
  });

  it("supports a GitHub Enterprise base path", async () => {
    const gh = new FakeGitHub("https://ghe.example.test/api/v3").on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }));
    const res = await client(gh).request<{ default_branch: string }>("GET /repos/{owner}/{repo}", REPO);
    expect(res.data.default_branch).toBe("main");
  });

  it("reuses an ETag: a 304 answers from the cache, per token", async () => {
    const etags = new EtagCache();
    let calls = 0;
    const gh = new FakeGitHub().on("GET /repos/{owner}/{repo}", (req) => {
      calls++;
      if (req.headers.get("if-none-match") === '"v1"') return { status: 304, headers: { etag: '"v1"' } };
      return { body: repoBody(), headers: { etag: '"v1"' } };
    });
    const c = client(gh, { etags });
    expect((await c.request<{ default_branch: string }>("GET /repos/{owner}/{repo}", REPO)).data.default_branch).toBe("main");
    const second = await c.request<{ default_branch: string }>("GET /repos/{owner}/{repo}", REPO);
    expect(second.data.default_branch).toBe("main");
    expect(gh.requests[1]!.headers.get("if-none-match")).toBe('"v1"');
    expect(calls).toBe(2);
    // Another token never gets this token's cached answer.
    await client(gh, { etags, token: "ghs_other" }).request("GET /repos/{owner}/{repo}", REPO);
    expect(gh.requests[2]!.headers.get("if-none-match")).toBeNull();
  });

  it("waits out retry-after on a rate limit, then succeeds", async () => {
    let n = 0;
    const gh = new FakeGitHub().on("GET /repos/{owner}/{repo}", () =>
      ++n === 1 ? { status: 429, body: errorBody("API rate limit exceeded"), headers: { "retry-after": "2" } } : { body: repoBody() },
    );
    const waits: number[] = [];
    expect((await client(gh, { waits }).request("GET /repos/{owner}/{repo}", REPO)).status).toBe(200);
    expect(waits).toEqual([2000]);
  });

  it("gives up with a retryable github_rate_limited naming the reset when the wait is too long", async () => {
    const reset = Math.floor(Date.now() / 1000) + 3600;
    const gh = new FakeGitHub().on("GET /repos/{owner}/{repo}", () => ({
      status: 403,
      body: errorBody("API rate limit exceeded for installation"),
      headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) },
    }));
    const waits: number[] = [];
    const err = (await client(gh, { waits })
      .request("GET /repos/{owner}/{repo}", REPO)
      .catch((e: unknown) => e)) as GitHubError;
    expect(err).toMatchObject({ code: "github_rate_limited", retryable: true, resetAt: new Date(reset * 1000).toISOString() });
    expect(waits).toEqual([]);
    const tool = githubToolError(err) as ToolError;
    expect(tool).toBeInstanceOf(ToolError);
    expect(tool.hint).toContain(new Date(reset * 1000).toISOString());
  });

  it("backs off on a secondary rate limit without retry-after, within the wait budget", async () => {
    let n = 0;
    const gh = new FakeGitHub().on("GET /repos/{owner}/{repo}", () => (++n === 1 ? { status: 403, body: errorBody("You have exceeded a secondary rate limit") } : { body: repoBody() }));
    const waits: number[] = [];
    await client(gh, { waits, maxWaitMs: 120_000 }).request("GET /repos/{owner}/{repo}", REPO);
    expect(waits).toEqual([60_000]);
  });

  it("retries server errors with backoff, then reports github_unavailable", async () => {
    let n = 0;
    const flaky = new FakeGitHub().on("GET /repos/{owner}/{repo}", () => (++n < 3 ? { status: 502, body: errorBody("Bad Gateway") } : { body: repoBody() }));
    const waits: number[] = [];
    expect((await client(flaky, { waits }).request("GET /repos/{owner}/{repo}", REPO)).status).toBe(200);
    expect(waits).toEqual([500, 1500]);
    const down = new FakeGitHub().on("GET /repos/{owner}/{repo}", () => ({ status: 503, body: errorBody("Service Unavailable") }));
    expect(
      await client(down)
        .request("GET /repos/{owner}/{repo}", REPO)
        .catch((e: unknown) => e),
    ).toMatchObject({ code: "github_unavailable", retryable: true });
    expect(down.requests).toHaveLength(3);
  });

  it("cleans GitHub's error words of control and invisible characters", async () => {
    const gh = new FakeGitHub().on("POST /repos/{owner}/{repo}/merges", () => ({ status: 409, body: errorBody("Merge conflict in src/\u202eevil\u200b.ts\u0007") }));
    const err = (await client(gh)
      .request("POST /repos/{owner}/{repo}/merges", REPO, { base: "main", head: "x" })
      .catch((e: unknown) => e)) as Error;
    expect(err.message).toContain("Merge conflict in src/evil.ts");
    for (const ch of ["\u202e", "\u200b", "\u0007"]) expect(err.message).not.toContain(ch);
  });

  it("maps 401, 403, 409 and 422 to stable codes with GitHub's message", async () => {
    for (const [status, code] of [
      [401, "github_auth_failed"],
      [403, "github_forbidden"],
      [409, "github_conflict"],
      [422, "github_unprocessable"],
    ] as const) {
      const gh = new FakeGitHub().on("POST /repos/{owner}/{repo}/merges", () => ({ status, body: errorBody(`nope ${status}`) }));
      const err = await client(gh)
        .request("POST /repos/{owner}/{repo}/merges", REPO, { base: "main", head: "feature" })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code, status });
      expect((err as Error).message).toContain(`nope ${status}`);
    }
  });
});

describe("the fake GitHub itself refuses what GitHub's description does not allow", () => {
  it("unknown operations, unknown query or body fields, missing required body fields, and fixtures off-schema", async () => {
    const gh = new FakeGitHub().on("GET /repos/{owner}/{repo}", () => ({ body: { name: 42 } }));
    const c = client(gh);
    await expect(c.request("GET /repos/{owner}/{repo}/nothing-here", REPO)).rejects.toThrow(/no operation/);
    await expect(c.request("GET /repos/{owner}/{repo}", { ...REPO, bogus: "1" })).rejects.toThrow(/unknown query parameter bogus/);
    await expect(c.request("POST /repos/{owner}/{repo}/git/trees", REPO, { base_tree: "x" })).rejects.toThrow(/lacks required tree/);
    await expect(c.request("POST /repos/{owner}/{repo}/git/blobs", REPO, { content: "x", colour: "red" })).rejects.toThrow(/unknown field colour/);
    await expect(c.request("GET /repos/{owner}/{repo}", REPO)).rejects.toThrow(/response schema/);
  });
});

describe("credentials", () => {
  it("encrypts a token bound to its tenant: another tenant's id or another key cannot read it", async () => {
    const key = "k".repeat(40);
    const stored = await encryptToken("ghp_secret", "tenant-a", key);
    expect(stored).not.toContain("ghp_secret");
    expect(await decryptToken(stored, "tenant-a", key)).toBe("ghp_secret");
    await expect(decryptToken(stored, "tenant-b", key)).rejects.toThrow();
    await expect(decryptToken(stored, "tenant-a", "j".repeat(40))).rejects.toThrow();
  });

  it("answers github_not_configured with a hint when the tenant has no credentials, and uses its own token when it has", async () => {
    const a = await seedIdentity("git-cred-a", "agent");
    const b = await seedIdentity("git-cred-b", "agent");
    const key = "s".repeat(40);
    const gh = new FakeGitHub().on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }));
    const testEnv = { ...env, GITHUB_API_URL: FAKE_API, GITHUB_CREDENTIALS_KEY: key };
    await env.DB.prepare(`INSERT INTO github_credentials (tenant_id, kind, secret, created_at, updated_at) VALUES (?, 'token', ?, 'now', 'now')`)
      .bind(a.tenantId, await encryptToken("ghp_tenant_a", a.tenantId, key))
      .run();
    await githubFor(testEnv, a.tenantId, gh.fetch).request("GET /repos/{owner}/{repo}", REPO);
    expect(gh.requests[0]!.headers.get("authorization")).toBe("Bearer ghp_tenant_a");
    const err = await githubFor(testEnv, b.tenantId, gh.fetch)
      .request("GET /repos/{owner}/{repo}", REPO)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject({ code: "github_not_configured" });
    expect((err as ToolError).hint).toMatch(/npm run github/);
    expect(gh.requests).toHaveLength(1);
  });

  it("mints a GitHub App installation token with an RS256 JWT and caches it until shortly before expiry", async () => {
    clearInstallationTokens();
    const t = await seedIdentity("git-cred-app", "agent");
    const pair = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const pkcs8 = new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
    const pem = `-----BEGIN PRIVATE KEY-----\n${btoa(String.fromCharCode(...pkcs8))}\n-----END PRIVATE KEY-----`;
    expect(pemToPkcs8(pem)).toEqual(pkcs8);
    const jwt = await appJwt("12345", pem, new Date("2030-01-01T00:00:00Z"));
    const [h, p, s] = jwt.split(".") as [string, string, string];
    const dec = (x: string) => JSON.parse(atob(x.replace(/-/g, "+").replace(/_/g, "/"))) as Record<string, unknown>;
    expect(dec(h)).toEqual({ alg: "RS256", typ: "JWT" });
    expect(dec(p)).toMatchObject({ iss: "12345", iat: Date.parse("2030-01-01T00:00:00Z") / 1000 - 60 });
    const sig = Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    expect(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", pair.publicKey, sig, new TextEncoder().encode(`${h}.${p}`))).toBe(true);

    const expires = new Date(Date.now() + 3600_000).toISOString();
    const gh = new FakeGitHub()
      .on("POST /app/installations/{installation_id}/access_tokens", (req) => {
        expect(req.headers.get("authorization")).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
        return { status: 201, body: example("POST /app/installations/{installation_id}/access_tokens", { token: `ghs_inst_${req.path.installation_id}`, expires_at: expires }, "201") };
      })
      .on("GET /repos/{owner}/{repo}", () => ({ body: repoBody() }));
    await env.DB.prepare(`INSERT INTO github_credentials (tenant_id, kind, installation_id, created_at, updated_at) VALUES (?, 'app', '777', 'now', 'now')`).bind(t.tenantId).run();
    const appEnv = { ...env, GITHUB_API_URL: FAKE_API, GITHUB_APP_ID: "12345", GITHUB_APP_PRIVATE_KEY: pem };
    await githubFor(appEnv, t.tenantId, gh.fetch).request("GET /repos/{owner}/{repo}", REPO);
    await githubFor(appEnv, t.tenantId, gh.fetch).request("GET /repos/{owner}/{repo}", REPO);
    expect(gh.count("POST /app/installations/{installation_id}/access_tokens")).toBe(1);
    expect(gh.requests.filter((r) => r.op === "GET /repos/{owner}/{repo}").map((r) => r.headers.get("authorization"))).toEqual(["Bearer ghs_inst_777", "Bearer ghs_inst_777"]);
  });
});
