/**
 * The sign-in and consent pages in a real browser (Debian's chromium, driven by playwright-core):
 * the forms work without JavaScript, the security headers hold, and Allow ends at the client's
 * redirect URI with a code. Screenshots land in the test's temp folder (printed) for a person to look at.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { authorizeUrl, pkcePair, registerClient } from "../support/oauth-flow";
import { E2E_REDIRECT } from "./support/oauth-server";

// Chromium keeps `Secure` cookies (the pages' __Host- CSRF and consent cookies) from plain http only on
// `localhost`, not on 127.0.0.1: a person at `npm start` opens localhost too (docs/protocol.md).
const base = inject("baseUrl").replace("//127.0.0.1:", "//localhost:");
/** Screenshots go next to the test state, outside the profile, and are kept for a person to look at. */
const shot = (name: string) => path.join(tmpdir(), `agent-ledger-oauth-${name}.png`);
let browser: BrowserContext;
let profile = "";

async function newPage(): Promise<{ page: Page; redirects: URL[] }> {
  const page = await browser.newPage();
  const redirects: URL[] = [];
  // Nothing listens on the client's loopback callback: the browser's arrival there is the result.
  await page.route(`${new URL(E2E_REDIRECT).origin}/**`, (route) => {
    redirects.push(new URL(route.request().url()));
    return route.fulfill({ status: 200, contentType: "text/plain", body: "client callback" });
  });
  return { page, redirects };
}

async function authorizeLink(): Promise<string> {
  const res = await registerClient(fetch, base, { client_name: "Browser Test Client", redirect_uris: [E2E_REDIRECT], token_endpoint_auth_method: "none" });
  const { client_id } = (await res.json()) as { client_id: string };
  return authorizeUrl(base, { clientId: client_id, redirectUri: E2E_REDIRECT, challenge: (await pkcePair()).challenge, state: "browser-1" });
}

beforeAll(async () => {
  profile = await mkdtemp(path.join(tmpdir(), "agent-ledger-chromium-"));
  // A fresh profile (playwright passes it as --user-data-dir); the pages must work with script off.
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    javaScriptEnabled: false,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});
afterAll(async () => {
  await browser?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

describe("sign-in and consent pages in chromium", () => {
  it("sign in with an API key, see the client, scopes and toolsets, Allow: the client gets a code, its state and the issuer", async () => {
    const { page, redirects } = await newPage();
    const first = await page.goto(await authorizeLink());
    expect(first!.status()).toBe(200);
    const headers = first!.headers();
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["x-frame-options"]).toBe("DENY");
    await expect(page.title()).resolves.toContain("Sign in");
    expect(await page.textContent("main")).toContain("Browser Test Client");
    await page.screenshot({ path: shot("sign-in"), fullPage: true });

    await page.fill("#api_key", inject("oauthKey"));
    await page.click("button[value=key]");
    await page.waitForSelector("text=Allow Browser Test Client");
    const consent = (await page.textContent("main"))!;
    for (const text of ["hosted", "e2e-oauth", "ledger:read", "ledger:write", "127.0.0.1", "tasks"]) expect(consent).toContain(text);
    await page.screenshot({ path: shot("consent"), fullPage: true });

    await page.check("input[value=readonly]");
    await page.click("button[value=allow]");
    await page.waitForURL(`${E2E_REDIRECT}**`);
    expect(redirects).toHaveLength(1);
    const back = redirects[0]!;
    expect(back.searchParams.get("code")).toBeTruthy();
    expect(back.searchParams.get("state")).toBe("browser-1");
    expect(back.searchParams.get("iss")).toBe(base);
  });

  it("Deny returns access_denied to the client", async () => {
    const { page, redirects } = await newPage();
    await page.goto(await authorizeLink());
    await page.fill("#api_key", inject("oauthKey"));
    await page.click("button[value=key]");
    await page.click("button[value=deny]");
    await page.waitForURL(`${E2E_REDIRECT}**`);
    expect(redirects[0]!.searchParams.get("error")).toBe("access_denied");
  });

  it("a wrong key shows an error on the page; the operator key's grant is marked operator", async () => {
    const { page } = await newPage();
    await page.goto(await authorizeLink());
    await page.fill("#api_key", "alk_wrong");
    await page.click("button[value=key]");
    expect(await page.textContent("[role=alert]")).toContain("not a live API key");
    await page.fill("#api_key", inject("oauthOperatorKey"));
    await page.click("button[value=key]");
    expect(await page.textContent("main")).toContain("with the operator role");
  });

  it("refuses to be framed by another page", async () => {
    const { page } = await newPage();
    const link = await authorizeLink();
    await page.setContent(`<iframe id="f" src="${link.replace(/&/g, "&amp;")}"></iframe>`);
    await page.waitForTimeout(1000);
    const frame = page.frames().find((f) => f.url().startsWith(base));
    const framedText = frame ? await frame.textContent("body").catch(() => "") : "";
    expect(framedText ?? "").not.toContain("Sign in to agent-ledger");
  });
});
