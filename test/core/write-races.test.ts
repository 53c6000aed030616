/**
 * An acknowledged write is never lost. Two (or more) callers write the same name at once, through
 * the registry (the path tools/call takes) against real local D1 and R2; afterwards either every
 * caller that was told "ok" finds its write stored (as a version of its own), or exactly one was
 * told "ok" and the others got `conflict` and stored nothing. Writes that are identical may all
 * succeed. What is stored always matches what the winner was told. Beside each race, the
 * sequential test of the deliberate way to replace what is there.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/db/ids";
import type { Ctx } from "../../src/core/context";
import { call, count, newWorld, ok, type Structured, type Who, type World } from "../support/helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const world = (name: string) => newWorld(`wr-${name}`, { start: T0 });

type Result = Structured & { isError: boolean };

/** Splits racing results into the successes and the refusals, checking every refusal's shape. */
function outcome(results: Result[], refusal: string | string[] = "conflict"): { won: Result[]; lost: Result[] } {
  const won = results.filter((r) => r.ok === true);
  const lost = results.filter((r) => r.ok !== true);
  for (const r of lost) {
    expect(r.isError, JSON.stringify(r)).toBe(true);
    expect([refusal].flat(), JSON.stringify(r.error)).toContain(r.error.code);
    expect(r.error.retryable).toBe(false);
    expect(r.error.hint.length).toBeGreaterThan(0);
  }
  return { won, lost };
}

/** Actors of one tenant: the world's caller and `n - 1` others, each in its own session. */
async function callers(w: World, n: number): Promise<Who[]> {
  const others = await Promise.all(Array.from({ length: n - 1 }, (_, i) => w.other(`racer-${i + 1}`)));
  return [{ id: w.id, ctx: w.ctx }, ...others];
}

async function activity(tenantId: string, verb: string): Promise<Structured[]> {
  return (await env.DB.prepare("SELECT * FROM activity WHERE tenant_id = ? AND verb = ? ORDER BY seq").bind(tenantId, verb).all<Structured>()).results;
}

// ---------------------------------------------------------------------------------------------
// attach_add

const b64 = (text: string) => btoa(text);

async function r2Keys(tenantId: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.BLOBS.list({ prefix: `${tenantId}/`, ...(cursor ? { cursor } : {}) });
    keys.push(...page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys.sort();
}

async function r2Text(key: string): Promise<string | null> {
  const obj = await env.BLOBS.get(key);
  return obj ? obj.text() : null;
}

async function versions(tenantId: string, path: string): Promise<Structured[]> {
  return (await env.DB.prepare("SELECT * FROM blob_versions WHERE tenant_id = ? AND storage_path = ? ORDER BY version").bind(tenantId, path).all<Structured>()).results;
}

async function attachmentsAt(tenantId: string, path: string): Promise<Structured[]> {
  return (await env.DB.prepare("SELECT * FROM attachments WHERE tenant_id = ? AND storage_path = ? ORDER BY id").bind(tenantId, path).all<Structured>()).results;
}

async function taskIn(ctx: Ctx, key: string): Promise<Structured> {
  await ok(ctx, "project_create", { title: `Project ${key}`, key });
  return (await ok(ctx, "task_create", { project_id: key, title: "needs a report" })).task as Structured;
}

describe("attach_add: uploads racing for one storage_path", () => {
  it("four uploads of different bytes: one is stored and attached, three get conflict, and no loser's object is left in R2", async () => {
    const w = await world("att-race");
    const t = await taskIn(w.ctx, "ATT");
    const who = await callers(w, 4);
    const contents = who.map((_, i) => `report from racer ${i}`);
    const results = await Promise.all(
      who.map((c, i) => call(c.ctx, "attach_add", { object_type: "task", object_id: t.id, kind: "file", storage_path: "out/report.txt", content_base64: b64(contents[i]!) })),
    );
    const { won, lost } = outcome(results);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(3);
    for (const r of lost) expect(r.error.hint).toContain("expected_version: 1");
    const winner = won[0]!.attachment as Structured;
    const content = contents[results.indexOf(won[0]!)]!;
    expect(winner).toMatchObject({ storage_path: "out/report.txt", blob_version: 1, size_bytes: content.length });

    // One version, holding the winner's bytes, in the one object left under the tenant's prefix.
    const stored = await versions(w.id.tenantId, "out/report.txt");
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ version: 1, sha256: await sha256Hex(content), size_bytes: content.length, created_by: winner.created_by });
    expect(await r2Keys(w.id.tenantId)).toEqual([stored[0]!.object_key]);
    expect(await r2Text(stored[0]!.object_key as string)).toBe(content);
    // One attachment, the one the winner was told about; one activity row.
    expect((await attachmentsAt(w.id.tenantId, "out/report.txt")).map((a) => a.id)).toEqual([winner.id]);
    expect((await ok(w.ctx, "attachment_query", { object_type: "task", object_id: t.id })).items).toEqual([winner]);
    expect(await activity(w.id.tenantId, "attachment.added")).toHaveLength(1);
  });

  it("the same bytes uploaded three times at once are one file: every caller gets it attached", async () => {
    const w = await world("att-same");
    const t = await taskIn(w.ctx, "ATS");
    const who = await callers(w, 3);
    const results = await Promise.all(
      who.map((c) => call(c.ctx, "attach_add", { object_type: "task", object_id: t.id, kind: "file", storage_path: "same.txt", content_base64: b64("identical"), mime_type: "text/plain" })),
    );
    const { won } = outcome(results);
    expect(won).toHaveLength(3);
    for (const r of won) expect(r.attachment).toMatchObject({ blob_version: 1, size_bytes: 9, mime_type: "text/plain" });
    const stored = await versions(w.id.tenantId, "same.txt");
    expect(stored).toHaveLength(1);
    expect(await r2Keys(w.id.tenantId)).toEqual([stored[0]!.object_key]);
    expect(await r2Text(stored[0]!.object_key as string)).toBe("identical");
    expect(await attachmentsAt(w.id.tenantId, "same.txt")).toHaveLength(3);
  });

  it("two replacements of version 1 at once: one becomes version 2, the other gets version_conflict, and version 1 keeps its bytes", async () => {
    const w = await world("att-replace-race");
    const t = await taskIn(w.ctx, "ATR");
    const first = (await ok(w.ctx, "attach_add", { object_type: "task", object_id: t.id, kind: "file", storage_path: "r.txt", content_base64: b64("v1") })).attachment as Structured;
    const who = await callers(w, 2);
    const results = await Promise.all(
      who.map((c, i) => call(c.ctx, "attach_add", { object_type: "task", object_id: t.id, kind: "file", storage_path: "r.txt", content_base64: b64(`v2 by ${i}`), expected_version: 1 })),
    );
    const { won } = outcome(results, "version_conflict");
    expect(won).toHaveLength(1);
    const content = `v2 by ${results.indexOf(won[0]!)}`;
    expect(won[0]!.attachment).toMatchObject({ blob_version: 2, size_bytes: content.length });
    const stored = await versions(w.id.tenantId, "r.txt");
    expect(stored.map((v) => v.version)).toEqual([1, 2]);
    expect(await r2Text(stored[0]!.object_key as string)).toBe("v1");
    expect(await r2Text(stored[1]!.object_key as string)).toBe(content);
    expect(await r2Keys(w.id.tenantId)).toEqual(stored.map((v) => v.object_key).sort());
    expect((await attachmentsAt(w.id.tenantId, "r.txt")).map((a) => [a.id, a.blob_version])).toEqual([
      [first.id, 1],
      [(won[0]!.attachment as Structured).id, 2],
    ]);
  });

  it("replacing a stored file is deliberate: expected_version stores the next version, and earlier attachments keep their bytes", async () => {
    const w = await world("att-replace");
    const t = await taskIn(w.ctx, "ATD");
    const file = { object_type: "task", object_id: t.id, kind: "file", storage_path: "plan.md" };
    const v1 = (await ok(w.ctx, "attach_add", { ...file, content_base64: b64("plan A") })).attachment as Structured;
    // Different bytes without expected_version: refused, nothing stored.
    const refused = await call(w.ctx, "attach_add", { ...file, content_base64: b64("plan B") });
    expect(refused.error).toMatchObject({ code: "conflict", retryable: false });
    expect(await r2Keys(w.id.tenantId)).toHaveLength(1);
    // Naming the version replaced: stored as version 2.
    const v2 = (await ok(w.ctx, "attach_add", { ...file, content_base64: b64("plan B"), expected_version: 1 })).attachment as Structured;
    expect(v2).toMatchObject({ blob_version: 2, size_bytes: 6 });
    // A stale version is refused; expected_version without bytes is a mistake.
    expect((await call(w.ctx, "attach_add", { ...file, content_base64: b64("plan C"), expected_version: 1 })).error).toMatchObject({ code: "version_conflict" });
    expect((await call(w.ctx, "attach_add", { ...file, expected_version: 2 })).error.code).toBe("invalid_input");
    expect((await call(w.ctx, "attach_add", { ...file, storage_path: "new.md", content_base64: b64("x"), expected_version: 1 })).error.code).toBe("version_conflict");
    // Attaching by path alone takes the newest version; the first attachment still reads plan A.
    const byPath = (await ok(w.ctx, "attach_add", file)).attachment as Structured;
    expect(byPath).toMatchObject({ blob_version: 2, size_bytes: 6 });
    const stored = await versions(w.id.tenantId, "plan.md");
    expect(stored.map((v) => [v.version, v.size_bytes])).toEqual([
      [1, 6],
      [2, 6],
    ]);
    expect(await r2Text(stored[0]!.object_key as string)).toBe("plan A");
    expect(await r2Text(stored[1]!.object_key as string)).toBe("plan B");
    expect((await env.DB.prepare("SELECT blob_version FROM attachments WHERE id = ?").bind(v1.id).first<Structured>())!.blob_version).toBe(1);
    expect(await r2Keys(w.id.tenantId)).toHaveLength(2);

    // A file put in the bucket out of band is version 1 in place; replacing it leaves it there.
    await env.BLOBS.put(`${w.id.tenantId}/legacy.bin`, new TextEncoder().encode("old bytes"));
    expect((await call(w.ctx, "attach_add", { ...file, storage_path: "legacy.bin", content_base64: b64("new bytes") })).error.code).toBe("conflict");
    const replaced = (await ok(w.ctx, "attach_add", { ...file, storage_path: "legacy.bin", content_base64: b64("new bytes"), expected_version: 1 })).attachment as Structured;
    expect(replaced.blob_version).toBe(2);
    expect((await versions(w.id.tenantId, "legacy.bin")).map((v) => v.object_key === `${w.id.tenantId}/legacy.bin`)).toEqual([true, false]);
    expect(await r2Text(`${w.id.tenantId}/legacy.bin`)).toBe("old bytes");
  });
});

// ---------------------------------------------------------------------------------------------
// skill_upsert

/** Every successful upsert's version still reads back as exactly what that caller wrote. */
async function expectEachWinnerKept(ctx: Ctx, slug: string, won: Result[], bodies: Map<Result, string>): Promise<void> {
  for (const r of won) {
    const read = (await ok(ctx, "skill_get", { slug, version: r.skill.version })).skill as Structured;
    expect(read.body).toBe(bodies.get(r));
    expect(read.content_hash).toBe(r.skill.content_hash);
  }
}

describe("skill_upsert: writes racing for one slug", () => {
  it("two creates of one slug with different bodies: each success is kept as a version, any other caller gets conflict", async () => {
    const w = await world("sk-create");
    const who = await callers(w, 2);
    const bodies = who.map((_, i) => `# Deploy\nthe way racer ${i} does it\n`);
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "skill_upsert", { slug: "deploy", body: bodies[i], description: `deploys (${i})` })));
    const { won, lost } = outcome(results);
    expect(won.length).toBeGreaterThanOrEqual(1);
    expect(won.length + lost.length).toBe(2);
    await expectEachWinnerKept(w.ctx, "deploy", won, new Map(results.map((r, i) => [r, bodies[i]!])));
    // The current skill is the last success, and there are as many versions as successes.
    const last = won.reduce((a, b) => (a.skill.version > b.skill.version ? a : b));
    expect((await ok(w.ctx, "skill_get", { slug: "deploy" })).skill).toMatchObject({ version: last.skill.version, body: bodies[results.indexOf(last)] });
    expect(await count("SELECT COUNT(*) AS n FROM skill_versions WHERE tenant_id = ?", w.id.tenantId)).toBe(won.length);
  });

  it("two updates of version 1 at once: each success is kept as a version, any other caller gets conflict", async () => {
    const w = await world("sk-update");
    await ok(w.ctx, "skill_upsert", { slug: "triage", body: "v1", description: "sorts bugs" });
    const who = await callers(w, 2);
    const bodies = ["v2 from the first racer", "v2 from the second racer"];
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "skill_upsert", { slug: "triage", body: bodies[i] })));
    const { won } = outcome(results);
    expect(won.length).toBeGreaterThanOrEqual(1);
    await expectEachWinnerKept(w.ctx, "triage", won, new Map(results.map((r, i) => [r, bodies[i]!])));
    expect((await ok(w.ctx, "skill_get", { slug: "triage", version: 1 })).skill.body).toBe("v1");
    expect(await count("SELECT COUNT(*) AS n FROM skill_versions WHERE tenant_id = ?", w.id.tenantId)).toBe(1 + won.length);
  });

  it("two identical creates at once are one write: both succeed, one created", async () => {
    const w = await world("sk-same");
    const who = await callers(w, 2);
    const results = await Promise.all(who.map((c) => call(c.ctx, "skill_upsert", { slug: "same", body: "one body", description: "one description" })));
    const { won } = outcome(results);
    expect(won).toHaveLength(2);
    expect(won.filter((r) => r.created)).toHaveLength(1);
    expect(won.map((r) => r.skill.version)).toEqual([1, 1]);
    expect(await count("SELECT COUNT(*) AS n FROM skill_versions WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
  });

  it("two updates pinned to version 1 at once: one becomes version 2, the other gets version_conflict", async () => {
    const w = await world("sk-pinned");
    await ok(w.ctx, "skill_upsert", { slug: "pinned", body: "v1", description: "d" });
    const who = await callers(w, 2);
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "skill_upsert", { slug: "pinned", body: `v2 by ${i}`, expected_version: 1 })));
    const { won } = outcome(results, "version_conflict");
    expect(won).toHaveLength(1);
    expect((await ok(w.ctx, "skill_get", { slug: "pinned" })).skill).toMatchObject({ version: 2, body: `v2 by ${results.indexOf(won[0]!)}` });
  });

  it("an update without expected_version keeps the version it replaced readable; expected_version makes replacing deliberate", async () => {
    const w = await world("sk-seq");
    const bob = await w.other("bob");
    await ok(w.ctx, "skill_upsert", { slug: "release", body: "alice's checklist", description: "releases", tags: ["ops"] });
    const replaced = await ok(bob.ctx, "skill_upsert", { slug: "release", body: "bob's checklist" });
    expect(replaced.skill).toMatchObject({ version: 2, updated_by: bob.id.actorId });
    expect((await ok(w.ctx, "skill_get", { slug: "release", version: 1 })).skill).toMatchObject({ version: 1, body: "alice's checklist", updated_by: w.id.actorId, tags: ["ops"] });
    expect((await ok(w.ctx, "skill_get", { slug: "release" })).skill).toMatchObject({ version: 2, body: "bob's checklist" });
    expect((await call(w.ctx, "skill_upsert", { slug: "release", body: "alice again", expected_version: 1 })).error.code).toBe("version_conflict");
    expect((await ok(w.ctx, "skill_upsert", { slug: "release", body: "alice, merged with bob", expected_version: 2 })).skill.version).toBe(3);
    expect((await call(w.ctx, "skill_get", { slug: "release", version: 4 })).error.code).toBe("not_found");
  });
});

// ---------------------------------------------------------------------------------------------
// repo_register, repo_link

describe("repo_register: registrations racing for one remote", () => {
  it("two registrations naming different default branches: one registers, the other gets conflict", async () => {
    const w = await world("rr-race");
    const who = await callers(w, 2);
    const branches = ["main", "develop"];
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "repo_register", { remote_url: "https://github.com/acme/race", default_branch: branches[i] })));
    const { won, lost } = outcome(results);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(won[0]).toMatchObject({ created: true, repository: { default_branch: branches[results.indexOf(won[0]!)] } });
    const row = await env.DB.prepare("SELECT default_branch FROM repositories WHERE tenant_id = ?").bind(w.id.tenantId).all<Structured>();
    expect(row.results).toEqual([{ default_branch: won[0]!.repository.default_branch }]);
    // Without a default branch the registered repository resolves.
    expect(await ok(w.ctx, "repo_register", { slug: "acme/race" })).toMatchObject({ created: false, repository: { id: won[0]!.repository.id } });
  });
});

describe("repo_link: links racing for one project and repository", () => {
  async function setup(name: string) {
    const w = await world(name);
    await ok(w.ctx, "project_create", { title: "Linked", key: "LNK" });
    const repo = (await ok(w.ctx, "repo_register", { slug: "acme/api" })).repository as Structured;
    return { w, repo, who: await callers(w, 2) };
  }
  const storedRole = async (tenantId: string) => (await env.DB.prepare("SELECT role FROM project_repositories WHERE tenant_id = ?").bind(tenantId).all<{ role: string }>()).results.map((r) => r.role);

  it("two first links with different roles: one links, the other gets conflict", async () => {
    const { w, repo, who } = await setup("rl-race");
    const roles = ["docs", "dependency"];
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "repo_link", { project_id: "LNK", repository_id: repo.id, role: roles[i] })));
    const { won, lost } = outcome(results);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(won[0]!.role).toBe(roles[results.indexOf(won[0]!)]);
    expect(await storedRole(w.id.tenantId)).toEqual([won[0]!.role]);
    expect(await activity(w.id.tenantId, "repo.linked")).toHaveLength(1);
  });

  it("two role changes from primary at once: one changes it, the other gets conflict", async () => {
    const { w, repo, who } = await setup("rl-change");
    await ok(w.ctx, "repo_link", { project_id: "LNK", repository_id: repo.id });
    const roles = ["docs", "dependency"];
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "repo_link", { project_id: "LNK", repository_id: repo.id, role: roles[i], expected_role: "primary" })));
    const { won } = outcome(results);
    expect(won).toHaveLength(1);
    expect(await storedRole(w.id.tenantId)).toEqual([roles[results.indexOf(won[0]!)]]);
  });

  it("changing a link's role is deliberate: without expected_role a different role is refused", async () => {
    const { w, repo } = await setup("rl-seq");
    await ok(w.ctx, "repo_link", { project_id: "LNK", repository_id: repo.id, role: "primary" });
    const refused = await call(w.ctx, "repo_link", { project_id: "LNK", repository_id: repo.id, role: "docs" });
    expect(refused.error).toMatchObject({ code: "conflict", retryable: false });
    expect(refused.error.hint).toContain("expected_role: primary");
    expect(await storedRole(w.id.tenantId)).toEqual(["primary"]);
    // The same role, or none, resolves the link as it is.
    expect((await ok(w.ctx, "repo_link", { project_id: "LNK", repository_id: repo.id, role: "primary" })).role).toBe("primary");
    expect((await ok(w.ctx, "repo_link", { project_id: "LNK", repository_id: repo.id })).role).toBe("primary");
    // Naming the role replaced changes it, and the timeline keeps the old one.
    expect((await ok(w.ctx, "repo_link", { project_id: "LNK", repository_id: repo.id, role: "docs", expected_role: "primary" })).role).toBe("docs");
    const linked = await activity(w.id.tenantId, "repo.linked");
    expect(JSON.parse(linked.at(-1)!.metadata as string)).toEqual({ repository_id: repo.id, previous_role: "primary" });
    // A stale expected_role, a missing link, or expected_role without role: refused.
    expect((await call(w.ctx, "repo_link", { project_id: "LNK", repository_id: repo.id, role: "dependency", expected_role: "primary" })).error.code).toBe("conflict");
    expect(await storedRole(w.id.tenantId)).toEqual(["docs"]);
    const other = (await ok(w.ctx, "repo_register", { slug: "acme/other" })).repository as Structured;
    expect((await call(w.ctx, "repo_link", { project_id: "LNK", repository_id: other.id, role: "docs", expected_role: "primary" })).error.code).toBe("conflict");
    expect((await call(w.ctx, "repo_link", { project_id: "LNK", repository_id: repo.id, expected_role: "docs" })).error.code).toBe("invalid_input");
    expect(await storedRole(w.id.tenantId)).toEqual(["docs"]);
  });
});

// ---------------------------------------------------------------------------------------------
// code_ref_update (code_ref_add and task_code_ref append: every call is its own ref)

describe("code refs", () => {
  it("code_ref_update: two moves of one open PR at once (merged, closed): every success is on the timeline in order, and a merged PR stays merged", async () => {
    const w = await world("cr-race");
    const t = await taskIn(w.ctx, "CR");
    const ref = (await ok(w.ctx, "task_code_ref", { task_id: t.id, ref_type: "pr", pr_number: 7 })).code_ref as Structured;
    const who = await callers(w, 2);
    const states = ["merged", "closed"];
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "code_ref_update", { code_ref_id: ref.id, patch: { pr_state: states[i] } })));
    // A move decided on a stale read is refused (conflict); one decided after the merge is an invalid transition.
    const { won } = outcome(results, ["conflict", "invalid_transition"]);
    expect(won.length).toBeGreaterThanOrEqual(1);
    const moves = (await env.DB.prepare("SELECT verb FROM activity WHERE tenant_id = ? AND verb IN ('pr.merged', 'pr.closed') ORDER BY seq").bind(w.id.tenantId).all<{ verb: string }>()).results.map(
      (m) => m.verb.slice(3),
    );
    expect(moves.slice().sort()).toEqual(won.map((r) => r.code_ref.pr_state as string).sort());
    // What is stored is the last acknowledged move, and nothing moved a merged PR on.
    const stored = (await env.DB.prepare("SELECT pr_state FROM code_refs WHERE id = ?").bind(ref.id).first<Structured>())!.pr_state;
    expect(stored).toBe(moves.at(-1));
    if (moves.includes("merged")) expect(moves.at(-1)).toBe("merged");
  });

  it("code_ref_update: the same move twice at once is one write; different fields at once are both kept", async () => {
    const w = await world("cr-same");
    const t = await taskIn(w.ctx, "CS");
    const ref = (await ok(w.ctx, "task_code_ref", { task_id: t.id, ref_type: "pr", pr_number: 8 })).code_ref as Structured;
    const who = await callers(w, 2);
    const same = await Promise.all(who.map((c) => call(c.ctx, "code_ref_update", { code_ref_id: ref.id, patch: { pr_state: "merged" } })));
    expect(outcome(same).won).toHaveLength(2);
    expect(await activity(w.id.tenantId, "pr.merged")).toHaveLength(1);
    const fields = await Promise.all([
      call(who[0]!.ctx, "code_ref_update", { code_ref_id: ref.id, patch: { title: "Ship it" } }),
      call(who[1]!.ctx, "code_ref_update", { code_ref_id: ref.id, patch: { url: "https://example.com/pr/8" } }),
    ]);
    expect(outcome(fields).won).toHaveLength(2);
    expect(await env.DB.prepare("SELECT title, url, pr_state FROM code_refs WHERE id = ?").bind(ref.id).first()).toEqual({ title: "Ship it", url: "https://example.com/pr/8", pr_state: "merged" });
  });

  it("task_code_ref: two records of one commit at once are two refs, both kept", async () => {
    const w = await world("cr-add");
    const t = await taskIn(w.ctx, "CA");
    const who = await callers(w, 2);
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "task_code_ref", { task_id: t.id, ref_type: "commit", sha: "abcdef1234567", title: `by ${i}` })));
    const { won } = outcome(results);
    expect(won).toHaveLength(2);
    const listed = (await ok(w.ctx, "code_ref_query", { object_type: "task", object_id: t.id })).items as Structured[];
    expect(listed.map((r) => r.title).sort()).toEqual(["by 0", "by 1"]);
  });
});

// ---------------------------------------------------------------------------------------------
// register_actor

describe("register_actor: registrations racing for one external_ref", () => {
  it("two first registrations with different display names: one registers, the other gets conflict", async () => {
    const w = await world("ra-race");
    const who = await callers(w, 2);
    const names = ["Alice (from one)", "Alice (from two)"];
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "register_actor", { external_ref: "alice", kind: "human", display_name: names[i] })));
    const { won, lost } = outcome(results);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(won[0]).toMatchObject({ created: true, actor: { display_name: names[results.indexOf(won[0]!)] } });
    const row = await env.DB.prepare("SELECT display_name FROM actors WHERE tenant_id = ? AND name = 'alice'").bind(w.id.tenantId).first<Structured>();
    expect(row!.display_name).toBe(won[0]!.actor.display_name);
  });

  it("two updates of one actor at once: one is stored, or both in turn with the replaced value in the timeline", async () => {
    const w = await world("ra-update");
    await ok(w.ctx, "register_actor", { external_ref: "bot", display_name: "Bot" });
    const who = await callers(w, 2);
    const names = ["Bot One", "Bot Two"];
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "register_actor", { external_ref: "bot", display_name: names[i], update: true })));
    const { won } = outcome(results);
    expect(won.length).toBeGreaterThanOrEqual(1);
    const updates = await activity(w.id.tenantId, "actor.updated");
    expect(updates).toHaveLength(won.length);
    // Each update records what it replaced: the first replaced "Bot", a second one the first's name.
    const previous = updates.map((u) => (JSON.parse(u.metadata as string) as Structured).previous.display_name);
    expect(previous[0]).toBe("Bot");
    const stored = (await env.DB.prepare("SELECT display_name FROM actors WHERE tenant_id = ? AND name = 'bot'").bind(w.id.tenantId).first<Structured>())!.display_name;
    if (won.length === 2) expect(previous[1]).toBe(names.find((n) => n !== stored));
    else expect(stored).toBe(won[0]!.actor.display_name);
  });

  it("replacing an actor's fields is deliberate: update: true replaces them and the timeline keeps the old values", async () => {
    const w = await world("ra-seq");
    await ok(w.ctx, "register_actor", { external_ref: "carol", kind: "human", role: "reviewer" });
    const refused = await call(w.ctx, "register_actor", { external_ref: "carol", role: "releaser" });
    expect(refused.error).toMatchObject({ code: "conflict", retryable: false });
    expect(refused.error.message).toContain("role");
    expect(refused.error.hint).toContain("update: true");
    // The same values (or none) resolve the actor.
    expect((await ok(w.ctx, "register_actor", { external_ref: "carol", kind: "human" })).actor.role).toBe("reviewer");
    const updated = await ok(w.ctx, "register_actor", { external_ref: "carol", role: "releaser", update: true });
    expect(updated).toMatchObject({ created: false, actor: { role: "releaser", kind: "human" } });
    const [row] = await activity(w.id.tenantId, "actor.updated");
    expect(JSON.parse(row!.metadata as string)).toEqual({ changed: ["role"], previous: { role: "reviewer" } });
  });
});

// ---------------------------------------------------------------------------------------------
// knowledge: notes have ids, not names, so knowledge_write never collides; updates compare versions

describe("knowledge", () => {
  it("knowledge_update: two patches pinned to version 1 at once: one is stored as version 2, the other gets version_conflict", async () => {
    const w = await world("kn-race");
    const note = (await ok(w.ctx, "knowledge_write", { body: "retry with backoff", title: "Retries" })).note as Structured;
    const who = await callers(w, 2);
    const bodies = ["retry with jittered backoff", "retry at most three times"];
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "knowledge_update", { note_id: note.id, patch: { body: bodies[i] }, expected_version: 1 })));
    const won = results.filter((r) => r.ok);
    expect(won).toHaveLength(1);
    expect(results.find((r) => !r.ok)!.error.code).toBe("version_conflict");
    const row = await env.DB.prepare("SELECT body, version FROM knowledge_notes WHERE id = ?").bind(note.id).first<Structured>();
    expect(row).toEqual({ body: bodies[results.indexOf(won[0]!)], version: 2 });
    expect(won[0]!.note).toMatchObject({ version: 2, body: row!.body });
  });

  it("knowledge_write: two notes with one title at once are two notes", async () => {
    const w = await world("kn-write");
    const who = await callers(w, 2);
    const results = await Promise.all(who.map((c, i) => call(c.ctx, "knowledge_write", { title: "Same title", body: `body ${i}` })));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(await count("SELECT COUNT(*) AS n FROM knowledge_notes WHERE tenant_id = ? AND title = 'Same title'", w.id.tenantId)).toBe(2);
  });
});
