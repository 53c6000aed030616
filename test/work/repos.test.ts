/**
 * The repositories room of the work ledger (seed 001): normalizeRemote, repo_register (one row per
 * normalized remote, credentials never kept), repo_link and repo_query, task_code_ref and
 * code_ref_add (ref shapes, repository defaults), code_ref_update (pr.merged / pr.closed),
 * code_ref_query, the evidence gate on done, task_claim's repository scope and tenant isolation,
 * through the registry against real local D1.
 *
 * Time: the clock sits in the future (T0, 2030) so task claims made here never expire in real
 * time. Each test has its own tenant because D1 keeps rows between the tests of this file.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../src/core/context";
import { normalizeRemote } from "../../src/work/repos/model";
import { call, count, fails, makeCtx, MINUTE, ok, refusedWithoutWrites, seedIdentity, TestClock, type Structured, type TestIdentity } from "../support/helpers";
import { mintRun } from "../support/run-helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SHA_A = "A1B2C3D4E5F60718293A4B5C6D7E8F9012345678";
const SHA_B = "0123456789abcdef0123456789abcdef01234567";

interface World {
  id: TestIdentity;
  ctx: Ctx;
  clock: TestClock;
}

/** A fresh tenant with one caller ("agent") and a clock at T0. */
async function world(name: string): Promise<World> {
  const id = await seedIdentity(`wr-${name}-${crypto.randomUUID().slice(0, 8)}`, "agent");
  const clock = new TestClock(new Date(T0));
  return { id, clock, ctx: makeCtx(id, clock, "sess-1") };
}

async function project(ctx: Ctx, key: string): Promise<Structured> {
  return (await ok(ctx, "project_create", { title: `Project ${key}`, key })).project as Structured;
}

async function task(ctx: Ctx, projectId: string, args: Record<string, unknown> = {}): Promise<Structured> {
  return (await ok(ctx, "task_create", { project_id: projectId, title: "a task", ...args })).task as Structured;
}

async function register(ctx: Ctx, args: Record<string, unknown>): Promise<Structured> {
  return ok(ctx, "repo_register", args);
}

async function repo(ctx: Ctx, slug: string, host = "github.com"): Promise<Structured> {
  return (await register(ctx, { remote_url: `https://${host}/${slug}` })).repository as Structured;
}

async function codeRef(ctx: Ctx, taskId: string, args: Record<string, unknown>): Promise<Structured> {
  return (await ok(ctx, "task_code_ref", { task_id: taskId, ...args })).code_ref as Structured;
}

async function refQuery(ctx: Ctx, args: Record<string, unknown>): Promise<Structured[]> {
  return (await ok(ctx, "code_ref_query", { limit: 200, ...args })).items as Structured[];
}

async function repoQuery(ctx: Ctx, args: Record<string, unknown>): Promise<Structured[]> {
  return (await ok(ctx, "repo_query", { limit: 200, ...args })).items as Structured[];
}

async function activityRows(tenantId: string, where = "1 = 1", ...params: unknown[]): Promise<Structured[]> {
  const rows = await env.DB.prepare(`SELECT * FROM activity WHERE tenant_id = ? AND ${where} ORDER BY seq`)
    .bind(tenantId, ...params)
    .all<Structured>();
  return rows.results;
}

const ids = (items: Structured[]) => items.map((r) => r.id as string);

/** Everything the repo tools write for one tenant, so a refused call can be shown to write nothing. */
async function tenantState(tenantId: string) {
  const text = (sql: string) =>
    env.DB.prepare(sql)
      .bind(tenantId)
      .first<{ s: string | null }>()
      .then((r) => r?.s ?? "");
  return {
    repos: await text(`SELECT group_concat(id || ':' || slug || ':' || remote_url || ':' || default_branch, '|') AS s FROM (SELECT * FROM repositories WHERE tenant_id = ? ORDER BY id)`),
    links: await text(
      `SELECT group_concat(project_id || ':' || repository_id || ':' || role, '|') AS s FROM (SELECT * FROM project_repositories WHERE tenant_id = ? ORDER BY project_id, repository_id)`,
    ),
    refs: await text(
      `SELECT group_concat(id || ':' || object_type || ':' || object_id || ':' || ref_type || ':' || ifnull(repository_id, '-') || ':' || ifnull(sha, '-') || ':' ||
         ifnull(pr_state, '-') || ':' || title || ':' || ifnull(url, '-'), '|') AS s FROM (SELECT * FROM code_refs WHERE tenant_id = ? ORDER BY id)`,
    ),
    tasks: await text(`SELECT group_concat(id || ':' || status || ':' || updated_at, '|') AS s FROM (SELECT * FROM tasks WHERE tenant_id = ? ORDER BY id)`),
    activity: await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", tenantId),
    pendingKeys: await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE tenant_id = ? AND status = 'pending'", tenantId),
  };
}

/** Asserts a failed call with `code`, a full error body, and nothing written anywhere in the tenant. */
const rejects = (ctx: Ctx, tool: string, args: unknown, code: string): Promise<Structured> => refusedWithoutWrites(ctx, tool, args, code, () => tenantState(ctx.tenantId));

// ---------------------------------------------------------------------------------------------

describe("normalizeRemote", () => {
  it("reduces https, http, ssh and scp-style remotes of one repository to one key", () => {
    const key = { host: "github.com", owner: "acme", name: "api", url: "https://github.com/acme/api" };
    for (const raw of [
      "https://github.com/acme/api",
      "https://github.com/acme/api.git",
      "https://github.com/acme/api/",
      "https://github.com/acme/api.git/",
      "http://github.com/acme/api",
      "ssh://git@github.com/acme/api.git",
      "ssh://git@github.com:22/acme/api",
      "git@github.com:acme/api.git",
      "git@github.com:acme/api",
      "git://github.com/acme/api.git",
      "  https://github.com/acme/api.git \n",
    ]) {
      expect(normalizeRemote(raw), raw).toEqual(key);
    }
  });

  it("drops credentials, folds case into the key and keeps non-GitHub hosts", () => {
    const withToken = normalizeRemote("https://user:ghp_t0k3n@github.com/acme/api.git");
    expect(withToken).toEqual({ host: "github.com", owner: "acme", name: "api", url: "https://github.com/acme/api" });
    expect(JSON.stringify(withToken)).not.toMatch(/ghp_t0k3n|user/);
    expect(normalizeRemote("https://x-access-token:s3cret@GitHub.com/acme/api")!.url).toBe("https://github.com/acme/api");

    const upper = normalizeRemote("https://GitHub.COM/Acme/API.git")!;
    expect(upper.url).toBe("https://github.com/acme/api");
    expect(upper).toMatchObject({ host: "github.com", owner: "Acme", name: "API" });
    expect(normalizeRemote("git@GITHUB.com:ACME/Api.GIT")!.url).toBe(upper.url);

    expect(normalizeRemote("https://gitlab.example.com/platform/billing.git")).toEqual({
      host: "gitlab.example.com",
      owner: "platform",
      name: "billing",
      url: "https://gitlab.example.com/platform/billing",
    });
    expect(normalizeRemote("git@gitlab.example.com:platform/billing.git")!.url).toBe("https://gitlab.example.com/platform/billing");
    // Dots, dashes and underscores inside a name are fine, and a leading dot (".github") too.
    expect(normalizeRemote("https://github.com/my-org/.github")).toMatchObject({ owner: "my-org", name: ".github" });
    expect(normalizeRemote("https://github.com/a_b/c.d-e")).toMatchObject({ owner: "a_b", name: "c.d-e" });
  });

  it("rejects what is not owner/name on a host", () => {
    for (const raw of [
      "",
      "   ",
      "api",
      "acme/api",
      "just some words",
      "https://github.com/acme",
      "https://github.com/acme/api/tree",
      "https://github.com/acme/api/pulls/1",
      "git@github.com:acme/api/extra.git",
      "ftp://github.com/acme/api",
      "file:///home/me/acme/api",
      "mailto:someone",
      "https://github.com/acme/api space",
      "https://github.com/../../etc/passwd",
      "https://github.com/acme/../../etc/passwd",
      "https://github.com/acme/api/../../x/y",
      "https://github.com/acme/%2e%2e/x/y",
      "https://github.com/acme/..",
      "https://github.com/acme/...git",
      "ssh://git@github.com/../acme/api",
      "git@github.com:../secrets",
      "git@github.com:acme/..",
      "git@github.com:./api",
    ]) {
      expect(normalizeRemote(raw), JSON.stringify(raw)).toBeNull();
    }
  });
});

describe("repo_register", () => {
  it("takes owner/name alone as remote_url and a remote URL as slug; project_query filters by repository by id, owner/name or remote", async () => {
    const w = await world("reg-alone");
    const alone = await register(w.ctx, { remote_url: "Acme/Billing" });
    expect(alone).toMatchObject({ created: true, repository: { host: "github.com", slug: "Acme/Billing", remote_url: "https://github.com/acme/billing" } });
    const again = await register(w.ctx, { slug: "https://github.com/acme/billing.git" });
    expect(again).toMatchObject({ created: false, repository: { id: alone.repository.id } });
    const onHost = await register(w.ctx, { remote_url: "acme/tools", host: "gitlab.example.com" });
    expect(onHost.repository.remote_url).toBe("https://gitlab.example.com/acme/tools");

    const billing = await ok(w.ctx, "project_create", { title: "Billing", key: "BILL" });
    await ok(w.ctx, "project_create", { title: "Tools", key: "TOOL" });
    await ok(w.ctx, "repo_link", { project_id: "BILL", repository_id: alone.repository.id });
    for (const ref of [alone.repository.id, "acme/billing", "git@github.com:acme/billing.git"]) {
      expect(
        (await ok(w.ctx, "project_query", { repository_id: ref })).items.map((p: Structured) => p.id),
        ref,
      ).toEqual([billing.project.id]);
    }
    expect((await ok(w.ctx, "project_query", { repository_id: "acme/tools" })).items).toEqual([]);
    expect((await ok(w.ctx, "project_query", {})).items).toHaveLength(2);
  });

  it("registers by remote_url, by slug and by owner and name (with host), with defaults", async () => {
    const w = await world("reg-forms");
    const byUrl = await register(w.ctx, { remote_url: "git@github.com:acme/api.git" });
    expect(byUrl.created).toBe(true);
    expect(byUrl.repository).toEqual({
      id: expect.stringMatching(UUID_V7),
      host: "github.com",
      owner: "acme",
      name: "api",
      slug: "acme/api",
      remote_url: "https://github.com/acme/api",
      default_branch: "main",
      created_at: T0,
    });
    expect(byUrl.idempotent_replay).toBeUndefined();

    const bySlug = await register(w.ctx, { slug: "acme/web", default_branch: "develop" });
    expect(bySlug).toMatchObject({ created: true, repository: { host: "github.com", slug: "acme/web", remote_url: "https://github.com/acme/web", default_branch: "develop" } });

    const byParts = await register(w.ctx, { owner: "platform", name: "billing", host: "gitlab.example.com" });
    expect(byParts).toMatchObject({
      created: true,
      repository: { host: "gitlab.example.com", owner: "platform", name: "billing", slug: "platform/billing", remote_url: "https://gitlab.example.com/platform/billing" },
    });
    const byPartsDefaultHost = await register(w.ctx, { owner: "platform", name: "billing" });
    expect(byPartsDefaultHost.created).toBe(true);
    expect(byPartsDefaultHost.repository.host).toBe("github.com");
    expect(byPartsDefaultHost.repository.id).not.toBe(byParts.repository.id);

    expect(await count("SELECT COUNT(*) AS n FROM repositories WHERE tenant_id = ?", w.id.tenantId)).toBe(4);
    const row = await env.DB.prepare("SELECT created_by FROM repositories WHERE id = ?").bind(byUrl.repository.id).first<{ created_by: string }>();
    expect(row!.created_by).toBe(w.id.actorId);
  });

  it("registers one repository however it is spelled, and records repo.registered once", async () => {
    const w = await world("reg-dedupe");
    const first = await register(w.ctx, { remote_url: "https://github.com/Acme/Widgets.git" });
    expect(first.created).toBe(true);
    const spellings: Array<Record<string, unknown>> = [
      { remote_url: "git@github.com:acme/widgets.git" },
      { remote_url: "ssh://git@GitHub.com/ACME/widgets" },
      { remote_url: "http://github.com/acme/widgets/" },
      { slug: "acme/WIDGETS" },
      { owner: "ACME", name: "widgets", default_branch: "main" },
    ];
    for (const args of spellings) {
      const again = await register(w.ctx, args);
      expect(again.created, JSON.stringify(args)).toBe(false);
      // The first registration's spelling and default branch stand.
      expect(again.repository).toEqual(first.repository);
    }
    // Naming another default branch would be a write acknowledged and dropped: refused.
    const other = await rejects(w.ctx, "repo_register", { owner: "ACME", name: "widgets", default_branch: "trunk" }, "conflict");
    expect(other.message).toContain("'main'");
    expect(await count("SELECT COUNT(*) AS n FROM repositories WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
    const registered = await activityRows(w.id.tenantId, "verb = 'repo.registered'");
    expect(registered).toHaveLength(1);
    expect(registered[0]).toMatchObject({ object_type: "repository", object_id: first.repository.id, actor_id: w.id.actorId });
  });

  it("never stores, returns or logs a credential from the remote", async () => {
    const w = await world("reg-creds");
    const token = "ghp_S3cr3tT0kenValue";
    const res = await call(w.ctx, "repo_register", { remote_url: `https://x-access-token:${token}@github.com/acme/vault.git`, idempotency_key: "reg-creds-1" });
    expect(res.ok).toBe(true);
    expect(res.repository.remote_url).toBe("https://github.com/acme/vault");
    expect(JSON.stringify(res)).not.toContain(token);
    const rowText = await env.DB.prepare(`SELECT id || host || owner || name || slug || remote_url || default_branch || created_by AS s FROM repositories WHERE tenant_id = ?`)
      .bind(w.id.tenantId)
      .first<{ s: string }>();
    expect(rowText!.s).toContain("acme/vault");
    expect(rowText!.s).not.toContain(token);
    expect(rowText!.s).not.toContain("x-access-token");
    const activity = await activityRows(w.id.tenantId);
    expect(activity.length).toBeGreaterThan(0);
    expect(JSON.stringify(activity)).not.toContain(token);
    // The stored idempotent result is what was returned, so it is clean too.
    const keys = await env.DB.prepare("SELECT result FROM idempotency_keys WHERE tenant_id = ?").bind(w.id.tenantId).all<{ result: string }>();
    expect(keys.results).toHaveLength(1);
    expect(keys.results[0]!.result).toContain("acme/vault");
    expect(keys.results[0]!.result).not.toContain(token);
  });

  it("racing registrations of one repository leave one row and one created: true", async () => {
    const w = await world("reg-race");
    const spellings = [
      "https://github.com/acme/race.git",
      "git@github.com:acme/race.git",
      "ssh://git@github.com/acme/race",
      "https://github.com/ACME/race/",
      "http://github.com/acme/race",
      "https://github.com/acme/Race",
    ];
    const results = await Promise.all(spellings.map((remote_url) => register(w.ctx, { remote_url })));
    expect(new Set(results.map((r) => r.repository.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await count("SELECT COUNT(*) AS n FROM repositories WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'repo.registered'", w.id.tenantId)).toBe(1);
  });

  it("refuses nothing-to-register and remotes it does not understand, without echoing credentials", async () => {
    const w = await world("reg-bad");
    await repo(w.ctx, "acme/existing");
    await rejects(w.ctx, "repo_register", {}, "invalid_input");
    await rejects(w.ctx, "repo_register", { owner: "acme" }, "invalid_input");
    await rejects(w.ctx, "repo_register", { host: "github.com" }, "invalid_input");
    await rejects(w.ctx, "repo_register", { default_branch: "main" }, "invalid_input");
    await rejects(w.ctx, "repo_register", { slug: "acme" }, "invalid_input");
    await rejects(w.ctx, "repo_register", { slug: "acme/api/extra" }, "invalid_input");
    await rejects(w.ctx, "repo_register", { remote_url: "ftp://github.com/acme/api" }, "invalid_input");
    await rejects(w.ctx, "repo_register", { remote_url: "https://github.com/acme/../../etc/passwd" }, "invalid_input");
    await rejects(w.ctx, "repo_register", { remote_url: "https://github.com/acme/api", bogus: 1 }, "invalid_input");

    const secret = "hunter2SECRET";
    for (const remote_url of [
      `https://deploy:${secret}@github.com/acme/api/tree/main`,
      `ftp://deploy:${secret}@github.com/acme/api`,
      `deploy:${secret}@github.com/acme/api`,
      `deploy:${secret}@github.com:acme/api/extra.git`,
      `https://deploy:p@ss${secret}@github.com/acme/api/x`,
      `https://github.com/acme/api/x?access_token=${secret}`,
    ]) {
      const error = await rejects(w.ctx, "repo_register", { remote_url }, "invalid_input");
      expect(error.message, remote_url).not.toContain(secret);
      expect(error.hint).not.toContain(secret);
      expect(error.message).toContain("github.com");
    }
  });
});

describe("repo_link", () => {
  it("links with roles, re-linking with expected_role changes the role in place, and the brief and repo_query show them", async () => {
    const w = await world("link-roles");
    const p = await project(w.ctx, "LNK");
    const api = await repo(w.ctx, "acme/api");
    const docs = await repo(w.ctx, "acme/docs");
    const lib = await repo(w.ctx, "acme/lib");
    const unlinked = await repo(w.ctx, "acme/other");

    const linked = await ok(w.ctx, "repo_link", { project_id: "LNK", repository_id: api.id });
    expect(linked).toMatchObject({ project_id: p.id, role: "primary", repository: { id: api.id, slug: "acme/api" } });
    expect((await ok(w.ctx, "repo_link", { project_id: p.id, repo_slug: "ACME/Docs", role: "docs" })).role).toBe("docs");
    expect((await ok(w.ctx, "repo_link", { project_id: "lnk", repository_id: "acme/lib", role: "dependency" })).repository.id).toBe(lib.id);

    const brief = await ok(w.ctx, "project_brief", { project: "LNK" });
    expect(brief.repositories).toEqual([
      { id: lib.id, slug: "acme/lib", role: "dependency" },
      { id: docs.id, slug: "acme/docs", role: "docs" },
      { id: api.id, slug: "acme/api", role: "primary" },
    ]);
    const listed = await repoQuery(w.ctx, { project_id: "LNK" });
    expect(listed.map((r) => [r.slug, r.role])).toEqual([
      ["acme/api", "primary"],
      ["acme/docs", "docs"],
      ["acme/lib", "dependency"],
    ]);
    expect(ids(listed)).not.toContain(unlinked.id);
    // Without project_id there is no role.
    expect((await repoQuery(w.ctx, {})).every((r) => r.role === undefined)).toBe(true);

    const linkActivity = () => activityRows(w.id.tenantId, "verb = 'repo.linked'");
    expect(await linkActivity()).toHaveLength(3);
    // Re-linking with a new role, naming the role it replaces, changes the one link row.
    await rejects(w.ctx, "repo_link", { project_id: "LNK", repo_slug: "acme/api", role: "dependency" }, "conflict");
    expect((await ok(w.ctx, "repo_link", { project_id: "LNK", repo_slug: "acme/api", role: "dependency", expected_role: "primary" })).role).toBe("dependency");
    expect(await count("SELECT COUNT(*) AS n FROM project_repositories WHERE tenant_id = ? AND project_id = ?", w.id.tenantId, p.id)).toBe(3);
    expect((await repoQuery(w.ctx, { project_id: "LNK", slug: "acme/api" }))[0]!.role).toBe("dependency");
    const after = await linkActivity();
    expect(after).toHaveLength(4);
    expect(after[3]).toMatchObject({ object_type: "project", object_id: p.id, project_id: p.id, summary: "acme/api linked as dependency" });
    // Re-linking with the same role changes nothing and records nothing.
    expect((await ok(w.ctx, "repo_link", { project_id: "LNK", repo_slug: "acme/api", role: "dependency" })).role).toBe("dependency");
    expect(await linkActivity()).toHaveLength(4);
    expect(await count("SELECT COUNT(*) AS n FROM project_repositories WHERE tenant_id = ?", w.id.tenantId)).toBe(3);
  });

  it("refuses unknown projects and repositories, a missing repository and an unknown role, writing nothing", async () => {
    const w = await world("link-bad");
    await project(w.ctx, "LB");
    const r = await repo(w.ctx, "acme/api");
    await rejects(w.ctx, "repo_link", { project_id: "NOPE", repository_id: r.id }, "not_found");
    await rejects(w.ctx, "repo_link", { project_id: "LB", repository_id: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "repo_link", { project_id: "LB", repo_slug: "acme/unknown" }, "not_found");
    await rejects(w.ctx, "repo_link", { project_id: "LB" }, "invalid_input");
    await rejects(w.ctx, "repo_link", { project_id: "LB", repository_id: r.id, role: "owner" }, "invalid_input");
    expect(await count("SELECT COUNT(*) AS n FROM project_repositories WHERE tenant_id = ?", w.id.tenantId)).toBe(0);
  });
});

describe("repo_query", () => {
  it("filters by repository, slug (any case), host and text, and pages by cursor", async () => {
    const w = await world("query");
    const slugs = ["acme/api", "acme/web", "beta/api-gateway", "beta/tools", "zeta/docs"];
    const made = new Map<string, Structured>();
    for (const s of slugs) made.set(s, await repo(w.ctx, s));
    const gl = await repo(w.ctx, "platform/billing", "gitlab.example.com");

    const all = await repoQuery(w.ctx, {});
    expect(all.map((r) => r.slug)).toEqual([...slugs, "platform/billing"].sort());
    expect((await repoQuery(w.ctx, { slug: "ACME/API" })).map((r) => r.id)).toEqual([made.get("acme/api")!.id]);
    expect(ids(await repoQuery(w.ctx, { repository_id: "Beta/Tools" }))).toEqual([made.get("beta/tools")!.id]);
    expect(ids(await repoQuery(w.ctx, { repository_id: made.get("zeta/docs")!.id }))).toEqual([made.get("zeta/docs")!.id]);
    expect(ids(await repoQuery(w.ctx, { host: "GitLab.Example.com" }))).toEqual([gl.id]);
    expect((await repoQuery(w.ctx, { host: "github.com" })).map((r) => r.slug)).toEqual(slugs);
    expect((await repoQuery(w.ctx, { q: "API" })).map((r) => r.slug)).toEqual(["acme/api", "beta/api-gateway"]);
    expect((await repoQuery(w.ctx, { q: "beta/", host: "github.com" })).map((r) => r.slug)).toEqual(["beta/api-gateway", "beta/tools"]);
    expect(await repoQuery(w.ctx, { slug: "acme/nothing" })).toEqual([]);

    const pages: Structured[][] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(w.ctx, "repo_query", { limit: 2, ...(cursor ? { cursor } : {}) });
      pages.push(page.items as Structured[]);
      cursor = page.next_cursor as string | undefined;
    } while (cursor && pages.length < 10);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 2]);
    expect(pages.flat().map((r) => r.id)).toEqual(ids(all));
    await rejects(w.ctx, "repo_query", { cursor: "not-a-cursor" }, "invalid_input");
    await rejects(w.ctx, "repo_query", { project_id: "NOPE" }, "not_found");
  });
});

describe("task_code_ref", () => {
  it("records each ref type with the field it needs, and refuses each without it", async () => {
    const w = await world("ref-shapes");
    await project(w.ctx, "RS");
    const t = await task(w.ctx, "RS");
    const ref = t.ref as string;

    const commit = await codeRef(w.ctx, ref, { ref_type: "commit", sha: SHA_A });
    expect(commit).toMatchObject({ object_type: "task", object_id: t.id, ref_type: "commit", sha: SHA_A.toLowerCase(), pr_state: null, title: "", created_by: w.id.actorId, created_at: T0 });
    expect(commit.id).toMatch(UUID_V7);
    expect(await codeRef(w.ctx, ref, { ref_type: "branch", branch: "feature/x" })).toMatchObject({ ref_type: "branch", branch: "feature/x", sha: null });
    expect(await codeRef(w.ctx, ref, { ref_type: "pr", pr_number: 12 })).toMatchObject({ ref_type: "pr", pr_number: 12, pr_state: "open" });
    expect(await codeRef(w.ctx, ref, { ref_type: "pr", pr_url: "https://github.com/acme/api/pull/13", pr_state: "draft" })).toMatchObject({
      pr_number: null,
      pr_url: "https://github.com/acme/api/pull/13",
      pr_state: "draft",
    });
    expect(await codeRef(w.ctx, ref, { ref_type: "tag", title: "v1.2.0" })).toMatchObject({ ref_type: "tag", title: "v1.2.0" });
    expect(await codeRef(w.ctx, ref, { ref_type: "tag", sha: SHA_B })).toMatchObject({ ref_type: "tag", sha: SHA_B });
    expect(await codeRef(w.ctx, ref, { ref_type: "compare", url: "https://github.com/acme/api/compare/a...b" })).toMatchObject({
      ref_type: "compare",
      url: "https://github.com/acme/api/compare/a...b",
    });
    const run = await mintRun(w.ctx);
    expect(await codeRef(w.ctx, t.id as string, { ref_type: "commit", sha: "abcdef1", run_id: run.run_key, title: "short sha" })).toMatchObject({ sha: "abcdef1", run_id: run.id, title: "short sha" });

    for (const args of [
      { ref_type: "commit" },
      { ref_type: "commit", branch: "main" },
      { ref_type: "branch", sha: SHA_A },
      { ref_type: "pr", title: "no number" },
      { ref_type: "tag", url: "https://example.test/x" },
      { ref_type: "compare", sha: SHA_A },
      { ref_type: "commit", sha: SHA_A, pr_state: "open" },
      { ref_type: "branch", branch: "b", pr_state: "merged" },
      { ref_type: "commit", sha: "xyz1234" },
      { ref_type: "commit", sha: "abc12" },
      { ref_type: "commit", sha: "g".repeat(40) },
      { ref_type: "pr", pr_number: 0 },
      { ref_type: "pr", pr_url: "not a url" },
      { ref_type: "pr", pr_number: 1, pr_state: "approved" },
      { ref_type: "merge", sha: SHA_A },
      { ref_type: "commit", sha: SHA_A, surprise: true },
    ]) {
      await rejects(w.ctx, "task_code_ref", { task_id: ref, ...args }, "invalid_input");
    }
    await rejects(w.ctx, "task_code_ref", { task_id: "RS-99", ref_type: "commit", sha: SHA_A }, "not_found");
    await rejects(w.ctx, "task_code_ref", { task_id: ref, ref_type: "commit", sha: SHA_A, repository_id: "acme/none" }, "not_found");
    expect(await count("SELECT COUNT(*) AS n FROM code_refs WHERE tenant_id = ?", w.id.tenantId)).toBe(8);
  });

  it("records code_ref.added on the task's timeline", async () => {
    const w = await world("ref-activity");
    const p = await project(w.ctx, "RA");
    const t = await task(w.ctx, "RA");
    const c = await codeRef(w.ctx, "RA-1", { ref_type: "commit", sha: SHA_A });
    const pr = await codeRef(w.ctx, "ra-1", { ref_type: "pr", pr_number: 7 });
    const added = await activityRows(w.id.tenantId, "verb = 'code_ref.added'");
    expect(added.map((a) => [a.object_type, a.object_id, a.project_id, a.actor_id])).toEqual([
      ["task", t.id, p.id, w.id.actorId],
      ["task", t.id, p.id, w.id.actorId],
    ]);
    expect(added.map((a) => JSON.parse(a.metadata as string).code_ref_id)).toEqual([c.id, pr.id]);
    expect(added[0]!.summary).toContain(SHA_A.toLowerCase().slice(0, 12));
    expect(added[1]!.summary).toContain("PR 7");
  });

  it("defaults the repository to the project's only primary repository", async () => {
    const w = await world("ref-default");
    await project(w.ctx, "ONE");
    await project(w.ctx, "TWO");
    await project(w.ctx, "NONE");
    const api = await repo(w.ctx, "acme/api");
    const lib = await repo(w.ctx, "acme/lib");
    const web = await repo(w.ctx, "acme/web");
    await ok(w.ctx, "repo_link", { project_id: "ONE", repository_id: api.id, role: "primary" });
    await ok(w.ctx, "repo_link", { project_id: "ONE", repository_id: lib.id, role: "dependency" });
    await ok(w.ctx, "repo_link", { project_id: "TWO", repository_id: api.id, role: "primary" });
    await ok(w.ctx, "repo_link", { project_id: "TWO", repository_id: web.id, role: "primary" });
    await ok(w.ctx, "repo_link", { project_id: "NONE", repository_id: lib.id, role: "docs" });
    const one = await task(w.ctx, "ONE");
    const two = await task(w.ctx, "TWO");
    const none = await task(w.ctx, "NONE");

    expect((await codeRef(w.ctx, one.ref as string, { ref_type: "commit", sha: SHA_A })).repository_id).toBe(api.id);
    // An explicit repository wins over the default, by id or by slug.
    expect((await codeRef(w.ctx, one.ref as string, { ref_type: "commit", sha: SHA_A, repository_id: "ACME/lib" })).repository_id).toBe(lib.id);
    expect((await codeRef(w.ctx, one.ref as string, { ref_type: "branch", branch: "x", repository_id: web.id })).repository_id).toBe(web.id);
    // Two primaries: no guess.
    expect((await codeRef(w.ctx, two.ref as string, { ref_type: "commit", sha: SHA_A })).repository_id).toBeNull();
    // No primary at all: nothing to default to.
    expect((await codeRef(w.ctx, none.ref as string, { ref_type: "commit", sha: SHA_A })).repository_id).toBeNull();
  });
});

describe("evidence gate", () => {
  it("refuses done on a requires_evidence task until task_code_ref records a ref", async () => {
    const w = await world("evidence");
    await project(w.ctx, "EV");
    const t = await task(w.ctx, "EV", { requires_evidence: true });
    const other = await task(w.ctx, "EV");
    // A ref on another task is no evidence for this one.
    await codeRef(w.ctx, other.ref as string, { ref_type: "commit", sha: SHA_A });
    const error = await rejects(w.ctx, "task_update", { task_id: t.ref, patch: { status: "done" } }, "evidence_required");
    expect(error.hint).toContain("task_code_ref");
    await ok(w.ctx, "task_update", { task_id: t.ref, patch: { status: "in_progress" } });
    await rejects(w.ctx, "task_update", { task_id: t.ref, patch: { status: "done" } }, "evidence_required");

    await codeRef(w.ctx, t.ref as string, { ref_type: "pr", pr_number: 42 });
    const done = await ok(w.ctx, "task_update", { task_id: t.ref, patch: { status: "done" } });
    expect(done.task).toMatchObject({ id: t.id, status: "done" });
  });
});

describe("code_ref_add", () => {
  it("attaches refs to a decision, a project by key and a task by KEY-number; notes are not available", async () => {
    const w = await world("add-objects");
    const p = await project(w.ctx, "ADD");
    const api = await repo(w.ctx, "acme/api");
    await ok(w.ctx, "repo_link", { project_id: "ADD", repository_id: api.id });
    const t = await task(w.ctx, "ADD");
    const decision = (await ok(w.ctx, "decision_log", { title: "Use D1", choice: "D1", project_id: "ADD" })).decision as Structured;
    const loose = (await ok(w.ctx, "decision_log", { title: "Tenant-wide", choice: "yes" })).decision as Structured;

    const onDecision = (await ok(w.ctx, "code_ref_add", { object_type: "decision", object_id: decision.id, ref_type: "pr", pr_number: 3 })).code_ref;
    expect(onDecision).toMatchObject({ object_type: "decision", object_id: decision.id, repository_id: api.id, pr_state: "open" });
    const onLoose = (await ok(w.ctx, "code_ref_add", { object_type: "decision", object_id: loose.id, ref_type: "commit", sha: SHA_A })).code_ref;
    expect(onLoose).toMatchObject({ object_id: loose.id, repository_id: null });
    const onProject = (await ok(w.ctx, "code_ref_add", { object_type: "project", object_id: "add", ref_type: "tag", title: "v1" })).code_ref;
    expect(onProject).toMatchObject({ object_type: "project", object_id: p.id, repository_id: api.id, title: "v1" });
    const onTask = (await ok(w.ctx, "code_ref_add", { object_type: "task", object_id: "ADD-1", ref_type: "branch", branch: "b" })).code_ref;
    expect(onTask).toMatchObject({ object_type: "task", object_id: t.id, repository_id: api.id });

    const added = await activityRows(w.id.tenantId, "verb = 'code_ref.added'");
    expect(added.map((a) => [a.object_type, a.object_id, a.project_id])).toEqual([
      ["decision", decision.id, p.id],
      ["decision", loose.id, null],
      ["project", p.id, p.id],
      ["task", t.id, p.id],
    ]);

    const note = await rejects(w.ctx, "code_ref_add", { object_type: "note", object_id: crypto.randomUUID(), ref_type: "commit", sha: SHA_A }, "not_found");
    expect(note.hint.length).toBeGreaterThan(10);
    await rejects(w.ctx, "code_ref_add", { object_type: "decision", object_id: crypto.randomUUID(), ref_type: "commit", sha: SHA_A }, "not_found");
    await rejects(w.ctx, "code_ref_add", { object_type: "project", object_id: "NOPE", ref_type: "commit", sha: SHA_A }, "not_found");
    await rejects(w.ctx, "code_ref_add", { object_type: "task", object_id: "ADD-9", ref_type: "commit", sha: SHA_A }, "not_found");
    await rejects(w.ctx, "code_ref_add", { object_type: "handoff", object_id: t.id, ref_type: "commit", sha: SHA_A }, "invalid_input");
    await rejects(w.ctx, "code_ref_add", { object_type: "task", object_id: t.id, ref_type: "compare" }, "invalid_input");
  });
});

describe("code_ref_update", () => {
  it("moves PRs forward with pr.merged / pr.closed, and fixes sha, title and url with code_ref.updated", async () => {
    const w = await world("update");
    const p = await project(w.ctx, "UP");
    const t = await task(w.ctx, "UP");
    const toMerge = await codeRef(w.ctx, "UP-1", { ref_type: "pr", pr_number: 5 });
    const toClose = await codeRef(w.ctx, "UP-1", { ref_type: "pr", pr_url: "https://github.com/acme/api/pull/6" });
    const commit = await codeRef(w.ctx, "UP-1", { ref_type: "commit", sha: SHA_B });
    const verbs = () => activityRows(w.id.tenantId, "verb IN ('pr.merged', 'pr.closed', 'code_ref.updated')");

    const merged = await ok(w.ctx, "code_ref_update", { code_ref_id: toMerge.id, patch: { pr_state: "merged" } });
    expect(merged.changed).toEqual(["pr_state"]);
    expect(merged.code_ref).toMatchObject({ id: toMerge.id, pr_state: "merged", pr_number: 5 });
    const closed = await ok(w.ctx, "code_ref_update", { code_ref_id: toClose.id, patch: { pr_state: "closed" } });
    expect(closed.code_ref.pr_state).toBe("closed");
    let rows = await verbs();
    expect(rows.map((a) => [a.verb, a.object_type, a.object_id, a.project_id])).toEqual([
      ["pr.merged", "task", t.id, p.id],
      ["pr.closed", "task", t.id, p.id],
    ]);
    expect(rows[0]!.summary).toBe("PR 5 merged");
    expect(JSON.parse(rows[1]!.metadata as string)).toEqual({ code_ref_id: toClose.id, changed: ["pr_state"] });

    // A move to draft (or back to open) is an update, not a merge or close.
    await ok(w.ctx, "code_ref_update", { code_ref_id: toClose.id, patch: { pr_state: "open" } });
    expect((await verbs()).map((a) => a.verb).at(-1)).toBe("code_ref.updated");

    const fixed = await ok(w.ctx, "code_ref_update", {
      code_ref_id: commit.id,
      patch: { sha: SHA_A, title: "the fix", url: "https://github.com/acme/api/commit/x" },
    });
    expect(fixed.changed).toEqual(["sha", "title", "url"]);
    expect(fixed.code_ref).toMatchObject({ sha: SHA_A.toLowerCase(), title: "the fix", url: "https://github.com/acme/api/commit/x" });
    rows = await verbs();
    expect(rows).toHaveLength(4);
    expect(rows[3]).toMatchObject({ verb: "code_ref.updated", object_id: t.id, project_id: p.id });
    expect(JSON.parse(rows[3]!.metadata as string).changed).toEqual(["sha", "title", "url"]);

    // Only what differs counts; a patch that changes nothing writes nothing.
    const partial = await ok(w.ctx, "code_ref_update", { code_ref_id: commit.id, patch: { sha: SHA_A, title: "renamed" } });
    expect(partial.changed).toEqual(["title"]);
    const noop = await ok(w.ctx, "code_ref_update", { code_ref_id: toMerge.id, patch: { pr_state: "merged" } });
    expect(noop.changed).toEqual([]);
    expect(noop.code_ref).toMatchObject({ pr_state: "merged" });
    expect(await verbs()).toHaveLength(5);
    const stored = await env.DB.prepare("SELECT sha, title, pr_state FROM code_refs WHERE id = ?").bind(commit.id).first<Structured>();
    expect(stored).toEqual({ sha: SHA_A.toLowerCase(), title: "renamed", pr_state: null });
  });

  it("puts a PR move on a project's or decision's ref on that project's timeline", async () => {
    const w = await world("update-project");
    const p = await project(w.ctx, "UPP");
    const onProject = (await ok(w.ctx, "code_ref_add", { object_type: "project", object_id: "UPP", ref_type: "pr", pr_number: 1 })).code_ref;
    const decision = (await ok(w.ctx, "decision_log", { title: "D", choice: "c", project_id: "UPP" })).decision as Structured;
    const onDecision = (await ok(w.ctx, "code_ref_add", { object_type: "decision", object_id: decision.id, ref_type: "pr", pr_number: 2 })).code_ref;
    await ok(w.ctx, "code_ref_update", { code_ref_id: onProject.id, patch: { pr_state: "merged" } });
    await ok(w.ctx, "code_ref_update", { code_ref_id: onDecision.id, patch: { pr_state: "closed" } });
    const moves = await activityRows(w.id.tenantId, "verb IN ('pr.merged', 'pr.closed')");
    expect(moves.map((a) => [a.verb, a.object_type, a.project_id])).toEqual([
      ["pr.merged", "project", p.id],
      ["pr.closed", "decision", p.id],
    ]);
    const brief = await ok(w.ctx, "project_brief", { project: "UPP" });
    expect((brief.recent_activity as Structured[]).map((a) => a.verb)).toEqual(expect.arrayContaining(["pr.merged", "pr.closed"]));
  });

  it("refuses unknown or foreign ids, empty or unknown patches and pr_state on a non-PR, writing nothing", async () => {
    const w = await world("update-bad");
    await project(w.ctx, "UB");
    await task(w.ctx, "UB");
    const commit = await codeRef(w.ctx, "UB-1", { ref_type: "commit", sha: SHA_A });
    const pr = await codeRef(w.ctx, "UB-1", { ref_type: "pr", pr_number: 1 });
    await rejects(w.ctx, "code_ref_update", { code_ref_id: crypto.randomUUID(), patch: { title: "x" } }, "not_found");
    await rejects(w.ctx, "code_ref_update", { code_ref_id: pr.id, patch: {} }, "invalid_input");
    await rejects(w.ctx, "code_ref_update", { code_ref_id: pr.id, patch: { pr_number: 2 } }, "invalid_input");
    await rejects(w.ctx, "code_ref_update", { code_ref_id: pr.id, patch: { branch: "b" } }, "invalid_input");
    await rejects(w.ctx, "code_ref_update", { code_ref_id: pr.id, patch: { pr_state: "approved" } }, "invalid_input");
    await rejects(w.ctx, "code_ref_update", { code_ref_id: pr.id, patch: { sha: "nothex!" } }, "invalid_input");
    await rejects(w.ctx, "code_ref_update", { code_ref_id: pr.id }, "invalid_input");
    await rejects(w.ctx, "code_ref_update", { code_ref_id: commit.id, patch: { pr_state: "merged" } }, "invalid_input");

    const b = await world("update-bad-b");
    const foreign = await refusedWithoutWrites(b.ctx, "code_ref_update", { code_ref_id: pr.id, patch: { pr_state: "merged" } }, "not_found", () => tenantState(w.id.tenantId));
    expect(foreign.message).not.toContain("another tenant");
    expect((await env.DB.prepare("SELECT pr_state FROM code_refs WHERE id = ?").bind(pr.id).first<{ pr_state: string }>())!.pr_state).toBe("open");
  });
});

describe("code_ref_query", () => {
  it("finds refs by object, repository, ref type, PR state and run, newest first, with a complete cursor", async () => {
    const w = await world("refq");
    const p = await project(w.ctx, "RQ");
    const api = await repo(w.ctx, "acme/api");
    const web = await repo(w.ctx, "acme/web");
    const t1 = await task(w.ctx, "RQ", { title: "first" });
    const t2 = await task(w.ctx, "RQ", { title: "second" });
    const made: Structured[] = [];
    const add = async (taskRef: string, args: Record<string, unknown>) => {
      w.clock.advance(MINUTE);
      const r = await codeRef(w.ctx, taskRef, args);
      made.push(r);
      return r;
    };
    const [runA, runB] = [await mintRun(w.ctx), await mintRun(w.ctx)];
    const c1 = await add("RQ-1", { ref_type: "commit", sha: SHA_A, repository_id: api.id, run_id: runA.run_key });
    const pr1 = await add("RQ-1", { ref_type: "pr", pr_number: 1, repository_id: api.id, run_id: runA.id });
    const pr2 = await add("RQ-2", { ref_type: "pr", pr_number: 2, repository_id: web.id });
    const b1 = await add("RQ-2", { ref_type: "branch", branch: "feat", repository_id: web.id, run_id: runB.run_key });
    const pr3 = await add("RQ-1", { ref_type: "pr", pr_number: 3 });
    w.clock.advance(MINUTE);
    const onProject = (await ok(w.ctx, "code_ref_add", { object_type: "project", object_id: "RQ", ref_type: "tag", title: "v1", repository_id: "acme/api" })).code_ref as Structured;
    made.push(onProject);
    await ok(w.ctx, "code_ref_update", { code_ref_id: pr1.id, patch: { pr_state: "merged" } });

    const newestFirst = [...made].reverse().map((r) => r.id as string);
    expect(ids(await refQuery(w.ctx, {}))).toEqual(newestFirst);
    expect(ids(await refQuery(w.ctx, { object_type: "task", object_id: "RQ-1" }))).toEqual([pr3.id, pr1.id, c1.id]);
    expect(ids(await refQuery(w.ctx, { object_id: "rq-1" }))).toEqual([pr3.id, pr1.id, c1.id]);
    expect(ids(await refQuery(w.ctx, { object_type: "task", object_id: t2.id }))).toEqual([b1.id, pr2.id]);
    expect(ids(await refQuery(w.ctx, { object_id: t1.id }))).toEqual([pr3.id, pr1.id, c1.id]);
    expect(ids(await refQuery(w.ctx, { object_type: "project", object_id: "RQ" }))).toEqual([onProject.id]);
    expect(ids(await refQuery(w.ctx, { object_type: "project", object_id: p.id }))).toEqual([onProject.id]);
    expect(ids(await refQuery(w.ctx, { object_type: "decision" }))).toEqual([]);
    expect(ids(await refQuery(w.ctx, { repository_id: "ACME/API" }))).toEqual([onProject.id, pr1.id, c1.id]);
    expect(ids(await refQuery(w.ctx, { repository_id: web.id }))).toEqual([b1.id, pr2.id]);
    expect(ids(await refQuery(w.ctx, { ref_type: "pr" }))).toEqual([pr3.id, pr2.id, pr1.id]);
    expect(ids(await refQuery(w.ctx, { pr_state: "open" }))).toEqual([pr3.id, pr2.id]);
    expect(ids(await refQuery(w.ctx, { pr_state: "merged" }))).toEqual([pr1.id]);
    expect(ids(await refQuery(w.ctx, { run_id: runA.run_key }))).toEqual([pr1.id, c1.id]);
    expect(ids(await refQuery(w.ctx, { run_id: runA.id }))).toEqual([pr1.id, c1.id]);
    expect(ids(await refQuery(w.ctx, { run_id: runB.run_key, repository_id: "acme/web" }))).toEqual([b1.id]);
    expect(ids(await refQuery(w.ctx, { ref_type: "pr", repository_id: "acme/api", object_id: "RQ-1" }))).toEqual([pr1.id]);
    expect(await refQuery(w.ctx, { run_id: "run-none" })).toEqual([]);

    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(w.ctx, "code_ref_query", { limit: 4, ...(cursor ? { cursor } : {}) });
      sizes.push((page.items as Structured[]).length);
      seen.push(...ids(page.items as Structured[]));
      cursor = page.next_cursor as string | undefined;
    } while (cursor && sizes.length < 10);
    expect(sizes).toEqual([4, 2]);
    expect(seen).toEqual(newestFirst);

    await rejects(w.ctx, "code_ref_query", { cursor: "garbage" }, "invalid_input");
    await rejects(w.ctx, "code_ref_query", { object_id: "RQ-99" }, "not_found");
    await rejects(w.ctx, "code_ref_query", { object_type: "project", object_id: "NOPE" }, "not_found");
    await rejects(w.ctx, "code_ref_query", { repository_id: "acme/none" }, "not_found");
    await rejects(w.ctx, "code_ref_query", { ref_type: "merge" }, "invalid_input");
  });
});

describe("task_claim repository scope", () => {
  it("claims only tasks of projects linked to the named repositories", async () => {
    const w = await world("claim");
    await project(w.ctx, "CA");
    await project(w.ctx, "CB");
    const r = await repo(w.ctx, "acme/claimed");
    await repo(w.ctx, "acme/idle");
    await ok(w.ctx, "repo_link", { project_id: "CA", repo_slug: "acme/claimed", role: "dependency" });
    await task(w.ctx, "CB", { title: "urgent elsewhere", priority: 0 });
    const mine = await task(w.ctx, "CA", { title: "linked", priority: 3 });

    expect(await ok(w.ctx, "task_claim", { repository_ids: ["acme/idle"] })).toMatchObject({ claimed: false });
    const claimed = await ok(w.ctx, "task_claim", { repository_ids: ["Acme/Claimed"] });
    expect(claimed.task).toMatchObject({ id: mine.id });
    expect(await ok(w.ctx, "task_claim", { repository_ids: [r.id] })).toMatchObject({ claimed: false });
  });
});

describe("tenant isolation", () => {
  it("keeps one tenant's repositories and code refs out of another's reach", async () => {
    const a = await world("iso-a");
    const b = await world("iso-b");
    const pa = await project(a.ctx, "ISO");
    const ra = await repo(a.ctx, "acme/secret");
    await ok(a.ctx, "repo_link", { project_id: "ISO", repository_id: ra.id });
    const ta = await task(a.ctx, "ISO");
    const refA = await codeRef(a.ctx, "ISO-1", { ref_type: "commit", sha: SHA_A });
    expect(refA.repository_id).toBe(ra.id);
    const pb = await project(b.ctx, "ISO");
    await task(b.ctx, "ISO");

    // B sees none of A's repositories.
    expect(await repoQuery(b.ctx, {})).toEqual([]);
    expect(await repoQuery(b.ctx, { slug: "acme/secret" })).toEqual([]);
    expect(await repoQuery(b.ctx, { repository_id: ra.id })).toEqual([]);
    await rejects(b.ctx, "repo_query", { project_id: pa.id }, "not_found");
    // B cannot link, query refs by, or record refs against A's repository, nor touch A's task.
    await rejects(b.ctx, "repo_link", { project_id: "ISO", repo_slug: "acme/secret" }, "not_found");
    await rejects(b.ctx, "repo_link", { project_id: "ISO", repository_id: ra.id }, "not_found");
    await rejects(b.ctx, "code_ref_query", { repository_id: ra.id }, "not_found");
    await rejects(b.ctx, "code_ref_query", { repository_id: "acme/secret" }, "not_found");
    await rejects(b.ctx, "task_code_ref", { task_id: "ISO-1", ref_type: "commit", sha: SHA_B, repository_id: ra.id }, "not_found");
    await rejects(b.ctx, "task_code_ref", { task_id: ta.id, ref_type: "commit", sha: SHA_B }, "not_found");
    await rejects(b.ctx, "code_ref_add", { object_type: "task", object_id: ta.id, ref_type: "commit", sha: SHA_B }, "not_found");
    await rejects(b.ctx, "code_ref_add", { object_type: "project", object_id: pa.id, ref_type: "commit", sha: SHA_B }, "not_found");
    await rejects(b.ctx, "code_ref_query", { object_type: "task", object_id: ta.id }, "not_found");
    expect(await refQuery(b.ctx, {})).toEqual([]);
    expect(await refQuery(b.ctx, { object_id: refA.object_id })).toEqual([]);
    // B's own ISO-1 is B's task, not A's.
    const refB = await codeRef(b.ctx, "ISO-1", { ref_type: "commit", sha: SHA_B });
    expect(refB.object_id).not.toBe(ta.id);
    expect(refB.repository_id).toBeNull();

    // B may register the same remote: its own row, created afresh.
    const mirror = await register(b.ctx, { remote_url: "git@github.com:acme/secret.git" });
    expect(mirror.created).toBe(true);
    expect(mirror.repository.id).not.toBe(ra.id);
    expect(mirror.repository.remote_url).toBe(ra.remote_url);
    await ok(b.ctx, "repo_link", { project_id: "ISO", repo_slug: "acme/secret" });
    expect(ids(await repoQuery(b.ctx, { project_id: pb.id }))).toEqual([mirror.repository.id]);
    expect(ids(await repoQuery(a.ctx, {}))).toEqual([ra.id]);
    expect((await ok(a.ctx, "project_brief", { project: "ISO" })).repositories).toEqual([{ id: ra.id, slug: "acme/secret", role: "primary" }]);
    expect(ids(await refQuery(a.ctx, {}))).toEqual([refA.id]);
    const wrongTenant = await fails(b.ctx, "code_ref_update", { code_ref_id: refA.id, patch: { title: "mine now" } });
    expect(wrongTenant.code).toBe("not_found");
  });
});

describe("follow-ups", () => {
  it("re-linking without a role keeps the existing role; naming one with expected_role changes it", async () => {
    const w = await world("link-keep-role");
    await project(w.ctx, "KR");
    await repo(w.ctx, "acme/kr");
    expect((await ok(w.ctx, "repo_link", { project_id: "KR", repo_slug: "acme/kr", role: "docs" })).role).toBe("docs");
    expect((await ok(w.ctx, "repo_link", { project_id: "KR", repo_slug: "acme/kr" })).role).toBe("docs");
    expect((await ok(w.ctx, "repo_link", { project_id: "KR", repo_slug: "acme/kr", role: "dependency", expected_role: "docs" })).role).toBe("dependency");
  });

  it("a merged PR stays merged; a closed one can be reopened", async () => {
    const w = await world("pr-states");
    await project(w.ctx, "PRS");
    const t = await task(w.ctx, "PRS");
    const merged = await codeRef(w.ctx, t.id as string, { ref_type: "pr", pr_number: 1 });
    await ok(w.ctx, "code_ref_update", { code_ref_id: merged.id, patch: { pr_state: "merged" } });
    expect((await call(w.ctx, "code_ref_update", { code_ref_id: merged.id, patch: { pr_state: "open" } })).error?.code).toBe("invalid_transition");
    const closed = await codeRef(w.ctx, t.id as string, { ref_type: "pr", pr_number: 2 });
    await ok(w.ctx, "code_ref_update", { code_ref_id: closed.id, patch: { pr_state: "closed" } });
    expect((await ok(w.ctx, "code_ref_update", { code_ref_id: closed.id, patch: { pr_state: "open" } })).code_ref.pr_state).toBe("open");
  });
});
