/**
 * Path globs for reservations: normalization and its refusals, matching a pattern against a
 * path, and deciding whether two patterns overlap. Overlap is checked against tables, against
 * witnesses among concrete paths, and exhaustively against every short path over a tiny alphabet
 * (with a regular-expression oracle for matching, fine here because the patterns are the test's).
 */
import { describe, expect, it } from "vitest";
import { ToolError } from "../../../src/core/errors";
import { isGlob, normalizePath, normalizePattern, patternMatches, patternsOverlap } from "../../../src/work/reservations/globs";

const matches = (pattern: string, path: string) => patternMatches(normalizePattern(pattern), normalizePath(path));
const overlap = (a: string, b: string) => patternsOverlap(normalizePattern(a), normalizePattern(b));

function refusal(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

/** The same syntax as a RegExp: an independent reading of the module comment's rules. */
function oracle(pattern: string): RegExp {
  const segments = pattern.split("/");
  let src = "";
  segments.forEach((seg, i) => {
    const last = i === segments.length - 1;
    if (seg === "**") {
      src += last ? ".+" : "(?:.*/)?";
      return;
    }
    for (const ch of seg) src += ch === "*" ? "[^/]*" : ch === "?" ? "[^/]" : ch.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    if (!last) src += "/";
  });
  return new RegExp(`^${src}$`, "u");
}

describe("path globs", () => {
  describe("normalization", () => {
    it.each([
      ["README.md", "README.md"],
      ["  src/auth/ ", "src/auth/**"],
      ["./src/a.ts", "src/a.ts"],
      ["./src/", "src/**"],
      ["src/**/**/x", "src/**/x"],
      ["**/**", "**"],
      ["a/**/**/", "a/**"],
      ["a/**/**/**/b/**/**", "a/**/b/**"],
      ["a***b", "a*b"],
      ["***", "*"],
      ["src/[ab]{c,d}.ts", "src/[ab]{c,d}.ts"],
      ["a b/c d.txt", "a b/c d.txt"],
      ["a/".repeat(63) + "a", "a/".repeat(63) + "a"],
    ])("pattern %j is %j", (raw, canonical) => {
      expect(normalizePattern(raw)).toBe(canonical);
    });

    it("keeps a path literal: stars and question marks are file-name characters there", () => {
      expect(normalizePath("./src/a.ts")).toBe("src/a.ts");
      expect(normalizePath(" src/*.ts ")).toBe("src/*.ts");
      expect(normalizePath("src/**/x?")).toBe("src/**/x?");
      expect(normalizePath("odd\\name.txt")).toBe("odd\\name.txt");
      expect(normalizePath("x".repeat(1024))).toBe("x".repeat(1024));
    });

    it("tells globs from plain paths", () => {
      expect(isGlob("src/**")).toBe(true);
      expect(isGlob("src/a?.ts")).toBe(true);
      expect(isGlob("*.md")).toBe(true);
      expect(isGlob("README.md")).toBe(false);
      expect(isGlob("src/[ab].ts")).toBe(false);
      expect(isGlob("{a,b}")).toBe(false);
    });

    it.each([
      ["", "is empty"],
      ["   ", "is empty"],
      ["./", "is empty"],
      ["/etc/passwd", "is absolute"],
      ["/", "is absolute"],
      [".", "has a '.' segment"],
      ["a/./b", "has a '.' segment"],
      ["././a", "has a '.' segment"],
      ["../x", "has a '..' segment"],
      ["src/..", "has a '..' segment"],
      ["a\\b", "contains a backslash"],
      ["a\u0000b", "contains a control character"],
      ["a\u001bb", "contains a control character"],
      ["a\u007fb", "contains a control character"],
      ["a\u0085b", "contains a control character"],
      ["a//b", "has an empty segment"],
      ["a//", "has an empty segment"],
      ["x".repeat(513), "is longer than 512 characters"],
      ["a".repeat(511) + "/", "is longer than 512 characters"],
      ["a/".repeat(64) + "a", "has more than 64 segments"],
      ["a/".repeat(64), "has more than 64 segments"],
    ])("refuses pattern %j: %s", (raw, why) => {
      const err = refusal(() => normalizePattern(raw));
      expect(err.code).toBe("invalid_input");
      expect(err.message).toContain(why);
      expect(err.message).toMatch(/^Path pattern '/);
      expect(err.hint).toContain("relative to the repository root");
    });

    it.each([
      ["", "is empty"],
      ["/src/a.ts", "is absolute"],
      ["./a/./b", "has a '.' segment"],
      ["src/../a.ts", "has a '..' segment"],
      ["a//b", "has an empty segment"],
      ["src/", "has an empty segment"],
      ["a\u0001", "contains a control character"],
      ["x".repeat(1025), "is longer than 1024 characters"],
    ])("refuses path %j: %s", (raw, why) => {
      const err = refusal(() => normalizePath(raw));
      expect(err.code).toBe("invalid_input");
      expect(err.message).toContain(why);
      expect(err.message).toMatch(/^Path '/);
      expect(err.hint).toContain("src/auth/login.ts");
    });

    it("quotes at most 80 characters of a refused input, control characters flattened", () => {
      const long = refusal(() => normalizePattern("x".repeat(600)));
      expect(long.message).toContain("x".repeat(80));
      expect(long.message).not.toContain("x".repeat(81));
      expect(long.message.length).toBeLessThan(160);
      expect(refusal(() => normalizePattern("a\u0000b")).message).not.toContain("\u0000");
    });
  });

  describe("matching", () => {
    it.each([
      ["README.md", "README.md", true],
      ["readme.md", "README.md", false],
      ["src", "src/a.ts", false],
      ["src/a.ts", "src", false],
      // `*` stays inside one segment and may match nothing.
      ["src/*.ts", "src/a.ts", true],
      ["src/*.ts", "src/.ts", true],
      ["src/*.ts", "src/x/a.ts", false],
      ["*.md", "README.md", true],
      ["*.md", "docs/README.md", false],
      ["*", "x", true],
      ["*", "x/y", false],
      ["a**b", "ab", true],
      ["a**b", "axyb", true],
      ["a**b", "a/b", false],
      // `?` is exactly one character, never "/".
      ["src/?.ts", "src/a.ts", true],
      ["src/?.ts", "src/ab.ts", false],
      ["src/?.ts", "src/.ts", false],
      ["a?b", "a/b", false],
      ["😀?", "😀😀", true],
      ["?", "😀", true],
      // `**` as a segment: zero or more segments, at least one when last.
      ["**", "a", true],
      ["**", "a/b/c", true],
      ["a/**", "a/x", true],
      ["a/**", "a/x/y", true],
      ["a/**", "a", false],
      ["a/**", "ab/x", false],
      ["**/b", "b", true],
      ["**/b", "x/y/b", true],
      ["**/b", "xb", false],
      ["**/b", "x/yb", false],
      ["a/**/b", "a/b", true],
      ["a/**/b", "a/x/b", true],
      ["a/**/b", "a/x/y/b", true],
      ["a/**/b", "ab", false],
      ["a/**/b", "a/xb", false],
      ["a/**/b", "a/b/c", false],
      ["a/**/b/**", "a/b/c", true],
      ["a/**/b/**", "a/b", false],
      ["**/test/**", "src/test/a.ts", true],
      ["**/test/**", "test/a.ts", true],
      ["**/test/**", "test", false],
      ["src/auth/", "src/auth/login/x.ts", true],
      // No classes, braces or escapes: literal characters, and a path's "*" is literal too.
      ["[ab].ts", "[ab].ts", true],
      ["[ab].ts", "a.ts", false],
      ["{a,b}", "{a,b}", true],
      ["{a,b}", "a", false],
      ["src/*", "src/*", true],
      ["src/x", "src/*", false],
    ])("%j against %j is %s", (pattern, path, expected) => {
      expect(matches(pattern, path)).toBe(expected);
    });
  });

  describe("overlap", () => {
    it.each([
      ["src/**", "src/a.ts", true],
      ["*.md", "README.md", true],
      ["a/**/b", "a/b", true],
      ["**/test/**", "src/**", true],
      ["x*y", "*z*", true],
      ["a/*", "a/**", true],
      ["**", "deep/er/path.ts", true],
      ["src/*.ts", "src/a.*", true],
      ["a/**/b", "**/x/**", true],
      ["a/**/b", "a/**", true],
      ["?", "*", true],
      ["a/*/c", "a/b/*", true],
      ["**/*.ts", "src/**", true],
      ["README.md", "README.md", true],
      ["src/auth/", "src/auth/**/*.ts", true],
      ["src/*.ts", "src/x/*.ts", false],
      ["a/**", "a", false],
      ["src/*.ts", "src/*.js", false],
      ["a/*", "a/*/b", false],
      ["a/**", "b/**", false],
      ["?", "??", false],
      ["*.ts", "src/*.ts", false],
      ["a/**/b", "a/**/c", false],
      ["src", "src/**", false],
      ["a*b", "a/b", false],
      ["[ab]", "a", false],
      ["**/b", "b/**", true],
      ["**/b", "a/**/c", false],
    ])("%j and %j: %s, in either order", (a, b, expected) => {
      expect(overlap(a, b)).toBe(expected);
      expect(overlap(b, a)).toBe(expected);
    });

    const PATTERNS = [
      "src/**",
      "src/*.ts",
      "src/x/*.ts",
      "*.md",
      "README.md",
      "**/test/**",
      "src/auth/**",
      "**/*.ts",
      "docs/**/*.md",
      "src/?.ts",
      "test/**/globs.test.ts",
      "a/**/b",
      "a/**",
      "**",
      "src/auth/login.ts",
      "[ab].ts",
      "x*y",
      "*z*",
    ];
    const PATHS = [
      "README.md",
      "CHANGELOG.md",
      "package.json",
      "docs/README.md",
      "docs/api.md",
      "docs/a/b/guide.md",
      "deep/a/b/c/d/e.md",
      "src/a.ts",
      "src/x.ts",
      "src/ab.ts",
      "src/.ts",
      "src/*.ts",
      "src/b.js",
      "src/index.ts",
      "src/x/a.ts",
      "src/x/y/z.ts",
      "src/x/test/q.ts",
      "src/auth",
      "src/auth/login.ts",
      "src/auth/README.md",
      "src/auth/oauth/token.ts",
      "src/test",
      "src/test/util.ts",
      "src/😀.ts",
      "test",
      "test/a.md",
      "test/globs.test.ts",
      "test/work/reservations/globs.test.ts",
      "lib/test/x/y.ts",
      "a",
      "a.ts",
      "[ab].ts",
      "a/b",
      "a/x/b",
      "a/x/y/b",
      "a/b/c",
      "a/test/b",
      "b",
      "x/y/b",
      "xzy",
    ];

    it("agrees with every witness among concrete paths, and is symmetric", () => {
      let both = 0;
      for (const a of PATTERNS) {
        for (const b of PATTERNS) {
          const witness = PATHS.find((p) => matches(a, p) && matches(b, p));
          const result = overlap(a, b);
          expect(result, `${a} and ${b}`).toBe(overlap(b, a));
          if (witness !== undefined) {
            both++;
            expect(result, `${a} and ${b} both match ${witness}`).toBe(true);
          }
        }
        expect(overlap(a, a), a).toBe(true);
      }
      expect(both).toBeGreaterThan(PATTERNS.length);
    });

    it("matches the RegExp oracle and decides overlap exactly, over every short path on {a, b, /}", () => {
      const paths: string[] = [];
      let layer = [""];
      for (let len = 1; len <= 7; len++) {
        layer = layer.flatMap((s) => ["a", "b", "/"].map((c) => s + c));
        paths.push(...layer.filter((s) => !s.startsWith("/") && !s.endsWith("/") && !s.includes("//")));
      }
      const patterns = ["a", "ab", "*", "?", "??", "**", "a*", "*b", "a*b", "*a*", "a/*", "*/b", "a/**", "**/b", "a/**/b", "**/a/**", "*/*", "?/**", "**/?b", "a/*/b", "b/**/a*", "**/b/**/a"];
      const covered = new Map<string, Set<string>>();
      for (const p of patterns) {
        const re = oracle(p);
        const set = new Set<string>();
        for (const path of paths) {
          const got = patternMatches(p, path);
          expect(got, `${p} against ${path}`).toBe(re.test(path));
          if (got) set.add(path);
        }
        covered.set(p, set);
      }
      for (const a of patterns) {
        for (const b of patterns) {
          const setB = covered.get(b)!;
          const witness = [...covered.get(a)!].some((p) => setB.has(p));
          expect(patternsOverlap(a, b), `${a} and ${b}`).toBe(witness);
        }
      }
    });
  });

  describe("hostile input", () => {
    const starry = "*a".repeat(256);

    it("keeps a 512-character pattern of alternating stars as it is", () => {
      expect(starry).toHaveLength(512);
      expect(normalizePattern(starry)).toBe(starry);
    });

    it("matches it against 1024-character paths", () => {
      expect(patternMatches(starry, normalizePath("a".repeat(1024)))).toBe(true);
      expect(patternMatches(starry, normalizePath("a".repeat(1023) + "b"))).toBe(false);
      expect(patternMatches(starry, normalizePath("b".repeat(1024)))).toBe(false);
    });

    it("decides its overlap with other such patterns", () => {
      // "b" x 256 then "a" x 256 is in both.
      expect(patternsOverlap(starry, "b*".repeat(256))).toBe(true);
      // Both must end in their last literal.
      expect(patternsOverlap(starry, "*b".repeat(256))).toBe(false);
      expect(patternsOverlap(starry, "?".repeat(512))).toBe(true);
      expect(patternsOverlap(starry, "?".repeat(255))).toBe(false);
    });

    it("decides overlap between many-segment patterns", () => {
      expect(patternsOverlap(normalizePattern("*/".repeat(63) + "*"), normalizePattern("**/a"))).toBe(true);
      expect(patternsOverlap(normalizePattern("?/".repeat(63) + "?"), normalizePattern("?/".repeat(62) + "?"))).toBe(false);
      expect(patternsOverlap(normalizePattern("**/a/".repeat(30) + "**"), normalizePattern("a/".repeat(40) + "*"))).toBe(true);
      expect(patternsOverlap(normalizePattern("**/a/".repeat(30) + "**"), normalizePattern("a/".repeat(29) + "*"))).toBe(false);
    });
  });
});
