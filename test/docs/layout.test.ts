/**
 * The document store keeps the room arrangement: the top of src/docs holds only rooms, services
 * and the tool list; the catalog reaches docs only through src/docs/index.ts; the code index
 * takes its glob matcher from the ground floor, not from docs; op files define no service.
 */
import { describe, expect, it } from "vitest";

const SOURCES = import.meta.glob<string>("../../src/**/*.ts", { query: "?raw", import: "default", eager: true });
const paths = Object.keys(SOURCES).map((p) => p.replace("../../", ""));
const importsOf = (path: string) => [...SOURCES[`../../${path}`]!.matchAll(/^import[^;]*?from "([^"]+)";/gms)].map((m) => m[1]!);

describe("the document store's layout", () => {
  it("keeps only index.ts and shared.ts at the top of src/docs; everything else is in a room or service folder", () => {
    const top = paths.filter((p) => /^src\/docs\/[^/]+\.ts$/.test(p)).sort();
    expect(top).toEqual(["src/docs/index.ts", "src/docs/shared.ts"]);
  });

  it("lets the catalog import docs tools from src/docs/index.ts only", () => {
    expect(importsOf("src/server/registry.ts").filter((s) => s.startsWith("../docs"))).toEqual(["../docs"]);
  });

  it("has no arrow from the code index up into docs", () => {
    const codeToDocs = paths
      .filter((p) => p.startsWith("src/code/"))
      .flatMap((p) =>
        importsOf(p)
          .filter((s) => /(^|\/)docs(\/|$)/.test(s))
          .map((s) => `${p} → ${s}`),
      );
    expect(codeToDocs).toEqual([]);
  });

  it("keeps the search service in the search room's model, the op file holding the op only", () => {
    const op = SOURCES["../../src/docs/search/search.ts"]!;
    expect(op).toContain("defineOp(");
    expect(op).not.toMatch(/\.prepare\(|export async function/);
    expect(SOURCES["../../src/docs/search/model.ts"]).toMatch(/export async function searchDocuments\(/);
  });

  it("keeps SQL out of the rooms' op files: it lives in the rooms' model.ts", () => {
    const rooms = ["content", "collections", "search", "sessions", "composite"];
    const opFiles = paths.filter((p) => rooms.some((r) => p.startsWith(`src/docs/${r}/`)) && !p.endsWith("/model.ts"));
    expect(opFiles.length).toBeGreaterThan(15);
    expect(opFiles.filter((p) => /\.prepare\(/.test(SOURCES[`../../${p}`]!))).toEqual([]);
  });
});
