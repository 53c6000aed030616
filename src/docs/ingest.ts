import type { Ctx } from "../mcp/context";
import { putDocument, type PutDocumentInput, type PutDocumentResult } from "./store";
import { indexGraph } from "./graph";
import { indexText } from "./text-index";

export interface IngestResult extends PutDocumentResult {
  /** text: extracted and indexed; binary: stored, not text-indexed; failed: the extractor refused it. */
  index_status: "text" | "binary" | "failed";
  index_note?: string;
}

/**
 * The one way new content enters the store (inline add, GitHub import, download, watch):
 * store the bytes, then index what they say. Every source calls this, so a document is indexed
 * the same way whichever door it came in by.
 */
export async function ingestDocument(ctx: Ctx, input: PutDocumentInput): Promise<IngestResult> {
  const stored = await putDocument(ctx, input);
  const mime = input.mimeType ?? "application/octet-stream";
  const indexed = await indexText(ctx, { id: stored.id, path: stored.path, hash: stored.hash, mime, bytes: input.bytes });
  const graph = await indexGraph(ctx, { id: stored.id, path: stored.path, hash: stored.hash, mime, text: indexed.text });
  const note = [indexed.note, graph.note].filter(Boolean).join("; ");
  return { ...stored, index_status: indexed.status, ...(note ? { index_note: note } : {}) };
}
