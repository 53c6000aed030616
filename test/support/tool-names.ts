/**
 * Every tool the server offers with ?toolsets=all: the names of the committed tool snapshots
 * (test/__toolsnaps__, one file per tool, written and checked by test/server/mcp-contract.test.ts).
 * A tool added or removed without its snapshot file added or deleted fails the HTTP and
 * end-to-end tests, which compare this list with what `tools/list` answers.
 */
const SNAPSHOTS = import.meta.glob("../__toolsnaps__/*.json");

export const ALL_TOOL_NAMES = Object.keys(SNAPSHOTS)
  .map((path) => path.replace(/^.*\//, "").replace(/\.json$/, ""))
  .sort();
