import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ingestDocument } from "../../src/docs/store/ingest";
import { MAX_PROMPT_DOCUMENT_BYTES, promptNameOf } from "../../src/docs/prompts/prompts";
import { deleteDocument } from "../../src/docs/store/store";
import type { Ctx } from "../../src/core/context";
import { WORKFLOW_PROMPTS } from "../../src/server/prompts";
import { connectClient, makeCtx, seedIdentity, workerFetch } from "../support/helpers";

// The workflow prompts (src/server/prompts.ts) come first, then the document store's built-ins.
const BUILTINS = [...WORKFLOW_PROMPTS.map((p) => p.name), "search_codebase", "summarize_document", "research_docs"];

async function tenant(surface = "/mcp"): Promise<{ ctx: Ctx; client: Client; key: string }> {
  const id = await seedIdentity(`dprompt-${crypto.randomUUID().slice(0, 8)}`, "agent");
  const { client } = await connectClient(id.key, surface);
  return { ctx: makeCtx(id), client, key: id.key };
}

const put = (ctx: Ctx, path: string, body: string | Uint8Array, metadata?: Record<string, unknown>) =>
  ingestDocument(ctx, { path, bytes: typeof body === "string" ? new TextEncoder().encode(body) : body, mimeType: "text/markdown", ...(metadata ? { metadata } : {}) });

async function rpcError(p: Promise<unknown>): Promise<McpError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, "expected a JSON-RPC error").toBeInstanceOf(McpError);
  return err as McpError;
}

const names = async (client: Client) => (await client.listPrompts()).prompts.map((p) => p.name);

describe("prompt names", () => {
  it("strip PROMPT- and .md and turn dashes into underscores", () => {
    expect(promptNameOf("PROMPT-research-mcp.md")).toBe("research_mcp");
    expect(promptNameOf("PROMPT-x.md")).toBe("x");
    expect(promptNameOf("PROMPT-.md")).toBeNull();
    expect(promptNameOf("prompt-x.md")).toBeNull();
    expect(promptNameOf("PROMPT-x.txt")).toBeNull();
    expect(promptNameOf("NOTPROMPT-x.md")).toBeNull();
  });
});

describe("prompts/list", () => {
  it("advertises prompts and lists the built-ins with their arguments", async () => {
    const { client } = await tenant();
    expect(client.getServerCapabilities()?.prompts).toBeDefined();
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(BUILTINS);
    expect(prompts.find((p) => p.name === "search_codebase")).toMatchObject({
      name: "search_codebase",
      arguments: [
        { name: "pattern", required: true },
        { name: "file_type", required: false },
      ],
    });
    for (const p of prompts) {
      expect(p.description).toBeTruthy();
      for (const a of p.arguments ?? []) expect(a.description).toBeTruthy();
    }
  });

  it("lists PROMPT-*.md documents from any folder, with their path in the description", async () => {
    const { ctx, client } = await tenant();
    await put(ctx, "PROMPT-research-mcp.md", "# Research workflow for MCP\n\nSteps…");
    await put(ctx, "team/playbooks/PROMPT-review-checklist.md", "Check everything.", { description: "Review checklist for pull requests" });
    await put(ctx, "notes/not-a-prompt.md", "plain");
    await put(ctx, "notes/PROMPT-upper.MD", "wrong extension case");
    await put(ctx, "notes/prompt-lower.md", "wrong prefix case");
    const { prompts } = await client.listPrompts();
    const files = prompts.filter((p) => !BUILTINS.includes(p.name));
    expect(files).toEqual([
      // Stored through ingestDocument, so its text is indexed and the first heading describes it.
      { name: "research_mcp", description: "Research workflow for MCP (from PROMPT-research-mcp.md)" },
      { name: "review_checklist", description: "Review checklist for pull requests (from team/playbooks/PROMPT-review-checklist.md)" },
    ]);
  });

  it("describes a prompt document by its first heading once its text is indexed", async () => {
    const { ctx, client } = await tenant();
    const doc = await put(ctx, "PROMPT-research-mcp.md", "intro line\n## Research workflow for MCP ##\nbody");
    // What the text indexer writes for a markdown document.
    await env.DB.prepare(`INSERT OR REPLACE INTO doc_texts (tenant_id, hash, status, extractor, text, text_bytes, created_at) VALUES (?, ?, 'text', 'utf8', ?, 10, ?)`)
      .bind(ctx.tenantId, doc.hash, "intro line\n## Research workflow for MCP ##\nbody", "2026-06-01T12:00:00.000Z")
      .run();
    const p = (await client.listPrompts()).prompts.find((x) => x.name === "research_mcp");
    expect(p?.description).toBe("Research workflow for MCP (from PROMPT-research-mcp.md)");
  });

  it("settles a name two folders share: nearest the root wins, then the smaller path; deleting the winner promotes the next", async () => {
    const { ctx, client } = await tenant();
    await put(ctx, "b/deep/PROMPT-triage.md", "deep b");
    await put(ctx, "a/deep/PROMPT-triage.md", "deep a");
    await put(ctx, "z/PROMPT-triage.md", "shallow z");
    await put(ctx, "y/PROMPT_x/PROMPT-tri-age.md", "deep, dashes");
    const winner = async () => (await client.getPrompt({ name: "triage" })).messages[0]!.content;
    expect((await names(client)).filter((n) => n === "triage" || n === "tri_age")).toEqual(["tri_age", "triage"]);
    expect(await winner()).toEqual({ type: "text", text: "shallow z" });

    await put(ctx, "PROMPT-triage.md", "root");
    expect(await winner()).toEqual({ type: "text", text: "root" });
    await deleteDocument(ctx, { path: "PROMPT-triage.md" });
    await deleteDocument(ctx, { path: "z/PROMPT-triage.md" });
    expect(await winner()).toEqual({ type: "text", text: "deep a" });
    expect((await names(client)).filter((n) => n === "triage")).toHaveLength(1);
  });

  it("lets a prompt document replace a built-in of the same name", async () => {
    const { ctx, client } = await tenant();
    await put(ctx, "prompts/PROMPT-search-codebase.md", "Our own search recipe.");
    const listed = (await client.listPrompts()).prompts.filter((p) => p.name === "search_codebase");
    expect(listed).toEqual([{ name: "search_codebase", description: "search codebase (from prompts/PROMPT-search-codebase.md)" }]);
    const got = await client.getPrompt({ name: "search_codebase" });
    expect(got.messages).toEqual([{ role: "assistant", content: { type: "text", text: "Our own search recipe." } }]);
  });

  it("is the same on every surface, tools or not", async () => {
    const { ctx, key } = await tenant();
    await put(ctx, "PROMPT-everywhere.md", "hi");
    for (const surface of ["/mcp?toolsets=all", "/mcp?readonly=1", "/mcp?toolsets=changes"]) {
      const { client } = await connectClient(key, surface);
      expect(await names(client), surface).toEqual([...BUILTINS, "everywhere"]);
    }
  });
});

describe("prompts/get", () => {
  it("returns a prompt document's whole markdown as one assistant message", async () => {
    const { ctx, client } = await tenant();
    const markdown = '# Research workflow for MCP\n\n1. Search.\n2. Read — ünïcödé kept.\n\n```json\n{"a": 1}\n```\n';
    await put(ctx, "deep/er/PROMPT-research-mcp.md", markdown);
    const got = await client.getPrompt({ name: "research_mcp" });
    expect(got).toEqual({
      description: "Research workflow for MCP (from deep/er/PROMPT-research-mcp.md)",
      messages: [{ role: "assistant", content: { type: "text", text: markdown } }],
    });
  });

  it("serves the current version of a re-added prompt document and forgets a deleted one", async () => {
    const { ctx, client } = await tenant();
    await put(ctx, "PROMPT-plan.md", "v1");
    await put(ctx, "PROMPT-plan.md", "v2");
    expect((await client.getPrompt({ name: "plan" })).messages[0]!.content).toEqual({ type: "text", text: "v2" });
    await deleteDocument(ctx, { path: "PROMPT-plan.md" });
    expect(await names(client)).toEqual(BUILTINS);
    const err = await rpcError(client.getPrompt({ name: "plan" }));
    expect(err.code).toBe(ErrorCode.InvalidParams);
    expect(err.message).toContain("Unknown prompt 'plan'");
  });

  it("refuses a prompt document over 256 KiB, and one that is not UTF-8", async () => {
    const { ctx, client } = await tenant();
    await put(ctx, "PROMPT-huge.md", "x".repeat(MAX_PROMPT_DOCUMENT_BYTES + 1));
    await put(ctx, "PROMPT-edge.md", "y".repeat(MAX_PROMPT_DOCUMENT_BYTES));
    await put(ctx, "PROMPT-binary.md", new Uint8Array([0x23, 0x20, 0xff, 0xfe, 0x00]));
    const huge = await rpcError(client.getPrompt({ name: "huge" }));
    expect(huge.code).toBe(ErrorCode.InvalidParams);
    expect(huge.message).toContain("256 KiB");
    expect(huge.message.length).toBeLessThan(600);
    const edge = await client.getPrompt({ name: "edge" });
    expect((edge.messages[0]!.content as { text: string }).text).toHaveLength(MAX_PROMPT_DOCUMENT_BYTES);
    const binary = await rpcError(client.getPrompt({ name: "binary" }));
    expect(binary.message).toContain("not UTF-8");
  });

  it("refuses arguments to a prompt document", async () => {
    const { ctx, client } = await tenant();
    await put(ctx, "PROMPT-plain.md", "text");
    const err = await rpcError(client.getPrompt({ name: "plain", arguments: { topic: "x" } }));
    expect(err.code).toBe(ErrorCode.InvalidParams);
    expect(err.message).toContain("takes no arguments");
  });

  it("fills the built-ins' arguments in, escaped, and points at the docs tools", async () => {
    const { client } = await tenant();
    const search = await client.getPrompt({ name: "search_codebase", arguments: { pattern: 'class\\s+"Handler"', file_type: "ts" } });
    expect(search.messages).toHaveLength(1);
    const text = (search.messages[0]!.content as { text: string }).text;
    expect(search.messages[0]!.role).toBe("user");
    expect(text).toContain("docs_query");
    expect(text).toContain(JSON.stringify('class\\s+"Handler"'));
    expect(text).toContain('"extension":".ts"');

    const plain = (await client.getPrompt({ name: "search_codebase", arguments: { pattern: "TODO" } })).messages[0]!.content as { text: string };
    expect(plain.text).not.toContain("extension");

    const byHash = (await client.getPrompt({ name: "summarize_document", arguments: { hash: "a".repeat(64), max_words: "50" } })).messages[0]!.content as { text: string };
    expect(byHash.text).toContain(`"hash":"${"a".repeat(64)}"`);
    expect(byHash.text).toContain("at most 50 words");
    const byName = (await client.getPrompt({ name: "summarize_document", arguments: { name: "notes/a.md" } })).messages[0]!.content as { text: string };
    expect(byName.text).toContain('"name":"notes/a.md"');
    expect(byName.text).toContain("at most 200 words");

    const research = (await client.getPrompt({ name: "research_docs", arguments: { topic: "rate limits" } })).messages[0]!.content as { text: string };
    expect(research.text).toContain("docs_session");
    expect(research.text).toContain('"query":"rate limits"');
  });

  it("refuses missing, unknown and over-long arguments of the built-ins", async () => {
    const { client } = await tenant();
    const cases: Array<[string, Record<string, string>, string]> = [
      ["search_codebase", {}, "needs the argument 'pattern'"],
      ["search_codebase", { pattern: "  " }, "needs the argument 'pattern'"],
      ["search_codebase", { pattern: "x", colour: "red" }, "has no argument 'colour'"],
      ["search_codebase", { pattern: "x".repeat(1001) }, "the limit is 1000"],
      ["summarize_document", {}, "needs the argument 'hash' or 'name'"],
      ["summarize_document", { name: "a.md", max_words: "lots" }, "max_words must be a whole number"],
      ["research_docs", {}, "needs the argument 'topic'"],
    ];
    for (const [name, args, message] of cases) {
      const err = await rpcError(client.getPrompt({ name, arguments: args }));
      expect(err.code, name).toBe(ErrorCode.InvalidParams);
      expect(err.message, JSON.stringify(args)).toContain(message);
    }
  });

  it("answers an unknown name with a clear JSON-RPC error", async () => {
    const { key } = await tenant();
    const res = await workerFetch("http://ledger.test/mcp", {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "prompts/get", params: { name: "no_such_prompt" } }),
    });
    const body = (await res.json()) as { id: number; error: { code: number; message: string } };
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain("Unknown prompt 'no_such_prompt'");
    expect(body.error.message).toContain("prompts/list");
  });
});

describe("prompt isolation", () => {
  it("another tenant neither lists nor gets the caller's prompt documents", async () => {
    const one = await tenant();
    const two = await tenant();
    await put(one.ctx, "PROMPT-secret-plan.md", "the plan");
    expect(await names(one.client)).toContain("secret_plan");
    expect(await names(two.client)).toEqual(BUILTINS);
    const err = await rpcError(two.client.getPrompt({ name: "secret_plan" }));
    expect(err.message).toContain("Unknown prompt");
  });
});
