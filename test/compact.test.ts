/**
 * Compact mode: three tools over the whole registry on the pipeline engine, every op through the
 * registry's own code, and a tools/list small enough to cost an agent under 1,000 tokens.
 */
import { describe, expect, it } from "vitest";
import { encode } from "gpt-tokenizer/encoding/cl100k_base";
import { DOC_OPS } from "../src/docs/ops";
import { compactSurface } from "../src/mcp/compact";
import { ALL_TOOLS, callTool, toolListing } from "../src/mcp/registry";
import { connectClient, count, makeCtx, seedIdentity, type Structured, TestClock } from "./helpers";

const ALL = { toolsets: ["all"], readonly: false };
const tokens = (value: unknown) => encode(JSON.stringify(value)).length;

async function compactCtx(prefix: string) {
  const id = await seedIdentity(`${prefix}-${crypto.randomUUID().slice(0, 8)}`, "agent");
  return { id, ctx: makeCtx(id, new TestClock(), `compact-${crypto.randomUUID()}`) };
}

async function run(ctx: Parameters<typeof callTool>[1], tool: "query" | "execute" | "session", args: unknown): Promise<Structured & { isError: boolean }> {
  const def = compactSurface(ALL).tools.find((t) => t.name === tool)!;
  const r = await callTool(def, ctx, args);
  return { ...(r.structuredContent as Structured), isError: r.isError === true };
}

describe("compact mode's listing", () => {
  it("lists three tools in at most 1,000 tokens (cl100k), for the default surface and for every toolset", () => {
    for (const surface of [{ toolsets: [], readonly: false }, ALL, { toolsets: ["all"], readonly: true }]) {
      const listing = compactSurface(surface).tools.map(toolListing);
      expect(listing.map((t) => t.name)).toEqual(surface.readonly ? ["query"] : ["query", "execute", "session"]);
      console.info(`compact tools/list ${JSON.stringify(surface)}: ${tokens(listing)} tokens`);
      expect(tokens(listing), JSON.stringify(surface)).toBeLessThanOrEqual(1000);
    }
    // What it replaces: the normal listing of every tool.
    expect(tokens(ALL_TOOLS.map(toolListing))).toBeGreaterThan(20 * tokens(compactSurface(ALL).tools.map(toolListing)));
  });
});

describe("every tool is an op", () => {
  it("each registry tool (and each document-store op) is reachable with its kind, and describe gives its schemas", async () => {
    const { ctx } = await compactCtx("compact-walk");
    const { pipeline, ops } = compactSurface(ALL);
    for (const def of ALL_TOOLS.filter((t) => !["docs_query", "docs_execute", "docs_session"].includes(t.name))) {
      const op = pipeline.find(def.name);
      expect(op?.kind, def.name).toBe(def.annotations.readOnly ? "query" : "execute");
      const d = await run(ctx, "query", { steps: [{ op: "describe", params: { target: def.name } }] });
      expect(d.ok, def.name).toBe(true);
      expect(d.inputSchema).toEqual(toolListing(def).inputSchema);
      expect(d.outputSchema).toEqual(toolListing(def).outputSchema);
      expect(d.annotations).toEqual(toolListing(def).annotations);
      expect(d.examples[0].op).toBe(def.name);
    }
    for (const o of DOC_OPS.filter((x) => x.name !== "describe")) {
      const name = o.category === "session" ? o.name : `docs_${o.name}`;
      expect(pipeline.find(name)?.kind, name).toBe(o.category);
    }
    const listed = await run(ctx, "query", { steps: [{ op: "describe" }] });
    expect(listed.total_ops).toBe(ops.size);
    expect(listed.toolsets.tasks.map((o: { op: string }) => o.op)).toContain("task_claim");
    expect(listed.toolsets.docs.map((o: { op: string }) => o.op)).toContain("docs_search");
  });

  it("toolsets and readonly filter the ops as they filter tools", () => {
    const narrow = compactSurface({ toolsets: ["changes"], readonly: false }).pipeline;
    expect(narrow.find("log_change")?.kind).toBe("execute");
    expect(narrow.find("task_create")).toBeUndefined();
    const ro = compactSurface({ toolsets: ["all"], readonly: true }).pipeline;
    expect(ro.names("execute")).toEqual([]);
    expect(ro.find("task_query")?.kind).toBe("query");
  });
});

describe("pipelines across toolsets", () => {
  it("creates a project and a task, reads it back and comments on it, with $prev between steps; splits reads from writes", async () => {
    const { ctx } = await compactCtx("compact-flow");
    const made = await run(ctx, "execute", {
      operations: [
        { op: "project_create", params: { title: "Compact", key: "CMP" } },
        { op: "task_create", params: { project_id: "CMP", title: "Try compact mode" } },
        { op: "comment_add", params: { object_type: "task", object_id: "$prev.task.id", body: "Started" } },
        { op: "docs_add", params: { name: "notes/compact.md", content: "# Compact\nOne surface." } },
      ],
    });
    expect(made).toMatchObject({ ok: true, totalOps: 4, succeeded: 4 });
    const taskId = made.results[1].data.task.id;
    const read = await run(ctx, "query", {
      steps: [
        { op: "task_query", params: { project_id: "CMP" } },
        { op: "task_get", params: { task_id: "$prev.items[0].id" } },
        { op: "docs_search", params: { query: "compact", type: "keyword" } },
      ],
    });
    expect(read).toMatchObject({ ok: true, totalSteps: 3, completedSteps: 3 });
    expect(read.steps[1].result.task.id).toBe(taskId);
    expect(read.steps[2].result.results[0].path).toBe("notes/compact.md");
    // Across toolsets: global search finds the task, task_get reads it, and a list op answers only the keys asked for.
    const found = await run(ctx, "query", {
      steps: [
        { op: "search", params: { q: "compact", object_types: ["task"] } },
        { op: "task_get", params: { task_id: "$prev.items[0].object_id" } },
        { op: "comment_query", params: { object_type: "task", object_id: "$prev.task.id", fields: ["body"] } },
      ],
    });
    expect(found).toMatchObject({ ok: true, completedSteps: 3 });
    expect(found.steps[1].result.task.id).toBe(taskId);
    expect(found.steps[2].result.items.map((c: Record<string, unknown>) => Object.keys(c).sort())).toEqual([["body", "id"]]);
    const wrong = await run(ctx, "query", { steps: [{ op: "task_create", params: { project_id: "CMP", title: "x" } }] });
    expect(wrong.error.message).toMatch(/^'task_create' is not a read operation\. Use the 'execute' tool for write operations \(/);
    const wrong2 = await run(ctx, "execute", { operations: [{ op: "task_query", params: {} }] });
    expect(wrong2.error.message).toMatch(/^'task_query' is not a write operation\. Use the 'query' tool for read operations/);
  });

  it("keeps each op's registry contract: validation per step, and two identical writes in one batch are one write and a replay, unless their keys differ", async () => {
    const { ctx } = await compactCtx("compact-contract");
    await run(ctx, "execute", { operations: [{ op: "project_create", params: { title: "Contract", key: "CTR" } }] });
    const bad = await run(ctx, "execute", { operations: [{ op: "task_create", params: { project_id: "CTR", titel: "typo" } }] });
    expect(bad.error.code).toBe("invalid_input");
    expect(bad.error.message).toContain("titel");
    type Op = { data: { comment: { id: string }; idempotent_replay?: boolean } };
    const comments = () => count("SELECT COUNT(*) AS n FROM comments WHERE tenant_id = ?", ctx.tenantId);
    const same = { op: "comment_add", params: { object_type: "project", object_id: "CTR", body: "same" } };
    // Without keys the second op is the same call as the first (its key is derived from its content): a replay.
    const twice = await run(ctx, "execute", { operations: [same, same] });
    expect(twice.results.map((r: Op) => r.data.idempotent_replay)).toEqual([undefined, true]);
    expect(new Set(twice.results.map((r: Op) => r.data.comment.id)).size).toBe(1);
    expect(await comments()).toBe(1);
    // A retried batch replays whole: the first batch's answer, flagged on the batch.
    const again = await run(ctx, "execute", { operations: [same, same] });
    expect(again.idempotent_replay).toBe(true);
    expect(again.results).toEqual(twice.results);
    expect(await comments()).toBe(1);
    // Two identical writes meant as two carry distinct keys: two writes, and a retry replays each.
    const keyed = [
      { op: "comment_add", params: { ...same.params, idempotency_key: "twin-1" } },
      { op: "comment_add", params: { ...same.params, idempotency_key: "twin-2" } },
    ];
    const distinct = await run(ctx, "execute", { operations: keyed });
    expect(distinct.results.map((r: Op) => r.data.idempotent_replay)).toEqual([undefined, undefined]);
    expect(new Set(distinct.results.map((r: Op) => r.data.comment.id)).size).toBe(2);
    expect(await comments()).toBe(3);
    const keyedAgain = await run(ctx, "execute", { operations: keyed });
    expect(keyedAgain.idempotent_replay).toBe(true);
    expect(keyedAgain.results).toEqual(distinct.results);
    expect(await comments()).toBe(3);
    // The ops' own keys hold beyond the batch: the same keyed ops in a different batch replay each.
    const reordered = await run(ctx, "execute", { operations: [keyed[1], keyed[0]] });
    expect(reordered.idempotent_replay).toBeUndefined();
    expect(reordered.results.map((r: Op) => r.data.idempotent_replay)).toEqual([true, true]);
    expect(await comments()).toBe(3);
  });
});

describe("over HTTP", () => {
  it("serves ?mode=compact with the SDK client, and refuses an unknown mode", async () => {
    const id = await seedIdentity(`compact-http-${crypto.randomUUID().slice(0, 8)}`, "agent");
    const { client, transport } = await connectClient(id.key, "/mcp?mode=compact&toolsets=all");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["query", "execute", "session"]);
    const who = await client.callTool({ name: "execute", arguments: { operations: [{ op: "whoami" }] } });
    expect(who.structuredContent as Structured).toMatchObject({ ok: true, succeeded: 1 });
    expect((await client.callTool({ name: "query", arguments: { steps: [{ op: "project_query" }] } })).isError).toBeFalsy();
    await transport.terminateSession();
    await client.close();
    await expect(connectClient(id.key, "/mcp?mode=tiny")).rejects.toThrow(/Unknown mode/);
  });
});
