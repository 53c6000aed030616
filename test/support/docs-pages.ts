/**
 * The markdown a user reads (README.md, docs/*.md, bench/README.md), loaded at build time, and the
 * few things the doc tests read out of it: headings as GitHub anchors, relative links, sections and
 * tables. Fenced code is never read as markdown (a `# comment` in a shell block is not a heading).
 */
const raw = import.meta.glob<string>(["../../README.md", "../../docs/*.md", "../../bench/README.md"], { query: "?raw", import: "default", eager: true });

/** Repository path (`README.md`, `docs/work.md`) → text. */
export const PAGES: Record<string, string> = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k.replace(/^(\.\.\/)+/, ""), v]));

/** The page's lines outside fenced code blocks, numbered from 1. */
function proseLines(text: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = [];
  let fenced = false;
  text.split("\n").forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) out.push({ line, n: i + 1 });
  });
  return out;
}

/**
 * GitHub's heading anchor: lowercased, every character that is not a letter, digit, space, `-` or
 * `_` dropped (backticks, parentheses, colons, dots), spaces to `-`; a repeated slug gets `-1`, `-2`.
 */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line } of proseLines(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .trim()
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every markdown link `[text](target)` outside code, with its line. */
export function links(text: string): { target: string; n: number }[] {
  const out: { target: string; n: number }[] = [];
  for (const { line, n } of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, "``");
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ target: m[1]!, n });
  }
  return out;
}

/** The lines from a heading to the next heading of the same or a higher level (the heading included). */
export function section(text: string, heading: string): string {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l === heading);
  if (start < 0) return "";
  const level = /^#+/.exec(heading)![0].length;
  const end = lines.findIndex((l, i) => i > start && new RegExp(`^#{1,${level}} `).test(l));
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}

/** Each row of every table whose header row starts with the given cells, as its cells (trimmed, `\|` kept). */
export function tableRows(text: string, header: string[]): string[][] {
  const rows: string[][] = [];
  let inTable = false;
  for (const { line } of proseLines(text)) {
    if (!line.startsWith("|")) {
      inTable = false;
      continue;
    }
    const cells = line
      .replace(/^\||\|$/g, "")
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
    if (header.every((h, i) => cells[i] === h)) inTable = true;
    else if (inTable && !/^-+$/.test(cells[0] ?? "")) rows.push(cells);
  }
  return rows;
}
