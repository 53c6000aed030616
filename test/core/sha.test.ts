import { describe, expect, it } from "vitest";
import { COMMIT_SHA_PREFIX, FULL_COMMIT_SHA } from "../../src/core/sha";

const SHA1 = "0123456789abcdef0123456789abcdef01234567";
const SHA256 = `${SHA1}${"89abcdef".repeat(3)}`;

describe("FULL_COMMIT_SHA", () => {
  it("takes a full SHA-1 or SHA-256 in lowercase and nothing else", () => {
    expect(FULL_COMMIT_SHA.test(SHA1)).toBe(true);
    expect(FULL_COMMIT_SHA.test(SHA256)).toBe(true);
    expect(FULL_COMMIT_SHA.test(SHA1.toUpperCase())).toBe(false);
    expect(FULL_COMMIT_SHA.test(SHA1.slice(0, 39))).toBe(false);
    expect(FULL_COMMIT_SHA.test(`${SHA1}0`)).toBe(false);
  });
});

describe("COMMIT_SHA_PREFIX", () => {
  it("takes 7 to 40 hex digits in either case, all digits included", () => {
    expect(COMMIT_SHA_PREFIX.test("7967760")).toBe(true);
    expect(COMMIT_SHA_PREFIX.test(SHA1.toUpperCase())).toBe(true);
    expect(COMMIT_SHA_PREFIX.test("abcdef")).toBe(false);
    expect(COMMIT_SHA_PREFIX.test(`${SHA1}0`)).toBe(false);
    expect(COMMIT_SHA_PREFIX.test("main")).toBe(false);
  });

  it("answers the same on repeated calls (no g flag, so no lastIndex state)", () => {
    expect([1, 2, 3].map(() => COMMIT_SHA_PREFIX.test("7967760"))).toEqual([true, true, true]);
  });
});
