/**
 * The docs' tool tables follow the catalog. A table between `<!-- tools:<toolsets> -->` and
 * `<!-- /tools -->` (toolsets comma-separated, optionally `:reads` or `:writes` for the read-only
 * tools or the others) lists exactly the catalog's tools of those toolsets: a row of a tool that
 * is gone loses its name (the row goes when it names no tool left), and a tool with no row gets one
 * at the end (its seed name, the first sentence of its description). The prose of the rows stays
 * as written: the catalog has the names, the pages the explanations.
 *
 *   npm run docs:tools               rewrites the tables in docs/*.md
 *   npm run docs:tools -- --check    fails, naming the pages, when a table is not what the catalog gives
 *
 * The catalog itself loads only inside workerd (it imports `cloudflare:` modules); its shape is
 * committed as test/__catalog__/toolsets.json (checked against it by
 * test/server/catalog-index.test.ts) and each tool's description in test/__toolsnaps__.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

export interface CatalogTool {
  name: string;
  seedName?: string;
  readOnly: boolean;
  everywhere?: true;
}
export interface CatalogToolset {
  toolset: string;
  default: boolean;
  tools: CatalogTool[];
}

const ROOT = path.join(import.meta.dirname, "..");
const OPEN = /^<!-- tools:([a-z_,]+)(?::(reads|writes))? -->$/;
const CLOSE = "<!-- /tools -->";

/** The cell boundaries of a table row: `|` not escaped as `\|`. */
const cellBars = (line: string) => [...line.matchAll(/(?<!\\)\|/g)].map((m) => m.index);

const backticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** The first sentence of a description, as the tables write it: lower-case start, no final period, `|` escaped. */
export function summary(description: string): string {
  const first = /^.*?[.!?](?=\s|$)/s.exec(description)?.[0] ?? description;
  const text = first.replace(/\.$/, "").replace(/\s+/g, " ").replace(/\|/g, "\\|");
  const word = text.split(" ")[0] ?? "";
  // "Blame an entity" → "blame an entity"; "GitHub's checks" keeps its capital.
  return word.slice(1) === word.slice(1).toLowerCase() ? text.charAt(0).toLowerCase() + text.slice(1) : text;
}

/** A row for a tool the table lacks, with the columns the table has. */
function newRow(header: string, tool: CatalogTool, describe: (name: string) => string): string {
  const bars = cellBars(header);
  const columns = bars.slice(1, -1).map((at, i) => header.slice(at + 1, bars[i + 2]).trim());
  const cells = columns.map((column) => {
    if (column === "seed name") return tool.seedName ?? "—";
    if (column.startsWith("what")) return summary(describe(tool.name));
    return "";
  });
  return `| \`${tool.name}\` |${cells.map((c) => (c === "" ? " " : ` ${c} `)).join("|")}|`;
}

/** One table's lines (header, separator, rows) made to list exactly `tools`, in the page's order. */
export function renderTable(lines: string[], tools: CatalogTool[], describe: (name: string) => string): string[] {
  const [header, separator, ...rows] = lines;
  if (header === undefined || separator === undefined || !/^\|[-|: ]+\|$/.test(separator)) throw new Error(`not a table: ${lines[0] ?? "(empty)"}`);
  const wanted = new Map(tools.map((t) => [t.name, t]));
  const seen = new Set<string>();
  const out = [header, separator];
  for (const row of rows) {
    const bars = cellBars(row);
    if (bars.length < 2) throw new Error(`not a table row: ${row}`);
    const cell = row.slice(bars[0]! + 1, bars[1]);
    const names = backticked(cell);
    const kept = names.filter((n) => wanted.has(n) && !seen.has(n));
    for (const n of kept) seen.add(n);
    if (kept.length === names.length) out.push(row);
    else if (kept.length > 0) {
      // The row's own separator between names: " / " or ", ".
      const sep = /`[^`]+`(\s*[/,]\s*)`/.exec(cell)?.[1] ?? " / ";
      out.push(`| ${kept.map((n) => `\`${n}\``).join(sep)} ${row.slice(bars[1])}`);
    }
  }
  for (const tool of tools) if (!seen.has(tool.name)) out.push(newRow(header, tool, describe));
  return out;
}

/** The catalog's tools a marker names. */
export function markerTools(catalog: CatalogToolset[], toolsets: string[], only: string | undefined): CatalogTool[] {
  for (const id of toolsets) if (!catalog.some((s) => s.toolset === id)) throw new Error(`no toolset ${id} in the catalog`);
  return catalog
    .filter((s) => toolsets.includes(s.toolset))
    .flatMap((s) => s.tools)
    .filter((t) => only === undefined || t.readOnly === (only === "reads"));
}

/** A page with every marked table rendered, and the toolsets (with their filter) its markers name. */
export function renderPage(text: string, catalog: CatalogToolset[], describe: (name: string) => string): { text: string; tables: string[] } {
  const lines = text.split("\n");
  const out: string[] = [];
  const tables: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = OPEN.exec(lines[i]!);
    out.push(lines[i]!);
    if (!open) continue;
    const end = lines.indexOf(CLOSE, i + 1);
    if (end < 0) throw new Error(`line ${i + 1}: ${lines[i]} has no ${CLOSE}`);
    const toolsets = open[1]!.split(",");
    tables.push(...toolsets.map((s) => (open[2] ? `${s}:${open[2]}` : s)));
    const body = lines.slice(i + 1, end);
    // The table sits on the lines after the marker; a blank line before the close marker ends it.
    const table = body.filter((l) => l.startsWith("|"));
    if (body.some((l) => l !== "" && !l.startsWith("|"))) throw new Error(`line ${i + 1}: only a table may stand between ${lines[i]} and ${CLOSE}`);
    out.push(...renderTable(table, markerTools(catalog, toolsets, open[2]), describe), ...body.filter((l) => l === ""));
    i = end - 1;
  }
  return { text: out.join("\n"), tables };
}

/** Toolsets with tools no table lists (`git` is covered by `git:reads` and `git:writes` together). */
export function uncovered(catalog: CatalogToolset[], tables: string[]): string[] {
  const listed = (s: CatalogToolset, t: CatalogTool) => tables.includes(s.toolset) || tables.includes(`${s.toolset}:${t.readOnly ? "reads" : "writes"}`);
  return catalog.filter((s) => s.tools.some((t) => !listed(s, t))).map((s) => s.toolset);
}

function main(): void {
  const check = process.argv.includes("--check");
  const catalog = JSON.parse(readFileSync(path.join(ROOT, "test/__catalog__/toolsets.json"), "utf8")) as CatalogToolset[];
  const describe = (name: string) => (JSON.parse(readFileSync(path.join(ROOT, "test/__toolsnaps__", `${name}.json`), "utf8")) as { description: string }).description;
  const stale: string[] = [];
  const tables: string[] = [];
  for (const file of readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()) {
    const page = path.join(ROOT, "docs", file);
    const before = readFileSync(page, "utf8");
    const after = renderPage(before, catalog, describe);
    tables.push(...after.tables);
    if (after.text === before) continue;
    stale.push(`docs/${file}`);
    if (!check) writeFileSync(page, after.text);
  }
  const missing = uncovered(catalog, tables);
  if (missing.length > 0) throw new Error(`toolsets in no docs table: ${missing.join(", ")}; add a <!-- tools:<toolset> --> table to the page that documents them`);
  if (check && stale.length > 0) {
    console.error(`The tool tables of ${stale.join(", ")} differ from the catalog: run npm run docs:tools and review the rows it adds or trims.`);
    process.exit(1);
  }
  console.info(check ? "tool tables match the catalog" : stale.length > 0 ? `rewrote ${stale.join(", ")}` : "tool tables already match the catalog");
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) main();
