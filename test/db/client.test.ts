/**
 * Statements compiled once and bound per call (src/db/client.ts): the SQL is what drizzle builds
 * for the same query, each call binds its own values, and inserts compile per set of columns given.
 */
import { env } from "cloudflare:workers";
import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { compiled, CompiledShapes, compiledInsert, dbOf } from "../../src/db/client";
import { toolCalls } from "../../src/db/schema";

const tenant = () => `db-${crypto.randomUUID().slice(0, 8)}`;
const callsOf = (tenantId: string) => env.DB.prepare("SELECT tool_name, entity_path, error_msg, actor_id FROM tool_calls WHERE tenant_id = ? ORDER BY seq").bind(tenantId).all();

const row = (tenantId: string, entityPath: string) => ({ tenantId, timestamp: "2026-11-29T00:00:00.000Z", toolName: "probe", entityPath, success: 1, errorMsg: "", actorId: "a1" });

describe("compiled", () => {
  const byPath = compiled(["tenant", "path"], (db, v) =>
    db
      .select({ tool_name: toolCalls.toolName, entity_path: toolCalls.entityPath })
      .from(toolCalls)
      .where(and(eq(toolCalls.tenantId, v.tenant), eq(toolCalls.entityPath, v.path))),
  );

  it("runs the SQL drizzle builds for the query, binding each call's own values", async () => {
    const t = tenant();
    await env.DB.batch([row(t, "a.ts"), row(t, "b.ts")].map((r) => compiledInsert(toolCalls)(env.DB, r)));
    expect(await byPath(env.DB, { tenant: t, path: "a.ts" }).first()).toEqual({ tool_name: "probe", entity_path: "a.ts" });
    expect(await byPath(env.DB, { tenant: t, path: "b.ts" }).first()).toEqual({ tool_name: "probe", entity_path: "b.ts" });
    expect(await byPath(env.DB, { tenant: tenant(), path: "a.ts" }).first()).toBeNull();
    const direct = dbOf({ d1: env.DB })
      .select({ tool_name: toolCalls.toolName, entity_path: toolCalls.entityPath })
      .from(toolCalls)
      .where(and(eq(toolCalls.tenantId, t), eq(toolCalls.entityPath, "a.ts")))
      .toSQL();
    // The same statement text as building it per call, with the values in the same positions.
    let seen = "";
    const spy = { prepare: (text: string) => ((seen = text), env.DB.prepare(text)) } as unknown as D1Database;
    byPath(spy, { tenant: t, path: "a.ts" });
    expect(seen).toBe(direct.sql);
    expect(direct.params).toEqual([t, "a.ts"]);
  });

  it("binds a value named twice in both places", async () => {
    const t = tenant();
    await compiledInsert(toolCalls)(env.DB, row(t, "same")).run();
    const twice = compiled(["v"], (db, v) =>
      db
        .select({ n: sql<number>`count(*)`.as("n") })
        .from(toolCalls)
        .where(and(eq(toolCalls.tenantId, v.v), sql`${toolCalls.tenantId} = ${v.v}`)),
    );
    expect(await twice(env.DB, { v: t }).first()).toEqual({ n: 1 });
  });
});

describe("compiledInsert", () => {
  it("inserts rows giving different columns, each as given", async () => {
    const t = tenant();
    const insert = compiledInsert(toolCalls);
    await insert(env.DB, row(t, "auto.ts")).run();
    const seq = 900_000_000 + Math.floor(Math.random() * 1_000_000);
    await insert(env.DB, { ...row(t, "given.ts"), seq }).run();
    await insert(env.DB, { ...row(t, "again.ts"), actorId: "a2", seq: undefined }).run();
    const { results } = await env.DB.prepare("SELECT seq, entity_path, actor_id FROM tool_calls WHERE tenant_id = ? ORDER BY entity_path")
      .bind(t)
      .all<{ seq: number; entity_path: string; actor_id: string }>();
    expect(results.map((r) => [r.entity_path, r.actor_id])).toEqual([
      ["again.ts", "a2"],
      ["auto.ts", "a1"],
      ["given.ts", "a1"],
    ]);
    expect(results.find((r) => r.entity_path === "given.ts")!.seq).toBe(seq);
    expect(results.find((r) => r.entity_path === "auto.ts")!.seq).not.toBe(seq);
  });

  it("builds a row carrying an object (a SQL expression, bytes) per call, as it cannot be bound", async () => {
    const t = tenant();
    // The insert types allow only plain values for these columns; an untyped caller could still pass one.
    const expression = sql`'expr-' || ${"ok"}` as unknown as string;
    await compiledInsert(toolCalls)(env.DB, { ...row(t, "x"), entityPath: expression }).run();
    expect((await callsOf(t)).results).toEqual([{ tool_name: "probe", entity_path: "expr-ok", error_msg: "", actor_id: "a1" }]);
  });
});

describe("CompiledShapes", () => {
  it("builds each shape once, binds each call's values, and keeps at most its bound of shapes", async () => {
    const t = tenant();
    await compiledInsert(toolCalls)(env.DB, row(t, "s.ts")).run();
    const shapes = new CompiledShapes(2);
    const built: string[] = [];
    const byShape = (shape: "path" | "tool" | "actor", value: string) =>
      shapes
        .statement(env.DB, shape, { tenant: t, [shape]: value }, (db, p) => {
          built.push(shape);
          const column = { path: toolCalls.entityPath, tool: toolCalls.toolName, actor: toolCalls.actorId }[shape];
          return db
            .select({ n: sql<number>`count(*)`.as("n") })
            .from(toolCalls)
            .where(and(eq(toolCalls.tenantId, p.tenant!), eq(column, p[shape]!)));
        })
        .first<{ n: number }>();
    expect(await byShape("path", "s.ts")).toEqual({ n: 1 });
    expect(await byShape("path", "other.ts")).toEqual({ n: 0 });
    expect(await byShape("tool", "probe")).toEqual({ n: 1 });
    expect(built).toEqual(["path", "tool"]);
    // A third shape drops the oldest: "path" is built again when it comes back.
    expect(await byShape("actor", "a1")).toEqual({ n: 1 });
    expect(await byShape("tool", "nope")).toEqual({ n: 0 });
    expect(await byShape("path", "s.ts")).toEqual({ n: 1 });
    expect(built).toEqual(["path", "tool", "actor", "path"]);
  });
});
