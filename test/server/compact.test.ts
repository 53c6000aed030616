/**
 * Compact mode: three tools over the whole registry on the pipeline engine, every op through the
 * registry's own code, and a tools/list small enough to cost an agent under 1,000 tokens.
 */
import { describe, expect, it } from "vitest";
import { encode } from "gpt-tokenizer/encoding/cl100k_base";
import { DOC_OPS } from "../../src/docs/composite/surface";
import { compactSurface } from "../../src/server/compact";
import { ALL_TOOLS } from "../../src/server/registry";
import { callTool } from "../../src/core/call";
import { toolListing } from "../../src/core/listing";
import { connectClient, count, makeCtx, seedIdentity, type Structured, TestClock } from "../support/helpers";

const ALL = { toolsets: ["all"], readonly: false };
const tokens = (value: unknown) => encode(JSON.stringify(value)).length;

async function compactCtx(prefix: string) {
  const id = await seedIdentity(`${prefix}-${crypto.randomUUID().slice(0, 8)}`, "agent");
  return { id, ctx: makeCtx(id, new TestClock(), `compact-${crypto.randomUUID()}`) };
}

type CompactTool = "query" | "execute" | "session";

async function run(ctx: Parameters<typeof callTool>[1], tool: CompactTool, args: unknown, surface = ALL): Promise<Structured & { isError: boolean }> {
  const def = compactSurface(surface).tools.find((t) => t.name === tool)!;
  const r = await callTool(def, ctx, args);
  return { ...(r.structuredContent as Structured), isError: r.isError === true };
}

describe("compact mode's listing", () => {
  it("lists its tools in at most 1,000 tokens (cl100k), for the default surface and for every toolset; session only with the document store's actions", () => {
    for (const [surface, names] of [
      // mcp.echo is on every surface (seed 003: "always registered").
      [{ toolsets: [], readonly: false }, ["query", "execute", "mcp.echo"]],
      [ALL, ["query", "execute", "session", "mcp.echo"]],
      [{ toolsets: ["docs"], readonly: false }, ["query", "execute", "session", "mcp.echo"]],
      [{ toolsets: ["all"], readonly: true }, ["query", "mcp.echo"]],
    ] as const) {
      const listing = compactSurface(surface).tools.map(toolListing);
      expect(
        listing.map((t) => t.name),
        JSON.stringify(surface),
      ).toEqual(names);
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
    // mcp.echo stays a tool on every surface, compact mode included.
    for (const def of ALL_TOOLS.filter((t) => !["docs_query", "docs_execute", "docs_session"].includes(t.name) && !t.everywhere)) {
      // toolset.name: the name no other op shares (bare `search` is three ops here).
      const qualified = `${def.toolset}.${def.name}`;
      expect(pipeline.find(qualified)?.kind, def.name).toBe(def.annotations.readOnly || def.queryable ? "query" : "execute");
      const d = await run(ctx, "query", { steps: [{ op: "describe", params: { target: qualified } }] });
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
    // A tool of another toolset is refused with the way to reach it, not as an unknown name.
    expect(() => narrow.find("task_create")).toThrow(/not on this surface: it is task_create in the tasks toolset/);
    expect(narrow.find("no_such_op")).toBeUndefined();
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
        { op: "search.search", params: { q: "compact", object_types: ["task"] } },
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
    // mcp.echo is on every surface (seed 003: "always registered").
    expect(tools.map((t) => t.name)).toEqual(["query", "execute", "session", "mcp.echo"]);
    const who = await client.callTool({ name: "execute", arguments: { operations: [{ op: "whoami" }] } });
    expect(who.structuredContent as Structured).toMatchObject({ ok: true, succeeded: 1 });
    expect((await client.callTool({ name: "query", arguments: { steps: [{ op: "project_query" }] } })).isError).toBeFalsy();
    await transport.terminateSession();
    await client.close();
    await expect(connectClient(id.key, "/mcp?mode=tiny")).rejects.toThrow(/Unknown mode/);
  });
});

// docs/protocol.md's compact examples run as written against wrangler dev, on /mcp?mode=compact and with every
// toolset, in test/e2e/doc-examples.e2e.test.ts (the one extractor of documented examples).
describe("compact mode's two call forms", () => {
  it("whoami answers through query (one op or a step) and still through execute; describe lists it as a read", async () => {
    const { ctx, id } = await compactCtx("compact-whoami");
    const one = await run(ctx, "query", { op: "whoami" });
    expect(one.ok).toBe(true);
    expect(one.actor.id).toBe(id.actorId);
    const steps = await run(ctx, "query", { steps: [{ op: "whoami" }, { op: "task_query", params: { assignee_actor_id: "$prev.actor.id" } }] });
    expect(steps, JSON.stringify(steps.steps)).toMatchObject({ ok: true, completedSteps: 2 });
    expect(await run(ctx, "execute", { operations: [{ op: "whoami" }] })).toMatchObject({ ok: true, succeeded: 1 });
    const listed = await run(ctx, "query", { op: "describe" });
    expect(listed.toolsets.identity.find((o: { op: string }) => o.op === "whoami").kind).toBe("query");
  });

  it("refuses a call with both forms or neither, naming both", async () => {
    const { ctx } = await compactCtx("compact-forms");
    const both = await run(ctx, "query", { op: "whoami", steps: [{ op: "whoami" }] });
    expect(both.error).toMatchObject({ code: "invalid_input", message: "Pass 'steps' or 'op' with 'params', not both." });
    const neither = await run(ctx, "execute", {});
    expect(neither.error.message).toBe("Pass 'operations' or 'op'.");
    expect(neither.error.hint).toContain('{"op": "describe"}');
  });

  it("session names its actions when one is unknown, and is not listed where there are none", async () => {
    const { ctx } = await compactCtx("compact-session");
    const bad = await run(ctx, "session", { action: "nope" });
    expect(bad.error.message).toMatch(/^Unknown session action 'nope'\. Valid actions: start, /);
    expect(compactSurface({ toolsets: ["tasks"], readonly: false }).tools.map((t) => t.name)).not.toContain("session");
  });
});

describe("op names several toolsets share", () => {
  const DOCS = { toolsets: ["docs"], readonly: false };
  const DEFAULT = { toolsets: [], readonly: false };

  it("refuses a shared name where several ops have it, naming each, and each name the hint gives works", async () => {
    const { ctx } = await compactCtx("compact-ambiguous");
    await run(ctx, "execute", { op: "docs_add", params: { name: "notes/shared.md", content: "# Shared\nambiguous words" } });
    const r = await run(ctx, "query", { op: "search", params: { query: "ambiguous" } });
    expect(r.error.code).toBe("invalid_input");
    expect(r.error.message).toMatch(/^'search' names 3 ops here: search\.search \(search: .*; change_search \(changes: .*; docs_search \(docs: /);
    expect(r.error.hint).toBe('Name the one you mean: "search.search" or "change_search" or "docs_search".');
    // Refused before anything runs, in a pipeline as well.
    const piped = await run(ctx, "query", { steps: [{ op: "whoami" }, { op: "search", params: { q: "x" } }] });
    expect(piped.error.message).toMatch(/^'search' names 3 ops/);
    const docs = await run(ctx, "query", { op: "docs_search", params: { query: "ambiguous", type: "keyword" } });
    expect(docs.results[0].path).toBe("notes/shared.md");
    expect((await run(ctx, "query", { op: "search.search", params: { q: "ambiguous" } })).ok).toBe(true);
    expect((await run(ctx, "query", { op: "change_search", params: { query: "ambiguous" } })).ok).toBe(true);
    // The default surface has the ledger's search and seed 000's: refused too, never one silently.
    const dflt = await run(ctx, "query", { op: "search", params: { q: "x" } }, DEFAULT);
    expect(dflt.error.hint).toBe('Name the one you mean: "search.search" or "change_search".');
  });

  it("runs a seed's name where only one op has it: docs get, add and search on the docs surface, the ledger's search on its own", async () => {
    const { ctx } = await compactCtx("compact-seed-names");
    const added = await run(ctx, "execute", { operations: [{ op: "add", params: { name: "notes/seed.md", content: "# Seed\nthe seed's names" } }] }, DOCS);
    expect(added).toMatchObject({ ok: true, succeeded: 1 });
    expect(added.results[0].op).toBe("docs_add");
    const got = await run(ctx, "query", { op: "get", params: { name: "notes/seed.md", include_content: true } }, DOCS);
    expect(got.content).toContain("the seed's names");
    const found = await run(ctx, "query", { op: "search", params: { query: "seed", type: "keyword" } }, DOCS);
    expect(found.results[0].path).toBe("notes/seed.md");
    expect((await run(ctx, "query", { op: "docs.get", params: { name: "notes/seed.md" } }, DOCS)).ok).toBe(true);
    const described = await run(ctx, "query", { op: "describe", params: { target: "get" } }, DOCS);
    expect(described.op).toBe("docs_get");
    const ledger = await run(ctx, "query", { op: "search", params: { q: "seed" } }, { toolsets: ["search"], readonly: false });
    expect(ledger.ok).toBe(true);
    expect(ledger.items).toEqual([]);
  });

  it("get and add where the caller meant the document store: which tool and op to use, never 'not a read operation'", async () => {
    const { ctx } = await compactCtx("compact-docs-intent");
    const addViaQuery = await run(ctx, "query", { op: "add", params: { name: "a.md", content: "x" } }, DOCS);
    expect(addViaQuery.error.message).toMatch(/^'add' here is docs_add \(docs: .*\), which the execute tool runs\.$/);
    expect(addViaQuery.error.hint).toBe('Call execute with {"op": "docs_add", "params": {…}}.');
    expect(await count("SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ?", ctx.tenantId)).toBe(0);
    const getViaExecute = await run(ctx, "execute", { op: "get", params: { name: "a.md" } }, DOCS);
    expect(getViaExecute.error.message).toMatch(/^'get' here is docs_get \(docs: .*\), which the query tool runs\.$/);
    // Without the document store: where it is.
    const elsewhere = await run(ctx, "query", { op: "get", params: { name: "a.md" } }, DEFAULT);
    expect(elsewhere.error.message).toBe("'get' is not on this surface: it is docs_get in the docs toolset.");
    expect(elsewhere.error.hint).toBe('Connect with ?mode=compact&toolsets=docs (or toolsets=all), then call query with {"op": "docs_get", "params": {…}}.');
    for (const r of [addViaQuery, getViaExecute, elsewhere]) expect(r.error.message).not.toMatch(/not a (read|write) operation/);
  });
});
