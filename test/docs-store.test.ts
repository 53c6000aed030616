import { describe, expect, it } from "vitest";
import { chunkSpans, MAX_CHUNK_BYTES, MIN_CHUNK_BYTES } from "../src/docs/chunker";
import { sha256Hex } from "../src/db/ids";

/** Deterministic pseudo-random bytes (xorshift32), so failures reproduce. */
function randomBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const text = (s: string) => new TextEncoder().encode(s);

async function chunkHashes(data: Uint8Array): Promise<string[]> {
  const out: string[] = [];
  for (const s of chunkSpans(data)) out.push(await sha256Hex(data.subarray(s.offset, s.offset + s.length)));
  return out;
}

describe("chunker", () => {
  it("is deterministic, covers the input, and keeps sizes within bounds", () => {
    const data = randomBytes(2 * 1024 * 1024, 7);
    const a = chunkSpans(data);
    const b = chunkSpans(data);
    expect(a).toEqual(b);
    expect(a.length).toBeGreaterThan(4);
    let at = 0;
    a.forEach((s, i) => {
      expect(s.offset).toBe(at);
      at += s.length;
      expect(s.length).toBeLessThanOrEqual(MAX_CHUNK_BYTES);
      if (i < a.length - 1) expect(s.length).toBeGreaterThanOrEqual(MIN_CHUNK_BYTES);
    });
    expect(at).toBe(data.length);
  });

  it("gives a document below the minimum one chunk", () => {
    expect(chunkSpans(randomBytes(MIN_CHUNK_BYTES - 1, 3))).toEqual([{ offset: 0, length: MIN_CHUNK_BYTES - 1 }]);
    expect(chunkSpans(new Uint8Array(0))).toEqual([{ offset: 0, length: 0 }]);
  });

  it("cuts bytes without content-defined boundaries at the maximum size", () => {
    const spans = chunkSpans(new Uint8Array(MAX_CHUNK_BYTES * 2 + 5));
    expect(spans.map((s) => s.length)).toEqual([MAX_CHUNK_BYTES, MAX_CHUNK_BYTES, 5]);
  });

  it("re-finds the later boundaries after an insertion near the start", async () => {
    const data = randomBytes(2 * 1024 * 1024, 11);
    const edited = concat(data.subarray(0, 1000), text("an inserted sentence that shifts every later byte"), data.subarray(1000));
    const before = await chunkHashes(data);
    const after = await chunkHashes(edited);
    const old = new Set(before);
    const changed = after.filter((h) => !old.has(h));
    expect(changed.length).toBeGreaterThanOrEqual(1);
    expect(changed.length).toBeLessThanOrEqual(2);
    // The changed chunks are the first ones; everything after them is shared.
    expect(after.slice(changed.length).every((h) => old.has(h))).toBe(true);
  });
});
