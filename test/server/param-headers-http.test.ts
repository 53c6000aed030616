/**
 * Mcp-Param-* headers on 2026-07-28 over HTTP: a write's project is declared in the listing, a call
 * whose header disagrees with its body (or is missing) is refused with 400 and -32020 before anything
 * runs, the SDK's own client mirrors the value and is served, and 2025 sessions are not asked for it.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { connectClient, seedIdentity, workerFetch } from "../support/helpers";
import { MODERN, modernRequest } from "../support/modern";

const PATH = "/mcp?toolsets=tasks,projects";

async function setUp(tenant: string) {
  const me = await seedIdentity(tenant, "agent");
  const { client } = await connectClient(me.key, PATH);
  const made = await client.callTool({ name: "project_create", arguments: { title: "Headers", key: "HDR" } });
  expect(made.structuredContent, JSON.stringify(made.structuredContent)).toMatchObject({ ok: true });
  await client.close();
  return me;
}

const tasksIn = async (tenant: string) => (await env.DB.prepare(`SELECT COUNT(*) AS n FROM tasks t JOIN tenants te ON te.id = t.tenant_id WHERE te.slug = ?`).bind(tenant).first<{ n: number }>())!.n;

async function createTask(key: string, args: Record<string, unknown>, headers: Record<string, string>) {
  const res = await workerFetch(`http://ledger.test${PATH}`, modernRequest(key, "tools/call", { name: "task_create", arguments: args }, { id: 7, name: "task_create", headers, capabilities: {} }));
  return { status: res.status, body: (await res.json()) as { id?: unknown; result?: { isError?: boolean; structuredContent?: { ok: boolean } }; error?: { code: number; message: string } } };
}

describe("Mcp-Param-* headers on 2026-07-28", () => {
  it("lists a write's project as a header and a read's project filter as a plain parameter", async () => {
    const me = await seedIdentity("hdr-list", "agent");
    const { client } = await connectClient(me.key, PATH);
    const tools = (await client.listTools()).tools;
    const schemaOf = (name: string) => tools.find((t) => t.name === name)!.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(schemaOf("task_create").project_id!["x-mcp-header"]).toBe("Project");
    expect(schemaOf("task_claim").project_id!["x-mcp-header"]).toBe("Project");
    expect(schemaOf("task_query").project_id!["x-mcp-header"]).toBeUndefined();
    await client.close();
  });

  it("serves a call whose header matches, plain or Base64", async () => {
    const me = await setUp("hdr-ok");
    const plain = await createTask(me.key, { project_id: "HDR", title: "Plain" }, { "Mcp-Param-Project": "HDR" });
    expect(plain.status).toBe(200);
    expect(plain.body.result?.structuredContent?.ok).toBe(true);
    const wrapped = await createTask(me.key, { project_id: "HDR", title: "Wrapped" }, { "mcp-param-project": `=?base64?${btoa("HDR")}?=` });
    expect(wrapped.body.result?.structuredContent?.ok).toBe(true);
    expect(await tasksIn("hdr-ok")).toBe(2);
  });

  it.each([
    ["a header that names another project", "hdr-other", { "Mcp-Param-Project": "OTHER" }, /does not match the body's project_id/],
    ["no header for the project the body names", "hdr-missing", {}, /Mcp-Param-Project is missing/],
    ["a header with bad Base64", "hdr-base64", { "Mcp-Param-Project": "=?base64?SERS?=x?=" }, /malformed/],
  ])("refuses %s with 400 and -32020, creating nothing", async (_label, tenant, headers, message) => {
    const me = await setUp(tenant);
    const r = await createTask(me.key, { project_id: "HDR", title: "Refused" }, headers);
    expect(r.status).toBe(400);
    expect(r.body.id).toBe(7);
    expect(r.body.error?.code).toBe(-32020);
    expect(r.body.error?.message).toMatch(message);
    expect(await tasksIn(tenant)).toBe(0);
  });

  it("is what the SDK's own client sends: it mirrors the project it has listed, and lists and retries once when it had not", async () => {
    const me = await setUp("hdr-sdk");
    const sent: Array<string | null> = [];
    const transport = new StreamableHTTPClientTransport(new URL(`http://ledger.test${PATH}`), {
      requestInit: { headers: { Authorization: `Bearer ${me.key}` } },
      fetch: (input, init) => {
        const request = new Request(input, init);
        if (request.headers.get("Mcp-Name") === "task_create") sent.push(request.headers.get("Mcp-Param-Project"));
        return workerFetch(request);
      },
    });
    const client = new Client({ name: "vitest-modern", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    await client.connect(transport);
    const first = await client.callTool({ name: "task_create", arguments: { project_id: "HDR", title: "Before listing" } });
    expect((first.structuredContent as { ok: boolean }).ok).toBe(true);
    expect(sent).toEqual([null, "HDR"]);
    const second = await client.callTool({ name: "task_create", arguments: { project_id: "HDR", title: "After listing" } });
    expect((second.structuredContent as { ok: boolean }).ok).toBe(true);
    expect(sent).toEqual([null, "HDR", "HDR"]);
    expect(await tasksIn("hdr-sdk")).toBe(2);
    await client.close();
  });

  it("does not ask a 2025 session for the header", async () => {
    const me = await setUp("hdr-legacy");
    const { client } = await connectClient(me.key, PATH);
    const result = await client.callTool({ name: "task_create", arguments: { project_id: "HDR", title: "Legacy" } });
    expect((result.structuredContent as { ok: boolean }).ok).toBe(true);
    await client.close();
  });
});
