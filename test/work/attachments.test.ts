/**
 * Attachments (seed 001): attach_add (links and files, file bytes in R2 under the tenant's
 * prefix), attach_remove (soft) and attachment_query, the evidence gate they feed, and tenant
 * isolation down to the R2 objects, through the registry against real local D1 and R2.
 *
 * Time: the clock sits in the future (T0, 2030). Each test has its own tenant because D1 and R2
 * keep their data between the tests of this file.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import type { Ctx } from "../../src/core/context";
import { uploadPrefix } from "../../src/work/attachments/model";
import { ATTACHMENT_SWEEP_JOB, sweepRowlessUploads } from "../../src/work/attachments/sweep";
import { call, count, makeCtx, MINUTE, ok, refusedWithoutWrites, seedIdentity, TestClock, type Structured, type TestIdentity } from "../support/helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MIB = 1024 * 1024;

interface World {
  slug: string;
  id: TestIdentity;
  ctx: Ctx;
  clock: TestClock;
}

/** A fresh tenant with one caller ("agent") and a clock at T0. */
async function world(name: string): Promise<World> {
  const slug = `wat-${name}-${crypto.randomUUID().slice(0, 8)}`;
  const id = await seedIdentity(slug, "agent");
  const clock = new TestClock(new Date(T0));
  return { slug, id, clock, ctx: makeCtx(id, clock, "sess-1") };
}

async function project(ctx: Ctx, key: string): Promise<Structured> {
  return (await ok(ctx, "project_create", { title: `Project ${key}`, key })).project as Structured;
}

async function task(ctx: Ctx, projectId: string, extra: Record<string, unknown> = {}): Promise<Structured> {
  return (await ok(ctx, "task_create", { project_id: projectId, title: "a task", ...extra })).task as Structured;
}

async function attach(ctx: Ctx, args: Record<string, unknown>): Promise<Structured> {
  return (await ok(ctx, "attach_add", args)).attachment as Structured;
}

async function list(ctx: Ctx, objectType: string, objectId: string, extra: Record<string, unknown> = {}): Promise<Structured[]> {
  return (await ok(ctx, "attachment_query", { object_type: objectType, object_id: objectId, ...extra })).items as Structured[];
}

async function rejects(ctx: Ctx, tool: string, args: unknown, code: string): Promise<Structured> {
  return refusedWithoutWrites(ctx, tool, args, code, () => tenantState(ctx.tenantId));
}

/** Standard base64 of arbitrary bytes (chunked: large inputs would overflow a spread). */
function b64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** Every byte value, then some, so a lossy (text) round trip would show. */
const sampleBytes = (n = 300) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + 3) % 256);

async function blobs(tenantId: string): Promise<Array<{ key: string; size: number; etag: string; uploaded: string }>> {
  const out: Array<{ key: string; size: number; etag: string; uploaded: string }> = [];
  let cursor: string | undefined;
  do {
    const page = await env.BLOBS.list({ prefix: `${tenantId}/`, ...(cursor ? { cursor } : {}) });
    out.push(...page.objects.map((o) => ({ key: o.key, size: o.size, etag: o.etag, uploaded: o.uploaded.toISOString() })));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return out;
}

async function blobBytes(key: string): Promise<Uint8Array | null> {
  const obj = await env.BLOBS.get(key);
  return obj ? new Uint8Array(await obj.arrayBuffer()) : null;
}

/** The R2 key holding a version (default: the newest) of the file at a tenant's storage path. */
async function objectKey(tenantId: string, path: string, version?: number): Promise<string> {
  const row = await env.DB.prepare(`SELECT object_key FROM blob_versions WHERE tenant_id = ? AND storage_path = ? AND (? IS NULL OR version = ?) ORDER BY version DESC LIMIT 1`)
    .bind(tenantId, path, version ?? null, version ?? null)
    .first<{ object_key: string }>();
  if (!row) throw new Error(`no version stored at ${path}`);
  return row.object_key;
}

/** The bytes of a version (default: the newest) of the file at a tenant's storage path. */
async function storedText(tenantId: string, path: string, version?: number): Promise<string> {
  return new TextDecoder().decode((await blobBytes(await objectKey(tenantId, path, version)))!);
}

/** Everything attach_add and attach_remove write for a tenant: rows, activity, and R2 objects. */
async function tenantState(tenantId: string) {
  const rows = await env.DB.prepare("SELECT * FROM attachments WHERE tenant_id = ? ORDER BY id").bind(tenantId).all<Structured>();
  const versions = await env.DB.prepare("SELECT * FROM blob_versions WHERE tenant_id = ? ORDER BY storage_path, version").bind(tenantId).all<Structured>();
  return {
    attachments: rows.results,
    blobVersions: versions.results,
    activity: await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", tenantId),
    blobs: await blobs(tenantId),
    pendingKeys: await count("SELECT COUNT(*) AS n FROM idempotency_keys WHERE tenant_id = ? AND status = 'pending'", tenantId),
  };
}

async function activityRows(tenantId: string, verb: string): Promise<Structured[]> {
  const rows = await env.DB.prepare("SELECT * FROM activity WHERE tenant_id = ? AND verb = ? ORDER BY seq").bind(tenantId, verb).all<Structured>();
  return rows.results;
}

async function attachmentRow(id: string): Promise<Structured> {
  const row = await env.DB.prepare("SELECT * FROM attachments WHERE id = ?").bind(id).first<Structured>();
  if (!row) throw new Error(`no attachment row ${id}`);
  return row;
}

/** A project APP with task APP-1, a decision, a comment on the task and a handoff, all in `w`'s tenant. */
async function objects(w: World) {
  const p = await project(w.ctx, "APP");
  const t = await task(w.ctx, p.id as string);
  const d = (await ok(w.ctx, "decision_log", { title: "Cache in KV", choice: "KV", project_id: p.id })).decision as Structured;
  const c = (await ok(w.ctx, "comment_add", { object_type: "task", object_id: t.id, body: "see the report" })).comment as Structured;
  const h = (await ok(w.ctx, "handoff_create", { to_actor_ids: ["me"], title: "Look at the report", related_project_id: p.id })).handoff as Structured;
  return { p, t, d, c, h };
}

describe("attach_add", () => {
  describe("links", () => {
    it("attaches a link to a project (by key), a task (by KEY-number), a decision, a comment and a handoff", async () => {
      const w = await world("links");
      const { p, t, d, c, h } = await objects(w);
      expect(t.ref).toBe("APP-1");
      const targets: Array<[string, string, string, string | undefined]> = [
        // object_type, reference passed, canonical id stored, project on the activity row (not pinned for comments)
        ["project", "APP", p.id as string, p.id as string],
        ["task", "APP-1", t.id as string, p.id as string],
        ["decision", d.id as string, d.id as string, p.id as string],
        ["comment", c.id as string, c.id as string, undefined],
        ["handoff", h.id as string, h.id as string, p.id as string],
      ];
      const made: Structured[] = [];
      for (const [objectType, ref, canonical] of targets) {
        w.clock.advance(MINUTE);
        const url = `https://ci.example.com/runs/${objectType}?page=1#top`;
        const a = await attach(w.ctx, { object_type: objectType, object_id: ref, kind: "link", url });
        expect(a).toEqual({
          id: expect.stringMatching(UUID_V7),
          object_type: objectType,
          object_id: canonical,
          kind: "link",
          url,
          storage_path: null,
          title: url,
          filename: null,
          mime_type: null,
          size_bytes: null,
          blob_version: null,
          created_by: w.id.actorId,
          created_at: w.clock.now().toISOString(),
        });
        expect(await list(w.ctx, objectType, ref)).toEqual([a]);
        made.push(a);
      }
      // An explicit title is kept.
      const titled = await attach(w.ctx, { object_type: "task", object_id: t.id, kind: "link", url: "http://docs.example.com/x", title: "Design doc" });
      expect(titled).toMatchObject({ title: "Design doc", url: "http://docs.example.com/x", object_id: t.id });

      // One attachment.added activity row per attachment, on the object, with the project's timeline.
      const added = await activityRows(w.id.tenantId, "attachment.added");
      expect(added).toHaveLength(targets.length + 1);
      targets.forEach(([objectType, , canonical, projectId], i) => {
        expect(added[i]).toMatchObject({ actor_id: w.id.actorId, object_type: objectType, object_id: canonical, at: made[i]!.created_at, session_id: "sess-1" });
        if (projectId) expect(added[i]!.project_id).toBe(projectId);
        expect(added[i]!.summary).toBe(`link: ${made[i]!.url}`);
        expect(JSON.parse(added[i]!.metadata as string)).toEqual({ attachment_id: made[i]!.id });
      });
      // Links store nothing in R2.
      expect(await blobs(w.id.tenantId)).toEqual([]);
    });

    it("refuses malformed link attachments with a hint and writes nothing", async () => {
      const w = await world("link-bad");
      const p = await project(w.ctx, "APP");
      await task(w.ctx, p.id as string);
      // Some state to keep: a live attachment, a stored file.
      await attach(w.ctx, { object_type: "task", object_id: "APP-1", kind: "link", url: "https://example.com/a" });
      w.clock.advance(MINUTE);
      await attach(w.ctx, { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "keep.txt", content_base64: btoa("keep") });
      const base = { object_type: "task", object_id: "APP-1", kind: "link" };

      const missing = await rejects(w.ctx, "attach_add", base, "invalid_input");
      expect(missing.message).toMatch(/url/);
      await rejects(w.ctx, "attach_add", { ...base, url: "https://example.com/b", storage_path: "keep.txt" }, "invalid_input");
      await rejects(w.ctx, "attach_add", { ...base, url: "https://example.com/b", content_base64: btoa("bytes") }, "invalid_input");
      await rejects(w.ctx, "attach_add", { ...base, url: "https://example.com/b", storage_path: "new.txt", content_base64: btoa("bytes") }, "invalid_input");
      for (const url of ["ftp://files.example.com/report.pdf", "javascript:alert(1)", "mailto:ops@example.com", "file:///etc/passwd", "data:text/html,hi", "not a url"]) {
        const e = await rejects(w.ctx, "attach_add", { ...base, url }, "invalid_input");
        expect(e.hint.length).toBeGreaterThan(0);
      }
      // A file attachment takes no url, and needs storage_path.
      await rejects(w.ctx, "attach_add", { ...base, kind: "file", url: "https://example.com/b", storage_path: "x.txt", content_base64: btoa("x") }, "invalid_input");
      const noPath = await rejects(w.ctx, "attach_add", { ...base, kind: "file", content_base64: btoa("x") }, "invalid_input");
      expect(noPath.message).toMatch(/storage_path/);
      // Unknown kinds and unknown keys are refused by the schema.
      await rejects(w.ctx, "attach_add", { ...base, kind: "image", url: "https://example.com/b" }, "invalid_input");
      await rejects(w.ctx, "attach_add", { ...base, url: "https://example.com/b", colour: "red" }, "invalid_input");

      expect((await list(w.ctx, "task", "APP-1")).map((a) => a.kind)).toEqual(["file", "link"]);
    });

    it("refuses unknown objects (and notes, which this server does not have) as not_found", async () => {
      const w = await world("link-nf");
      await project(w.ctx, "APP");
      const link = { kind: "link", url: "https://example.com/x" };
      await rejects(w.ctx, "attach_add", { object_type: "task", object_id: "APP-9", ...link }, "not_found");
      await rejects(w.ctx, "attach_add", { object_type: "project", object_id: "NOPE", ...link }, "not_found");
      for (const type of ["decision", "comment", "handoff", "note"]) {
        await rejects(w.ctx, "attach_add", { object_type: type, object_id: crypto.randomUUID(), ...link }, "not_found");
      }
      // A file for an unknown object is refused before anything reaches R2.
      await rejects(w.ctx, "attach_add", { object_type: "task", object_id: "APP-9", kind: "file", storage_path: "f.bin", content_base64: btoa("abc") }, "not_found");
      expect(await blobs(w.id.tenantId)).toEqual([]);
    });
  });

  describe("files", () => {
    it("stores inline content in R2 under the tenant's prefix as version 1 of storage_path, and records size, MIME and file name", async () => {
      const w = await world("file-inline");
      const p = await project(w.ctx, "APP");
      const t = await task(w.ctx, p.id as string);
      const bytes = sampleBytes();
      const a = await attach(w.ctx, { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "reports/2030-01/coverage.bin", content_base64: b64(bytes) });
      expect(a).toEqual({
        id: expect.stringMatching(UUID_V7),
        object_type: "task",
        object_id: t.id,
        kind: "file",
        url: null,
        storage_path: "reports/2030-01/coverage.bin",
        title: "coverage.bin",
        filename: "coverage.bin",
        mime_type: "application/octet-stream",
        size_bytes: bytes.length,
        blob_version: 1,
        created_by: w.id.actorId,
        created_at: T0,
      });
      // Each upload has a key of its own, so no other upload to the path can write over it.
      const key = await objectKey(w.id.tenantId, "reports/2030-01/coverage.bin", 1);
      expect(key).toMatch(new RegExp(`^${w.id.tenantId}/~v/[0-9a-f-]{36}/reports/2030-01/coverage\\.bin$`));
      expect(await blobBytes(key)).toEqual(bytes);
      expect((await env.BLOBS.head(key))!.httpMetadata?.contentType).toBe("application/octet-stream");
      // Nothing lands outside the tenant's prefix under that path.
      expect(await env.BLOBS.head("reports/2030-01/coverage.bin")).toBeNull();

      // Explicit file name, title, MIME type and a matching size_bytes are kept; the MIME type reaches R2.
      const html = new TextEncoder().encode("<h1>Coverage 93%</h1>\n");
      const b = await attach(w.ctx, {
        object_type: "project",
        object_id: "APP",
        kind: "file",
        storage_path: "site/index.html",
        content_base64: b64(html),
        filename: "coverage.html",
        title: "Coverage report",
        mime_type: "text/html",
        size_bytes: html.length,
      });
      expect(b).toMatchObject({ object_id: p.id, filename: "coverage.html", title: "Coverage report", mime_type: "text/html", size_bytes: html.length });
      expect(await blobBytes(await objectKey(w.id.tenantId, "site/index.html"))).toEqual(html);
      expect((await env.BLOBS.head(await objectKey(w.id.tenantId, "site/index.html")))!.httpMetadata?.contentType).toBe("text/html");

      // A single-segment path, and an empty file.
      const empty = await attach(w.ctx, { object_type: "task", object_id: t.id, kind: "file", storage_path: "empty.log", content_base64: "" });
      expect(empty).toMatchObject({ filename: "empty.log", size_bytes: 0 });
      expect(await blobBytes(await objectKey(w.id.tenantId, "empty.log"))).toEqual(new Uint8Array(0));

      const stored = await Promise.all(["empty.log", "reports/2030-01/coverage.bin", "site/index.html"].map((p) => objectKey(w.id.tenantId, p)));
      expect((await blobs(w.id.tenantId)).map((o) => [o.key, o.size]).sort()).toEqual(
        [
          [stored[0], 0],
          [stored[1], bytes.length],
          [stored[2], html.length],
        ].sort(),
      );
      const added = await activityRows(w.id.tenantId, "attachment.added");
      expect(added.map((r) => [r.object_type, r.object_id, r.summary])).toEqual([
        ["task", t.id, "file: coverage.bin"],
        ["project", p.id, "file: Coverage report"],
        ["task", t.id, "file: empty.log"],
      ]);
    });

    it("accepts exactly 1 MiB inline and refuses a byte more, writing nothing", async () => {
      const w = await world("file-size");
      const p = await project(w.ctx, "APP");
      await task(w.ctx, p.id as string);
      const max = new Uint8Array(MIB).fill(0x5a);
      const a = await attach(w.ctx, { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "max.bin", content_base64: b64(max) });
      expect(a.size_bytes).toBe(MIB);
      expect((await env.BLOBS.head(await objectKey(w.id.tenantId, "max.bin")))!.size).toBe(MIB);

      const over = await rejects(
        w.ctx,
        "attach_add",
        { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "over.bin", content_base64: b64(new Uint8Array(MIB + 1)) },
        "invalid_input",
      );
      expect(over.hint).toMatch(/storage_path/);
      await rejects(w.ctx, "attach_add", { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "over.bin", content_base64: b64(new Uint8Array(2 * MIB)) }, "invalid_input");
      expect(await blobs(w.id.tenantId)).toHaveLength(1);
    });

    it("refuses invalid base64, a wrong size_bytes and bad storage paths, writing nothing", async () => {
      const w = await world("file-bad");
      const p = await project(w.ctx, "APP");
      await task(w.ctx, p.id as string);
      await attach(w.ctx, { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "a/b.txt", content_base64: btoa("original") });
      const file = { object_type: "task", object_id: "APP-1", kind: "file" };

      for (const content of ["!!!not base64!!!", "abcde", "YWJj$"]) {
        const e = await rejects(w.ctx, "attach_add", { ...file, storage_path: "bad.bin", content_base64: content }, "invalid_input");
        expect(e.message).toMatch(/base64/);
      }
      // size_bytes must match the content; a mismatch does not overwrite what is stored at the path.
      const mismatch = await rejects(w.ctx, "attach_add", { ...file, storage_path: "a/b.txt", content_base64: btoa("changed!"), size_bytes: 7 }, "invalid_input");
      expect(mismatch.message).toMatch(/size_bytes/);
      expect(await storedText(w.id.tenantId, "a/b.txt")).toBe("original");

      for (const storage_path of ["/abs", "/abs/x.txt", "../x", "a/../b", "a/..", "a//b", "./a", "a/./b", ".", "..", "a/", "", "a\\b", "a/b\nc"]) {
        await rejects(w.ctx, "attach_add", { ...file, storage_path, content_base64: btoa("x") }, "invalid_input");
        await rejects(w.ctx, "attach_add", { ...file, storage_path }, "invalid_input");
      }
      // Dots inside a segment are plain names, not traversal.
      const dotted = await attach(w.ctx, { ...file, storage_path: "v1.2/..hidden/report..final.txt", content_base64: btoa("ok") });
      expect(dotted).toMatchObject({ filename: "report..final.txt", size_bytes: 2 });
      expect(await storedText(w.id.tenantId, "v1.2/..hidden/report..final.txt")).toBe("ok");
    });

    it("attaches a pre-uploaded blob by storage_path, taking size and MIME type from R2", async () => {
      const w = await world("file-stored");
      const p = await project(w.ctx, "APP");
      const t = await task(w.ctx, p.id as string);
      const pdf = sampleBytes(5000);
      await env.BLOBS.put(`${w.id.tenantId}/big/spec.pdf`, pdf, { httpMetadata: { contentType: "application/pdf" } });
      await env.BLOBS.put(`${w.id.tenantId}/raw.dat`, new Uint8Array([1, 2, 3]));
      const before = await blobs(w.id.tenantId);

      const a = await attach(w.ctx, { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "big/spec.pdf" });
      expect(a).toMatchObject({
        object_id: t.id,
        kind: "file",
        url: null,
        storage_path: "big/spec.pdf",
        filename: "spec.pdf",
        title: "spec.pdf",
        mime_type: "application/pdf",
        size_bytes: 5000,
        blob_version: 1,
      });
      // An object put in the bucket out of band becomes version 1 of its path, in place.
      expect(await objectKey(w.id.tenantId, "big/spec.pdf", 1)).toBe(`${w.id.tenantId}/big/spec.pdf`);
      // No content type stored: the default.
      w.clock.advance(MINUTE);
      const b = await attach(w.ctx, { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "raw.dat", size_bytes: 3 });
      expect(b).toMatchObject({ mime_type: "application/octet-stream", size_bytes: 3 });
      // Attaching by reference leaves the stored objects as they were.
      expect(await blobs(w.id.tenantId)).toEqual(before);
      expect(await blobBytes(`${w.id.tenantId}/big/spec.pdf`)).toEqual(pdf);

      // A size_bytes that disagrees with the stored object is refused.
      const e = await rejects(w.ctx, "attach_add", { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "big/spec.pdf", size_bytes: 4999 }, "invalid_input");
      expect(e.message).toMatch(/5000/);
      // Nothing stored and nothing sent: blob_not_found, with a hint.
      const missing = await rejects(w.ctx, "attach_add", { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "big/missing.pdf" }, "blob_not_found");
      expect(missing.hint).toMatch(/content_base64/);
      // A path is a key, not a prefix: "big" is no object.
      await rejects(w.ctx, "attach_add", { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "big" }, "blob_not_found");
      expect((await list(w.ctx, "task", "APP-1")).map((x) => x.id)).toEqual([b.id, a.id]);
    });
  });
});

describe("tenant isolation", () => {
  it("another tenant cannot reach a tenant's attachments or its R2 objects", async () => {
    const a = await world("iso-a");
    const b = await world("iso-b");
    // Both tenants have a project APP with task APP-1: keys and refs resolve within the caller's tenant.
    const pa = await project(a.ctx, "APP");
    const taskA = await task(a.ctx, pa.id as string);
    const pb = await project(b.ctx, "APP");
    const taskB = await task(b.ctx, pb.id as string);
    const secret = new TextEncoder().encode("tenant A's secret report");
    const fileA = await attach(a.ctx, { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "shared/report.txt", content_base64: b64(secret), mime_type: "text/plain" });
    const linkA = await attach(a.ctx, { object_type: "project", object_id: "APP", kind: "link", url: "https://a.example.com/" });
    const aState = await tenantState(a.id.tenantId);

    // B attaching by A's storage path finds nothing: B's prefix is empty.
    expect(await blobs(b.id.tenantId)).toEqual([]);
    await rejects(b.ctx, "attach_add", { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "shared/report.txt" }, "blob_not_found");
    // Nor can any path escape B's prefix into A's.
    await rejects(b.ctx, "attach_add", { object_type: "task", object_id: "APP-1", kind: "file", storage_path: `../${a.id.tenantId}/shared/report.txt` }, "invalid_input");

    // A's objects, by id, are not found for B: attach, list, remove.
    await rejects(b.ctx, "attach_add", { object_type: "task", object_id: taskA.id, kind: "link", url: "https://b.example.com/" }, "not_found");
    await rejects(b.ctx, "attach_add", { object_type: "project", object_id: pa.id, kind: "link", url: "https://b.example.com/" }, "not_found");
    await rejects(b.ctx, "attach_add", { object_type: "task", object_id: taskA.id, kind: "file", storage_path: "shared/report.txt" }, "not_found");
    for (const [type, ref] of [
      ["task", taskA.id],
      ["project", pa.id],
    ] as const) {
      const r = await call(b.ctx, "attachment_query", { object_type: type, object_id: ref });
      expect(r.error?.code).toBe("not_found");
      expect(JSON.stringify(r)).not.toContain(fileA.id as string);
    }
    for (const id of [fileA.id, linkA.id]) {
      const e = await rejects(b.ctx, "attach_remove", { attachment_id: id }, "not_found");
      expect(e.message).not.toMatch(/forbidden|another tenant/i);
    }
    // B's own APP-1 has none of A's attachments.
    expect(await list(b.ctx, "task", "APP-1")).toEqual([]);
    expect(await list(b.ctx, "project", "APP")).toEqual([]);

    // B's inline upload at the same path lands under B's prefix and leaves A's bytes alone.
    const theirs = new TextEncoder().encode("B's own file");
    const fileB = await attach(b.ctx, { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "shared/report.txt", content_base64: b64(theirs) });
    expect(fileB).toMatchObject({ object_id: taskB.id, storage_path: "shared/report.txt", size_bytes: theirs.length });
    expect(await objectKey(b.id.tenantId, "shared/report.txt")).toMatch(new RegExp(`^${b.id.tenantId}/`));
    expect(await blobBytes(await objectKey(b.id.tenantId, "shared/report.txt"))).toEqual(theirs);
    expect(await blobBytes(await objectKey(a.id.tenantId, "shared/report.txt"))).toEqual(secret);
    expect(await tenantState(a.id.tenantId)).toEqual(aState);
    // Now B can attach its own blob by path, and still sees A's size nowhere.
    b.clock.advance(MINUTE);
    const again = await attach(b.ctx, { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "shared/report.txt" });
    expect(again.size_bytes).toBe(theirs.length);

    // A still sees exactly its own, and its removal is unaffected by B's files.
    expect((await list(a.ctx, "task", "APP-1")).map((x) => x.id)).toEqual([fileA.id]);
    expect((await ok(a.ctx, "attach_remove", { attachment_id: fileA.id })).removed).toBe(true);
    expect((await list(b.ctx, "task", "APP-1")).map((x) => x.id)).toEqual([again.id, fileB.id]);
  });
});

describe("attach_remove", () => {
  it("soft-removes: the row keeps deleted_at, the R2 object stays, a second remove reports false", async () => {
    const w = await world("remove");
    const p = await project(w.ctx, "APP");
    const t = await task(w.ctx, p.id as string);
    const bytes = sampleBytes(64);
    const file = await attach(w.ctx, { object_type: "task", object_id: "APP-1", kind: "file", storage_path: "out/log.txt", content_base64: b64(bytes) });
    w.clock.advance(MINUTE);
    const link = await attach(w.ctx, { object_type: "task", object_id: "APP-1", kind: "link", url: "https://example.com/pr/1" });
    w.clock.advance(MINUTE);

    const r = await ok(w.ctx, "attach_remove", { attachment_id: file.id });
    expect(r.removed).toBe(true);
    expect(await attachmentRow(file.id as string)).toMatchObject({ deleted_at: at(2 * MINUTE), kind: "file", storage_path: "out/log.txt", size_bytes: 64 });
    expect(await blobBytes(await objectKey(w.id.tenantId, "out/log.txt"))).toEqual(bytes);
    expect(await list(w.ctx, "task", "APP-1")).toEqual([link]);

    const removed = await activityRows(w.id.tenantId, "attachment.removed");
    expect(removed).toHaveLength(1);
    expect(removed[0]).toMatchObject({ actor_id: w.id.actorId, object_type: "task", object_id: t.id, project_id: p.id, at: at(2 * MINUTE) });
    // Both ends show on the project's timeline.
    const timeline = (await ok(w.ctx, "activity_query", { project_id: "APP", verb: "attachment.*" })).items as Structured[];
    expect(timeline.map((x) => [x.verb, (x.metadata as Structured).attachment_id])).toEqual([
      ["attachment.removed", file.id],
      ["attachment.added", link.id],
      ["attachment.added", file.id],
    ]);
    expect(removed[0]!.summary).toContain("log.txt");
    expect(JSON.parse(removed[0]!.metadata as string)).toEqual({ attachment_id: file.id });

    // Removing again changes nothing and says so.
    w.clock.advance(MINUTE);
    const before = await tenantState(w.id.tenantId);
    expect((await ok(w.ctx, "attach_remove", { attachment_id: file.id })).removed).toBe(false);
    expect(await tenantState(w.id.tenantId)).toEqual(before);
    expect((await attachmentRow(file.id as string)).deleted_at).toBe(at(2 * MINUTE));

    await rejects(w.ctx, "attach_remove", { attachment_id: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "attach_remove", {}, "invalid_input");
    // The link is untouched.
    expect((await attachmentRow(link.id as string)).deleted_at).toBeNull();
  });
});

describe("attachment_query", () => {
  it("lists live attachments newest first, for exactly the object named (by id, ref or key)", async () => {
    const w = await world("query");
    const p = await project(w.ctx, "APP");
    const t1 = await task(w.ctx, p.id as string, { title: "first" });
    const t2 = await task(w.ctx, p.id as string, { title: "second" });
    const made: Structured[] = [];
    for (let i = 0; i < 4; i++) {
      w.clock.advance(MINUTE);
      made.push(await attach(w.ctx, { object_type: "task", object_id: i % 2 ? t1.id : "APP-1", kind: "link", url: `https://example.com/${i}` }));
    }
    // Elsewhere: another task, the project, and a comment on the task.
    const onT2 = await attach(w.ctx, { object_type: "task", object_id: t2.ref, kind: "link", url: "https://example.com/t2" });
    const onProject = await attach(w.ctx, { object_type: "project", object_id: p.id, kind: "link", url: "https://example.com/p" });
    await ok(w.ctx, "attach_remove", { attachment_id: made[1]!.id });

    const expected = [made[3], made[2], made[0]].map((a) => a!.id);
    expect((await list(w.ctx, "task", "APP-1")).map((a) => a.id)).toEqual(expected);
    expect((await list(w.ctx, "task", t1.id as string)).map((a) => a.id)).toEqual(expected);
    expect((await list(w.ctx, "task", "app-1")).map((a) => a.id)).toEqual(expected);
    expect((await list(w.ctx, "task", "APP-1", { limit: 2 })).map((a) => a.id)).toEqual(expected.slice(0, 2));
    expect((await list(w.ctx, "task", "APP-2")).map((a) => a.id)).toEqual([onT2.id]);
    expect((await list(w.ctx, "project", "APP")).map((a) => a.id)).toEqual([onProject.id]);
    expect((await list(w.ctx, "project", p.id as string)).map((a) => a.id)).toEqual([onProject.id]);

    // Unknown objects, and notes, are not_found; bad limits are invalid_input.
    await rejects(w.ctx, "attachment_query", { object_type: "task", object_id: "APP-99" }, "not_found");
    await rejects(w.ctx, "attachment_query", { object_type: "decision", object_id: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "attachment_query", { object_type: "note", object_id: crypto.randomUUID() }, "not_found");
    await rejects(w.ctx, "attachment_query", { object_type: "task", object_id: "APP-1", limit: 0 }, "invalid_input");
    await rejects(w.ctx, "attachment_query", { object_type: "widget", object_id: "APP-1" }, "invalid_input");
  });

  it("accepts camelCase aliases", async () => {
    const w = await world("camel");
    const p = await project(w.ctx, "APP");
    await task(w.ctx, p.id as string);
    const a = (await ok(w.ctx, "attach_add", { objectType: "task", objectId: "APP-1", kind: "file", storagePath: "c/d.json", contentBase64: btoa("{}"), mimeType: "application/json" }))
      .attachment as Structured;
    expect(a).toMatchObject({ storage_path: "c/d.json", mime_type: "application/json", size_bytes: 2 });
    expect((await ok(w.ctx, "attachment_query", { objectType: "task", objectId: "APP-1" })).items).toEqual([a]);
    expect((await ok(w.ctx, "attach_remove", { attachmentId: a.id })).removed).toBe(true);
  });
});

describe("evidence gate", () => {
  it("requires_evidence refuses done until a link or file is attached, and again after attach_remove", async () => {
    const w = await world("evidence");
    const p = await project(w.ctx, "APP");
    const linkTask = await task(w.ctx, p.id as string, { title: "proved by a link", requires_evidence: true });
    const fileTask = await task(w.ctx, p.id as string, { title: "proved by a file", requires_evidence: true });
    const done = { patch: { status: "done" } };

    const e = await rejects(w.ctx, "task_update", { task_id: linkTask.ref, ...done }, "evidence_required");
    expect(e.hint).toMatch(/attach_add/);
    // Attachments elsewhere (the project, the other task, a comment on the task) do not count.
    await attach(w.ctx, { object_type: "project", object_id: "APP", kind: "link", url: "https://example.com/p" });
    await attach(w.ctx, { object_type: "task", object_id: fileTask.ref, kind: "link", url: "https://example.com/other" });
    const c = (await ok(w.ctx, "comment_add", { object_type: "task", object_id: linkTask.id, body: "here" })).comment as Structured;
    await attach(w.ctx, { object_type: "comment", object_id: c.id, kind: "link", url: "https://example.com/c" });
    await rejects(w.ctx, "task_update", { task_id: linkTask.ref, ...done }, "evidence_required");

    // A link on the task (attached by ref) satisfies it.
    await attach(w.ctx, { object_type: "task", object_id: linkTask.ref, kind: "link", url: "https://github.com/o/r/pull/7" });
    w.clock.advance(MINUTE);
    expect((await ok(w.ctx, "task_update", { task_id: linkTask.ref, ...done })).task).toMatchObject({ status: "done", done_at: at(MINUTE) });

    // A file satisfies it too; removed, it stops counting and done is refused again.
    const other = await attach(w.ctx, { object_type: "task", object_id: fileTask.id, kind: "file", storage_path: "evidence/run.log", content_base64: btoa("all green") });
    await ok(w.ctx, "attach_remove", { attachment_id: (await list(w.ctx, "task", fileTask.ref as string)).find((a) => a.kind === "link")!.id });
    const before = await ok(w.ctx, "task_get", { task_id: fileTask.ref });
    expect(before.evidence).toEqual({ code_refs: 0, attachments: 1 });
    await ok(w.ctx, "attach_remove", { attachment_id: other.id });
    expect((await ok(w.ctx, "task_get", { task_id: fileTask.ref })).evidence).toEqual({ code_refs: 0, attachments: 0 });
    await rejects(w.ctx, "task_update", { task_id: fileTask.ref, ...done }, "evidence_required");
    // Re-attaching the same stored file (by path, no content) restores the evidence.
    await attach(w.ctx, { object_type: "task", object_id: fileTask.id, kind: "file", storage_path: "evidence/run.log" });
    expect((await ok(w.ctx, "task_update", { task_id: fileTask.ref, ...done })).task.status).toBe("done");
  });
});

describe("stored files are never replaced", () => {
  it("a second inline upload to a used path is refused, and the first attachment keeps its bytes", async () => {
    const w = await world("no-overwrite");
    await project(w.ctx, "OW");
    const t = await task(w.ctx, "OW");
    const first = await attach(w.ctx, { object_type: "task", object_id: t.id, kind: "file", storage_path: "out/report.txt", content_base64: btoa("first") });
    const refused = await rejects(w.ctx, "attach_add", { object_type: "task", object_id: t.id, kind: "file", storage_path: "out/report.txt", content_base64: btoa("second!") }, "conflict");
    expect(refused.retryable).toBe(false);
    expect(refused.hint).toContain("expected_version: 1");
    expect(await storedText(w.id.tenantId, "out/report.txt")).toBe("first");
    // Attaching the stored file again by path alone is the way to reuse it.
    const again = await attach(w.ctx, { object_type: "task", object_id: t.id, kind: "file", storage_path: "out/report.txt" });
    expect(again.size_bytes).toBe(first.size_bytes);
  });
});

describe("attachment_orphans (cron)", () => {
  it("deletes an upload's object that never got its row once past the grace time, and keeps recorded, young and out-of-band objects", async () => {
    const HOUR = 60 * MINUTE;
    const resetCursor = () => env.DB.prepare(`DELETE FROM cron_cursors WHERE job = ?`).bind(ATTACHMENT_SWEEP_JOB).run();
    const w = await world("orphans");
    const other = await world("orphans-b");
    await project(w.ctx, "ORP");
    const kept = await attach(w.ctx, { object_type: "project", object_id: "ORP", kind: "file", storage_path: "reports/kept.txt", content_base64: b64(sampleBytes(40)) });
    const keptKey = await objectKey(w.id.tenantId, "reports/kept.txt");
    // What attach_add leaves when it dies between its R2 put and its batch: an upload key no row names.
    const lost = `${uploadPrefix(w.id.tenantId)}${crypto.randomUUID()}/reports/kept.txt`;
    const lostElsewhere = `${uploadPrefix(other.id.tenantId)}${crypto.randomUUID()}/lost.bin`;
    // A file put in the bucket out of band is attached by its path later: not an upload, never swept.
    const outOfBand = `${w.id.tenantId}/reports/manual.txt`;
    for (const key of [lost, lostElsewhere, outOfBand]) await env.BLOBS.put(key, "bytes");

    // Within the grace time nothing goes: the upload may still be committing.
    await resetCursor();
    expect(await sweepRowlessUploads(env as unknown as Env, new Date(), 1000)).toMatch(/0 without a row deleted; all tenants swept/);
    expect(await env.BLOBS.head(lost)).not.toBeNull();

    await resetCursor();
    const report = await sweepRowlessUploads(env as unknown as Env, new Date(Date.now() + 2 * HOUR), 1000);
    expect(report).toMatch(/without a row deleted; all tenants swept/);
    expect(await env.BLOBS.head(lost)).toBeNull();
    expect(await env.BLOBS.head(lostElsewhere)).toBeNull();
    expect(await env.BLOBS.head(keptKey)).not.toBeNull();
    expect(await env.BLOBS.head(outOfBand)).not.toBeNull();
    expect((await list(w.ctx, "project", "ORP")).map((a) => a.id)).toEqual([kept.id]);
    expect(await blobBytes(keptKey)).toEqual(sampleBytes(40));
  });

  it("walks a bounded number of pages per run and resumes where it stopped", async () => {
    await world("walk-a");
    await world("walk-b");
    await env.DB.prepare(`DELETE FROM cron_cursors WHERE job = ?`).bind(ATTACHMENT_SWEEP_JOB).run();
    const first = await sweepRowlessUploads(env as unknown as Env, new Date(Date.now() + 2 * 60 * MINUTE), 1);
    expect(first).toMatch(/; more next run$/);
    const cursor = await env.DB.prepare(`SELECT cursor FROM cron_cursors WHERE job = ?`).bind(ATTACHMENT_SWEEP_JOB).first<{ cursor: string }>();
    expect(JSON.parse(cursor!.cursor).tenant).not.toBe("");
  });
});
