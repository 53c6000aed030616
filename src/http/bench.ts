/**
 * Routes for the benchmarks only, mounted when BENCH_ROUTES=1 (never set in wrangler.toml):
 * a plain route running blame's query with no MCP, auth or session, to price the MCP layer,
 * and a bulk seeder for the scale runs.
 */
import { Hono } from "hono";
import { blameStatement } from "../changes/queries";
import type { Env } from "../env";

export const benchRoutes = new Hono<{ Bindings: Env }>();

benchRoutes.use(async (c, next) => {
  if (c.env.BENCH_ROUTES !== "1") return c.notFound();
  await next();
});

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
  ).bind(tenant, start, n).run();
  return c.json({ ok: true, inserted: n });
});
