/**
 * Memory that knows when the code moved: notes, decisions and code refs linked to paths of a
 * repository, and change-ledger decisions, get a stale mark when a push to the default branch
 * changes one of their files; writing or confirming the object clears it. Pushes are delivered
 * through processDelivery, as GitHub's webhook would deliver them.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Ctx } from "../../../src/core/context";
import { sha256Hex } from "../../../src/db/ids";
import { processDelivery, recordDelivery } from "../../../src/server/webhooks";
import { fails, newWorld, ok, refusedWithoutWrites, type Structured, type World } from "../../support/helpers";

const REPO = "acme/api";
const T0 = "2026-06-01T12:00:00.000Z";
const sha = (c: string) => c.repeat(40);

interface Commit {
  sha: string;
  at: string;
  files: string[];
}

/** A push of `commits` to `ref` of `slug`, recorded and processed for the ctx's tenant. */
async function push(ctx: Ctx, commits: Commit[], o: { slug?: string; ref?: string } = {}) {
  const slug = o.slug ?? REPO;
  const payload = {
    ref: o.ref ?? "refs/heads/main",
    before: "0".repeat(40),
    after: commits[commits.length - 1]!.sha,
    repository: { full_name: slug, html_url: `https://github.com/${slug}`, default_branch: "main" },
    pusher: { name: "dev" },
    commits: commits.map((c) => ({ id: c.sha, timestamp: c.at, message: "change", author: { name: "Dev", email: "dev@example.com" }, added: [], modified: c.files, removed: [] })),
    // Each delivery its own body: the same body under another id is a duplicate and not processed.
    nonce: crypto.randomUUID(),
  };
  const raw = JSON.stringify(payload);
  const deliveryId = `memory-${crypto.randomUUID()}`;
  await recordDelivery(env, { tenantId: ctx.tenantId, deliveryId, event: "push", payload, rawPayload: raw, contentHash: await sha256Hex(raw) }, new Date());
  const result = await processDelivery(env, ctx.tenantId, deliveryId, new Date(), payload);
  expect(result?.status).toBe("processed");
  return result!;
}

async function world(prefix: string): Promise<World> {
  const w = await newWorld(prefix, { start: T0 });
  await ok(w.ctx, "repo_register", { slug: REPO, default_branch: "main" });
  return w;
}

async function note(ctx: Ctx, body: string, paths?: string[]): Promise<Structured> {
  return ok(ctx, "knowledge_write", { body, ...(paths ? { paths } : {}) });
}

/** The note as knowledge_search reads it. */
async function read(ctx: Ctx, id: string, q: string): Promise<Structured> {
  const found = (await ok(ctx, "knowledge_search", { q, lexical_only: true, top_k: 50 })).items.find((n: Structured) => n.id === id);
  expect(found, `note ${id} found by '${q}'`).toBeDefined();
  return found;
}

describe("knowledge_write", () => {
  it("links paths and globs to the tenant's only repository, or to the one named owner/name:, normalized", async () => {
    const w = await world("mem-write");
    const n = await note(w.ctx, "Login flow notes", ["src/auth/", "./README.md", "acme/api:src/auth/**"]);
    expect(n.paths).toEqual(["acme/api:README.md", "acme/api:src/auth/**"]);
    expect(n.note.stale).toBeNull();
    expect((await note(w.ctx, "No paths here")).paths).toEqual([]);
  });

  it("refuses a bad pattern, an unknown repository and a path with no repository to go to, writing nothing", async () => {
    const w = await world("mem-write-bad");
    const state = async () => (await env.DB.prepare(`SELECT COUNT(*) AS n FROM knowledge_notes WHERE tenant_id = ?`).bind(w.id.tenantId).first<{ n: number }>())!.n;
    await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "x", paths: ["../etc/passwd"] }, "invalid_input", state);
    await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "x", paths: ["acme/nope:src/**"] }, "not_found", state);
    await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "x", paths: Array.from({ length: 51 }, (_, i) => `f${i}`) }, "invalid_input", state);
    // With two repositories, a bare path names neither.
    await ok(w.ctx, "repo_register", { slug: "acme/web", default_branch: "main" });
    const err = await refusedWithoutWrites(w.ctx, "knowledge_write", { body: "x", paths: ["src/**"] }, "invalid_input", state);
    expect(err.hint).toMatch(/acme\/api:src\/auth/);
    expect((await note(w.ctx, "web notes", ["acme/web:src/**"])).paths).toEqual(["acme/web:src/**"]);
  });

  it("links a project's note to the project's primary repository", async () => {
    const w = await world("mem-write-project");
    await ok(w.ctx, "repo_register", { slug: "acme/web", default_branch: "main" });
    await ok(w.ctx, "project_create", { title: "Web", key: "WEB" });
    await ok(w.ctx, "repo_link", { project_id: "WEB", repository_id: "acme/web", role: "primary" });
    const n = await ok(w.ctx, "knowledge_write", { body: "Web build", project_id: "WEB", paths: ["build/**"] });
    expect(n.paths).toEqual(["acme/web:build/**"]);
  });
});

describe("a push to the default branch", () => {
  it("marks a linked note stale with the newest commit that changed a covered file; other notes stay as they were", async () => {
    const w = await world("mem-push");
    const linked = (await note(w.ctx, "Sessions are refreshed in middleware", ["src/auth/**"])).note;
    const exact = (await note(w.ctx, "Sessions cookie name", ["src/auth/cookie.ts"])).note;
    const elsewhere = (await note(w.ctx, "Sessions docs", ["docs/**"])).note;
    const unlinked = (await note(w.ctx, "Sessions in general")).note;
    // A feature branch marks nothing: its commits may never land.
    await push(w.ctx, [{ sha: sha("e"), at: "2026-06-02T09:00:00Z", files: ["src/auth/login.ts"] }], { ref: "refs/heads/feature" });
    expect((await read(w.ctx, linked.id, "Sessions")).stale).toBeNull();

    const r = await push(w.ctx, [
      { sha: sha("a"), at: "2026-06-02T10:00:00Z", files: ["src/auth/login.ts", "src/auth/cookie.ts"] },
      { sha: sha("b"), at: "2026-06-02T11:00:00Z", files: ["src/auth/session.ts", "README.md"] },
    ]);
    expect(r.note).toMatch(/2 note\(s\), decision\(s\) or code ref\(s\) marked stale/);
    expect((await read(w.ctx, linked.id, "Sessions")).stale).toEqual({ commit: sha("b"), path: "src/auth/session.ts", at: "2026-06-02T11:00:00.000Z" });
    expect((await read(w.ctx, exact.id, "Sessions")).stale).toEqual({ commit: sha("a"), path: "src/auth/cookie.ts", at: "2026-06-02T10:00:00.000Z" });
    expect((await read(w.ctx, elsewhere.id, "Sessions")).stale).toBeNull();
    expect((await read(w.ctx, unlinked.id, "Sessions")).stale).toBeNull();
    // An older commit pushed later does not replace the newer mark.
    await push(w.ctx, [{ sha: sha("c"), at: "2026-06-02T08:00:00Z", files: ["src/auth/login.ts"] }]);
    expect((await read(w.ctx, linked.id, "Sessions")).stale.commit).toBe(sha("b"));
    // The result says so in words too.
    const found = await ok(w.ctx, "knowledge_search", { q: "Sessions", lexical_only: true });
    expect(found.items.filter((n: Structured) => n.stale !== null)).toHaveLength(2);
  });

  it("leaves another tenant's note on the same repository and path alone", async () => {
    const a = await world("mem-tenant-a");
    const b = await world("mem-tenant-b");
    const mine = (await note(a.ctx, "Billing rounding", ["src/billing/**"])).note;
    const theirs = (await note(b.ctx, "Billing rounding", ["src/billing/**"])).note;
    await push(a.ctx, [{ sha: sha("1"), at: "2026-06-02T10:00:00Z", files: ["src/billing/round.ts"] }]);
    expect((await read(a.ctx, mine.id, "Billing")).stale).not.toBeNull();
    expect((await read(b.ctx, theirs.id, "Billing")).stale).toBeNull();
    const rows = await env.DB.prepare(`SELECT COUNT(*) AS n FROM memory_stale_marks WHERE tenant_id = ?`).bind(b.id.tenantId).first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });

  it("does not mark a note written after the commit it would be marked by", async () => {
    const w = await world("mem-after");
    w.clock.set("2026-06-03T00:00:00.000Z");
    const n = (await note(w.ctx, "Cache eviction", ["src/cache/**"])).note;
    await push(w.ctx, [{ sha: sha("d"), at: "2026-06-02T10:00:00Z", files: ["src/cache/lru.ts"] }]);
    expect((await read(w.ctx, n.id, "Cache")).stale).toBeNull();
  });
});

describe("knowledge_update", () => {
  it("clears the mark when the note is updated; a redelivered old commit does not mark it again, a newer one does", async () => {
    const w = await world("mem-update");
    const n = (await note(w.ctx, "Rate limits live in the gateway", ["src/gateway/**"])).note;
    const old = { sha: sha("a"), at: "2026-06-02T10:00:00Z", files: ["src/gateway/limits.ts"] };
    await push(w.ctx, [old]);
    expect((await read(w.ctx, n.id, "gateway")).stale).not.toBeNull();
    w.clock.set("2026-06-03T00:00:00.000Z");
    const updated = await ok(w.ctx, "knowledge_update", { note_id: n.id, patch: { body: "Rate limits live in the gateway, per key" } });
    expect(updated.changed).toEqual(["body"]);
    expect(updated.note.stale).toBeNull();
    expect(updated.paths).toEqual(["acme/api:src/gateway/**"]);
    await push(w.ctx, [old]);
    expect((await read(w.ctx, n.id, "gateway")).stale).toBeNull();
    await push(w.ctx, [{ sha: sha("f"), at: "2026-06-04T10:00:00Z", files: ["src/gateway/limits.ts"] }]);
    expect((await read(w.ctx, n.id, "gateway")).stale.commit).toBe(sha("f"));
  });

  it("still_holds confirms the note without changing it", async () => {
    const w = await world("mem-confirm");
    const n = (await note(w.ctx, "Queue retries back off", ["src/queue/**"])).note;
    await push(w.ctx, [{ sha: sha("a"), at: "2026-06-02T10:00:00Z", files: ["src/queue/retry.ts"] }]);
    w.clock.set("2026-06-03T00:00:00.000Z");
    const confirmed = await ok(w.ctx, "knowledge_update", { note_id: n.id, still_holds: true });
    expect(confirmed).toMatchObject({ changed: [], reembedding: false });
    expect(confirmed.note).toMatchObject({ version: n.version, stale: null });
    expect((await read(w.ctx, n.id, "Queue")).stale).toBeNull();
    // Nothing to confirm is no error either.
    expect((await ok(w.ctx, "knowledge_update", { note_id: n.id, still_holds: true })).changed).toEqual([]);
  });

  it("replaces the linked paths ([] unlinks), bumps the version, and refuses a call with nothing to do", async () => {
    const w = await world("mem-relink");
    const n = (await note(w.ctx, "Search ranking", ["src/search/**"])).note;
    const moved = await ok(w.ctx, "knowledge_update", { note_id: n.id, paths: ["src/rank/", "src/search/**"] });
    expect(moved.changed).toEqual(["paths"]);
    expect(moved.paths).toEqual(["acme/api:src/rank/**", "acme/api:src/search/**"]);
    expect(moved.note.version).toBe(n.version + 1);
    expect((await ok(w.ctx, "knowledge_update", { note_id: n.id, paths: ["src/search/**", "src/rank/**"] })).changed).toEqual([]);
    const unlinked = await ok(w.ctx, "knowledge_update", { note_id: n.id, paths: [] });
    expect(unlinked).toMatchObject({ changed: ["paths"], paths: [] });
    await push(w.ctx, [{ sha: sha("a"), at: "2026-06-02T10:00:00Z", files: ["src/search/bm25.ts"] }]);
    expect((await read(w.ctx, n.id, "ranking")).stale).toBeNull();
    expect((await fails(w.ctx, "knowledge_update", { note_id: n.id })).code).toBe("invalid_input");
    expect((await fails(w.ctx, "knowledge_update", { note_id: n.id, paths: ["/abs"] })).code).toBe("invalid_input");
  });

  it("does not let another tenant confirm or relink a note", async () => {
    const a = await world("mem-upd-a");
    const b = await world("mem-upd-b");
    const n = (await note(a.ctx, "Secrets rotate monthly", ["src/secrets/**"])).note;
    await push(a.ctx, [{ sha: sha("a"), at: "2026-06-02T10:00:00Z", files: ["src/secrets/rotate.ts"] }]);
    expect((await fails(b.ctx, "knowledge_update", { note_id: n.id, still_holds: true })).code).toBe("not_found");
    expect((await fails(b.ctx, "knowledge_update", { note_id: n.id, paths: [] })).code).toBe("not_found");
    expect((await read(a.ctx, n.id, "Secrets")).stale).not.toBeNull();
  });
});

describe("decision_log", () => {
  it("links a decision's paths; a push marks it, decision_query shows it, decision_set_status (even to its status) clears it", async () => {
    const w = await world("mem-decision");
    const d = await ok(w.ctx, "decision_log", { title: "Token storage", choice: "Keep tokens in KV", paths: ["src/tokens/**"] });
    expect(d.paths).toEqual(["acme/api:src/tokens/**"]);
    expect(d.decision.stale).toBeNull();
    const other = await ok(w.ctx, "decision_log", { title: "Token format", choice: "Opaque tokens" });
    await push(w.ctx, [{ sha: sha("9"), at: "2026-06-02T10:00:00Z", files: ["src/tokens/kv.ts"] }]);
    const listed = await ok(w.ctx, "decision_query", {});
    const byId = new Map(listed.items.map((x: Structured) => [x.id, x]));
    expect((byId.get(d.decision.id) as Structured).stale).toEqual({ commit: sha("9"), path: "src/tokens/kv.ts", at: "2026-06-02T10:00:00.000Z" });
    expect((byId.get(other.decision.id) as Structured).stale).toBeNull();
    expect((await ok(w.ctx, "decision_query", { q: "Token storage" })).items[0].stale).not.toBeNull();
    w.clock.set("2026-06-03T00:00:00.000Z");
    const confirmed = await ok(w.ctx, "decision_set_status", { decision_id: d.decision.id, status: "accepted" });
    expect(confirmed).toMatchObject({ changed: false, decision: { stale: null } });
    expect((await ok(w.ctx, "decision_query", {})).items.every((x: Structured) => x.stale === null)).toBe(true);
    // Another tenant's decision_set_status does not reach it.
    const b = await world("mem-decision-b");
    expect((await fails(b.ctx, "decision_set_status", { decision_id: d.decision.id, status: "rejected" })).code).toBe("not_found");
  });
});

describe("code_ref_add", () => {
  it("links a code ref's paths to its repository; a later push marks it, its own commit does not, code_ref_update clears it", async () => {
    const w = await world("mem-coderef");
    await ok(w.ctx, "project_create", { title: "API", key: "API" });
    const task = (await ok(w.ctx, "task_create", { project_id: "API", title: "Cache headers" })).task;
    const ref = await ok(w.ctx, "task_code_ref", { task_id: task.id, ref_type: "commit", repository_id: REPO, sha: sha("c"), paths: ["src/http/cache.ts"] });
    expect(ref.paths).toEqual(["acme/api:src/http/cache.ts"]);
    await push(w.ctx, [{ sha: sha("c"), at: "2026-06-02T10:00:00Z", files: ["src/http/cache.ts"] }]);
    const stale = async () => (await ok(w.ctx, "code_ref_query", { object_id: task.ref })).items[0].stale;
    expect(await stale()).toBeNull();
    await push(w.ctx, [{ sha: sha("d"), at: "2026-06-02T11:00:00Z", files: ["src/http/cache.ts"] }]);
    expect(await stale()).toMatchObject({ commit: sha("d") });
    w.clock.set("2026-06-03T00:00:00.000Z");
    await ok(w.ctx, "code_ref_update", { code_ref_id: ref.code_ref.id, patch: { title: "Cache headers, reviewed" } });
    expect(await stale()).toBeNull();
    // A ref with no repository has nowhere to put a bare path.
    const r = await fails(w.ctx, "code_ref_add", { object_type: "task", object_id: task.id, ref_type: "branch", branch: "feature/x", paths: ["src/**"] });
    expect(r.code).toBe("invalid_input");
  });
});

describe("stale_decisions", () => {
  it("lists a change-ledger decision whose file was pushed over, with the commit in its reason; search shows the mark", async () => {
    const w = await world("mem-ledger");
    const decided = await ok(w.ctx, "log_change", {
      entity_path: "src/auth/login.ts::login",
      change_type: "modify",
      reasoning: "Lockout after five failures, per the security review",
      project: REPO,
      revisit_after: "90d",
      // Already committed: the back-fill ties only events without a commit to the commits pushed.
      git_commit: "1234567",
    });
    // Another project's file of the same name, and a decision the push's own commit implements (the back-fill ties it to that commit).
    await ok(w.ctx, "log_change", { entity_path: "src/auth/login.ts", change_type: "modify", reasoning: "other repo's lockout", project: "other", revisit_after: "90d", git_commit: "1234567" });
    await ok(w.ctx, "log_change", { entity_path: "src/auth/reset.ts", change_type: "modify", reasoning: "reset tokens expire in an hour", project: REPO, revisit_after: "90d" });
    expect((await ok(w.ctx, "stale_decisions", {})).items).toEqual([]);
    await push(w.ctx, [
      { sha: sha("7"), at: "2026-06-01T12:30:00Z", files: ["src/auth/reset.ts"] },
      { sha: sha("8"), at: "2026-06-02T10:00:00Z", files: ["src/auth/login.ts"] },
    ]);
    const items = (await ok(w.ctx, "stale_decisions", {})).items;
    expect(items.map((d: Structured) => d.id)).toEqual([decided.id]);
    expect(items[0]).toMatchObject({ flag: "review_suggested", active_use_signals: ["code_changed"] });
    expect(items[0].stale_reason).toBe("code changed by 8888888 on 2026-06-02 (src/auth/login.ts).");
    const hits = (await ok(w.ctx, "search", { q: "Lockout", object_types: ["event"] })).items;
    const hit = hits.find((h: Structured) => h.object_id === decided.id);
    expect(hit.stale).toMatchObject({ commit: sha("8"), path: "src/auth/login.ts" });
    expect(hits.find((h: Structured) => h.object_id !== decided.id).stale).toBeNull();
  });

  it("stays quiet for another tenant's decision on the same file", async () => {
    const a = await world("mem-ledger-a");
    const b = await world("mem-ledger-b");
    await ok(b.ctx, "log_change", { entity_path: "src/pay.ts", change_type: "modify", reasoning: "round half even", project: REPO, revisit_after: "90d" });
    await push(a.ctx, [{ sha: sha("5"), at: "2026-06-02T10:00:00Z", files: ["src/pay.ts"] }]);
    expect((await ok(b.ctx, "stale_decisions", {})).items).toEqual([]);
  });
});
