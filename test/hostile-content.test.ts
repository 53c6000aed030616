import { describe, expect, it } from "vitest";
import { extractText } from "../src/docs/extract";
import { MAX_PDF_STREAM_INFLATED, PDF_INFLATE_BUDGET } from "../src/docs/pdf-cost";
import { buildPdf, deflatePadded, textContent } from "./fixtures/pdf";

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
