/**
 * Seed 003 as its callers expect it: the seed's tool names on the docs surface, mcp.echo on every
 * surface, the seed's defaults and result shapes, and the seed's local-filesystem forms refused
 * with what to do instead.
 */
import { describe, expect, it } from "vitest";
import { resolvePrev } from "../../../src/core/pipeline";
import { findTool } from "../../../src/server/registry";
import { toolListing } from "../../../src/core/listing";
import { fails, makeCtx, ok, seedIdentity, workerFetch } from "../../support/helpers";

async function freshCtx() {
  return makeCtx(await seedIdentity(`seed3-${crypto.randomUUID().slice(0, 8)}`, "writer"));
}
const q = (...steps: unknown[]) => ({ steps });
const x = (...operations: unknown[]) => ({ operations });

const rpc = (method: string, params: unknown = {}) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });

interface RpcAnswer {
  result?: { tools?: Array<{ name: string; inputSchema: Record<string, unknown> }>; isError?: boolean; structuredContent?: Record<string, any> };
  error?: { code: number; message: string };
}

async function client(label: string) {
  const id = await seedIdentity(`seed3-${label}-${crypto.randomUUID().slice(0, 8)}`, "agent");
  const post = async (path: string, method: string, params: unknown = {}): Promise<RpcAnswer> => {
    const res = await workerFetch(`http://ledger.test${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${id.key}` },
      body: rpc(method, params),
    });
    return (await res.json()) as RpcAnswer;
  };
  return {
    list: async (path: string) => (await post(path, "tools/list")).result!.tools!,
    call: (path: string, name: string, args: unknown) => post(path, "tools/call", { name, arguments: args }),
  };
}

/** Where the docs toolset is absent, a seed name answers tool_not_on_surface naming its docs_* tool and ?toolsets=docs. */
async function expectOffSurface(c: Awaited<ReturnType<typeof client>>, seed: string, tool: string) {
  const r = await c.call("/mcp", seed, {});
  expect(r.error, seed).toBeUndefined();
  expect(r.result!.isError, seed).toBe(true);
  const e = r.result!.structuredContent!.error;
  expect(e.code, seed).toBe("tool_not_on_surface");
  expect(e.message, seed).toContain(tool);
  expect(e.message, seed).toContain("docs toolset");
  expect(e.hint, seed).toContain("?toolsets=default,docs");
  expect(e.hint, seed).toContain("?toolsets=docs");
}

describe("query", () => {
  describe("the seed's tool names", () => {
    it("answers query, execute and session as docs_query, docs_execute and docs_session wherever the docs toolset is", async () => {
      const c = await client("names");
      // Beside the work ledger the listing keeps docs_*, and the seed's names still answer.
      const added = await c.call("/mcp?toolsets=default,docs", "execute", { operations: [{ op: "add", params: { name: "notes/n.md", content: "# N" } }] });
      expect(added.result!.structuredContent).toMatchObject({ ok: true, succeeded: 1 });
      const listed = await c.call("/mcp?toolsets=default,docs", "query", { steps: [{ op: "list", params: { paths_only: true } }] });
      expect(listed.result!.structuredContent).toMatchObject({ ok: true, paths: ["notes/n.md"] });
      const session = await c.call("/mcp?toolsets=default,docs", "session", { action: "start", params: { name: "review" } });
      expect(session.result!.structuredContent).toMatchObject({ ok: true });
      const names = (await c.list("/mcp?toolsets=default,docs")).map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["docs_query", "docs_execute", "docs_session", "search"]));
      expect(names).not.toContain("query");
      // On the document store alone, the listing is the seed's own surface.
      expect((await c.list("/mcp?toolsets=docs")).map((t) => t.name).sort()).toEqual(["execute", "mcp.echo", "query", "session"]);
      const alone = await c.call("/mcp?toolsets=docs", "query", { steps: [{ op: "list", params: { paths_only: true } }] });
      expect(alone.result!.structuredContent).toMatchObject({ ok: true, paths: ["notes/n.md"] });
      expect((await c.call("/mcp?toolsets=docs", "docs_query", { steps: [{ op: "status" }] })).result!.structuredContent).toMatchObject({ ok: true });
    });

    it("names docs_query and ?toolsets=docs where the docs toolset is absent", async () => {
      const c = await client("absent-query");
      await expectOffSurface(c, "query", "docs_query");
    });

    it("keeps compact mode's own query, execute and session", async () => {
      const c = await client("compact");
      const r = await c.call("/mcp?mode=compact", "query", { steps: [{ op: "describe" }] });
      expect(r.result!.structuredContent).toMatchObject({ ok: true, toolsets: expect.any(Object) });
      const docs = await c.call("/mcp?mode=compact&toolsets=default,docs", "query", { steps: [{ op: "describe" }] });
      // Compact mode's describe (ops by toolset), not the document store's (query_ops, execute_ops, …).
      expect(docs.result!.structuredContent).toMatchObject({ ok: true, toolsets: { docs: expect.any(Array) } });
    });
  });
});

describe("execute", () => {
  describe("the seed's tool names", () => {
    it("names docs_execute and ?toolsets=docs where the docs toolset is absent", async () => {
      const c = await client("absent-execute");
      await expectOffSurface(c, "execute", "docs_execute");
      // A read-only docs surface has query; execute writes.
      const ro = await c.call("/mcp?toolsets=docs&readonly=1", "execute", {});
      expect(ro.result!.structuredContent!.error).toMatchObject({ code: "tool_not_on_surface" });
      expect(ro.result!.structuredContent!.error.message).toContain("docs_execute");
      expect(ro.result!.structuredContent!.error.hint).toContain("readonly=1");
    });
  });
});

describe("session", () => {
  describe("the seed's tool names", () => {
    it("names docs_session and ?toolsets=docs where the docs toolset is absent", async () => {
      const c = await client("absent-session");
      await expectOffSurface(c, "session", "docs_session");
    });
  });
});

describe("mcp.echo", () => {
  it("is listed and answers on every surface: default, a toolset, read-only and compact", async () => {
    const c = await client("echo");
    for (const path of ["/mcp", "/mcp?toolsets=changes", "/mcp?readonly=1", "/mcp?mode=compact", "/mcp?mode=compact&readonly=1", "/mcp?toolsets=docs"]) {
      expect(
        (await c.list(path)).map((t) => t.name),
        path,
      ).toContain("mcp.echo");
      const r = await c.call(path, "mcp.echo", { message: "hello" });
      expect(r.result!.structuredContent, path).toMatchObject({ ok: true, message: "hello" });
    }
  });
});

describe("docs_query", () => {
  describe("the seed's defaults and shapes", () => {
    it("search is fuzzy unless told otherwise, and get leaves the content out unless include_content", async () => {
      const ctx = await freshCtx();
      await ok(ctx, "docs_execute", x({ op: "add", params: { name: "infra/cluster.md", content: "We run kubernetes in three regions." } }));
      const found = await ok(ctx, "docs_query", q({ op: "search", params: { query: "kubernetis", type: "keyword" } }));
      expect(found.results.map((r: { path: string }) => r.path)).toEqual(["infra/cluster.md"]);
      expect((await ok(ctx, "docs_query", q({ op: "search", params: { query: "kubernetis", type: "keyword", fuzzy: false } }))).total).toBe(0);
      const meta = await ok(ctx, "docs_query", q({ op: "get", params: { name: "infra/cluster.md" } }));
      expect(meta).toMatchObject({ path: "infra/cluster.md", size: 35 });
      expect(meta).not.toHaveProperty("content");
      expect((await ok(ctx, "docs_query", q({ op: "get", params: { name: "infra/cluster.md", include_content: true } }))).content).toBe("We run kubernetes in three regions.");
      const described = await ok(ctx, "docs_query", q({ op: "describe", params: { target: "get" } }));
      expect(described.paramsSchema.properties.include_content.default).toBe(false);
    });

    it("puts each op's scalar fields on its execute result, as the seed's example does, beside data", async () => {
      const ctx = await freshCtx();
      const r = await ok(
        ctx,
        "docs_execute",
        x(
          { op: "add", params: { name: "notes.md", content: "# Notes" } },
          { op: "update", params: { name: "notes.md", metadata: ["status=reviewed"] } },
          { op: "delete", params: { name: "notes.md", dry_run: true } },
        ),
      );
      const [add, update, del] = r.results;
      expect(add).toMatchObject({ op: "add", success: true, hash: add.data.hash, path: "notes.md" });
      expect(add.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(update).toMatchObject({ op: "update", success: true, matched: 1, data: { matched: 1 } });
      expect(del).toMatchObject({ op: "delete", success: true, count: 1, dry_run: true });
      // Lists and objects stay in data only.
      expect(update).not.toHaveProperty("updated");
      expect(r).toMatchObject({ totalOps: 3, succeeded: 3, failed: 0 });
    });

    it("gives null for a $prev reference that resolves to nothing, and says where it came from", async () => {
      const prev = { results: [] };
      expect(resolvePrev({ hash: "$prev.results[0].hash", limit: 3 }, prev, "null")).toEqual({ params: { hash: null, limit: 3 }, nulls: ["hash: $prev.results[0].hash"] });
      const ctx = await freshCtx();
      await ok(ctx, "docs_execute", x({ op: "add", params: { name: "a.md", content: "alpha" } }));
      // A missed reference is null, not a silently applied default: list's limit is refused, not 100.
      const r = await ok(ctx, "docs_query", q({ op: "status" }, { op: "list", params: { limit: "$prev.nothing" } }));
      expect(r.steps[1]).toMatchObject({ op: "list", isError: true });
      const e = r.steps[1].result.error;
      expect(e.message).toMatch(/limit/);
      expect(e.message).toMatch(/null/);
      expect(e.hint).toContain("limit: $prev.nothing");
      const piped = await ok(ctx, "docs_query", q({ op: "search", params: { query: "zzzqqq", type: "keyword" } }, { op: "get", params: { hash: "$prev.results[0].hash" } }));
      // get's lookup keys keep the seed's refusal, and the hint names the reference that missed.
      expect(piped.steps[1].result.error).toMatchObject({
        message: "Provide 'hash' or 'name' for get.",
        hint: expect.stringContaining("resolved to null (a missing field or index): hash: $prev.results[0].hash"),
      });
    });

    it("lists op and action as enums in the input schemas, and still answers an op outside them with the seed's text", async () => {
      const ops = (name: string, list: string) => {
        const schema = toolListing(findTool(name)!).inputSchema as unknown as { properties: Record<string, { items?: { properties: { op: { enum: string[] } } } }> };
        return schema.properties[list]!.items!.properties.op.enum;
      };
      expect(ops("docs_query", "steps")).toEqual(["search", "grep", "list", "list_collections", "list_snapshots", "graph", "get", "status", "describe"]);
      expect(ops("docs_execute", "operations")).toEqual(["add", "update", "delete", "restore", "download"]);
      const session = toolListing(findTool("docs_session")!).inputSchema as unknown as { properties: { action: { enum: string[] } } };
      expect(session.properties.action.enum).toEqual(["start", "stop", "pin", "unpin", "watch"]);
      const ctx = await freshCtx();
      expect((await fails(ctx, "docs_query", q({ op: "add" }))).message).toMatch(/^'add' is not a read operation\. Use the 'docs_execute' tool/);
      expect((await fails(ctx, "docs_session", { action: "nope" })).message).toBe("Unknown session action 'nope'. Valid actions: start, stop, pin, unpin, watch");
    });
  });
});

describe("docs_execute", () => {
  describe("the seed's local-filesystem forms", () => {
    /** The op's failure inside its composite call, and proof that it stored nothing. */
    async function refused(tool: "docs_execute" | "docs_query" | "docs_session", body: Record<string, unknown>) {
      const ctx = await freshCtx();
      const e = await fails(ctx, tool, body);
      expect(await ok(ctx, "docs_query", q({ op: "status" }))).toMatchObject({ total_objects: 0 });
      return e;
    }

    it("add by a local path says to send the content inline, download a URL or import from GitHub", async () => {
      for (const params of [{ path: "/tmp/notes.md", tags: ["meeting"] }, { directory_path: "/home/me/docs" }, { paths: ["C:\\notes\\a.md"] }]) {
        const e = await refused("docs_execute", x({ op: "add", params }));
        expect(e.code, JSON.stringify(params)).toBe("no_local_filesystem");
        expect(e.message).toContain("runs on a server");
        expect(e.hint).toMatch(/"content"/);
        expect(e.hint).toContain("download");
        expect(e.hint).toContain("repo");
      }
    });

    it("get with outputPath says to use include_content, or restore to GitHub", async () => {
      for (const params of [
        { name: "a.md", outputPath: "/tmp/a.md" },
        { name: "a.md", output_path: "out.md" },
      ]) {
        const e = await refused("docs_query", q({ op: "get", params }));
        expect(e.code).toBe("no_local_filesystem");
        expect(e.hint).toContain("include_content: true");
        expect(e.hint).toContain("restore");
      }
    });

    it("restore to a local folder says to take the bundle or commit to a GitHub branch; a relative prefix is still a bundle", async () => {
      const ctx = await freshCtx();
      await ok(ctx, "docs_execute", x({ op: "add", params: { name: "kb/a.md", content: "alpha", collection: "docs" } }));
      for (const dir of ["/tmp/restore", "~/restore", "C:\\restore"]) {
        // The seed's own example: {"collection": "docs", "output_directory": "/tmp/restore", "dry_run": true}.
        const e = await fails(ctx, "docs_execute", x({ op: "restore", params: { collection: "docs", output_directory: dir, dry_run: true } }));
        expect(e.code, dir).toBe("no_local_filesystem");
        expect(e.message).toContain(dir);
        expect(e.hint).toContain("bundle");
        expect(e.hint).toContain("repo");
      }
      const bundle = await ok(ctx, "docs_execute", x({ op: "restore", params: { collection: "docs", output_directory: "restored" } }));
      expect(bundle.results[0].data).toMatchObject({ target: "bundle", files: [{ path: "restored/kb/a.md", content: "alpha" }] });
    });

    it("watch on a local path says to watch a repository path", async () => {
      for (const params of [{ root: "/home/me/project" }, { root: "./docs" }, { root: "~/notes" }, { path: "/srv/docs" }]) {
        const e = await refused("docs_session", { action: "watch", params });
        expect(e.code, JSON.stringify(params)).toBe("no_local_filesystem");
        expect(e.hint).toContain("owner/repo:folder");
      }
    });
  });
});
