/**
 * Text extraction for the document store's index: what a document says, as plain text, or why it
 * says nothing indexable. Pure over the bytes; indexing (text-index.ts) decides what to store.
 */
import { PDF_INFLATE_BUDGET, pdfCost } from "./pdf-cost";

/** Indexed text is cut here (UTF-8 bytes): D1 rows hold about 2 MB, and the text is stored twice (doc_texts, doc_search). */
export const MAX_INDEXED_TEXT_BYTES = 1024 * 1024;
/** Pages read from a PDF; a longer one is indexed by its first pages and the note says so. */
export const MAX_PDF_PAGES = 500;

export type ExtractStatus = "text" | "binary" | "failed";
export type Extractor = "utf8" | "html" | "json" | "pdf" | "none";

export interface Extraction {
  status: ExtractStatus;
  extractor: Extractor;
  /** The text when status is "text", else null. */
  text: string | null;
  /** True when the text was cut at MAX_INDEXED_TEXT_BYTES (or MAX_PDF_PAGES). */
  truncated: boolean;
  /** Why status is not "text", or what was cut; null when there is nothing to say. */
  note: string | null;
}

const extensionOf = (path: string): string => {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1) : "";
};

const baseMime = (mime: string): string => mime.split(";")[0]!.trim().toLowerCase();

const startsWith = (bytes: Uint8Array, ascii: string): boolean => {
  if (bytes.length < ascii.length) return false;
  for (let i = 0; i < ascii.length; i++) if (bytes[i] !== ascii.charCodeAt(i)) return false;
  return true;
};

export function kindOf(bytes: Uint8Array, mime: string, path: string): "pdf" | "html" | "json" | "utf8" {
  const m = baseMime(mime);
  const ext = extensionOf(path);
  // The magic number wins over a missing or generic MIME type: most adds never name one.
  if (m === "application/pdf" || ext === "pdf" || startsWith(bytes, "%PDF-")) return "pdf";
  if (m === "text/html" || m === "application/xhtml+xml" || ext === "html" || ext === "htm" || ext === "xhtml") return "html";
  if (m === "application/json" || m.endsWith("+json") || ext === "json") return "json";
  return "utf8";
}

/**
 * Cuts text to at most `maxBytes` of UTF-8 without splitting a character (encodeInto stops before
 * a character that does not fit).
 */
export function capText(text: string, maxBytes = MAX_INDEXED_TEXT_BYTES): { text: string; truncated: boolean } {
  // A UTF-16 code unit encodes to at most 3 bytes, so short texts need no encoding at all.
  if (text.length * 3 <= maxBytes) return { text, truncated: false };
  const buf = new Uint8Array(maxBytes);
  const { read } = new TextEncoder().encodeInto(text, buf);
  return read >= text.length ? { text, truncated: false } : { text: text.slice(0, read), truncated: true };
}

/** Strict UTF-8 without NUL bytes, or null: anything else is treated as binary. */
function decodeUtf8(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
}

const binary = (note: string): Extraction => ({ status: "binary", extractor: "none", text: null, truncated: false, note });

function finish(extractor: Extractor, raw: string, notes: string[] = [], alreadyCut = false): Extraction {
  const { text, truncated } = capText(raw);
  if (truncated) notes.push(`text cut at ${MAX_INDEXED_TEXT_BYTES} bytes for indexing; search and grep see only the start`);
  return { status: "text", extractor, text, truncated: truncated || alreadyCut, note: notes.length > 0 ? notes.join("; ") : null };
}

export async function extractText(bytes: Uint8Array, mime: string, path: string): Promise<Extraction> {
  const kind = kindOf(bytes, mime, path);
  if (kind === "pdf") return extractPdf(bytes);
  const decoded = decodeUtf8(bytes);
  if (decoded === null) {
    return binary(`stored as binary (${baseMime(mime) || "unknown type"}: not UTF-8 text); listed and retrievable, not text-indexed (found by path and name only)`);
  }
  if (kind === "html") return finish("html", htmlToText(decoded));
  if (kind === "json") {
    const notes: string[] = [];
    try {
      JSON.parse(decoded);
    } catch {
      notes.push("not valid JSON; indexed as plain text");
    }
    return finish("json", decoded, notes);
  }
  return finish("utf8", decoded);
}

async function extractPdf(bytes: Uint8Array): Promise<Extraction> {
  try {
    const cost = await pdfCost(bytes);
    if (cost.refuse !== null) {
      return { status: "failed", extractor: "pdf", text: null, truncated: false, note: `the PDF was not read: ${cost.refuse}; stored, not text-indexed` };
    }
    // Loaded on first use: pdf.js is large, and most documents are not PDFs.
    const { getDocumentProxy } = await import("unpdf");
    // pdf.js takes ownership of (detaches) the buffer it is given: hand it a copy.
    const pdf = await getDocumentProxy(bytes.slice());
    try {
      const pages = Math.min(pdf.numPages, MAX_PDF_PAGES, cost.pagesWithinBudget);
      const parts: string[] = [];
      let chars = 0;
      let cut = pdf.numPages > pages;
      const byBudget = pages < Math.min(pdf.numPages, MAX_PDF_PAGES);
      for (let n = 1; n <= pages; n++) {
        const page = await pdf.getPage(n);
        const content = await page.getTextContent();
        let pageText = "";
        for (const item of content.items) {
          if (!("str" in item)) continue;
          pageText += item.str + (item.hasEOL ? "\n" : "");
        }
        parts.push(pageText.trim());
        chars += pageText.length;
        // Enough text for the cap already: the remaining pages would be cut anyway.
        if (chars > MAX_INDEXED_TEXT_BYTES && n < pdf.numPages) {
          cut = true;
          break;
        }
      }
      const text = parts.join("\n\n").trim();
      const notes = cut ? [`only the first ${parts.length} of ${pdf.numPages} pages were indexed`] : [];
      if (byBudget) notes.push(`each page inflates up to ${cost.pageCost} bytes of content, and pages are read within ${PDF_INFLATE_BUDGET} bytes in all`);
      if (text === "") {
        return { status: "failed", extractor: "pdf", text: null, truncated: false, note: "the PDF has no extractable text (scanned images or vector outlines); stored, not text-indexed" };
      }
      return finish("pdf", text, notes, cut);
    } finally {
      await pdf.loadingTask.destroy();
    }
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { status: "failed", extractor: "pdf", text: null, truncated: false, note: `the PDF could not be read (${why.slice(0, 200)}); stored, not text-indexed` };
  }
}

// ---------------------------------------------------------------------------------------------
// HTML → visible text. A single forward scan (no backtracking regular expressions), so a 16 MiB
// page with an unclosed <script> costs one pass, not a quadratic search.

/** Elements whose content is not visible text. */
const HIDDEN = new Set(["script", "style", "noscript", "template", "svg", "math", "head"]);
/** Elements that break a line, so words from adjacent blocks do not run together. */
const BLOCK = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "br",
  "dd",
  "div",
  "dl",
  "dt",
  "figcaption",
  "figure",
  "footer",
  "form",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "header",
  "hr",
  "li",
  "main",
  "nav",
  "ol",
  "p",
  "pre",
  "section",
  "table",
  "tbody",
  "td",
  "tfoot",
  "th",
  "thead",
  "title",
  "tr",
  "ul",
]);

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  copy: "©",
  reg: "®",
  trade: "™",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  laquo: "«",
  raquo: "»",
  bull: "•",
  middot: "·",
  deg: "°",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  sect: "§",
  para: "¶",
  times: "×",
  divide: "÷",
  plusmn: "±",
  shy: "",
  zwj: "",
  zwnj: "",
  ensp: " ",
  emsp: " ",
  thinsp: " ",
  auml: "ä",
  ouml: "ö",
  uuml: "ü",
  Auml: "Ä",
  Ouml: "Ö",
  Uuml: "Ü",
  szlig: "ß",
  eacute: "é",
  egrave: "è",
  ecirc: "ê",
  aacute: "á",
  agrave: "à",
  acirc: "â",
  iacute: "í",
  oacute: "ó",
  uacute: "ú",
  ntilde: "ñ",
  ccedil: "ç",
  Eacute: "É",
  larr: "←",
  rarr: "→",
  uarr: "↑",
  darr: "↓",
  harr: "↔",
  check: "✓",
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});/g, (whole, body: string) => {
    if (body[0] === "#") {
      const code = body[1] === "x" || body[1] === "X" ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      // NUL, surrogates and out-of-range code points become U+FFFD, as browsers do.
      if (!Number.isFinite(code) || code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\uFFFD";
      return String.fromCodePoint(code);
    }
    return NAMED_ENTITIES[body] ?? whole;
  });
}

const TAG_NAME = /<\/?([A-Za-z][A-Za-z0-9-]*)/y;

/** Index of the `>` closing the tag that starts at `from`, skipping quoted attribute values; -1 if none. */
function tagEnd(html: string, from: number): number {
  let quote = "";
  for (let i = from; i < html.length; i++) {
    const c = html[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === ">") {
      return i;
    }
  }
  return -1;
}

export function htmlToText(html: string): string {
  const out: string[] = [];
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    if (lt < 0) {
      out.push(decodeEntities(html.slice(i)));
      break;
    }
    if (lt > i) out.push(decodeEntities(html.slice(i, lt)));
    if (html.startsWith("<!--", lt)) {
      const end = html.indexOf("-->", lt + 4);
      i = end < 0 ? html.length : end + 3;
      continue;
    }
    if (html[lt + 1] === "!" || html[lt + 1] === "?") {
      // <!DOCTYPE …>, <![CDATA[…]]>, <?xml …?>: markup, not text.
      const end = html.indexOf(">", lt);
      i = end < 0 ? html.length : end + 1;
      continue;
    }
    TAG_NAME.lastIndex = lt;
    const m = TAG_NAME.exec(html);
    if (!m) {
      out.push("<"); // a lone '<' in text (e.g. "a < b")
      i = lt + 1;
      continue;
    }
    const end = tagEnd(html, lt + m[0].length);
    if (end < 0) break; // an unterminated tag runs to the end of the page
    const name = m[1]!.toLowerCase();
    const closing = html[lt + 1] === "/";
    i = end + 1;
    if (!closing && HIDDEN.has(name) && html[end - 1] !== "/") {
      const close = new RegExp(`</${name}\\s*>`, "gi");
      close.lastIndex = i;
      const found = close.exec(html);
      i = found ? found.index + found[0].length : html.length;
      continue;
    }
    if (BLOCK.has(name)) out.push("\n");
    else if (name === "img" || name === "input") {
      // Alternative text is what a reader of the page is told the image says.
      const alt = /\salt\s*=\s*("([^"]*)"|'([^']*)')/i.exec(html.slice(lt, end));
      if (alt) out.push(` ${decodeEntities(alt[2] ?? alt[3] ?? "")} `);
    }
    // Inline elements (a, b, span, …) add nothing: "foo<b>bar</b>" reads as one word, as in a browser.
  }
  return out
    .join("")
    .split("\n")
    .map((line) => line.replace(/[\s\u00a0]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
