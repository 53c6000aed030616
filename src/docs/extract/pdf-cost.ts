/**
 * What reading a PDF's pages will cost pdf.js, estimated from the file's bytes before pdf.js
 * runs. pdf.js inflates a page's content streams every time it reads that page, so 16 pages
 * sharing one stream that inflates to 100 MB cost 1.6 GB of inflation (20 s) from a 104 KB file.
 * Workers' clocks stand still while code runs, so the cost is counted in inflated bytes, not time.
 *
 * The scan is a single pass over the file: every stream object is found by its `stream` keyword,
 * Flate streams are inflated with a counter (never kept, except object streams, which may hold
 * the page dictionaries), and each page dictionary's /Contents names the streams it reads.
 */
import { WorkBudget } from "../../core/work-budget";
import { concatBytes } from "../../net/bytes";

/** One stream inflating past this is not given to pdf.js at all: it would hold it in memory per page. */
export const MAX_PDF_STREAM_INFLATED = 8 * 1024 * 1024;
/** Bytes the pages read may inflate to in all (pdf.js inflates and reads content at about 8 MB/s here): the pages that fit are read, the rest are cut. */
export const PDF_INFLATE_BUDGET = 16 * 1024 * 1024;
/** The scan itself inflates at most this much (a file of many large streams stops it early). */
const SCAN_INFLATE_BUDGET = 8 * PDF_INFLATE_BUDGET;
/** Flate streams the scan inflates; a file with more is not read (each costs a decompressor). */
const MAX_SCANNED_STREAMS = 50_000;

export interface PdfCost {
  /** Why pdf.js should not read the file at all, or null. */
  refuse: string | null;
  /** What the costliest page inflates to (its contents plus every form it may draw). */
  pageCost: number;
  /** How many pages fit in PDF_INFLATE_BUDGET at pageCost each. */
  pagesWithinBudget: number;
}

interface Stream {
  /** Inflated size (or the raw size when it cannot be inflated here). */
  size: number;
  form: boolean;
  image: boolean;
  objectStream: string | null;
}

/** Inflates `data`, counting bytes; stops past `limit`. Keeps the bytes only when `keep`. */
async function inflate(data: Uint8Array, limit: number, keep: boolean): Promise<{ size: number; over: boolean; bytes: Uint8Array | null }> {
  const parts: Uint8Array[] = [];
  let size = 0;
  const reader = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate")).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel();
        return { size, over: true, bytes: null };
      }
      if (keep) parts.push(value);
    }
  } catch {
    // Corrupt or encrypted data, or bytes after the stream's end: what came out so far counts.
  }
  return { size, over: false, bytes: keep ? concatBytes(parts) : null };
}

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isSpace = (c: string | undefined) => c === " " || c === "\n" || c === "\r" || c === "\t" || c === "\f" || c === "\0";

/** The object number of `N G obj` ending just before `at` (the `obj` keyword's index), or null. */
function objectNumberBefore(text: string, at: number): number | null {
  let i = at - 1;
  while (i >= 0 && isSpace(text[i])) i--;
  while (i >= 0 && isDigit(text[i])) i--;
  while (i >= 0 && isSpace(text[i])) i--;
  const end = i + 1;
  while (i >= 0 && isDigit(text[i])) i--;
  return end > i + 1 ? Number(text.slice(i + 1, end)) : null;
}

/** The object numbers a `/Contents` value at `at` refers to: `N G R` or `[N G R …]`; none for a string. */
function contentRefs(text: string, at: number): number[] {
  const refs: number[] = [];
  let i = at;
  while (isSpace(text[i])) i++;
  const array = text[i] === "[";
  if (array) i++;
  // A page has at most a few thousand content streams; the bound keeps a hostile array finite.
  for (let n = 0; n < 10_000; n++) {
    while (isSpace(text[i])) i++;
    const start = i;
    while (isDigit(text[i])) i++;
    if (i === start) break;
    const num = Number(text.slice(start, i));
    while (isSpace(text[i])) i++;
    while (isDigit(text[i])) i++;
    while (isSpace(text[i])) i++;
    if (text[i] !== "R") break;
    i++;
    refs.push(num);
    if (!array) break;
  }
  return refs;
}

/** Each page dictionary's /Contents references, found in `text` (the file, or an object stream). */
function pagesIn(text: string, into: number[][]): void {
  for (let at = text.indexOf("/Contents"); at !== -1; at = text.indexOf("/Contents", at + 9)) {
    const refs = contentRefs(text, at + 9);
    if (refs.length > 0) into.push(refs);
  }
}

const latin1 = new TextDecoder("latin1");

export async function pdfCost(bytes: Uint8Array): Promise<PdfCost> {
  // One UTF-16 unit per byte: offsets into the text are offsets into the file.
  const text = latin1.decode(bytes);
  const streams = new Map<number, Stream>();
  const scan = new WorkBudget(SCAN_INFLATE_BUDGET);
  let inflated = 0;
  let from = 0;
  // The last `obj` keyword before the current stream, found by a cursor that only moves forward.
  let objAt = -1;
  let objCursor = 0;
  for (let at = text.indexOf("stream", from); at !== -1; at = text.indexOf("stream", from)) {
    from = at + 6;
    if (text.startsWith("end", at - 3)) continue;
    let dataStart = at + 6;
    if (text[dataStart] === "\r") dataStart++;
    if (text[dataStart] === "\n") dataStart++;
    else if (dataStart === at + 6) continue; // `stream` must end its line
    for (let o = text.indexOf("obj", objCursor); o !== -1 && o < at; o = text.indexOf("obj", objCursor)) {
      objAt = o;
      objCursor = o + 3;
    }
    if (objAt === -1 || at - objAt > 64 * 1024) continue;
    const num = objectNumberBefore(text, objAt);
    const dict = text.slice(objAt, at);
    let dataEnd = text.indexOf("endstream", dataStart);
    if (dataEnd === -1) dataEnd = text.length;
    from = dataEnd;
    while (dataEnd > dataStart && (text[dataEnd - 1] === "\n" || text[dataEnd - 1] === "\r")) dataEnd--;
    const raw = bytes.subarray(dataStart, dataEnd);
    const image = dict.includes("/Image");
    const objectStream = dict.includes("/ObjStm");
    let size = raw.byteLength;
    let kept: string | null = null;
    // Images are not inflated to read text; other filters (and none) are counted at their raw size.
    if (!image && dict.includes("/FlateDecode")) {
      if (scan.left === 0) return { refuse: `its streams inflate past ${SCAN_INFLATE_BUDGET} bytes in all`, pageCost: Infinity, pagesWithinBudget: 0 };
      if (++inflated > MAX_SCANNED_STREAMS) return { refuse: `it has more than ${MAX_SCANNED_STREAMS} compressed streams`, pageCost: Infinity, pagesWithinBudget: 0 };
      const r = await inflate(raw, Math.min(MAX_PDF_STREAM_INFLATED, scan.left), objectStream);
      if (r.over) {
        return r.size > MAX_PDF_STREAM_INFLATED
          ? { refuse: `a content stream inflates past ${MAX_PDF_STREAM_INFLATED} bytes`, pageCost: Infinity, pagesWithinBudget: 0 }
          : { refuse: `its streams inflate past ${SCAN_INFLATE_BUDGET} bytes in all`, pageCost: Infinity, pagesWithinBudget: 0 };
      }
      scan.take(r.size);
      size = r.size;
      if (r.bytes) kept = latin1.decode(r.bytes);
    }
    if (num !== null) streams.set(num, { size, form: dict.includes("/Form"), image, objectStream: kept });
  }

  const pages: number[][] = [];
  pagesIn(text, pages);
  for (const s of streams.values()) if (s.objectStream !== null) pagesIn(s.objectStream, pages);
  // A page may draw any form (forms are named in resources, which are not followed here).
  let forms = 0;
  let content = 0;
  for (const s of streams.values()) {
    if (s.form) forms += s.size;
    else if (!s.image && s.objectStream === null) content += s.size;
  }
  const sizeOf = (n: number) => streams.get(n)?.size ?? 0;
  // Without a page dictionary in sight, any page may read every stream.
  let costliest = pages.length === 0 ? content : 0;
  for (const refs of pages)
    costliest = Math.max(
      costliest,
      refs.reduce((sum, n) => sum + sizeOf(n), 0),
    );
  const pageCost = forms + costliest;
  return { refuse: null, pageCost, pagesWithinBudget: Math.max(1, Math.floor(PDF_INFLATE_BUDGET / Math.max(1, pageCost))) };
}
