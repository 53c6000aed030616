/**
 * The document store's composite tools (seed 003) through the registry: the pipeline engine,
 * the seed's shapes and error texts, and the basic ops (add, update, delete, list, get, status,
 * collections, snapshots, describe).
 */
import { describe, expect, it } from "vitest";
import { findTool } from "../../../src/server/registry";
import { callTool } from "../../../src/core/call";
import { resolvePrev, resolveReference } from "../../../src/core/pipeline";
import { call, count, fails, makeCtx, ok, seedIdentity, TestClock } from "../../support/helpers";

async function freshCtx(clock = new TestClock()) {
  const id = await seedIdentity(`docs-tools-${crypto.randomUUID().slice(0, 8)}`, "writer");
  return makeCtx(id, clock);
}

const q = (...steps: unknown[]) => ({ steps });
const x = (...operations: unknown[]) => ({ operations });
const add = (name: string, content: string, extra: Record<string, unknown> = {}) => ({ op: "add", params: { name, content, ...extra } });

describe("docs_query", () => {
  describe("$prev references", () => {
    const prev = { results: [{ hash: "abc", path: "a.md", tags: ["x"] }], total: 1, nested: { deep: { v: 3 } } };
    it("resolves the seed's forms and gives null for what is missing", () => {
      expect(resolveReference("$prev", prev).value).toEqual(prev);
      expect(resolveReference("$prev.total", prev).value).toBe(1);
      expect(resolveReference("$prev.results[0].hash", prev).value).toBe("abc");
      expect(resolveReference("$prev.results[0].tags[0]", prev).value).toBe("x");
      expect(resolveReference("$prev.nested.deep.v", prev).value).toBe(3);
      expect(resolveReference("$prev.results[5].hash", prev)).toEqual({ matched: true, value: null });
      expect(resolveReference("$prev.missing", prev)).toEqual({ matched: true, value: null });
      expect(resolveReference("$prev.total.more", prev)).toEqual({ matched: true, value: null });
      expect(resolveReference("$prev.__proto__", prev)).toEqual({ matched: true, value: null });
      expect(resolveReference("$previous", prev)).toEqual({ matched: false, value: "$previous" });
    });
    it("replaces only top-level strings; a reference that resolves to nothing gives null (the seed's rule) or, where a surface asks, is left out", () => {
      const params = { hash: "$prev.results[0].hash", name: "$prev.nope", nested: { h: "$prev.total" }, list: ["$prev.total"], limit: 3 };
      const r = resolvePrev(params, prev, "null");
      expect(r.params).toEqual({ hash: "abc", name: null, nested: { h: "$prev.total" }, list: ["$prev.total"], limit: 3 });
      expect(r.nulls).toEqual(["name: $prev.nope"]);
      // Compact mode, where null clears a field.
      expect(resolvePrev(params, prev).params).toEqual({ hash: "abc", nested: { h: "$prev.total" }, list: ["$prev.total"], limit: 3 });
    });
  });

  describe("docs_query and docs_execute", () => {
    it("unwraps a single step, wraps several, and carries $prev between them", async () => {
      const ctx = await freshCtx();
      const added = await ok(ctx, "docs_execute", x(add("notes/a.md", "# Alpha\nfirst"), add("notes/b.md", "# Beta\nsecond")));
      expect(added).toMatchObject({ totalOps: 2, succeeded: 2, failed: 0 });
      expect(added.results[0]).toMatchObject({ stepIndex: 0, op: "add", success: true });
      const single = await call(ctx, "docs_query", q({ op: "list", params: { sort_by: "name", sort_order: "asc" } }));
      expect(single.ok).toBe(true);
      expect(single.documents.map((d: { path: string }) => d.path)).toEqual(["notes/a.md", "notes/b.md"]);
      const piped = await ok(ctx, "docs_query", q({ op: "list", params: { sort_by: "name", sort_order: "asc" } }, { op: "get", params: { hash: "$prev.documents[1].hash", include_content: true } }));
      expect(piped).toMatchObject({ totalSteps: 2, completedSteps: 2, failedSteps: 0 });
      expect(piped.steps[1]).toMatchObject({ stepIndex: 1, op: "get", isError: false, result: { path: "notes/b.md", content: "# Beta\nsecond" } });
      const result = await callTool(findTool("docs_query")!, ctx, q({ op: "status" }, { op: "list" }));
      expect((result.content[0] as { text: string }).text.split("\n")[0]).toBe("Pipeline: 2 succeeded, 0 failed out of 2 operations");
    });

    it("records a failing query step and goes on; a reference to nothing says so", async () => {
      const ctx = await freshCtx();
      await ok(ctx, "docs_execute", x(add("one.md", "one")));
      const r = await ok(ctx, "docs_query", q({ op: "list", params: { extension: "py" } }, { op: "get", params: { hash: "$prev.documents[0].hash" } }, { op: "status" }));
      expect(r).toMatchObject({ totalSteps: 3, completedSteps: 2, failedSteps: 1 });
      expect(r.steps[1].isError).toBe(true);
      expect(r.steps[1].result.error.message).toBe("Provide 'hash' or 'name' for get.");
      expect(r.steps[1].result.error.hint).toContain("$prev.documents[0].hash");
      expect(r.steps[2].result.total_objects).toBe(1);
      const text = (await callTool(findTool("docs_query")!, ctx, q({ op: "list", params: { extension: "py" } }, { op: "get", params: { hash: "$prev.documents[0].hash" } }))).content[0] as {
        text: string;
      };
      expect(text.text.split("\n")[0]).toBe("Pipeline: 1 succeeded, 1 failed out of 2 operations | Provide 'hash' or 'name' for get.");
    });

    it("a single failing step is the call's error, in the envelope", async () => {
      const ctx = await freshCtx();
      const e = await fails(ctx, "docs_query", q({ op: "get", params: { name: "missing.md" } }));
      expect(e.code).toBe("not_found");
      expect(e.hint.length).toBeGreaterThan(0);
    });

    it("refuses a write op in docs_query and a read op in docs_execute before anything runs, naming the other tool", async () => {
      const ctx = await freshCtx();
      const e = await fails(ctx, "docs_query", q({ op: "status" }, { op: "add", params: { name: "x.md", content: "x" } }));
      expect(e.message).toBe("'add' is not a read operation. Use the 'docs_execute' tool for write operations (add, update, delete, restore, download).");
      const unknown = await fails(ctx, "docs_query", q({ op: "foobar" }));
      expect(unknown.message).toMatch(/^'foobar' is not a read operation\. Use the 'docs_execute' tool/);
      const r = await fails(ctx, "docs_execute", x(add("x.md", "x"), { op: "search", params: { query: "x" } }));
      expect(r.message).toMatch(/^'search' is not a write operation\. Use the 'docs_query' tool for read operations \(/);
      expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ?`, ctx.tenantId)).toBe(0);
      expect((await fails(ctx, "docs_query", q({ params: {} }))).message).toContain("steps.0.op");
    });

    it("merges top-level step fields into params, as the seed allows", async () => {
      const ctx = await freshCtx();
      const r = await ok(ctx, "docs_query", q({ op: "describe", target: "get" }));
      expect(r).toMatchObject({ op: "get", category: "query", readOnly: true });
    });

    it("execute stops at the first failure unless continue_on_error, and reports every op", async () => {
      const ctx = await freshCtx();
      const stopped = await call(ctx, "docs_execute", x(add("a.md", "a"), { op: "delete", params: { name: "nope.md" } }, add("c.md", "c")));
      expect(stopped.isError).toBe(true);
      expect(stopped.error.code).toBe("not_found");
      expect(stopped.error.message).toMatch(/^Execute: 1 succeeded, 1 failed out of 3 operations \| /);
      expect(stopped).toMatchObject({ totalOps: 3, succeeded: 1, failed: 1, skipped: 1 });
      expect(stopped.results.map((r: { success: boolean }) => r.success)).toEqual([true, false]);
      expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND path = 'c.md'`, ctx.tenantId)).toBe(0);
      // The seed's camelCase spelling works too.
      const went = await call(ctx, "docs_execute", { ...x({ op: "delete", params: { name: "nope.md" } }, add("c.md", "c")), continueOnError: true });
      expect(went).toMatchObject({ isError: true, totalOps: 2, succeeded: 1, failed: 1, skipped: 0 });
      expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND path = 'c.md' AND deleted_at IS NULL`, ctx.tenantId)).toBe(1);
    });

    it("passes $prev between write operations", async () => {
      const ctx = await freshCtx();
      const r = await ok(ctx, "docs_execute", x(add("p.md", "pipe"), { op: "update", params: { hash: "$prev.hash", tags: ["piped"] } }));
      expect(r.results[1].data.updated[0]).toMatchObject({ path: "p.md", tags: ["piped"] });
    });

    it("refuses bad shapes with invalid_input", async () => {
      const ctx = await freshCtx();
      expect((await fails(ctx, "docs_query", { steps: [] })).code).toBe("invalid_input");
      expect((await fails(ctx, "docs_query", { steps: Array.from({ length: 21 }, () => ({ op: "status" })) })).code).toBe("invalid_input");
      expect((await fails(ctx, "docs_execute", { operations: [add("a.md", "a")], extra: 1 })).code).toBe("invalid_input");
      const e = await fails(ctx, "docs_query", q({ op: "list", params: { limit: 0 } }));
      expect(e.message).toContain("limit");
      const unknownParam = await fails(ctx, "docs_query", q({ op: "list", params: { colour: "red" } }));
      expect(unknownParam.message).toContain("colour");
    });

    it("mcp.echo echoes", async () => {
      const ctx = await freshCtx();
      expect((await ok(ctx, "mcp.echo", { message: "hello" })).message).toBe("hello");
    });
  });

  describe("describe", () => {
    it("lists ops by tool, and gives an op's schema from the zod schema that validates it", async () => {
      const ctx = await freshCtx();
      const all = await ok(ctx, "docs_query", q({ op: "describe" }));
      expect(all.query_ops).toEqual(expect.arrayContaining(["list", "list_collections", "list_snapshots", "get", "status", "describe"]));
      expect(all.execute_ops).toEqual(expect.arrayContaining(["add", "update", "delete"]));
      expect(typeof all.descriptions.add).toBe("string");
      const list = await ok(ctx, "docs_query", q({ op: "describe", params: { target: "list" } }));
      expect(list.paramsSchema.properties.limit).toMatchObject({ type: "integer", default: 100, maximum: 1000 });
      expect(list.paramsSchema.properties.sort_by.enum).toEqual(["name", "size", "created", "modified", "indexed"]);
      const e = await fails(ctx, "docs_query", q({ op: "describe", params: { target: "teleport" } }));
      expect(e.code).toBe("not_found");
      expect(e.hint).toContain("query: ");
    });
  });
});

describe("docs_execute", () => {
  describe("add", () => {
    it("stores inline content, deduplicates a re-add, and derives the MIME type", async () => {
      const ctx = await freshCtx();
      const first = await ok(ctx, "docs_execute", x(add("docs/design.md", "# Design\n".repeat(50), { tags: ["spec"], metadata: { author: "Jane" }, collection: "specs" })));
      const d = first.results[0].data;
      expect(d).toMatchObject({ path: "docs/design.md", mime_type: "text/markdown", bytes_deduped: 0 });
      expect(d.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(d.bytes_stored).toBe(d.size);
      const again = (await ok(ctx, "docs_execute", x(add("docs/copy.md", "# Design\n".repeat(50))))).results[0].data;
      expect(again).toMatchObject({ hash: d.hash, bytes_stored: 0, bytes_deduped: d.size });
      const bin = (await ok(ctx, "docs_execute", x({ op: "add", params: { name: "img/dot.png", content_base64: "iVBORw0KGgo=" } }))).results[0].data;
      expect(bin).toMatchObject({ size: 8, mime_type: "image/png" });
    });

    it("keeps the seed's refusals and texts", async () => {
      const ctx = await freshCtx();
      const msg = async (params: unknown) => (await fails(ctx, "docs_execute", x({ op: "add", params }))).message;
      expect(await msg({ url: "https://example.com/a" })).toMatch(
        /^Execute: 0 succeeded, 1 failed out of 1 operations \| add stores local files or inline content\. To fetch a URL, use 'download' with \{url\}\.$/,
      );
      expect(await msg({ content: "x" })).toContain("add requires 'name' when providing inline 'content'.");
      expect(await msg({ paths: ["a", "b"] })).toContain("add accepts one 'path' per call, not 'paths'");
      expect(await msg({ path: ["a"] })).toContain("add expects 'path' to be a string");
      expect(await msg({ path: "/tmp/notes.md" })).toContain("add cannot read '/tmp/notes.md' from your disk");
      expect(await msg({ name: "../etc/passwd", content: "x" })).toContain("'..'");
      expect(await msg({ name: "a.md", content_base64: "@@@" })).toContain("not valid base64");
      expect(await msg({ name: "a.md", content: "x", content_base64: "eA==" })).toContain("either 'content' or 'content_base64'");
      expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ?`, ctx.tenantId)).toBe(0);
    });

    it("warns, without altering the bytes, when content looks like it holds secrets", async () => {
      const ctx = await freshCtx();
      const token = `ghp_${"a1B2c3D4e5".repeat(4).slice(0, 36)}`;
      const r = (await ok(ctx, "docs_execute", x(add("env.txt", `TOKEN=${token}`)))).results[0].data;
      expect(r.warnings?.[0]).toMatch(/secrets/);
      const got = await ok(ctx, "docs_query", q({ op: "get", params: { name: "env.txt", include_content: true } }));
      expect(got.content).toBe(`TOKEN=${token}`);
    });
  });
});

describe("docs_query", () => {
  describe("list, get, status, collections, snapshots", () => {
    it("lists with filters, sorting, pagination and paths_only", async () => {
      const clock = new TestClock();
      const ctx = await freshCtx(clock);
      for (const [name, body] of [
        ["src/a.py", "print(1)"],
        ["src/b.ts", "export {}"],
        ["docs/c.md", "# C"],
        ["docs/d.md", "# D long"],
      ]) {
        await ok(ctx, "docs_execute", x(add(name!, body!, name!.endsWith(".md") ? { tags: ["doc"] } : {})));
        clock.advance(1000);
      }
      const byDefault = await ok(ctx, "docs_query", q({ op: "list" }));
      expect(byDefault.documents.map((d: { path: string }) => d.path)).toEqual(["docs/d.md", "docs/c.md", "src/b.ts", "src/a.py"]);
      expect(byDefault.total).toBe(4);
      expect((await ok(ctx, "docs_query", q({ op: "list", params: { extension: ".py", paths_only: true } }))).paths).toEqual(["src/a.py"]);
      expect((await ok(ctx, "docs_query", q({ op: "list", params: { tags: ["doc"], sort_by: "size", sort_order: "asc", paths_only: true } }))).paths).toEqual(["docs/c.md", "docs/d.md"]);
      expect((await ok(ctx, "docs_query", q({ op: "list", params: { path_pattern: "src/**", sort_by: "name", sort_order: "asc", paths_only: true } }))).paths).toEqual(["src/a.py", "src/b.ts"]);
      expect((await ok(ctx, "docs_query", q({ op: "list", params: { recent: 2, sort_by: "name", sort_order: "asc", paths_only: true } }))).paths).toEqual(["docs/c.md", "docs/d.md"]);
      const page = await ok(ctx, "docs_query", q({ op: "list", params: { limit: 3, paths_only: true } }));
      expect(page).toMatchObject({ total: 4, next_offset: 3 });
      expect((await ok(ctx, "docs_query", q({ op: "list", params: { limit: 3, offset: 3, paths_only: true } }))).paths).toEqual(["src/a.py"]);
    });

    it("gets by hash, hash prefix, path, file name and the seed's 'path' alias, with content as text or base64", async () => {
      const ctx = await freshCtx();
      const a = (await ok(ctx, "docs_execute", x(add("deep/folder/readme.md", "hello readme")))).results[0].data;
      // The seed's default leaves the content out; include_content brings it.
      expect(await ok(ctx, "docs_query", q({ op: "get", params: { hash: a.hash } }))).not.toHaveProperty("content");
      const byHash = await ok(ctx, "docs_query", q({ op: "get", params: { hash: a.hash, include_content: true } }));
      expect(byHash).toMatchObject({ path: "deep/folder/readme.md", content: "hello readme", size: 12, content_truncated: false });
      expect((await ok(ctx, "docs_query", q({ op: "get", params: { hash: a.hash.slice(0, 10) } }))).path).toBe("deep/folder/readme.md");
      expect(await ok(ctx, "docs_query", q({ op: "get", params: { name: "readme.md", include_content: false } }))).not.toHaveProperty("content");
      expect((await ok(ctx, "docs_query", q({ op: "get", params: { path: "deep/folder/readme.md", include_content: true } }))).content).toBe("hello readme");
      await ok(ctx, "docs_execute", x({ op: "add", params: { name: "b.bin", content_base64: "AAEC/w==" } }));
      expect((await ok(ctx, "docs_query", q({ op: "get", params: { name: "b.bin", include_content: true } }))).content_base64).toBe("AAEC/w==");
      const cut = await ok(ctx, "docs_query", q({ op: "get", params: { name: "readme.md", max_bytes: 5, include_content: true } }));
      expect(cut).toMatchObject({ content: "hello", content_truncated: true, content_bytes: 12 });
    });

    it("get's errors: the seed's text, ambiguity, short hashes, no filesystem", async () => {
      const ctx = await freshCtx();
      await ok(ctx, "docs_execute", x(add("a/readme.md", "one"), add("b/readme.md", "two")));
      expect((await fails(ctx, "docs_query", q({ op: "get", params: {} }))).message).toBe("Provide 'hash' or 'name' for get.");
      expect((await fails(ctx, "docs_query", q({ op: "get", params: { query: "readme" } }))).hint).toContain("search");
      expect((await fails(ctx, "docs_query", q({ op: "get", params: { name: "readme.md" } }))).code).toBe("ambiguous_name");
      expect((await fails(ctx, "docs_query", q({ op: "get", params: { hash: "abc" } }))).code).toBe("invalid_input");
      expect((await fails(ctx, "docs_query", q({ op: "get", params: { hash: "zzzzzzzzzz" } }))).code).toBe("invalid_input");
      expect((await fails(ctx, "docs_query", q({ op: "get", params: { hash: "0123456789" } }))).code).toBe("not_found");
      expect((await fails(ctx, "docs_query", q({ op: "get", params: { name: "a/readme.md", outputPath: "/tmp/x" } }))).message).toContain("cannot write to a file");
    });

    it("status counts objects, bytes and deduplication, with detail and file types", async () => {
      const ctx = await freshCtx();
      const body = "x".repeat(5000);
      await ok(ctx, "docs_execute", x(add("one.txt", body), add("two.txt", body), add("three.md", "# three", { collection: "c1", snapshot_label: "v1" })));
      const s = await ok(ctx, "docs_query", q({ op: "status", params: { detailed: true, file_types: true } }));
      expect(s).toMatchObject({ total_objects: 3, total_bytes: 10007, deduplicated_bytes: 5000 });
      expect(s.dedup_ratio).toBeCloseTo(5000 / 10007, 5);
      expect(s.detailed).toMatchObject({ collections: 1, snapshots: 1, past_versions: 0 });
      expect(s.file_types).toEqual([
        { extension: ".txt", documents: 2, bytes: 10000 },
        { extension: ".md", documents: 1, bytes: 7 },
      ]);
    });

    it("lists collections and snapshots", async () => {
      const clock = new TestClock();
      const ctx = await freshCtx(clock);
      await ok(ctx, "docs_execute", x(add("a.md", "a", { collection: "specs", snapshot_label: "first" })));
      clock.advance(1000);
      await ok(ctx, "docs_execute", x(add("b.md", "bb", { collection: "specs", snapshot_label: "second" })));
      const cols = await ok(ctx, "docs_query", q({ op: "list_collections" }));
      expect(cols.collections).toEqual([expect.objectContaining({ name: "specs", documents: 2, bytes: 3 })]);
      const snaps = await ok(ctx, "docs_query", q({ op: "list_snapshots" }));
      expect(snaps.snapshots.map((s: { label: string }) => s.label)).toEqual(["second", "first"]);
      expect(snaps.total).toBe(2);
    });
  });
});

describe("docs_execute", () => {
  describe("update and delete", () => {
    it("update merges metadata (key=value or object), adds and removes tags, and honours dry_run", async () => {
      const ctx = await freshCtx();
      await ok(ctx, "docs_execute", x(add("notes.md", "n", { tags: ["a", "b"], metadata: { author: "Jane" } }), add("drafts/one.md", "1"), add("drafts/two.md", "2")));
      const u = (await ok(ctx, "docs_execute", x({ op: "update", params: { name: "notes.md", metadata: ["status=reviewed", "priority=high"], tags: ["c"], remove_tags: ["a"] } }))).results[0].data;
      expect(u.updated[0]).toMatchObject({ path: "notes.md", metadata: { author: "Jane", status: "reviewed", priority: "high" } });
      expect([...u.updated[0].tags].sort()).toEqual(["b", "c"]);
      const dry = (await ok(ctx, "docs_execute", x({ op: "update", params: { pattern: "drafts/*", metadata: { team: "x" }, dry_run: true } }))).results[0].data;
      expect(dry).toMatchObject({ matched: 2, dry_run: true });
      expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND metadata LIKE '%team%'`, ctx.tenantId)).toBe(0);
      const e = await fails(ctx, "docs_execute", x({ op: "update", params: { name: "notes.md" } }));
      expect(e.message).toContain("needs something to change");
      expect((await fails(ctx, "docs_execute", x({ op: "update", params: { name: "ghost.md", tags: ["x"] } }))).code).toBe("not_found");
      expect((await fails(ctx, "docs_execute", x({ op: "update", params: { name: "notes.md", metadata: ["novalue"] } }))).message).toContain("key=value");
    });

    it("delete by name, names and glob (file names in any folder), with dry_run; content stays for other users", async () => {
      const ctx = await freshCtx();
      await ok(ctx, "docs_execute", x(add("a.tmp", "t"), add("x/b.tmp", "t"), add("keep.md", "t"), add("c.md", "c")));
      const dry = (await ok(ctx, "docs_execute", x({ op: "delete", params: { name: "*.tmp", dry_run: true } }))).results[0].data;
      expect(dry.deleted.map((d: { path: string }) => d.path)).toEqual(["a.tmp", "x/b.tmp"]);
      expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND deleted_at IS NULL`, ctx.tenantId)).toBe(4);
      const del = (await ok(ctx, "docs_execute", x({ op: "delete", params: { name: "*.tmp" } }))).results[0].data;
      expect(del.count).toBe(2);
      expect((await ok(ctx, "docs_query", q({ op: "get", params: { name: "keep.md", include_content: true } }))).content).toBe("t");
      expect(await ok(ctx, "docs_execute", x({ op: "delete", params: { names: ["c.md", "keep.md"] } }))).toMatchObject({ succeeded: 1 });
      expect((await fails(ctx, "docs_execute", x({ op: "delete", params: {} }))).code).toBe("invalid_input");
    });
  });
});

describe("docs_query", () => {
  describe("tenant isolation", () => {
    it("another tenant sees, gets, updates and deletes nothing of this tenant's store", async () => {
      const a = await freshCtx();
      const b = await freshCtx();
      const added = (await ok(a, "docs_execute", x(add("secret/plan.md", "the plan", { collection: "private", snapshot_label: "s" })))).results[0].data;
      expect((await ok(b, "docs_query", q({ op: "list" }))).total).toBe(0);
      expect((await fails(b, "docs_query", q({ op: "get", params: { hash: added.hash } }))).code).toBe("not_found");
      expect((await fails(b, "docs_query", q({ op: "get", params: { name: "secret/plan.md" } }))).code).toBe("not_found");
      expect((await fails(b, "docs_execute", x({ op: "delete", params: { name: "secret/plan.md" } }))).code).toBe("not_found");
      expect((await fails(b, "docs_execute", x({ op: "update", params: { hash: added.hash, tags: ["x"] } }))).code).toBe("not_found");
      expect((await ok(b, "docs_query", q({ op: "list_collections" }))).collections).toEqual([]);
      expect((await ok(b, "docs_query", q({ op: "list_snapshots" }))).snapshots).toEqual([]);
      expect(await ok(b, "docs_query", q({ op: "status" }))).toMatchObject({ total_objects: 0, total_bytes: 0 });
      // The same content added by the other tenant is stored anew: no dedupe across tenants.
      const theirs = (await ok(b, "docs_execute", x(add("mine.md", "the plan")))).results[0].data;
      expect(theirs).toMatchObject({ hash: added.hash, bytes_deduped: 0 });
    });
  });
});

describe("docs_session", () => {
  it("dispatches actions, keeps the seed's error texts, and scopes list to the session's pins", async () => {
    const ctx = await freshCtx();
    await ok(ctx, "docs_execute", x(add("specs/a.md", "a"), add("specs/b.md", "b"), add("notes/c.md", "c")));
    expect((await fails(ctx, "docs_session", {})).message).toBe("'action' string is required");
    expect((await fails(ctx, "docs_session", { action: "x" })).message).toBe("Unknown session action 'x'. Valid actions: start, stop, pin, unpin, watch");
    await ok(ctx, "docs_session", { action: "start", params: { label: "review" } });
    const pinned = await ok(ctx, "docs_session", { action: "pin", params: { path: "specs/*" } });
    expect(pinned.pinned.map((p: { path: string }) => p.path).sort()).toEqual(["specs/a.md", "specs/b.md"]);
    const scoped = await ok(ctx, "docs_query", q({ op: "list", params: { paths_only: true, sort_by: "name", sort_order: "asc" } }));
    expect(scoped).toMatchObject({ paths: ["specs/a.md", "specs/b.md"], session_scoped: true });
    expect((await ok(ctx, "docs_query", q({ op: "list", params: { paths_only: true, use_session: false } }))).total).toBe(3);
    const described = await ok(ctx, "docs_query", q({ op: "describe", params: { target: "session_pin" } }));
    expect(described).toMatchObject({ op: "session_pin", category: "session", readOnly: false });
    await ok(ctx, "docs_session", { action: "stop" });
    expect((await ok(ctx, "docs_query", q({ op: "list", params: { paths_only: true } }))).total).toBe(3);
  });
});

describe("docs_execute", () => {
  describe("download through docs_execute", () => {
    it("is a write op that refuses non-public URLs before any request", async () => {
      const ctx = await freshCtx();
      const e = await fails(ctx, "docs_execute", x({ op: "download", params: { url: "http://169.254.169.254/latest/meta-data" } }));
      expect(e.code).toBe("url_not_allowed");
      expect((await fails(ctx, "docs_execute", x({ op: "download", params: {} }))).message).toContain("download requires 'url'.");
      expect((await fails(ctx, "docs_query", q({ op: "download", params: { url: "https://example.com" } }))).message).toMatch(/^'download' is not a read operation/);
    });
  });
});

describe("docs_query", () => {
  describe("search through the pipeline", () => {
    it("indexes what add stores, so search → get works as the seed's example, and honours the session's pins", async () => {
      const ctx = await freshCtx();
      const added = await ok(
        ctx,
        "docs_execute",
        x(
          add("auth/middleware.md", "# Authentication middleware\nThe middleware checks the bearer token before any handler runs."),
          add("ops/deploy.md", "# Deploys\nRoll back a deploy with the previous artifact."),
          { op: "add", params: { name: "bin/blob.dat", content_base64: "AAECAwQF" } },
        ),
      );
      expect(added.results[0].data.index_status).toBe("text");
      expect(added.results[2].data).toMatchObject({ index_status: "binary" });
      const r = await ok(
        ctx,
        "docs_query",
        q({ op: "search", params: { query: "authentication middleware", limit: 1, type: "keyword" } }, { op: "get", params: { hash: "$prev.results[0].hash", include_content: true } }),
      );
      expect(r.steps[0].result.results[0].path).toBe("auth/middleware.md");
      expect(r.steps[1].result.content).toContain("bearer token");
      const listed = await ok(ctx, "docs_query", q({ op: "list", params: { type: "binary", paths_only: true } }));
      expect(listed.paths).toEqual(["bin/blob.dat"]);
      await ok(ctx, "docs_session", { action: "start", params: { name: "ops-only" } });
      await ok(ctx, "docs_session", { action: "pin", params: { path: "ops/**" } });
      const scoped = await ok(ctx, "docs_query", q({ op: "search", params: { query: "middleware deploy", type: "keyword" } }));
      expect(scoped.results.map((x: { path: string }) => x.path)).toEqual(["ops/deploy.md"]);
      const unscoped = await ok(ctx, "docs_query", q({ op: "search", params: { query: "middleware deploy", type: "keyword", use_session: false } }));
      expect(unscoped.results).toHaveLength(2);
      // A deleted document leaves the index in the same statement.
      await ok(ctx, "docs_execute", x({ op: "delete", params: { name: "auth/middleware.md" } }));
      expect((await ok(ctx, "docs_query", q({ op: "search", params: { query: "middleware", type: "keyword", use_session: false } }))).results).toEqual([]);
    });
  });

  describe("one meaning of a glob", () => {
    it("a pin or filter without '/' matches file names in any folder, alike in pin, list, search, grep and delete", async () => {
      const ctx = await freshCtx();
      await ok(ctx, "docs_execute", x(add("top.md", "glob probe"), add("deep/er/low.md", "glob probe"), add("deep/other.txt", "glob probe")));
      const pinned = await ok(ctx, "docs_session", { action: "start", params: { name: "globs" } }).then(() => ok(ctx, "docs_session", { action: "pin", params: { path: "*.md" } }));
      const want = ["deep/er/low.md", "top.md"];
      expect(pinned.pinned.map((p: { path: string }) => p.path).sort()).toEqual(want);
      expect((await ok(ctx, "docs_query", q({ op: "list", params: { paths_only: true } }))).paths.sort()).toEqual(want);
      expect((await ok(ctx, "docs_query", q({ op: "search", params: { query: "probe", type: "keyword", paths_only: true } }))).paths.sort()).toEqual(want);
      expect((await ok(ctx, "docs_query", q({ op: "grep", params: { pattern: "probe", files_with_matches: true } }))).paths.sort()).toEqual(want);
      await ok(ctx, "docs_session", { action: "stop" });
      expect((await ok(ctx, "docs_query", q({ op: "search", params: { query: "probe", type: "keyword", path_pattern: "*.md", paths_only: true } }))).paths.sort()).toEqual(want);
      expect((await ok(ctx, "docs_query", q({ op: "grep", params: { pattern: "probe", paths: ["*.md"], files_with_matches: true } }))).paths.sort()).toEqual(want);
      expect((await ok(ctx, "docs_execute", x({ op: "delete", params: { name: "*.md", dry_run: true } }))).results[0].data.deleted.map((d: { path: string }) => d.path).sort()).toEqual(want);
    });
  });

  describe("get with graph", () => {
    it("adds the documents linked from and to it, and the graph op walks the same edges", async () => {
      const ctx = await freshCtx();
      await ok(ctx, "docs_execute", x(add("guide/index.md", "# Guide\nSee [setup](setup.md)."), add("guide/setup.md", "# Setup\nInstall it."), add("other.md", "unrelated")));
      const got = await ok(ctx, "docs_query", q({ op: "get", params: { name: "guide/index.md", graph: true, include_content: false } }));
      expect(got.graph_enabled).toBe(true);
      expect(got.related.map((r: { path: string }) => r.path)).toEqual(["guide/setup.md"]);
      const back = await ok(ctx, "docs_query", q({ op: "graph", params: { name: "guide/setup.md", reverse: true } }, { op: "get", params: { hash: "$prev.nodes[0].hash", include_content: false } }));
      expect(back.steps[1].result.path).toBe("guide/index.md");
    });
  });
});
