/**
 * A newcomer finds a tool's tests by its name: every tool in the catalog (all toolsets) has a
 * `describe("<tool name>"` in some test file. The test sources are read as text, so a tool added
 * without tests under its own name fails here, naming it.
 */
import { describe, expect, it } from "vitest";
import { ALL_TOOLS } from "../../src/server/registry";

const SOURCES = import.meta.glob<string>("../**/*.test.ts", { query: "?raw", import: "default", eager: true });

/** The first argument of every `describe(...)` (and `describe.sequential`/`.concurrent`) written as a plain string. */
function describedNames(): Set<string> {
  const names = new Set<string>();
  const opener = /\bdescribe(?:\.sequential|\.concurrent)?\(\s*(["'])([^"'\n]+)\1/g;
  for (const [path, text] of Object.entries(SOURCES)) {
    if (path.endsWith("tool-tests.test.ts")) continue; // this file names tools in strings, not describes
    for (const m of text.matchAll(opener)) names.add(m[2]!);
  }
  return names;
}

describe("every tool's tests sit under its name", () => {
  const described = describedNames();
  const tools = ALL_TOOLS.map((t) => t.name);

  it("reads the test sources, this folder's and every other's", () => {
    const paths = Object.keys(SOURCES);
    for (const file of ["mcp-contract.test.ts", "changes/write.test.ts", "code/index.test.ts"])
      expect(
        paths.some((p) => p.endsWith(file)),
        file,
      ).toBe(true);
    expect(described).toContain("log_change");
  });

  it("every tool in the catalog has a describe named for it", () => {
    expect(tools.filter((name) => !described.has(name))).toEqual([]);
  });
});
