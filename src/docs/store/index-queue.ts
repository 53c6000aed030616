/**
 * Indexing stored documents off the request: the DOC_INDEX queue's messages name a version (its
 * id and content hash), and the consumer indexes it with retries and a bound on tries. The sweep
 * finds versions left pending past a grace time (a worker killed between storing and indexing, a
 * message lost) and sends them again; indexing is idempotent per (version, content), so a
 * duplicate message costs a lookup.
 */
import { and, asc, eq, isNull, lt, lte, sql } from "drizzle-orm";
import { dbOf } from "../../db/client";
import { documents } from "../../db/schema";
import { iso, systemClock } from "../../core/time";
import type { Env } from "../../env";
import type { Ctx } from "../../core/context";
import type { Extraction } from "../extract/extract";
import { getDocument } from "./store";
import { indexDocument, recordIndex, storeExtraction } from "./text-index";

export interface DocIndexMessage {
  tenant_id: string;
  /** documents.id of the version to index. */
  doc_id: string;
  /** Its content hash: a message for content the version no longer has is dropped. */
  hash: string;
}

/** The queue's name in wrangler.toml; the Worker's queue handler dispatches on it. */
export const DOC_INDEX_QUEUE = "agent-ledger-doc-index";
/** Tries per version; the next delivery marks it failed instead of trying again. */
export const MAX_INDEX_ATTEMPTS = 3;
/** A version pending this long is taken for lost (queue retries back off to about 5 minutes in all). */
export const INDEX_GRACE_MS = 15 * 60 * 1000;
/** Versions re-sent per sweep run. */
const SWEEP_LIMIT = 200;
/** A batch starts no new message after this long; the rest are delivered again at once. */
const BATCH_BUDGET_MS = 60_000;
/** Messages per sendBatch (the platform's limit). */
const SEND_BATCH = 100;

export const GAVE_UP_NOTE = `indexing did not finish in ${MAX_INDEX_ATTEMPTS} tries (the content may be too costly to extract); stored and retrievable, not text-indexed (found by path and name only)`;

/** Sends index messages; false (and a log line) when the queue could not take them: the sweep sends them later. */
export async function enqueueIndex(env: Env, messages: DocIndexMessage[]): Promise<boolean> {
  try {
    for (let i = 0; i < messages.length; i += SEND_BATCH) {
      await env.DOC_INDEX.sendBatch(messages.slice(i, i + SEND_BATCH).map((body) => ({ body, contentType: "json" as const })));
    }
    return true;
  } catch (err) {
    console.error(`[docs] could not queue ${messages.length} document(s) for indexing; the index sweep will: ${String(err)}`);
    return false;
  }
}

const isMessage = (b: unknown): b is DocIndexMessage => {
  const m = b as Partial<DocIndexMessage> | null;
  return typeof m === "object" && m !== null && typeof m.tenant_id === "string" && typeof m.doc_id === "string" && typeof m.hash === "string" && /^[0-9a-f]{64}$/.test(m.hash);
};

/** Indexing touches no actor's rows: the context names no actor. */
function indexerCtx(env: Env, tenantId: string, exec: Pick<ExecutionContext, "waitUntil">): Ctx {
  return {
    env,
    d1: env.DB,
    tenantId,
    actorId: "",
    actorName: "docs-indexer",
    operator: false,
    sessionId: "",
    clock: systemClock,
    waitUntil: (p) => exec.waitUntil(p),
  };
}

export type IndexOutcome = "indexed" | "gave_up" | "not_pending";

/**
 * Indexes the version a message names, if it is still live with that content and not indexed yet.
 * Each try is counted first, so a try that kills the worker is counted too; past the limit the
 * version is recorded as failed (found by path and name) rather than tried again.
 */
export async function indexQueued(env: Env, exec: Pick<ExecutionContext, "waitUntil">, m: DocIndexMessage): Promise<IndexOutcome> {
  const claim = await dbOf({ d1: env.DB })
    .update(documents)
    .set({ indexAttempts: sql`${documents.indexAttempts} + 1` })
    .where(and(eq(documents.tenantId, m.tenant_id), eq(documents.id, m.doc_id), eq(documents.hash, m.hash), isNull(documents.deletedAt), isNull(documents.indexedAt)))
    .returning({ path: documents.path, mime_type: documents.mimeType, index_attempts: documents.indexAttempts })
    .get();
  if (!claim) return "not_pending";
  const ctx = indexerCtx(env, m.tenant_id, exec);
  const doc = { id: m.doc_id, path: claim.path, hash: m.hash, mime: claim.mime_type };
  if (claim.index_attempts > MAX_INDEX_ATTEMPTS) {
    const failed: Extraction = { status: "failed", extractor: "none", text: null, truncated: false, note: GAVE_UP_NOTE };
    await storeExtraction(ctx, m.hash, failed);
    await recordIndex(ctx, doc, failed);
    return "gave_up";
  }
  const { bytes } = await getDocument(ctx, { hash: m.hash });
  await indexDocument(ctx, { ...doc, bytes });
  return "indexed";
}

/** 10 s, 20 s, 40 s, … at most 5 minutes. */
export const retryDelaySeconds = (attempts: number) => Math.min(300, 10 * 2 ** Math.max(0, attempts - 1));

/** The queue consumer: one message at a time, within the batch's budget; a failure is retried with backoff. */
export async function handleIndexBatch(batch: MessageBatch<unknown>, env: Env, exec: Pick<ExecutionContext, "waitUntil">): Promise<void> {
  const started = Date.now();
  for (const msg of batch.messages) {
    if (!isMessage(msg.body)) {
      console.error(`[docs] dropped a malformed index message ${msg.id}`);
      msg.ack();
      continue;
    }
    if (Date.now() - started > BATCH_BUDGET_MS) {
      msg.retry({ delaySeconds: 0 });
      continue;
    }
    try {
      const outcome = await indexQueued(env, exec, msg.body);
      if (outcome === "gave_up") console.warn(`[docs] gave up indexing document ${msg.body.doc_id} after ${MAX_INDEX_ATTEMPTS} tries`);
      msg.ack();
    } catch (err) {
      console.error(`[docs] indexing document ${msg.body.doc_id} failed (delivery ${msg.attempts}): ${err instanceof Error ? err.message : String(err)}`);
      msg.retry({ delaySeconds: retryDelaySeconds(msg.attempts) });
    }
  }
}

/**
 * Sends again the live versions still pending past the grace time, oldest first, that have tries
 * left (one more than the limit, so the try that marks a version failed is sent too).
 */
export async function sweepPendingIndexes(env: Env, now: Date, limit = SWEEP_LIMIT): Promise<string> {
  // The partial index documents_index_pending (modified_at, live and unindexed) serves this scan.
  const pending: DocIndexMessage[] = await dbOf({ d1: env.DB })
    .select({ tenant_id: documents.tenantId, doc_id: documents.id, hash: documents.hash })
    .from(documents)
    .where(and(isNull(documents.deletedAt), isNull(documents.indexedAt), lt(documents.modifiedAt, iso(new Date(now.getTime() - INDEX_GRACE_MS))), lte(documents.indexAttempts, MAX_INDEX_ATTEMPTS)))
    .orderBy(asc(documents.modifiedAt))
    .limit(limit)
    .all();
  if (pending.length === 0) return "no document left pending";
  if (!(await enqueueIndex(env, pending))) throw new Error(`${pending.length} pending document(s) could not be queued`);
  return `${pending.length} document(s) pending past ${INDEX_GRACE_MS / 60_000} minutes queued again`;
}
