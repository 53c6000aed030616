import { describe, expect, it } from "vitest";
import { extractEdges, extractGraph, GRAPH_TARGET_REQUIRED, indexGraph, MAX_EDGES_PER_DOCUMENT, MAX_EXTRACT_CHARS, pruneGraph, relatedDocuments } from "../../../src/docs/graph/graph";
import { graphOp } from "../../../src/docs/search/graph";
import { deleteDocument, putDocument } from "../../../src/docs/store/store";
import { indexDocument } from "../../../src/docs/store/text-index";
import type { Ctx } from "../../../src/core/context";
import { makeCtx, refusal, seedIdentity } from "../../support/helpers";

let tenantSeq = 0;
async function freshCtx(): Promise<Ctx> {
  tenantSeq++;
  return makeCtx(await seedIdentity(`graph-${tenantSeq}-${crypto.randomUUID().slice(0, 8)}`, "reader"));
}

/** Stores a document and indexes its graph, as ingest does after text extraction. */
async function add(ctx: Ctx, path: string, text: string, mime = "text/plain"): Promise<string> {
  const put = await putDocument(ctx, { path, bytes: new TextEncoder().encode(text), mimeType: mime });
  await indexGraph(ctx, { id: put.id, path: put.path, hash: put.hash, mime, text });
  return put.hash;
}

type Out = Record<string, any>;
async function graph(ctx: Ctx, params: Record<string, unknown>): Promise<Out> {
  const normalized = graphOp.normalize ? graphOp.normalize(params) : params;
  return graphOp.run(ctx, graphOp.params.parse(normalized));
}

const keys = (r: Out) => r.nodes.map((n: Out) => n.node_key);
const symbols = (path: string, text: string) =>
  extractEdges(path, "text/plain", text)
    .filter((e) => e.relation === "DEFINES")
    .map((e) => `${e.kind} ${e.label}`);
const imports = (path: string, text: string) =>
  extractEdges(path, "text/plain", text)
    .filter((e) => e.relation === "IMPORTS")
    .map((e) => ({ key: e.node_key, targets: e.targets }));

describe("extraction per language", () => {
  it("markdown: relative, rooted and extensionless links, anchors, URLs; code is not links", () => {
    const md = [
      "See [setup](./setup.md) and [intro](../README.md#intro), [api](api), [space](my%20notes.md).",
      '![diagram](img/arch.png "Architecture") and [site](https://example.com/x?q=1#y), <https://auto.link/page>',
      "[self](#local) [mail](mailto:a@b.c) [root](/docs/index.md) [wiki]]",
      "[ref]: ./reference.md",
      "Inline `[not](a-link.md)` here. [[Wiki Page]]",
      "```",
      "[fenced](fenced.md)",
      "```",
    ].join("\n");
    const edges = extractEdges("docs/guide.md", "text/markdown", md);
    expect(edges.every((e) => e.relation === "LINKS_TO")).toBe(true);
    expect(edges.map((e) => (e.node_type === "url" ? e.node_key : e.targets[0]))).toEqual([
      "docs/setup.md",
      "README.md",
      "docs/api",
      "docs/my notes.md",
      "docs/img/arch.png",
      "url:https://example.com/x?q=1",
      "url:https://auto.link/page",
      "docs/index.md",
      "docs/reference.md",
      "docs/Wiki Page",
    ]);
  });

  it("JS/TS: import, export-from, require, dynamic import; top-level definitions", () => {
    const ts = [
      "import React from 'react';",
      'import type { Props } from "./types";',
      "import './side-effect.js';",
      "export * from '../shared/x.js';",
      "const fs = require('node:fs');",
      "const lazy = () => import('./lazy');",
      "export default async function main() {}",
      "export abstract class App {}",
      "interface Local {}",
      "export type Id = string;",
      "export const enum Color { Red }",
      "export const VERSION = 1;",
      "function* gen() {}",
      "  function nested() {}",
    ].join("\n");
    expect(imports("src/app.ts", ts)).toEqual([
      { key: "module:js:react", targets: [] },
      { key: "unresolved:src/types", targets: ["src/types"] },
      { key: "unresolved:src/side-effect.js", targets: ["src/side-effect.js", "src/side-effect"] },
      { key: "unresolved:shared/x.js", targets: ["shared/x.js", "shared/x"] },
      { key: "module:js:node:fs", targets: [] },
      { key: "unresolved:src/lazy", targets: ["src/lazy"] },
    ]);
    expect(symbols("src/app.ts", ts)).toEqual(["function main", "function gen", "class App", "interface Local", "type Id", "enum Color", "const fs", "const lazy", "const VERSION"]);
  });

  it("Python: import, from-import (absolute and relative); def, class, CONSTANTS", () => {
    const py = [
      "import os, sys as system",
      "import helpers",
      "from .models import User",
      "from . import utils, views",
      "from ..core.db import conn",
      "from pkg.core import thing",
      "",
      "MAX_SIZE = 10",
      "def run():",
      "    def inner(): pass",
      "async def serve(): pass",
      "class Server(Base):",
      "    X = 1",
    ].join("\n");
    expect(imports("app/pkg/main.py", py)).toEqual([
      { key: "module:python:os", targets: ["app/pkg/os", "os"] },
      { key: "module:python:sys", targets: ["app/pkg/sys", "sys"] },
      { key: "module:python:helpers", targets: ["app/pkg/helpers", "helpers"] },
      { key: "unresolved:app/pkg/models", targets: ["app/pkg/models"] },
      { key: "unresolved:app/pkg/utils", targets: ["app/pkg/utils", "app/pkg"] },
      { key: "unresolved:app/pkg/views", targets: ["app/pkg/views", "app/pkg"] },
      { key: "unresolved:app/core/db", targets: ["app/core/db"] },
      { key: "module:python:pkg.core", targets: ["app/pkg/pkg/core", "pkg/core"] },
    ]);
    expect(symbols("app/pkg/main.py", py)).toEqual(["function run", "function serve", "class Server", "const MAX_SIZE"]);
  });

  it("Go: single and grouped imports; funcs, methods, types, consts", () => {
    const go = [
      "package main",
      'import "fmt"',
      "import (",
      '\tlog "github.com/sirupsen/logrus"',
      '\t"net/http"',
      ")",
      "func main() {}",
      "func (s *Server) Start() error { return nil }",
      "type Server struct {}",
      "type Handler interface {}",
      'const Version = "1"',
      "var (",
      "\tdebug = false",
      ")",
    ].join("\n");
    expect(imports("cmd/main.go", go).map((i) => i.key)).toEqual(["module:go:fmt", "module:go:github.com/sirupsen/logrus", "module:go:net/http"]);
    expect(symbols("cmd/main.go", go)).toEqual(["function main", "method Server.Start", "struct Server", "interface Handler", "const Version", "var debug"]);
  });

  it("Rust: mod, use (crate-relative and external), extern crate; fn, struct, enum, trait, const, macro", () => {
    const rs = [
      "mod parser;",
      "pub mod net;",
      "use std::collections::HashMap;",
      "use crate::parser::parse;",
      "use serde::{Deserialize, Serialize};",
      "extern crate log;",
      "pub fn run() {}",
      "pub(crate) async fn go() {}",
      "struct Config;",
      "pub enum Mode {}",
      "trait Runner {}",
      "const MAX: u32 = 1;",
      "macro_rules! hello { () => {} }",
    ].join("\n");
    expect(imports("src/lib.rs", rs)).toEqual([
      { key: "unresolved:src/parser", targets: ["src/parser"] },
      { key: "unresolved:src/net", targets: ["src/net"] },
      { key: "module:rust:std::collections", targets: [] },
      { key: "unresolved:src/parser", targets: ["src/parser/parse", "src/parser"] },
      { key: "module:rust:serde", targets: [] },
      { key: "module:rust:log", targets: [] },
    ]);
    expect(symbols("src/lib.rs", rs)).toEqual(["function run", "function go", "struct Config", "enum Mode", "trait Runner", "const MAX", "macro hello"]);
    // A child module of foo.rs lives in foo/.
    expect(imports("src/net.rs", "mod tcp;")[0]!.targets).toEqual(["src/net/tcp"]);
  });

  it("C/C++, Java/Kotlin and Ruby", () => {
    const c = [
      '#include "util.h"',
      "#include <stdio.h>",
      "#define MAX 10",
      "struct point {",
      "typedef unsigned long size_type;",
      "static int helper(int x) {",
      "int main(int argc, char **argv)",
      "{",
      "  if (x) {",
      "int declared(void);",
    ].join("\n");
    expect(imports("src/main.c", c)).toEqual([
      { key: "module:c:util.h", targets: ["src/util.h", "util.h", "include/util.h", "src/util.h"] },
      { key: "module:c:stdio.h", targets: ["stdio.h", "include/stdio.h", "src/stdio.h"] },
    ]);
    expect(symbols("src/main.c", c)).toEqual(["struct point", "type size_type", "macro MAX", "function helper", "function main"]);
    const java = ["package a.b;", "import java.util.List;", "import a.b.c.Thing;", "public final class Foo {", "  class Inner {}", "}"].join("\n");
    expect(imports("src/Foo.java", java).map((i) => i.key)).toEqual(["module:jvm:java.util.List", "module:jvm:a.b.c.Thing"]);
    expect(symbols("src/Foo.java", java)).toEqual(["class Foo"]);
    const rb = ["require 'json'", "require_relative 'lib/helper'", "module Tools", "class Runner < Base", "def self.start", "def run?"].join("\n");
    expect(imports("app/run.rb", rb)).toEqual([
      { key: "unresolved:app/lib/helper", targets: ["app/lib/helper"] },
      { key: "module:ruby:json", targets: ["lib/json", "json"] },
    ]);
    expect(symbols("app/run.rb", rb)).toEqual(["module Tools", "class Runner", "function start", "function run?"]);
  });

  it("extracts nothing from unknown or binary content", () => {
    expect(extractEdges("data.csv", "text/csv", "a,b\n[x](y.md)")).toEqual([]);
  });
});

describe("graph op: traversal", () => {
  it("resolves markdown links to live documents, with hash and path, and falls back otherwise", async () => {
    const ctx = await freshCtx();
    const setup = await add(ctx, "docs/setup.md", "# Setup");
    const readme = await add(ctx, "README.md", "# Readme");
    const api = await add(ctx, "docs/api/README.md", "# API");
    await add(ctx, "docs/guide.md", "[s](setup.md) [r](../README.md#top) [a](api/) [m](missing.md) [w](https://example.com/page)", "text/markdown");

    const r = await graph(ctx, { name: "docs/guide.md" });
    expect(r.root).toMatchObject({ node_key: "doc:docs/guide.md", type: "document", path: "docs/guide.md", depth: 0 });
    expect(r.nodes).toEqual([
      { node_key: "doc:README.md", type: "document", label: "README.md", path: "README.md", hash: readme, depth: 1 },
      { node_key: "doc:docs/api/README.md", type: "document", label: "docs/api/README.md", path: "docs/api/README.md", hash: api, depth: 1 },
      { node_key: "doc:docs/setup.md", type: "document", label: "docs/setup.md", path: "docs/setup.md", hash: setup, depth: 1 },
      { node_key: "unresolved:docs/missing.md", type: "unresolved", label: "docs/missing.md", depth: 1 },
      { node_key: "url:https://example.com/page", type: "url", label: "https://example.com/page", depth: 1 },
    ]);
    expect(r.edges).toContainEqual({ from: "doc:docs/guide.md", to: "doc:docs/setup.md", relation: "LINKS_TO" });
    expect(r).toMatchObject({ total_nodes: 5, truncated: false });

    // The missing target, added later, resolves from then on.
    const missing = await add(ctx, "docs/missing.md", "now here");
    const again = await graph(ctx, { name: "docs/guide.md" });
    expect(keys(again)).toContain("doc:docs/missing.md");
    expect(keys(again)).not.toContain("unresolved:docs/missing.md");
    expect(again.nodes.find((n: Out) => n.node_key === "doc:docs/missing.md").hash).toBe(missing);
  });

  it("resolves code imports to stored documents, else to module nodes; reverse finds importers", async () => {
    const ctx = await freshCtx();
    const util = await add(ctx, "src/util.ts", "export function helper() {}");
    await add(ctx, "src/lib/index.ts", "export const X = 1;");
    await add(ctx, "shared/x.ts", "export class Shared {}");
    const appTs = "import { helper } from './util';\nimport * as lib from './lib';\nimport { Shared } from '../shared/x.js';\nimport React from 'react';\nexport function main() {}\n";
    await add(ctx, "src/app.ts", appTs);
    await add(ctx, "src/other.ts", "import { helper } from './util.ts';\nimport React from 'react';\n");
    await add(ctx, "pkg/models.py", "class User: pass");
    await add(ctx, "pkg/main.py", "from .models import User\nimport numpy\n");

    const r = await graph(ctx, { name: "src/app.ts", relation: "IMPORTS" });
    expect(keys(r)).toEqual(["doc:shared/x.ts", "doc:src/lib/index.ts", "doc:src/util.ts", "module:js:react"]);
    // Documents come first, so a pipeline's $prev.nodes[0].hash names a stored dependency.
    expect(r.nodes[0].hash).toBeTruthy();
    expect(r.nodes.find((n: Out) => n.path === "src/util.ts").hash).toBe(util);

    const py = await graph(ctx, { name: "pkg/main.py", relation: "imports" });
    expect(keys(py)).toEqual(["doc:pkg/models.py", "module:python:numpy"]);

    const importers = await graph(ctx, { name: "src/util.ts", reverse: true });
    expect(keys(importers)).toEqual(["doc:src/app.ts", "doc:src/other.ts"]);
    expect(importers.edges).toContainEqual({ from: "doc:src/app.ts", to: "doc:src/util.ts", relation: "IMPORTS" });
    const reactUsers = await graph(ctx, { node_key: "module:js:react", reverse: true });
    expect(keys(reactUsers)).toEqual(["doc:src/app.ts", "doc:src/other.ts"]);
    const byId = await graph(ctx, { node_id: "module:js:react", reverse: true });
    expect(keys(byId)).toEqual(keys(reactUsers));

    // Symbols hang off their document with DEFINES; reverse from a symbol finds its definer.
    const defs = await graph(ctx, { hash: util, relation: "DEFINES" });
    expect(defs.nodes).toEqual([{ node_key: "symbol:src/util.ts#helper", type: "symbol", label: "helper", kind: "function", depth: 1 }]);
    const definer = await graph(ctx, { node_key: "symbol:src/util.ts#helper", reverse: true });
    expect(keys(definer)).toEqual(["doc:src/util.ts"]);
  });

  it("follows depth and limit, filters by relation, and says when a relation is not recorded", async () => {
    const ctx = await freshCtx();
    await add(ctx, "d.md", "end");
    await add(ctx, "c.md", "[d](d.md)");
    await add(ctx, "b.md", "[c](c.md)");
    await add(ctx, "a.md", "[b](b.md) [x](https://x.test/)");
    expect(keys(await graph(ctx, { name: "a.md" }))).toEqual(["doc:b.md", "url:https://x.test/"]);
    const deep = await graph(ctx, { name: "a.md", depth: 3 });
    expect(deep.nodes.map((n: Out) => [n.node_key, n.depth])).toEqual([
      ["doc:b.md", 1],
      ["url:https://x.test/", 1],
      ["doc:c.md", 2],
      ["doc:d.md", 3],
    ]);
    const limited = await graph(ctx, { name: "a.md", depth: 5, limit: 2 });
    expect(limited).toMatchObject({ total_nodes: 2, truncated: true });
    expect(limited.note).toMatch(/limit/);
    const up = await graph(ctx, { name: "d.md", reverse: true, depth: 5 });
    expect(up.nodes.map((n: Out) => [n.path, n.depth])).toEqual([
      ["c.md", 1],
      ["b.md", 2],
      ["a.md", 3],
    ]);
    const calls = await graph(ctx, { name: "a.md", relation: "CALLS" });
    expect(calls.nodes).toEqual([]);
    expect(calls.note).toMatch(/LINKS_TO, IMPORTS, DEFINES/);
    expect(graphOp.params.safeParse({ name: "a.md", depth: 6 }).success).toBe(false);
    expect(graphOp.params.safeParse({ name: "a.md", depth: 0 }).success).toBe(false);
    expect(graphOp.params.parse({ name: "a.md" })).toMatchObject({ depth: 1, limit: 100, reverse: false });
  });

  it("lists node types with counts and the nodes of one type", async () => {
    const ctx = await freshCtx();
    await add(ctx, "src/a.ts", "import x from 'left-pad';\nimport './b';\nexport function f() {}\nexport class K {}");
    await add(ctx, "src/b.ts", "import y from 'left-pad';\nimport z from 'lodash';");
    await add(ctx, "notes.md", "[gone](nothing.md) [web](https://w.test)");
    const types = await graph(ctx, { list_types: true });
    expect(types.types).toEqual([
      { type: "document", count: 3 },
      { type: "module", count: 2 },
      { type: "symbol", count: 2 },
      { type: "unresolved", count: 1 },
      { type: "url", count: 1 },
    ]);
    const modules = await graph(ctx, { list_type: "module" });
    expect(modules.nodes).toEqual([
      { node_key: "module:js:left-pad", type: "module", label: "left-pad" },
      { node_key: "module:js:lodash", type: "module", label: "lodash" },
    ]);
    const docs = await graph(ctx, { list_type: "document", limit: 2 });
    expect(docs.nodes.map((n: Out) => n.path)).toEqual(["notes.md", "src/a.ts"]);
    expect(docs.truncated).toBe(true);
    expect(graphOp.params.safeParse({ list_type: "planet" }).success).toBe(false);
  });

  it("re-adding a path replaces its out-edges; deleted documents vanish from every answer", async () => {
    const ctx = await freshCtx();
    await add(ctx, "b.md", "b");
    await add(ctx, "c.md", "c");
    await add(ctx, "a.md", "[b](b.md)");
    expect(keys(await graph(ctx, { name: "a.md" }))).toEqual(["doc:b.md"]);
    await add(ctx, "a.md", "[c](c.md)");
    expect(keys(await graph(ctx, { name: "a.md" }))).toEqual(["doc:c.md"]);
    expect(keys(await graph(ctx, { name: "b.md", reverse: true }))).toEqual([]);
    const rows = await ctx.d1.prepare(`SELECT COUNT(*) AS n FROM doc_graph_edges WHERE tenant_id = ? AND src_path = 'a.md'`).bind(ctx.tenantId).first<{ n: number }>();
    expect(rows!.n).toBe(1);

    // A deleted target falls back to its unresolved node; a deleted source's edges stop counting.
    await deleteDocument(ctx, { path: "c.md" });
    expect(keys(await graph(ctx, { name: "a.md" }))).toEqual(["unresolved:c.md"]);
    await deleteDocument(ctx, { path: "a.md" });
    expect((await refusal(graph(ctx, { name: "a.md" }))).code).toBe("not_found");
    expect((await graph(ctx, { list_types: true })).types).toEqual([{ type: "document", count: 1 }]);
    await pruneGraph(ctx, "a.md");
    const left = await ctx.d1.prepare(`SELECT COUNT(*) AS n FROM doc_graph_edges WHERE tenant_id = ? AND src_path = 'a.md'`).bind(ctx.tenantId).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("finds a document by bare file name and by hash, and refuses unknown roots with not_found", async () => {
    const ctx = await freshCtx();
    const h = await add(ctx, "src/deep/main.cpp", '#include "util.h"\nint main() {\n');
    await add(ctx, "src/deep/util.h", "int util();");
    await add(ctx, "other/main.cpp", "int x;");
    const byName = await graph(ctx, { name: "main.cpp", relation: "IMPORTS" });
    expect(byName.root.path).toBe("other/main.cpp");
    expect(byName.note).toMatch(/2 documents are named 'main.cpp'/);
    const byHash = await graph(ctx, { hash: h.toUpperCase(), relation: "IMPORTS" });
    expect(byHash.root.path).toBe("src/deep/main.cpp");
    expect(keys(byHash)).toEqual(["doc:src/deep/util.h"]);
    expect((await refusal(graph(ctx, { name: "nope.md" }))).code).toBe("not_found");
    expect((await refusal(graph(ctx, { hash: "0".repeat(64) }))).code).toBe("not_found");
    expect((await refusal(graph(ctx, { node_key: "module:js:nothing" }))).code).toBe("not_found");
    expect((await refusal(graph(ctx, { node_key: "doc:nope.md" }))).code).toBe("not_found");
    expect(graphOp.params.safeParse({ hash: "xyz" }).success).toBe(false);
  });

  it("refuses a query without a target with the seed's text, through normalize and run alike", async () => {
    const ctx = await freshCtx();
    for (const params of [{}, { depth: 2 }, { list_types: false }, { relation: "IMPORTS" }]) {
      const err = await refusal(() => graphOp.normalize!(params));
      expect(err.code).toBe("invalid_input");
      expect(err.message).toBe(GRAPH_TARGET_REQUIRED);
      expect(err.hint).toMatch(/list_types/);
    }
    expect(GRAPH_TARGET_REQUIRED).toBe("Provide one of 'hash', 'name', 'node_key', or 'node_id' for graph queries, or set 'list_types': true.");
    // camelCase spellings count as given.
    expect(graphOp.normalize!({ nodeKey: "doc:x" })).toEqual({ nodeKey: "doc:x" });
    expect(graphOp.normalize!({ listTypes: true })).toEqual({ listTypes: true });
    const direct = await refusal(graphOp.run(ctx, graphOp.params.parse({})));
    expect(direct.message).toBe(GRAPH_TARGET_REQUIRED);
    const two = await refusal(graph(ctx, { name: "a.md", hash: "a".repeat(64) }));
    expect(two.message).toMatch(/only one/);
  });

  it("never shows another tenant's graph", async () => {
    const a = await freshCtx();
    const b = await freshCtx();
    await add(a, "secret/plan.md", "[x](other.md) [y](https://private.test)");
    await add(a, "secret/other.md", "import z from 'private-lib';", "text/markdown");
    await add(a, "lib.ts", "import z from 'private-lib';");
    await add(b, "mine.md", "[p](secret/plan.md)");
    expect((await refusal(graph(b, { name: "secret/plan.md" }))).code).toBe("not_found");
    expect((await refusal(graph(b, { node_key: "module:js:private-lib" }))).code).toBe("not_found");
    expect((await graph(b, { list_types: true })).types).toEqual([
      { type: "document", count: 1 },
      { type: "unresolved", count: 1 },
    ]);
    expect(keys(await graph(b, { name: "mine.md" }))).toEqual(["unresolved:secret/plan.md"]);
    expect((await graph(b, { list_type: "url" })).nodes).toEqual([]);
    expect(await relatedDocuments(b, (await graph(a, { name: "secret/plan.md" })).root.hash, 2)).toEqual([]);
  });
});

describe("relatedDocuments (get with graph: true)", () => {
  it("returns documents linked in either direction up to the depth, with relation and direction", async () => {
    const ctx = await freshCtx();
    const util = await add(ctx, "src/util.ts", "export const u = 1;");
    const app = await add(ctx, "src/app.ts", "import { u } from './util';\nimport React from 'react';");
    const doc = await add(ctx, "docs/app.md", "[code](../src/app.ts)");
    expect(await relatedDocuments(ctx, app, 1)).toEqual([
      { hash: doc, path: "docs/app.md", relation: "LINKS_TO", depth: 1, direction: "incoming" },
      { hash: util, path: "src/util.ts", relation: "IMPORTS", depth: 1, direction: "outgoing" },
    ]);
    expect(await relatedDocuments(ctx, util, 1)).toEqual([{ hash: app, path: "src/app.ts", relation: "IMPORTS", depth: 1, direction: "incoming" }]);
    expect((await relatedDocuments(ctx, util, 2)).map((r) => [r.path, r.depth])).toEqual([
      ["src/app.ts", 1],
      ["docs/app.md", 2],
    ]);
    expect(await relatedDocuments(ctx, "f".repeat(64), 2)).toEqual([]);
  });
});

describe("hostile content", () => {
  /**
   * Stores `text` and indexes it as the DOC_INDEX queue's consumer does (text, graph, search rows),
   * timing both: a large document is indexed off the request, but the work must stay linear there too.
   */
  async function timedAdd(ctx: Ctx, path: string, text: string, mime: string) {
    const started = performance.now();
    const bytes = new TextEncoder().encode(text);
    const stored = await putDocument(ctx, { path, bytes, mimeType: mime });
    const indexed = await indexDocument(ctx, { id: stored.id, path: stored.path, hash: stored.hash, mime, bytes });
    const r = { index_status: indexed.status, index_note: indexed.note ?? undefined };
    const ms = performance.now() - started;
    console.log(`graph hostile ${path}: ${text.length} chars stored and indexed in ${Math.round(ms)} ms`);
    return { r, ms };
  }
  const outEdges = async (ctx: Ctx, name: string) => (await graph(ctx, { name })).nodes.map((n: Out) => n.node_key);

  // The platform's regex engine took 18.8 s on this (its link pattern rescans the line from every '[').
  it("128 KB of '[' in markdown is stored and indexed in under a second, and its real link is found", async () => {
    const ctx = await freshCtx();
    const { r, ms } = await timedAdd(ctx, "notes/brackets.md", `${"[".repeat(128 * 1024)}\nSee [the guide](guide.md).\n`, "text/markdown");
    expect(ms).toBeLessThan(1000);
    expect(r.index_status).toBe("text");
    expect(await outEdges(ctx, "notes/brackets.md")).toEqual(["unresolved:notes/guide.md"]);
  });

  // Each `import a` line made the import pattern scan every following line to the end (quadratic).
  it("a .ts file of 40,000 'import a' lines is indexed in under a second, with its one real import", async () => {
    const ctx = await freshCtx();
    const { ms } = await timedAdd(ctx, "src/imports.ts", `import b from "./b";\n${"import a\n".repeat(40_000)}export function main() {}\n`, "text/plain");
    expect(ms).toBeLessThan(1000);
    expect((await outEdges(ctx, "src/imports.ts")).sort()).toEqual(["symbol:src/imports.ts#main", "unresolved:src/b"]);
  });

  it("other languages' patterns stay linear on their worst lines", () => {
    const cases: [string, string][] = [
      ["a.py", `from a import ${" ".repeat(200_000)}x`],
      ["a.py", `import ${" a as".repeat(50_000)}`],
      ["a.c", `int f${" a".repeat(100_000)}(`],
      ["a.kt", `${"public ".repeat(30_000)}class K`],
      ["a.go", `import (\n${'\t"x"\n'.repeat(20_000)}`],
      ["a.md", `${"[[".repeat(60_000)}]]`],
      ["a.md", `${"<http://x".repeat(20_000)}`],
    ];
    for (const [path, text] of cases) {
      const started = performance.now();
      extractEdges(path, "text/plain", text);
      expect(performance.now() - started, path).toBeLessThan(1000);
    }
  });

  it("says what it cut: text past the read limit and references past the edge cap", async () => {
    const ctx = await freshCtx();
    const defs = Array.from({ length: MAX_EDGES_PER_DOCUMENT + 10 }, (_, i) => `export const C${i} = ${i};`).join("\n");
    const many = await timedAdd(ctx, "src/consts.ts", defs, "text/plain");
    expect(many.r.index_note).toContain(`kept the first ${MAX_EDGES_PER_DOCUMENT} references`);
    const edges = extractEdges("src/consts.ts", "text/plain", defs);
    expect(edges).toHaveLength(MAX_EDGES_PER_DOCUMENT);
    expect(edges[0]!.label).toBe("C0");

    // Ingest hands the graph at most the indexed text (1 MiB); a longer text given directly is cut too.
    const long = `[first](a.md)\n${"x".repeat(MAX_EXTRACT_CHARS)}\n[late](b.md)\n`;
    const cut = extractGraph("notes/long.md", "text/markdown", long);
    expect(cut.note).toContain(`only the first ${MAX_EXTRACT_CHARS} characters were read`);
    expect(cut.edges.map((e) => e.targets[0])).toEqual(["notes/a.md"]);

    const plain = await timedAdd(ctx, "notes/plain.md", "[ok](a.md)", "text/markdown");
    expect(plain.r.index_note).toBeUndefined();
  });
});
