/** The dashboard's runs and code pages: read through the tools, of the signed-in tenant only. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ensureIndex, recordHead } from "../../src/code/store";
import { systemClock } from "../../src/core/time";
import { makeCtx, ok, seedIdentity } from "../support/helpers";
import { inSession } from "../support/run-helpers";
import { BASE, signedIn, textOf } from "../support/dashboard";

/** A session run that created a task, with a reviewer subagent forked from it. */
async function seedRuns(tenant: string) {
  const ada = await seedIdentity(tenant, "ada");
  const s = await inSession(makeCtx(ada, systemClock));
  await ok(s, "project_create", { key: "WEB", title: "Website" });
  await ok(s, "task_create", { project_id: "WEB", title: "Write the sign-in page" });
  const child = (await ok(s, "run_fork", { label: "review the sign-in page", goal: "Find what breaks", agent_role: "reviewer" })).run as Record<string, string>;
  return { ada, child, root: child.parent_run_id! };
}

describe("dashboard runs", () => {
  it("draws the tree of runs with subagents under their parent, with status, role, heartbeat and what each produced", async () => {
    const { ada, child, root } = await seedRuns("dash-runs-list");
    const other = await seedIdentity("dash-runs-list-other", "eve");
    await ok(await inSession(makeCtx(other, systemClock)), "run_fork", { label: "other tenant's secret run" });
    const browser = await signedIn(ada.key);
    const page = await browser.fetch(`${BASE}/app/runs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const body = textOf(html);
    expect(body).toContain("2 run(s)");
    expect(html).toContain('aria-current="page">Runs');
    // The child sits in a list nested inside its parent's item.
    expect(html).toMatch(
      new RegExp(`href="/app/runs/[^"]+">[^<]*</a> <span class="muted">session</span>[\\s\\S]*<ul class="plain tree"><li>[\\s\\S]*href="/app/runs/${child.run_key}">review the sign-in page`),
    );
    expect(body).toMatch(/running review the sign-in page subagent ada · reviewer · heartbeat \d+ s ago/);
    expect(body).toMatch(/Produced: 1 tasks created/);
    expect(body).not.toContain("secret");
    expect(root).toBeTruthy();

    const ended = textOf(await (await browser.fetch(`${BASE}/app/runs?status=succeeded`)).text());
    expect(ended).toContain("0 run(s)");
    expect(ended).toContain("No runs match.");
  });

  it("shows one run with its subagents, what it produced and its activity; by key or by id", async () => {
    const { ada, child, root } = await seedRuns("dash-runs-one");
    const browser = await signedIn(ada.key);
    const page = await browser.fetch(`${BASE}/app/runs/${root}`);
    expect(page.status).toBe(200);
    const body = textOf(await page.text());
    expect(body).toMatch(/Status running/);
    expect(body).toMatch(/Agent ada/);
    expect(body).toMatch(/What it produced tasks created 1 done 0/);
    expect(body).toMatch(/Subagents running review the sign-in page subagent ada · reviewer/);
    expect(body).toMatch(/Activity .*task\.created/);

    const sub = await browser.fetch(`${BASE}/app/runs/${child.run_key}`);
    expect(sub.status).toBe(200);
    const subBody = textOf(await sub.text());
    expect(subBody).toContain("review the sign-in page");
    expect(subBody).toContain("Find what breaks");
    expect(subBody).toMatch(/Forked from/);
    expect(subBody).toContain("No runs were forked from it.");
  });

  it("answers another tenant's run with 404, and an unknown status or an over-long id with 400", async () => {
    const { child } = await seedRuns("dash-runs-iso");
    const other = await seedIdentity("dash-runs-iso-other", "eve");
    const browser = await signedIn(other.key);
    for (const ref of [child.run_key, child.id, "run-nosuchrun"]) {
      const foreign = await browser.fetch(`${BASE}/app/runs/${ref}`);
      expect(foreign.status).toBe(404);
      const text = textOf(await foreign.text());
      expect(text).toContain("Not found");
      expect(text).not.toContain("review the sign-in page");
    }
    const long = await browser.fetch(`${BASE}/app/runs/${"x".repeat(150)}`);
    expect(long.status).toBe(400);
    const bad = await browser.fetch(`${BASE}/app/runs?status=sleeping`);
    expect(bad.status).toBe(400);
    expect(textOf(await bad.text())).toContain("That request is not valid");
  });
});

describe("dashboard code", () => {
  it("shows each index's phase, progress, indexed commit and last-checked freshness, of this tenant only", async () => {
    const ada = await seedIdentity("dash-code-idx", "ada");
    const other = await seedIdentity("dash-code-idx-other", "eve");
    const now = new Date();
    const idx = await ensureIndex(env.DB, ada.tenantId, "acme", "shop", "main", now);
    await env.DB.prepare("UPDATE code_indexes SET phase = 'complete', commit_sha = ?, files_done = 12, files_total = 12, last_indexed_at = ? WHERE id = ?")
      .bind("abcdef1234567890", now.toISOString(), idx.id)
      .run();
    await recordHead(env.DB, ada.tenantId, idx.id, "0123456789abcdef", now.toISOString());
    await ensureIndex(env.DB, other.tenantId, "secret", "vault", "main", now);

    const browser = await signedIn(ada.key);
    const page = await browser.fetch(`${BASE}/app/code`);
    expect(page.status).toBe(200);
    const body = textOf(await page.text());
    expect(body).toMatch(/acme\/shop@main complete 12\/12 abcdef123456 behind the head · indexed \d+ s ago/);
    expect(body).not.toContain("vault");
    expect(body).toContain("Review session id");
  });

  it("lists the tenant's reactive review sessions newest first, each linking to its detail, and none of another tenant's", async () => {
    const ada = await seedIdentity("dash-code-sessions", "ada");
    const eve = await seedIdentity("dash-code-sessions-other", "eve");
    // Rows as the session runner leaves them (reactive_review_pr needs GitHub; test/review/reactive.test.ts drives it).
    const row = env.DB.prepare(
      `INSERT INTO review_sessions (tenant_id, id, repo, pull_number, commit_hash, base_ref, source, status, total_steps, completed_steps, findings_count, error, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'main', ?, ?, 4, ?, ?, ?, ?, ?, ?)`,
    );
    const at = (s: number) => new Date(Date.now() - s * 1000).toISOString();
    const older = crypto.randomUUID();
    const newer = crypto.randomUUID();
    await env.DB.batch([
      row.bind(ada.tenantId, older, "acme/shop", 7, "1111111111111111", "tool", "completed", 4, 3, null, ada.actorId, at(120), at(60)),
      row.bind(ada.tenantId, newer, "acme/shop", 8, "2222222222222222", "webhook", "failed", 1, 0, "GitHub answered 502", ada.actorId, at(30), at(20)),
      row.bind(eve.tenantId, crypto.randomUUID(), "secret/vault", 1, "3333333333333333", "tool", "executing", 0, 0, null, eve.actorId, at(10), at(10)),
    ]);
    const html = await (await (await signedIn(ada.key)).fetch(`${BASE}/app/code`)).text();
    const table = textOf(html.slice(html.indexOf('id="review-sessions"'), html.indexOf("</table>", html.indexOf('id="review-sessions"'))));
    expect(table).toMatch(/acme\/shop #8 222222222222 failed GitHub answered 502 1\/4 0 \d+ s ago \(webhook\) acme\/shop #7 111111111111 completed 4\/4 3 \d+ min ago \(tool\)/);
    expect(html).toContain(`href="/app/code?session=${newer}#review-heading"`);
    expect(html).not.toContain("secret/vault");
    const theirs = textOf(await (await (await signedIn(eve.key)).fetch(`${BASE}/app/code`)).text());
    expect(theirs).toContain("secret/vault");
    expect(theirs).not.toContain("acme/shop");
  });

  it("answers a review session of no one (or another tenant's) with 404, and an over-long id with 400", async () => {
    const ada = await seedIdentity("dash-code-rev", "ada");
    const browser = await signedIn(ada.key);
    const missing = await browser.fetch(`${BASE}/app/code?session=${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(textOf(await missing.text())).toMatch(/Not found Session not found/);
    const long = await browser.fetch(`${BASE}/app/code?session=${"x".repeat(200)}`);
    expect(long.status).toBe(400);
  });
});
