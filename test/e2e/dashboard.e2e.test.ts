/**
 * The dashboard in a real browser (Debian's chromium, driven by playwright-core, script off):
 * sign-in with an API key, the overview on data seeded through the MCP tools, another tenant's
 * view, sign-out. Screenshots (light, dark, a phone's width) land in the temp folder for a person.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const base = inject("baseUrl").replace("//127.0.0.1:", "//localhost:");
const shot = (name: string) => path.join(tmpdir(), `agent-ledger-dashboard-${name}.png`);
let browser: BrowserContext;
let profile = "";

async function call(key: string, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const transport = new StreamableHTTPClientTransport(new URL(`${inject("baseUrl")}/mcp?toolsets=all`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new Client({ name: "e2e-dashboard", version: "1.0.0" });
  await client.connect(transport);
  try {
    const r = await client.callTool({ name, arguments: args });
    const s = r.structuredContent as Record<string, unknown>;
    expect(s.ok, JSON.stringify(s)).toBe(true);
    return s;
  } finally {
    await client.close();
  }
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto(`${base}/app`);
  expect(new URL(page.url()).pathname).toBe("/app/signin");
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${base}/app`);
}

beforeAll(async () => {
  profile = await mkdtemp(path.join(tmpdir(), "agent-ledger-chromium-dash-"));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    javaScriptEnabled: false,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const key = inject("dashKey");
  await call(key, "project_create", { key: "DASH", title: "Dashboard seed" });
  const task = await call(key, "task_create", { project_id: "DASH", title: "Sessions expire after 12 hours" });
  await call(key, "task_create", { project_id: "DASH", title: "Rotate the signing key" });
  await call(key, "task_claim", { task_id: task.id, lease_seconds: 1800 });
});
afterAll(async () => {
  await browser?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

describe("the dashboard in chromium", () => {
  it("signs in with an API key and shows the overview of the seeded tenant, with script off", async () => {
    const page = await browser.newPage();
    await signIn(page, inject("dashKey"));
    await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeTruthy();
    const projects = page.getByRole("table");
    const row = projects.getByRole("row").filter({ hasText: "DASH" });
    expect((await row.allInnerTexts()).join(" ").replace(/\s+/g, " ")).toContain("DASH Dashboard seed 1 0 1 0 0");
    const agents = page.getByRole("region", { name: "Agents at work" });
    expect(await agents.innerText()).toMatch(/Sessions expire after 12 hours lease in (29|30) min/);
    expect(await page.locator("#activity-feed").innerText()).toContain("task.claimed");
    await page.screenshot({ path: shot("overview-light"), fullPage: true });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: shot("overview-dark"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: shot("overview-phone"), fullPage: true });
    // Nothing wider than the phone's screen: the page reflows instead of scrolling sideways.
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.close();
  });

  it("shows a project's board with lanes and filters, and a task page with its dependency graph, narrow and wide", async () => {
    const key = inject("dashKey");
    await call(key, "project_create", { key: "BRD", title: "Board seed" });
    const first = (await call(key, "task_create", { project_id: "BRD", title: "Pick the session store", labels: ["auth"] })).task as { id: string };
    const second = (await call(key, "task_create", { project_id: "BRD", title: "Expire idle sessions", labels: ["auth"], depends_on: [first.id] })).task as { id: string };
    await call(key, "task_create", { project_id: "BRD", title: "Write the launch post" });
    const page = await browser.newPage();
    await page.context().clearCookies();
    await signIn(page, key);
    await page.getByRole("link", { name: "Projects" }).click();
    await page.getByRole("link", { name: "BRD" }).click();
    await page.waitForURL(`${base}/app/projects/BRD`);
    const blocked = page.getByRole("region", { name: /Blocked/ });
    expect((await blocked.innerText()).replace(/\s+/g, " ")).toMatch(/BRD-2 Expire idle sessions .*blocked by BRD-1 \(to do\)/);
    await page.getByLabel("Label").fill("auth");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/label=auth/);
    expect(await page.getByRole("region", { name: /Ready/ }).innerText()).not.toContain("Write the launch post");
    await page.screenshot({ path: shot("board-light"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.screenshot({ path: shot("board-phone"), fullPage: true });
    await page.getByRole("link", { name: /BRD-2 Expire idle sessions/ }).click();
    await page.waitForURL(`${base}/app/tasks/${second.id}`);
    expect(await page.getByRole("img", { name: /waits on 1 task/ }).count()).toBe(1);
    expect(await page.getByRole("region", { name: "Gates" }).innerText()).toContain("Open dependencies: BRD-1 (to do)");
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.screenshot({ path: shot("task-phone"), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: shot("task-dark"), fullPage: true });
    // Another tenant's task: the tools say not_found, the page says 404.
    await call(inject("keyB"), "project_create", { key: "BRDX", title: "Another tenant" });
    const theirs = (await call(inject("keyB"), "task_create", { project_id: "BRDX", title: "Not yours" })).task as { id: string };
    const foreign = await page.goto(`${base}/app/tasks/${theirs.id}`);
    expect(foreign?.status()).toBe(404);
    await page.close();
  });

  it("another tenant sees none of it; signing out ends the session", async () => {
    const page = await browser.newPage();
    await page.context().clearCookies();
    await signIn(page, inject("keyB"));
    expect(await page.locator("main").innerText()).not.toContain("DASH");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${base}/app/signin`);
    await page.goto(`${base}/app`);
    expect(new URL(page.url()).pathname).toBe("/app/signin");
    await page.close();
  });

  it("a wrong key is refused on the page, with the reason", async () => {
    const page = await browser.newPage();
    await page.context().clearCookies();
    await page.goto(`${base}/app/signin`);
    await page.getByLabel("API key").fill("alk_wrong-key-entirely");
    await page.getByRole("button", { name: "Sign in" }).click();
    expect(await page.getByRole("alert").innerText()).toBe("That key is not a live API key of this server.");
    await page.close();
  });
});
