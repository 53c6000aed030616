// npm run docs:tools: the docs' tool tables list exactly the catalog's tools, and the check fails when they do not.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/wrangler";
import { renderPage, summary, uncovered, type CatalogToolset } from "../../scripts/tool-tables";
import { runScript } from "./support/run-script";

const catalog = JSON.parse(readFileSync(path.join(ROOT, "test/__catalog__/toolsets.json"), "utf8")) as CatalogToolset[];

const CATALOG: CatalogToolset[] = [
  {
    toolset: "alpha",
    default: true,
    tools: [
      { name: "a_get", readOnly: true },
      { name: "a_put", readOnly: false },
      { name: "a_list", seedName: "list", readOnly: true },
    ],
  },
  { toolset: "beta", default: false, tools: [{ name: "b_run", readOnly: false }] },
];
const DESCRIPTIONS: Record<string, string> = {
  a_list: "Lists the alphas, newest first. Pages with a cursor.",
  b_run: "GitHub's runner: a|b both run.",
};
const describeTool = (name: string) => DESCRIPTIONS[name] ?? `${name}.`;

const page = (rows: string[], marker = "<!-- tools:alpha -->") =>
  ["# Alpha", "", marker, "| tool | seed name | what it does |", "|---|---|---|", ...rows, "", "<!-- /tools -->", "", "After."].join("\n");

describe("npm run docs:tools", () => {
  it("finds the committed docs pages' tables in step with the catalog (the check CI runs)", () => {
    const run = runScript("tool-tables.ts", ["--check"]);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("tool tables match the catalog");
    expect(run.status).toBe(0);
  });

  it("has a table on the docs pages for every tool of the catalog", () => {
    const tables = readdirSync(path.join(ROOT, "docs"))
      .filter((f) => f.endsWith(".md"))
      .flatMap((f) => renderPage(readFileSync(path.join(ROOT, "docs", f), "utf8"), catalog, () => "").tables);
    expect(uncovered(catalog, tables)).toEqual([]);
    expect(tables).toEqual(expect.arrayContaining(["changes", "docs", "git:reads", "git:writes", "code", "review", "plans", "knowledge"]));
  });

  it("reads a catalog index that names exactly the tools with a committed snapshot", () => {
    const snapshots = readdirSync(path.join(ROOT, "test/__toolsnaps__"))
      .map((f) => f.replace(/\.json$/, ""))
      .sort();
    expect(catalog.flatMap((s) => s.tools.map((t) => t.name)).sort()).toEqual(snapshots);
  });

  it("keeps a page whose table lists the toolset's tools byte for byte, prose and escaped pipes included", () => {
    const text = page(["| `a_get` / `a_put` | get / put | reads \\| writes, `x|y` |", "| `a_list` | list | the list |"]);
    expect(renderPage(text, CATALOG, describeTool)).toEqual({ text, tables: ["alpha"] });
  });

  it("adds a row for a tool the table lacks, with its seed name and its description's first sentence", () => {
    const out = renderPage(page(["| `a_get` / `a_put` | get / put | reads, writes |"]), CATALOG, describeTool).text;
    expect(out).toBe(page(["| `a_get` / `a_put` | get / put | reads, writes |", "| `a_list` | list | lists the alphas, newest first |"]));
    const beta = renderPage(page([], "<!-- tools:beta -->"), CATALOG, describeTool).text;
    expect(beta).toContain("| `b_run` | — | GitHub's runner: a\\|b both run |");
  });

  it("takes a removed tool's name out of its row, and the row out when it names no tool left", () => {
    const out = renderPage(page(["| `a_get`, `a_gone` | get | both |", "| `a_old` | old | gone |", "| `a_put` | put | w |", "| `a_list` | list | l |"]), CATALOG, describeTool).text;
    expect(out).toBe(page(["| `a_get` | get | both |", "| `a_put` | put | w |", "| `a_list` | list | l |"]));
  });

  it("lists only the read-only tools under :reads and the others under :writes", () => {
    const reads = renderPage(page([], "<!-- tools:alpha:reads -->"), CATALOG, describeTool);
    expect(reads.text).toContain("`a_get`");
    expect(reads.text).not.toContain("`a_put`");
    expect(reads.tables).toEqual(["alpha:reads"]);
    expect(uncovered(CATALOG, ["alpha:reads", "beta"])).toEqual(["alpha"]);
    expect(uncovered(CATALOG, ["alpha:reads", "alpha:writes", "beta"])).toEqual([]);
  });

  it("refuses a marker without its close, an unknown toolset, and prose inside the markers", () => {
    expect(() => renderPage("<!-- tools:alpha -->\n| tool |\n|---|", CATALOG, describeTool)).toThrow(/has no <!-- \/tools -->/);
    expect(() => renderPage(page([], "<!-- tools:gamma -->"), CATALOG, describeTool)).toThrow(/no toolset gamma/);
    expect(() => renderPage(page(["a sentence"]), CATALOG, describeTool)).toThrow(/only a table/);
  });

  it("summarizes a description by its first sentence as the tables write it", () => {
    expect(summary("Blame an entity. Then more.")).toBe("blame an entity");
    expect(summary("GitHub's checks, as findings.")).toBe("GitHub's checks, as findings");
    expect(summary("Read v1.2 files.\nMore")).toBe("read v1.2 files");
  });
});
