/**
 * docs/differences.md keeps up with the tools: each page's tool table names, beside every tool, the
 * seed's name for it (`—` where the seed has none), and a seed name the server does not use for that
 * tool is a departure, so the seed's section of differences.md must name it.
 */
import { describe, expect, it } from "vitest";
import { ALL_TOOLS } from "../../src/server/registry";
import { PAGES, section, tableRows } from "../support/docs-pages";

/** Each seed's page, and how many tools the seed itself names. */
const SEEDS = {
  "000": { page: "docs/changes.md", tools: 8 },
  "001": { page: "docs/work.md", tools: 57 }, // "All 57 MCP tools"
  "002": { page: "docs/git.md", tools: 9 },
  "003": { page: "docs/docs-store.md", tools: 4 }, // query, execute, session and the always-registered mcp.echo
  "004": { page: "docs/code-review-plans.md", tools: 37 }, // its 36 tools, and tool_manifest, which it names as the source of truth
} as const;

/** Pages for capabilities no seed has: their tools' rows carry `—` as the seed name. */
const BEYOND_SEEDS = ["docs/coordination.md"];

const backticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** A seed-name cell: names split on `/` or `,`; `—` (with or without a note in parentheses) is none. */
function seedNames(cell: string): string[] {
  const bare = cell
    .replace(/\(.*\)/g, "")
    .replace(/`/g, "")
    .trim();
  if (bare === "—" || bare === "") return [];
  return bare.split(/\s*[/,]\s*/).filter(Boolean);
}

function toolRows(page: string) {
  return tableRows(PAGES[page] ?? "", ["tool", "seed name"]).map((cells) => ({ tools: backticked(cells[0]!), seed: seedNames(cells[1]!), row: cells.slice(0, 2).join(" | ") }));
}

const differences = PAGES["docs/differences.md"] ?? "";
const seedSection = (seed: string) => {
  const heading = differences.split("\n").find((l) => l.startsWith(`## Seed ${seed}`));
  return heading ? section(differences, heading) : "";
};

describe("docs/differences.md", () => {
  it("has a section per seed, each with a table of departures that has its reason column filled", () => {
    for (const seed of Object.keys(SEEDS)) {
      const rows = tableRows(seedSection(seed), ["what the seed says", "what we do", "why"]);
      expect(rows.length, `seed ${seed}`).toBeGreaterThan(0);
      for (const r of rows) expect(r[2]?.length ?? 0, `seed ${seed}: ${r[0]}`).toBeGreaterThan(20);
    }
  });

  for (const [seed, { page, tools }] of Object.entries(SEEDS)) {
    it(`names every seed-${seed} name that ${page} maps to a tool of another name`, () => {
      const rows = toolRows(page);
      expect(rows.length, page).toBeGreaterThan(0);
      const missing = rows.flatMap((r) =>
        r.seed
          .filter((s) => !r.tools.includes(s))
          .filter((s) => !seedSection(seed).includes(`\`${s}\``))
          .map((s) => `${s} (${r.row})`),
      );
      expect(missing, `seed names without a row in differences.md's seed ${seed} section`).toEqual([]);
      // The seed-name column covers the seed: as many distinct names as the seed has tools.
      expect(new Set(rows.flatMap((r) => r.seed)).size, `${page}: seed names`).toBe(tools);
    });
  }

  it("has every registered tool in exactly one page's tool table, and no tool that is not registered", () => {
    const listed = [...Object.values(SEEDS).map(({ page }) => page), ...BEYOND_SEEDS].flatMap((page) => toolRows(page).flatMap((r) => r.tools));
    const registered = ALL_TOOLS.map((t) => t.name);
    expect(
      listed.filter((t) => !registered.includes(t)),
      "listed but not registered",
    ).toEqual([]);
    expect(
      registered.filter((t) => !listed.includes(t)),
      "registered but in no tool table",
    ).toEqual([]);
    expect(listed.length, "a tool listed twice").toBe(new Set(listed).size);
  });
});
