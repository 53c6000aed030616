/**
 * The `download` execute op (seed 003): fetch a public https URL through publicFetch and store
 * the bytes through ingestDocument, optionally verifying a SHA-256 checksum first.
 */
import { z } from "zod";
import { sha256Hex } from "../../db/ids";
import { boundedJson, firstControl } from "../../core/bounds";
import { excerpt, invalidInput, ToolError } from "../../core/errors";
import { ingestDocument } from "../store/ingest";
import { knownMime } from "../extract/mime";
import { defineOp } from "../shared";
import { checkPublicUrl, publicFetch } from "../../net/public-fetch";
import { MAX_DOCUMENT_BYTES, MAX_LABEL_CHARS, MAX_METADATA_JSON_CHARS, MAX_MIME_CHARS, MAX_PATH_CHARS, MAX_TAG_CHARS, MAX_TAGS, normalizePath } from "../store/store";

export const MAX_URL_CHARS = 4096;
export const MAX_DOWNLOAD_REDIRECTS = 5;
export const DEFAULT_DOWNLOAD_TIMEOUT_MS = 30_000;
export const MAX_DOWNLOAD_TIMEOUT_MS = 120_000;
const MIN_DOWNLOAD_TIMEOUT_MS = 50;

const MIME_RE = /^[\w.+-]+\/[\w.+-]+$/;

const params = z.object({
  url: z.string().min(1).max(MAX_URL_CHARS).describe("The public https URL to fetch. Local, private, link-local and metadata hosts are refused; redirects are followed (at most 5) and re-checked."),
  path: z
    .string()
    .min(1)
    .max(MAX_PATH_CHARS)
    .optional()
    .describe(
      "Where to store the document (also accepted as `name`). Default: the URL's host and path, e.g. example.com/data.csv; a URL ending in '/' is stored as …/index.html. The query string is not part of the default.",
    ),
  checksum: z
    .string()
    .max(7 + 64)
    .optional()
    .describe("Expected SHA-256 of the content, as 'sha256:<64 hex>' or bare 64 hex. Verified before storing; a mismatch stores nothing."),
  mime_type: z
    .string()
    .max(MAX_MIME_CHARS)
    .optional()
    .describe("MIME type to record. Default: the response's Content-Type without parameters, else guessed from the file extension, else application/octet-stream."),
  tags: z.array(z.string().min(1).max(MAX_TAG_CHARS)).max(MAX_TAGS).optional().describe("Tags for the document."),
  metadata: boundedJson(z.record(z.string(), z.unknown()), { maxBytes: MAX_METADATA_JSON_CHARS, maxDepth: 8 })
    .optional()
    .describe("Key-value metadata to record. `source_url` is set to the URL unless given here."),
  collection: z.string().min(1).max(MAX_LABEL_CHARS).optional().describe("Collection to file the document under."),
  snapshot_label: z.string().min(1).max(MAX_LABEL_CHARS).optional().describe("Record a snapshot with this label holding the downloaded document."),
  post_index: z
    .boolean()
    .default(true)
    .describe("Index the content after storing it (default true). Every stored document is indexed (small text at once, the rest in the background), so false is refused."),
  timeout_ms: z
    .number()
    .int()
    .min(MIN_DOWNLOAD_TIMEOUT_MS)
    .max(MAX_DOWNLOAD_TIMEOUT_MS)
    .default(DEFAULT_DOWNLOAD_TIMEOUT_MS)
    .describe(`Deadline for the whole download in milliseconds (DNS checks, redirects and body), default ${DEFAULT_DOWNLOAD_TIMEOUT_MS}, at most ${MAX_DOWNLOAD_TIMEOUT_MS}.`),
});

/** 'sha256:<hex>' or bare hex to the lowercase digest; anything else is refused before any fetch. */
export function parseChecksum(raw: string): string {
  const m = /^(?:([a-z0-9-]+):)?([0-9a-f]+)$/i.exec(raw.trim());
  const algorithm = (m?.[1] ?? "sha256").toLowerCase().replace("sha-256", "sha256");
  if (!m || algorithm !== "sha256" || m[2]!.length !== 64) {
    throw invalidInput(`checksum '${excerpt(raw)}' is not a SHA-256 digest`, "Pass 'sha256:' followed by 64 hex characters, or the 64 hex characters alone; other algorithms are not supported.");
  }
  return m[2]!.toLowerCase();
}

/** host + path of the URL, segments percent-decoded where that stays one plain segment; '/' at the end means index.html. */
export function pathFromUrl(url: URL): string {
  const segments = url.pathname.split("/").filter((s) => s !== "");
  const decoded = segments.map((s) => {
    let d: string;
    try {
      d = decodeURIComponent(s);
    } catch {
      return s;
    }
    // A decoded segment that would split, climb or carry control characters keeps its encoded form.
    return d === "" || d === "." || d === ".." || /[/\\]/.test(d) || firstControl(d, true) >= 0 ? s : d;
  });
  if (url.pathname.endsWith("/")) decoded.push("index.html");
  return normalizePath([url.host, ...decoded].join("/"));
}

/** The caller's type, else the server's, else the stored name's extension, else the final URL's (a redirect often lands on the real file name). */
function mimeFor(given: string | undefined, contentType: string | null, path: string, finalUrl: string): string {
  if (given !== undefined) return given;
  const fromHeader = contentType?.split(";")[0]!.trim().toLowerCase();
  if (fromHeader && MIME_RE.test(fromHeader) && fromHeader.length <= MAX_MIME_CHARS) return fromHeader;
  return knownMime(path) ?? knownMime(new URL(finalUrl).pathname) ?? "application/octet-stream";
}

export const download = defineOp({
  name: "download",
  category: "execute",
  description:
    "Download a public https URL and store it as a document (content-addressed, deduplicated), optionally verifying a SHA-256 checksum first. Returns {url, final_url, path, hash, size, mime_type, bytes_stored, bytes_deduped, checksum_verified}.",
  params,
  normalize(raw) {
    const out = { ...raw };
    if (out.url === undefined || out.url === null || out.url === "") {
      throw invalidInput("download requires 'url'.", "Pass {url: 'https://example.com/data.csv'}; to store inline content use 'add' with {name, content}.");
    }
    if ("content" in out) {
      throw invalidInput("download fetches 'url'; it takes no 'content'.", "To store inline content use 'add' with {name, content}.");
    }
    if (out.name !== undefined) {
      if (out.path !== undefined && out.path !== out.name) {
        throw invalidInput("download got both 'name' and 'path' with different values.", "Pass one of them: they both say where the document is stored.");
      }
      out.path = out.name;
      delete out.name;
    }
    return out;
  },
  async run(ctx, p) {
    // Everything checkable without the network is checked first: bad input fetches nothing and stores nothing.
    if (!p.post_index) {
      throw invalidInput("post_index false is not supported: every stored document is indexed.", "Leave post_index out (or pass true); delete the document afterwards if it should not be searchable.");
    }
    const url = checkPublicUrl(p.url);
    const expected = p.checksum === undefined ? null : parseChecksum(p.checksum);
    const path = p.path !== undefined ? normalizePath(p.path) : pathFromUrl(url);
    if (p.mime_type !== undefined && !MIME_RE.test(p.mime_type)) {
      throw invalidInput(`mime_type '${excerpt(p.mime_type)}' is not a MIME type`, "Pass e.g. 'text/csv', or leave it out to use the server's Content-Type.");
    }

    const got = await publicFetch(url.href, { maxBytes: MAX_DOCUMENT_BYTES, timeoutMs: p.timeout_ms, maxRedirects: MAX_DOWNLOAD_REDIRECTS });

    if (expected !== null) {
      const actual = await sha256Hex(got.bytes);
      if (actual !== expected) {
        throw new ToolError("checksum_mismatch", `The content of '${excerpt(got.finalUrl)}' has SHA-256 ${actual}, not the expected ${expected}; nothing was stored.`, {
          hint: "Check the checksum against its source; the file may have changed or the download may have been tampered with.",
        });
      }
    }
    const mime = mimeFor(p.mime_type, got.contentType, path, got.finalUrl);
    const stored = await ingestDocument(ctx, {
      path,
      bytes: got.bytes,
      mimeType: mime,
      tags: p.tags,
      metadata: { source_url: url.href, ...p.metadata },
      collection: p.collection,
      snapshotLabel: p.snapshot_label,
    });
    return {
      url: url.href,
      final_url: got.finalUrl,
      path: stored.path,
      hash: stored.hash,
      size: stored.size,
      mime_type: mime,
      bytes_stored: stored.bytes_stored,
      bytes_deduped: stored.bytes_deduped,
      checksum_verified: expected !== null,
      index_status: stored.index_status,
      ...(stored.index_note ? { index_note: stored.index_note } : {}),
      ...(stored.snapshot_id !== null ? { snapshot_id: stored.snapshot_id } : {}),
    };
  },
});
