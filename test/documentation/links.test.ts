/** Every relative link and #anchor in README.md, docs/*.md and bench/README.md leads to a page and heading that exist. */
import { describe, expect, it } from "vitest";
import { anchors, links, PAGES } from "../support/docs-pages";

/** Code that points readers at the docs: comments and hints in the Worker, the scripts and the tests. */
const CODE = import.meta.glob<string>(["../../src/**/*.ts", "../../scripts/*.ts", "../**/*.ts"], { query: "?raw", import: "default", eager: true });

/** The images the docs show (screenshots), by repository path. */
const IMAGES = new Set(Object.keys(import.meta.glob(["../../docs/img/**/*.png"])).map((k) => k.replace("../../", "")));

/** `docs/x.md` + `../README.md#a` → `README.md`, `a`. */
function resolve(from: string, target: string): { path: string; anchor: string | undefined } {
  const [file, anchor] = target.split("#", 2) as [string, string | undefined];
  if (file === "") return { path: from, anchor };
  const parts = from.split("/").slice(0, -1);
  for (const seg of file.split("/")) {
    if (seg === "..") parts.pop();
    else if (seg !== ".") parts.push(seg);
  }
  return { path: parts.join("/"), anchor };
}

describe("the docs' links", () => {
  it("loads the README, the docs pages and the benchmarks' README", () => {
    expect(Object.keys(PAGES)).toEqual(expect.arrayContaining(["README.md", "bench/README.md", "docs/protocol.md", "docs/differences.md"]));
    expect(Object.keys(PAGES).filter((p) => p.startsWith("docs/")).length).toBeGreaterThanOrEqual(9);
  });

  it("every relative link names a page that exists, and every #anchor a heading on it", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const [page, text] of Object.entries(PAGES)) {
      for (const { target, n } of links(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        checked++;
        const { path, anchor } = resolve(page, target);
        if (path.endsWith(".png")) {
          if (!IMAGES.has(path)) broken.push(`${page}:${n} → ${target}: no such image`);
          continue;
        }
        const to = PAGES[path];
        if (to === undefined) broken.push(`${page}:${n} → ${target}: no such page`);
        else if (anchor !== undefined && !anchors(to).has(anchor)) broken.push(`${page}:${n} → ${target}: no heading #${anchor} on ${path}`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(30);
  });

  it("the README links every docs page", () => {
    const linked = new Set(links(PAGES["README.md"]!).map((l) => resolve("README.md", l.target).path));
    expect(Object.keys(PAGES).filter((p) => p.startsWith("docs/") && !linked.has(p))).toEqual([]);
  });

  it("computes anchors as GitHub does", () => {
    expect([...anchors("# Writes: `batch_commit`, `git_merge`\n## The change ledger (toolset `changes`)\n```sh\n# not a heading\n```\n## Cron\n## Cron")]).toEqual([
      "writes-batch_commit-git_merge",
      "the-change-ledger-toolset-changes",
      "cron",
      "cron-1",
    ]);
  });

  it("every `docs/<page>.md: <Section>` (or `(docs/<page>.md)`) the code mentions names a page and a heading on it, and none points at README sections", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const [file, text] of Object.entries(CODE)) {
      if (/README: [A-Z]/.test(text)) broken.push(`${file}: a "README: …" section reference (the reference lives in docs/)`);
      for (const m of text.matchAll(/(?<![\w/.-])docs\/([a-z-]+\.md)(?:[:,] ([A-Z][^).,;:"`]*)|\))/g)) {
        if (file.endsWith("documentation/links.test.ts")) continue;
        checked++;
        const page = PAGES[`docs/${m[1]}`];
        const heading = m[2]?.trim().toLowerCase();
        if (page === undefined) broken.push(`${file}: docs/${m[1]}: no such page`);
        else if (heading && !page.split("\n").some((l) => /^#+ /.test(l) && l.replace(/^#+ /, "").replace(/`/g, "").toLowerCase().startsWith(heading)))
          broken.push(`${file}: docs/${m[1]}: no heading "${m[2]}"`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });
});
