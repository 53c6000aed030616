/**
 * Responses stay small: `fields` on the list tools with big rows, and the stated cap on what any
 * one call answers, with truncation reported and nothing lost to a caller that follows the hint.
 */
import { describe, expect, it } from "vitest";
import { capResponse, MAX_RESPONSE_CHARS } from "../../src/core/response-cap";
import { ALL_TOOLS, findTool } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { listedTool } from "../../src/core/listing";
import { ToolError } from "../../src/core/errors";
import { call, fails, makeCtx, ok, seedIdentity, TestClock, type Structured } from "../support/helpers";

const WHY = "Recorded by the response-size tests with enough words";
const bigDiff = (n: number, seed: string) => `--- a\n+++ b\n${`+${seed} line of a large generated change\n`.repeat(Math.ceil(n / 40))}`.slice(0, n);

async function world(name: string) {
  const id = await seedIdentity(`size-${name}-${crypto.randomUUID().slice(0, 8)}`, "sizer");
  const clock = new TestClock();
  return { id, clock, ctx: makeCtx(id, clock, "size-session") };
}

describe("fields", () => {
  it("is offered on every list tool marked for it, each with items of objects", () => {
    const marked = ALL_TOOLS.filter((t) => t.fields);
    expect(marked.map((t) => t.name)).toEqual(expect.arrayContaining(["change_history", "change_diff", "decision_query", "handoff_query", "inbox", "project_query"]));
    for (const def of ALL_TOOLS) {
      const props = (listedTool(def, "lean").inputSchema as { properties: Record<string, unknown> }).properties;
      expect("fields" in props, def.name).toBe(def.fields === true);
      if (def.fields)
        expect((listedTool(def, "full").outputSchema as unknown as { anyOf: Array<{ properties: { items?: { type: string; items: { type: string } } } }> }).anyOf[0]!.properties.items).toMatchObject({
          type: "array",
          items: { type: "object" },
        });
    }
  });

  it("returns only the named keys of each item, plus id", async () => {
    const w = await world("fields");
    for (let i = 0; i < 3; i++) {
      w.clock.advance(1);
      await ok(w.ctx, "log_change", { entity_path: `svc.f${i}`, change_type: "modify", reasoning: WHY, diff: bigDiff(5_000, `f${i}`) });
    }
    const full = await ok(w.ctx, "change_history", {});
    const slim = await ok(w.ctx, "change_history", { fields: ["entity_path", "change_type"] });
    expect(slim.items).toHaveLength(3);
    for (const item of slim.items) expect(Object.keys(item).sort()).toEqual(["change_type", "entity_path", "id"]);
    expect(slim.items.map((e: Structured) => e.id)).toEqual(full.items.map((e: Structured) => e.id));
    expect(JSON.stringify(slim).length).toBeLessThan(JSON.stringify(full).length / 10);
    // camelCase is the alias of every parameter, fields included.
    const dec = await ok(w.ctx, "decision_query", { fields: ["title"] });
    expect(dec.items).toEqual([]);
  });

  it("refuses a key the items do not have, naming the ones they do", async () => {
    const w = await world("badfields");
    const e = await fails(w.ctx, "change_history", { fields: ["entity_path", "nope"] });
    expect(e.code).toBe("invalid_input");
    expect(e.message).toContain("'nope'");
    expect(e.hint).toContain("reasoning");
    expect((await fails(w.ctx, "change_history", { fields: [] })).code).toBe("invalid_input");
    expect((await fails(w.ctx, "change_history", { fields: "entity_path" })).code).toBe("invalid_input");
  });

  it("stays inside the caller's tenant", async () => {
    const a = await world("fa");
    const b = await world("fb");
    await ok(a.ctx, "log_change", { entity_path: "secret.path", change_type: "add", reasoning: WHY });
    const seen = await ok(b.ctx, "change_history", { fields: ["entity_path"] });
    expect(seen.items).toEqual([]);
  });
});

describe("the response cap", () => {
  it("keeps a list's longest prefix that fits, drops its cursor and says which limit pages without a gap", () => {
    const items = Array.from({ length: 40 }, (_, i) => ({ id: `e${i}`, diff: "x".repeat(5_000) }));
    const { value, truncation } = capResponse({ items, next_cursor: "abc" });
    expect(JSON.stringify(value).length).toBeLessThanOrEqual(MAX_RESPONSE_CHARS);
    const kept = (value.items as unknown[]).length;
    expect(kept).toBeGreaterThan(15);
    expect(kept).toBeLessThan(20);
    expect(value.next_cursor).toBeUndefined();
    expect(truncation).toMatchObject({ max_chars: MAX_RESPONSE_CHARS, omitted_items: 40 - kept });
    expect(truncation!.hint).toContain(`limit: ${kept}`);
    // One item more would not have fitted.
    expect(JSON.stringify({ items: items.slice(0, kept + 1) }).length).toBeGreaterThan(MAX_RESPONSE_CHARS - 2_000);
  });

  it("cuts the longest strings of anything else to one length, with a marker and their paths", () => {
    const payload = { task: { id: "t1", title: "short", body: "b".repeat(150_000) }, comments: [{ body: "c".repeat(60_000) }, { body: "tiny" }] };
    const { value, truncation } = capResponse(payload);
    expect(JSON.stringify(value).length).toBeLessThanOrEqual(MAX_RESPONSE_CHARS);
    const v = value as typeof payload;
    expect(v.task.title).toBe("short");
    expect(v.comments[1]!.body).toBe("tiny");
    expect(v.task.body).toMatch(/…\[\d+ more characters cut\]$/);
    expect(truncation!.shortened_fields).toEqual(["task.body", "comments[0].body"]);
    expect(v.task.body.startsWith("b".repeat(truncation!.max_field_chars!))).toBe(true);
  });

  it("leaves a response under the cap untouched, and refuses one that no cut can bring under it", () => {
    const small = { items: [{ id: "a" }], next_cursor: "n" };
    expect(capResponse(small)).toEqual({ value: small });
    const structure = { ids: Array.from({ length: 30_000 }, (_, i) => i) };
    expect(() => capResponse(structure)).toThrow(ToolError);
  });

  it("cuts a real page of history, and the hinted limit pages through all of it without a gap", async () => {
    const w = await world("page");
    const logged: string[] = [];
    for (let i = 0; i < 12; i++) {
      w.clock.advance(1);
      logged.push((await ok(w.ctx, "log_change", { entity_path: `big.e${i}`, change_type: "modify", reasoning: WHY, diff: bigDiff(20_000, `p${i}`) })).id);
    }
    const cut = await ok(w.ctx, "change_history", { limit: 12 });
    expect(cut.truncation.omitted_items).toBeGreaterThan(0);
    expect(cut.next_cursor).toBeUndefined();
    const limit = Number(/limit: (\d+)/.exec(cut.truncation.hint)![1]);
    expect(limit).toBe(cut.items.length);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page: Structured = await ok(w.ctx, "change_history", { limit, ...(cursor ? { cursor } : {}) });
      expect(page.truncation).toBeUndefined();
      seen.push(...page.items.map((e: Structured) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...logged].sort());
  });

  it("reports the cut in the envelope over the normal path, and the text content stays bounded", async () => {
    const w = await world("task");
    const project = await ok(w.ctx, "project_create", { title: "Size probe", key: "SZ" });
    const task = await ok(w.ctx, "task_create", { project_id: project.project.id, title: "Large", body: bigDiff(65_000, "body") });
    for (let i = 0; i < 3; i++) await ok(w.ctx, "comment_add", { object_type: "task", object_id: task.task.id, body: bigDiff(19_000, `c${i}`) });
    const result = await callTool(findTool("task_get")!, w.ctx, { task_id: task.task.id });
    const s = result.structuredContent as Structured;
    expect(s.ok).toBe(true);
    expect(s.truncation.shortened_fields).toContain("task.body");
    expect(JSON.stringify(s).length).toBeLessThanOrEqual(MAX_RESPONSE_CHARS);
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    expect(text.length).toBeLessThanOrEqual(MAX_RESPONSE_CHARS + 200);
    // What was cut is still there to read on its own.
    const direct = await call(w.ctx, "task_query", { q: "Large" });
    expect(direct.items[0].id).toBe(task.task.id);
  });
});
