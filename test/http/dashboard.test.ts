/** The dashboard at /app: sign-in by API key, the overview from the tools' own answers, tenancy, CSRF. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { revokeKeySql } from "../../src/auth/provision";
import { BASE, call, send, signedIn, textOf } from "../support/dashboard";
import { seedIdentity } from "../support/helpers";
import { Browser, hiddenField } from "../support/oauth-flow";

describe("dashboard sign-in", () => {
  it("sends a visitor without a session to the sign-in page, which sets a strict policy and a CSRF cookie", async () => {
    const res = await send(`${BASE}/app`, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/app/signin");
    const page = await send(`${BASE}/app/signin`);
    expect(page.headers.get("Content-Security-Policy")).toContain("default-src 'none'; script-src 'self'");
    expect(page.headers.get("X-Frame-Options")).toBe("DENY");
    expect(page.headers.getSetCookie().join(";")).toContain("__Host-ledger-csrf=");
  });

  it("exchanges a live API key for an HttpOnly, Secure, SameSite=Lax session cookie", async () => {
    const me = await seedIdentity("dash-signin", "ada");
    const browser = new Browser(send);
    const csrf = hiddenField(await (await browser.fetch(`${BASE}/app/signin`)).text(), "csrf")!;
    const res = await browser.postForm(`${BASE}/app/signin`, { csrf, api_key: me.key });
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("__Host-ledger-app="))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/Secure/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    const rows = await env.DB.prepare("SELECT token_hash FROM app_sessions WHERE tenant_id = ?").bind(me.tenantId).all<{ token_hash: string }>();
    expect(rows.results).toHaveLength(1);
    // Only the token's hash is stored.
    expect(cookie).not.toContain(rows.results[0]!.token_hash);
  });

  it("refuses a form without its CSRF token, or from another site, and a key that is not live", async () => {
    const me = await seedIdentity("dash-csrf", "ada");
    const browser = new Browser(send);
    await browser.fetch(`${BASE}/app/signin`);
    const noToken = await browser.postForm(`${BASE}/app/signin`, { api_key: me.key });
    expect(noToken.status).toBe(403);
    expect(noToken.headers.getSetCookie().some((c) => c.startsWith("__Host-ledger-app="))).toBe(false);
    const csrf = browser.cookies.get("__Host-ledger-csrf")!;
    const foreign = await browser.postForm(`${BASE}/app/signin`, { csrf, api_key: me.key }, "https://evil.example");
    expect(foreign.status).toBe(403);
    const wrong = await browser.postForm(`${BASE}/app/signin`, { csrf, api_key: "alk_notakey-at-all" });
    expect(wrong.status).toBe(401);
    expect(textOf(await wrong.text())).toContain("That key is not a live API key of this server.");
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM app_sessions WHERE tenant_id = ?").bind(me.tenantId).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("signing out, or revoking the key, ends the session", async () => {
    const me = await seedIdentity("dash-end", "ada");
    const browser = await signedIn(me.key);
    expect((await browser.fetch(`${BASE}/app`)).status).toBe(200);
    const csrf = browser.cookies.get("__Host-ledger-csrf")!;
    const out = await browser.postForm(`${BASE}/app/signout`, { csrf });
    expect(out.status).toBe(303);
    expect((await browser.fetch(`${BASE}/app`)).status).toBe(303);

    const again = await signedIn(me.key);
    await env.DB.prepare(revokeKeySql(me.key.slice(0, 10))).run();
    const after = await again.fetch(`${BASE}/app`);
    expect(after.status).toBe(303);
    expect(after.headers.get("Location")).toBe("/app/signin");
  });

  it("a post without a session is refused", async () => {
    const res = await send(`${BASE}/app/anything`, { method: "POST" });
    expect(res.status).toBe(401);
  });
});

describe("dashboard overview", () => {
  it("shows projects with counts, agents with their claims and reservations and leases, the feed and the inbox, of the signed-in tenant only", async () => {
    const ada = await seedIdentity("dash-overview", "ada");
    const bob = await seedIdentity("dash-overview", "bob");
    const other = await seedIdentity("dash-overview-other", "eve");
    await call(ada.key, "project_create", { key: "WEB", title: "Website" });
    const task = await call(ada.key, "task_create", { project_id: "WEB", title: "Sessions expire after 12 hours" });
    await call(ada.key, "task_create", { project_id: "WEB", title: "Rotate the signing key" });
    await call(bob.key, "task_claim", { task_id: task.ref ?? task.id, lease_seconds: 1800 });
    await call(bob.key, "repo_register", { slug: "acme/web" });
    await call(bob.key, "path_reserve", { repository_id: "acme/web", paths: ["src/auth/**"], reason: "session work" });
    await call(other.key, "project_create", { key: "SECRET", title: "Other tenant's project" });

    const browser = await signedIn(ada.key);
    const page = await browser.fetch(`${BASE}/app`);
    expect(page.status).toBe(200);
    const body = textOf(await page.text());
    expect(body).toContain("ada · dash-overview");
    expect(body).toMatch(/WEB Website 1 0 1 0 0/);
    expect(body).toContain("bob");
    expect(body).toMatch(/Sessions expire after 12 hours lease in (29|30) min/);
    expect(body).toMatch(/src\/auth\/\*\* in acme\/web exclusive until in \d+ min/);
    expect(body).toContain("task.claimed");
    expect(body).not.toContain("SECRET");
    expect(body).not.toContain("eve");
  });
});
