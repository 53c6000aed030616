/**
 * The dashboard in a real browser (Debian's chromium, driven by playwright-core, script off):
 * sign-in with an API key, the overview on data seeded through the MCP tools, another tenant's
 * view, sign-out. Screenshots (light, dark, a phone's width) land in test-results/dashboard (or
 * DASHBOARD_SCREENSHOTS), kept by CI beside the run; `npm run docs:screenshots` copies the ones
 * docs/dashboard.md shows.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { readFile } from "node:fs/promises";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const base = inject("baseUrl").replace("//127.0.0.1:", "//localhost:");
const SHOTS = process.env.DASHBOARD_SCREENSHOTS || path.join(import.meta.dirname, "../../test-results/dashboard");
const shot = (name: string) => path.join(SHOTS, `${name}.png`);
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
  await mkdir(SHOTS, { recursive: true });
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

  it("answers a handoff from the inbox: the outcome is shown, and the tools see the answer", async () => {
    const key = inject("dashKey");
    const asked = (await call(key, "handoff_create", { to_actor_ids: ["me"], kind: "question", title: "Which cookie name?", options: ["ledger", "session"] })).handoff as { id: string };
    const page = await browser.newPage();
    await page.context().clearCookies();
    await signIn(page, key);
    await page.getByRole("link", { name: "Inbox" }).click();
    await page.waitForURL(`${base}/app/inbox`);
    const card = page.getByRole("article", { name: /Which cookie name\?/ });
    await card.getByLabel("ledger", { exact: true }).check();
    await card.getByLabel("Answer", { exact: true }).fill("Keep the prefix");
    await page.screenshot({ path: shot("inbox-light"), fullPage: true });
    await card.getByRole("button", { name: "Answer" }).click();
    await page.waitForURL(`${base}/app/inbox`);
    expect(await page.getByRole("status").innerText()).toBe("Answered: Which cookie name?");
    const mine = (await call(key, "handoff_query", { direction: "from_me", type: ["question"] })).items as Array<Record<string, unknown>>;
    expect(mine.find((h) => h.id === asked.id)).toMatchObject({ status: "responded", response: { chosen_option: "ledger", text: "Keep the prefix" } });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: shot("inbox-phone-dark"), fullPage: true });
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

  it("refuses a form posted without its CSRF token or from another site, and changes nothing", async () => {
    const key = inject("dashKey");
    const task = (await call(key, "task_create", { project_id: "DASH", title: "Guarded by the CSRF check" })).task as { id: string };
    const page = await browser.newPage();
    await page.context().clearCookies();
    await signIn(page, key);
    await page.goto(`${base}/app/tasks/${task.id}`);
    const csrf = await page.locator('form[action$="/comment"] input[name=csrf]').getAttribute("value");
    expect(csrf).toBeTruthy();
    // The browser's own cookie goes with each post (page.request shares the context's cookies).
    const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      page.request.post(`${base}/app/tasks/${task.id}/comment`, { form, headers: { Origin: base, ...headers }, maxRedirects: 0 });
    expect((await post({ body: "no token" })).status()).toBe(403);
    expect((await post({ body: "wrong token", csrf: "x".repeat(csrf!.length) })).status()).toBe(403);
    expect((await post({ body: "from elsewhere", csrf: csrf! }, { Origin: "https://elsewhere.example" })).status()).toBe(403);
    const comments = await call(key, "comment_query", { object_type: "task", object_id: task.id });
    expect(comments.items).toEqual([]);
    // The same post from the page itself lands.
    expect((await post({ body: "from the page", csrf: csrf! })).status()).toBe(303);
    expect(((await call(key, "comment_query", { object_type: "task", object_id: task.id })).items as Array<{ body: string }>).map((c) => c.body)).toEqual(["from the page"]);
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

/** A second browser with script on: the live updates under the page's own policy, and the accessibility scan. */
describe("the dashboard with script on", () => {
  let scripted: BrowserContext;
  let scanner: BrowserContext;
  const dirs: string[] = [];
  const launch = async (options: { bypassCSP: boolean }) => {
    const dir = await mkdtemp(path.join(tmpdir(), "agent-ledger-chromium-js-"));
    dirs.push(dir);
    return chromium.launchPersistentContext(dir, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      javaScriptEnabled: true,
      bypassCSP: options.bypassCSP,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  };
  beforeAll(async () => {
    scripted = await launch({ bypassCSP: false });
    // axe-core is injected as an inline script, which the dashboard's own policy rightly refuses.
    scanner = await launch({ bypassCSP: true });
  });
  afterAll(async () => {
    await scripted?.close();
    await scanner?.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("the activity feed takes in new activity without a reload, under the page's own policy", async () => {
    const page = await scripted.newPage();
    const refused: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") refused.push(m.text());
    });
    await signIn(page, inject("dashKey"));
    await call(inject("dashKey"), "log_change", { entity_path: "src/live/feed.ts", change_type: "add", reasoning: "Shown live on the dashboard without a reload" });
    await page.locator("#activity-feed").getByText("add src/live/feed.ts").waitFor({ timeout: 15_000 });
    expect(refused).toEqual([]);
    await page.close();
  });

  it("the board's lanes take in a new card without a reload", async () => {
    const key = inject("dashKey");
    const page = await scripted.newPage();
    await page.context().clearCookies();
    await signIn(page, key);
    await page.goto(`${base}/app/projects/DASH`);
    await call(key, "task_create", { project_id: "DASH", title: "Appears on the board by itself" });
    await page.locator("#lane-ready").locator("..").getByText("Appears on the board by itself").waitFor({ timeout: 15_000 });
    await page.close();
  });

  it("lists a plan with its progress, and draws its steps and three diagrams, narrow and dark, with no serious accessibility violation", async () => {
    const key = inject("dashKey");
    await call(key, "save_plan", {
      plan: {
        id: "e2e-launch",
        goal: "Launch the dashboard",
        steps: [
          { step_number: 1, title: "Seed a tenant", estimated_effort: "1 hour", files_to_create: [{ path: "scripts/seed.ts" }] },
          { step_number: 2, title: "Draw the pages", depends_on: [1], estimated_effort: "2 days", files_to_modify: [{ path: "src/web/app/layout.tsx" }] },
          { step_number: 3, title: "Write the docs", depends_on: [1], estimated_effort: "3 hours", files_to_modify: [{ path: "docs/dashboard.md" }] },
          { step_number: 4, title: "Ship", depends_on: [2, 3], estimated_effort: "1 hour" },
        ],
        milestones: [{ name: "Build", steps_included: [1, 2, 3] }],
      },
    });
    await call(key, "start_step", { plan_id: "e2e-launch", step_number: 1 });
    await call(key, "complete_step", { plan_id: "e2e-launch", step_number: 1, notes: "Seeded through the MCP tools" });
    // Script off: the plan's diagrams are drawn by the server.
    const page = await browser.newPage();
    await page.context().clearCookies();
    await signIn(page, key);
    await page.getByRole("link", { name: "Plans" }).click();
    await page.waitForURL(`${base}/app/plans`);
    expect((await page.locator("main").innerText()).replace(/\s+/g, " ")).toMatch(/Launch The Dashboard e2e-launch v1 Launch the dashboard executing 25% · 1\/4 done, 2 ready/);
    await page.getByRole("link", { name: "Launch The Dashboard" }).click();
    await page.waitForURL(`${base}/app/plans/e2e-launch`);
    for (const name of ["Dependencies", "Schedule (Gantt)", "Files by directory"]) expect(await page.getByRole("heading", { name, level: 2 }).count(), name).toBe(1);
    expect(await page.locator("svg[role=img]").count()).toBeGreaterThanOrEqual(3);
    await page.screenshot({ path: shot("plan-light"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: shot("plan-phone-dark"), fullPage: true });
    await page.close();

    const axe = await readFile(path.join(import.meta.dirname, "../../node_modules/axe-core/axe.min.js"), "utf8");
    const scan = await scanner.newPage();
    await scan.context().clearCookies();
    await signIn(scan, key);
    for (const scheme of ["light", "dark"] as const) {
      await scan.emulateMedia({ colorScheme: scheme });
      for (const at of ["/app/plans", "/app/plans/e2e-launch"]) {
        await scan.goto(`${base}${at}`);
        await scan.addScriptTag({ content: axe });
        const result = await scan.evaluate<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }>("axe.run(document, { resultTypes: ['violations'] })");
        expect(
          result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.nodes.length})`),
          `${at} ${scheme}`,
        ).toEqual([]);
      }
    }
    // The scanner's next test starts signed out.
    await scan.context().clearCookies();
    await scan.close();
  });

  it("has no serious or critical accessibility violations (axe-core), signed out and signed in", async () => {
    const axe = await readFile(path.join(import.meta.dirname, "../../node_modules/axe-core/axe.min.js"), "utf8");
    const page = await scanner.newPage();
    const scan = async () => {
      await page.addScriptTag({ content: axe });
      expect(await page.evaluate<string>("axe.version")).toBe("4.14.1");
      const result = await page.evaluate<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }>("axe.run(document, { resultTypes: ['violations'] })");
      return result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.nodes.length})`);
    };
    await page.goto(`${base}/app/signin`);
    expect(await scan()).toEqual([]);
    await signIn(page, inject("dashKey"));
    expect(await scan()).toEqual([]);
    await page.emulateMedia({ colorScheme: "dark" });
    expect(await scan()).toEqual([]);
    await page.close();
  });
});

describe("the decision log and the change ledger in chromium", () => {
  /** The page fits a phone's width: it reflows instead of scrolling sideways. */
  async function fitsPhone(page: Page, name: string): Promise<void> {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: shot(`${name}-phone`), fullPage: true });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
  }

  it("searches the decision log and follows a supersede chain to the decision in full", async () => {
    const key = inject("dashKey");
    const first = (
      await call(key, "decision_log", {
        title: "Queue for indexing",
        choice: "Workflows",
        rationale: "Steps resume after a failure.",
        options: [
          { label: "Workflows", pros: ["Durable steps"] },
          { label: "Queues", cons: ["Retries by hand"] },
        ],
      })
    ).decision as { id: string };
    await call(key, "decision_log", { title: "Queue for indexing, revisited", choice: "Queues", rationale: "Batches are cheaper.", supersedes_decision_id: first.id });
    const page = await browser.newPage();
    await page.context().clearCookies();
    await signIn(page, key);
    await page.getByRole("link", { name: "Decisions" }).click();
    await page.getByLabel("Words").fill("indexing");
    await page.getByRole("button", { name: "Find" }).click();
    const log = page.locator("#decision-log");
    expect(await log.innerText()).toContain("Queue for indexing, revisited");
    await page.screenshot({ path: shot("decisions-light"), fullPage: true });
    // The title's link and the successor's "supersedes" link go to the same page.
    await log.getByRole("link", { name: "Queue for indexing", exact: true }).first().click();
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Queue for indexing");
    expect(await page.locator("#supersede-chain").innerText()).toContain("Queue for indexing, revisited: Queues");
    expect(await page.locator("main").innerText()).toContain("Retries by hand");
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: shot("decision-dark"), fullPage: true });
    await fitsPhone(page, "decision");
    await page.close();
  });

  it("shows a path's prior attempts before its timeline, its changeset and the chain's check", async () => {
    const key = inject("dashKey");
    await call(key, "log_change", { entity_path: "orders.discount_code", change_type: "add", reasoning: "Coupons at checkout", changeset_id: "coupons" });
    await call(key, "log_change", { entity_path: "orders.discount_code", change_type: "revert", reasoning: "Double discounts on split orders" });
    const page = await browser.newPage();
    await page.context().clearCookies();
    await signIn(page, key);
    await page.goto(`${base}/app/changes`);
    await page.getByLabel("Path or dotted prefix").fill("orders");
    await page.getByRole("button", { name: "Show" }).click();
    const prior = page.getByRole("region", { name: "Tried before" });
    expect(await prior.innerText()).toContain("Undone because: Double discounts on split orders");
    expect(await page.getByRole("region", { name: "Hash chain" }).innerText()).toMatch(/Verifies: \d+ link\(s\) intact/);
    await page.screenshot({ path: shot("changes-light"), fullPage: true });
    await fitsPhone(page, "changes");
    await page.getByRole("link", { name: "coupons" }).first().click();
    expect(new URL(page.url()).pathname).toBe("/app/changes/changesets/coupons");
    expect(await page.locator("main").innerText()).toContain("Coupons at checkout");
    await page.goto(`${base}/app/changes/changesets/not-a-changeset`);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Not found");
    await page.close();
  });

  it("searches knowledge, skills and documents, and opens a document's text", async () => {
    const key = inject("dashKey");
    await call(key, "knowledge_write", { title: "Warming the embedding cache", body: "Warm the embedding cache before a bulk import; cold lookups time out.", kind: "runbook" });
    await call(key, "skill_upsert", { slug: "bulk-import", name: "Bulk import", description: "Import a backlog of embedding jobs in batches.", body: "# Steps" });
    await call(key, "docs_execute", { operations: [{ op: "add", params: { name: "runbooks/embedding.md", content: "# Embedding backfill\n\nThe embedding backfill runs every ten minutes.\n" } }] });
    const page = await browser.newPage();
    await page.context().clearCookies();
    await signIn(page, key);
    await page.getByRole("link", { name: "Knowledge" }).click();
    await page.getByLabel("Words", { exact: true }).fill("embedding");
    await page.getByRole("button", { name: "Search" }).click();
    expect(await page.locator("#notes").innerText()).toContain("Warming the embedding cache");
    expect(await page.locator("#skills").innerText()).toContain("Import a backlog of embedding jobs in batches.");
    await page.screenshot({ path: shot("knowledge-light"), fullPage: true });
    await fitsPhone(page, "knowledge");
    // A note's own page has its whole body; then back to the list for the documents.
    await page.locator("#notes").getByRole("link", { name: "Warming the embedding cache" }).click();
    expect(new URL(page.url()).pathname).toMatch(/^\/app\/knowledge\/notes\/.+/);
    expect(await page.locator("#note-body").innerText()).toBe("Warm the embedding cache before a bulk import; cold lookups time out.");
    await page.goBack();
    await page.locator("#documents").getByRole("link", { name: "Embedding backfill" }).click();
    expect(new URL(page.url()).pathname).toMatch(/^\/app\/documents\/[0-9a-f]{64}$/);
    expect(await page.locator("#document-text").innerText()).toContain("The embedding backfill runs every ten minutes.");
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: shot("document-dark"), fullPage: true });
    await page.goto(`${base}/app/documents/${"0".repeat(64)}`);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Not found");
    await page.close();
  });
});

describe("runs and code in chromium", () => {
  it("draws the run tree, opens a subagent's run, and shows the code page, narrow and dark", async () => {
    const key = inject("dashKey");
    const child = (await call(key, "run_fork", { label: "e2e reviewer subagent", goal: "Review the dashboard", agent_role: "reviewer" })).run as { run_key: string };
    const page = await browser.newPage();
    await page.context().clearCookies();
    await signIn(page, key);
    await page.getByRole("link", { name: "Runs" }).click();
    await page.waitForURL(`${base}/app/runs`);
    expect((await page.locator("main").innerText()).replace(/\s+/g, " ")).toMatch(/e2e reviewer subagent subagent .*reviewer · heartbeat/);
    await page.screenshot({ path: shot("runs-light"), fullPage: true });
    await page.getByRole("link", { name: "e2e reviewer subagent" }).click();
    await page.waitForURL(`${base}/app/runs/${child.run_key}`);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("e2e reviewer subagent");
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.screenshot({ path: shot("run-phone"), fullPage: true });
    await page.getByRole("link", { name: "Code" }).click();
    await page.waitForURL(`${base}/app/code`);
    expect(await page.getByRole("heading", { name: "Indexes" }).count()).toBe(1);
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: shot("code-phone-dark"), fullPage: true });
    // Another tenant's run: the tools say not_found, the page says 404.
    await page.context().clearCookies();
    await signIn(page, inject("keyB"));
    expect((await page.goto(`${base}/app/runs/${child.run_key}`))?.status()).toBe(404);
    await page.close();
  });
});
