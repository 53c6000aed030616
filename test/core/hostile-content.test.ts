import { describe, expect, it } from "vitest";
import { parseSource } from "../../src/code/parse";
import { extractText } from "../../src/docs/extract/extract";
import { MAX_PDF_STREAM_INFLATED, PDF_INFLATE_BUDGET } from "../../src/docs/extract/pdf-cost";
import { documentTitle } from "../../src/docs/store/text-index";
import { parseUnifiedDiff } from "../../src/review/unified-diff/parse";
import { runInvariants, type InvariantsConfig } from "../../src/review/checks/invariants";
import { buildPdf, deflatePadded, textContent } from "../fixtures/pdf";

const MB = 1024 * 1024;

async function timed<T>(label: string, f: () => Promise<T>): Promise<{ r: T; ms: number }> {
  const started = performance.now();
  const r = await f();
  const ms = performance.now() - started;
  console.log(`hostile ${label}: ${Math.round(ms)} ms`);
  return { r, ms };
}

describe("PDF extraction budget", () => {
  // 20 s before: pdf.js inflated and parsed the shared 100 MB stream once per page.
  it("16 pages sharing one stream that inflates to 100 MB are refused at once, not read 16 times", async () => {
    const stream = await deflatePadded(textContent(["Hello from a bomb"]), 100 * MB);
    const pdf = buildPdf(stream, { pages: 16, flate: true });
    expect(pdf.byteLength).toBeLessThan(200 * 1024);
    const { r, ms } = await timed(`PDF of ${pdf.byteLength} bytes, 16 pages x 100 MB`, () => extractText(pdf, "application/pdf", "bomb.pdf"));
    expect(ms).toBeLessThan(1000);
    expect(r).toMatchObject({ status: "failed", extractor: "pdf", text: null });
    expect(r.note).toContain(`a content stream inflates past ${MAX_PDF_STREAM_INFLATED} bytes`);
  });

  it("pages whose shared stream fits are read until the inflation budget, and the note says how many", async () => {
    const perPage = 3 * MB;
    const stream = await deflatePadded(textContent(["Shared page text"]), perPage);
    const pdf = buildPdf(stream, { pages: 10, flate: true });
    const { r, ms } = await timed("PDF of 10 pages x 3 MB", () => extractText(pdf, "application/pdf", "wide.pdf"));
    const fit = Math.floor(PDF_INFLATE_BUDGET / perPage);
    expect(fit).toBeLessThan(10);
    expect(ms).toBeLessThan(15_000);
    expect(r.status).toBe("text");
    expect(r.truncated).toBe(true);
    expect(r.text!.split("Shared page text")).toHaveLength(fit + 1);
    expect(r.note).toContain(`only the first ${fit} of 10 pages were indexed`);
    expect(r.note).toContain(`pages are read within ${PDF_INFLATE_BUDGET} bytes`);
  }, 30_000);

  it("an ordinary compressed PDF is read whole, with no note", async () => {
    const stream = await deflatePadded(textContent(["Quarterly report", "Second line"]), 0);
    const r = await extractText(buildPdf(stream, { pages: 3, flate: true }), "application/pdf", "ok.pdf");
    expect(r).toMatchObject({ status: "text", truncated: false, note: null });
    expect(r.text!.split("Quarterly report")).toHaveLength(4);
  });
});

describe("diff parsing", () => {
  // Each ` b/` (each ` and `) restarted a backtracking search that ran to the line's end: ~10 s here.
  it("a header line of 60,000 ' b/' or ' and ' parses in linear time, with the same paths as before", () => {
    const bs = ` b/x${" b/".repeat(60_000)}\rz`;
    const ands = ` and ${"y and ".repeat(60_000)}y`;
    const diff = [`diff --git a/x${bs}`, "--- a/x", "+++ b/x", "@@ -1 +1 @@", "-a", "+b", `Binary files a/x${ands}`, "diff --git a/p b/q", "Binary files a/p and b/q differ"].join("\n");
    const started = performance.now();
    const parsed = parseUnifiedDiff(diff);
    const ms = performance.now() - started;
    console.log(`hostile diff headers of ${diff.length} chars: ${Math.round(ms)} ms`);
    expect(ms).toBeLessThan(1000);
    expect(parsed.files.map((f) => [f.oldPath, f.newPath, f.isBinary])).toEqual([
      ["x", "x", false],
      ["p", "q", true],
    ]);
    expect(parsed.linesAdded).toBe(1);
  });
});

describe("invariants budget", () => {
  // One find over every file per (invariant, file): 7 s here for 200 invariants over 3,000 files.
  it("200 invariants over 3,000 files stop at the budget, fast, with a warning and the findings so far", () => {
    const files = Array.from({ length: 3000 }, (_, i) => ({ path: `src/f${i}.ts`, oldPath: `src/f${i}.ts`, added: [i === 0 ? "forbidden()" : "const a = 1;"] }));
    const config: InvariantsConfig = {
      warnings: [],
      sections: [
        {
          name: "rules",
          invariants: Array.from({ length: 200 }, (_, i) => ({
            id: `inv${i}`,
            rule: "no forbidden calls",
            paths: ["**"],
            severity: "HIGH" as const,
            category: "security" as const,
            action: "deny",
            deny: { regex: { pattern: "forbidden\\(" } },
          })),
        },
      ],
    };
    const started = performance.now();
    const r = runInvariants(
      files,
      files.map((f) => f.path),
      config,
    );
    const ms = performance.now() - started;
    console.log(`hostile invariants 200 x 3000 files: ${Math.round(ms)} ms, ${r.checked} checks`);
    expect(ms).toBeLessThan(1000);
    expect(r.warnings.at(-1)).toMatch(/^Invariant evaluation stopped after \d+ file checks: the work passed/);
    expect(r.findings.map((f) => `${f.id} ${f.location.file}`).slice(0, 2)).toEqual(["inv0 src/f0.ts", "inv1 src/f0.ts"]);
    expect(r.checked).toBeGreaterThan(3000);
  });

  it("a heavy pattern is charged for its size: it stops sooner than a light one on the same text", () => {
    const files = [{ path: "big.ts", oldPath: "big.ts", added: Array.from({ length: 1000 }, () => "abcdefghij".repeat(100)) }];
    const config = (pattern: string, n: number): InvariantsConfig => ({
      warnings: [],
      sections: [
        {
          name: "s",
          invariants: Array.from({ length: n }, (_, i) => ({
            id: `i${i}`,
            rule: "r",
            paths: ["**"],
            severity: "HIGH" as const,
            category: "security" as const,
            action: "deny",
            deny: { regex: { pattern } },
          })),
        },
      ],
    });
    const started = performance.now();
    const heavy = runInvariants(files, ["big.ts"], config("(?:[a-z]{2}|[a-z]{3}){300}[0-9]", 50));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(heavy.checked).toBe(1);
    expect(heavy.warnings).toHaveLength(1);
    expect(runInvariants(files, ["big.ts"], config("[0-9]", 10))).toMatchObject({ checked: 10, warnings: [] });
  });
});

describe("markdown title", () => {
  // The heading regex backtracked cubically on trailing spaces: 2,500 of them took seconds, 8,000 minutes.
  it("a heading followed by thousands of spaces is read in linear time, with the same title", () => {
    for (const spaces of [2_500, 60_000]) {
      const started = performance.now();
      const title = documentTitle("notes/a.md", "text/markdown", `# Release notes${" ".repeat(spaces)}x ##   \n\nbody`);
      const ms = performance.now() - started;
      console.log(`hostile markdown title with ${spaces} spaces: ${Math.round(ms)} ms`);
      expect(ms).toBeLessThan(1000);
      expect(title).toBe(`Release notes${" ".repeat(spaces)}x`.slice(0, 199) + "…");
    }
    expect(documentTitle("a.md", "text/markdown", "## Title ##\n")).toBe("Title");
    expect(documentTitle("a.md", "text/markdown", "####### seven\n# #\n")).toBe("a.md");
  });
});

describe("code parsing", () => {
  // Tree-sitter's queries cost nodes x depth: 30,000 nested parentheses took 4.9 s.
  it("deeply nested brackets skip the syntax queries: line windows, fast, with a note", async () => {
    await parseSource("warm.ts", "export const a = 1;\n");
    const text = `export function ok() {}\n${"(".repeat(30_000)}\n`;
    const started = performance.now();
    const r = await parseSource("deep.ts", text);
    const ms = performance.now() - started;
    console.log(`hostile code: ${text.length} chars of nesting parsed in ${Math.round(ms)} ms`);
    expect(ms).toBeLessThan(1000);
    expect(r).toMatchObject({ syntax: false, symbols: [] });
    expect(r.note).toContain("nest too deep");
    expect(r.chunks.map((c) => c.text).join("")).toContain("export function ok() {}");
  });

  // Every item of the outline sat on the one long line, and each repeated it: 150,000 chunks from 30 KB.
  it("an outline that would repeat a long line per item is chunked as line windows instead", async () => {
    const text = "a<".repeat(15_000);
    const started = performance.now();
    const r = await parseSource("gen.ts", text);
    const ms = performance.now() - started;
    const chars = r.chunks.reduce((n, c) => n + c.text.length, 0);
    console.log(`hostile code: ${text.length} chars of 'a<' gave ${r.chunks.length} chunks, ${chars} chars, in ${Math.round(ms)} ms`);
    expect(r.note).toContain("chunked as line windows instead");
    expect(chars).toBe(text.length);
    const normal = await parseSource("ok.ts", "import { x } from './x';\nexport function f() { return x; }\n");
    expect(normal.syntax).toBe(true);
    expect(normal.note).toBeUndefined();
    expect(normal.symbols.map((s) => s.name)).toEqual(["f"]);
  });
});
