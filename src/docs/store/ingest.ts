import type { Ctx } from "../../core/context";
import { type ExtractStatus, kindOf } from "../extract/extract";
import { enqueueIndex } from "./index-queue";
import { putDocument, type PutDocumentInput, type PutDocumentResult } from "./store";
import { type IndexableDocument, indexDocument } from "./text-index";

/** text, binary, failed: how the document was indexed; pending: queued, not searchable yet. */
export type IndexStatus = ExtractStatus | "pending";

export interface IngestResult extends PutDocumentResult {
  index_status: IndexStatus;
  index_note?: string;
}

/**
 * Content up to this size that is not a PDF is indexed on the request that stores it, so an agent
 * finds its own small note at once; the work is bounded (a linear scan of at most this much text).
 * Anything larger, and every PDF (pdf.js's cost follows the file's structure, not its size), is
 * indexed by the DOC_INDEX queue, off the request.
 */
export const INLINE_INDEX_MAX_BYTES = 64 * 1024;

export const PENDING_NOTE = "stored; indexing runs in the background (index_status says pending until it is done), and search and grep find the document once it is indexed";

export const indexesInline = (doc: Pick<IndexableDocument, "bytes" | "mime" | "path">): boolean => doc.bytes.byteLength <= INLINE_INDEX_MAX_BYTES && kindOf(doc.bytes, doc.mime, doc.path) !== "pdf";

/**
 * The one way new content enters the store (inline add, GitHub import, download, watch):
 * store the bytes, then index what they say, now for small text and on the queue otherwise.
 * Every source calls this, so a document is indexed the same way whichever door it came in by.
 */
export async function ingestDocument(ctx: Ctx, input: PutDocumentInput): Promise<IngestResult> {
  const stored = await putDocument(ctx, input);
  const doc: IndexableDocument = { id: stored.id, path: stored.path, hash: stored.hash, mime: input.mimeType ?? "application/octet-stream", bytes: input.bytes };
  if (indexesInline(doc)) {
    const indexed = await indexDocument(ctx, doc);
    return { ...stored, index_status: indexed.status, ...(indexed.note ? { index_note: indexed.note } : {}) };
  }
  // A failed send leaves the document pending, which is what the index sweep looks for.
  await enqueueIndex(ctx.env, [{ tenant_id: ctx.tenantId, doc_id: stored.id, hash: stored.hash }]);
  return { ...stored, index_status: "pending", index_note: PENDING_NOTE };
}
