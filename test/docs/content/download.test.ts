import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { sha256Hex } from "../../../src/db/ids";
import { PENDING_NOTE } from "../../../src/docs/store/ingest";
import { download, MAX_DOWNLOAD_REDIRECTS } from "../../../src/docs/content/download";
import { checkPublicUrl, DOH_ENDPOINT, isPublicAddress, parseIPv6, publicFetch } from "../../../src/net/public-fetch";
import { getDocument, MAX_DOCUMENT_BYTES } from "../../../src/docs/store/store";
import type { Ctx } from "../../../src/core/context";
import { ToolError } from "../../../src/core/errors";
import { count, makeCtx, refusal, seedIdentity, TestClock } from "../../support/helpers";

const PUBLIC_V4 = "93.184.215.14";
const PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c";

type Handler = (init: RequestInit | undefined) => Response | Promise<Response>;
interface DnsEntry {
  A?: string[];
  AAAA?: string[];
  status?: number;
}

/**
 * Stubs the network: DNS-over-HTTPS answers from `dns` (hosts that have routes resolve to public
 * addresses unless listed), page requests from `routes` keyed by exact URL; anything else throws,
 * failing the test. Every page request must ask for manual redirects.
 */
function serveWeb(routes: Record<string, Handler>, dns: Record<string, DnsEntry> = {}) {
  const requested: string[] = [];
  const routeHosts = new Set(Object.keys(routes).map((u) => new URL(u).hostname));
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    requested.push(url);
    if (url.startsWith(`${DOH_ENDPOINT}?`)) {
      expect(new Headers(init?.headers).get("accept")).toBe("application/dns-json");
      const q = new URL(url).searchParams;
      const name = q.get("name")!;
      const type = q.get("type") as "A" | "AAAA";
      const entry = dns[name] ?? (routeHosts.has(name) ? { A: [PUBLIC_V4], AAAA: [PUBLIC_V6] } : { status: 3 });
      const answers = (entry[type] ?? []).map((data) => ({ name, type: type === "A" ? 1 : 28, TTL: 60, data }));
      return Response.json({ Status: entry.status ?? 0, Answer: [{ name, type: 5, TTL: 60, data: "alias.example.net." }, ...answers] });
    }
    const handler = routes[url];
    if (!handler) throw new Error(`Unexpected outbound request in a test: ${url}`);
    if (init?.redirect !== "manual") throw new Error(`request without redirect: manual: ${url}`);
    return handler(init);
  });
  return {
    requested,
    pages: () => requested.filter((u) => !u.startsWith(DOH_ENDPOINT)),
    lookups: () => requested.filter((u) => u.startsWith(DOH_ENDPOINT)).map((u) => `${new URL(u).searchParams.get("name")}/${new URL(u).searchParams.get("type")}`),
  };
}

const text = (s: string) => new TextEncoder().encode(s);
const body =
  (s: string | Uint8Array, headers: Record<string, string> = {}, status = 200): Handler =>
  () =>
    new Response(typeof s === "string" ? text(s) : s, { status, headers });
const redirect =
  (to: string, status = 302): Handler =>
  () =>
    new Response(null, { status, headers: { location: to } });
/** Never answers until the request is aborted. */
const hang: Handler = (init) =>
  new Promise<Response>((_, reject) => {
    const signal = init!.signal!;
    signal.addEventListener("abort", () => reject(signal.reason ?? new DOMException("aborted", "AbortError")));
  });

/**
 * A body far larger than any limit, counting what it produced, to prove the reader stops at the
 * cap. It does end (at twice the document limit) so a reader that fails to stop makes the test
 * fail instead of hanging.
 */
function endless(chunk = 1024 * 1024) {
  let produced = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (produced >= 2 * MAX_DOCUMENT_BYTES) return c.close();
      produced += chunk;
      c.enqueue(new Uint8Array(chunk).fill(0x61));
    },
  });
  return { stream, produced: () => produced };
}

let seq = 0;
async function freshCtx(): Promise<Ctx> {
  seq++;
  const id = await seedIdentity(`dl-${seq}-${crypto.randomUUID().slice(0, 8)}`, "fetcher");
  return makeCtx(id, new TestClock());
}

async function runDownload(ctx: Ctx, raw: Record<string, unknown>): Promise<Record<string, any>> {
  const normalized = download.normalize!(raw);
  return download.run(ctx, download.params.parse(normalized));
}

/** What a tenant can see of its store: rows in every docs table it owns. */
async function storeState(ctx: Ctx) {
  return {
    documents: await count(`SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ?`, ctx.tenantId),
    chunks: await count(`SELECT COUNT(*) AS n FROM doc_chunks WHERE tenant_id = ?`, ctx.tenantId),
    snapshots: await count(`SELECT COUNT(*) AS n FROM doc_snapshots WHERE tenant_id = ?`, ctx.tenantId),
    collections: await count(`SELECT COUNT(*) AS n FROM doc_collections WHERE tenant_id = ?`, ctx.tenantId),
  };
}

const CSV = "id,name\n1,alpha\n2,beta\n";

describe("docs_execute", () => {
  describe("download: storing what a public URL serves", () => {
    it("fetches, stores under host + path with the response's MIME type, and records the source URL", async () => {
      const ctx = await freshCtx();
      const web = serveWeb({ "https://example.com/data.csv": body(CSV, { "content-type": "text/csv; charset=utf-8" }) });
      const r = await runDownload(ctx, { url: "https://example.com/data.csv" });
      const hash = await sha256Hex(text(CSV));
      expect(r).toEqual({
        url: "https://example.com/data.csv",
        final_url: "https://example.com/data.csv",
        path: "example.com/data.csv",
        hash,
        size: CSV.length,
        mime_type: "text/csv",
        bytes_stored: CSV.length,
        bytes_deduped: 0,
        checksum_verified: false,
        index_status: "text",
      });
      // The host was checked over DNS before the page was requested.
      expect(web.lookups().sort()).toEqual(["example.com/A", "example.com/AAAA"]);
      expect(web.requested.at(-1)).toBe("https://example.com/data.csv");
      const doc = await getDocument(ctx, { path: "example.com/data.csv" });
      expect(new TextDecoder().decode(doc.bytes)).toBe(CSV);
      expect(doc.mime_type).toBe("text/csv");
      const row = await ctx.d1
        .prepare(`SELECT metadata FROM documents WHERE tenant_id = ? AND path = ? AND deleted_at IS NULL`)
        .bind(ctx.tenantId, "example.com/data.csv")
        .first<{ metadata: string }>();
      expect(JSON.parse(row!.metadata)).toEqual({ source_url: "https://example.com/data.csv" });
    });

    it("stores a large download at once and says it is pending: indexing runs on the queue, off the request", async () => {
      const ctx = await freshCtx();
      const big = `# Field notes\n${"a line of notes about the quoll\n".repeat(3000)}`;
      serveWeb({ "https://example.com/notes.md": body(big, { "content-type": "text/markdown" }) });
      const r = await runDownload(ctx, { url: "https://example.com/notes.md" });
      expect(r).toMatchObject({ path: "example.com/notes.md", size: big.length, index_status: "pending", index_note: PENDING_NOTE });
      const row = await ctx.d1
        .prepare(`SELECT indexed_at FROM documents WHERE tenant_id = ? AND path = ? AND deleted_at IS NULL`)
        .bind(ctx.tenantId, "example.com/notes.md")
        .first<{ indexed_at: string | null }>();
      expect(row!.indexed_at).toBeNull();
    });

    it("deduplicates a second download of the same content", async () => {
      const ctx = await freshCtx();
      serveWeb({
        "https://example.com/data.csv": body(CSV, { "content-type": "text/csv" }),
        "https://mirror.example.org/copy.csv": body(CSV, { "content-type": "text/csv" }),
      });
      const first = await runDownload(ctx, { url: "https://example.com/data.csv" });
      const again = await runDownload(ctx, { url: "https://example.com/data.csv" });
      expect(again.hash).toBe(first.hash);
      expect(again.bytes_stored).toBe(0);
      expect(again.bytes_deduped).toBe(CSV.length);
      const mirror = await runDownload(ctx, { url: "https://mirror.example.org/copy.csv", tags: ["mirror"], collection: "data", snapshot_label: "v1" });
      expect(mirror.path).toBe("mirror.example.org/copy.csv");
      expect(mirror.bytes_stored).toBe(0);
      expect(mirror.snapshot_id).toEqual(expect.any(String));
      expect((await storeState(ctx)).chunks).toBe(1);
      const row = await ctx.d1
        .prepare(`SELECT tags, collection FROM documents WHERE tenant_id = ? AND path = ? AND deleted_at IS NULL`)
        .bind(ctx.tenantId, mirror.path)
        .first<{ tags: string; collection: string }>();
      expect(JSON.parse(row!.tags)).toEqual(["mirror"]);
      expect(row!.collection).toBe("data");
    });

    it("follows relative and absolute redirects to public hosts and reports the final URL", async () => {
      const ctx = await freshCtx();
      const web = serveWeb({
        "https://example.com/latest": redirect("/releases/v2/notes.md", 301),
        "https://example.com/releases/v2/notes.md": redirect("https://cdn.example.net/notes.md", 307),
        "https://cdn.example.net/notes.md": body("# Notes\n"),
      });
      const r = await runDownload(ctx, { url: "https://example.com/latest" });
      expect(r.final_url).toBe("https://cdn.example.net/notes.md");
      expect(r.path).toBe("example.com/latest");
      // No Content-Type and no extension in the stored name: the final URL's extension decides.
      expect(r.mime_type).toBe("text/markdown");
      expect(web.lookups()).toContain("cdn.example.net/A");
    });

    it("derives names: index.html for a trailing slash, decoded segments, the port, and the extension's MIME type", async () => {
      const ctx = await freshCtx();
      serveWeb({
        "https://example.com/": body("<html></html>", { "content-type": "text/html" }),
        "https://example.com:8443/docs/read%20me.md?x=1": body("hello"),
        "https://example.com/a%2Fb/notes.md": body("slash"),
        "https://example.com/bell%07/x.txt": body("bell"),
      });
      expect((await runDownload(ctx, { url: "https://example.com" })).path).toBe("example.com/index.html");
      const named = await runDownload(ctx, { url: "https://example.com:8443/docs/read%20me.md?x=1" });
      expect(named.path).toBe("example.com:8443/docs/read me.md");
      expect(named.mime_type).toBe("text/markdown");
      expect((await runDownload(ctx, { url: "https://example.com/a%2Fb/notes.md" })).path).toBe("example.com/a%2Fb/notes.md");
      expect((await runDownload(ctx, { url: "https://example.com/bell%07/x.txt" })).path).toBe("example.com/bell%07/x.txt");
      // The URL parser resolves encoded dot segments, so they cannot climb out of the host's folder.
      expect(checkPublicUrl("https://example.com/a/%2e%2e/%2E%2E/etc/passwd").pathname).toBe("/etc/passwd");
    });

    it("stores under a given path or name, with a given MIME type", async () => {
      const ctx = await freshCtx();
      serveWeb({ "https://example.com/data.csv": body(CSV, { "content-type": "text/plain" }) });
      const byPath = await runDownload(ctx, { url: "https://example.com/data.csv", path: "/datasets//people.csv", mime_type: "text/csv" });
      expect(byPath.path).toBe("datasets/people.csv");
      expect(byPath.mime_type).toBe("text/csv");
      const byName = await runDownload(ctx, { url: "https://example.com/data.csv", name: "datasets/people2.csv" });
      expect(byName.path).toBe("datasets/people2.csv");
      expect(byName.mime_type).toBe("text/plain");
      expect((await getDocument(ctx, { path: "datasets/people2.csv" })).size).toBe(CSV.length);
    });
  });

  describe("download: checksums", () => {
    it("verifies 'sha256:<hex>' and bare hex in any case", async () => {
      const ctx = await freshCtx();
      serveWeb({ "https://example.com/data.csv": body(CSV) });
      const hash = await sha256Hex(text(CSV));
      const a = await runDownload(ctx, { url: "https://example.com/data.csv", checksum: `sha256:${hash.toUpperCase()}` });
      expect(a.checksum_verified).toBe(true);
      expect(a.hash).toBe(hash);
      const b = await runDownload(ctx, { url: "https://example.com/data.csv", checksum: hash, path: "other.csv" });
      expect(b.checksum_verified).toBe(true);
    });

    it("stores nothing on a mismatch", async () => {
      const ctx = await freshCtx();
      serveWeb({ "https://example.com/data.csv": body(CSV) });
      const before = await storeState(ctx);
      const wrong = await sha256Hex(text("something else"));
      const err = await refusal(runDownload(ctx, { url: "https://example.com/data.csv", checksum: `sha256:${wrong}`, snapshot_label: "s", collection: "c" }));
      expect(err.code).toBe("checksum_mismatch");
      expect(err.message).toContain(wrong);
      expect(err.message).toContain(await sha256Hex(text(CSV)));
      expect(await storeState(ctx)).toEqual(before);
    });

    it("refuses a malformed checksum before fetching anything", async () => {
      const ctx = await freshCtx();
      const web = serveWeb({ "https://example.com/data.csv": body(CSV) });
      for (const checksum of ["md5:d41d8cd98f00b204e9800998ecf8427e", "sha256:abc", `sha256:${"z".repeat(64)}`, "sha1:" + "a".repeat(64)]) {
        const err = await refusal(runDownload(ctx, { url: "https://example.com/data.csv", checksum }));
        expect(err.code).toBe("invalid_input");
      }
      expect(web.requested).toEqual([]);
    });
  });

  describe("download: refusing non-public URLs", () => {
    const refusedWithoutNetwork = [
      "http://example.com/data.csv",
      "file:///etc/passwd",
      "ftp://example.com/data.csv",
      "data:text/plain,hello",
      "javascript:alert(1)",
      "https://user:secret@example.com/data.csv",
      "https://:secret@example.com/data.csv",
      // IPv4 literals, in every spelling the URL parser turns into a dotted quad
      "https://127.0.0.1/",
      "https://2130706433/",
      "https://0x7f000001/",
      "https://0x7f.1/",
      "https://017700000001/",
      "https://0177.0.0.01/",
      "https://127.1/",
      "https://0/",
      "https://0.0.0.0/",
      "https://10.1.2.3/",
      "https://172.16.0.1/",
      "https://172.31.255.255/",
      "https://192.168.1.1/",
      "https://169.254.169.254/latest/meta-data/",
      "https://2852039166/latest/meta-data/",
      "https://100.64.0.1/",
      "https://100.127.255.254/",
      "https://224.0.0.1/",
      "https://239.255.255.250/",
      "https://240.0.0.1/",
      "https://255.255.255.255/",
      "https://198.18.0.1/",
      "https://192.0.2.1/",
      // IPv6 literals
      "https://[::1]/",
      "https://[0:0:0:0:0:0:0:1]/",
      "https://[::]/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:7f00:1]/",
      "https://[::ffff:169.254.169.254]/",
      "https://[::ffff:8.8.8.8]/",
      "https://[::127.0.0.1]/",
      "https://[64:ff9b::10.0.0.1]/",
      "https://[2002:7f00:1::]/",
      "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
      "https://[2001:db8::1]/",
      "https://[fc00::1]/",
      "https://[fd12:3456:789a::1]/",
      "https://[fe80::1]/",
      "https://[ff02::1]/",
      "https://[fec0::1]/",
      // names
      "https://localhost/",
      "https://LOCALHOST./",
      "https://localhost:8787/mcp",
      "https://api.localhost/",
      "https://printer.local/",
      "https://db.internal/",
      "https://metadata.google.internal/computeMetadata/v1/",
      "https://instance-data.ec2.internal/",
      "https://router.home.arpa/",
      "https://intranet/",
      "https://nas/",
    ];

    it("refuses schemes other than https, credentials, non-public IP literals and local names without touching the network", async () => {
      const ctx = await freshCtx();
      const web = serveWeb({});
      const before = await storeState(ctx);
      const wrong: string[] = [];
      for (const url of refusedWithoutNetwork) {
        const err = await refusal(runDownload(ctx, { url }));
        if (err.code !== "url_not_allowed") wrong.push(`${url}: ${err.code} ${err.message}`);
        if (err.message.includes("secret")) wrong.push(`${url}: message quotes the password`);
      }
      expect(wrong).toEqual([]);
      expect(web.requested).toEqual([]);
      expect(await storeState(ctx)).toEqual(before);
    });

    it("accepts public IP literals without a DNS lookup", async () => {
      const ctx = await freshCtx();
      const web = serveWeb({ [`https://${PUBLIC_V4}/x.txt`]: body("v4"), [`https://[${PUBLIC_V6}]/y.txt`]: body("v6") });
      expect((await runDownload(ctx, { url: `https://${PUBLIC_V4}/x.txt` })).path).toBe(`${PUBLIC_V4}/x.txt`);
      expect((await runDownload(ctx, { url: `https://[${PUBLIC_V6}]/y.txt` })).size).toBe(2);
      expect(web.lookups()).toEqual([]);
    });

    it("classifies addresses across both families", () => {
      for (const ip of ["8.8.8.8", "1.1.1.1", PUBLIC_V4, "2606:4700:4700::1111", PUBLIC_V6, "172.32.0.1", "100.128.0.1", "169.255.0.1"]) {
        expect(isPublicAddress(ip), ip).toBe(true);
      }
      for (const ip of ["127.0.0.1", "10.0.0.1", "169.254.169.254", "::1", "::ffff:10.0.0.1", "fe80::abcd", "fd00::1", "64:ff9b::a00:1", "not an ip", "1.2.3.256", "1::2::3", "1:2:3:4:5:6:7:8:9"]) {
        expect(isPublicAddress(ip), ip).toBe(false);
      }
      expect(parseIPv6("::ffff:1.2.3.4")).toEqual(parseIPv6("0:0:0:0:0:ffff:102:304"));
    });

    it("refuses a host whose DNS answers include a non-public address, before requesting the page", async () => {
      const ctx = await freshCtx();
      const cases: Array<[string, DnsEntry]> = [
        ["rebind.example.com", { A: ["10.0.0.5"] }],
        ["loop.example.com", { A: [PUBLIC_V4, "127.0.0.1"] }],
        ["meta.example.com", { A: ["169.254.169.254"] }],
        ["v6.example.com", { A: [PUBLIC_V4], AAAA: ["::1"] }],
        ["ula.example.com", { AAAA: ["fd00:ec2::254"] }],
        ["mapped.example.com", { AAAA: ["::ffff:192.168.0.1"] }],
        ["127.0.0.1.nip.io", { A: ["127.0.0.1"] }],
      ];
      const routes = Object.fromEntries(cases.map(([host]) => [`https://${host}/x`, body("secret")]));
      const web = serveWeb(routes, Object.fromEntries(cases));
      for (const [host] of cases) {
        const err = await refusal(runDownload(ctx, { url: `https://${host}/x` }));
        expect(err.code, host).toBe("url_not_allowed");
        expect(err.message).toContain("not a public address");
      }
      expect(web.pages()).toEqual([]);
      expect((await storeState(ctx)).documents).toBe(0);
    });

    it("reports names that do not resolve, or whose resolver fails, as download_failed", async () => {
      const ctx = await freshCtx();
      serveWeb({}, { "empty.example.com": {} });
      const nx = await refusal(runDownload(ctx, { url: "https://nowhere.example.com/x" }));
      expect(nx.code).toBe("download_failed");
      expect(nx.message).toContain("NXDOMAIN");
      expect(nx.retryable).toBe(false);
      const empty = await refusal(runDownload(ctx, { url: "https://empty.example.com/x" }));
      expect(empty.code).toBe("download_failed");
      expect(empty.message).toContain("no A or AAAA");

      vi.restoreAllMocks();
      vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("busy", { status: 503 }));
      const down = await refusal(runDownload(ctx, { url: "https://example.com/x" }));
      expect(down.code).toBe("download_failed");
      expect(down.retryable).toBe(true);
      expect(down.message).toContain("503");
    });

    it("re-checks every redirect hop and refuses one that points somewhere private", async () => {
      const ctx = await freshCtx();
      const web = serveWeb(
        {
          "https://example.com/meta": redirect("http://169.254.169.254/latest/meta-data/"),
          "https://example.com/meta-https": redirect("https://169.254.169.254/latest/meta-data/"),
          "https://example.com/mapped": redirect("https://[::ffff:127.0.0.1]/"),
          "https://example.com/decimal": redirect("https://2130706433/admin"),
          "https://example.com/local": redirect("https://localhost/admin"),
          "https://example.com/plain": redirect("http://example.com/data.csv"),
          "https://example.com/rebind": redirect("https://inside.example.org/"),
          "https://example.com/creds": redirect("https://admin:pw@example.org/"),
          "https://inside.example.org/": body("internal"),
        },
        { "inside.example.org": { A: ["192.168.10.10"] } },
      );
      for (const from of ["meta", "meta-https", "mapped", "decimal", "local", "plain", "rebind", "creds"]) {
        const err = await refusal(runDownload(ctx, { url: `https://example.com/${from}` }));
        expect(err.code, from).toBe("url_not_allowed");
        expect(err.message, from).toContain("Redirect from 'https://example.com/");
      }
      // Only the public first hops were ever requested.
      expect(new Set(web.pages().map((u) => new URL(u).hostname))).toEqual(new Set(["example.com"]));
      expect((await storeState(ctx)).documents).toBe(0);
    });

    it(`gives up after ${MAX_DOWNLOAD_REDIRECTS} redirects`, async () => {
      const ctx = await freshCtx();
      const routes: Record<string, Handler> = { "https://example.com/loop": redirect("https://example.com/loop") };
      for (let i = 0; i < MAX_DOWNLOAD_REDIRECTS; i++) routes[`https://example.com/hop${i}`] = redirect(`https://example.com/hop${i + 1}`);
      routes[`https://example.com/hop${MAX_DOWNLOAD_REDIRECTS}`] = body("arrived");
      const web = serveWeb(routes);
      // Exactly the limit is followed.
      expect((await runDownload(ctx, { url: "https://example.com/hop0" })).final_url).toBe(`https://example.com/hop${MAX_DOWNLOAD_REDIRECTS}`);
      const before = web.pages().length;
      const err = await refusal(runDownload(ctx, { url: "https://example.com/loop" }));
      expect(err.code).toBe("too_many_redirects");
      expect(web.pages().length - before).toBe(MAX_DOWNLOAD_REDIRECTS + 1);
      serveWeb({ "https://example.com/broken": () => new Response(null, { status: 302 }) });
      expect((await refusal(runDownload(ctx, { url: "https://example.com/broken" }))).code).toBe("download_failed");
    });
  });

  describe("download: size, time and status", () => {
    it("refuses a declared Content-Length over the limit without reading the body", async () => {
      const ctx = await freshCtx();
      const big = endless();
      serveWeb({ "https://example.com/big.bin": () => new Response(big.stream, { headers: { "content-length": String(MAX_DOCUMENT_BYTES + 1) } }) });
      const err = await refusal(runDownload(ctx, { url: "https://example.com/big.bin" }));
      expect(err.code).toBe("download_too_large");
      expect(err.message).toContain(String(MAX_DOCUMENT_BYTES + 1));
      expect(big.produced()).toBeLessThanOrEqual(2 * 1024 * 1024);
      expect((await storeState(ctx)).documents).toBe(0);
    });

    it("stops reading a body without Content-Length once it passes the limit", async () => {
      const ctx = await freshCtx();
      const big = endless();
      serveWeb({ "https://example.com/stream.bin": () => new Response(big.stream) });
      const err = await refusal(runDownload(ctx, { url: "https://example.com/stream.bin" }));
      expect(err.code).toBe("download_too_large");
      expect(err.hint).toContain(String(MAX_DOCUMENT_BYTES));
      expect(big.produced()).toBeGreaterThan(MAX_DOCUMENT_BYTES);
      expect(big.produced()).toBeLessThan(MAX_DOCUMENT_BYTES + 4 * 1024 * 1024);
      expect((await storeState(ctx)).documents).toBe(0);
    });

    it("publicFetch honours a small maxBytes exactly", async () => {
      serveWeb({ "https://example.com/ten": body("0123456789") });
      expect((await publicFetch("https://example.com/ten", { maxBytes: 10, timeoutMs: 5000, maxRedirects: 0 })).bytes.byteLength).toBe(10);
      const err = await refusal(publicFetch("https://example.com/ten", { maxBytes: 9, timeoutMs: 5000, maxRedirects: 0 }));
      expect(err.code).toBe("download_too_large");
    });

    it("times out a server that never answers, and a body that stalls", async () => {
      const ctx = await freshCtx();
      serveWeb({
        "https://example.com/slow": hang,
        "https://example.com/stall": () => new Response(new ReadableStream<Uint8Array>({ pull: () => new Promise<void>(() => {}) })),
      });
      for (const path of ["slow", "stall"]) {
        const started = Date.now();
        const err = await refusal(runDownload(ctx, { url: `https://example.com/${path}`, timeout_ms: 100 }));
        expect(err.code, path).toBe("download_timeout");
        expect(err.retryable).toBe(true);
        expect(err.message).toContain("100 ms");
        expect(Date.now() - started).toBeLessThan(5000);
      }
      expect((await storeState(ctx)).documents).toBe(0);
    });

    it("names the status of a non-2xx answer and says whether to retry", async () => {
      const ctx = await freshCtx();
      serveWeb({
        "https://example.com/missing": body("nope", {}, 404),
        "https://example.com/private": body("no", {}, 403),
        "https://example.com/busy": body("later", {}, 503),
        "https://example.com/unchanged": () => new Response(null, { status: 304 }),
      });
      const missing = await refusal(runDownload(ctx, { url: "https://example.com/missing" }));
      expect([missing.code, missing.retryable]).toEqual(["download_failed", false]);
      expect(missing.message).toContain("HTTP 404");
      expect((await refusal(runDownload(ctx, { url: "https://example.com/private" }))).hint).toContain("not public");
      const busy = await refusal(runDownload(ctx, { url: "https://example.com/busy" }));
      expect([busy.code, busy.retryable]).toEqual(["download_failed", true]);
      expect(busy.message).toContain("HTTP 503");
      expect((await refusal(runDownload(ctx, { url: "https://example.com/unchanged" }))).message).toContain("HTTP 304");
      expect((await storeState(ctx)).documents).toBe(0);
    });

    it("reports a network failure as a retryable download_failed", async () => {
      const ctx = await freshCtx();
      serveWeb({ "https://example.com/reset": () => Promise.reject(new TypeError("Network connection lost.")) });
      const err = await refusal(runDownload(ctx, { url: "https://example.com/reset" }));
      expect([err.code, err.retryable]).toEqual(["download_failed", true]);
      expect(err.message).toContain("Network connection lost");
    });
  });

  describe("download: tenancy", () => {
    it("keeps a downloaded document invisible to another tenant, with no dedupe across tenants", async () => {
      const a = await freshCtx();
      const b = await freshCtx();
      serveWeb({ "https://example.com/data.csv": body(CSV) });
      const got = await runDownload(a, { url: "https://example.com/data.csv" });
      const byPath = await refusal(getDocument(b, { path: got.path }));
      expect(byPath.code).toBe("not_found");
      const byHash = await refusal(getDocument(b, { hash: got.hash }));
      expect(byHash.code).toBe("not_found");
      expect(await storeState(b)).toEqual({ documents: 0, chunks: 0, snapshots: 0, collections: 0 });
      const theirs = await runDownload(b, { url: "https://example.com/data.csv" });
      expect(theirs.hash).toBe(got.hash);
      expect(theirs.bytes_stored).toBe(CSV.length);
    });
  });

  describe("download: bad input", () => {
    it("requires url, with the seed's pointer to add for inline content", () => {
      for (const raw of [{}, { url: "" }, { url: null }, { path: "x.csv" }]) {
        let err: unknown;
        try {
          download.normalize!(raw);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(ToolError);
        expect((err as ToolError).code).toBe("invalid_input");
        expect((err as ToolError).message).toBe("download requires 'url'.");
        expect((err as ToolError).hint).toContain("'add'");
      }
      expect(() => download.normalize!({ url: "https://example.com/a", content: "hi" })).toThrow(/no 'content'/);
      expect(() => download.normalize!({ url: "https://example.com/a", name: "a", path: "b" })).toThrow(/both 'name' and 'path'/);
      expect(download.normalize!({ url: "https://example.com/a", name: "a" })).toEqual({ url: "https://example.com/a", path: "a" });
    });

    it("rejects values outside the schema's bounds", () => {
      const bad = [
        { url: "https://example.com/" + "a".repeat(5000) },
        { url: 42 },
        { url: "https://example.com/a", timeout_ms: 10 },
        { url: "https://example.com/a", timeout_ms: 10 * 60_000 },
        { url: "https://example.com/a", timeout_ms: 1.5 },
        { url: "https://example.com/a", tags: Array.from({ length: 65 }, (_, i) => `t${i}`) },
        { url: "https://example.com/a", tags: [""] },
        { url: "https://example.com/a", metadata: { big: "x".repeat(20_000) } },
        { url: "https://example.com/a", metadata: [1] },
        { url: "https://example.com/a", post_index: "yes" },
        { url: "https://example.com/a", checksum: "sha256:" + "a".repeat(100) },
      ];
      for (const raw of bad) expect(download.params.safeParse(raw).success, JSON.stringify(raw).slice(0, 80)).toBe(false);
      expect(download.params.parse({ url: "https://example.com/a" })).toMatchObject({ post_index: true, timeout_ms: 30_000 });
    });

    it("publishes a schema where every parameter is described and bounded", () => {
      const schema = z.toJSONSchema(download.params, { io: "input" }) as { properties: Record<string, Record<string, any>>; required?: string[] };
      expect(schema.required).toEqual(["url"]);
      for (const [name, p] of Object.entries(schema.properties)) {
        expect(p.description, name).toEqual(expect.any(String));
        if (p.type === "string") expect(p.maxLength, name).toEqual(expect.any(Number));
        if (p.type === "array") {
          expect(p.maxItems, name).toEqual(expect.any(Number));
          expect(p.items.maxLength, name).toEqual(expect.any(Number));
        }
        if (p.type === "object") expect([p["x-max-bytes"], p["x-max-depth"]], name).toEqual([expect.any(Number), expect.any(Number)]);
      }
    });

    it("refuses an unparseable URL, a bad path or MIME type, and post_index false, before any fetch", async () => {
      const ctx = await freshCtx();
      const web = serveWeb({ "https://example.com/data.csv": body(CSV) });
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ url: "not a url" }, "not a valid absolute URL"],
        [{ url: "//example.com/data.csv" }, "not a valid absolute URL"],
        [{ url: "https://example.com/data.csv", path: "../escape.csv" }, "'..'"],
        [{ url: "https://example.com/data.csv", mime_type: "csv" }, "not a MIME type"],
        [{ url: "https://example.com/data.csv", post_index: false }, "post_index false"],
      ];
      for (const [raw, says] of cases) {
        const err = await refusal(runDownload(ctx, raw));
        expect(err.code, JSON.stringify(raw)).toBe("invalid_input");
        expect(err.message).toContain(says);
      }
      expect(web.requested).toEqual([]);
      expect(await storeState(ctx)).toEqual({ documents: 0, chunks: 0, snapshots: 0, collections: 0 });
    });

    it("quotes a long URL only as an excerpt", async () => {
      const long = `http://example.com/${"p".repeat(3000)}`;
      const err = await refusal(Promise.resolve().then(() => checkPublicUrl(long)));
      expect(err.code).toBe("url_not_allowed");
      expect(err.message.length).toBeLessThan(400);
    });
  });
});
