/** Skills: skill_upsert, skill_get, skill_list. */
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/db/ids";
import { call, count, newWorld, ok, refusedWithoutWrites, type Structured } from "../support/helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const world = (name: string) => newWorld(`wsk-${name}`, { start: T0 });
const BODY = "# Release checklist\n\n1. Tag the release.\n2. Announce it.\n";

describe("skill_upsert", () => {
  it("creates with body and description, then versions every change and keeps content_hash the SHA-256 of the body", async () => {
    const w = await world("create");
    const created = await ok(w.ctx, "skill_upsert", { slug: "release-checklist", body: BODY, description: "Before a release", tags: ["ops"] });
    expect(created).toMatchObject({ created: true, changed: true, skill: { slug: "release-checklist", name: "release-checklist", version: 1, status: "active", project_id: null, tags: ["ops"] } });
    expect(created.skill.content_hash).toBe(await sha256Hex(BODY));
    expect(created.skill.body).toBeUndefined();
    const same = await ok(w.ctx, "skill_upsert", { slug: "release-checklist", description: "Before a release" });
    expect(same).toMatchObject({ created: false, changed: false, skill: { version: 1 } });
    const v2 = await ok(w.ctx, "skill_upsert", { slug: "release-checklist", body: `${BODY}3. Celebrate.\n`, expected_version: 1 });
    expect(v2.skill).toMatchObject({ version: 2, content_hash: await sha256Hex(`${BODY}3. Celebrate.\n`) });
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb IN ('skill.created', 'skill.updated')", w.id.tenantId)).toBe(2);
  });

  it("refuses a stale expected_version, and bad input, writing nothing", async () => {
    const w = await world("refuse");
    await ok(w.ctx, "skill_upsert", { slug: "deploy", body: BODY, description: "Deploys" });
    await ok(w.ctx, "skill_upsert", { slug: "deploy", body: "v2", expected_version: 1 });
    const state = () => count("SELECT SUM(version) + COUNT(*) AS n FROM skills WHERE tenant_id = ?", w.id.tenantId);
    const stale = await refusedWithoutWrites(w.ctx, "skill_upsert", { slug: "deploy", body: "v3 from an old read", expected_version: 1 }, "version_conflict", state);
    expect(stale.message).toContain("version 2");
    await refusedWithoutWrites(w.ctx, "skill_upsert", { slug: "new-one", body: BODY }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "skill_upsert", { slug: "Bad Slug", body: BODY, description: "x" }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "skill_upsert", { slug: "big", body: "x".repeat(64 * 1024 + 1), description: "x" }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "skill_upsert", { slug: "long-desc", body: BODY, description: "x".repeat(1025) }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "skill_upsert", { slug: "ghost", body: BODY, description: "x", expected_version: 3 }, "version_conflict", state);
  });
});

describe("skill_get", () => {
  it("a project skill shadows the tenant-wide skill of the same slug", async () => {
    const w = await world("shadow");
    await ok(w.ctx, "project_create", { title: "Api", key: "API" });
    const tenantWide = await ok(w.ctx, "skill_upsert", { slug: "review", body: "tenant review", description: "How we review" });
    const projectOwn = await ok(w.ctx, "skill_upsert", { slug: "review", body: "api review", description: "How the API team reviews", project_id: "API" });
    await ok(w.ctx, "skill_upsert", { slug: "onboarding", body: "welcome", description: "First day" });
    expect((await ok(w.ctx, "skill_get", { slug: "review" })).skill).toMatchObject({ id: tenantWide.skill.id, body: "tenant review" });
    expect((await ok(w.ctx, "skill_get", { slug: "review", project_id: "api" })).skill).toMatchObject({ id: projectOwn.skill.id, body: "api review" });
    expect((await ok(w.ctx, "skill_get", { skill_id: tenantWide.skill.id })).skill.body).toBe("tenant review");
    const listed = (await ok(w.ctx, "skill_list", { project_id: "API" })).items as Structured[];
    expect(listed.map((s) => [s.slug, s.id])).toEqual([
      ["onboarding", expect.any(String)],
      ["review", projectOwn.skill.id],
    ]);
    expect(listed[0]!.body).toBeUndefined();
    const tenantOnly = (await ok(w.ctx, "skill_list", { include_body: true })).items as Structured[];
    expect(tenantOnly.map((s) => s.body)).toEqual(["welcome", "tenant review"]);
  });
});

describe("skill_list", () => {
  it("filters by status, tag and text, and needs exactly one of slug and skill_id", async () => {
    const w = await world("filters");
    await ok(w.ctx, "skill_upsert", { slug: "old", body: "x", description: "Retired", tags: ["legacy"] });
    await ok(w.ctx, "skill_upsert", { slug: "old", status: "archived" });
    await ok(w.ctx, "skill_upsert", { slug: "triage", body: "x", description: "Sort incoming bugs", tags: ["ops"] });
    expect(((await ok(w.ctx, "skill_list", {})).items as Structured[]).map((s) => s.slug)).toEqual(["triage"]);
    expect(((await ok(w.ctx, "skill_list", { status: "archived" })).items as Structured[]).map((s) => s.slug)).toEqual(["old"]);
    expect(((await ok(w.ctx, "skill_list", { tag: "ops" })).items as Structured[]).map((s) => s.slug)).toEqual(["triage"]);
    expect(((await ok(w.ctx, "skill_list", { q: "BUGS" })).items as Structured[]).map((s) => s.slug)).toEqual(["triage"]);
    expect((await call(w.ctx, "skill_get", {})).error?.code).toBe("invalid_input");
    expect((await call(w.ctx, "skill_get", { slug: "triage", skill_id: "x" })).error?.code).toBe("invalid_input");
    expect((await call(w.ctx, "skill_get", { slug: "nope" })).error?.code).toBe("not_found");
  });

  it("keeps tenants apart", async () => {
    const a = await world("iso-a");
    const b = await world("iso-b");
    const skill = await ok(a.ctx, "skill_upsert", { slug: "secret-sauce", body: "A only", description: "A's" });
    expect((await call(b.ctx, "skill_get", { slug: "secret-sauce" })).error?.code).toBe("not_found");
    expect((await call(b.ctx, "skill_get", { skill_id: skill.skill.id })).error?.code).toBe("not_found");
    expect((await ok(b.ctx, "skill_list", {})).items).toEqual([]);
    expect((await ok(b.ctx, "skill_upsert", { slug: "secret-sauce", body: "B's own", description: "B's" })).created).toBe(true);
  });
});
