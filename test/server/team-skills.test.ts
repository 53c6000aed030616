/**
 * The team's playbooks as SEP-2640 skills beside the guide's: skills/list and skills/get with
 * digests, the SKILL.md read, the team directory, and only the caller's tenant's active
 * tenant-wide skills, read when asked.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GUIDE_TOPICS } from "../../src/guide/topics";
import { SKILLS_PREFIX, teamSkillFile } from "../../src/server/skills";
import { connectClient, seedIdentity } from "../support/helpers";

const SkillEntry = z.object({
  uri: z.string(),
  frontmatter: z.object({ name: z.string(), description: z.string() }).loose(),
  resources: z.array(z.object({ uri: z.string(), digest: z.string(), size: z.number() })),
});
const ListSkills = z.object({ skills: z.array(SkillEntry) }).loose();
const GetSkill = z.object({ skill: SkillEntry }).loose();
const Directory = z.object({ resources: z.array(z.object({ uri: z.string(), mimeType: z.string().optional() }).loose()) }).loose();

const TEAM = `skill://${SKILLS_PREFIX}/team`;

async function teamWithSkills(tenant: string) {
  const me = await seedIdentity(tenant, "agent");
  const { client } = await connectClient(me.key, "/mcp?toolsets=skills,projects");
  const upsert = async (args: Record<string, unknown>) => {
    const r = await client.callTool({ name: "skill_upsert", arguments: args });
    expect(r.structuredContent, JSON.stringify(r.structuredContent)).toMatchObject({ ok: true });
  };
  await upsert({ slug: "release-checklist", name: "Release checklist", description: "Before tagging a release.", body: "1. Run the tests.\n2. Tag it." });
  await upsert({ slug: "old-way", description: "How we used to do it.", body: "Gone.", status: "archived" });
  await client.callTool({ name: "project_create", arguments: { title: "Scoped", key: "SCO" } });
  await upsert({ slug: "project-only", description: "Only in SCO.", body: "Scoped.", project_id: "SCO" });
  return { me, client };
}

describe("team skills", () => {
  it("lists the guide's skills and the team's active tenant-wide playbooks, each with digests", async () => {
    const { client } = await teamWithSkills("skills-team");
    const list = await client.request({ method: "skills/list", params: {} }, ListSkills);
    const names = list.skills.map((s) => s.frontmatter.name);
    for (const t of GUIDE_TOPICS) expect(names).toContain(t.id);
    expect(names).toContain("release-checklist");
    expect(names).not.toContain("old-way");
    expect(names).not.toContain("project-only");
    const skill = list.skills.find((s) => s.frontmatter.name === "release-checklist")!;
    expect(skill.uri).toBe(`${TEAM}/release-checklist/SKILL.md`);
    expect(skill.frontmatter.description).toBe("Before tagging a release.");
    const text = teamSkillFile({ slug: "release-checklist", name: "Release checklist", description: "Before tagging a release.", body: "1. Run the tests.\n2. Tag it." });
    expect(skill.resources).toEqual([{ uri: skill.uri, digest: `sha256:${createHash("sha256").update(text).digest("hex")}`, size: Buffer.byteLength(text) }]);

    const got = await client.request({ method: "skills/get", params: { uri: skill.uri } }, GetSkill);
    expect(got.skill).toEqual(skill);
    const read = await client.readResource({ uri: skill.uri });
    expect((read.contents[0] as { text: string }).text).toBe(text);
    expect(text).toContain("# Release checklist\n\n1. Run the tests.\n2. Tag it.");

    const dir = await client.request({ method: "resources/directory/read", params: { uri: TEAM } }, Directory);
    expect(dir.resources.map((r) => r.uri)).toEqual([`${TEAM}/release-checklist`]);
    expect(dir.resources[0]!.mimeType).toBe("inode/directory");
    const inside = await client.request({ method: "resources/directory/read", params: { uri: `${TEAM}/release-checklist` } }, Directory);
    expect(inside.resources.map((r) => r.uri)).toEqual([skill.uri]);
    await client.close();
  });

  it("refuses an archived, project-scoped or unknown skill with -32602, and reads nothing of it", async () => {
    const { client } = await teamWithSkills("skills-refused");
    for (const slug of ["old-way", "project-only", "never-was"]) {
      const err = await client.request({ method: "skills/get", params: { uri: `${TEAM}/${slug}/SKILL.md` } }, GetSkill).then(
        () => null,
        (e: unknown) => e as { code: number },
      );
      expect(err?.code, slug).toBe(-32602);
      await expect(client.readResource({ uri: `${TEAM}/${slug}/SKILL.md` }), slug).rejects.toBeTruthy();
    }
    await client.close();
  });

  it("shows a tenant only its own team's skills", async () => {
    await teamWithSkills("skills-owner");
    const other = await seedIdentity("skills-stranger", "agent");
    const { client } = await connectClient(other.key);
    const names = (await client.request({ method: "skills/list", params: {} }, ListSkills)).skills.map((s) => s.frontmatter.name);
    expect(names).not.toContain("release-checklist");
    expect(names).toHaveLength(GUIDE_TOPICS.length);
    const err = await client.request({ method: "skills/get", params: { uri: `${TEAM}/release-checklist/SKILL.md` } }, GetSkill).then(
      () => null,
      (e: unknown) => e as { code: number },
    );
    expect(err?.code).toBe(-32602);
    await client.close();
  });
});
