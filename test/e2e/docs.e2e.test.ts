/**
 * The document store end to end: the MCP SDK client drives `wrangler dev` over HTTP on
 * ?toolsets=docs (local D1, R2 and Durable Objects, the local embedder).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

type S = Record<string, any>;
const structured = (r: Awaited<ReturnType<Client["callTool"]>>) => r.structuredContent as S;

async function connect(key: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${inject("baseUrl")}/mcp?toolsets=docs`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new Client({ name: "e2e-docs", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

describe("document store over HTTP (wrangler dev)", () => {
  let a: Client;
  let b: Client;
  const run = Date.now().toString(36);

  beforeAll(async () => {
    a = await connect(inject("keyA"));
    b = await connect(inject("keyB"));
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it("lists the composite tools under the seed's names with the seed's annotations", async () => {
    const { tools } = await a.listTools();
    // On the document store alone, the seed's own surface: docs_query and the rest still answer by those names.
    expect(tools.map((t) => t.name).sort()).toEqual(["execute", "mcp.echo", "query", "session"]);
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get("query")?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    expect(byName.get("execute")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(byName.has("mcp.echo")).toBe(true);
    expect(structured(await a.callTool({ name: "mcp.echo", arguments: { message: "ping" } })).message).toBe("ping");
  });

  it("stores, deduplicates and reads back through a $prev pipeline", async () => {
    const body = `# Runbook ${run}\n\nRestart the queue consumer, then drain the dead-letter queue.\n`.repeat(40);
    const first = structured(await a.callTool({ name: "docs_execute", arguments: { operations: [{ op: "add", params: { name: `e2e/${run}/runbook.md`, content: body, tags: ["ops"] } }] } }));
    expect(first).toMatchObject({ ok: true, succeeded: 1, failed: 0 });
    const stored = first.results[0].data;
    expect(stored.bytes_deduped).toBe(0);
    const copy = structured(await a.callTool({ name: "docs_execute", arguments: { operations: [{ op: "add", params: { name: `e2e/${run}/copy.md`, content: body } }] } }));
    expect(copy.results[0].data).toMatchObject({ hash: stored.hash, bytes_stored: 0, bytes_deduped: stored.size });

    const piped = structured(
      await a.callTool({
        name: "docs_query",
        arguments: {
          steps: [
            { op: "list", params: { path_pattern: `e2e/${run}/**`, sort_by: "name", sort_order: "asc" } },
            { op: "get", params: { hash: "$prev.documents[1].hash", include_content: true } },
          ],
        },
      }),
    );
    expect(piped).toMatchObject({ ok: true, totalSteps: 2, completedSteps: 2 });
    expect(piped.steps[1].result).toMatchObject({ path: `e2e/${run}/copy.md`, content: body });

    // Another tenant's store is another store: nothing shows, nothing dedupes.
    const theirs = structured(await b.callTool({ name: "docs_query", arguments: { steps: [{ op: "get", params: { hash: stored.hash } }] } }));
    expect(theirs).toMatchObject({ ok: false, error: { code: "not_found" } });
  });

  it("stores a large document at once as pending, and wrangler dev's local queue indexes it", async () => {
    const body = `# Field guide ${run}\n\n${"The quoll hunts at night in the eucalypt forest.\n".repeat(1500)}Marker xylophone${run}.\n`;
    const added = structured(await a.callTool({ name: "docs_execute", arguments: { operations: [{ op: "add", params: { name: `e2e/${run}/guide.md`, content: body } }] } }));
    expect(added.results[0].data).toMatchObject({ index_status: "pending" });
    const get = async () => structured(await a.callTool({ name: "docs_query", arguments: { steps: [{ op: "get", params: { name: `e2e/${run}/guide.md`, include_content: false } }] } }));
    const deadline = Date.now() + 20_000;
    while ((await get()).index_status === "pending" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect((await get()).index_status).toBe("text");
    const found = structured(await a.callTool({ name: "docs_query", arguments: { steps: [{ op: "grep", params: { pattern: `xylophone${run}`, files_with_matches: true } }] } }));
    expect(found.files.map((f: S) => f.path)).toEqual([`e2e/${run}/guide.md`]);
  });

  it("restores a collection as a dry run: lists the paths it would write and writes nothing", async () => {
    const collection = `e2e-${run}`;
    await a.callTool({
      name: "docs_execute",
      arguments: {
        operations: [
          { op: "add", params: { name: `restore/${run}/a.md`, content: "# A", collection } },
          { op: "add", params: { name: `restore/${run}/b.txt`, content: "B", collection } },
        ],
      },
    });
    const before = structured(await a.callTool({ name: "docs_query", arguments: { steps: [{ op: "status" }] } }));
    const dry = structured(
      await a.callTool({ name: "docs_execute", arguments: { operations: [{ op: "restore", params: { collection, output_directory: "out", dry_run: true, include_patterns: ["**/*.md"] } }] } }),
    );
    expect(dry).toMatchObject({ ok: true, succeeded: 1 });
    expect(dry.results[0].data).toMatchObject({ dry_run: true, total_files: 1 });
    expect(dry.results[0].data.files[0].path).toBe(`out/restore/${run}/a.md`);
    expect(dry.results[0].data.files[0]).not.toHaveProperty("content");
    const after = structured(await a.callTool({ name: "docs_query", arguments: { steps: [{ op: "status" }] } }));
    expect(after.total_objects).toBe(before.total_objects);
  });

  it("serves a PROMPT-*.md document as an MCP prompt", async () => {
    const markdown = `# Release checklist ${run}\n\n1. Tag.\n2. Publish.\n`;
    await a.callTool({ name: "docs_execute", arguments: { operations: [{ op: "add", params: { name: `playbooks/${run}/PROMPT-release-${run}.md`, content: markdown } }] } });
    const { prompts } = await a.listPrompts();
    const mine = prompts.find((p) => p.name === `release_${run}`);
    expect(mine?.description).toContain(`PROMPT-release-${run}.md`);
    const got = await a.getPrompt({ name: `release_${run}` });
    expect(got.messages).toEqual([{ role: "assistant", content: { type: "text", text: markdown } }]);
    // Another tenant has its own prompts.
    expect((await b.listPrompts()).prompts.some((p) => p.name === `release_${run}`)).toBe(false);
  });

  it("refuses a write op in the read pipeline with the seed's text", async () => {
    const r = await a.callTool({ name: "docs_query", arguments: { steps: [{ op: "delete", params: { name: "x" } }] } });
    expect(r.isError).toBe(true);
    expect(structured(r).error.message).toMatch(/^'delete' is not a read operation\. Use the 'docs_execute' tool for write operations/);
  });
});
