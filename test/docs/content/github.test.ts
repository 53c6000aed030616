/**
 * The document store and GitHub: add from a repository (importFromGitHub), restore to a bundle or
 * a branch, and watches re-importing on push, against an in-memory repository behind the fake API.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../../src/db/ids";
import { importFromGitHub, MAX_IMPORT_FILES, type GitHubImportParams } from "../../../src/docs/github/import";
import { ingestDocument } from "../../../src/docs/store/ingest";
import { MAX_BUNDLE_BYTES, restoreOp } from "../../../src/docs/content/restore";
import { watchOp } from "../../../src/docs/sessions/watch";
import { getDocument, MAX_DOCUMENT_BYTES } from "../../../src/docs/store/store";
import { dropWatchesForSession, listWatches } from "../../../src/docs/github/watch";
import { processDelivery, recordDelivery } from "../../../src/server/webhooks";
import type { Ctx } from "../../../src/core/context";
import { errorBody, FakeGitHub } from "../../support/github/fake";
import { FakeRepo } from "../../support/github/fake-repo";
import { serveTreesAndBlobs } from "../../support/github/trees";
import { connectGitHub } from "../../support/github/tenant";
import { count, makeCtx, ok, refusal, seedIdentity, TestClock } from "../../support/helpers";

const REPO = "octocat/docs";
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** A commit on `branch` whose files have the given modes (symlinks, submodules). */
function writeWithModes(repo: FakeRepo, branch: string, files: Record<string, string>, modes: Record<string, string>): string {
  const parent = repo.refs.get(branch);
  const flat = new Map(parent ? repo.trees.get(repo.commits.get(parent)!.tree)! : []);
  const allModes = new Map(parent ? repo.modes.get(repo.commits.get(parent)!.tree)! : []);
  for (const [p, c] of Object.entries(files)) flat.set(p, repo.blob(c));
  for (const [p, m] of Object.entries(modes)) allModes.set(p, m);
  const sha = repo.commit(repo.tree(flat, allModes), parent ? [parent] : [], "modes");
  repo.refs.set(branch, sha);
  return sha;
}

interface Setup {
  ctx: Ctx;
  gh: FakeGitHub;
  repo: FakeRepo;
  clock: TestClock;
}

async function setup(files: Record<string, string>, prefix = "docs-gh"): Promise<Setup> {
  const id = await seedIdentity(`${prefix}-${crypto.randomUUID().slice(0, 8)}`, "agent");
  const gh = new FakeGitHub();
  const repo = new FakeRepo(gh);
  repo.write("main", files, "initial");
  serveTreesAndBlobs(gh, repo);
  const clock = new TestClock();
  const ctx = await connectGitHub(makeCtx(id, clock), gh);
  return { ctx, gh, repo, clock };
}

const live = (ctx: Ctx) => count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND deleted_at IS NULL`, ctx.tenantId);
const text = async (ctx: Ctx, path: string) => dec((await getDocument(ctx, { path })).bytes);
const writes = (gh: FakeGitHub) => gh.requests.filter((r) => r.method !== "GET");
const importOf = (ctx: Ctx, params: GitHubImportParams) => importFromGitHub(ctx, params);

const FILES = {
  "README.md": "# docs\n",
  "docs/a.md": "alpha\n",
  "docs/b.txt": "bravo\n",
  "docs/sub/c.md": "charlie\n",
  "docs/sub/skip.md": "skipped\n",
  "other/x.md": "x-ray\n",
};

describe("docs_execute", () => {
  describe("add from GitHub", () => {
    it("imports a large file at once as pending: the queue indexes it, off the request", async () => {
      const { ctx } = await setup({ "docs/a.md": "alpha\n", "docs/big.md": `# Big\n${"a line about the numbat\n".repeat(4000)}` });
      const r = await importOf(ctx, { repo: REPO, path: "docs" });
      expect(r.imported.map((f) => [f.path, f.index_status])).toEqual([
        ["docs/a.md", "text"],
        ["docs/big.md", "pending"],
      ]);
    });

    it("imports one file with its source in metadata and a MIME type from its extension", async () => {
      const { ctx, repo } = await setup(FILES);
      const r = await importOf(ctx, { repo: REPO, path: "docs/a.md", tags: ["kb"], metadata: { team: "docs" } });
      expect(r).toMatchObject({ repo: REPO, ref: "main", commit: repo.refs.get("main"), total_files: 1, truncated: false, remaining: 0, skipped: [] });
      expect(r.imported).toEqual([{ path: "docs/a.md", hash: await sha256Hex("alpha\n"), size: 6, bytes_stored: 6, bytes_deduped: 0, index_status: "text" }]);
      expect(await text(ctx, "docs/a.md")).toBe("alpha\n");
      const row = await env.DB.prepare(`SELECT mime_type, tags, metadata FROM documents WHERE tenant_id = ? AND path = ? AND deleted_at IS NULL`)
        .bind(ctx.tenantId, "docs/a.md")
        .first<{ mime_type: string; tags: string; metadata: string }>();
      expect(row!.mime_type).toBe("text/markdown");
      expect(JSON.parse(row!.tags)).toEqual(["kb"]);
      expect(JSON.parse(row!.metadata)).toEqual({
        team: "docs",
        source: "github",
        github_repo: REPO,
        github_ref: "main",
        github_commit: repo.refs.get("main"),
        github_path: "docs/a.md",
      });

      const moved = await importOf(ctx, { repo: REPO, path: "/docs/a.md/", prefix: "notes" });
      expect(moved.imported.map((f) => f.path)).toEqual(["notes/a.md"]);
    });

    it("imports a folder with include/exclude, recursive or not, under a prefix, walking to it rather than listing the whole repository", async () => {
      const { ctx, gh } = await setup(FILES);
      const r = await importOf(ctx, { repo: REPO, path: "docs", include: ["*.md"], exclude: ["sub/skip.md"] });
      expect(r.imported.map((f) => f.path)).toEqual(["docs/a.md", "docs/sub/c.md"]);
      expect(r.total_files).toBe(2);
      const listings = gh.requests.filter((q) => q.op === "GET /repos/{owner}/{repo}/git/trees/{tree_sha}");
      // The root once without recursion (to find docs), then docs recursively.
      expect(listings.map((q) => q.query.recursive ?? "")).toEqual(["", "1"]);

      const flat = await importOf(ctx, { repo: REPO, path: "docs", recursive: false, prefix: "kb" });
      expect(flat.imported.map((f) => f.path)).toEqual(["kb/a.md", "kb/b.txt"]);
      const root = await importOf(ctx, { repo: REPO, path: "/", include: ["other/**"], prefix: "/" });
      expect(root.imported.map((f) => f.path)).toEqual(["other/x.md"]);
      expect(await live(ctx)).toBe(5);
    });

    it("reads another ref, and refuses a missing ref, path or repository with their own codes", async () => {
      const { ctx, repo, gh } = await setup(FILES);
      const v1 = repo.write("v1", { "docs/a.md": "alpha v1\n" }, "v1", repo.refs.get("main"));
      const r = await importOf(ctx, { repo: REPO, path: "docs/a.md", ref: "v1" });
      expect(r).toMatchObject({ ref: "v1", commit: v1 });
      expect(await text(ctx, "docs/a.md")).toBe("alpha v1\n");
      const bySha = await importOf(ctx, { repo: REPO, path: "docs/a.md", ref: repo.refs.get("main")! });
      expect(bySha.commit).toBe(repo.refs.get("main"));
      expect(await text(ctx, "docs/a.md")).toBe("alpha\n");

      expect((await refusal(importOf(ctx, { repo: REPO, path: "docs", ref: "nope" }))).code).toBe("ref_not_found");
      expect((await refusal(importOf(ctx, { repo: REPO, path: "docs/missing.md" }))).code).toBe("path_not_found");
      expect((await refusal(importOf(ctx, { repo: REPO, path: "docs/a.md/deeper" }))).code).toBe("path_not_found");
      gh.on("GET /repos/{owner}/{repo}", () => ({ status: 404, body: errorBody("Not Found") }));
      expect((await refusal(importOf(ctx, { repo: "octocat/gone", path: "" }))).code).toBe("repo_not_found");
    });

    it("skips symlinks, submodules and files over the document limit with a reason, importing the rest", async () => {
      const { ctx, repo } = await setup({ "lib/ok.md": "fine\n" });
      writeWithModes(repo, "main", { "lib/link.md": "ok.md", "lib/vendor": "", "lib/huge.bin": "x".repeat(MAX_DOCUMENT_BYTES + 1) }, { "lib/link.md": "120000", "lib/vendor": "160000" });
      const r = await importOf(ctx, { repo: REPO, path: "lib" });
      expect(r.imported.map((f) => f.path)).toEqual(["lib/ok.md"]);
      expect(r.total_files).toBe(4);
      const reasons = Object.fromEntries(r.skipped.map((s) => [s.path, s.reason]));
      expect(Object.keys(reasons).sort()).toEqual(["lib/huge.bin", "lib/link.md", "lib/vendor"]);
      expect(reasons["lib/link.md"]).toMatch(/symbolic link/);
      expect(reasons["lib/vendor"]).toMatch(/submodule/);
      expect(reasons["lib/huge.bin"]).toMatch(/document limit/);
    });

    it(`stops at ${MAX_IMPORT_FILES} files a call, says so, and states its limits`, async () => {
      const many = Object.fromEntries(Array.from({ length: MAX_IMPORT_FILES + 3 }, (_, i) => [`bulk/f${String(i).padStart(3, "0")}.txt`, `file ${i}\n`]));
      const { ctx, gh } = await setup(many);
      const r = await importOf(ctx, { repo: REPO, path: "bulk" });
      expect(r.imported).toHaveLength(MAX_IMPORT_FILES);
      expect(r).toMatchObject({ truncated: true, remaining: 3, total_files: MAX_IMPORT_FILES + 3, limits: { max_files: MAX_IMPORT_FILES, max_file_bytes: MAX_DOCUMENT_BYTES } });
      expect(r.note).toMatch(/narrower path or include/);
      expect(gh.count("GET /repos/{owner}/{repo}/git/blobs/{file_sha}")).toBe(MAX_IMPORT_FILES);
      const rest = await importOf(ctx, { repo: REPO, path: "bulk", include: ["f10[0-9].txt"] });
      expect(rest.imported.map((f) => f.path)).toEqual(["bulk/f100.txt", "bulk/f101.txt", "bulk/f102.txt"]);
    }, 60_000);

    it("deduplicates a re-import, and records one snapshot for the whole import", async () => {
      const { ctx } = await setup(FILES);
      const first = await importOf(ctx, { repo: REPO, path: "docs/sub", snapshot_label: "sub-v1", collection: "kb" });
      expect(first.bytes_stored).toBe(16);
      expect(first.snapshot_id).toMatch(/^[0-9a-f-]{36}$/);
      const again = await importOf(ctx, { repo: REPO, path: "docs/sub" });
      expect(again).toMatchObject({ bytes_stored: 0, bytes_deduped: 16 });
      expect(again.imported.every((f) => f.bytes_stored === 0 && f.bytes_deduped === f.size)).toBe(true);
      expect(await count(`SELECT COUNT(*) AS n FROM doc_snapshots WHERE tenant_id = ?`, ctx.tenantId)).toBe(1);
      const entries = await env.DB.prepare(`SELECT path FROM doc_snapshot_entries WHERE tenant_id = ? AND snapshot_id = ? ORDER BY path`).bind(ctx.tenantId, first.snapshot_id).all<{ path: string }>();
      expect(entries.results.map((e) => e.path)).toEqual(["docs/sub/c.md", "docs/sub/skip.md"]);
    });

    it("answers github_not_configured for a tenant without credentials", async () => {
      const id = await seedIdentity(`docs-gh-none-${crypto.randomUUID().slice(0, 8)}`, "agent");
      const ctx = makeCtx(id);
      expect((await refusal(importOf(ctx, { repo: REPO, path: "docs" }))).code).toBe("github_not_configured");
      expect(await live(ctx)).toBe(0);
    });

    it("refuses bad input before any request and stores nothing", async () => {
      const { ctx, gh } = await setup(FILES);
      expect((await refusal(importOf(ctx, { repo: "not a repo", path: "docs" }))).code).toBe("invalid_repo");
      expect((await refusal(importOf(ctx, { repo: REPO, path: "docs/../../etc" }))).code).toBe("invalid_input");
      expect((await refusal(importOf(ctx, { repo: REPO, path: "docs", prefix: "../outside" }))).code).toBe("invalid_input");
      expect((await refusal(importOf(ctx, { repo: REPO, path: "docs\u0000x" }))).code).toBe("invalid_input");
      expect((await refusal(importOf(ctx, { repo: REPO, path: "docs", ref: "a..b" }))).code).toBe("unsafe_ref_token");
      expect((await refusal(importOf(ctx, { repo: REPO, path: "docs", include: ["x".repeat(300)] }))).code).toBe("invalid_input");
      expect(gh.requests).toHaveLength(0);
      expect(await live(ctx)).toBe(0);
    });

    it("keeps tenants apart: another tenant sees none of the imported documents or their sources", async () => {
      const a = await setup(FILES);
      await importOf(a.ctx, { repo: REPO, path: "docs" });
      const b = await seedIdentity(`docs-gh-b-${crypto.randomUUID().slice(0, 8)}`, "agent");
      const bctx = makeCtx(b);
      expect(await live(a.ctx)).toBe(4);
      expect(await live(bctx)).toBe(0);
      expect(await count(`SELECT COUNT(*) AS n FROM doc_github_sources WHERE tenant_id = ?`, b.tenantId)).toBe(0);
      expect((await refusal(getDocument(bctx, { path: "docs/a.md" }))).code).toBe("not_found");
    });
  });
});

// ---------------------------------------------------------------------------------------------

async function addInline(ctx: Ctx, path: string, content: string | Uint8Array, collection?: string, snapshotLabel?: string) {
  return ingestDocument(ctx, { path, bytes: typeof content === "string" ? enc(content) : content, collection, snapshotLabel });
}

const restore = (ctx: Ctx, params: Record<string, unknown>) => restoreOp.run(ctx, restoreOp.params.parse(params));

describe("docs_execute", () => {
  describe("restore", () => {
    it("returns a collection as a bundle: filtered, under output_directory, binary as base64", async () => {
      const { ctx } = await setup(FILES);
      await addInline(ctx, "notes/a.md", "alpha\n", "kb");
      await addInline(ctx, "notes/b.txt", "bravo\n", "kb");
      await addInline(ctx, "img/logo.bin", new Uint8Array([0, 1, 2, 255]), "kb");
      await addInline(ctx, "elsewhere.md", "not in kb\n");
      const all = await restore(ctx, { collection: "kb", output_directory: "out" });
      expect(all).toMatchObject({ target: "bundle", total_files: 3, total_bytes: 16 });
      expect(all.files).toEqual([
        { path: "out/img/logo.bin", hash: await sha256Hex(new Uint8Array([0, 1, 2, 255])), size: 4, content_base64: btoa("\u0000\u0001\u0002\u00ff") },
        { path: "out/notes/a.md", hash: await sha256Hex("alpha\n"), size: 6, content: "alpha\n" },
        { path: "out/notes/b.txt", hash: await sha256Hex("bravo\n"), size: 6, content: "bravo\n" },
      ]);
      const md = await restore(ctx, { collection: "kb", include_patterns: ["*.md", "*.txt"], exclude_patterns: ["notes/b.*"] });
      expect((md.files as { path: string }[]).map((f) => f.path)).toEqual(["notes/a.md"]);
      const dry = await restore(ctx, { collection: "kb", dry_run: true });
      expect((dry.files as Record<string, unknown>[]).every((f) => f.content === undefined && f.content_base64 === undefined)).toBe(true);
    });

    it("returns a snapshot's entries even after the live documents changed", async () => {
      const { ctx } = await setup(FILES);
      const put = await addInline(ctx, "plan.md", "v1\n", undefined, "before");
      await addInline(ctx, "plan.md", "v2\n");
      const r = await restore(ctx, { snapshot_id: put.snapshot_id });
      expect(r.files).toEqual([{ path: "plan.md", hash: await sha256Hex("v1\n"), size: 3, content: "v1\n" }]);
    });

    it("refuses neither/both sources, unknown or foreign ones, and a bundle over the cap", async () => {
      const { ctx } = await setup(FILES);
      expect((await refusal(restore(ctx, {}))).code).toBe("invalid_input");
      expect((await refusal(restore(ctx, { collection: "kb", snapshot_id: "x" }))).code).toBe("invalid_input");
      expect((await refusal(restore(ctx, { collection: "nope" }))).code).toBe("not_found");
      expect((await refusal(restore(ctx, { snapshot_id: "0190aaaa-0000-7000-8000-000000000000" }))).code).toBe("not_found");
      expect((await refusal(restore(ctx, { collection: "kb", branch: "main" }))).code).toBe("invalid_input");
      expect((await refusal(restore(ctx, { collection: "kb", output_directory: "../up" }))).code).toBe("invalid_input");

      const other = makeCtx(await seedIdentity(`docs-gh-o-${crypto.randomUUID().slice(0, 8)}`, "agent"));
      const theirs = await addInline(other, "secret.md", "theirs\n", "private", "snap");
      expect((await refusal(restore(ctx, { collection: "private" }))).code).toBe("not_found");
      expect((await refusal(restore(ctx, { snapshot_id: theirs.snapshot_id }))).code).toBe("not_found");

      const big = new Uint8Array(MAX_BUNDLE_BYTES + 1).fill(97);
      await addInline(ctx, "big.txt", big, "big");
      expect((await refusal(restore(ctx, { collection: "big" }))).code).toBe("restore_too_large");
    });

    it("dry_run to a repository lists what it would write and which paths exist, sending no write request", async () => {
      const { ctx, gh, repo } = await setup({ "restored/notes/a.md": "old\n", "README.md": "r\n" });
      await addInline(ctx, "notes/a.md", "alpha\n", "kb");
      await addInline(ctx, "notes/b.md", "bravo\n", "kb");
      const before = repo.refs.get("main");
      const r = await restore(ctx, { collection: "kb", repo: REPO, output_directory: "restored", dry_run: true, overwrite: true });
      expect(r).toMatchObject({ target: "github", repo: REPO, branch: "main", commit: null, dry_run: true, total_files: 2, skipped: [] });
      expect(r.files).toEqual([
        { path: "restored/notes/a.md", source_path: "notes/a.md", hash: await sha256Hex("alpha\n"), size: 6, exists: true },
        { path: "restored/notes/b.md", source_path: "notes/b.md", hash: await sha256Hex("bravo\n"), size: 6, exists: false },
      ]);
      expect(writes(gh)).toEqual([]);
      expect(repo.refs.get("main")).toBe(before);
      expect((await refusal(restore(ctx, { collection: "kb", repo: REPO }))).code).toBe("invalid_input");
    });

    it("commits to a branch: existing files kept without overwrite, replaced with it, a new branch created from the default", async () => {
      const { ctx, gh, repo } = await setup({ "restored/notes/a.md": "old\n", "README.md": "r\n" });
      await addInline(ctx, "notes/a.md", "alpha\n", "kb");
      await addInline(ctx, "notes/b.md", "bravo\n", "kb");
      await addInline(ctx, "bin/x.bin", new Uint8Array([0, 159, 1]), "kb");
      const main0 = repo.refs.get("main")!;

      const kept = await restore(ctx, { collection: "kb", repo: REPO, output_directory: "restored", message: "restore kb" });
      expect(kept).toMatchObject({ commit: repo.refs.get("main"), created_branch: false, skipped: [{ path: "restored/notes/a.md", reason: "exists (overwrite is false)" }] });
      expect(repo.commits.get(kept.commit as string)).toMatchObject({ parents: [main0], message: "restore kb" });
      expect(repo.files("main")).toEqual({ "README.md": "r\n", "restored/notes/a.md": "old\n", "restored/notes/b.md": "bravo\n", "restored/bin/x.bin": "\u0000\u009f\u0001" });
      expect(gh.requests.filter((q) => q.op === "PATCH /repos/{owner}/{repo}/git/refs/{ref}").map((q) => q.body?.force)).toEqual([false]);

      const replaced = await restore(ctx, { collection: "kb", repo: REPO, output_directory: "restored", overwrite: true, include_patterns: ["notes/**"] });
      expect(replaced.skipped).toEqual([]);
      expect(repo.files("main")["restored/notes/a.md"]).toBe("alpha\n");

      const again = await restore(ctx, { collection: "kb", repo: REPO, output_directory: "restored", overwrite: true, include_patterns: ["notes/**"] });
      expect(again).toMatchObject({ commit: null });

      const side = await restore(ctx, { collection: "kb", repo: REPO, output_directory: "/", branch: "restore/kb", include_patterns: ["*.md"] });
      expect(side).toMatchObject({ branch: "restore/kb", created_branch: true });
      expect(repo.files("restore/kb")["notes/b.md"]).toBe("bravo\n");
      expect(repo.commits.get(repo.refs.get("restore/kb")!)!.parents).toEqual([repo.refs.get("main")]);
    });

    it("passes github_not_configured through", async () => {
      const ctx = makeCtx(await seedIdentity(`docs-gh-nc-${crypto.randomUUID().slice(0, 8)}`, "agent"));
      await addInline(ctx, "a.md", "a\n", "kb");
      expect((await refusal(restore(ctx, { collection: "kb", repo: REPO, output_directory: "x" }))).code).toBe("github_not_configured");
    });
  });
});

// ---------------------------------------------------------------------------------------------

const watch = (ctx: Ctx, params: Record<string, unknown>) => watchOp.run(ctx, watchOp.params.parse(params));

let deliveries = 0;

/** A push delivery for the tenant, stored and processed as the webhook route does. */
async function push(ctx: Ctx, repo: FakeRepo, before: string, files: { added?: string[]; modified?: string[]; removed?: string[] }, fullName = REPO) {
  const after = repo.refs.get("main")!;
  const payload = {
    ref: "refs/heads/main",
    before,
    after,
    created: false,
    deleted: false,
    forced: false,
    repository: { full_name: fullName, html_url: `https://github.com/${fullName}`, default_branch: "main" },
    commits: [
      {
        id: after,
        timestamp: "2026-06-01T12:00:00Z",
        message: "change",
        author: { name: "a", email: "a@example.com" },
        added: files.added ?? [],
        modified: files.modified ?? [],
        removed: files.removed ?? [],
      },
    ],
  };
  const raw = JSON.stringify(payload);
  const deliveryId = `watch-${++deliveries}-${crypto.randomUUID()}`;
  await recordDelivery(ctx.env, { tenantId: ctx.tenantId, deliveryId, event: "push", payload, rawPayload: raw, contentHash: await sha256Hex(raw) }, new Date());
  return processDelivery(ctx.env, ctx.tenantId, deliveryId, new Date(), payload);
}

describe("docs_session", () => {
  describe("watch", () => {
    it("imports the watched folder on enable, then a push re-imports what changed and deletes what was removed", async () => {
      const { ctx, gh, repo } = await setup(FILES);
      const on = await watch(ctx, { root: `${REPO}:docs`, session: "review" });
      expect(on).toMatchObject({ enabled: true, watch: { session: "review", repo: REPO, repo_path: "docs", ref: "", prefix: "docs" } });
      expect((on.sync as { imported: unknown[] }).imported).toHaveLength(4);
      expect(await listWatches(ctx)).toHaveLength(1);

      const before = repo.refs.get("main")!;
      repo.write("main", { "docs/a.md": "alpha 2\n", "docs/sub/skip.md": null, "docs/new.md": "new\n" });
      const blobReads = gh.count("GET /repos/{owner}/{repo}/git/blobs/{file_sha}");
      const outcome = await push(ctx, repo, before, { added: ["docs/new.md"], modified: ["docs/a.md"], removed: ["docs/sub/skip.md"] });
      expect(outcome).toMatchObject({ status: "processed" });
      expect(outcome!.note).toMatch(/doc watches: octocat\/docs:docs: 2 imported, 2 unchanged, 1 deleted/);
      // Only the two changed blobs were read: the unchanged ones were known by their blob sha.
      expect(gh.count("GET /repos/{owner}/{repo}/git/blobs/{file_sha}") - blobReads).toBe(2);
      expect(await text(ctx, "docs/a.md")).toBe("alpha 2\n");
      expect(await text(ctx, "docs/new.md")).toBe("new\n");
      expect((await refusal(getDocument(ctx, { path: "docs/sub/skip.md" }))).code).toBe("not_found");
      expect(await text(ctx, "docs/b.txt")).toBe("bravo\n");
      const [w] = await listWatches(ctx, "review");
      expect(w).toMatchObject({ last_commit: repo.refs.get("main") });
    });

    it("ignores pushes that touch no watched path without asking GitHub, and leaves documents replaced by hand", async () => {
      const { ctx, gh, repo } = await setup(FILES);
      await watch(ctx, { repo: REPO, path: "docs/a.md" });
      const before = repo.refs.get("main")!;
      repo.write("main", { "other/x.md": "x2\n" });
      const sent = gh.requests.length;
      const outcome = await push(ctx, repo, before, { modified: ["other/x.md"] });
      expect(outcome!.note).toMatch(/no watched file changed/);
      expect(gh.requests.length).toBe(sent);

      // Someone replaced the document by hand; the file's removal on GitHub leaves their content alone.
      await addInline(ctx, "docs/a.md", "mine\n");
      const before2 = repo.refs.get("main")!;
      repo.write("main", { "docs/a.md": null });
      const gone = await push(ctx, repo, before2, { removed: ["docs/a.md"] });
      expect(gone!.note).toMatch(/0 document\(s\) deleted/);
      expect(await text(ctx, "docs/a.md")).toBe("mine\n");
    });

    it("touches only the tenants that watch the repository", async () => {
      const a = await setup(FILES, "docs-gh-wa");
      await watch(a.ctx, { root: `${REPO}/docs/sub` });
      const b = await setup(FILES, "docs-gh-wb");
      const before = b.repo.refs.get("main")!;
      b.repo.write("main", { "docs/sub/c.md": "changed in b's world\n" });
      const outcome = await push(b.ctx, b.repo, before, { modified: ["docs/sub/c.md"] });
      // b has no watch: the delivery is only recorded, nothing is imported anywhere.
      expect(outcome!.note).not.toMatch(/doc watches/);
      expect(await live(b.ctx)).toBe(0);
      expect(await text(a.ctx, "docs/sub/c.md")).toBe("charlie\n");
      expect(await count(`SELECT COUNT(*) AS n FROM doc_watches WHERE tenant_id = ?`, b.ctx.tenantId)).toBe(0);
    });

    it("disables a watch, refuses to disable one that does not exist, and drops a session's watches", async () => {
      const { ctx, gh, repo } = await setup(FILES);
      await watch(ctx, { root: `${REPO}:docs` });
      const off = await watch(ctx, { root: `${REPO}:docs`, enable: false });
      expect(off).toMatchObject({ enabled: false, removed: 1 });
      expect((await refusal(watch(ctx, { root: `${REPO}:docs`, enable: false }))).code).toBe("not_found");
      const before = repo.refs.get("main")!;
      repo.write("main", { "docs/a.md": "after\n" });
      const sent = gh.requests.length;
      const outcome = await push(ctx, repo, before, { modified: ["docs/a.md"] });
      expect(outcome!.note).not.toMatch(/doc watches/);
      expect(gh.requests.length).toBe(sent);
      expect(await text(ctx, "docs/a.md")).toBe("alpha\n");

      await watch(ctx, { root: `${REPO}:docs`, session: "s1" });
      await watch(ctx, { root: `${REPO}:other`, session: "s1" });
      // Session names are per actor: a colleague's session "s1" is another session.
      const slug = (await env.DB.prepare(`SELECT slug FROM tenants WHERE id = ?`).bind(ctx.tenantId).first<{ slug: string }>())!.slug;
      expect(await dropWatchesForSession(makeCtx(await seedIdentity(slug, "colleague")), "s1")).toBe(0);
      expect(await dropWatchesForSession(ctx, "s1")).toBe(2);
      expect(await listWatches(ctx)).toEqual([]);
    });

    it("refuses bad roots and a missing path without creating a watch", async () => {
      const { ctx } = await setup(FILES);
      expect((await refusal(watch(ctx, { root: "justone" }))).code).toBe("invalid_input");
      expect((await refusal(watch(ctx, { root: `${REPO}:docs`, repo: "octocat/other" }))).code).toBe("invalid_input");
      expect((await refusal(watch(ctx, { root: `${REPO}:docs`, path: "other" }))).code).toBe("invalid_input");
      expect((await refusal(watch(ctx, {}))).code).toBe("invalid_input");
      expect((await refusal(watch(ctx, { root: `${REPO}:../etc` }))).code).toBe("invalid_input");
      expect((await refusal(watch(ctx, { root: `${REPO}:nowhere` }))).code).toBe("path_not_found");
      expect(await listWatches(ctx)).toEqual([]);
      expect(await live(ctx)).toBe(0);
    });
  });
});

describe("docs_execute", () => {
  describe("through the composite tools", () => {
    it("docs_execute add with repo imports, a dry-run restore to the repo writes nothing, and docs_session watch takes the current session", async () => {
      const { ctx, gh } = await setup(FILES, "docs-gh-tools");
      const added = await ok(ctx, "docs_execute", {
        operations: [{ op: "add", params: { repo: REPO, path: "docs", exclude: ["skip.md"], collection: "handbook", metadata: ["team=docs"] } }],
      });
      expect(added.results[0].data.imported.map((f: { path: string }) => f.path).sort()).toEqual(["docs/a.md", "docs/b.txt", "docs/sub/c.md"]);
      const found = await ok(ctx, "docs_query", { steps: [{ op: "grep", params: { pattern: "charlie", files_with_matches: true } }] });
      expect(found.paths).toEqual(["docs/sub/c.md"]);
      const before = writes(gh).length;
      const dry = await ok(ctx, "docs_execute", {
        operations: [{ op: "restore", params: { collection: "handbook", repo: REPO, branch: "main", output_directory: "restored", dry_run: true } }],
      });
      expect(dry.results[0].data).toMatchObject({ dry_run: true });
      expect(writes(gh).length).toBe(before);
      const bundle = await ok(ctx, "docs_execute", { operations: [{ op: "restore", params: { collection: "handbook", include_patterns: ["**/*.md"] } }] });
      expect(bundle.results[0].data.files.map((f: { path: string }) => f.path).sort()).toEqual(["docs/a.md", "docs/sub/c.md"]);
      await ok(ctx, "docs_session", { action: "start", params: { name: "watching" } });
      const watched = await ok(ctx, "docs_session", { action: "watch", params: { root: `${REPO}:other` } });
      expect(watched.watch).toMatchObject({ session: "watching" });
      const stopped = await ok(ctx, "docs_session", { action: "stop" });
      expect(stopped.watches_ended).toBe(1);
    });
  });
});
