/** The cron half of the document store's garbage collection: chunk objects that never got a row. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sweepRowlessChunks } from "../../../src/docs/store/chunk-sweep";
import { chunkKey, putDocument } from "../../../src/docs/store/store";
import { makeCtx, seedIdentity } from "../../support/helpers";

const HOUR = 3_600_000;

describe("sweepRowlessChunks", () => {
  it("deletes old chunk objects without a row, keeps those with one and young ones, and walks every tenant", async () => {
    await env.DB.prepare(`DELETE FROM cron_cursors WHERE job = 'docs_rowless_chunk_sweep'`).run();
    const a = makeCtx(await seedIdentity(`gc-a-${crypto.randomUUID().slice(0, 8)}`, "w"));
    const b = makeCtx(await seedIdentity(`gc-b-${crypto.randomUUID().slice(0, 8)}`, "w"));
    const kept = await putDocument(a, { path: "kept.md", bytes: new TextEncoder().encode("kept content") });
    const keptChunk = (await env.DB.prepare(`SELECT chunk_hash FROM document_chunks WHERE tenant_id = ? AND doc_hash = ?`).bind(a.tenantId, kept.hash).first<{ chunk_hash: string }>())!.chunk_hash;
    // What a put leaves behind when it dies between its uploads and its batch.
    const strayA = "a".repeat(64);
    const strayB = "b".repeat(64);
    await env.BLOBS.put(chunkKey(a.tenantId, strayA), "orphan");
    await env.BLOBS.put(chunkKey(b.tenantId, strayB), "orphan");

    // Within the grace period nothing is touched: the put may still be committing.
    await sweepRowlessChunks(env, new Date(), 1000);
    expect(await env.BLOBS.head(chunkKey(a.tenantId, strayA))).not.toBeNull();

    await env.DB.prepare(`DELETE FROM cron_cursors WHERE job = 'docs_rowless_chunk_sweep'`).run();
    const report = await sweepRowlessChunks(env, new Date(Date.now() + 2 * HOUR), 1000);
    expect(report).toMatch(/without a row deleted; all tenants swept/);
    expect(await env.BLOBS.head(chunkKey(a.tenantId, strayA))).toBeNull();
    expect(await env.BLOBS.head(chunkKey(b.tenantId, strayB))).toBeNull();
    expect(await env.BLOBS.head(chunkKey(a.tenantId, keptChunk))).not.toBeNull();
  });
});
