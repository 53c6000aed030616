/**
 * Internal error text (workerd's "internal error; reference = …", a parser's stack overflow)
 * never reaches a caller: it is replaced by a stable message, and the detail goes to the log.
 */
import { describe, expect, it, vi } from "vitest";
import { INTERNAL_FAILURE_TEXT, toErrorBody } from "../../src/core/errors";
import { publicFetch } from "../../src/net/public-fetch";
import type { AiBinding } from "../../src/llm/workers-ai";
import type { VectorizeBinding } from "../../src/search/vector-index";
import { dohAnswer } from "../support/doh";
import { newWorld, ok, refusal } from "../support/helpers";
import { withStandIns } from "../support/env-stand-ins";

const WORKERD = "internal error; reference = 7c1f0a9be23d4411";
const DIFF = "diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1,2 @@\n x\n+y\n";

describe("a YAML parser's own failure", () => {
  it("check_invariants on deeply nested YAML answers a stable message, not the parser's stack overflow", async () => {
    const { ctx } = await newWorld("yaml-deep", { start: "2026-06-01T12:00:00.000Z" });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    for (const deep of [`a: ${"[".repeat(20_000)}`, `a: ${"{b: ".repeat(12_000)}`]) {
      const r = await ok(ctx, "check_invariants", { diff: DIFF, invariants: deep });
      expect(r.success).toBe(false);
      expect(r.error).toMatch(/nested too deeply to parse/);
      expect(r.error).not.toMatch(/call stack|Maximum|RangeError/i);
    }
    // The detail is logged, not lost.
    expect(errors.mock.calls.some((args) => String(args[1]).includes("Maximum call stack"))).toBe(true);
  });

  it("a syntax error still names where it is", async () => {
    const { ctx } = await newWorld("yaml-syntax", { start: "2026-06-01T12:00:00.000Z" });
    const r = await ok(ctx, "check_invariants", { diff: DIFF, invariants: "a: b: c" });
    expect(r.error).toMatch(/Invalid invariants YAML: .*line 1, column 4/);
  });
});

describe("workerd's internal error text", () => {
  it("a download whose connection fails inside the runtime reports a stable message", async () => {
    vi.mocked(globalThis.fetch).mockImplementation(async (input) => {
      const url = input instanceof Request ? input.url : String(input);
      const dns = dohAnswer(url);
      if (dns) return dns;
      throw new Error(WORKERD);
    });
    vi.spyOn(console, "error").mockImplementation(() => {});
    const err = await refusal(publicFetch("https://files.example/a.txt", { maxBytes: 1024, timeoutMs: 5000, maxRedirects: 0 }));
    const body = toErrorBody(err);
    expect(body.code).toBe("download_failed");
    expect(body.message).toBe(INTERNAL_FAILURE_TEXT);
    expect(JSON.stringify(body)).not.toContain("reference");
  });

  it("a search whose embedder fails inside the runtime still answers, without quoting the runtime", { timeout: 20_000 }, async () => {
    const w = await newWorld("internal-embedder", { start: "2026-06-01T12:00:00.000Z" });
    const ai: AiBinding = {
      run: async () => {
        throw new Error(WORKERD);
      },
    };
    const vectors: VectorizeBinding = {
      upsert: async () => ({}),
      query: async () => ({ matches: [], count: 0 }),
      deleteByIds: async () => ({}),
    };
    vi.spyOn(console, "error").mockImplementation(() => {});
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const r = await ok({ ...w.ctx, env: withStandIns(w.ctx.env, { AI: ai, VECTORS: vectors }) }, "knowledge_search", { q: "automobile servicing" });
    expect(r.mode).toBe("lexical");
    expect(r.note).toMatch(/embedder is unavailable/);
    expect(r.note).not.toContain("reference");
    expect(r.note).toContain(INTERNAL_FAILURE_TEXT);
  });
});
