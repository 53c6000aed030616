/// <reference types="vite/client" />
// Syntax-aware parsing (src/code/parse) inside workerd, on real sources shipped by pinned packages:
// zod's TypeScript, hono's built JavaScript, flatted's Python and Go, esquery's minified bundle.
import { describe, expect, it } from "vitest";
import { type CodeChunk, type ParsedFile, languageOf, parseSource, resolveImport } from "../../src/code/parse";
import zodChecks from "../../node_modules/zod/src/v4/core/checks.ts?raw";
import zodRegistries from "../../node_modules/zod/src/v4/core/registries.ts?raw";
import zodSchemas from "../../node_modules/zod/src/v4/core/schemas.ts?raw";
import honoBase from "../../node_modules/hono/dist/hono-base.js?raw";
import flattedPy from "../../node_modules/flatted/python/flatted.py?raw";
import flattedGo from "../../node_modules/flatted/golang/pkg/flatted/flatted.go?raw";
import esqueryMin from "../../node_modules/esquery/dist/esquery.min.js?raw";
import zodReadme from "../../node_modules/zod/README.md?raw";

// Only the keys are used: the file lists of two real packages, as the index would know a repository.
const zodCore = Object.keys(import.meta.glob("../../node_modules/zod/src/v4/core/*.ts")).map((p) => p.replace("../../node_modules/zod/", ""));
const honoDist = Object.keys(import.meta.glob("../../node_modules/hono/dist/**/*.js")).map((p) => p.replace("../../node_modules/hono/", ""));

const symbol = (parsed: ParsedFile, qualified: string) => {
  const found = parsed.symbols.filter((s) => s.qualified === qualified);
  expect(found, qualified).toHaveLength(1);
  return found[0]!;
};

/** The invariants every chunking keeps: bounds, limits, text, and no non-blank line left out. */
function expectWellFormedChunks(chunks: CodeChunk[], text: string): void {
  const lines = text.split("\n");
  const covered = new Uint8Array(lines.length + 1);
  for (const chunk of chunks) {
    expect(chunk.start_line).toBeGreaterThanOrEqual(1);
    expect(chunk.end_line).toBeGreaterThanOrEqual(chunk.start_line);
    expect(chunk.end_line).toBeLessThanOrEqual(lines.length);
    expect(chunk.end_line - chunk.start_line + 1).toBeLessThanOrEqual(80);
    expect(chunk.text.length).toBeLessThanOrEqual(3000);
    const whole = lines.slice(chunk.start_line - 1, chunk.end_line).join("\n");
    // A line over the limit comes in pieces; any other chunk is exactly its lines.
    if (whole.length > 3000 && chunk.start_line === chunk.end_line) expect(whole.includes(chunk.text)).toBe(true);
    else expect(chunk.text === whole, `chunk ${chunk.start_line}-${chunk.end_line} is its lines`).toBe(true);
    for (let line = chunk.start_line; line <= chunk.end_line; line++) covered[line] = 1;
  }
  const missed = lines.map((l, i) => (l.trim() !== "" && !covered[i + 1] ? i + 1 : 0)).filter(Boolean);
  expect(missed).toEqual([]);
}

describe("the wasm runtime", () => {
  it("runs where compiling wasm from bytes is refused, as in production", async () => {
    // The smallest valid module: if this compiled, the parses below would prove nothing about production.
    // (workers-types declares the constructor abstract for that reason, hence Reflect.)
    expect(() => Reflect.construct(WebAssembly.Module, [new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])])).toThrow(/disallowed/);
    for (const [path, text] of [
      ["a.ts", "let a = 1"],
      ["a.tsx", "const a = <div/>"],
      ["a.js", "a()"],
      ["a.py", "a()"],
      ["a.go", "package a"],
    ]) {
      const parsed = await parseSource(path!, text!);
      expect(parsed.syntax, path).toBe(true);
    }
    // The runtime's start hides Node.js from emscripten for a moment (runtime.ts); nothing of it remains.
    expect((globalThis as { process?: object }).process).not.toHaveProperty("type");
  });
});

describe("TypeScript (zod)", () => {
  it("finds definitions with lines, export and signature", async () => {
    const parsed = await parseSource("src/v4/core/checks.ts", zodChecks);
    expect(parsed).toMatchObject({ language: "typescript", syntax: true });
    expect(symbol(parsed, "$ZodCheckDef")).toEqual({
      name: "$ZodCheckDef",
      qualified: "$ZodCheckDef",
      kind: "interface",
      start_line: 11,
      end_line: 18,
      exported: true,
      signature: "export interface $ZodCheckDef",
    });
    expect(symbol(parsed, "_whenHasSize")).toMatchObject({
      kind: "function",
      start_line: 42,
      end_line: 45,
      exported: false,
      signature: "const _whenHasSize = (payload: schemas.ParsePayload): boolean =>",
    });
    expect(symbol(parsed, "handleCheckPropertyResult")).toMatchObject({ kind: "function", start_line: 1000, end_line: 1008, exported: false });
    // The imports and the banner after them are one module chunk.
    expect(parsed.chunks[0]).toMatchObject({ start_line: 1, end_line: 9, kind: "module", symbol: "" });
    // The doc comment above a definition is in its chunk.
    expect(parsed.chunks.find((c) => c.symbol === "_whenHasSize")).toMatchObject({ start_line: 41, end_line: 45, kind: "function" });
    expectWellFormedChunks(parsed.chunks, zodChecks);
  });

  it("records calls with the function they sit in, and imports resolved to files", async () => {
    const parsed = await parseSource("src/v4/core/checks.ts", zodChecks);
    expect(parsed.references).toContainEqual({ name: "nullish", line: 44, enclosing: "_whenHasSize", kind: "call" });
    expect(parsed.references).toContainEqual({ name: "prefixIssues", line: 1006, enclosing: "handleCheckPropertyResult", kind: "call" });
    // A definition's own name is not a use of it.
    expect(parsed.references.filter((r) => r.name === "handleCheckPropertyResult" && r.line === 1000)).toEqual([]);
    expect(parsed.imports.slice(0, 2)).toEqual([
      { specifier: "./core.js", line: 3, names: ["*"] },
      { specifier: "./errors.js", line: 4, names: ["*"] },
    ]);
    const known = new Set(zodCore);
    expect(known.has("src/v4/core/core.ts")).toBe(true);
    expect(parsed.imports.map((i) => resolveImport("src/v4/core/checks.ts", i.specifier, known))).toEqual([
      "src/v4/core/core.ts",
      "src/v4/core/errors.ts",
      "src/v4/core/regexes.ts",
      "src/v4/core/schemas.ts",
      "src/v4/core/util.ts",
    ]);
  });

  it("qualifies a class's methods", async () => {
    const parsed = await parseSource("src/v4/core/registries.ts", zodRegistries);
    expect(symbol(parsed, "$ZodRegistry")).toMatchObject({ kind: "class", start_line: 27, end_line: 77, exported: true });
    const methods = parsed.symbols.filter((s) => s.qualified.startsWith("$ZodRegistry.")).map((s) => s.qualified);
    expect(methods).toEqual(["$ZodRegistry.add", "$ZodRegistry.clear", "$ZodRegistry.remove", "$ZodRegistry.get", "$ZodRegistry.has"]);
    expect(symbol(parsed, "$ZodRegistry.clear")).toMatchObject({ kind: "method", start_line: 45, end_line: 49, signature: "clear(): this" });
    // The class fits the limits, so it is one chunk.
    expect(parsed.chunks.filter((c) => c.symbol.startsWith("$ZodRegistry"))).toEqual([expect.objectContaining({ start_line: 27, end_line: 77, symbol: "$ZodRegistry", kind: "class" })]);
    expectWellFormedChunks(parsed.chunks, zodRegistries);
  });

  it("knows TypeScript's other declaration forms", async () => {
    const source = [
      "export default class { run() {} }",
      "namespace Shapes { export function area() { return 1 } }",
      "export enum Color { Red }",
      "abstract class Base { private secret() {} protected abstract shape(): void; #hidden() {} }",
      "const helper = function () {}, limit = 3;",
      "export { Base, helper };",
      'export * from "./all.js";',
      'import Default, { named as alias } from "./mod.js";',
      'const lazy = import("./lazy.js");',
    ].join("\n");
    const parsed = await parseSource("src/forms.ts", source);
    expect(parsed.symbols.map((s) => [s.qualified, s.kind, s.exported])).toEqual([
      ["default", "class", true],
      ["default.run", "method", true],
      ["Shapes", "namespace", false],
      ["Shapes.area", "function", true],
      ["Color", "enum", true],
      ["Base", "class", true],
      ["Base.secret", "method", false],
      ["Base.shape", "method", true],
      ["Base.#hidden", "method", false],
      ["helper", "function", true],
      ["limit", "variable", false],
      ["lazy", "variable", false],
    ]);
    expect(parsed.imports).toEqual([
      { specifier: "./all.js", line: 7, names: ["*"] },
      { specifier: "./mod.js", line: 8, names: ["default", "named"] },
      { specifier: "./lazy.js", line: 9, names: [] },
    ]);
    expect(parsed.chunks.map((c) => [c.start_line, c.kind, c.symbol])).toEqual([
      [1, "class", "default"],
      [2, "module", "Shapes"],
      [3, "type", "Color"],
      [4, "class", "Base"],
      [5, "function", "helper"],
      [5, "module", ""],
    ]);
  });
});

describe("JavaScript (hono)", () => {
  it("splits a class over the limits by method and keeps the rest as class chunks", async () => {
    const parsed = await parseSource("dist/hono-base.js", honoBase);
    expect(parsed.language).toBe("javascript");
    // `var Hono = class Hono { … }`, exported later by `export { Hono as HonoBase }`.
    expect(symbol(parsed, "Hono")).toMatchObject({ kind: "class", start_line: 24, end_line: 347, exported: true });
    expect(symbol(parsed, "Hono.#addRoute")).toMatchObject({ kind: "method", start_line: 246, exported: false });
    expect(symbol(parsed, "Hono.fetch")).toMatchObject({ kind: "method", start_line: 305, exported: true });
    const bySymbol = new Map(parsed.chunks.map((c) => [c.symbol, c]));
    expect(bySymbol.get("Hono.constructor")).toMatchObject({ kind: "method", start_line: 40, end_line: 76 });
    // route()'s JSDoc (lines 89-106) comes with it.
    expect(symbol(parsed, "Hono.route")).toMatchObject({ start_line: 107, end_line: 119 });
    expect(bySymbol.get("Hono.route")).toMatchObject({ kind: "method", start_line: 89, end_line: 119 });
    // The fields before the constructor stay with the class.
    expect(parsed.chunks).toContainEqual(expect.objectContaining({ symbol: "Hono", kind: "class", start_line: 24, end_line: 39 }));
    expect(parsed.chunks.some((c) => c.symbol === "Hono" && c.end_line - c.start_line > 80)).toBe(false);
    expectWellFormedChunks(parsed.chunks, honoBase);
  });

  it("records calls inside methods and resolves relative imports among the package's files", async () => {
    const parsed = await parseSource("dist/hono-base.js", honoBase);
    expect(parsed.references).toContainEqual({ name: "#addRoute", line: 45, enclosing: "Hono.constructor", kind: "call" });
    expect(parsed.references).toContainEqual({ name: "compose", line: 283, enclosing: "Hono.#dispatch", kind: "call" });
    expect(parsed.imports[1]).toEqual({ specifier: "./utils/url.js", line: 2, names: ["getPath", "getPathNoStrict", "mergePath"] });
    const known = new Set(honoDist);
    expect(resolveImport("dist/hono-base.js", "./utils/url.js", known)).toBe("dist/utils/url.js");
    expect(resolveImport("dist/hono-base.js", "./helper/route/index.js", known)).toBe("dist/helper/route/index.js");
    expect(resolveImport("dist/hono-base.js", "./helper/route", known)).toBe("dist/helper/route/index.js");
  });
});

describe("Python (flatted)", () => {
  it("finds functions, classes and methods with Python's export convention", async () => {
    const parsed = await parseSource("python/flatted.py", flattedPy);
    expect(parsed).toMatchObject({ language: "python", syntax: true });
    expect(symbol(parsed, "stringify")).toEqual({
      name: "stringify",
      qualified: "stringify",
      kind: "function",
      start_line: 136,
      end_line: 144,
      exported: true,
      signature: "def stringify(value, *args, **kwargs):",
    });
    expect(symbol(parsed, "_Known")).toMatchObject({ kind: "class", start_line: 19, end_line: 22, exported: false });
    expect(symbol(parsed, "_Known.__init__")).toMatchObject({ kind: "method", start_line: 20, end_line: 22 });
    expect(symbol(parsed, "_wrap")).toMatchObject({ exported: false });
    expect(parsed.imports).toEqual([{ specifier: "json", line: 17, names: [] }]);
    expect(parsed.chunks.map((c) => [c.start_line, c.end_line, c.kind, c.symbol]).slice(0, 3)).toEqual([
      [1, 17, "module", ""],
      [19, 22, "class", "_Known"],
      [24, 26, "class", "_String"],
    ]);
    expectWellFormedChunks(parsed.chunks, flattedPy);
  });

  it("records calls with the function they sit in, without self", async () => {
    const parsed = await parseSource("python/flatted.py", flattedPy);
    expect(parsed.references).toContainEqual({ name: "_index", line: 140, enclosing: "stringify", kind: "call" });
    expect(parsed.references).toContainEqual({ name: "_Known", line: 137, enclosing: "stringify", kind: "call" });
    expect(parsed.references).toContainEqual({ name: "dumps", line: 144, enclosing: "stringify", kind: "call" });
    expect(parsed.references).toContainEqual({ name: "resolver", line: 75, enclosing: "_resolver", kind: "reference" });
    expect(parsed.references.some((r) => r.name === "self")).toBe(false);
  });
});

describe("Python declarations", () => {
  it("keeps decorators with their definition and treats dunders as public", async () => {
    const source = "import os\n\n@dataclass\nclass Point:\n    x: int\n\n    def __repr__(self):\n        return fmt(self)\n\n    def _norm(self):\n        return 0\n\nLIMIT = 10\n_cache = {}\n";
    const parsed = await parseSource("geo/point.py", source);
    expect(parsed.symbols.map((s) => [s.qualified, s.kind, s.start_line, s.end_line, s.exported])).toEqual([
      ["Point", "class", 3, 11, true],
      ["Point.__repr__", "method", 7, 8, true],
      ["Point._norm", "method", 10, 11, false],
      ["LIMIT", "variable", 13, 13, true],
      ["_cache", "variable", 14, 14, false],
    ]);
    expect(symbol(parsed, "Point").signature).toBe("class Point:");
    expect(parsed.references).toContainEqual({ name: "fmt", line: 8, enclosing: "Point.__repr__", kind: "call" });
    expect(parsed.chunks.map((c) => [c.start_line, c.end_line, c.kind, c.symbol])).toEqual([
      [1, 1, "module", ""],
      [3, 11, "class", "Point"],
      [13, 14, "module", ""],
    ]);
  });
});

describe("Go (flatted)", () => {
  it("finds functions, types and imports; windows a function over the limits keeping its symbol", async () => {
    const parsed = await parseSource("golang/pkg/flatted/flatted.go", flattedGo);
    expect(parsed).toMatchObject({ language: "go", syntax: true });
    expect(symbol(parsed, "Stringify")).toMatchObject({
      kind: "function",
      start_line: 16,
      end_line: 143,
      exported: true,
      signature: "func Stringify(value, replacer, space any) (string, error)",
    });
    expect(symbol(parsed, "flattedIndex")).toMatchObject({ kind: "type", start_line: 13, exported: false });
    expect(symbol(parsed, "revive")).toMatchObject({ exported: false });
    expect(parsed.imports.map((i) => i.specifier)).toEqual(["encoding/json", "reflect", "sort", "strconv", "strings"]);
    const windows = parsed.chunks.filter((c) => c.symbol === "Stringify");
    expect(windows.length).toBeGreaterThan(1);
    expect(windows[0]!.start_line).toBe(15); // its doc comment
    expect(windows.at(-1)!.end_line).toBe(143);
    for (let i = 1; i < windows.length; i++) {
      // Consecutive windows share lines, so a passage cut by one boundary is whole in a neighbour.
      expect(windows[i]!.start_line).toBeLessThanOrEqual(windows[i - 1]!.end_line);
      expect(windows[i]!.kind).toBe("function");
    }
    expectWellFormedChunks(parsed.chunks, flattedGo);
  });

  it("records calls with the function they sit in", async () => {
    const parsed = await parseSource("golang/pkg/flatted/flatted.go", flattedGo);
    expect(parsed.references).toContainEqual({ name: "loop", line: 195, enclosing: "Parse", kind: "call" });
    expect(parsed.references).toContainEqual({ name: "Unmarshal", line: 148, enclosing: "Parse", kind: "call" });
    expect(parsed.references).toContainEqual({ name: "loop", line: 255, enclosing: "ref", kind: "call" });
  });

  it("qualifies methods by their receiver type", async () => {
    const source =
      "package store\n\ntype Store[K comparable] struct{ items map[K]int }\n\nfunc (s *Store[K]) Get(k K) int {\n\treturn s.lookup(k)\n}\n\nfunc (Store[K]) lookup(k K) int { return 0 }\n";
    const parsed = await parseSource("store/store.go", source);
    expect(symbol(parsed, "Store.Get")).toMatchObject({ kind: "method", start_line: 5, end_line: 7, exported: true });
    expect(symbol(parsed, "Store.lookup")).toMatchObject({ kind: "method", exported: false });
    expect(parsed.references).toContainEqual({ name: "lookup", line: 6, enclosing: "Store.Get", kind: "call" });
    expect(parsed.chunks.map((c) => [c.symbol, c.kind])).toEqual([
      ["", "module"],
      ["Store", "type"],
      ["Store.Get", "method"],
      ["Store.lookup", "method"],
    ]);
  });
});

describe("without a grammar, or with a broken file", () => {
  it("cuts other languages into 60-line windows sharing 10 lines", async () => {
    const parsed = await parseSource("README.md", zodReadme);
    expect(parsed).toMatchObject({ language: "markdown", syntax: false, symbols: [], references: [], imports: [] });
    expect(parsed.chunks.every((c) => c.kind === "window" && c.symbol === "")).toBe(true);
    expectWellFormedChunks(parsed.chunks, zodReadme);
    for (const c of parsed.chunks) expect(c.end_line - c.start_line + 1).toBeLessThanOrEqual(60);
    const [first, second] = parsed.chunks;
    expect(second!.start_line).toBeLessThanOrEqual(first!.end_line);
    expect(first!.end_line - second!.start_line + 1).toBeLessThanOrEqual(10);
  });

  it("still chunks a file with a syntax error, and finds the definitions the grammar could place", async () => {
    const lines = zodChecks.split("\n");
    // Cut an interface open in the middle of the file.
    const broken = [...lines.slice(0, 600), "export interface Broken {", "  check: (((", ...lines.slice(600)].join("\n");
    const parsed = await parseSource("src/v4/core/checks.ts", broken);
    expect(parsed.syntax).toBe(true);
    expectWellFormedChunks(parsed.chunks, broken);
    expect(symbol(parsed, "$ZodCheckDef")).toMatchObject({ start_line: 11, end_line: 18 });
    expect(parsed.symbols.some((s) => s.name === "_whenHasLength")).toBe(true);
  });

  it("slices a minified line into pieces within the character limit", async () => {
    const parsed = await parseSource("dist/esquery.min.js", esqueryMin);
    expect(parsed.syntax).toBe(true);
    const longest = Math.max(...esqueryMin.split("\n").map((l) => l.length));
    expect(longest).toBeGreaterThan(3000);
    expect(parsed.chunks.length).toBeGreaterThanOrEqual(Math.ceil(longest / 3000));
    expectWellFormedChunks(parsed.chunks, esqueryMin);
    expect(parsed.chunks.map((c) => c.text).join("").length).toBeGreaterThanOrEqual(esqueryMin.length - 100);
  });

  it("parses about 1 MB quickly and caps the references it records", async () => {
    let big = "";
    while (big.length < 1_000_000) big += `${zodSchemas}\n`;
    await parseSource("warm.ts", zodSchemas);
    const started = performance.now();
    const parsed = await parseSource("src/big.ts", big);
    const elapsed = performance.now() - started;
    console.info(`parsed ${big.length} characters in ${elapsed.toFixed(0)} ms: ${parsed.chunks.length} chunks, ${parsed.symbols.length} symbols`);
    expect(parsed.syntax).toBe(true);
    expect(parsed.references).toHaveLength(5000);
    expect(parsed.symbols.length).toBeGreaterThan(1000);
    // A generous bound for a slow CI machine; the message above prints the real figure.
    expect(elapsed).toBeLessThan(3000);
  });
});

describe("languageOf", () => {
  it("names languages by extension", () => {
    expect(["a.ts", "a.d.ts", "a.mts", "a.tsx", "a.js", "a.jsx", "a.cjs", "a.py", "a.go", "README.md", "x.json", "lib.rs", "A.java", "Dockerfile", ".eslintrc", "LICENSE"].map(languageOf)).toEqual([
      "typescript",
      "typescript",
      "typescript",
      "tsx",
      "javascript",
      "javascript",
      "javascript",
      "python",
      "go",
      "markdown",
      "json",
      "rust",
      "java",
      "dockerfile",
      "text",
      "text",
    ]);
  });
});

describe("resolveImport", () => {
  it("TS/JS: relative paths, extensions, index files, .js written for .ts", () => {
    const known = new Set(["src/a.ts", "src/b/index.tsx", "src/c.d.ts", "src/d.mts", "lib/e.js", "src/f.jsx", "src/g.ts", "src/g.js"]);
    expect(resolveImport("src/main.ts", "./a", known)).toBe("src/a.ts");
    expect(resolveImport("src/main.ts", "./a.js", known)).toBe("src/a.ts");
    expect(resolveImport("src/main.ts", "./b", known)).toBe("src/b/index.tsx");
    expect(resolveImport("src/main.ts", "./c", known)).toBe("src/c.d.ts");
    expect(resolveImport("src/main.ts", "./d.mjs", known)).toBe("src/d.mts");
    expect(resolveImport("src/x/main.ts", "../../lib/e.js", known)).toBe("lib/e.js");
    expect(resolveImport("src/main.js", "./f", known)).toBe("src/f.jsx");
    // The file named exactly wins over the one it would compile from.
    expect(resolveImport("src/main.ts", "./g.js", known)).toBe("src/g.js");
    expect(resolveImport("src/main.ts", "./missing", known)).toBeUndefined();
    expect(resolveImport("src/main.ts", "hono", known)).toBeUndefined();
    expect(resolveImport("src/main.ts", "../../../a", known)).toBeUndefined();
  });

  it("Python: relative imports from the package, absolute ones from the root or a src layout", () => {
    const known = new Set(["pkg/__init__.py", "pkg/models.py", "pkg/sub/__init__.py", "pkg/sub/views.py", "src/app/core.py", "src/app/util/__init__.py"]);
    expect(resolveImport("pkg/sub/views.py", ".", known)).toBe("pkg/sub/__init__.py");
    expect(resolveImport("pkg/sub/views.py", "..models", known)).toBe("pkg/models.py");
    expect(resolveImport("pkg/sub/views.py", "..", known)).toBe("pkg/__init__.py");
    expect(resolveImport("pkg/models.py", ".sub.views", known)).toBe("pkg/sub/views.py");
    expect(resolveImport("tests/test_models.py", "pkg.models", known)).toBe("pkg/models.py");
    expect(resolveImport("tests/test_models.py", "pkg.sub", known)).toBe("pkg/sub/__init__.py");
    expect(resolveImport("src/app/core.py", "app.util", known)).toBe("src/app/util/__init__.py");
    expect(resolveImport("pkg/models.py", "json", known)).toBeUndefined();
    expect(resolveImport("pkg/models.py", "....too_far", known)).toBeUndefined();
  });

  it("Go: the package folder by the import path's last segments, its first non-test file", () => {
    const known = new Set(["go.mod", "main.go", "internal/store/store_test.go", "internal/store/sql.go", "internal/store/mem.go", "internal/api/api.go"]);
    expect(resolveImport("main.go", "github.com/acme/app/internal/store", known)).toBe("internal/store/mem.go");
    expect(resolveImport("internal/api/api.go", "github.com/acme/app/internal/api", known)).toBe("internal/api/api.go");
    expect(resolveImport("main.go", "fmt", known)).toBeUndefined();
    expect(resolveImport("main.go", "github.com/other/lib/store", known)).toBeUndefined();
  });
});
