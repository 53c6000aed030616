import { env } from "cloudflare:workers";
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { DEFAULT_GREP_LIMITS, grepDocuments, type LiteralQuery, requiredLiterals, trigramMatch } from "../../../src/docs/grep/grep";
import type { DocScope } from "../../../src/docs/shared";
import { grepOp } from "../../../src/docs/search/grep";
import { deleteDocument, putDocument } from "../../../src/docs/store/store";
import type { Ctx } from "../../../src/core/context";
import { makeCtx, refusal, seedIdentity } from "../../support/helpers";

let tenantSeq = 0;
async function freshCtx(): Promise<Ctx> {
  tenantSeq++;
  return makeCtx(await seedIdentity(`grep-${tenantSeq}-${crypto.randomUUID().slice(0, 8)}`, "reader"));
}

/** Stores a document and its extracted text, as ingest will once text extraction lands. */
async function addText(ctx: Ctx, path: string, text: string): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  const put = await putDocument(ctx, { path, bytes, mimeType: "text/plain" });
  await ctx.d1
    .prepare(
      `INSERT INTO doc_texts (tenant_id, hash, status, extractor, text, text_bytes, created_at) VALUES (?, ?, 'text', 'utf8', ?, ?, ?)
       ON CONFLICT (tenant_id, hash) DO NOTHING`,
    )
    .bind(ctx.tenantId, put.hash, text, bytes.byteLength, "2026-06-01T12:00:00.000Z")
    .run();
  return put.hash;
}

const grep = (ctx: Ctx, params: Record<string, unknown>) => grepOp.run(ctx, grepOp.params.parse(params)) as ReturnType<typeof grepDocuments>;

const SAMPLE = ["import x from 'y';", "", "class RequestHandler {", "  handle() {}", "}", "class Other {}", "// TODO: fix", "export class ErrorHandler extends Base {}"].join("\n");

describe("docs_query", () => {
  describe("grep: lines, options and result shape", () => {
    it("finds matching lines with path, hash, line numbers and context", async () => {
      const ctx = await freshCtx();
      const hash = await addText(ctx, "src/handlers.ts", SAMPLE);
      await addText(ctx, "README.md", "No handlers here.\nJust prose.");
      const r = await grep(ctx, { pattern: "class\\s+\\w+Handler", line_numbers: true, context: 1 });
      expect(r.mode).toBe("lines");
      expect(r.matches).toEqual([
        { path: "src/handlers.ts", hash, line_number: 3, line: "class RequestHandler {", before: [""], after: ["  handle() {}"] },
        { path: "src/handlers.ts", hash, line_number: 8, line: "export class ErrorHandler extends Base {}", before: ["// TODO: fix"], after: [] },
      ]);
      // Only the document containing both "class" and "Handler" was scanned.
      expect(r).toMatchObject({ total_matches: 2, files_matched: 1, files_searched: 1, narrowed: true, truncated: false });
      expect(r.note).toBeUndefined();
      expect(typeof r.execution_time_ms).toBe("number");

      const plain = await grep(ctx, { pattern: "TODO" });
      expect(plain.matches).toEqual([{ path: "src/handlers.ts", hash, line: "// TODO: fix" }]);
    });

    it("ignore_case, word, count, files_with_matches, max_count and limit", async () => {
      const ctx = await freshCtx();
      const a = await addText(ctx, "a.txt", "Error one\nerror two\nterror three\nERROR four\nfine");
      const b = await addText(ctx, "b.txt", "an error\nanother line");
      await addText(ctx, "c.txt", "nothing to see");

      expect((await grep(ctx, { pattern: "error" })).total_matches).toBe(3);
      expect((await grep(ctx, { pattern: "error", ignore_case: true })).total_matches).toBe(5);
      const word = await grep(ctx, { pattern: "error", ignore_case: true, word: true });
      expect(word.matches!.map((m) => m.line)).toEqual(["Error one", "error two", "ERROR four", "an error"]);

      const counted = await grep(ctx, { pattern: "error", ignore_case: true, count: true });
      expect(counted.mode).toBe("count");
      expect(counted.counts).toEqual([
        { path: "a.txt", hash: a, count: 4 },
        { path: "b.txt", hash: b, count: 1 },
      ]);
      expect(counted.matches).toBeUndefined();
      expect(counted).toMatchObject({ total_matches: 5, files_matched: 2, files_searched: 2 });

      const files = await grep(ctx, { pattern: "error", files_with_matches: true });
      expect(files.mode).toBe("files");
      expect(files.paths).toEqual(["a.txt", "b.txt"]);
      expect(files.files).toEqual([
        { path: "a.txt", hash: a },
        { path: "b.txt", hash: b },
      ]);

      const capped = await grep(ctx, { pattern: "error", ignore_case: true, max_count: 2, count: true });
      expect(capped.counts!.map((c) => c.count)).toEqual([2, 1]);
      const cappedLines = await grep(ctx, { pattern: "error", ignore_case: true, max_count: 1 });
      expect(cappedLines.matches!.map((m) => m.line)).toEqual(["Error one", "an error"]);

      const limited = await grep(ctx, { pattern: "error", ignore_case: true, limit: 2 });
      expect(limited.matches).toHaveLength(2);
      expect(limited.truncated).toBe(true);
      expect(limited.note).toMatch(/limit/);
      const limitedFiles = await grep(ctx, { pattern: "e", files_with_matches: true, limit: 1 });
      expect(limitedFiles.paths).toEqual(["a.txt"]);
      expect(limitedFiles.truncated).toBe(true);
    });

    it("filters by file, folder and glob paths, and by a session scope", async () => {
      const ctx = await freshCtx();
      await addText(ctx, "src/a.ts", "needle");
      await addText(ctx, "src/lib/b.ts", "needle");
      await addText(ctx, "src/lib/c.md", "needle");
      await addText(ctx, "srcx/d.ts", "needle");
      await addText(ctx, "docs/e.md", "needle");
      const paths = async (params: Record<string, unknown>, scope?: DocScope) =>
        (await grepDocuments(ctx, grepOp.params.parse({ pattern: "needle", files_with_matches: true, ...params }), scope)).paths;
      expect(await paths({ paths: ["src"] })).toEqual(["src/a.ts", "src/lib/b.ts", "src/lib/c.md"]);
      expect(await paths({ paths: ["./src/lib/"] })).toEqual(["src/lib/b.ts", "src/lib/c.md"]);
      expect(await paths({ paths: ["docs/e.md", "srcx/d.ts"] })).toEqual(["docs/e.md", "srcx/d.ts"]);
      expect(await paths({ paths: ["**/*.md"] })).toEqual(["docs/e.md", "src/lib/c.md"]);
      expect(await paths({ paths: ["src/*.ts"] })).toEqual(["src/a.ts"]);
      expect(await paths({ paths: ["nowhere"] })).toEqual([]);
      expect(await paths({}, { patterns: ["src/lib/**"], hashes: [] })).toEqual(["src/lib/b.ts", "src/lib/c.md"]);
    });

    it("cuts long lines around the match and says so", async () => {
      const ctx = await freshCtx();
      const long = `${"x".repeat(3000)} MARKER ${"y".repeat(3000)}`;
      await addText(ctx, "long.txt", `${long}\n${"z".repeat(1000)}`);
      const r = await grep(ctx, { pattern: "MARKER", context: 1 });
      const m = r.matches![0]!;
      expect(m.line_truncated).toBe(true);
      expect(m.line).toContain("MARKER");
      expect(m.line.startsWith("…")).toBe(true);
      expect(m.line.length).toBeLessThanOrEqual(402);
      expect(m.after![0]!.length).toBeLessThanOrEqual(401);
      expect(r.note).toMatch(/cut/);
    });

    it("anchors \\A and \\z at each line, like ^ and $, and counts no empty line after a final newline", async () => {
      const ctx = await freshCtx();
      await addText(ctx, "anchors.txt", "first\nsecond line\nthird\n");
      expect((await grep(ctx, { pattern: "\\Asecond", line_numbers: true })).matches!.map((m) => m.line_number)).toEqual([2]);
      expect((await grep(ctx, { pattern: "line\\z" })).total_matches).toBe(1);
      expect((await grep(ctx, { pattern: "(?-m)^third$" })).total_matches).toBe(1);
      expect((await grep(ctx, { pattern: "^$", count: true })).total_matches).toBe(0);
    });

    it("treats CRLF text as lines, so $ anchors at the end of each line", async () => {
      const ctx = await freshCtx();
      await addText(ctx, "win.txt", "alpha end\r\nbeta\r\ngamma end\r\n");
      const r = await grep(ctx, { pattern: "end$", line_numbers: true });
      expect(r.matches!.map((m) => [m.line_number, m.line])).toEqual([
        [1, "alpha end"],
        [3, "gamma end"],
      ]);
    });
  });

  describe("grep: bad input and safety", () => {
    it("refuses an invalid pattern with invalid_input naming the problem, and bad params through the schema", async () => {
      const ctx = await freshCtx();
      await addText(ctx, "a.txt", "text");
      const unclosed = await refusal(grep(ctx, { pattern: "foo(bar" }));
      expect(unclosed.code).toBe("invalid_input");
      expect(unclosed.message).toMatch(/missing closing \)/);
      expect(unclosed.hint).toMatch(/RE2/);
      const backref = await refusal(grep(ctx, { pattern: "(a)\\1" }));
      expect(backref.message).toMatch(/invalid escape/);
      const lookahead = await refusal(grep(ctx, { pattern: "foo(?=bar)" }));
      expect(lookahead.code).toBe("invalid_input");
      expect(grepOp.params.safeParse({}).success).toBe(false);
      expect(grepOp.params.safeParse({ pattern: "" }).success).toBe(false);
      expect(grepOp.params.safeParse({ pattern: "x", limit: 0 }).success).toBe(false);
      expect(grepOp.params.safeParse({ pattern: "x", context: 99 }).success).toBe(false);
      expect(grepOp.params.safeParse({ pattern: "x", paths: Array(101).fill("a") }).success).toBe(false);
      expect(grepOp.params.safeParse({ pattern: "x".repeat(1001) }).success).toBe(false);
      const bad = await refusal(grep(ctx, { pattern: "x", paths: ["../etc"] }));
      expect(bad.code).toBe("invalid_input");
    });

    it("runs a catastrophic-backtracking pattern over a long input in linear time", async () => {
      const ctx = await freshCtx();
      await addText(ctx, "aaa.txt", `${"a".repeat(200_000)}b\n${"a".repeat(50_000)}!`);
      const started = Date.now();
      const r = await grep(ctx, { pattern: "(a+)+$", count: true });
      const r2 = await grep(ctx, { pattern: "(a|aa)*c" });
      // A backtracking engine needs longer than the universe's age here; RE2 is linear.
      expect(Date.now() - started).toBeLessThan(3000);
      expect(r.total_matches).toBe(0);
      expect(r2.total_matches).toBe(0);
    });

    it("stops at the work budget with truncated and a note, answering what it found", async () => {
      const ctx = await freshCtx();
      for (let i = 0; i < 6; i++) await addText(ctx, `f${i}.txt`, `hit ${i}\n${"filler line\n".repeat(100)}`);
      const limits = { ...DEFAULT_GREP_LIMITS, maxChars: 2500, batchChars: 1500 };
      const r = await grepDocuments(ctx, grepOp.params.parse({ pattern: "hit \\d" }), undefined, limits);
      expect(r.truncated).toBe(true);
      expect(r.note).toMatch(/stopped after scanning/);
      expect(r.files_searched).toBeLessThan(6);
      expect(r.files_searched).toBeGreaterThan(0);
      expect(r.total_matches).toBe(r.files_searched);

      // A heavy program shrinks the budget: the same call with a 500-instruction pattern stops sooner.
      const heavy = await grepDocuments(ctx, grepOp.params.parse({ pattern: "hit [a-z]{0,500}\\d" }), undefined, { ...limits, maxChars: 1e9, maxWork: 2500 * 20 });
      expect(heavy.truncated).toBe(true);
      expect(heavy.files_searched).toBeLessThan(r.files_searched + 1);

      const timed = await grepDocuments(ctx, grepOp.params.parse({ pattern: "hit \\d" }), undefined, { ...limits, maxChars: 1e9, maxMs: 0 });
      expect(timed.truncated).toBe(true);
      expect(timed.note).toMatch(/ms/);

      const whole = await grepDocuments(ctx, grepOp.params.parse({ pattern: "hit \\d" }));
      expect(whole).toMatchObject({ truncated: false, files_searched: 6, total_matches: 6 });

      // Batch by batch, a client that asked for progress hears how far the search has got.
      const progress: [number, number | undefined][] = [];
      const reported = await grepDocuments({ ...ctx, progress: async (done, total) => void progress.push([done, total]) }, grepOp.params.parse({ pattern: "hit \\d" }), undefined, {
        ...limits,
        maxChars: 1e9,
      });
      expect(reported.files_searched).toBe(6);
      expect(progress.length).toBeGreaterThan(1);
      expect(progress.map(([done]) => done)).toEqual(progress.map((_, i) => i + 1));
      expect(new Set(progress.map(([, total]) => total))).toEqual(new Set([progress.length]));
    });
  });

  describe("grep: which documents", () => {
    it("narrows candidates with the trigram index when the pattern has required literals", async () => {
      const ctx = await freshCtx();
      for (let i = 0; i < 20; i++) await addText(ctx, `doc${String(i).padStart(2, "0")}.txt`, `ordinary text number ${i}\nnothing special`);
      await addText(ctx, "zoo/one.txt", "the Zebrafish swims");
      await addText(ctx, "zoo/two.txt", "a quokka smiles\nzebrafish again");
      await addText(ctx, "zoo/three.txt", "Quokka island");

      // The index folds case, so "Zebrafish" is a candidate too; the regex then decides.
      const rare = await grep(ctx, { pattern: "zebrafish" });
      expect(rare).toMatchObject({ narrowed: true, files_searched: 2, total_matches: 1 });
      expect(rare.matches!.map((m) => m.path)).toEqual(["zoo/two.txt"]);
      const folded = await grep(ctx, { pattern: "ZEBRAFISH", ignore_case: true });
      expect(folded).toMatchObject({ narrowed: true, files_searched: 2, total_matches: 2 });
      const either = await grep(ctx, { pattern: "zebra(fish)?|quokka", ignore_case: true, files_with_matches: true });
      expect(either).toMatchObject({ narrowed: true, files_searched: 3 });
      expect(either.paths).toEqual(["zoo/one.txt", "zoo/three.txt", "zoo/two.txt"]);
      const both = await grep(ctx, { pattern: "quokka.*\\w+" });
      expect(both).toMatchObject({ narrowed: true, files_searched: 2, total_matches: 1 });

      const scan = await grep(ctx, { pattern: "\\d+" });
      expect(scan).toMatchObject({ narrowed: false, files_searched: 23 });
      const short = await grep(ctx, { pattern: "ab|zebrafish" });
      expect(short.narrowed).toBe(false);
    });

    it("searches only live documents with extracted text", async () => {
      const ctx = await freshCtx();
      await addText(ctx, "gone.txt", "secret sauce");
      await addText(ctx, "kept.txt", "secret recipe");
      await putDocument(ctx, { path: "binary.bin", bytes: new TextEncoder().encode("secret binary") });
      await deleteDocument(ctx, { path: "gone.txt" });
      expect((await grep(ctx, { pattern: "secret", files_with_matches: true })).paths).toEqual(["kept.txt"]);
      // A new version replaces the old one's text.
      await addText(ctx, "kept.txt", "changed");
      expect((await grep(ctx, { pattern: "secret" })).total_matches).toBe(0);
      expect((await grep(ctx, { pattern: "changed" })).matches!.map((m) => m.path)).toEqual(["kept.txt"]);
    });

    it("never shows another tenant's documents, through the index or a scan", async () => {
      const a = await freshCtx();
      const b = await freshCtx();
      await addText(a, "private/plan.txt", "launch codeword tangerine");
      await addText(b, "mine.txt", "nothing in common");
      for (const pattern of ["tangerine", "launch.*", "\\w+"]) {
        const r = await grep(b, { pattern, files_with_matches: true });
        expect(r.paths).not.toContain("private/plan.txt");
      }
      expect((await grep(b, { pattern: "tangerine" })).files_searched).toBe(0);
      expect((await grep(a, { pattern: "tangerine" })).total_matches).toBe(1);
    });

    it("answers a rare literal over 10,000 documents quickly through the index", async () => {
      const ctx = await freshCtx();
      // Rows written directly: grep reads only documents and doc_texts, and 10k puts would take minutes.
      const rows = Array.from({ length: 10_000 }, (_, i) => {
        const hash = i.toString(16).padStart(64, "0");
        const text = `module ${i}\nexport function handler${i}() { return ${i * 7}; }\n// lorem ipsum dolor sit amet ${i % 97}\n`;
        return [`bulk/${String(i).padStart(5, "0")}.ts`, hash, i === 7777 ? `${text}const NEEDLE_QX9 = true;\n` : text];
      });
      for (let at = 0; at < rows.length; at += 2000) {
        const group = JSON.stringify(rows.slice(at, at + 2000));
        await env.DB.batch([
          env.DB.prepare(
            `INSERT INTO documents (tenant_id, id, path, name, hash, size, mime_type, tags, metadata, created_at, modified_at)
           SELECT ?1, 'bulk-' || json_extract(value, '$[1]'), json_extract(value, '$[0]'), 'x.ts', json_extract(value, '$[1]'), 1, 'text/plain', '[]', '{}', 't', 't' FROM json_each(?2)`,
          ).bind(ctx.tenantId, group),
          env.DB.prepare(
            `INSERT INTO doc_texts (tenant_id, hash, status, extractor, text, text_bytes, created_at)
           SELECT ?1, json_extract(value, '$[1]'), 'text', 'utf8', json_extract(value, '$[2]'), length(json_extract(value, '$[2]')), 't' FROM json_each(?2)`,
          ).bind(ctx.tenantId, group),
        ]);
      }
      await grep(ctx, { pattern: "NEEDLE_QX9" });
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        const r = await grep(ctx, { pattern: "NEEDLE_QX9", line_numbers: true });
        times.push(Date.now() - started);
        expect(r).toMatchObject({ narrowed: true, files_searched: 1, total_matches: 1 });
        expect(r.matches![0]).toMatchObject({ path: "bulk/07777.ts", line_number: 4 });
      }
      times.sort((x, y) => x - y);
      // The target is 100 ms p50 through /mcp; locally the query alone should sit far below that.
      expect(times[2]).toBeLessThan(250);
    });
  });
});

describe("required literals", () => {
  const lits = (p: string) => requiredLiterals(p);
  it("extracts what every match must contain", () => {
    expect(lits("hello")).toEqual({ lit: "hello" });
    expect(lits("class\\s+\\w+Handler")).toEqual({ and: [{ lit: "class" }, { lit: "Handler" }] });
    expect(lits("TODO|FIXME")).toEqual({ or: [{ lit: "TODO" }, { lit: "FIXME" }] });
    expect(lits("colou?r")).toEqual({ or: [{ lit: "colour" }, { lit: "color" }] });
    expect(lits("(foo|bar)baz")).toEqual({ or: [{ lit: "foobaz" }, { lit: "barbaz" }] });
    expect(lits("a.b")).toEqual({ all: true });
    expect(lits("ab|abc")).toEqual({ all: true });
    expect(lits("(?i)needle")).toEqual({ lit: "needle" });
    expect(lits("\\Qa.b*c\\E")).toEqual({ lit: "a.b*c" });
    expect(lits("x(abc)+y")).toEqual({ and: [{ lit: "xabc" }, { lit: "abcy" }] });
    expect(lits("\\w+Handler")).toEqual({ lit: "Handler" });
    expect(lits("zebra(fish)?|quokka")).toEqual({ or: [{ lit: "zebra" }, { lit: "quokka" }] });
    expect(lits("x(abc)*y")).toEqual({ all: true });
    expect(lits("[Tt]odo:")).toEqual({ or: [{ lit: "Todo:" }, { lit: "todo:" }] });
    expect(lits("[^a]bcd")).toEqual({ lit: "bcd" });
    expect(lits("\\x41BC")).toEqual({ lit: "ABC" });
    expect(lits("^foo\\.bar$")).toEqual({ lit: "foo.bar" });
    expect(lits("a{2}bcd")).toEqual({ lit: "abcd" });
    expect(lits("(?P<name>abc)")).toEqual({ lit: "abc" });
    expect(trigramMatch(lits('say "hi"!'))).toBe('"say ""hi""!"');
    expect(trigramMatch(lits("a.*b"))).toBeNull();
  });

  /** Evaluates a query against text the way the case-folding trigram index does (ASCII text here). */
  const holds = (q: LiteralQuery, text: string): boolean =>
    "all" in q ? true : "lit" in q ? text.toLowerCase().includes(q.lit.toLowerCase()) : "and" in q ? q.and.every((x) => holds(x, text)) : q.or.some((x) => holds(x, text));

  it("is sound: whenever RE2 matches a text, the literal query holds for it", () => {
    const patterns = [
      "abc",
      "ab+c",
      "(ab|cd)ef",
      "x?yz",
      "a(bc)?def",
      "[ab]cd",
      "(abc|de)f*g",
      "ab.*cd",
      "\\bfoo\\b",
      "(?i)FOO",
      "f(o|oo)bar",
      "[a-c]{1,2}bc",
      "(xy)+z",
      "ab?c?d",
      "(a|b)(c|d)(e|f)",
      "((ab)|(cd))((ef)|(gh))",
      "a\\.b\\.c",
      "[.]ab",
      "a|bcd",
      "x{0}abc",
      "(?:abc){2}",
      "ab(?i)CD",
      "\\w+bc",
      "x(abc)+y",
      "(ab)+(cd)+",
      "a(b|c)+d",
      "[a-h]{2}x",
      "(a|bc)(d|ef)(g|hx)",
      "((a|b)(c|d)){3}",
      "a+b+c+",
      "(abc|x*)d",
      "z{2,}y",
      "(?:x|y)?abc",
    ];
    const alphabet = "abcdefghxyz.FO";
    let x = 12345;
    const rand = (n: number) => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return x % n;
    };
    const texts: string[] = [];
    for (let i = 0; i < 3000; i++) texts.push(Array.from({ length: 2 + rand(9) }, () => alphabet[rand(alphabet.length)]).join(""));
    let matched = 0;
    for (const p of patterns) {
      const re = RE2JS.compile(p);
      const q = requiredLiterals(p);
      for (const t of [...texts, p.replace(/[^a-z]/g, "")]) {
        if (!re.test(t)) continue;
        matched++;
        expect(holds(q, t), `${p} matches '${t}' but ${JSON.stringify(q)} does not hold`).toBe(true);
      }
    }
    expect(matched).toBeGreaterThan(100);
  });
});
