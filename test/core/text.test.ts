import { describe, expect, it } from "vitest";
import { clip, clipCodePoints, clippedString } from "../../src/core/text";

describe("clip", () => {
  it("keeps text that fits and cuts longer text to max units, the ellipsis included", () => {
    expect(clip("abcde", 5)).toBe("abcde");
    expect(clip("abcdef", 5)).toBe("abcd…");
    expect(clip("abcdef", 5)).toHaveLength(5);
  });

  it("counts UTF-16 units: a cut may fall inside a surrogate pair", () => {
    expect(clip("a😀b", 3)).toBe("a\ud83d…");
  });
});

describe("clipCodePoints", () => {
  it("counts code points, so an astral character is kept whole or dropped whole", () => {
    expect(clipCodePoints("😀😀😀", 3)).toBe("😀😀😀");
    expect(clipCodePoints("😀😀😀😀", 3)).toBe("😀😀…");
    expect(clipCodePoints("a😀b", 3)).toBe("a😀b");
  });
});

describe("clippedString", () => {
  it("parses a long string to its clip and refuses a non-string", () => {
    expect(clippedString(4).parse("abcdef")).toBe("abc…");
    expect(clippedString(4).parse("abcd")).toBe("abcd");
    expect(clippedString(4).safeParse(5).success).toBe(false);
  });
});
