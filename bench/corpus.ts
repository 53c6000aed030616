/**
 * Documents for the benchmarks that fill the document store: the text files of the packages this
 * repository pins (node_modules), so the figures do not depend on text written for them.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { firstControl } from "../src/core/bounds";

export const MAX_DOC_BYTES = 4 * 1024;
const TEXT = /\.(md|ts|js|mjs|cjs|json|d\.ts|txt)$/;

/** Text files of the pinned packages, in a stable order, cut into documents of at most MAX_DOC_BYTES at line ends. */
export async function corpus(limit: number): Promise<{ name: string; content: string }[]> {
  const out: { name: string; content: string }[] = [];
  const seen = new Set<string>();
  async function walk(dir: string): Promise<void> {
    if (out.length >= limit) return;
    const entries = (await readdir(dir, { withFileTypes: true }).catch(() => [])).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      if (out.length >= limit) return;
      const full = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== ".bin" && e.name !== ".cache") await walk(full);
      } else if (e.isFile() && TEXT.test(e.name) && (await stat(full)).size > 200) {
        const text = (await readFile(full, "utf8")).slice(0, 64 * 1024);
        let part = 0;
        for (let at = 0; at < text.length && out.length < limit; part++) {
          let end = Math.min(text.length, at + MAX_DOC_BYTES);
          const nl = text.lastIndexOf("\n", end);
          if (end < text.length && nl > at) end = nl + 1;
          const content = text.slice(at, end);
          at = end;
          // Identical pieces (copies of a licence) are kept once: dedupe is measured elsewhere. Text
          // with control characters other than tab and line breaks is refused by the store.
          if (content.trim().length < 100 || seen.has(content) || firstControl(content, false) >= 0) continue;
          seen.add(content);
          out.push({ name: `${path.relative("node_modules", full)}${part > 0 ? `.part${part}` : ""}`, content });
        }
      }
    }
  }
  await walk("node_modules");
  return out;
}

/** A word that occurs in very few documents: grep's "rare literal". */
export function rareLiteral(docs: { content: string }[]): string {
  const counts = new Map<string, number>();
  for (const d of docs) for (const w of new Set(d.content.match(/[A-Za-z][A-Za-z0-9_]{11,30}/g) ?? [])) counts.set(w, (counts.get(w) ?? 0) + 1);
  const rare = [...counts].filter(([, n]) => n >= 1 && n <= 3).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  return rare[Math.floor(rare.length / 2)]![0];
}
