import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { chunkSpans, MAX_CHUNK_BYTES, MIN_CHUNK_BYTES } from "../../../src/docs/store/chunker";
import { chunkKey, collectOrphanChunks, deleteDocument, getDocument, MAX_DOCUMENT_BYTES, ORPHAN_GRACE_MS, putDocument, storeStatus } from "../../../src/docs/store/store";
import { sha256Hex } from "../../../src/db/ids";
import { count, makeCtx, refusal, seedIdentity, TestClock } from "../../support/helpers";

/** Deterministic pseudo-random bytes (xorshift32), so failures reproduce. */
function randomBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const text = (s: string) => new TextEncoder().encode(s);

async function chunkHashes(data: Uint8Array): Promise<string[]> {
  const out: string[] = [];
  for (const s of chunkSpans(data)) out.push(await sha256Hex(data.subarray(s.offset, s.offset + s.length)));
  return out;
}

let tenantSeq = 0;
async function freshCtx(clock = new TestClock()) {
  tenantSeq++;
  const id = await seedIdentity(`docs-${tenantSeq}-${crypto.randomUUID().slice(0, 8)}`, "writer");
  return makeCtx(id, clock);
}

describe("chunker", () => {
  it("is deterministic, covers the input, and keeps sizes within bounds", () => {
    const data = randomBytes(2 * 1024 * 1024, 7);
    const a = chunkSpans(data);
    const b = chunkSpans(data);
    expect(a).toEqual(b);
    expect(a.length).toBeGreaterThan(4);
    let at = 0;
    a.forEach((s, i) => {
      expect(s.offset).toBe(at);
      at += s.length;
      expect(s.length).toBeLessThanOrEqual(MAX_CHUNK_BYTES);
      if (i < a.length - 1) expect(s.length).toBeGreaterThanOrEqual(MIN_CHUNK_BYTES);
    });
    expect(at).toBe(data.length);
  });

  it("gives a document below the minimum one chunk", () => {
    expect(chunkSpans(randomBytes(MIN_CHUNK_BYTES - 1, 3))).toEqual([{ offset: 0, length: MIN_CHUNK_BYTES - 1 }]);
    expect(chunkSpans(new Uint8Array(0))).toEqual([{ offset: 0, length: 0 }]);
  });

  it("cuts bytes without content-defined boundaries at the maximum size", () => {
    const spans = chunkSpans(new Uint8Array(MAX_CHUNK_BYTES * 2 + 5));
    expect(spans.map((s) => s.length)).toEqual([MAX_CHUNK_BYTES, MAX_CHUNK_BYTES, 5]);
  });

  it("re-finds the later boundaries after an insertion near the start", async () => {
    const data = randomBytes(2 * 1024 * 1024, 11);
    const edited = concat(data.subarray(0, 1000), text("an inserted sentence that shifts every later byte"), data.subarray(1000));
    const before = await chunkHashes(data);
    const after = await chunkHashes(edited);
    const old = new Set(before);
    const changed = after.filter((h) => !old.has(h));
    expect(changed.length).toBeGreaterThanOrEqual(1);
    expect(changed.length).toBeLessThanOrEqual(2);
    // The changed chunks are the first ones; everything after them is shared.
    expect(after.slice(changed.length).every((h) => old.has(h))).toBe(true);
  });
});

describe("putDocument / getDocument", () => {
  it("round-trips a small document", async () => {
    const ctx = await freshCtx();
    const bytes = text("# Meeting notes\n\nShip it.\n");
    const put = await putDocument(ctx, { path: "/notes//meeting.md", bytes, mimeType: "text/markdown", tags: ["meeting"], metadata: { author: "Jane" } });
    expect(put).toMatchObject({ path: "notes/meeting.md", hash: await sha256Hex(bytes), size: bytes.length, bytes_stored: bytes.length, bytes_deduped: 0, chunks: 1 });
    const got = await getDocument(ctx, { path: "notes/meeting.md" });
    expect(new TextDecoder().decode(got.bytes)).toBe("# Meeting notes\n\nShip it.\n");
    expect(got).toMatchObject({ hash: put.hash, name: "meeting.md", mime_type: "text/markdown", size: bytes.length });
    const byHash = await getDocument(ctx, { hash: put.hash });
    expect(byHash.bytes).toEqual(bytes);
    const row = await env.DB.prepare(`SELECT tags, metadata FROM documents WHERE tenant_id = ? AND path = ?`).bind(ctx.tenantId, "notes/meeting.md").first<{ tags: string; metadata: string }>();
    expect(JSON.parse(row!.tags)).toEqual(["meeting"]);
    expect(JSON.parse(row!.metadata)).toEqual({ author: "Jane" });
  });

  it("round-trips a multi-chunk document, chunks stored under the tenant's prefix", async () => {
    const ctx = await freshCtx();
    const bytes = randomBytes(1024 * 1024 + 123, 21);
    const put = await putDocument(ctx, { path: "data/blob.bin", bytes });
    expect(put.chunks).toBeGreaterThan(2);
    expect(put.bytes_stored).toBe(bytes.length);
    const listed = await env.BLOBS.list({ prefix: `${ctx.tenantId}/docs/chunks/` });
    expect(listed.objects.length).toBe(put.chunks);
    const got = await getDocument(ctx, { path: "data/blob.bin" });
    expect(got.bytes).toEqual(bytes);
  });

  it("dedupes a re-add and a slightly edited large document within a tenant", async () => {
    const ctx = await freshCtx();
    const bytes = randomBytes(1536 * 1024, 33);
    const first = await putDocument(ctx, { path: "big/a.bin", bytes });
    const again = await putDocument(ctx, { path: "big/copy.bin", bytes });
    expect(again.hash).toBe(first.hash);
    expect(again).toMatchObject({ bytes_stored: 0, bytes_deduped: bytes.length });
    const edited = concat(bytes.subarray(0, 5000), text("EDIT"), bytes.subarray(5000));
    const third = await putDocument(ctx, { path: "big/a.bin", bytes: edited });
    expect(third.hash).not.toBe(first.hash);
    expect(third.bytes_stored).toBeGreaterThan(0);
    expect(third.bytes_stored).toBeLessThanOrEqual(2 * MAX_CHUNK_BYTES);
    expect(third.bytes_deduped).toBe(edited.length - third.bytes_stored);
    expect(third.bytes_deduped).toBeGreaterThan(bytes.length / 2);
    expect((await getDocument(ctx, { path: "big/a.bin" })).bytes).toEqual(edited);
    // The path's previous version is closed, not lost: one live row per path, two versions.
    expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND path = 'big/a.bin'`, ctx.tenantId)).toBe(2);
    expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND path = 'big/a.bin' AND deleted_at IS NULL`, ctx.tenantId)).toBe(1);
  });

  it("never dedupes across tenants, and another tenant cannot read a document by hash or path", async () => {
    const a = await freshCtx();
    const b = await freshCtx();
    const bytes = randomBytes(300 * 1024, 44);
    const putA = await putDocument(a, { path: "shared/spec.bin", bytes });
    const putB = await putDocument(b, { path: "other/spec.bin", bytes });
    expect(putB.hash).toBe(putA.hash);
    expect(putB.bytes_stored).toBe(bytes.length);
    expect(putB.bytes_deduped).toBe(0);

    const c = await freshCtx();
    expect((await refusal(getDocument(c, { hash: putA.hash }))).code).toBe("not_found");
    expect((await refusal(getDocument(c, { path: "shared/spec.bin" }))).code).toBe("not_found");
    expect((await refusal(getDocument(b, { path: "shared/spec.bin" }))).code).toBe("not_found");
  });

  it("keeps old bytes reachable by hash while a snapshot references them", async () => {
    const ctx = await freshCtx();
    const v1 = await putDocument(ctx, { path: "runbook.md", bytes: text("v1"), snapshotLabel: "release-1", collection: "ops" });
    expect(v1.snapshot_id).not.toBeNull();
    const v2 = await putDocument(ctx, { path: "runbook.md", bytes: text("v2") });
    expect((await getDocument(ctx, { path: "runbook.md" })).hash).toBe(v2.hash);
    const old = await getDocument(ctx, { hash: v1.hash });
    expect(new TextDecoder().decode(old.bytes)).toBe("v1");
    expect(old.path).toBe("runbook.md");
    expect(await count(`SELECT COUNT(*) AS n FROM doc_collections WHERE tenant_id = ? AND name = 'ops'`, ctx.tenantId)).toBe(1);

    // A version no snapshot holds is gone once superseded.
    const v3 = await putDocument(ctx, { path: "runbook.md", bytes: text("v3") });
    expect(v3.hash).not.toBe(v2.hash);
    expect((await refusal(getDocument(ctx, { hash: v2.hash }))).code).toBe("not_found");
  });

  it("refuses content whose chunks no longer match its hash", async () => {
    const ctx = await freshCtx();
    const put = await putDocument(ctx, { path: "x.txt", bytes: text("original") });
    await env.BLOBS.put(chunkKey(ctx.tenantId, put.hash), text("tampered"));
    expect((await refusal(getDocument(ctx, { path: "x.txt" }))).code).toBe("integrity_error");
  });
});

describe("refusals write nothing", () => {
  const bad = ["../etc/passwd", "a/../../b", "notes/\u0000x.md", "line\nbreak.md", "", "///", "./."];
  for (const path of bad) {
    it(`refuses path ${JSON.stringify(path)}`, async () => {
      const ctx = await freshCtx();
      const err = await refusal(putDocument(ctx, { path, bytes: text("content") }));
      expect(err.code).toBe("invalid_input");
      expect(err.hint.length).toBeGreaterThan(0);
      expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ?`, ctx.tenantId)).toBe(0);
      expect(await count(`SELECT COUNT(*) AS n FROM doc_chunks WHERE tenant_id = ?`, ctx.tenantId)).toBe(0);
      expect((await env.BLOBS.list({ prefix: `${ctx.tenantId}/` })).objects.length).toBe(0);
    });
  }

  it("refuses an oversize document", async () => {
    const ctx = await freshCtx();
    const err = await refusal(putDocument(ctx, { path: "huge.bin", bytes: new Uint8Array(MAX_DOCUMENT_BYTES + 1) }));
    expect(err.code).toBe("document_too_large");
    expect(err.message).toContain(String(MAX_DOCUMENT_BYTES));
    expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ?`, ctx.tenantId)).toBe(0);
    expect((await env.BLOBS.list({ prefix: `${ctx.tenantId}/` })).objects.length).toBe(0);
  });

  it("refuses bad tags, metadata and mime types", async () => {
    const ctx = await freshCtx();
    const bytes = text("x");
    for (const input of [
      { path: "a.md", bytes, tags: ["ok", 3] as unknown as string[] },
      { path: "a.md", bytes, metadata: [1] as unknown as Record<string, unknown> },
      { path: "a.md", bytes, metadata: { big: "x".repeat(20_000) } },
      { path: "a.md", bytes, mimeType: "not a mime" },
    ]) {
      expect((await refusal(putDocument(ctx, input))).code).toBe("invalid_input");
    }
    expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ?`, ctx.tenantId)).toBe(0);
  });
});

describe("status, delete and orphan collection", () => {
  it("reports totals and deduplication", async () => {
    const ctx = await freshCtx();
    expect(await storeStatus(ctx)).toEqual({ total_objects: 0, total_bytes: 0, unique_blocks: 0, deduplicated_bytes: 0, dedup_ratio: 0 });
    const bytes = randomBytes(400 * 1024, 55);
    const a = await putDocument(ctx, { path: "a.bin", bytes });
    await putDocument(ctx, { path: "b.bin", bytes });
    await putDocument(ctx, { path: "c.txt", bytes: text("hello") });
    const status = await storeStatus(ctx);
    expect(status.total_objects).toBe(3);
    expect(status.total_bytes).toBe(2 * bytes.length + 5);
    expect(status.unique_blocks).toBe(a.chunks + 1);
    expect(status.deduplicated_bytes).toBe(bytes.length);
    expect(status.dedup_ratio).toBeCloseTo(bytes.length / (2 * bytes.length + 5), 10);
  });

  it("delete keeps chunks other documents use; GC removes only unreferenced chunks after the grace period", async () => {
    const clock = new TestClock();
    const ctx = await freshCtx(clock);
    const shared = randomBytes(200 * 1024, 66);
    const onlyMine = randomBytes(100 * 1024, 77);
    const docA = await putDocument(ctx, { path: "a.bin", bytes: concat(shared, onlyMine) });
    const docB = await putDocument(ctx, { path: "b.bin", bytes: shared });
    const keep = await putDocument(ctx, { path: "kept.txt", bytes: text("snapshotted"), snapshotLabel: "s1" });
    await deleteDocument(ctx, { path: "kept.txt" });
    const chunksBefore = await count(`SELECT COUNT(*) AS n FROM doc_chunks WHERE tenant_id = ?`, ctx.tenantId);

    await deleteDocument(ctx, { path: "a.bin" });
    expect((await refusal(getDocument(ctx, { path: "a.bin" }))).code).toBe("not_found");
    expect((await refusal(deleteDocument(ctx, { path: "a.bin" }))).code).toBe("not_found");

    // Within the grace period nothing is collected, even though a.bin's own chunks are orphans.
    const early = await collectOrphanChunks(env, ctx.tenantId, 100, new Date(clock.now().getTime() + ORPHAN_GRACE_MS / 2));
    expect(early.chunks_deleted).toBe(0);

    const later = new Date(clock.now().getTime() + ORPHAN_GRACE_MS + 1000);
    const gc = await collectOrphanChunks(env, ctx.tenantId, 100, later);
    expect(gc.chunks_deleted).toBeGreaterThan(0);
    expect(gc.bytes_freed).toBeGreaterThan(0);
    expect(await count(`SELECT COUNT(*) AS n FROM doc_chunks WHERE tenant_id = ?`, ctx.tenantId)).toBe(chunksBefore - gc.chunks_deleted);
    const objects = (await env.BLOBS.list({ prefix: `${ctx.tenantId}/docs/chunks/` })).objects.length;
    expect(objects).toBe(chunksBefore - gc.chunks_deleted);

    // Still readable: the document sharing chunks with the deleted one, and the snapshot's content.
    expect((await getDocument(ctx, { path: "b.bin" })).hash).toBe(docB.hash);
    expect(new TextDecoder().decode((await getDocument(ctx, { hash: keep.hash })).bytes)).toBe("snapshotted");
    expect((await refusal(getDocument(ctx, { hash: docA.hash }))).code).toBe("not_found");

    // A second run finds nothing more.
    expect((await collectOrphanChunks(env, ctx.tenantId, 100, later)).chunks_deleted).toBe(0);

    // Re-adding collected content stores it again.
    const readd = await putDocument(ctx, { path: "a.bin", bytes: concat(shared, onlyMine) });
    expect(readd.bytes_stored).toBe(gc.bytes_freed);
    expect((await getDocument(ctx, { path: "a.bin" })).bytes).toEqual(concat(shared, onlyMine));
  });

  it("never collects another tenant's chunks, nor a chunk a put has just touched", async () => {
    const clock = new TestClock();
    const a = await freshCtx(clock);
    const b = await freshCtx(clock);
    const bytes = text("same content in two tenants");
    await putDocument(a, { path: "x.txt", bytes });
    await putDocument(b, { path: "x.txt", bytes });
    await deleteDocument(a, { path: "x.txt" });
    const later = new Date(clock.now().getTime() + ORPHAN_GRACE_MS + 1000);

    // A put re-relying on the orphan touches it first; the collector then leaves it alone.
    clock.set(later.toISOString());
    const again = await putDocument(a, { path: "y.txt", bytes });
    expect(again.bytes_stored).toBe(0);
    await deleteDocument(a, { path: "y.txt" });
    // Run over every tenant: other tests' orphans may go, this touched chunk must not.
    await collectOrphanChunks(env, undefined, 1000, later);
    expect(await count(`SELECT COUNT(*) AS n FROM doc_chunks WHERE tenant_id = ?`, a.tenantId)).toBe(1);
    expect((await env.BLOBS.list({ prefix: `${a.tenantId}/docs/chunks/` })).objects.length).toBe(1);

    const gc = await collectOrphanChunks(env, undefined, 1000, new Date(later.getTime() + ORPHAN_GRACE_MS + 1000));
    expect(gc.chunks_deleted).toBeGreaterThanOrEqual(1);
    expect(await count(`SELECT COUNT(*) AS n FROM doc_chunks WHERE tenant_id = ?`, a.tenantId)).toBe(0);
    expect((await env.BLOBS.list({ prefix: `${a.tenantId}/docs/chunks/` })).objects.length).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM doc_chunks WHERE tenant_id = ?`, b.tenantId)).toBe(1);
    expect(new TextDecoder().decode((await getDocument(b, { path: "x.txt" })).bytes)).toBe("same content in two tenants");
  });

  it("refuses, retryably and without relying on it, a chunk the collector has claimed", async () => {
    const clock = new TestClock();
    const ctx = await freshCtx(clock);
    const bytes = text("claimed content");
    const put = await putDocument(ctx, { path: "c.txt", bytes });
    await deleteDocument(ctx, { path: "c.txt" });
    await env.DB.prepare(`UPDATE doc_chunks SET gc_claimed_at = ? WHERE tenant_id = ? AND hash = ?`).bind(clock.now().toISOString(), ctx.tenantId, put.hash).run();
    const err = await refusal(putDocument(ctx, { path: "c.txt", bytes }));
    expect(err.code).toBe("conflict");
    expect(err.retryable).toBe(true);
    expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND deleted_at IS NULL`, ctx.tenantId)).toBe(0);
  });
});
