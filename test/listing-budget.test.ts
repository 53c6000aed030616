/**
 * What tools/list costs an agent's context, in tokens (cl100k, a real tokenizer): output schemas
 * are listed only when small unless the client asks for all of them, and compact mode lists three
 * tools. The figures are printed for the README's table.
 */
import { describe, expect, it } from "vitest";
import { encode } from "gpt-tokenizer/encoding/cl100k_base";
import { compactSurface } from "../src/mcp/compact";
import { listedTool, selectTools, SMALL_OUTPUT_SCHEMA_CHARS, toolListing } from "../src/mcp/registry";
import { connectClient, seedIdentity } from "./helpers";

const tokens = (value: unknown) => encode(JSON.stringify(value)).length;
const SURFACES = { default: { toolsets: [], readonly: false }, all: { toolsets: ["all"], readonly: false }, readonly: { toolsets: [], readonly: true } };

describe("tools/list size", () => {
  it("lists only small output schemas by default, every one with output_schemas=full, and prints the figures", () => {
    for (const [name, surface] of Object.entries(SURFACES)) {
      const tools = selectTools(surface);
      const small = tools.map((t) => listedTool(t, "small"));
      const full = tools.map((t) => listedTool(t, "full"));
      for (const t of small) if (t.outputSchema) expect(JSON.stringify(t.outputSchema).length, t.name).toBeLessThanOrEqual(SMALL_OUTPUT_SCHEMA_CHARS);
      expect(full.every((t) => t.outputSchema !== undefined)).toBe(true);
      expect(full).toEqual(tools.map(toolListing));
      const compact = compactSurface(surface).tools.map((t) => listedTool(t, "small"));
      console.info(`tools/list ${name}: ${tools.length} tools, ${tokens(small)} tokens (small output schemas), ${tokens(full)} (full); compact ${tokens(compact)}`);
      expect(tokens(small)).toBeLessThan(tokens(full) / 2);
    }
    // A guard against growth while the default surface works down to its 10,000-token budget.
    expect(tokens(selectTools(SURFACES.default).map((t) => listedTool(t, "small")))).toBeLessThanOrEqual(17_000);
  });

  it("is chosen per request over HTTP, and a bad value is refused", async () => {
    const id = await seedIdentity(`listing-${crypto.randomUUID().slice(0, 8)}`, "agent");
    const slim = await connectClient(id.key, "/mcp");
    const slimTools = (await slim.client.listTools()).tools;
    expect(slimTools.some((t) => t.outputSchema === undefined)).toBe(true);
    await slim.client.close();
    const full = await connectClient(id.key, "/mcp?output_schemas=full");
    expect((await full.client.listTools()).tools.every((t) => t.outputSchema !== undefined)).toBe(true);
    await full.client.close();
    await expect(connectClient(id.key, "/mcp?output_schemas=huge")).rejects.toThrow(/Unknown output_schemas/);
  });
});
