/** The dashboard's knowledge, skills and documents pages: read through the tools, of the signed-in tenant only. */
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/time";
import { makeCtx, ok, seedIdentity } from "../support/helpers";
import { BASE, signedIn, textOf } from "../support/dashboard";

const GUIDE = "# Deploy guide\n\nRun the migrations, then <b>deploy</b> the worker & watch the logs.\n";

async function seed(tenant: string) {
  const ada = await seedIdentity(tenant, "ada");
  const ctx = makeCtx(ada, systemClock);
  const rotate = await ok(ctx, "knowledge_write", {
    title: "Rotating the signing key",
    body: "Rotate the webhook signing key every quarter; the old key stays valid for a day.",
    kind: "runbook",
    tags: ["security"],
  });
  await ok(ctx, "knowledge_write", { title: "Flaky queue test", body: "The queue test flakes when the clock is real; use TestClock.", kind: "finding" });
  await ok(ctx, "skill_upsert", { slug: "release-notes", name: "Release notes", description: "Write the release notes from merged pull requests.", body: "# Steps\n1. List merged PRs." });
  const added = await ok(ctx, "docs_execute", { operations: [{ op: "add", params: { name: "guides/deploy.md", content: GUIDE } }] });
  const get = await ok(ctx, "docs_query", { steps: [{ op: "get", params: { name: "guides/deploy.md" } }] });
  return { ada, ctx, hash: String(get.hash), added, note: String((rotate.note as { id: string }).id) };
}

describe("dashboard knowledge", () => {
  it("searches notes with the tool's ranking, lists skills with descriptions and documents newest first", async () => {
    const { ada, hash } = await seed("dash-know-list");
    const browser = await signedIn(ada.key);

    const home = await browser.fetch(`${BASE}/app/knowledge`);
    expect(home.status).toBe(200);
    const homeHtml = await home.text();
    const body = textOf(homeHtml);
    expect(homeHtml).toContain('aria-current="page">Knowledge');
    // Without words: the newest notes, each linked to its own page.
    expect(body).toMatch(/The 2 newest note\(s\)\. Type words above to search them all/);
    expect(body.indexOf("Flaky queue test")).toBeLessThan(body.indexOf("Rotating the signing key"));
    expect(body).toMatch(/Skills Release notes release-notes v1 .*Write the release notes from merged pull requests\./);
    expect(body).toMatch(/Documents 1 of 1 document\(s\), newest first\./);
    expect(homeHtml).toContain(`href="/app/documents/${hash}"`);

    const found = await (await browser.fetch(`${BASE}/app/knowledge?q=signing+key`)).text();
    const text = textOf(found);
    expect(text).toMatch(/1 note\(s\), best match first \((hybrid|lexical), words\)/);
    expect(text).toMatch(/runbook Rotating the signing key security .*Rotate the webhook signing key.* v1 · updated \d+ s ago by ada/);
    expect(text).not.toContain("Flaky queue test");
    // The same words narrow the skills and documents.
    expect(text).toContain("No skills match.");
    expect(text).toContain("No documents match.");

    const byKind = textOf(await (await browser.fetch(`${BASE}/app/knowledge?q=key+test&kind=finding&lexical=1`)).text());
    expect(byKind).toMatch(/1 note\(s\), best match first \(lexical/);
    expect(byKind).toContain("Flaky queue test");
    expect(byKind).not.toContain("Rotating the signing key");

    const docs = textOf(await (await browser.fetch(`${BASE}/app/knowledge?q=migrations&lexical=1`)).text());
    expect(docs).toMatch(/1 of 1 matching document\(s\), best match first\. .*guides\/deploy\.md/);
  });

  it("shows one note whole on its own page, and another tenant's note or a malformed id as 404 or 400", async () => {
    const { ada, note } = await seed("dash-know-note");
    const browser = await signedIn(ada.key);
    const home = await (await browser.fetch(`${BASE}/app/knowledge`)).text();
    expect(home).toContain(`href="/app/knowledge/notes/${note}"`);
    const page = await browser.fetch(`${BASE}/app/knowledge/notes/${note}`);
    expect(page.status).toBe(200);
    const text = textOf(await page.text());
    expect(text).toMatch(/Rotating the signing key runbook security Project Tenant-wide Version v1 Written \d+ s ago by ada/);
    expect(text).toContain("Rotate the webhook signing key every quarter; the old key stays valid for a day.");

    const eve = await seedIdentity("dash-know-note-other", "eve");
    const other = await signedIn(eve.key);
    const foreign = await other.fetch(`${BASE}/app/knowledge/notes/${note}`);
    expect(foreign.status).toBe(404);
    expect(textOf(await foreign.text())).not.toContain("Rotate the webhook");
    expect((await other.fetch(`${BASE}/app/knowledge/notes/${"x".repeat(101)}`)).status).toBe(400);
  });

  it("shows one document's text, escaped, in a pre", async () => {
    const { ada, hash } = await seed("dash-know-doc");
    const browser = await signedIn(ada.key);
    const page = await browser.fetch(`${BASE}/app/documents/${hash}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<pre id="document-text">');
    expect(html).toContain("Run the migrations, then &lt;b&gt;deploy&lt;/b&gt; the worker &amp; watch the logs.");
    expect(html).not.toContain("<b>deploy</b>");
    expect(textOf(html)).toMatch(/guides\/deploy\.md Hash [0-9a-f]{64} Type text\/markdown · \d+ bytes/);
  });

  it("keeps another tenant's notes, skills and documents out, and answers its document with 404", async () => {
    const { hash } = await seed("dash-know-iso");
    const eve = await seedIdentity("dash-know-iso-other", "eve");
    const browser = await signedIn(eve.key);
    const list = textOf(await (await browser.fetch(`${BASE}/app/knowledge?q=signing`)).text());
    expect(list).toContain("0 note(s)");
    expect(list).not.toContain("Rotating");
    const home = textOf(await (await browser.fetch(`${BASE}/app/knowledge`)).text());
    expect(home).toContain("No notes yet.");
    expect(home).toContain("No skills yet.");
    expect(home).toContain("No documents yet.");
    expect(home).not.toContain("deploy.md");

    const foreign = await browser.fetch(`${BASE}/app/documents/${hash}`);
    expect(foreign.status).toBe(404);
    const text = textOf(await foreign.text());
    expect(text).toContain("Not found");
    expect(text).not.toContain("migrations");
  });

  it("answers a malformed hash, an unknown kind and an overlong query with 400", async () => {
    const eve = await seedIdentity("dash-know-bad", "eve");
    const browser = await signedIn(eve.key);
    const malformed = await browser.fetch(`${BASE}/app/documents/not-a-hash`);
    expect(malformed.status).toBe(400);
    expect(textOf(await malformed.text())).toContain("That is not a document hash.");
    const prefix = await browser.fetch(`${BASE}/app/documents/${"a".repeat(8)}`);
    expect(prefix.status).toBe(400);

    const kind = await browser.fetch(`${BASE}/app/knowledge?q=x&kind=poem`);
    expect(kind.status).toBe(400);
    expect(textOf(await kind.text())).toContain("Unknown note kind &#39;poem&#39;. Note kinds: note, runbook, finding, snippet.");

    const long = await browser.fetch(`${BASE}/app/knowledge?q=${"a".repeat(501)}`);
    expect(long.status).toBe(400);
    expect(textOf(await long.text())).toContain("That request is not valid");
  });
});
