/**
 * The code index end to end inside workerd: index_workspace starts a real Workflow instance
 * that reads the fake GitHub's tarball, parses, indexes and embeds; then the retrieval and symbol
 * tools answer from it. Also: a push re-indexes only what changed, a failed step is retried and
 * resumes, a second job is refused while one runs, and another tenant never sees the index.
 */
import { env } from "cloudflare:workers";
import { introspectWorkflow, introspectWorkflowInstance } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { applyCodePush } from "../../src/code/push";
import { keywordChunks } from "../../src/code/retrieval";
import { listIndexes } from "../../src/code/store";
import { ftsPhrase, queryTerms, scopeToken } from "../../src/code/terms";
import { FREQUENT_CRON, runMaintenance } from "../../src/cron/maintenance";
import { indexed, type Rig, rig, workflowsUseFakeGitHub } from "../support/code-rig";
import { NAME, OWNER, REPO, SHOP_TREE as TREE } from "../fixtures/code/shop";
import { example } from "../support/github/fake";
import type { ArchiveTree } from "../support/github/fake-archive";
import { call, fails, ok, type Structured } from "../support/helpers";

workflowsUseFakeGitHub();

/** One rig indexed once, shared by the tests of the tools that read the index (indexing runs a whole workflow). */
function indexedOnce(prefix: string): () => Promise<{ r: Rig; started: Structured }> {
  let made: Promise<{ r: Rig; started: Structured }> | undefined;
  return async () => {
    const shared = await (made ??= rig(prefix).then(async (r) => ({ r, started: await indexed(r) })));
    // The setup takes the fake GitHub away after each test: the test at hand gets it back, as a rig of its own would have it.
    vi.spyOn(globalThis, "fetch").mockImplementation(shared.r.gh.fetch);
    return shared;
  };
}

const full = indexedOnce("code-full");
const search = indexedOnce("code-search");
const symbols = indexedOnce("code-symbols");

describe("index_workspace", () => {
  it("indexes a repository through a workflow: files, chunks, symbols; binaries, lock files and vendored code left out", async () => {
    const { started } = await full();
    expect(started).toMatchObject({ repo: REPO, ref: "main", phase: "queued" });
  });

  it("refuses a second job while one runs", async () => {
    const r = await rig("code-lock");
    const first = await ok(r.ctx, "index_workspace", { repo: REPO });
    const second = await ok(r.ctx, "index_workspace", { repo: REPO });
    expect(second).toMatchObject({ status: "already_running", job_id: first.job_id });
    await using instance = await introspectWorkflowInstance(env.CODE_INDEX, first.job_id);
    await instance.waitForStatus("complete");
  });

  it("retries a failed step and resumes where it stopped: the steps before it are not run again", async () => {
    const r = await rig("code-retry");
    // The first download is cut off mid-stream: the fetch step fails and is retried.
    const archives = r.archives as unknown as { download(req: Request): Promise<Response> };
    const download = archives.download.bind(r.archives);
    let downloads = 0;
    archives.download = async (req) => {
      r.archives.cut = downloads++ === 0 ? { layer: "gzip", at: 300 } : null;
      return download(req);
    };
    // Every instance created from here on runs without retry delays.
    await using workflows = await introspectWorkflow(env.CODE_INDEX);
    await workflows.modifyAll(async (m) => {
      await m.disableRetryDelays();
    });
    await ok(r.ctx, "index_workspace", { repo: REPO });
    const [instance] = await workflows.get();
    await instance!.waitForStatus("complete");
    expect(r.archives.served.map((d) => d.served < d.total || d.total <= 300)).toEqual([true, false]);
    // index_workspace checked the ref once, and the resolve step ran once: its answer was kept when the fetch step failed.
    const resolves = r.gh.requests.filter((q) => q.op === "GET /repos/{owner}/{repo}/commits/{ref}" && (q.path as { ref: string }).ref === "main");
    expect(resolves).toHaveLength(2);
    const s = (await ok(r.ctx, "index_status", { repo: REPO, check_head: false })).items[0];
    expect(s).toMatchObject({ phase: "complete", files_done: 6, errors: [] });
  });

  it("reads within the repository's own limits, keeps them, and reports them", async () => {
    const r = await rig("code-limits");
    const started = await ok(r.ctx, "index_workspace", { repo: REPO, limits: { max_files: 3 } });
    await using instance = await introspectWorkflowInstance(env.CODE_INDEX, started.job_id);
    await instance.waitForStatus("complete");
    const s = (await ok(r.ctx, "index_status", { repo: REPO, check_head: false })).items[0];
    expect(s).toMatchObject({ phase: "complete", files_total: 3, truncated: true, limits: { max_files: 3, max_file_bytes: 512 * 1024, max_total_bytes: 64 * 1024 * 1024 } });
    expect(s.skipped.over_limit).toBe(1);
    expect((await fails(r.ctx, "index_workspace", { repo: REPO, limits: { max_files: 0 } })).code).toBe("invalid_input");
    expect((await fails(r.ctx, "index_workspace", { repo: REPO, limits: { max_total_bytes: 1e12 } })).code).toBe("invalid_input");
  });

  it("answers index_not_found before any index, and validates repo and ref", async () => {
    const r = await rig("code-none");
    expect((await fails(r.ctx, "semantic_search", { query: "login" })).code).toBe("index_not_found");
    expect((await fails(r.ctx, "get_workspace_info", {})).code).toBe("index_not_found");
    expect((await fails(r.ctx, "index_workspace", { repo: "not a repo" })).code).toBe("invalid_repo");
    expect((await fails(r.ctx, "index_workspace", { repo: REPO, ref: "bad..ref" })).code).toBe("invalid_input");
    // A missing ref or repository is answered at once, and no index row is left behind.
    r.gh.on("GET /repos/{owner}/{repo}/commits/{ref}", () => ({ status: 404, body: { message: "Not Found", documentation_url: "https://docs.github.com/rest" } }));
    expect((await fails(r.ctx, "index_workspace", { repo: REPO, ref: "nope" })).code).toBe("github_not_found");
    expect((await ok(r.ctx, "index_status", {})).items).toEqual([]);
  });
});

describe("index_status", () => {
  it("reports the finished job: its commit, the files, chunks and symbols, and what was skipped", async () => {
    const { r } = await full();
    const status = await ok(r.ctx, "index_status", { repo: REPO });
    expect(status.items).toHaveLength(1);
    const s = status.items[0];
    expect(s).toMatchObject({ phase: "complete", complete: true, indexed_commit: r.sha, files_total: 6, files_done: 6, fresh: true, truncated: false, errors: [] });
    expect(s.skipped).toMatchObject({ binary: 1, lockfile: 1, vendored: 1 });
    expect(s.chunks).toBeGreaterThanOrEqual(6);
    expect(s.symbols).toBeGreaterThanOrEqual(5);
  });
});

describe("get_workspace_info", () => {
  it("names the indexed workspace, its commit and the index's health", async () => {
    const { r } = await full();
    const info = await ok(r.ctx, "get_workspace_info", {});
    expect(info).toMatchObject({ workspace_path: `${REPO}@main`, branch: "main", commit: r.sha, total_files: 6, index_status: { healthy: true, phase: "complete" } });
    expect(info.cache_stats.commit_keyed).toBe(true);
  });
});

describe("reindex_workspace", () => {
  it("starts again once the running job is done", async () => {
    const r = await rig("code-relock");
    const first = await ok(r.ctx, "index_workspace", { repo: REPO });
    await using instance = await introspectWorkflowInstance(env.CODE_INDEX, first.job_id);
    await instance.waitForStatus("complete");
    const again = await ok(r.ctx, "reindex_workspace", { repo: REPO });
    expect(again.status).toBe("started");
    expect(again.job_id).not.toBe(first.job_id);
    await using re = await introspectWorkflowInstance(env.CODE_INDEX, again.job_id);
    await re.waitForStatus("complete");
  });
});

describe("semantic_search", () => {
  it("answers from the index, naming the commit", async () => {
    const { r } = await search();
    const found = await call(r.ctx, "semantic_search", { query: "how are passwords hashed at sign in" });
    expect(found.ok).toBe(true);
    const top2 = found.results.slice(0, 2).map((h: Structured) => h.path);
    expect(top2).toEqual(expect.arrayContaining(["src/crypto/hash.ts"]));
    expect(found.indexes).toEqual([{ repo: REPO, ref: "main", commit: r.sha }]);
    expect(found.results[0].relevance).toBe(1);
  });

  it("never searches another tenant's index", async () => {
    const a = await rig("code-iso-a");
    await indexed(a);
    const b = await rig("code-iso-b");
    expect((await fails(b.ctx, "semantic_search", { query: "password" })).code).toBe("index_not_found");
    expect((await fails(b.ctx, "get_file", { path: "src/cart/total.ts" })).code).toBe("index_not_found");
    expect((await ok(b.ctx, "index_status", {})).items).toEqual([]);
    expect((await ok(b.ctx, "git_commit_retrieval", { query: "password hashing" })).total_found).toBe(0);
    expect((await fails(b.ctx, "clear_index", { repo: REPO })).code).toBe("index_not_found");
    // B indexes the same repository: each sees only its own rows.
    await indexed(b);
    const aHits = await ok(a.ctx, "semantic_search", { query: "password", top_k: 50 });
    const bHits = await ok(b.ctx, "semantic_search", { query: "password", top_k: 50 });
    expect(aHits.results.length).toBe(bHits.results.length);
  });
});

describe("the keyword pass", () => {
  it("returns the rows, in the order, of the join-first form it replaced, at every pool size", async () => {
    const { r } = await search();
    const generations = (await listIndexes(env.DB, r.ctx.tenantId)).map((i) => i.generation).filter(Boolean);
    expect(generations).toHaveLength(1);
    // The form the pass ran before ranking inside the full-text index (kept here as the reference).
    const joinFirst = async (query: string, limit: number) => {
      const match = `scope : (${generations.map(scopeToken).join(" OR ")}) AND {path symbol terms} : (${queryTerms(query).slice(0, 24).map(ftsPhrase).join(" OR ")})`;
      const rows = await env.DB.prepare(
        `SELECT c.id FROM code_chunks_fts f JOIN code_chunks c ON c.seq = f.rowid
         WHERE code_chunks_fts MATCH ? AND c.tenant_id = ? ORDER BY bm25(code_chunks_fts, 0.0, 3.0, 4.0, 1.0) LIMIT ?`,
      )
        .bind(match, r.ctx.tenantId, limit)
        .all<{ id: string }>();
      return rows.results.map((c) => c.id);
    };
    let compared = 0;
    for (const query of ["how are passwords hashed at sign in", "shopping cart total price", "login test", "export function"]) {
      for (const limit of [1, 3, 30, 500]) {
        const expected = await joinFirst(query, limit);
        compared += expected.length;
        expect(
          (await keywordChunks(env.DB, r.ctx.tenantId, generations, query, limit)).map((c) => c.id),
          `${query} / ${limit}`,
        ).toEqual(expected);
      }
    }
    expect(compared).toBeGreaterThan(20);
    // Another tenant's key asking for these generations gets nothing.
    expect(await keywordChunks(env.DB, `${r.ctx.tenantId}-other`, generations, "password", 30)).toEqual([]);
  });
});

describe("codebase_retrieval", () => {
  it("answers from the index, filtered by file type, tests left out unless asked for", async () => {
    const { r } = await search();
    const cart = await ok(r.ctx, "codebase_retrieval", { query: "shopping cart total price", options: { file_types: [".ts"] } });
    expect(cart.results[0].path).toBe("src/cart/total.ts");
    expect(cart.results.every((h: Structured) => h.path.endsWith(".ts"))).toBe(true);
    const noTests = await ok(r.ctx, "codebase_retrieval", { query: "login test" });
    expect(noTests.results.some((h: Structured) => h.path.startsWith("tests/"))).toBe(false);
    const withTests = await ok(r.ctx, "codebase_retrieval", { query: "login test", options: { include_tests: true } });
    expect(withTests.results.some((h: Structured) => h.path.startsWith("tests/"))).toBe(true);
  });
});

describe("get_file", () => {
  it("answers from the index, naming the commit", async () => {
    const { r } = await search();
    const file = await ok(r.ctx, "get_file", { path: "src/cart/total.ts" });
    expect(file).toMatchObject({ path: "src/cart/total.ts", lines: 6, language: "typescript", metadata: { commit: r.sha, repo: REPO, git_status: "committed" } });
    expect(file.content).toBe(TREE["src/cart/total.ts"]);
    expect((await ok(r.ctx, "get_file", { path: "src/cart/total.ts", start_line: 4, end_line: 4 })).content).toBe("export function cartTotal(items: LineItem[]): number {");
    expect((await fails(r.ctx, "get_file", { path: "package-lock.json" })).code).toBe("file_not_found");
  });
});

describe("symbol_search", () => {
  it("finds a symbol by part of its name", async () => {
    const { r } = await symbols();
    const sym = await ok(r.ctx, "symbol_search", { query: "hash" });
    expect(sym.items[0]).toMatchObject({ name: "hashPassword", path: "src/crypto/hash.ts", exported: true });
  });
});

describe("symbol_definition", () => {
  it("answers a symbol's definition with its code, and symbol_not_found for an unknown one", async () => {
    const { r } = await symbols();
    const def = await ok(r.ctx, "symbol_definition", { symbol: "cartTotal" });
    expect(def.items[0]).toMatchObject({ path: "src/cart/total.ts", start_line: 4, kind: "function" });
    expect(def.items[0].code).toContain("items.reduce");
    expect((await fails(r.ctx, "symbol_definition", { symbol: "noSuchThing" })).code).toBe("symbol_not_found");
  });
});

describe("find_callers", () => {
  it("names the functions that call a symbol", async () => {
    const { r } = await symbols();
    const callers = await ok(r.ctx, "find_callers", { symbol: "hashPassword" });
    expect(callers.items).toEqual([expect.objectContaining({ caller: "login", path: "src/auth/login.ts", lines: [5] })]);
  });
});

describe("find_callees", () => {
  it("names what a function calls, with where each is defined", async () => {
    const { r } = await symbols();
    const callees = await ok(r.ctx, "find_callees", { symbol: "login" });
    expect(callees.items.map((c: Structured) => c.name).sort()).toEqual(["checkPassword", "hashPassword"]);
    expect(callees.items.find((c: Structured) => c.name === "hashPassword").definitions[0].path).toBe("src/crypto/hash.ts");
  });
});

describe("symbol_references", () => {
  it("finds the references to a symbol, calls among them", async () => {
    const { r } = await symbols();
    const refs = await ok(r.ctx, "symbol_references", { symbol: "login" });
    expect(refs.items.some((x: Structured) => x.path === "tests/login.test.ts" && x.kind === "call")).toBe(true);
  });
});

describe("impact_analysis", () => {
  it("names the files that import a changed file, by depth, and refuses a call without paths", async () => {
    const { r } = await symbols();
    const impact = await ok(r.ctx, "impact_analysis", { paths: ["src/crypto/hash.ts"] });
    expect(impact.files.map((f: Structured) => [f.path, f.depth])).toEqual([
      ["src/auth/login.ts", 1],
      ["tests/login.test.ts", 2],
    ]);
    expect((await fails(r.ctx, "impact_analysis", {})).code).toBe("invalid_input");
  });
});

describe("get_context_for_prompt", () => {
  it("get_context_for_prompt packs the best files and their imports within the budget, with the seed's validation messages", async () => {
    const r = await rig("code-context");
    await indexed(r);
    const res = await call(r.ctx, "get_context_for_prompt", { query: "login checkPassword", max_files: 1 });
    expect(res.ok).toBe(true);
    expect(res.files[0]).toMatchObject({ path: "src/auth/login.ts", reason: "match", whole: true });
    expect(res.files.map((f: Structured) => f.path)).toContain("src/crypto/hash.ts");
    expect(res.files.find((f: Structured) => f.path === "src/crypto/hash.ts").reason).toBe("related");
    expect(res.stats.tokens_used).toBeLessThanOrEqual(8000);
    expect(res.freshness).toEqual({ fresh: true, warning: "" });
    const noRelated = await ok(r.ctx, "get_context_for_prompt", { query: "login checkPassword", max_files: 1, include_related: false });
    expect(noRelated.files.map((f: Structured) => f.path)).toEqual(["src/auth/login.ts"]);
    for (const [args, message] of [
      [{ query: "   " }, "Invalid query parameter: must be a non-empty string"],
      [{ query: "x".repeat(1001) }, "Query too long: maximum 1000 characters"],
      [{ query: "q", max_files: 21 }, "Invalid max_files parameter: must be a number between 1 and 20"],
      [{ query: "q", token_budget: 100 }, "Invalid token_budget parameter: must be a number between 500 and 100000"],
      [{ query: "q", min_relevance: 2 }, "Invalid min_relevance parameter: must be a number between 0 and 1"],
    ] as const) {
      const e = await fails(r.ctx, "get_context_for_prompt", args);
      expect(e.code).toBe("invalid_input");
      expect(e.message).toContain(message);
    }
  });
});

describe("git_commit_retrieval", () => {
  it("git_commit_retrieval finds back-filled commits by message", async () => {
    const r = await rig("code-commits");
    await indexed(r);
    const res = await ok(r.ctx, "git_commit_retrieval", { query: "password hashing" });
    expect(res.total_found).toBe(1);
    expect(res.commits[0]).toMatchObject({ sha: r.sha, author: "Ada", relevance_score: 1, repo: REPO });
    expect((await ok(r.ctx, "git_commit_retrieval", { query: "password", author: "Grace" })).total_found).toBe(0);
    expect((await fails(r.ctx, "git_commit_retrieval", { query: "password", since: "whenever" })).code).toBe("invalid_input");
  });
});

describe("a push to an indexed branch", () => {
  it("re-indexes only the changed paths and moves the index to the pushed commit", async () => {
    const r = await rig("code-push");
    await indexed(r);
    const before = await env.DB.prepare(`SELECT path, id FROM code_chunks WHERE tenant_id = ? ORDER BY path`).bind(r.ctx.tenantId).all<{ path: string; id: string }>();
    const changed: ArchiveTree = {
      ...TREE,
      "src/cart/total.ts": "/** With tax. */\nexport function cartTotalWithTax(items: { price: number }[], rate: number): number {\n  return items.reduce((s, i) => s + i.price, 0) * (1 + rate);\n}\n",
      "src/cart/discount.ts": "export function applyDiscount(total: number, percent: number): number {\n  return total * (1 - percent / 100);\n}\n",
    };
    delete changed["scripts/report.py"];
    const head = r.archives.add(OWNER, NAME, "main", changed);
    const diffFile = (filename: string, status: string) => {
      const { patch: _none, ...file } = example<{ files: Record<string, unknown>[] }>("GET /repos/{owner}/{repo}/compare/{basehead}").files[0]!;
      return { ...file, filename, status };
    };
    r.gh.on("GET /repos/{owner}/{repo}/compare/{basehead}", (req) => {
      expect((req.path as { basehead: string }).basehead).toBe(`${r.sha}...${head}`);
      return {
        body: example("GET /repos/{owner}/{repo}/compare/{basehead}", {
          files: [diffFile("src/cart/total.ts", "modified"), diffFile("src/cart/discount.ts", "added"), diffFile("scripts/report.py", "removed")],
        }),
      };
    });
    await using workflows = await introspectWorkflow(env.CODE_INDEX);
    const note = await applyCodePush(r.ctx, {
      ref: "refs/heads/main",
      before: r.sha,
      after: head,
      repository: { name: NAME, owner: { login: OWNER } },
      commits: [
        {
          id: head,
          message: "Cart: tax and discounts",
          timestamp: "2026-11-20T13:00:00Z",
          author: { name: "Grace" },
          added: ["src/cart/discount.ts"],
          modified: ["src/cart/total.ts"],
          removed: ["scripts/report.py"],
        },
      ],
    });
    expect(note).toMatch(/1 commit\(s\) recorded, incremental index job \S+ started/);
    const [instance] = await workflows.get();
    await instance!.waitForStatus("complete");

    const s = (await ok(r.ctx, "index_status", { repo: REPO, check_head: false })).items[0];
    expect(s).toMatchObject({ phase: "complete", indexed_commit: head, files_total: 6 });
    const after = await env.DB.prepare(`SELECT path, id FROM code_chunks WHERE tenant_id = ? ORDER BY path`).bind(r.ctx.tenantId).all<{ path: string; id: string }>();
    // Untouched files keep their very chunks; changed ones have new ones; the removed one is gone.
    const ids = (rows: { path: string; id: string }[], path: string) => rows.filter((x) => x.path === path).map((x) => x.id);
    expect(ids(after.results, "src/auth/login.ts")).toEqual(ids(before.results, "src/auth/login.ts"));
    expect(ids(after.results, "src/cart/total.ts")).not.toEqual(ids(before.results, "src/cart/total.ts"));
    expect(ids(after.results, "scripts/report.py")).toEqual([]);
    expect((await ok(r.ctx, "symbol_definition", { symbol: "applyDiscount" })).items[0].path).toBe("src/cart/discount.ts");
    expect((await fails(r.ctx, "symbol_definition", { symbol: "cartTotal" })).code).toBe("symbol_not_found");
    expect((await ok(r.ctx, "git_commit_retrieval", { query: "discounts" })).commits[0]).toMatchObject({
      sha: head,
      author: "Grace",
      files_changed: ["src/cart/discount.ts", "src/cart/total.ts", "scripts/report.py"],
    });
  });

  it("leaves other branches, unknown repositories and tags alone", async () => {
    const r = await rig("code-push-other");
    await indexed(r);
    const push = (ref: string, name = NAME) => applyCodePush(r.ctx, { ref, before: r.sha, after: "f".repeat(40), repository: { name, owner: { login: OWNER } }, commits: [] });
    expect(await push("refs/heads/feature")).toBeNull();
    expect(await push("refs/tags/v1")).toBeNull();
    expect(await push("refs/heads/main", "other")).toBeNull();
  });
});

describe("clear_index", () => {
  it("the maintenance cron drops rows of a generation no index names (a job that wrote after the clear)", async () => {
    const r = await rig("code-orphan");
    await indexed(r);
    const gen = (await env.DB.prepare(`SELECT generation FROM code_indexes WHERE tenant_id = ?`).bind(r.ctx.tenantId).first<{ generation: string }>())!.generation;
    // The index row goes as clear_index deletes it, but its rows are left, as a late step would leave them.
    await env.DB.prepare(`DELETE FROM code_indexes WHERE tenant_id = ?`).bind(r.ctx.tenantId).run();
    const sweep = () => runMaintenance(env as never, new Date("2026-11-20T12:05:00.000Z"), FREQUENT_CRON);
    let lines = await sweep();
    for (let i = 0; i < 5 && (await env.DB.prepare(`SELECT count(*) AS n FROM code_files WHERE tenant_id = ? AND generation = ?`).bind(r.ctx.tenantId, gen).first<{ n: number }>())!.n > 0; i++)
      lines = await sweep();
    expect(lines.find((l) => l.job === "code_orphan_generations")).toMatchObject({ ok: true });
    for (const table of ["code_files", "code_chunks", "code_symbols", "code_symbol_refs", "code_imports"]) {
      const n = await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = ?`).bind(r.ctx.tenantId).first<{ n: number }>();
      expect(n!.n, table).toBe(0);
    }
  });

  it("deletes the index and its rows", async () => {
    const r = await rig("code-clear");
    await indexed(r);
    expect(await ok(r.ctx, "clear_index", { repo: REPO })).toEqual(expect.objectContaining({ cleared: ["main"] }));
    expect((await ok(r.ctx, "index_status", {})).items).toEqual([]);
    const left = await env.DB.prepare(`SELECT count(*) AS n FROM code_chunks WHERE tenant_id = ?`).bind(r.ctx.tenantId).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });
});
