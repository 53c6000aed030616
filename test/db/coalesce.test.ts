/**
 * Reads made side by side reach D1 in one batch (src/db/coalesce.ts): what each caller gets is what
 * it would have got alone, writes are never held, and an error reaches only the read that caused it.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bindingOf, coalescingReads } from "../../src/db/coalesce";
import { dbOf } from "../../src/db/client";

const tenant = () => `co-${crypto.randomUUID().slice(0, 8)}`;

/** env.DB with each call that reaches it recorded: batches by their size, single statements by method. */
function recorded() {
  const calls: string[] = [];
  const counting = (statement: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, prop) {
        if (prop === "bind") return (...v: unknown[]) => counting(target.bind(...v));
        const value = Reflect.get(target, prop) as unknown;
        if (typeof value !== "function") return value;
        return (...a: unknown[]) => {
          if (prop === "first" || prop === "all" || prop === "run" || prop === "raw") calls.push(String(prop));
          return (value as (...x: unknown[]) => unknown).apply(target, a);
        };
      },
    });
  const d1 = new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "prepare") return (q: string) => counting(target.prepare(q));
      if (prop === "batch") return (s: D1PreparedStatement[]) => (calls.push(`batch ${s.length}`), target.batch(s));
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { d1, calls };
}

async function seed(t: string, names: string[]): Promise<void> {
  await env.DB.batch(
    names.map((name, i) =>
      env.DB.prepare("INSERT INTO tool_calls (tenant_id, timestamp, tool_name, entity_path, success, error_msg, actor_id) VALUES (?, ?, ?, ?, 1, '', 'a1')").bind(
        t,
        `2026-11-30T00:00:0${i}.000Z`,
        "probe",
        name,
      ),
    ),
  );
}

const pathsOf = (d1: D1Database, t: string) => d1.prepare("SELECT entity_path FROM tool_calls WHERE tenant_id = ? ORDER BY seq").bind(t);
const onePath = (d1: D1Database, t: string, path: string) => d1.prepare("SELECT entity_path, success FROM tool_calls WHERE tenant_id = ? AND entity_path = ?").bind(t, path);

describe("coalescingReads", () => {
  it("sends first(), all() and read-only batches made side by side as one batch, each caller getting its own answer", async () => {
    const t = tenant();
    await seed(t, ["a.ts", "b.ts", "c.ts"]);
    const { d1, calls } = recorded();
    const co = coalescingReads(d1);
    const [first, none, all, [x, y]] = await Promise.all([
      onePath(co, t, "b.ts").first(),
      onePath(co, t, "missing.ts").first(),
      pathsOf(co, t).all(),
      co.batch([onePath(co, t, "a.ts"), onePath(co, t, "c.ts")]),
    ]);
    expect(calls).toEqual(["batch 5"]);
    expect(first).toEqual({ entity_path: "b.ts", success: 1 });
    expect(none).toBeNull();
    expect(all.results).toEqual([{ entity_path: "a.ts" }, { entity_path: "b.ts" }, { entity_path: "c.ts" }]);
    expect(x!.results).toEqual([{ entity_path: "a.ts", success: 1 }]);
    expect(y!.results).toEqual([{ entity_path: "c.ts", success: 1 }]);
  });

  it("sends a read made alone as it is, and one after another when each waits for the last", async () => {
    const t = tenant();
    await seed(t, ["a.ts"]);
    const { d1, calls } = recorded();
    const co = coalescingReads(d1);
    expect(await onePath(co, t, "a.ts").first()).toEqual({ entity_path: "a.ts", success: 1 });
    expect((await pathsOf(co, t).all()).results).toEqual([{ entity_path: "a.ts" }]);
    const [alone] = await co.batch([pathsOf(co, t)]);
    expect(alone!.results).toEqual([{ entity_path: "a.ts" }]);
    expect(calls).toEqual(["all", "all", "all"]);
  });

  it("never holds a write: it goes first, and a read made beside it sees it", async () => {
    const t = tenant();
    const { d1, calls } = recorded();
    const co = coalescingReads(d1);
    const insert = co
      .prepare("INSERT INTO tool_calls (tenant_id, timestamp, tool_name, entity_path, success, error_msg, actor_id) VALUES (?, ?, 'probe', 'w.ts', 1, '', 'a1')")
      .bind(t, "2026-11-30T00:00:00.000Z");
    const [, read] = await Promise.all([insert.run(), pathsOf(co, t).all()]);
    expect(read.results).toEqual([{ entity_path: "w.ts" }]);
    expect(calls).toEqual(["run", "all"]);
    // A batch holding a write is a write batch: sent as given, not held.
    await co.batch([pathsOf(co, t), co.prepare("DELETE FROM tool_calls WHERE tenant_id = ?").bind(t)]);
    expect(calls.at(-1)).toBe("batch 2");
    expect((await pathsOf(env.DB, t).all()).results).toEqual([]);
  });

  it("when the combined batch fails, sends each read again alone: only the faulty one fails", async () => {
    const t = tenant();
    await seed(t, ["a.ts"]);
    const { d1, calls } = recorded();
    const co = coalescingReads(d1);
    const [good, bad, alsoGood] = await Promise.allSettled([
      onePath(co, t, "a.ts").first(),
      co.prepare("SELECT no_such_column FROM tool_calls WHERE tenant_id = ?").bind(t).all(),
      pathsOf(co, t).all(),
    ]);
    expect(calls[0]).toBe("batch 3");
    expect(good).toEqual({ status: "fulfilled", value: { entity_path: "a.ts", success: 1 } });
    expect(bad.status).toBe("rejected");
    expect(String((bad as PromiseRejectedResult).reason)).toMatch(/no_such_column/);
    expect(alsoGood.status === "fulfilled" && alsoGood.value.results).toEqual([{ entity_path: "a.ts" }]);
  });

  it("leaves first(column) and raw() to D1, and splits more than 50 held reads over batches", async () => {
    const t = tenant();
    await seed(t, ["a.ts"]);
    const { d1, calls } = recorded();
    const co = coalescingReads(d1);
    expect(await onePath(co, t, "a.ts").first("entity_path")).toBe("a.ts");
    expect(await onePath(co, t, "a.ts").raw()).toEqual([["a.ts", 1]]);
    expect(calls).toEqual(["first", "raw"]);
    calls.length = 0;
    const many = await Promise.all(Array.from({ length: 60 }, () => onePath(co, t, "a.ts").first()));
    expect(many.every((r) => (r as { entity_path: string }).entity_path === "a.ts")).toBe(true);
    expect(calls).toEqual(["batch 50", "batch 10"]);
  });

  it("keeps one drizzle instance per binding: a request's coalescing binding uses the one under it", () => {
    const co = coalescingReads(env.DB);
    expect(bindingOf(co)).toBe(env.DB);
    expect(bindingOf(env.DB)).toBe(env.DB);
    expect(dbOf({ d1: co })).toBe(dbOf({ d1: env.DB }));
  });
});
