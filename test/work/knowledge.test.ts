/** Knowledge: knowledge_write, knowledge_update, knowledge_search, and notes as targets elsewhere. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { backfillEmbeddings } from "../../src/search/semantic";
import { call, count, newWorld, ok, refusedWithoutWrites, settle, type Structured, type World } from "../support/helpers";

const T0 = "2030-01-01T00:00:00.000Z";
const world = (name: string) => newWorld(`wkn-${name}`, { start: T0 });
const ids = (items: Structured[]) => items.map((i) => i.id as string);

const embeddingRow = (w: World, id: string) =>
  env.DB.prepare(`SELECT status, model, content_hash, attempts FROM embeddings WHERE tenant_id = ? AND object_type = 'note' AND object_id = ?`)
    .bind(w.id.tenantId, id)
    .first<{ status: string; model: string; content_hash: string; attempts: number }>();

const noteState = (w: World) => () =>
  Promise.all([
    count("SELECT COUNT(*) AS n FROM knowledge_notes WHERE tenant_id = ?", w.id.tenantId),
    env.DB.prepare("SELECT id, title, body, tags, version FROM knowledge_notes WHERE tenant_id = ? ORDER BY seq")
      .bind(w.id.tenantId)
      .all()
      .then((r) => r.results),
    count("SELECT COUNT(*) AS n FROM embeddings WHERE tenant_id = ?", w.id.tenantId),
    count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ?", w.id.tenantId),
  ]);

describe("knowledge_write", () => {
  it("stores the note, answers with embedding_status pending, and embeds it after the response", async () => {
    const w = await world("write");
    await ok(w.ctx, "project_create", { title: "Api", key: "API" });
    const r = await ok(w.ctx, "knowledge_write", { body: "# Restoring D1\n\nUse a time travel bookmark.", kind: "runbook", project_id: "api", tags: ["D1", "ops", "d1"] });
    expect(r.embedding_status).toBe("pending");
    expect(r.warnings).toEqual([]);
    expect(r.note).toMatchObject({
      title: "Restoring D1",
      kind: "runbook",
      tags: ["d1", "ops"],
      version: 1,
      embedding_status: "pending",
      body: "# Restoring D1\n\nUse a time travel bookmark.",
      created_by: w.id.actorId,
      created_at: T0,
      updated_at: T0,
    });
    expect(r.note.project_id).toMatch(/^[0-9a-f-]{36}$/);
    // The write queued the embedding (its answer says pending); the work after the response may
    // already have run by now, so only the queue row is certain here.
    expect(await embeddingRow(w, r.note.id)).not.toBeNull();
    await settle(w.ctx);
    expect(await embeddingRow(w, r.note.id)).toMatchObject({ status: "ready", model: "local-hash-512", attempts: 0 });
    expect(await count("SELECT COUNT(*) AS n FROM local_vectors WHERE namespace = ? AND id = ?", w.id.tenantId, `note:${r.note.id}`)).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'knowledge.written' AND object_type = 'note' AND object_id = ?", w.id.tenantId, r.note.id)).toBe(1);
  });

  it("titles an untitled note from its first line, and warns (without refusing) about a secret in it", async () => {
    const w = await world("title");
    const r = await ok(w.ctx, "knowledge_write", { body: "\n\n## Rotating keys\nThe old one was AKIAIOSFODNN7EXAMPLE" });
    expect(r.note.title).toBe("Rotating keys");
    expect(r.note.kind).toBe("note");
    expect(r.note.project_id).toBeNull();
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/secret/);
  });

  it("refuses bad input and an unknown project, writing nothing", async () => {
    const w = await world("refuse");
    const state = noteState(w);
    await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "" }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "   " }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "x".repeat(64 * 1024 + 1) }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "x", kind: "essay" }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "x", tags: ["two words"] }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "x", tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "x", colour: "blue" }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "x", project_id: "NOPE" }, "not_found", state);
  });

  it("replays a retried write (same idempotency_key) instead of writing twice", async () => {
    const w = await world("replay");
    const first = await ok(w.ctx, "knowledge_write", { body: "Once only", idempotency_key: "k1" });
    const again = await ok(w.ctx, "knowledge_write", { body: "Once only", idempotency_key: "k1" });
    expect(again.idempotent_replay).toBe(true);
    expect(again.note.id).toBe(first.note.id);
    expect(await count("SELECT COUNT(*) AS n FROM knowledge_notes WHERE tenant_id = ?", w.id.tenantId)).toBe(1);
  });
});

describe("knowledge_update", () => {
  it("re-embeds only when the title or body changes; a tags-only patch keeps the vector", async () => {
    const w = await world("update");
    const { note } = await ok(w.ctx, "knowledge_write", { body: "Caching GitHub responses with ETags", tags: ["github"] });
    await settle(w.ctx);
    const ready = await embeddingRow(w, note.id);
    expect(ready?.status).toBe("ready");

    const tagsOnly = await ok(w.ctx, "knowledge_update", { note_id: note.id, patch: { tags: ["github", "http"] } });
    expect(tagsOnly).toMatchObject({ changed: ["tags"], reembedding: false, note: { version: 2, tags: ["github", "http"], embedding_status: "ready" } });
    expect(await embeddingRow(w, note.id)).toEqual(ready);

    w.clock.advance(60_000);
    const body = await ok(w.ctx, "knowledge_update", { note_id: note.id, patch: { body: "Caching GitHub responses with ETags and If-None-Match" } });
    expect(body).toMatchObject({ changed: ["body"], reembedding: true, note: { version: 3, embedding_status: "pending", updated_at: "2030-01-01T00:01:00.000Z" } });
    // Re-queued with the new text's hash (embedded after the response, perhaps already by now).
    const queued = await embeddingRow(w, note.id);
    expect(queued?.content_hash).not.toBe(ready?.content_hash);
    await settle(w.ctx);
    expect((await embeddingRow(w, note.id))?.status).toBe("ready");

    const same = await ok(w.ctx, "knowledge_update", { note_id: note.id, patch: { tags: ["http", "github"] } });
    expect(same).toMatchObject({ changed: [], reembedding: false, note: { version: 3 } });
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND verb = 'knowledge.updated'", w.id.tenantId)).toBe(2);
  });

  it("refuses a stale expected_version, an empty patch, unknown fields and another tenant's note, writing nothing", async () => {
    const w = await world("update-refuse");
    const { note } = await ok(w.ctx, "knowledge_write", { body: "v1" });
    await ok(w.ctx, "knowledge_update", { note_id: note.id, patch: { body: "v2" }, expected_version: 1 });
    await settle(w.ctx);
    const state = noteState(w);
    const stale = await refusedWithoutWrites(w.ctx, "knowledge_update", { note_id: note.id, patch: { body: "from an old read" }, expected_version: 1 }, "version_conflict", state);
    expect(stale.message).toContain("version 2");
    await refusedWithoutWrites(w.ctx, "knowledge_update", { note_id: note.id, patch: {} }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "knowledge_update", { note_id: note.id, patch: { kind: "runbook" } }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "knowledge_update", { note_id: note.id, patch: { body: "" } }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "knowledge_update", { note_id: crypto.randomUUID(), patch: { body: "x" } }, "not_found", state);

    const b = await world("update-other");
    const theirs = await refusedWithoutWrites(b.ctx, "knowledge_update", { note_id: note.id, patch: { body: "hijack" } }, "not_found", state);
    expect(theirs.hint).toMatch(/knowledge_search/);
  });
});

describe("knowledge_search", () => {
  async function library(w: World): Promise<Record<string, string>> {
    await ok(w.ctx, "project_create", { title: "Api", key: "API" });
    const write = async (args: Record<string, unknown>) => (await ok(w.ctx, "knowledge_write", args)).note.id as string;
    const notes = {
      deploy: await write({ title: "Deployment runbook", body: "Deploy the worker with wrangler from CI after every merge.", kind: "runbook", project_id: "API", tags: ["ops", "ci"] }),
      cache: await write({ title: "ETag caching", body: "GitHub answers 304 to conditional requests; those do not count against the rate limit.", kind: "finding", tags: ["github"] }),
      flaky: await write({
        title: "Flaky claims test",
        body: "The race suite was flaky because lease alarms fired late. Deploy notes mention it too.",
        kind: "finding",
        project_id: "API",
        tags: ["ops"],
      }),
    };
    await settle(w.ctx);
    return notes;
  }

  it("ranks by words and meaning fused (mode hybrid), with snippets, similarity and the lexical rank", async () => {
    const w = await world("hybrid");
    const n = await library(w);
    const r = await ok(w.ctx, "knowledge_search", { q: "deploy" });
    expect(r).toMatchObject({ mode: "hybrid", match: "words", embedder: "local-hash-512", note: "" });
    expect(ids(r.items)).toEqual([n.deploy, n.flaky]);
    expect(r.items[0]).toMatchObject({ title: "Deployment runbook", lexical_rank: 1, embedding_status: "ready" });
    expect(r.items[0].similarity).toBeGreaterThan(0.2);
    expect(r.items[0].body).toBeUndefined();
    expect(r.items[0].snippet).toContain("Deploy the worker");
    expect(r.items[0].score).toBeGreaterThan(r.items[1].score);

    // The local embedder is lexical (word pieces, not meaning): finding text by meaning alone is
    // tested against a stand-in model in search-adapters.test.ts.
  });

  it("lexical_only ranks by words, then substrings (trigrams), then titles for very short text", async () => {
    const w = await world("lexical");
    const n = await library(w);
    const words = await ok(w.ctx, "knowledge_search", { q: "rate limit", lexical_only: true });
    expect(words).toMatchObject({ mode: "lexical", match: "words", embedder: "" });
    expect(ids(words.items)).toEqual([n.cache]);
    expect(words.items[0].similarity).toBeNull();

    const substring = await ok(w.ctx, "knowledge_search", { q: "ditional req", lexical_only: true });
    expect(substring.match).toBe("substring");
    expect(ids(substring.items)).toEqual([n.cache]);

    const title = await ok(w.ctx, "knowledge_search", { q: "ET", lexical_only: true });
    expect(title.match).toBe("title");
    expect(ids(title.items)).toEqual([n.cache]);

    const none = await ok(w.ctx, "knowledge_search", { q: "kubernetes", lexical_only: true });
    expect(none).toMatchObject({ items: [], match: "none" });
  });

  it("filters by project, kind and tags (every tag), and honours top_k and min_similarity", async () => {
    const w = await world("filters");
    const n = await library(w);
    expect(ids((await ok(w.ctx, "knowledge_search", { q: "deploy", project_id: "api" })).items).sort()).toEqual([n.deploy, n.flaky].sort());
    expect(ids((await ok(w.ctx, "knowledge_search", { q: "deploy", kind: "runbook" })).items)).toEqual([n.deploy]);
    expect(ids((await ok(w.ctx, "knowledge_search", { q: "deploy", tags: ["ops", "CI"] })).items)).toEqual([n.deploy]);
    expect((await ok(w.ctx, "knowledge_search", { q: "deploy", top_k: 1 })).items).toHaveLength(1);
    // min_similarity drops vector matches; word matches stay, with no similarity.
    const strict = await ok(w.ctx, "knowledge_search", { q: "deploy", min_similarity: 0.99 });
    expect(ids(strict.items).sort()).toEqual([n.deploy, n.flaky].sort());
    expect(strict.items.map((i: Structured) => i.similarity)).toEqual([null, null]);
  });

  it("falls back to lexical and says why when semantic search is off", async () => {
    const w = await world("off");
    const n = await library(w);
    const off = { ...w.ctx, env: { ...w.ctx.env, SEMANTIC_SEARCH: "off" } };
    const r = await ok(off, "knowledge_search", { q: "deploy" });
    expect(r.mode).toBe("lexical");
    expect(r.note).toMatch(/switched off/);
    expect(ids(r.items)[0]).toBe(n.deploy);
  });

  it("finds a note whose embedding is still pending by its words, and says how many wait", async () => {
    const w = await world("pending");
    const off = { ...w.ctx, env: { ...w.ctx.env, SEMANTIC_SEARCH: "off" } };
    const { note } = await ok(off, "knowledge_write", { body: "Postmortem: the queue consumer stalled" });
    await settle(off);
    expect((await embeddingRow(w, note.id))?.status).toBe("pending");
    const r = await ok(w.ctx, "knowledge_search", { q: "postmortem" });
    expect(r.mode).toBe("hybrid");
    expect(ids(r.items)).toEqual([note.id]);
    expect(r.items[0]).toMatchObject({ embedding_status: "pending", similarity: null, lexical_rank: 1 });
    expect(r.note).toMatch(/1 note\(s\) still waiting/);
  });

  it("without q lists the newest notes (filters and top_k apply); ids reads those notes whole; another tenant's ids read nothing", async () => {
    const w = await world("list");
    const n = await library(w);
    const listed = await ok(w.ctx, "knowledge_search", {});
    expect(listed).toMatchObject({ mode: "list", match: "none", embedder: "", note: "" });
    expect(ids(listed.items)).toEqual([n.flaky, n.cache, n.deploy]);
    expect(listed.items[0]).not.toHaveProperty("body");
    expect(listed.items[0]).toMatchObject({ title: "Flaky claims test", score: 0, similarity: null, lexical_rank: null });
    expect(listed.items[0].snippet).toMatch(/^The race suite was flaky/);
    expect(ids((await ok(w.ctx, "knowledge_search", { kind: "finding", top_k: 1 })).items)).toEqual([n.flaky]);
    expect(ids((await ok(w.ctx, "knowledge_search", { project_id: "API", tags: ["ci"] })).items)).toEqual([n.deploy]);
    const read = await ok(w.ctx, "knowledge_search", { ids: [n.deploy, n.cache, n.deploy, "no-such-note"] });
    expect(read.mode).toBe("list");
    expect(ids(read.items)).toEqual([n.cache, n.deploy]);
    expect(read.items[1].body).toBe("Deploy the worker with wrangler from CI after every merge.");
    const b = await world("list-other");
    expect((await ok(b.ctx, "knowledge_search", { ids: [n.deploy] })).items).toEqual([]);
    expect((await ok(b.ctx, "knowledge_search", {})).items).toEqual([]);
  });

  it("never returns another tenant's notes, by words or by meaning", async () => {
    const a = await world("iso-a");
    await library(a);
    const b = await world("iso-b");
    for (const args of [{ q: "deploy" }, { q: "wrangler ci" }, { q: "deploy", lexical_only: true }, { q: "ditional req", lexical_only: true }, { q: "ET" }]) {
      expect((await ok(b.ctx, "knowledge_search", args)).items, JSON.stringify(args)).toEqual([]);
    }
  });

  it("handles more candidates than D1 binds parameters (100): bulk backfill, then a search over them all", async () => {
    const w = await world("many");
    const insert = env.DB.prepare(`INSERT INTO knowledge_notes (id, tenant_id, kind, title, body, tags, version, created_by, created_at, updated_by, updated_at)
                                   VALUES (?, ?, 'note', ?, 'the shared word is zephyr', '[]', 1, ?, ?, ?, ?)`);
    const queue = env.DB.prepare(`INSERT INTO embeddings (tenant_id, object_type, object_id, content_hash, status, updated_at) VALUES (?, 'note', ?, 'x', 'pending', ?)`);
    const noteIds = Array.from({ length: 150 }, () => crypto.randomUUID());
    await env.DB.batch(noteIds.flatMap((id, i) => [insert.bind(id, w.id.tenantId, `Zephyr ${i}`, w.id.actorId, T0, w.id.actorId, T0), queue.bind(w.id.tenantId, id, T0)]));
    const report = await backfillEmbeddings(env, new Date(T0));
    expect(report).toMatch(/^1[5-9]\d embedded|^[2-9]\d\d embedded/);
    expect(await count("SELECT COUNT(*) AS n FROM embeddings WHERE tenant_id = ? AND status = 'ready'", w.id.tenantId)).toBe(150);
    const r = await ok(w.ctx, "knowledge_search", { q: "zephyr", top_k: 50 });
    expect(r.mode).toBe("hybrid");
    expect(r.items).toHaveLength(50);
    const lexical = await ok(w.ctx, "knowledge_search", { q: "zephyr", top_k: 50, lexical_only: true });
    expect(lexical.items).toHaveLength(50);
  });

  it("refuses bad input", async () => {
    const w = await world("search-bad");
    for (const args of [
      { q: "" },
      { ids: [] },
      { ids: ["a"], q: "deploy" },
      { ids: Array.from({ length: 51 }, (_, i) => `n${i}`) },
      { q: "x".repeat(501) },
      { q: "a", top_k: 0 },
      { q: "a", top_k: 51 },
      { q: "a", min_similarity: 2 },
      { q: "a", kind: "essay" },
      { q: "a", extra: 1 },
      { q: "\u0000x" },
    ]) {
      const r = await call(w.ctx, "knowledge_search", args);
      expect(r.error?.code, JSON.stringify(args)).toBe("invalid_input");
    }
    expect((await call(w.ctx, "knowledge_search", { q: "a", project_id: "NOPE" })).error.code).toBe("not_found");
    // FTS syntax in user text is data, not query syntax.
    for (const q of ['"unbalanced', "NEAR(a b)", "a AND OR NOT", "*", "col:value", "'; DROP TABLE knowledge_notes; --"]) {
      const r = await call(w.ctx, "knowledge_search", { q });
      expect(r.ok, q).toBe(true);
    }
  });
});

describe("notes as targets of comments, attachments, code refs and the project brief", () => {
  it("comments on, attaches to and code-refs a note; the brief lists the project's notes", async () => {
    const w = await world("targets");
    await ok(w.ctx, "project_create", { title: "Api", key: "API" });
    const { note } = await ok(w.ctx, "knowledge_write", { title: "Runbook", body: "steps", kind: "runbook", project_id: "API" });
    const c = await ok(w.ctx, "comment_add", { object_type: "note", object_id: note.id, body: "Step 2 is outdated" });
    expect((await ok(w.ctx, "comment_query", { object_type: "note", object_id: note.id })).items.map((i: Structured) => i.id)).toEqual([c.comment.id]);
    await ok(w.ctx, "attach_add", { object_type: "note", object_id: note.id, kind: "link", url: "https://example.com/runbook" });
    expect((await ok(w.ctx, "attachment_query", { object_type: "note", object_id: note.id })).items).toHaveLength(1);
    await ok(w.ctx, "repo_register", { remote_url: "https://github.com/acme/api.git" });
    await ok(w.ctx, "code_ref_add", { object_type: "note", object_id: note.id, ref_type: "branch", branch: "main", repository_id: "acme/api" });
    expect((await ok(w.ctx, "code_ref_query", { object_type: "note", object_id: note.id })).items).toHaveLength(1);
    const brief = await ok(w.ctx, "project_brief", { project: "API" });
    expect(brief.knowledge).toEqual([{ id: note.id, title: "Runbook", kind: "runbook", updated_at: T0 }]);
    expect(await count("SELECT COUNT(*) AS n FROM activity WHERE tenant_id = ? AND object_type = 'note' AND object_id = ? AND verb = 'comment.added'", w.id.tenantId, note.id)).toBe(1);
  });

  it("the global search finds notes by their words as written and as updated", async () => {
    const w = await world("global");
    const { note } = await ok(w.ctx, "knowledge_write", { title: "Quokka migration plan", body: "Move the marsupial tables first." });
    const found = await ok(w.ctx, "search", { q: "quokka" });
    expect(found.items.map((i: Structured) => [i.object_type, i.object_id])).toEqual([["note", note.id]]);
    await ok(w.ctx, "knowledge_update", { note_id: note.id, patch: { title: "Wombat migration plan" } });
    expect((await ok(w.ctx, "search", { q: "quokka" })).items).toEqual([]);
    expect((await ok(w.ctx, "search", { q: "wombat" })).items.map((i: Structured) => i.object_id)).toEqual([note.id]);
  });

  it("another tenant's note is not_found as a target", async () => {
    const a = await world("targets-a");
    const { note } = await ok(a.ctx, "knowledge_write", { body: "private" });
    const b = await world("targets-b");
    expect((await call(b.ctx, "comment_add", { object_type: "note", object_id: note.id, body: "hi" })).error.code).toBe("not_found");
    expect((await call(b.ctx, "attach_add", { object_type: "note", object_id: note.id, kind: "link", url: "https://example.com" })).error.code).toBe("not_found");
  });
});
