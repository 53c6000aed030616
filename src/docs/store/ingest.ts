import type { Ctx } from "../../core/context";
import { type Extraction, extractText, type ExtractStatus, kindOf } from "../extract/extract";
import { enqueueIndex } from "./index-queue";
import { preparePut, type PreparedPut, type PutDocumentInput, type PutDocumentResult, stagePuts } from "./store";
import { afterIndex, extractionStatement, type IndexableDocument, type IndexStatements, indexStatements, type StoredExtraction, storedExtractions } from "./text-index";

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

/**
 * Statements per D1 batch when a run of documents is committed: a run's documents go in as few
 * batches as this allows, each document's statements whole in one batch (one alone may exceed it).
 */
export const INGEST_BATCH_STATEMENTS = 100;

export const PENDING_NOTE = "stored; indexing runs in the background (index_status says pending until it is done), and search and grep find the document once it is indexed";

export const indexesInline = (doc: Pick<IndexableDocument, "bytes" | "mime" | "path">): boolean => doc.bytes.byteLength <= INLINE_INDEX_MAX_BYTES && kindOf(doc.bytes, doc.mime, doc.path) !== "pdf";

/**
 * The one way new content enters the store (inline add, GitHub import, download, watch):
 * store the bytes, then index what they say, now for small text and on the queue otherwise.
 * Every source calls this, so a document is indexed the same way whichever door it came in by.
 */
export async function ingestDocument(ctx: Ctx, input: PutDocumentInput): Promise<IngestResult> {
  const [one] = await ingestDocuments(ctx, [input], true);
  if (!one!.ok) throw one!.error;
  return one!.result;
}

export type Ingested = { ok: true; result: IngestResult } | { ok: false; error: unknown };

/**
 * Ingests a run of documents with the same results as ingesting them one after another (ids,
 * hashes, dedupe, versions, index, graph), in a few round trips: one read of what the store
 * holds, the run's new chunks to R2, one read of stored extractions, then each document's put
 * and index statements together, committed in batches of about INGEST_BATCH_STATEMENTS. One
 * outcome per document, in order; a refused document stores nothing. With `stopAtFailure` the
 * run ends at the first failure and nothing after it is written (the outcomes are that long).
 * A document answered ok is committed.
 */
export async function ingestDocuments(ctx: Ctx, inputs: readonly PutDocumentInput[], stopAtFailure: boolean): Promise<Ingested[]> {
  const out: Ingested[] = [];
  const preps: { at: number; prep: PreparedPut; mime: string }[] = [];
  for (const input of inputs) {
    try {
      preps.push({ at: out.length, prep: await preparePut(input), mime: input.mimeType ?? "application/octet-stream" });
      out.push({ ok: false, error: null }); // filled in below
    } catch (error) {
      out.push({ ok: false, error });
      if (stopAtFailure) break;
    }
  }
  const staged = await stagePuts(
    ctx,
    preps.map((p) => p.prep),
    stopAtFailure,
  );
  // A put refused while staging ends a stopping run there: the documents after it are not run.
  const refused = stopAtFailure ? staged.findIndex((s) => !s.ok) : -1;
  const end = refused >= 0 ? refused + 1 : staged.length;
  if (refused >= 0) out.length = preps[refused]!.at + 1;

  // Each document's statements: its put's, then (small text) its extraction's and index's.
  const known = await storedExtractions(
    ctx,
    preps.slice(0, end).map((p) => p.prep.hash),
  );
  const made = new Map<string, Extraction>();
  const units: { at: number; statements: D1PreparedStatement[]; result: IngestResult; index: IndexStatements | null; queue: boolean }[] = [];
  for (let i = 0; i < end; i++) {
    const s = staged[i]!;
    const { at, prep, mime } = preps[i]!;
    if (!s.ok) {
      out[at] = { ok: false, error: s.error };
      continue;
    }
    const put = s.put.result;
    const doc: IndexableDocument = { id: put.id, path: put.path, hash: put.hash, mime, bytes: prep.bytes };
    if (!indexesInline(doc)) {
      units.push({ at, statements: s.put.statements, result: { ...put, index_status: "pending", index_note: PENDING_NOTE }, index: null, queue: true });
      continue;
    }
    const statements = [...s.put.statements];
    // Made once per content hash; a later document of the run with the same bytes takes it from
    // here, and writes it too (a no-op after the first), in case the first one's batch failed.
    let extraction: StoredExtraction | undefined = known.get(doc.hash);
    if (!extraction) {
      const fresh = await extractText(doc.bytes, doc.mime, doc.path);
      made.set(doc.hash, fresh);
      known.set(doc.hash, fresh);
      extraction = fresh;
    }
    const fresh = made.get(doc.hash);
    if (fresh) statements.push(extractionStatement(ctx, doc.hash, fresh));
    const index = await indexStatements(ctx, doc, extraction);
    statements.push(...index.statements);
    const indexed = index.result;
    units.push({ at, statements, result: { ...put, index_status: indexed.status, ...(indexed.note ? { index_note: indexed.note } : {}) }, index, queue: false });
  }

  const committed: typeof units = [];
  for (let i = 0; i < units.length;) {
    let j = i + 1;
    let size = units[i]!.statements.length;
    while (j < units.length && size + units[j]!.statements.length <= INGEST_BATCH_STATEMENTS) size += units[j++]!.statements.length;
    const batch = units.slice(i, j);
    try {
      await ctx.d1.batch(batch.flatMap((u) => u.statements));
      committed.push(...batch);
      for (const u of batch) out[u.at] = { ok: true, result: u.result };
    } catch (error) {
      for (const u of batch) out[u.at] = { ok: false, error };
      if (stopAtFailure) {
        out.length = batch[0]!.at + 1;
        break;
      }
    }
    i = j;
  }

  // A failed send leaves the document pending, which is what the index sweep looks for.
  const queued = committed.filter((u) => u.queue);
  if (queued.length > 0)
    await enqueueIndex(
      ctx.env,
      queued.map((u) => ({ tenant_id: ctx.tenantId, doc_id: u.result.id, hash: u.result.hash })),
    );
  const indexed = committed.filter((u) => u.index !== null);
  afterIndex(
    ctx,
    indexed.flatMap((u) => (u.index!.embed ? [u.index!.embed] : [])),
    [...new Set(indexed.map((u) => u.result.path))],
  );
  return out;
}
