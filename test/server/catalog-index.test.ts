/**
 * The catalog's shape, committed where Node can read it: the catalog imports `cloudflare:` modules
 * and loads only inside workerd, while the docs' tool tables (scripts/tool-tables.ts) and the
 * tests' list of tool names are read from Node too. A tool added, removed, renamed or moved to
 * another toolset changes this file, so the change shows in review and the tables follow.
 */
import { describe, expect, it } from "vitest";
import { ALL_TOOLS, TOOLSETS } from "../../src/server/registry";

describe("the catalog index", () => {
  it("lists every toolset in order with its tools in catalog order", async () => {
    const index = TOOLSETS.map((set) => ({
      toolset: set.id,
      default: set.default,
      tools: ALL_TOOLS.filter((t) => t.toolset === set.id).map((t) => ({
        name: t.name,
        ...(t.seedName ? { seedName: t.seedName } : {}),
        readOnly: t.annotations.readOnly,
        ...(t.everywhere ? { everywhere: true } : {}),
      })),
    }));
    expect(index.flatMap((s) => s.tools).length).toBe(ALL_TOOLS.length);
    await expect(`${JSON.stringify(index, null, 2)}\n`).toMatchFileSnapshot("../__catalog__/toolsets.json");
  });
});
