import { z } from "zod";
import { ToolError, invalidInput, notFound, excerpt } from "../../core/errors";
import type { Ctx } from "../../core/context";
import { defineOp } from "../shared";
import { relatedDocuments } from "../graph/graph";
import { noLocalFilesystem } from "../store/local-paths";
import { getDocument } from "../store/store";
import { type DocRow, documentAtPath, documentsByHash, documentsNamed, documentView, hashField, pathField } from "./model";

/** The most content one get returns inline; bigger documents come back cut, and say so. */
export const MAX_CONTENT_BYTES = 1024 * 1024;

const params = z.object({
  hash: hashField.optional().describe("Document content hash (full, or an unambiguous prefix of at least 8 characters)."),
  name: pathField.optional().describe("Document path or file name ('path' is accepted as an alias)."),
  graph: z.boolean().default(false).describe("Include related documents from the knowledge graph (links and imports, both directions)."),
  depth: z.number().int().min(1).max(5).default(2).describe("Graph traversal depth when graph is true (1–5, default 2)."),
  include_content: z.boolean().default(false).describe("Include the content (default false, as in the seed): text as `content`, other bytes as `content_base64`."),
  max_bytes: z.number().int().min(1).max(MAX_CONTENT_BYTES).default(MAX_CONTENT_BYTES).describe("Most content bytes to return (default and cap 1 MiB)."),
});

/** A document by path, or by file name when exactly one live document has it. */
async function byName(ctx: Ctx, name: string): Promise<DocRow> {
  const path = name.replace(/^\/+/, "");
  const exact = await documentAtPath(ctx, path);
  if (exact) return exact;
  const named = await documentsNamed(ctx, path, 6);
  if (named.length === 1) return named[0]!;
  if (named.length > 1) {
    throw new ToolError("ambiguous_name", `${named.length > 5 ? "More than 5" : named.length} documents are named '${excerpt(path)}'.`, {
      hint: `Pass the full path, e.g. ${named
        .slice(0, 5)
        .map((r) => `'${r.path}'`)
        .join(", ")}.`,
    });
  }
  throw notFound("document", excerpt(path), "Check the path with list (paths_only: true), or get it by hash.");
}

async function byHash(ctx: Ctx, hash: string): Promise<DocRow> {
  const rows = await documentsByHash(ctx, hash);
  const distinct = new Set(rows.map((r) => r.hash));
  if (distinct.size > 1) {
    throw new ToolError("ambiguous_hash", `The prefix '${excerpt(hash)}' matches ${distinct.size} different documents.`, {
      hint: "Pass more characters of the hash (the full 64 are never ambiguous).",
    });
  }
  if (rows.length === 0) throw notFound("document with hash", excerpt(hash), "Search or list the store to find the document's hash.");
  return rows[0]!;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function contentOf(bytes: Uint8Array, max: number) {
  const cut = bytes.byteLength > max;
  const head = cut ? bytes.subarray(0, max) : bytes;
  try {
    // A cut may split a character: decode leniently at the end only.
    const text = cut ? new TextDecoder().decode(head) : utf8.decode(head);
    if (text.includes("\u0000")) throw new Error("binary");
    return { content: text, content_truncated: cut, content_bytes: bytes.byteLength, content_max_bytes: max };
  } catch {
    let b64 = "";
    for (let i = 0; i < head.length; i += 0x8000) b64 += String.fromCharCode(...head.subarray(i, i + 0x8000));
    return { content_base64: btoa(b64), content_truncated: cut, content_bytes: bytes.byteLength, content_max_bytes: max };
  }
}

export const getOp = defineOp({
  name: "get",
  category: "query",
  description: "Retrieve one document by hash or name/path: its metadata, its content with include_content: true, and optionally related documents from the knowledge graph.",
  params,
  normalize(raw) {
    const p = { ...raw };
    if (p.path !== undefined && p.name === undefined) {
      p.name = p.path;
      delete p.path;
    }
    if (p.outputPath !== undefined || p.output_path !== undefined) {
      throw noLocalFilesystem(
        "get cannot write to a file (outputPath)",
        "Pass include_content: true to receive the content in the answer and write it yourself, or execute 'restore' with repo to commit documents to a GitHub branch.",
      );
    }
    // A lookup key that is null (a $prev reference that missed) names nothing: the seed's refusal below says so.
    for (const key of ["hash", "name"]) if (p[key] === null) delete p[key];
    if (p.hash === undefined && p.name === undefined) {
      const hint =
        p.query !== undefined
          ? "To find a document by text, run a 'search' step first and pass \"$prev.results[0].hash\" as hash."
          : p.id !== undefined
            ? "'id' is not a get parameter: pass the document's content hash as 'hash' (search and list return it)."
            : 'Pass e.g. {"hash": "e3b0c442…"} or {"name": "docs/design.md"}.';
      throw invalidInput("Provide 'hash' or 'name' for get.", hint);
    }
    return p;
  },
  async run(ctx, p) {
    const row = p.hash ? await byHash(ctx, p.hash) : await byName(ctx, p.name!);
    const view = documentView(row);
    const out: Record<string, unknown> = { ...view, compressed: false, graph_enabled: p.graph };
    if (p.include_content) {
      const doc = await getDocument(ctx, { hash: row.hash });
      Object.assign(out, contentOf(doc.bytes, p.max_bytes));
    }
    if (p.graph) out.related = await relatedDocuments(ctx, row.hash, p.depth);
    return out;
  },
});
