// The docs graph reads TypeScript/JavaScript, Python and Go imports with the code index's tree-sitter
// grammars (src/code/parse): what only a parser tells apart from an import-shaped line.
import { describe, expect, it } from "vitest";
import { extractGraph, indexGraph, MAX_IMPORT_PARSE_CHARS } from "../../../src/docs/graph/graph";
import { graphOp } from "../../../src/docs/search/graph";
import { putDocument } from "../../../src/docs/store/store";
import { makeCtx, seedIdentity } from "../../support/helpers";

const importKeys = (path: string, text: string, mime = "text/plain") =>
  extractGraph(path, mime, text)
    .edges.filter((e) => e.relation === "IMPORTS")
    .map((e) => e.node_key);

describe("docs_query", () => {
  describe("graph: imports read with the code index's grammars", () => {
    it("a grammar parses the first 64 KiB for imports, whole lines, and the note says so", () => {
      const filler = "const x = 1;\n".repeat(Math.ceil(MAX_IMPORT_PARSE_CHARS / 13));
      const text = `import top from "./top";\n${filler}import late from "./late";\n`;
      const read = extractGraph("src/big.ts", "text/plain", text);
      expect(read.edges.filter((e) => e.relation === "IMPORTS").map((e) => e.node_key)).toEqual(["unresolved:src/top"]);
      expect(read.note).toContain(`imports were read from the first ${MAX_IMPORT_PARSE_CHARS} characters only`);
      expect(extractGraph("src/small.ts", "text/plain", `import top from "./top";\nimport late from "./late";\n`).note).toBeNull();
    });

    it("TS/JS: imports inside comments, strings and template literals are not imports", () => {
      const ts = [
        "/*",
        'import gone from "./in-block-comment";',
        "*/",
        '// const old = require("./in-line-comment");',
        "const snippet = \"await import('./in-string')\";",
        "const template = `",
        'import x from "./in-template";',
        "`;",
        'import real from "./real";',
      ].join("\n");
      expect(importKeys("src/app.ts", ts)).toEqual(["unresolved:src/real"]);
    });

    it("TS: import type across lines with a comment, a re-export after a statement, a spaced dynamic import", () => {
      const ts = [
        "import type {",
        "  Props, // what the view takes",
        '} from "./types";',
        'export const a = 1; export * from "./after-statement";',
        'const lazy = () => import ("./lazy");',
        'import{min}from"./minified";',
      ].join("\n");
      expect(importKeys("src/view.tsx", ts)).toEqual(["unresolved:src/types", "unresolved:src/after-statement", "unresolved:src/lazy", "unresolved:src/minified"]);
      // A script known only by its media type is read with the JavaScript grammar.
      expect(importKeys("bin/tool", 'const a = require("./a");\n// require("./b")', "application/javascript")).toEqual(["unresolved:bin/a"]);
    });

    it("Python: `from . import` over several lines, an import with a trailing comment; a docstring's imports are text", () => {
      const py = ['"""Usage:', "", "import secret_module", "from .hidden import thing", '"""', "from . import (", "    alpha,", "    beta as b,", ")", "import os  # for paths"].join("\n");
      expect(importKeys("app/pkg/main.py", py)).toEqual(["unresolved:app/pkg/alpha", "unresolved:app/pkg/beta", "module:python:os"]);
    });

    it("Go: an import block closed on its last line, a one-line block; an import in a raw string or comment is text", () => {
      const go = [
        "package main",
        "",
        "import (",
        '\t"fmt"',
        '\tstr "strings")',
        'import ("os"; _ "embed")',
        "",
        "/*",
        'import "commented/out"',
        "*/",
        "var banner = `",
        'import "in/raw/string"',
        "`",
      ].join("\n");
      expect(importKeys("cmd/main.go", go)).toEqual(["module:go:fmt", "module:go:strings", "module:go:os", "module:go:embed"]);
    });

    it("a text whose brackets nest past the grammar's work limit has its imports left unread, and says so", () => {
      const deep = `import a from "./a";\nconst x = ${"(".repeat(10_000)}1;\n`;
      const { edges, note } = extractGraph("src/deep.ts", "text/plain", deep);
      expect(edges.filter((e) => e.relation === "IMPORTS")).toEqual([]);
      expect(note).toContain("imports were not read (brackets nest too deep");
    });

    it("ingest reads the imports with the grammar and the graph op resolves them", async () => {
      const ctx = makeCtx(await seedIdentity(`graph-imports-${crypto.randomUUID().slice(0, 8)}`, "reader"));
      const add = async (path: string, text: string) => {
        const put = await putDocument(ctx, { path, bytes: new TextEncoder().encode(text), mimeType: "text/plain" });
        await indexGraph(ctx, { id: put.id, path: put.path, hash: put.hash, mime: "text/plain", text });
      };
      await add("src/util.ts", "export const u = 1;");
      await add("src/app.ts", 'const doc = `\nimport fake from "./fake";\n`;\nimport {\n  u, // the helper\n} from "./util";\n');
      const r = await graphOp.run(ctx, graphOp.params.parse({ name: "src/app.ts", relation: "IMPORTS" }));
      expect((r.nodes as { node_key: string }[]).map((n) => n.node_key)).toEqual(["doc:src/util.ts"]);
    });
  });
});
