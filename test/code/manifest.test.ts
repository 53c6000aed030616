/**
 * tool_manifest (seed 004: "the source of truth"): generated from the registry for the caller's
 * surface, so it lists exactly what tools/list lists, as tools/list lists it.
 */
import { describe, expect, it } from "vitest";
import { SEED_004_TOOLSETS } from "../../src/server/manifest";
import { ALL_TOOLS } from "../../src/server/registry";
import { connectClient, newWorld, ok, seedIdentity } from "../support/helpers";

type Manifest = {
  version: string;
  capabilities: string[];
  tools: string[];
  tool_details: { name: string; description: string; read_only: boolean; parameters: { name: string; type: string; required: boolean; description: string }[] }[];
  discoverability: { missing_toolsets: { toolset: string }[]; readonly: boolean };
  features: { language_model: boolean };
};

async function manifestOver(path: string) {
  const id = await seedIdentity(`manifest-${crypto.randomUUID().slice(0, 8)}`, "agent");
  const { client } = await connectClient(id.key, path);
  const listed = (await client.listTools()).tools;
  const result = await client.callTool({ name: "tool_manifest", arguments: {} });
  await client.close();
  expect(result.isError ?? false).toBe(false);
  return { listed, manifest: result.structuredContent as unknown as Manifest };
}

describe("tool_manifest", () => {
  it("lists the seed-004 tools of this connection exactly as tools/list does: names, descriptions, parameters", async () => {
    const { listed, manifest } = await manifestOver("/mcp?toolsets=code,review");
    const seed4 = listed.filter((t) => ["code", "review"].includes(ALL_TOOLS.find((d) => d.name === t.name)!.toolset));
    expect(manifest.tools).toEqual(seed4.map((t) => t.name));
    expect(manifest.tools).toContain("review_git_diff");
    expect(manifest.tools).toContain("tool_manifest");
    expect(manifest.tools).not.toContain("save_plan");
    expect(manifest.capabilities).toEqual(["code", "review"]);
    expect(manifest.discoverability.missing_toolsets.map((m) => m.toolset)).toEqual(["plans"]);
    for (const t of seed4) {
      const d = manifest.tool_details.find((x) => x.name === t.name)!;
      expect(d.description, t.name).toBe(t.description);
      const schema = t.inputSchema as { properties?: Record<string, { description?: string }>; required?: string[] };
      expect(
        d.parameters.map((p) => p.name),
        t.name,
      ).toEqual(Object.keys(schema.properties ?? {}));
      for (const p of d.parameters) {
        expect(p.description, `${t.name}.${p.name}`).toBe(schema.properties![p.name]!.description);
        expect(p.required, `${t.name}.${p.name}`).toBe((schema.required ?? []).includes(p.name));
      }
    }
    // review_git_diff takes no required repository (seed 004 has none).
    const rgd = manifest.tool_details.find((x) => x.name === "review_git_diff")!;
    expect(rgd.parameters.find((p) => p.name === "repo")).toMatchObject({ required: false, type: "string" });
  });

  it("on a read-only connection lists only the read-only ones, and no toolset is missing when all three were asked for", async () => {
    const { listed, manifest } = await manifestOver("/mcp?toolsets=code,review,plans&readonly=1");
    expect(manifest.discoverability.readonly).toBe(true);
    expect(manifest.discoverability.missing_toolsets).toEqual([]);
    expect(manifest.tool_details.every((t) => t.read_only)).toBe(true);
    expect(manifest.tools).toEqual(listed.map((t) => t.name).filter((n) => manifest.tools.includes(n)));
    expect(manifest.tools).not.toContain("save_plan");
    expect(manifest.tools).toContain("load_plan");
  });

  it("outside a connection: every seed-004 tool the registry has, and follows the registry (no hand-kept list)", async () => {
    const w = await newWorld("manifest-ctx", { start: "2026-06-01T12:00:00.000Z" });
    const m = (await ok(w.ctx, "tool_manifest", {})) as unknown as Manifest;
    expect(m.version).toBe("1.9.0");
    expect(m.tools).toEqual(ALL_TOOLS.filter((t) => SEED_004_TOOLSETS.includes(t.toolset)).map((t) => t.name));
    expect(m.tools.length).toBeGreaterThan(40);
    expect(m.features).toEqual({ language_model: expect.any(Boolean) });
  });
});
