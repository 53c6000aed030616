/**
 * Routes for the benchmarks only, mounted when BENCH_ROUTES=1 (never set in wrangler.toml):
 * a plain route running blame's query with no MCP, auth or session, to price the MCP layer,
 * bulk seeders for the scale runs, a timer for the local vector scan, and code search by one
 * retrieval mode for the code index's quality figures.
 */
import { Hono } from "hono";
import { bearerKey, identityForApiKey } from "../auth/identity";
import { blameStatement } from "../changes/queries";
import { appendStats } from "../changes/chain";
import { searchCode } from "../code/retrieval";
import { listIndexes } from "../code/store";
import { dbOf } from "../db/client";
import type { Env } from "../env";
import { selectSemantic } from "../search/semantic";
import { noteEmbedText, vectorId } from "../search/sources";

export const benchRoutes = new Hono<{ Bindings: Env }>();

benchRoutes.use(async (c, next) => {
  if (c.env.BENCH_ROUTES !== "1") return c.notFound();
  await next();
});

/** This isolate's chain appends and their retries so far (bench/changes.ts prints retries per write). */
benchRoutes.get("/chain-stats", (c) => c.json({ ok: true, ...appendStats }));

benchRoutes.get("/blame", async (c) => {
  const row = await blameStatement(c.env.DB, c.req.query("tenant") ?? "", c.req.query("path") ?? "").first();
  return c.json({ ok: true, row });
});

/** Inserts `n` synthetic events for a tenant in one statement (a recursive CTE), varied by index. */
benchRoutes.post("/seed", async (c) => {
  const tenant = c.req.query("tenant") ?? "";
  const start = Number(c.req.query("from") ?? "0");
  const n = Math.min(Number(c.req.query("n") ?? "0"), 20_000);
  await c.env.DB.prepare(
    `WITH RECURSIVE k(i) AS (SELECT ?2 UNION ALL SELECT i + 1 FROM k WHERE i < ?2 + ?3 - 1)
     INSERT INTO events (id, tenant_id, timestamp, entity_type, entity_path, change_type, diff, reasoning, agent, project, changeset_id)
     SELECT printf('bench-%s-%08d', ?1, i), ?1, strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'),
            'column', printf('table%d.col%d', i % 500, i % 7),
            CASE i % 3 WHEN 0 THEN 'add' WHEN 1 THEN 'modify' ELSE 'remove' END,
            printf('@@ -%d +%d @@%s+  value_%d integer not null', i % 90, i % 90, char(10), i),
            printf('Change %d: widen the column because batch %d overflowed during the nightly import of region %d', i, i % 1000, i % 17),
            printf('agent-%d', i % 5), 'bench', printf('cs-%d', i % 2000)
     FROM k`,
  )
    .bind(tenant, start, n)
    .run();
  return c.json({ ok: true, inserted: n });
});

/** A small vocabulary so synthetic notes share words the way a team's notes do. */
const WORDS = (
  "deploy worker wrangler queue lease claim token cache etag github review merge branch commit schema migration index " +
  "search vector embedding tenant session alarm cron backfill retry timeout latency p99 budget incident runbook rollback restore bookmark " +
  "database replica shard partition region edge route origin header cookie oauth key secret rotate audit log metric trace span sample " +
  "flaky test suite race fixture mock stub snapshot contract envelope error hint retryable idempotent cursor page limit filter sort rank " +
  "decision option tradeoff cost risk owner deadline release tag changelog version pin toolchain node typescript lint format build bundle"
).split(" ");

function syntheticNote(i: number): { title: string; body: string } {
  const pick = (k: number) => WORDS[(i * 7919 + k * 104_729) % WORDS.length]!;
  const title = `${pick(1)} ${pick(2)} ${pick(3)} note ${i}`;
  const body = Array.from({ length: 60 }, (_, k) => pick(k + 4)).join(" ");
  return { title, body };
}

/**
 * Inserts `n` synthetic knowledge notes for a tenant with their vectors (local embedder, D1
 * index) already made, as the backfill would leave them.
 */
benchRoutes.post("/seed-notes", async (c) => {
  const tenant = c.req.query("tenant") ?? "";
  const actor = c.req.query("actor") ?? "";
  const start = Number(c.req.query("from") ?? "0");
  const n = Math.min(Number(c.req.query("n") ?? "0"), 500);
  const { layer } = selectSemantic(c.env);
  if (!layer) return c.json({ ok: false, error: "semantic layer is off" }, 400);
  const notes = Array.from({ length: n }, (_, k) => ({ id: `bench-note-${String(start + k).padStart(8, "0")}`, ...syntheticNote(start + k) }));
  const vectors = await layer.embedder.embed(notes.map((x) => noteEmbedText(x.title, x.body)));
  const at = "2026-01-01T00:00:00.000Z";
  const insertNote = c.env.DB.prepare(
    `INSERT INTO knowledge_notes (id, tenant_id, project_id, kind, title, body, tags, version, created_by, created_at, updated_by, updated_at)
     VALUES (?, ?, NULL, 'note', ?, ?, '[]', 1, ?, ?, ?, ?)`,
  );
  const insertState = c.env.DB.prepare(
    `INSERT INTO embeddings (tenant_id, object_type, object_id, content_hash, status, model, attempts, last_error, updated_at) VALUES (?, 'note', ?, '', 'ready', ?, 0, '', ?)`,
  );
  await c.env.DB.batch(notes.flatMap((x) => [insertNote.bind(x.id, tenant, x.title, x.body, actor, at, actor, at), insertState.bind(tenant, x.id, layer.embedder.model, at)]));
  await layer.index.upsert(
    tenant,
    notes.map((x, k) => ({ id: vectorId("note", x.id), values: vectors[k]!, metadata: { object_type: "note", project_id: "", kind: "note" } })),
  );
  return c.json({ ok: true, inserted: n });
});

/**
 * The local vector index's query alone (the D1 read and the cosine scan), no MCP and no full-text
 * ranking; the client times it (clocks inside a Worker stand still while it computes).
 */
benchRoutes.get("/vector-scan", async (c) => {
  const { layer } = selectSemantic(c.env);
  if (!layer) return c.json({ ok: false, error: "semantic layer is off" }, 400);
  const [q] = await layer.embedder.embed([c.req.query("q") ?? "deploy worker"]);
  const matches = await layer.index.query(c.req.query("tenant") ?? "", q!, { topK: 20, filter: { object_type: "note" } });
  return c.json({ ok: true, matches: matches.length });
});

const CODE_MODES = new Set(["keyword", "semantic", "hybrid"]);

/**
 * searchCode in one mode ("keyword", "semantic" or "hybrid"; the tools always fuse) over the live
 * indexes of the calling key's tenant: the ranked chunks' paths, best first. bench/code.ts scores
 * them against its question set. The key is checked as /mcp checks it, so one tenant's bench run
 * never reads another's index.
 */
benchRoutes.get("/code-search", async (c) => {
  const key = bearerKey(c.req.header("Authorization"));
  const identity = key ? await identityForApiKey(dbOf({ d1: c.env.DB }), key) : null;
  if (!identity) return c.json({ ok: false, error: "unknown key" }, 401);
  const mode = c.req.query("mode") ?? "hybrid";
  if (!CODE_MODES.has(mode)) return c.json({ ok: false, error: "mode is keyword, semantic or hybrid" }, 400);
  const indexes = (await listIndexes(c.env.DB, identity.tenantId)).filter((i) => i.generation !== "");
  const found = await searchCode(c.env, identity.tenantId, indexes, {
    query: (c.req.query("q") ?? "").slice(0, 1000),
    topK: Math.min(Math.max(1, Number(c.req.query("top_k") ?? "10") || 10), 50),
    pool: Math.min(Math.max(1, Number(c.req.query("pool") ?? "3") || 3), 10),
    mode: mode as "keyword" | "semantic" | "hybrid",
  });
  return c.json({ ok: true, mode: found.mode, note: found.note, paths: found.hits.map((h) => h.path) });
});
