import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { capText, extractText, htmlToText, MAX_INDEXED_TEXT_BYTES } from "../../../src/docs/extract/extract";
import { MISSING_QUERY_MESSAGE, searchDocuments, type SearchResponse, trigramSimilarity } from "../../../src/docs/search/model";
import { searchOp } from "../../../src/docs/search/search";
import { pinOp, startOp, stopOp } from "../../../src/docs/sessions/session";
import { pendingEmbeddings } from "../../../src/search/semantic";
import type { AnyOpDef } from "../../../src/docs/shared";
import { deleteDocument, putDocument } from "../../../src/docs/store/store";
import { documentTitle, indexText, tenantKey, vocabulary } from "../../../src/docs/store/text-index";
import type { Ctx } from "../../../src/core/context";
import { ToolError } from "../../../src/core/errors";
import { buildPdf as buildPdfOf, textContent } from "../../fixtures/pdf";
import { count, makeCtx, refusal, seedIdentity, settle, TestClock } from "../../support/helpers";

const buildPdf = (lines: string[]) => buildPdfOf(textContent(lines));

const enc = (s: string) => new TextEncoder().encode(s);

let tenantSeq = 0;
async function freshCtx(clock = new TestClock()): Promise<Ctx> {
  tenantSeq++;
  const id = await seedIdentity(`dsearch-${tenantSeq}-${crypto.randomUUID().slice(0, 8)}`, "writer");
  return makeCtx(id, clock);
}

/** What ingestDocument will do: store, then index. */
async function add(ctx: Ctx, path: string, content: string | Uint8Array, opts: { mime?: string; tags?: string[] } = {}) {
  const bytes = typeof content === "string" ? enc(content) : content;
  const put = await putDocument(ctx, { path, bytes, mimeType: opts.mime, tags: opts.tags });
  const indexed = await indexText(ctx, { id: put.id, path: put.path, hash: put.hash, mime: opts.mime ?? "application/octet-stream", bytes });
  return { ...put, ...indexed };
}

/** The op as the composite tools run it: normalize, validate, run. */
async function search(ctx: Ctx, raw: Record<string, unknown>): Promise<SearchResponse> {
  const params = searchOp.params.parse(searchOp.normalize!(raw));
  return (await searchOp.run(ctx, params)) as unknown as SearchResponse;
}

/** A session op as the composite tools run it. */
const runOp = (op: AnyOpDef, ctx: Ctx, raw: Record<string, unknown>) => op.run(ctx, op.params.parse(op.normalize ? op.normalize(raw) : raw));

const offCtx = (ctx: Ctx): Ctx => ({ ...ctx, env: { ...ctx.env, SEMANTIC_SEARCH: "off" } });

describe("extractText", () => {
  it("decodes plain text, markdown and code as UTF-8", async () => {
    const md = await extractText(enc("# Title\n\nSome *markdown* text — café\n"), "text/markdown", "notes/a.md");
    expect(md).toEqual({ status: "text", extractor: "utf8", text: "# Title\n\nSome *markdown* text — café\n", truncated: false, note: null });
    const code = await extractText(enc("export const x = 1;\n"), "application/octet-stream", "src/x.ts");
    expect(code.status).toBe("text");
    expect(code.text).toBe("export const x = 1;\n");
  });

  it("keeps JSON as text and notes when it does not parse", async () => {
    const ok = await extractText(enc('{"name": "ledger", "tags": ["a"]}'), "application/json", "cfg.json");
    expect(ok).toMatchObject({ status: "text", extractor: "json", text: '{"name": "ledger", "tags": ["a"]}', note: null });
    const bad = await extractText(enc('{"name": '), "application/octet-stream", "broken.json");
    expect(bad).toMatchObject({ status: "text", extractor: "json" });
    expect(bad.note).toContain("not valid JSON");
  });

  it("reduces HTML to its visible text, entities decoded, scripts and styles dropped", async () => {
    const html = `<!DOCTYPE html><html><head><title>Hidden head</title><style>body { color: red }</style></head>
      <body><h1>Release &amp; rollout</h1><script>var secret = "<p>not text</p>";</script>
      <p>Caf&eacute; opens at 9&nbsp;am &#8212; see <a href="x?a=1&amp;b=2">the <b>sch</b>edule</a>.</p>
      <!-- a comment --><div>3 &lt; 4 &#x2713;</div><img src="a.png" alt="A chart"><noscript>enable js</noscript></body></html>`;
    const r = await extractText(enc(html), "text/html", "page.html");
    expect(r.status).toBe("text");
    expect(r.extractor).toBe("html");
    const lines = r.text!.split("\n").filter((l) => l !== "");
    expect(lines).toEqual(["Release & rollout", "Café opens at 9 am — see the schedule.", "3 < 4 ✓", "A chart"]);
    expect(r.text).not.toContain("secret");
    expect(r.text).not.toContain("color");
    expect(r.text).not.toContain("Hidden head");
    expect(r.text).not.toContain("enable js");
    // An unclosed script swallows the rest of the page instead of leaking it.
    expect(htmlToText("<p>before</p><script>if (a < b) { x() }")).toBe("before");
  });

  it("reads text out of a real PDF with unpdf", async () => {
    const r = await extractText(buildPdf(["Quarterly report on database optimization", "Second line (with parens)"]), "application/pdf", "r.pdf");
    expect(r.status).toBe("text");
    expect(r.extractor).toBe("pdf");
    expect(r.text).toContain("Quarterly report on database optimization");
    expect(r.text).toContain("Second line (with parens)");
    // Recognized by its magic number even without a MIME type or extension.
    const sniffed = await extractText(buildPdf(["sniffed by magic"]), "application/octet-stream", "upload");
    expect(sniffed.text).toContain("sniffed by magic");
    const broken = await extractText(enc("%PDF-1.4\nthis is not really a pdf"), "application/pdf", "bad.pdf");
    expect(broken.status).toBe("failed");
    expect(broken.text).toBeNull();
    expect(broken.note).toMatch(/PDF/);
  }, 60_000);

  it("treats NUL bytes or invalid UTF-8 as binary, with a note", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    const r = await extractText(png, "image/png", "img/logo.png");
    expect(r).toMatchObject({ status: "binary", extractor: "none", text: null, truncated: false });
    expect(r.note).toContain("not text-indexed");
    expect((await extractText(new Uint8Array([0x61, 0xff, 0x62]), "text/plain", "x.txt")).status).toBe("binary");
  });

  it("caps indexed text at 1 MiB without splitting a character", async () => {
    const big = "é".repeat(MAX_INDEXED_TEXT_BYTES); // 2 bytes each: twice the cap
    const r = await extractText(enc(big), "text/plain", "big.txt");
    expect(r.truncated).toBe(true);
    expect(r.note).toContain("cut");
    expect(new TextEncoder().encode(r.text!).byteLength).toBeLessThanOrEqual(MAX_INDEXED_TEXT_BYTES);
    expect(r.text!.length).toBe(MAX_INDEXED_TEXT_BYTES / 2);
    expect(capText("short")).toEqual({ text: "short", truncated: false });
    expect(capText("😀😀", 5)).toEqual({ text: "😀", truncated: true });
  });
});

describe("indexText", () => {
  it("writes one doc_texts row per content hash, marks the version indexed and titles markdown by its heading", async () => {
    const ctx = await freshCtx();
    const body = "---\nlayout: x\n---\n```\n# not a heading\n```\n## Deploy runbook\n\nSteps to deploy the ledger.\n";
    const a = await add(ctx, "ops/runbook.md", body, { mime: "text/markdown" });
    const b = await add(ctx, "copy/runbook-copy.md", body, { mime: "text/markdown" });
    expect(a).toMatchObject({ status: "text", note: null });
    expect(a.hash).toBe(b.hash);
    expect(await count(`SELECT COUNT(*) AS n FROM doc_texts WHERE tenant_id = ? AND hash = ?`, ctx.tenantId, a.hash)).toBe(1);
    expect(await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND indexed_at IS NOT NULL`, ctx.tenantId)).toBe(2);
    const r = await search(ctx, { query: "runbook steps", type: "keyword" });
    expect(r.results!.map((x) => x.title)).toEqual(["Deploy runbook", "Deploy runbook"]);
    expect(documentTitle("a/b.txt", "text/plain", "# heading")).toBe("b.txt");
  });

  it("stores binary documents unindexed but findable by path and name", async () => {
    const ctx = await freshCtx();
    const r = await add(ctx, "assets/company-logo.png", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]), { mime: "image/png" });
    expect(r.status).toBe("binary");
    expect(r.note).toContain("not text-indexed");
    const row = await env.DB.prepare(`SELECT status, text, note FROM doc_texts WHERE tenant_id = ? AND hash = ?`).bind(ctx.tenantId, r.hash).first<{ status: string; text: string | null }>();
    expect(row).toMatchObject({ status: "binary", text: null });
    const found = await search(ctx, { query: "logo", type: "keyword" });
    expect(found.results!.map((x) => x.path)).toEqual(["assets/company-logo.png"]);
    expect(found.results![0]!.snippet).toBe("");
    expect(await count(`SELECT COUNT(*) AS n FROM embeddings WHERE tenant_id = ? AND object_type = 'document'`, ctx.tenantId)).toBe(0);
  });

  it("does not index a version that was closed before indexing ran", async () => {
    const ctx = await freshCtx();
    const v1 = await putDocument(ctx, { path: "race.txt", bytes: enc("stale words here") });
    await putDocument(ctx, { path: "race.txt", bytes: enc("fresh words here") });
    await indexText(ctx, { id: v1.id, path: v1.path, hash: v1.hash, mime: "text/plain", bytes: enc("stale words here") });
    expect(await count(`SELECT COUNT(*) AS n FROM doc_search WHERE tenant_id = ?`, ctx.tenantId)).toBe(0);
  });

  it("keeps a vocabulary of words, most frequent first when capped", () => {
    expect(vocabulary("The deploy, the DEPLOY and 42 x ab café")).toEqual(["the", "deploy", "and", "café"]);
    expect(vocabulary("zzz aaa aaa bbb bbb bbb", 2)).toEqual(["bbb", "aaa"]);
  });
});

describe("docs_query", () => {
  describe("search: keyword", () => {
    it("ranks by bm25, finds by content, path and name, and snippets around the match", async () => {
      const ctx = await freshCtx();
      const filler = "Lorem ipsum dolor sit amet. ".repeat(40);
      const a = await add(ctx, "notes/database.md", `# Database tuning\n\n${filler}\nIndex the hot columns for database optimization.\n${filler}`, { mime: "text/markdown" });
      await add(ctx, "notes/other.md", "# Gardening\n\nTomatoes need sun.\n", { mime: "text/markdown" });
      await add(ctx, "src/optimizer/plan.ts", "export function plan() { return 1; }\n");
      const r = await search(ctx, { query: "database optimization", type: "keyword" });
      // Both words: the database note; then any word: "optimizer" in a path stems like "optimization".
      expect(r).toMatchObject({ total: 2, type: "keyword" });
      expect(typeof r.execution_time_ms).toBe("number");
      expect(r.results!.map((x) => x.path)).toEqual(["notes/database.md", "src/optimizer/plan.ts"]);
      const hit = r.results![0]!;
      expect(hit).toMatchObject({ id: a.id, hash: a.hash, title: "Database tuning", path: "notes/database.md", score: 1 });
      expect(hit.snippet.length).toBeLessThanOrEqual(202);
      expect(hit.snippet.toLowerCase()).toContain("database");
      expect(hit).not.toHaveProperty("line_start");
      // Path words are searchable: "src" appears only in a path.
      expect((await search(ctx, { query: "src", type: "keyword" })).results!.map((x) => x.path)).toEqual(["src/optimizer/plan.ts"]);
      // Porter stemming: "tomato" finds "Tomatoes".
      expect((await search(ctx, { query: "tomato", type: "keyword" })).results!.map((x) => x.path)).toEqual(["notes/other.md"]);
    });

    it("tops up with documents holding any of the words, below those holding all", async () => {
      const ctx = await freshCtx();
      await add(ctx, "both.txt", "alpha beta gamma");
      await add(ctx, "one.txt", "alpha only here");
      await add(ctx, "none.txt", "nothing relevant");
      const r = await search(ctx, { query: "alpha beta", type: "keyword" });
      expect(r.results!.map((x) => x.path)).toEqual(["both.txt", "one.txt"]);
      expect(r.total).toBe(2);
      expect(r.results![0]!.score).toBeGreaterThan(r.results![1]!.score);
    });

    it("gives numbered lines with context around the first match", async () => {
      const ctx = await freshCtx();
      const lines = Array.from({ length: 60 }, (_, i) => `line ${i + 1} of filler text`);
      lines[41] = "here the NEEDLE appears";
      await add(ctx, "big.txt", lines.join("\n"));
      const r = await search(ctx, { query: "needle", type: "keyword", line_numbers: true, context: 2 });
      const hit = r.results![0]!;
      expect(hit.line_start).toBe(40);
      expect(hit.line_end).toBe(44);
      expect(hit.snippet.split("\n")).toEqual(["40: line 40 of filler text", "41: line 41 of filler text", "42: here the NEEDLE appears", "43: line 43 of filler text", "44: line 44 of filler text"]);
      const plain = await search(ctx, { query: "needle", type: "keyword", context: 1 });
      expect(plain.results![0]).toMatchObject({ line_start: 41, line_end: 43, snippet: "line 41 of filler text\nhere the NEEDLE appears\nline 43 of filler text" });
      const only = await search(ctx, { query: "needle", type: "keyword", line_numbers: true });
      expect(only.results![0]).toMatchObject({ line_start: 42, line_end: 42, snippet: "42: here the NEEDLE appears" });
    });

    it("counts lines correctly deep inside a long document", async () => {
      const ctx = await freshCtx();
      const lines = Array.from({ length: 3000 }, (_, i) => `row ${i + 1} padding padding padding`);
      lines[2499] = "the marker word zanzibar";
      await add(ctx, "long.txt", lines.join("\n"));
      const r = await search(ctx, { query: "zanzibar", type: "keyword", line_numbers: true });
      expect(r.results![0]).toMatchObject({ line_start: 2500, line_end: 2500, snippet: "2500: the marker word zanzibar" });
    });

    it("returns only paths with paths_only", async () => {
      const ctx = await freshCtx();
      await add(ctx, "a/one.md", "shared word kiwi");
      await add(ctx, "b/two.md", "kiwi again, kiwi");
      const r = await search(ctx, { query: "kiwi", type: "keyword", paths_only: true });
      expect(Object.keys(r).sort()).toEqual(["execution_time_ms", "paths", "search_stats", "total", "type"]);
      expect(r.total).toBe(2);
      expect([...r.paths!].sort()).toEqual(["a/one.md", "b/two.md"]);
    });

    it("filters by path_pattern glob and by tags", async () => {
      const ctx = await freshCtx();
      await add(ctx, "docs/guide/intro.md", "mango guide", { tags: ["guide"] });
      await add(ctx, "docs/api.txt", "mango api", { tags: ["api"] });
      await add(ctx, "src/mango.ts", "const mango = 1;");
      const md = await search(ctx, { query: "mango", type: "keyword", path_pattern: "docs/**/*.md" });
      expect(md.results!.map((x) => x.path)).toEqual(["docs/guide/intro.md"]);
      expect(md.total).toBe(1);
      const docs = await search(ctx, { query: "mango", type: "keyword", path_pattern: "docs/**" });
      expect(docs.results!.map((x) => x.path).sort()).toEqual(["docs/api.txt", "docs/guide/intro.md"]);
      const tagged = await search(ctx, { query: "mango", type: "keyword", tags: ["api", "nope"] });
      expect(tagged.results!.map((x) => x.path)).toEqual(["docs/api.txt"]);
      // A glob picomatch cannot use is refused as invalid_input, or else matches nothing: never a crash.
      const weird = await search(ctx, { query: "mango", type: "keyword", path_pattern: "[" }).catch((e: unknown) => e);
      if (weird instanceof Error) expect((weird as ToolError).code).toBe("invalid_input");
      else expect((weird as SearchResponse).results).toEqual([]);
    });

    it("treats FTS syntax in queries as plain words and never errors in SQL", async () => {
      const ctx = await freshCtx();
      await add(ctx, "ops.txt", 'near and or not: the NEAR operator and the star * of col:value "quoted"');
      for (const query of ['"quoted', "star *", "NEAR(", "NEAR(a b)", "and", "AND OR NOT", "col:value", "-not", "^near", "a'b", "(x", "{path}:near", "x\u2028y"]) {
        const r = await search(ctx, { query, type: "keyword", fuzzy: true });
        expect(Array.isArray(r.results), query).toBe(true);
      }
      expect((await search(ctx, { query: "AND", type: "keyword" })).results!.map((x) => x.path)).toEqual(["ops.txt"]);
      for (const query of ['"', "*", "( ) :", "-"]) {
        const err = await refusal(search(ctx, { query, type: "keyword" }));
        expect(err.code).toBe("invalid_input");
        expect(err.message).toContain("no words");
      }
    });
  });

  describe("search: hash lookup", () => {
    it("finds live documents by full hash or a prefix of 8+ hex characters", async () => {
      const ctx = await freshCtx();
      const a = await add(ctx, "h/one.txt", "hash lookup target");
      await add(ctx, "h/two.txt", "something else entirely");
      const full = await search(ctx, { hash: a.hash });
      expect(full).toMatchObject({ total: 1, type: "hash" });
      expect(full.results![0]).toMatchObject({ id: a.id, hash: a.hash, path: "h/one.txt", title: "one.txt", score: 1 });
      expect(full.results![0]!.snippet).toBe("hash lookup target");
      const prefix = await search(ctx, { hash: a.hash.slice(0, 8).toUpperCase() });
      expect(prefix.results!.map((x) => x.id)).toEqual([a.id]);
      const err = await refusal(search(ctx, { hash: a.hash.slice(0, 7) }));
      expect(err.code).toBe("invalid_input");
      expect(err.message).toContain("8 hex characters");
      expect((await refusal(search(ctx, { hash: "zzzzzzzzzz" }))).code).toBe("invalid_input");
      const both = await search(ctx, { hash: a.hash, query: "ignored" });
      expect(both.warnings?.[0]).toContain("hash lookup");
      expect((await search(ctx, { hash: "00000000" })).total).toBe(0);
    });
  });

  describe("search: fuzzy", () => {
    it("finds a misspelt word only with fuzzy (the seed's default), above the similarity threshold", async () => {
      const ctx = await freshCtx();
      const k = await add(ctx, "infra/cluster.md", "# Setup\n\nWe run kubernetes in three regions.\n", { mime: "text/markdown" });
      await add(ctx, "infra/other.md", "Nothing about containers here.\n");
      expect(trigramSimilarity("kubernetis", "kubernetes")).toBeCloseTo(16 / 22, 5);
      expect((await search(ctx, { query: "kubernetis", type: "keyword", fuzzy: false })).total).toBe(0);
      expect((await search(ctx, { query: "kubernetis", type: "keyword" })).results!.map((x) => x.id)).toEqual([k.id]);
      const r = await search(ctx, { query: "kubernetis", type: "keyword", fuzzy: true });
      expect(r.results!.map((x) => x.id)).toEqual([k.id]);
      expect(r.search_stats.fuzzy_expansions).toEqual({ kubernetis: ["kubernetes"] });
      expect(r.results![0]!.snippet).toContain("kubernetes");
      // A stricter threshold than the word's similarity finds nothing.
      expect((await search(ctx, { query: "kubernetis", type: "keyword", fuzzy: true, similarity: 0.95 })).total).toBe(0);
      // File names are in the vocabulary too ("cluster" is only in the path).
      expect((await search(ctx, { query: "clustr", type: "keyword", fuzzy: false })).total).toBe(0);
      expect((await search(ctx, { query: "clustr", type: "keyword", fuzzy: true, similarity: 0.6 })).results!.map((x) => x.id)).toContain(k.id);
    });

    it("ranks exact matches above fuzzy ones", async () => {
      const ctx = await freshCtx();
      await add(ctx, "exact.txt", "the database is fine");
      await add(ctx, "typo.txt", "the databases are many");
      await add(ctx, "near.txt", "the databse typo lives here");
      const r = await search(ctx, { query: "databse", type: "keyword", fuzzy: true });
      expect(r.results![0]!.path).toBe("near.txt");
      expect(r.results!.map((x) => x.path)).toContain("exact.txt");
      expect(r.results![0]!.score).toBeGreaterThan(r.results![1]!.score);
    });
  });

  describe("search: semantic and hybrid", () => {
    it("ranks by embeddings with the local embedder, and fuses with keywords in hybrid", async () => {
      const ctx = await freshCtx();
      const d = await add(ctx, "guides/deploy.md", "# Deploying the service\n\nDeployment steps for production rollouts.\n", { mime: "text/markdown" });
      await add(ctx, "guides/cooking.md", "# Pasta\n\nBoil water, add salt.\n", { mime: "text/markdown" });
      await settle(ctx);
      expect(await count(`SELECT COUNT(*) AS n FROM embeddings WHERE tenant_id = ? AND object_type = 'document' AND status = 'ready'`, ctx.tenantId)).toBe(2);
      const sem = await search(ctx, { query: "deploying production rollout", type: "semantic" });
      expect(sem.type).toBe("semantic");
      expect(sem.results![0]!.id).toBe(d.id);
      expect(sem.results![0]!.score).toBeGreaterThan(0);
      expect(sem.results![0]!.score).toBeLessThanOrEqual(1);
      const hyb = await search(ctx, { query: "deployment rollouts" });
      expect(hyb.type).toBe("hybrid");
      expect(hyb.results![0]).toMatchObject({ id: d.id, score: 1 });
      expect(hyb.results![0]!.score_breakdown!.keyword_score).not.toBeNull();
      expect(hyb.results![0]!.score_breakdown!.vector_score).not.toBeNull();
      expect(hyb.warnings).toBeUndefined();
    });

    it("says when documents still wait for their embedding", async () => {
      const ctx = await freshCtx();
      const p = await add(ctx, "p.txt", "pending embedding words");
      await settle(ctx);
      // As if the embedder had been down: the row stays pending for the backfill.
      await env.DB.prepare(`UPDATE embeddings SET status = 'pending' WHERE tenant_id = ? AND object_id = ?`).bind(ctx.tenantId, p.id).run();
      const r = await search(ctx, { query: "pending words" });
      expect(r.type).toBe("hybrid");
      expect(r.warnings?.join(" ")).toContain("waiting for an embedding");
      expect(r.results!.map((x) => x.path)).toEqual(["p.txt"]);
    });

    it("falls back to keywords in hybrid when semantic search is off, and refuses semantic-only", async () => {
      const ctx = await freshCtx();
      await add(ctx, "f.txt", "fallback keyword words");
      await settle(ctx);
      const off = offCtx(ctx);
      const r = await search(off, { query: "fallback" });
      expect(r.type).toBe("keyword");
      expect(r.warnings?.[0]).toContain("switched off");
      expect(r.results!.map((x) => x.path)).toEqual(["f.txt"]);
      const err = await refusal(search(off, { query: "fallback", type: "semantic" }));
      expect(err.code).toBe("semantic_unavailable");
    });
    it("counts a tenant's embeddings still pending through its partial index, not through every row it has", async () => {
      const q = pendingEmbeddings(env.DB, "t", "document").toSQL();
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
        .bind(...q.params)
        .all<{ detail: string }>();
      expect(plan.results.map((p) => p.detail).join("\n")).toContain("INDEX embeddings_tenant_pending_idx (tenant_id=? AND object_type=?)");
    });

    it("answers from the vectors an isolate holds only while they are current: a document embedded since is found", async () => {
      const ctx = await freshCtx();
      await add(ctx, "log/a.md", "lighthouse keeper logbook entries");
      await settle(ctx);
      expect((await search(ctx, { query: "lighthouse keeper logbook", type: "semantic" })).results!.map((x) => x.path)).toEqual(["log/a.md"]);
      const b = await add(ctx, "log/b.md", "lighthouse keeper logbook notes");
      await settle(ctx);
      const sem = await search(ctx, { query: "lighthouse keeper logbook", type: "semantic" });
      expect(sem.results!.map((x) => x.path).sort()).toEqual(["log/a.md", "log/b.md"]);
      const hyb = await search(ctx, { query: "lighthouse keeper logbook", type: "hybrid" });
      expect(hyb.results!.find((x) => x.id === b.id)?.score_breakdown?.vector_score).not.toBeNull();
    });

    it("gives a document the same snippet and lines in every mode", async () => {
      const ctx = await freshCtx();
      // The match lies past the first 4,000 characters: a snippet read around the wrong place would miss it.
      const filler = Array.from({ length: 200 }, (_, i) => `filler line ${i + 1} with nothing in it`);
      const deep = [...filler.slice(0, 150), "the harbour tide report for the northern quay", ...filler.slice(150)].join("\n");
      await add(ctx, "tides/deep.txt", deep);
      await add(ctx, "tides/short.txt", "harbour tide report");
      await add(ctx, "tides/other.txt", `${filler.slice(0, 30).join("\n")}\nthe harbour master's tide table\n${filler.slice(30).join("\n")}`);
      await settle(ctx);
      for (const extra of [{}, { line_numbers: true, context: 2 }, { context: 1 }]) {
        const byMode = new Map<string, Map<string, unknown>>();
        for (const type of ["keyword", "semantic", "hybrid"]) {
          const r = await search(ctx, { query: "harbour tide report", type, ...extra });
          expect(r.type, type).toBe(type);
          byMode.set(type, new Map(r.results!.map((x) => [x.path, { snippet: x.snippet, line_start: x.line_start, line_end: x.line_end }])));
        }
        const keyword = byMode.get("keyword")!;
        expect([...keyword.keys()].sort()).toEqual(["tides/deep.txt", "tides/other.txt", "tides/short.txt"]);
        expect((keyword.get("tides/deep.txt") as { snippet: string }).snippet).toContain("harbour tide report");
        for (const type of ["semantic", "hybrid"]) {
          for (const [path, shown] of byMode.get(type)!) expect(shown, `${type} ${path} ${JSON.stringify(extra)}`).toEqual(keyword.get(path));
        }
      }
    });
  });

  describe("search: live versions only", () => {
    it("never returns replaced or deleted versions, in any mode", async () => {
      const ctx = await freshCtx();
      const v1 = await add(ctx, "notes/plan.md", "the original zebra plan");
      await settle(ctx);
      const v2 = await add(ctx, "notes/plan.md", "the revised giraffe plan");
      await settle(ctx);
      for (const type of ["keyword", "semantic", "hybrid"]) {
        const old = await search(ctx, { query: "zebra", type });
        expect(
          old.results!.map((x) => x.id),
          type,
        ).not.toContain(v1.id);
        const cur = await search(ctx, { query: "giraffe plan", type });
        expect(
          cur.results!.map((x) => x.id),
          type,
        ).toContain(v2.id);
        expect(
          cur.results!.map((x) => x.id),
          type,
        ).not.toContain(v1.id);
      }
      expect((await search(ctx, { hash: v1.hash })).total).toBe(0);
      // The replaced version's embedding was dropped once the new one was indexed.
      expect(await count(`SELECT COUNT(*) AS n FROM embeddings WHERE tenant_id = ? AND object_id = ?`, ctx.tenantId, v1.id)).toBe(0);
      expect(await count(`SELECT COUNT(*) AS n FROM local_vectors WHERE namespace = ? AND id = ?`, ctx.tenantId, `document:${v1.id}`)).toBe(0);
      await deleteDocument(ctx, { path: "notes/plan.md" });
      for (const type of ["keyword", "semantic", "hybrid"]) expect((await search(ctx, { query: "giraffe plan", type })).total, type).toBe(0);
      expect((await search(ctx, { hash: v2.hash })).total).toBe(0);
      expect(await count(`SELECT COUNT(*) AS n FROM doc_search WHERE tenant_id = ?`, ctx.tenantId)).toBe(0);
    });
  });

  describe("search: scope and tenancy", () => {
    it("restricts to the session's pinned globs and hashes", async () => {
      const ctx = await freshCtx();
      const a = await add(ctx, "pinned/a.md", "papaya smoothie recipe with papaya and lime");
      const b = await add(ctx, "loose/b.md", "papaya smoothie recipe with papaya and mint");
      const c = await add(ctx, "loose/c.md", "papaya smoothie recipe with papaya and honey");
      const params = searchOp.params.parse({ query: "papaya", type: "keyword" });
      const byGlob = await searchDocuments(ctx, params, { patterns: ["pinned/**"], hashes: [] });
      expect(byGlob.results!.map((x) => x.id)).toEqual([a.id]);
      const byHash = await searchDocuments(ctx, params, { patterns: ["pinned/**"], hashes: [c.hash] });
      expect(byHash.results!.map((x) => x.id).sort()).toEqual([a.id, c.id].sort());
      expect(byHash.total).toBe(2);
      const unscoped = await searchDocuments(ctx, params, { patterns: [], hashes: [] });
      expect(unscoped.results!.map((x) => x.id).sort()).toEqual([a.id, b.id, c.id].sort());
      const hashScoped = await searchDocuments(ctx, searchOp.params.parse({ hash: b.hash }), { patterns: ["pinned/**"], hashes: [] });
      expect(hashScoped.total).toBe(0);
      await settle(ctx);
      const sem = await searchDocuments(ctx, searchOp.params.parse({ query: "papaya smoothie recipe", type: "semantic" }), { patterns: ["pinned/**"], hashes: [] });
      expect(sem.results!.map((x) => x.id)).toEqual([a.id]);
    });

    it("keeps to the current session's pins through the op, and to the whole store without pins or with use_session false", async () => {
      const ctx = await freshCtx();
      const a = await add(ctx, "pinned/a.md", "walrus tusk measurements from the survey");
      const b = await add(ctx, "loose/b.md", "walrus tusk measurements from the survey again");
      await settle(ctx);
      const ids = async (extra: Record<string, unknown> = {}) => {
        const out: Record<string, string[]> = {};
        for (const type of ["keyword", "semantic", "hybrid"]) {
          out[type] = (await search(ctx, { query: "walrus tusk measurements", type, ...extra })).results!.map((x) => x.id).sort();
        }
        return out;
      };
      const all = [a.id, b.id].sort();
      const everywhere = (list: string[]) => ({ keyword: list, semantic: list, hybrid: list });
      expect(await ids()).toEqual(everywhere(all));
      await runOp(startOp, ctx, { name: "survey" });
      expect(await ids(), "a session without pins").toEqual(everywhere(all));
      await runOp(pinOp, ctx, { path: "pinned/**" });
      expect(await ids(), "pinned").toEqual(everywhere([a.id]));
      expect(await ids({ use_session: false }), "use_session false").toEqual(everywhere(all));
      await runOp(pinOp, ctx, { hash: b.hash });
      expect(await ids(), "pinned by hash too").toEqual(everywhere(all));
      await runOp(stopOp, ctx, {});
      expect(await ids(), "stopped").toEqual(everywhere(all));
      await runOp(startOp, ctx, { name: "survey-2" });
      await runOp(pinOp, ctx, { hash: b.hash });
      expect(await ids(), "a new session's pins").toEqual(everywhere([b.id]));
    });

    it("shows a tenant nothing of another tenant's documents", async () => {
      const one = await freshCtx();
      const two = await freshCtx();
      const a = await add(one, "secret/plan.md", "# Quokka plan\n\nquokka strategy", { mime: "text/markdown" });
      await settle(one);
      await add(two, "mine.md", "unrelated content");
      await settle(two);
      for (const type of ["keyword", "semantic", "hybrid"]) {
        const r = await search(two, { query: "quokka strategy", type, fuzzy: true });
        expect(r.total, type).toBe(0);
        expect(r.results, type).toEqual([]);
      }
      expect((await search(two, { query: "quoka", type: "keyword", fuzzy: true })).total).toBe(0);
      expect((await search(two, { hash: a.hash.slice(0, 12) })).total).toBe(0);
      expect((await search(two, { query: "secret", type: "keyword" })).total).toBe(0);
      expect((await search(one, { query: "quokka", type: "keyword" })).results!.map((x) => x.id)).toEqual([a.id]);
    });
  });

  describe("search: parameters", () => {
    it("refuses a missing query and hash with the seed's text, and renames q", async () => {
      const err = await refusal(() => searchOp.normalize!({ limit: 3 }));
      expect(err.code).toBe("invalid_input");
      expect(err.message).toBe(MISSING_QUERY_MESSAGE);
      expect((await refusal(() => searchOp.normalize!({ query: "   " }))).message).toBe(MISSING_QUERY_MESSAGE);
      expect((await refusal(() => searchOp.normalize!({ query: null, hash: null }))).message).toBe(MISSING_QUERY_MESSAGE);
      expect(searchOp.normalize!({ q: "hello", limit: "5", similarity: "0.8", context: "2" })).toEqual({ query: "hello", limit: 5, similarity: 0.8, context: 2 });
      expect((await refusal(() => searchOp.normalize!({ q: "a", query: "b" }))).code).toBe("invalid_input");
      const ctx = await freshCtx();
      await add(ctx, "q.txt", "renamed parameter works");
      expect((await search(ctx, { q: "renamed", type: "keyword" })).total).toBe(1);
      // Called directly (as the lead's engine may), the op still refuses an empty request.
      expect((await refusal(searchDocuments(ctx, searchOp.params.parse({})))).message).toBe(MISSING_QUERY_MESSAGE);
    });

    it("applies the seed's defaults and bounds", () => {
      expect(searchOp.params.parse({ query: "x" })).toEqual({
        query: "x",
        limit: 10,
        type: "hybrid",
        fuzzy: true,
        similarity: 0.7,
        paths_only: false,
        line_numbers: false,
        context: 0,
        use_session: true,
      });
      for (const bad of [
        { limit: 0 },
        { limit: 101 },
        { limit: 2.5 },
        { similarity: 1.5 },
        { context: 21 },
        { type: "regex" },
        { query: "x".repeat(1001) },
        { hash: "a".repeat(65) },
        { tags: Array(65).fill("t") },
      ]) {
        expect(() => searchOp.params.parse({ query: "x", ...bad }), JSON.stringify(bad).slice(0, 60)).toThrow(ZodError);
      }
      expect(() => searchOp.params.parse({ query: "x", unknown: 1 })).not.toThrow(); // strictness is the engine's generic rule
    });

    it("keeps the page within limit and reports the full total", async () => {
      const ctx = await freshCtx();
      for (let i = 0; i < 7; i++) await add(ctx, `many/${i}.txt`, `common lychee word number ${i}`);
      const r = await search(ctx, { query: "lychee", type: "keyword", limit: 3 });
      expect(r.results).toHaveLength(3);
      expect(r.total).toBe(7);
      const scores = r.results!.map((x) => x.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    });

    it("ranks a page that documents with every word fill as the whole ranking does, and counts every match in total", async () => {
      const ctx = await freshCtx();
      // Every word at different frequencies and lengths (two identical, a bm25 tie), then one word only.
      for (let i = 0; i < 6; i++) await add(ctx, `every/${i}.txt`, `${"quince ".repeat(1 + (i % 3))}medlar ${"filler ".repeat(i * 5)}`);
      await add(ctx, "every/twin.txt", "quince medlar filler");
      await add(ctx, "every/twin-2.txt", "quince medlar filler");
      for (let i = 0; i < 5; i++) await add(ctx, `some/${i}.txt`, `${i % 2 ? "quince" : "medlar"} alone ${"filler ".repeat(i)}`);
      // Limit 3: the eight every-word documents fill the page; limit 20 ranks every match.
      const page = await search(ctx, { query: "quince medlar", type: "keyword", limit: 3 });
      const whole = await search(ctx, { query: "quince medlar", type: "keyword", limit: 20 });
      expect(whole.total).toBe(13);
      expect(whole.results!.slice(0, 8).every((x) => x.path.startsWith("every/"))).toBe(true);
      expect(page.total).toBe(13);
      expect(page.results).toEqual(whole.results!.slice(0, 3));
      const hybridPage = await search(ctx, { query: "quince medlar", type: "hybrid", limit: 5 });
      expect(hybridPage.total).toBe(13);
    });

    it("counts in total only documents whose text holds a word, even a word that is the tenant's index key", async () => {
      const ctx = await freshCtx();
      const key = tenantKey(ctx.tenantId);
      for (let i = 0; i < 3; i++) await add(ctx, `k/${i}.txt`, `quince ${key} ${"filler ".repeat(i)}`);
      for (let i = 0; i < 2; i++) await add(ctx, `other/${i}.txt`, `nothing to see ${i}`);
      const r = await search(ctx, { query: `quince ${key}`, type: "keyword", limit: 2 });
      expect(r.results!.map((x) => x.path)).toEqual(["k/0.txt", "k/1.txt"]);
      expect(r.total).toBe(3);
    });
  });

  describe("search: stopwords", () => {
    it("ranks by the words that carry meaning, and still answers a query of nothing but stopwords", async () => {
      const ctx = await freshCtx();
      await add(ctx, "a.md", "the cache is warmed at the start of the run");
      await add(ctx, "b.md", "the of and to in is it that the of and to");
      const r = await searchOp.run(ctx, searchOp.params.parse({ query: "the cache and the run", type: "keyword" }));
      expect((r.results as { path: string }[]).map((x) => x.path)).toEqual(["a.md"]);
      const only = await searchOp.run(ctx, searchOp.params.parse({ query: "the and of", type: "keyword" }));
      expect((only.results as { path: string }[]).map((x) => x.path).sort()).toEqual(["a.md", "b.md"]);
    });
  });
});
