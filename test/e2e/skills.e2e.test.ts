/**
 * Skills (SEP-2640) as a host meets them: the SDK's v2 client and its SkillsClient, which checks
 * every file it reads against the listed digest and size, against `wrangler dev`, on 2026-07-28
 * and on a 2025-11-25 session: the guide's skills and a playbook the team just wrote.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import { describe, expect, inject, it } from "vitest";

async function connect(key: string, revision: "2026-07-28" | "2025-11-25"): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${inject("baseUrl")}/mcp?toolsets=skills`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  // A 2025-era session is what the client negotiates when it is told the legacy mode.
  const client = new Client({ name: "e2e-skills", version: "1.0.0" }, { versionNegotiation: { mode: revision === "2026-07-28" ? { pin: revision } : "legacy" } });
  await client.connect(transport);
  return client;
}

describe("skills over HTTP (wrangler dev, the SDK's v2 client)", () => {
  it.each(["2026-07-28", "2025-11-25"] as const)("lists, gets and reads, verified, the guide's skills and the team's playbook on %s", async (revision) => {
    const client = await connect(inject("keyA"), revision);
    expect(client.getNegotiatedProtocolVersion()).toBe(revision);
    const slug = `deploy-runbook-${revision.slice(0, 4)}`;
    const written = await client.callTool({
      name: "skill_upsert",
      arguments: { slug, name: "Deploy runbook", description: "How this team deploys.", body: "1. Merge to main.\n2. Watch the deploy." },
    });
    expect(written.structuredContent).toMatchObject({ ok: true });

    const skills = new SkillsClient(client);
    expect(skills.supported).toBe(true);
    const { skills: entries } = await skills.list();
    const names = entries.map((s) => s.frontmatter.name);
    expect(names).toContain("getting-started");
    expect(names).toContain(slug);

    const team = entries.find((s) => s.frontmatter.name === slug)!;
    expect(team.uri).toBe(`skill://agent-ledger/team/${slug}/SKILL.md`);
    const got = await skills.get(team.uri);
    expect(got.skill).toEqual(team);
    if (revision === "2026-07-28") expect(got).toMatchObject({ cacheScope: "private" });
    const file = await skills.read(team);
    expect(file.body).toContain("1. Merge to main.\n2. Watch the deploy.");
    expect(file.frontmatter).toMatchObject({ name: slug, description: "How this team deploys." });

    const guide = await skills.read(entries.find((s) => s.frontmatter.name === "getting-started")!);
    expect(guide.body?.length).toBeGreaterThan(100);
    await client.close();
  });

  it("keeps one team's playbooks from another", async () => {
    const client = await connect(inject("keyB"), "2026-07-28");
    const { skills: entries } = await new SkillsClient(client).list();
    expect(entries.map((s) => s.frontmatter.name).filter((n) => n.startsWith("deploy-runbook-"))).toEqual([]);
    await client.close();
  });
});
