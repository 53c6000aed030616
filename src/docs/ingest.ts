import type { Ctx } from "../mcp/context";
import { putDocument, type PutDocumentInput, type PutDocumentResult } from "./store";

/**
 * The one way new content enters the store (inline add, GitHub import, download, watch):
 * store the bytes, then index what they say. Every source calls this, so a document is indexed
 * the same way whichever door it came in by.
 */
export async function ingestDocument(ctx: Ctx, input: PutDocumentInput): Promise<PutDocumentResult> {
  return putDocument(ctx, input);
}
