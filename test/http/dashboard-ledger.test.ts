/** The dashboard's decision log and change ledger pages: read through the tools, of the signed-in tenant only. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/time";
import { makeCtx, ok, seedIdentity } from "../support/helpers";
import { BASE, call, signedIn, textOf } from "../support/dashboard";

async function seedDecisions(tenant: string) {
  const ada = await seedIdentity(tenant, "ada");
  await call(ada.key, "project_create", { key: "WEB", title: "Website" });
  const first = (
    await call(ada.key, "decision_log", {
      project_id: "WEB",
      title: "Session store",
      choice: "Cookies",
      rationale: "No server state to keep.",
      options: [
        { label: "Cookies", summary: "Signed cookies", pros: ["Stateless"], cons: ["Size limit"] },
        { label: "Redis", pros: ["Revocable"], cons: ["Another service to run"] },
      ],
    })
  ).decision as Record<string, string>;
  const second = (
    await call(ada.key, "decision_log", {
      title: "Session store, again",
      choice: "Durable Objects",
      rationale: "Revocation matters more than statelessness.",
      supersedes_decision_id: first.id,
    })
  ).decision as Record<string, string>;
  const third = (await call(ada.key, "decision_log", { title: "Lint with eslint", choice: "eslint", status: "proposed" })).decision as Record<string, string>;
  return { ada, first, second, third };
}

describe("dashboard decisions", () => {
  it("lists the log with statuses and supersede chains linked, and filters by project, status and words", async () => {
    const { ada, first, second, third } = await seedDecisions("dash-dec-list");
    const other = await seedIdentity("dash-dec-list-other", "eve");
    await call(other.key, "decision_log", { title: "Other tenant's secret decision", choice: "hidden" });
    const browser = await signedIn(ada.key);

    const page = await browser.fetch(`${BASE}/app/decisions`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const body = textOf(html);
    expect(body).toContain("3 decision(s), newest first");
    expect(body).toMatch(/proposed Lint with eslint : eslint/);
    expect(body).toMatch(/accepted Session store : Cookies .* superseded by Session store, again/);
    expect(body).toMatch(/supersedes Session store/);
    expect(html).toContain(`href="/app/decisions/${first.id}"`);
    expect(html).toContain(`href="/app/decisions/${second.id}"`);
    expect(html).toContain('aria-current="page">Decisions');
    expect(body).not.toContain("secret");

    const proposed = textOf(await (await browser.fetch(`${BASE}/app/decisions?status=proposed`)).text());
    expect(proposed).toContain("1 decision(s)");
    expect(proposed).toContain("Lint with eslint");
    expect(proposed).not.toContain("Session store");

    const inProject = textOf(await (await browser.fetch(`${BASE}/app/decisions?project=WEB`)).text());
    expect(inProject).toContain("2 decision(s)");
    expect(inProject).toContain("Session store, again");
    expect(inProject).not.toContain("Lint with eslint");

    const found = textOf(await (await browser.fetch(`${BASE}/app/decisions?q=revocation`)).text());
    expect(found).toContain("1 decision(s), best match first (lexical)");
    expect(found).toContain("Session store, again");
    expect(found).not.toContain(third.title);
  });

  it("pages the listing with the tool's cursor, keeping the filters", async () => {
    const ada = await seedIdentity("dash-dec-pages", "ada");
    // In process: fifty-two MCP connections would outlast the test's time.
    const ctx = makeCtx(ada, systemClock);
    for (let i = 0; i < 52; i++) await ok(ctx, "decision_log", { title: `Decision number ${i}`, choice: "x" });
    const browser = await signedIn(ada.key);
    const first = await (await browser.fetch(`${BASE}/app/decisions?status=accepted`)).text();
    expect(textOf(first)).toContain("50 decision(s)");
    const older = /href="\/app\/decisions\?([^"]+)" rel="next"/.exec(first)![1]!.replace(/&amp;/g, "&");
    expect(older).toContain("status=accepted");
    const second = textOf(await (await browser.fetch(`${BASE}/app/decisions?${older}`)).text());
    expect(second).toContain("2 decision(s)");
    expect(second).toContain("Decision number 0");
    expect(second).toContain("Decision number 1 ");
  });

  it("shows one decision in full: options with pros and cons, rationale, and its supersede chain", async () => {
    const { ada, first, second } = await seedDecisions("dash-dec-one");
    const browser = await signedIn(ada.key);
    const page = await browser.fetch(`${BASE}/app/decisions/${first.id}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const body = textOf(html);
    expect(body).toContain("Session store");
    expect(body).toContain("superseded");
    expect(body).toMatch(/Project WEB · Website/);
    expect(body).toMatch(/by ada/);
    expect(body).toContain("No server state to keep.");
    expect(body).toMatch(/Cookies chosen Signed cookies For Stateless Against Size limit/);
    expect(body).toMatch(/Redis For Revocable Against Another service to run/);
    expect(body).toMatch(/Supersede chain Session store : Cookies accepted .* Session store, again : Durable Objects accepted/);
    expect(html).toContain(`<a href="/app/decisions/${second.id}">Session store, again</a>`);

    const later = textOf(await (await browser.fetch(`${BASE}/app/decisions/${second.id}`)).text());
    expect(later).toMatch(/Supersede chain Session store : Cookies/);
    expect(later).toContain("Revocation matters more than statelessness.");
  });

  it("finds a decision and its chain beyond the listing's first page", async () => {
    const ada = await seedIdentity("dash-dec-deep", "ada");
    const ctx = makeCtx(ada, systemClock);
    const old = (await ok(ctx, "decision_log", { title: "Deep original", choice: "A" })).decision as { id: string };
    for (let i = 0; i < 200; i++) await ok(ctx, "decision_log", { title: `Filler ${i}`, choice: "x" });
    const next = (await ok(ctx, "decision_log", { title: "Deep successor", choice: "B", supersedes_decision_id: old.id })).decision as { id: string };
    const browser = await signedIn(ada.key);
    const successor = textOf(await (await browser.fetch(`${BASE}/app/decisions/${next.id}`)).text());
    expect(successor).toMatch(/Supersede chain Deep original : A accepted .* Deep successor : B accepted/);
    const original = await browser.fetch(`${BASE}/app/decisions/${old.id}`);
    expect(original.status).toBe(200);
    expect(textOf(await original.text())).toMatch(/Supersede chain Deep original : A .* Deep successor : B/);
  }, 60_000);

  it("marks a decision whose linked path a push changed as stale", async () => {
    const ada = await seedIdentity("dash-dec-stale", "ada");
    const d = (await call(ada.key, "decision_log", { title: "Token format", choice: "JWT" })).decision as { id: string };
    const browser = await signedIn(ada.key);
    expect(textOf(await (await browser.fetch(`${BASE}/app/decisions/${d.id}`)).text())).not.toContain("stale since");
    // The mark a push to a linked path leaves (the webhook's own tests cover how it gets there).
    await env.DB.prepare(
      "INSERT INTO memory_stale_marks (tenant_id, object_type, object_id, repository_id, commit_sha, path, changed_at, marked_at) VALUES (?, 'decision', ?, 'r1', ?, 'src/auth/token.ts', ?, ?)",
    )
      .bind(ada.tenantId, d.id, "abcdef1234567890", new Date().toISOString(), new Date().toISOString())
      .run();
    const body = textOf(await (await browser.fetch(`${BASE}/app/decisions/${d.id}`)).text());
    expect(body).toMatch(/stale since \d+ s ago/);
    expect(body).toContain("A push changed src/auth/token.ts (commit abcdef123456 )");
    expect(textOf(await (await browser.fetch(`${BASE}/app/decisions`)).text())).toMatch(/Token format : JWT stale since/);
  });

  it("answers another tenant's decision with 404, and a malformed id or an unknown status with 400", async () => {
    const { first } = await seedDecisions("dash-dec-iso");
    const other = await seedIdentity("dash-dec-iso-other", "eve");
    const browser = await signedIn(other.key);
    const foreign = await browser.fetch(`${BASE}/app/decisions/${first.id}`);
    expect(foreign.status).toBe(404);
    const text = textOf(await foreign.text());
    expect(text).toContain("Not found");
    expect(text).not.toContain("Session store");

    const malformed = await browser.fetch(`${BASE}/app/decisions/not-an-id`);
    expect(malformed.status).toBe(400);
    expect(textOf(await malformed.text())).toContain("That is not a decision id.");

    const status = await browser.fetch(`${BASE}/app/decisions?status=maybe`);
    expect(status.status).toBe(400);
    expect(textOf(await status.text())).toMatch(/status/);

    const project = await browser.fetch(`${BASE}/app/decisions?project=WEB`);
    expect(project.status).toBe(404);

    const longQ = await browser.fetch(`${BASE}/app/decisions?q=${"a".repeat(501)}`);
    expect(longQ.status).toBe(400);
  });
});

async function seedChanges(tenant: string) {
  const ada = await seedIdentity(tenant, "ada");
  const log = (args: Record<string, unknown>) => call(ada.key, "log_change", args) as Promise<{ id: string }>;
  await log({ entity_path: "users.email", change_type: "add", reasoning: "Sign-in by email", changeset_id: "email-login", diff: "+ email TEXT" });
  await log({ entity_path: "users.email_verified", change_type: "add", reasoning: "Only verified emails sign in", changeset_id: "email-login" });
  await log({ entity_path: "users.email", change_type: "revert", reasoning: "Broke the SSO accounts without email" });
  await log({ entity_path: "billing.plan", change_type: "modify", reasoning: "Annual plans" });
  return ada;
}

describe("dashboard changes", () => {
  it("shows a prefix's timeline with its prior attempts marked before it, blame and the chain's check", async () => {
    const ada = await seedChanges("dash-chg-path");
    const browser = await signedIn(ada.key);
    const page = await browser.fetch(`${BASE}/app/changes?path=users`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const body = textOf(html);
    // The undone attempt comes first, before the timeline, with why it was undone.
    expect(body.indexOf("Tried before")).toBeLessThan(body.indexOf("Timeline, newest first"));
    expect(body).toMatch(/Tried before 1 earlier attempt\(s\) here did not last\. .* reverted add users\.email by ada/);
    expect(body).toContain("Undone because: Broke the SSO accounts without email");
    const exact = textOf(await (await browser.fetch(`${BASE}/app/changes?path=users.email`)).text());
    expect(exact).toMatch(/Blame reverted last revert by ada .*: Broke the SSO accounts without email/);
    expect(exact).not.toContain("users.email_verified");
    // Blame reads an exact path; a prefix has none of its own.
    expect(body).toContain("No history found for exactly users (blame reads an exact path, not a prefix).");
    expect(body).toMatch(/Timeline, newest first revert users\.email .* add users\.email_verified .* add users\.email/);
    expect(body).not.toContain("billing.plan");
    expect(html).toContain('href="/app/changes/changesets/email-login"');
    expect(body).toMatch(/Hash chain Verifies: 4 link\(s\) intact/);
  });

  it("shows recent history since a window, with its changesets, and a changeset oldest first", async () => {
    const ada = await seedChanges("dash-chg-history");
    const browser = await signedIn(ada.key);
    const body = textOf(await (await browser.fetch(`${BASE}/app/changes`)).text());
    expect(body).toMatch(/Recent history since 7d modify billing\.plan .* revert users\.email .* add users\.email_verified .* add users\.email/);
    expect(body).toMatch(/Changesets in this window email-login/);

    const set = await browser.fetch(`${BASE}/app/changes/changesets/email-login`);
    expect(set.status).toBe(200);
    expect(textOf(await set.text())).toMatch(/Changeset email-login 2 change\(s\), oldest first\. add users\.email .* add users\.email_verified/);
  });

  it("says so when the hash chain no longer verifies", async () => {
    const ada = await seedChanges("dash-chg-broken");
    await env.DB.prepare("UPDATE events SET reasoning = 'nothing to see' WHERE tenant_id = ? AND entity_path = 'billing.plan'").bind(ada.tenantId).run();
    const browser = await signedIn(ada.key);
    const body = textOf(await (await browser.fetch(`${BASE}/app/changes`)).text());
    expect(body).toMatch(/Hash chain Broken: event \S+ \(chain entry 4\) no longer matches the hash recorded when it was written/);
  });

  it("keeps another tenant's changes out, and answers bad input with 400 and an unknown changeset with 404", async () => {
    await seedChanges("dash-chg-iso");
    const eve = await seedIdentity("dash-chg-iso-other", "eve");
    const browser = await signedIn(eve.key);
    const path = textOf(await (await browser.fetch(`${BASE}/app/changes?path=users.email`)).text());
    expect(path).toContain("Nothing was logged on this path.");
    expect(path).toContain("No earlier attempt here was reverted or rejected.");
    expect(path).not.toContain("SSO");
    const history = textOf(await (await browser.fetch(`${BASE}/app/changes`)).text());
    expect(history).toContain("Nothing was logged in this window.");

    const set = await browser.fetch(`${BASE}/app/changes/changesets/email-login`);
    expect(set.status).toBe(404);
    expect(textOf(await set.text())).toContain("No events found for changeset");

    const since = await browser.fetch(`${BASE}/app/changes?since=yesterday-ish`);
    expect(since.status).toBe(400);
    expect(textOf(await since.text())).toContain("That request is not valid");

    const long = await browser.fetch(`${BASE}/app/changes?path=${"a".repeat(1025)}`);
    expect(long.status).toBe(400);
  });
});
