/**
 * Indexing off the request: what add stores beyond small text answers at once as pending and is
 * indexed by the DOC_INDEX queue's consumer (driven here through the worker's own queue() with the
 * messages the add sent, and once through the real local queue); retries and giving up; stale and
 * duplicate messages; and the cron sweep that finishes a document a crash left unindexed.
 */
import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FREQUENT_CRON } from "../../../src/cron/maintenance";
import { DOC_INDEX_QUEUE, type DocIndexMessage, GAVE_UP_NOTE, INDEX_GRACE_MS, MAX_INDEX_ATTEMPTS, retryDelaySeconds } from "../../../src/docs/store/index-queue";
import { INLINE_INDEX_MAX_BYTES, PENDING_NOTE } from "../../../src/docs/store/ingest";
import { chunkKey, putDocument } from "../../../src/docs/store/store";
import type { Env } from "../../../src/env";
import worker from "../../../src/index";
import type { Ctx } from "../../../src/core/context";
import { buildPdf, deflatePadded, textContent } from "../../fixtures/pdf";
import { makeCtx, ok, seedIdentity, type Structured, TestClock } from "../../support/helpers";

const enc = (s: string) => new TextEncoder().encode(s);
const base64 = (bytes: Uint8Array) => {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
};
const q = (...steps: unknown[]) => ({ steps });
const x = (...operations: unknown[]) => ({ operations });
const add = (name: string, content: string) => ({ op: "add", params: { name, content } });

async function freshCtx(clock = new TestClock()): Promise<Ctx> {
  return makeCtx(await seedIdentity(`docs-q-${crypto.randomUUID().slice(0, 8)}`, "writer"), clock);
}

/** Markdown of `bytes` bytes (over the inline limit when asked) with a link and a rare word. */
const bigMarkdown = (word: string, bytes = INLINE_INDEX_MAX_BYTES + 10_000) =>
  `# Big ${word}\nSee [the guide](guide.md).\n${"ordinary filler words for the index\n".repeat(Math.ceil(bytes / 36))}The ${word} is here.\n`;

/** Holds what the app sends to the queue instead of letting the local queue deliver it. */
let held: DocIndexMessage[] = [];
function holdQueue() {
  held = [];
  vi.spyOn(env.DOC_INDEX, "sendBatch").mockImplementation(async (messages) => {
    // The generated binding types the body unknown (wrangler.toml does not say); the app sends DocIndexMessage.
    for (const m of messages) held.push(m.body as DocIndexMessage);
    return { metadata: { metrics: { backlogCount: held.length, backlogBytes: 0 } } };
  });
}
afterEach(() => vi.restoreAllMocks());

/** Delivers messages to the worker's queue() as the runtime would, and returns what it acked and retried. */
async function deliver(bodies: unknown[], attempts = 1) {
  const batch = createMessageBatch(
    DOC_INDEX_QUEUE,
    bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts, body })),
  );
  const ectx = createExecutionContext();
  await worker.queue!(batch, env as unknown as Env, ectx);
  return getQueueResult(batch, ectx);
}

const docRow = (ctx: Ctx, path: string) =>
  env.DB.prepare(`SELECT id, hash, indexed_at, index_attempts FROM documents WHERE tenant_id = ? AND path = ? AND deleted_at IS NULL`)
    .bind(ctx.tenantId, path)
    .first<{ id: string; hash: string; indexed_at: string | null; index_attempts: number }>();

const getDoc = async (ctx: Ctx, name: string): Promise<Structured> => await ok(ctx, "docs_query", q({ op: "get", params: { name, include_content: false } }));
const searchPaths = async (ctx: Ctx, query: string): Promise<string[]> => (await ok(ctx, "docs_query", q({ op: "search", params: { query, type: "keyword" } }))).results.map((r: Structured) => r.path);
const grepPaths = async (ctx: Ctx, pattern: string): Promise<string[]> =>
  (await ok(ctx, "docs_query", q({ op: "grep", params: { pattern, files_with_matches: true } }))).files.map((f: Structured) => f.path);

describe("docs_execute", () => {
  describe("add: indexing off the request", () => {
    it("stores large text and PDFs at once as pending, indexes small text inline, and the queue finishes the rest", async () => {
      holdQueue();
      const ctx = await freshCtx();
      const added = await ok(
        ctx,
        "docs_execute",
        x(add("notes/small.md", "# Small\nThe quokka note."), add("notes/big.md", bigMarkdown("wombat")), {
          op: "add",
          params: { name: "papers/scan.pdf", content_base64: btoa("%PDF-1.4\nthis is not really a pdf") },
        }),
      );
      const [small, big, pdf] = added.results.map((r: Structured) => r.data);
      expect(small.index_status).toBe("text");
      expect(big).toMatchObject({ index_status: "pending", index_note: PENDING_NOTE });
      expect(pdf).toMatchObject({ index_status: "pending" });
      const bigRow = (await docRow(ctx, "notes/big.md"))!;
      const pdfRow = (await docRow(ctx, "papers/scan.pdf"))!;
      expect(held).toEqual([
        { tenant_id: ctx.tenantId, doc_id: bigRow.id, hash: bigRow.hash },
        { tenant_id: ctx.tenantId, doc_id: pdfRow.id, hash: pdfRow.hash },
      ]);
      // Nothing of the big document was extracted on the request: it is pending, and not found yet.
      expect(bigRow.indexed_at).toBeNull();
      expect(await getDoc(ctx, "notes/big.md")).toMatchObject({ index_status: "pending", index_note: PENDING_NOTE });
      expect((await getDoc(ctx, "notes/small.md")).index_status).toBe("text");
      expect(await searchPaths(ctx, "wombat")).toEqual([]);
      expect(await grepPaths(ctx, "wombat")).toEqual([]);
      expect(await searchPaths(ctx, "quokka")).toEqual(["notes/small.md"]);
      const listed = (await ok(ctx, "docs_query", q({ op: "list", params: { sort_by: "name", sort_order: "asc" } }))).documents as Structured[];
      expect(listed.map((d) => [d.path, d.index_status])).toEqual([
        ["notes/big.md", "pending"],
        ["papers/scan.pdf", "pending"],
        ["notes/small.md", "text"],
      ]);

      expect((await ok(ctx, "docs_query", q({ op: "status", params: { detailed: true } }))).detailed).toMatchObject({ text_indexed: 1, pending_index: 2 });

      const result = await deliver(held);
      expect(result.explicitAcks.sort()).toEqual(["m0", "m1"]);
      expect(result.retryMessages).toEqual([]);
      expect(await getDoc(ctx, "notes/big.md")).toMatchObject({ index_status: "text" });
      expect((await getDoc(ctx, "notes/big.md")).index_note).toBeUndefined();
      expect(await searchPaths(ctx, "wombat")).toEqual(["notes/big.md"]);
      expect(await grepPaths(ctx, "wombat")).toEqual(["notes/big.md"]);
      // The graph was built from the queued document too.
      const edges = await env.DB.prepare(`SELECT target FROM doc_graph_edges WHERE tenant_id = ? AND src_path = 'notes/big.md' AND relation = 'LINKS_TO'`).bind(ctx.tenantId).all<{ target: string }>();
      expect(edges.results.map((e) => e.target)).toContain("notes/guide.md");
      expect((await ok(ctx, "docs_query", q({ op: "status", params: { detailed: true } }))).detailed).toMatchObject({ text_indexed: 2, binary: 1, pending_index: 0 });
      const scanned = await getDoc(ctx, "papers/scan.pdf");
      expect(scanned.index_status).toBe("failed");
      expect(scanned.index_note).toMatch(/PDF could not be read/);
    });

    // Before: 18.8 s for the markdown, ~35 s for the source, 20 s for the PDF, and another tenant waited behind each.
    it("stores hostile markdown, source and a PDF bomb at once, indexes each within a second, and another tenant's call is not delayed", async () => {
      holdQueue();
      const ctx = await freshCtx();
      const other = await freshCtx();
      const pdf = buildPdf(await deflatePadded(textContent(["Hello from a bomb"]), 100 * 1024 * 1024), { pages: 16, flate: true });
      const hostile = [
        add("hostile.md", `${"[".repeat(128 * 1024)}\nSee [the guide](guide.md).\n`),
        add("src/imports.ts", `import b from "./b";\n${"import a\n".repeat(20_000)}`),
        { op: "add", params: { name: "bomb.pdf", content_base64: base64(pdf) } },
      ];
      for (const op of hostile) {
        const started = Date.now();
        let otherMs = 0;
        const [added] = await Promise.all([
          ok(ctx, "docs_execute", x(op)),
          (async () => {
            const t = Date.now();
            await ok(other, "whoami", {});
            otherMs = Date.now() - t;
          })(),
        ]);
        expect(Date.now() - started, op.params.name).toBeLessThan(1000);
        expect(otherMs, `another tenant's call during ${op.params.name}`).toBeLessThan(1000);
        expect(added.results[0].data.index_status).toBe("pending");
      }
      expect(held).toHaveLength(3);
      // The consumer's work on each is bounded too: a second at most, and each says how it ended.
      for (const m of held) {
        const started = Date.now();
        expect((await deliver([m])).explicitAcks).toHaveLength(1);
        expect(Date.now() - started).toBeLessThan(1000);
      }
      expect((await getDoc(ctx, "hostile.md")).index_status).toBe("text");
      expect((await getDoc(ctx, "src/imports.ts")).index_status).toBe("text");
      expect(await grepPaths(ctx, "the guide")).toEqual(["hostile.md"]);
      const bomb = await getDoc(ctx, "bomb.pdf");
      expect(bomb.index_status).toBe("failed");
      expect(bomb.index_note).toContain("inflates past");
    });

    it("runs on the real local queue: the document becomes searchable without anyone calling the consumer", async () => {
      const ctx = await freshCtx();
      const added = await ok(ctx, "docs_execute", x(add("real/queue.md", bigMarkdown("platypus"))));
      expect(added.results[0].data.index_status).toBe("pending");
      await vi.waitFor(async () => expect((await getDoc(ctx, "real/queue.md")).index_status).toBe("text"), { timeout: 20_000, interval: 250 });
      expect(await searchPaths(ctx, "platypus")).toEqual(["real/queue.md"]);
    });
  });
});

describe("the queue consumer", () => {
  it("drops a duplicate, a message for content the path no longer has, and a malformed one, doing no work", async () => {
    holdQueue();
    const ctx = await freshCtx();
    await ok(ctx, "docs_execute", x(add("a.md", bigMarkdown("echidna"))));
    const first = held[0]!;
    expect((await deliver([first])).explicitAcks).toEqual(["m0"]);
    expect((await docRow(ctx, "a.md"))!.index_attempts).toBe(1);
    // Delivered again (the queue delivers at least once): acked, not indexed a second time.
    expect((await deliver([first])).explicitAcks).toEqual(["m0"]);
    expect((await docRow(ctx, "a.md"))!.index_attempts).toBe(1);

    await ok(ctx, "docs_execute", x(add("b.md", bigMarkdown("bilby"))));
    const stale = held[1]!;
    await ok(ctx, "docs_execute", x(add("b.md", "# B\nnow small")));
    const r = await deliver([stale, { tenant_id: ctx.tenantId, doc_id: "x", hash: "not-a-hash" }, null]);
    expect(r.explicitAcks.sort()).toEqual(["m0", "m1", "m2"]);
    expect(await searchPaths(ctx, "bilby")).toEqual([]);
    const closed = await env.DB.prepare(`SELECT COUNT(*) AS n FROM doc_search WHERE tenant_id = ? AND doc_id = ?`).bind(ctx.tenantId, stale.doc_id).first<{ n: number }>();
    expect(closed!.n).toBe(0);
  });

  it("retries a failing document with backoff, then marks it failed instead of trying for ever", async () => {
    holdQueue();
    const ctx = await freshCtx();
    await ok(ctx, "docs_execute", x(add("lost.md", bigMarkdown("dingo"))));
    const msg = held[0]!;
    // Its bytes vanish from R2, so every try fails reading them.
    const chunks = await env.DB.prepare(`SELECT chunk_hash FROM document_chunks WHERE tenant_id = ? AND doc_hash = ?`).bind(ctx.tenantId, msg.hash).all<{ chunk_hash: string }>();
    await env.BLOBS.delete(chunks.results.map((c) => chunkKey(ctx.tenantId, c.chunk_hash)));
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    for (let attempt = 1; attempt <= MAX_INDEX_ATTEMPTS; attempt++) {
      const r = await deliver([msg], attempt);
      expect(r.explicitAcks).toEqual([]);
      expect(r.retryMessages.map((m) => m.msgId)).toEqual(["m0"]);
      expect((await docRow(ctx, "lost.md"))!).toMatchObject({ index_attempts: attempt, indexed_at: null });
    }
    expect(errors).toHaveBeenCalledTimes(MAX_INDEX_ATTEMPTS);
    expect([1, 2, 3, 6, 10].map(retryDelaySeconds)).toEqual([10, 20, 40, 300, 300]);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const last = await deliver([msg], MAX_INDEX_ATTEMPTS + 1);
    expect(last.explicitAcks).toEqual(["m0"]);
    expect(warn).toHaveBeenCalledOnce();
    // Recorded as failed, so it is no longer pending and neither the queue nor the sweep tries again.
    expect(await getDoc(ctx, "lost.md")).toMatchObject({ index_status: "failed", index_note: GAVE_UP_NOTE });
    expect((await docRow(ctx, "lost.md"))!.indexed_at).not.toBeNull();
    expect((await deliver([msg], 1)).explicitAcks).toEqual(["m0"]);
    expect((await docRow(ctx, "lost.md"))!.index_attempts).toBe(MAX_INDEX_ATTEMPTS + 1);
  });
});

describe("docs_index_sweep (cron)", () => {
  it("finishes documents a crash left unindexed, past the grace time, and leaves younger ones to their message", async () => {
    holdQueue();
    const clock = new TestClock(new Date("2026-06-01T12:00:00.000Z"));
    const ctx = await freshCtx(clock);
    // A crash between storing and indexing: the version is committed, nothing indexed it.
    await putDocument(ctx, { path: "crash/small.md", bytes: enc("# Crashed\nThe aardvark survived."), mimeType: "text/markdown" });
    await putDocument(ctx, { path: "crash/big.md", bytes: enc(bigMarkdown("pangolin")), mimeType: "text/markdown" });
    const at = new Date(clock.now().getTime() + 60 * 60 * 1000);
    clock.set(new Date(at.getTime() - INDEX_GRACE_MS + 60_000).toISOString());
    await putDocument(ctx, { path: "young.md", bytes: enc("# Young\nThe kiwi is in flight."), mimeType: "text/markdown" });
    expect(await searchPaths(ctx, "aardvark")).toEqual([]);
    expect(await grepPaths(ctx, "pangolin")).toEqual([]);
    expect(held).toEqual([]);

    const info = vi.spyOn(console, "info").mockImplementation(() => undefined);
    const ectx = createExecutionContext();
    await worker.scheduled!(createScheduledController({ cron: FREQUENT_CRON, scheduledTime: at }), env as unknown as Env, ectx);
    await waitOnExecutionContext(ectx);
    expect(info.mock.calls.map((c) => String(c[0])).find((l) => l.includes("docs_index_sweep"))).toMatch(/docs_index_sweep: \d+ document\(s\) pending past 15 minutes queued again/);
    const mine = held.filter((m) => m.tenant_id === ctx.tenantId);
    const small = (await docRow(ctx, "crash/small.md"))!;
    const big = (await docRow(ctx, "crash/big.md"))!;
    expect(mine.map((m) => m.doc_id).sort()).toEqual([small.id, big.id].sort());

    await deliver(mine);
    expect(await searchPaths(ctx, "aardvark")).toEqual(["crash/small.md"]);
    expect(await grepPaths(ctx, "aardvark")).toEqual(["crash/small.md"]);
    expect(await searchPaths(ctx, "pangolin")).toEqual(["crash/big.md"]);
    expect(await grepPaths(ctx, "pangolin")).toEqual(["crash/big.md"]);
    expect((await getDoc(ctx, "young.md")).index_status).toBe("pending");
  });
});
