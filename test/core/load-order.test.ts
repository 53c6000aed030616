/**
 * No import order can crash the server at load: every module that defines or lists tools, imported
 * first and alone into a fresh module graph, loads and hands out its tools. The modules are found
 * by reading the source (a defineTool call or an exported `…Tools` list), not kept by hand here.
 */
import { describe, expect, it, vi } from "vitest";

const SOURCES = import.meta.glob<string>("../../src/**/*.{ts,tsx}", { query: "?raw", import: "default", eager: true });
const LOADERS = import.meta.glob<Record<string, unknown>>("../../src/**/*.{ts,tsx}");

const TOOL_MODULE = /\bdefineTool\s*[<(]|\bexport const \w+Tools\b/;
const TOOL_MODULES = Object.keys(SOURCES)
  .filter((path) => !path.endsWith("/core/define-tool.ts") && TOOL_MODULE.test(SOURCES[path]!))
  .sort();

describe("tool modules load in any order", () => {
  it("finds the tool modules of every domain, the catalog's own lists among them", () => {
    expect(TOOL_MODULES.length).toBeGreaterThan(20);
    for (const path of ["../../src/plans/index.ts", "../../src/review/index.ts", "../../src/work/tasks/index.ts", "../../src/changes/tools.ts"]) {
      expect(TOOL_MODULES).toContain(path);
    }
  });

  it.each(TOOL_MODULES)("%s, imported first, loads", async (path) => {
    vi.resetModules();
    const mod = await LOADERS[path]!();
    for (const [name, value] of Object.entries(mod)) {
      // A list spread at load from a module still loading is `undefined` here; a loaded one is iterable.
      if (/Tools$/.test(name) && !name.startsWith("with")) expect([...(value as Iterable<unknown>)].length, name).toBeGreaterThan(0);
    }
  });
});
