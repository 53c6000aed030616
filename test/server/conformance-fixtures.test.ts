/**
 * The conformance fixtures (CONFORMANCE_FIXTURES, src/server/conformance): the refusal of a Worker
 * whose setting is on where it may not be, the fixtures absent by default, and, from loopback with
 * the setting "1", the suite's reference tools, prompts and resources on a 2025 session and on
 * 2026-07-28, with progress streamed and the real tools still served beside them.
 */
import { Client as SessionClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as SessionTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator as SessionValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { type ClientCapabilities, CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { connectClient, seedIdentity, tableRowCounts, type Structured } from "../support/helpers";
import { framesOf, MODERN, modernRequest } from "../support/modern";

const LOOPBACK = "127.0.0.1";

type Setting = string | undefined;

const contexts: ExecutionContext[] = [];
afterEach(async () => {
  for (const ctx of contexts.splice(0)) await waitOnExecutionContext(ctx);
});

/** The Worker's own fetch with CONFORMANCE_FIXTURES set to `setting`, from `ip` (no header when null). */
async function fetchAs(setting: Setting, ip: string | null, input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  if (ip !== null) request.headers.set("CF-Connecting-IP", ip);
  const ctx = createExecutionContext();
  contexts.push(ctx);
  return worker.fetch(request, { ...env, CONFORMANCE_FIXTURES: setting }, ctx);
}

const fixtureFetch = (input: RequestInfo | URL, init?: RequestInit) => fetchAs("1", LOOPBACK, input, init);

async function sessionClient(key: string, capabilities: ClientCapabilities = {}, prepare: (client: SessionClient) => void = () => {}) {
  const transport = new SessionTransport(new URL("http://ledger.test/mcp"), { requestInit: { headers: { Authorization: `Bearer ${key}` } }, fetch: fixtureFetch });
  const client = new SessionClient({ name: "vitest", version: "1.0.0" }, { jsonSchemaValidator: new SessionValidator(), capabilities });
  prepare(client);
  await client.connect(transport);
  expect(transport.sessionId).toBeTruthy();
  expect(transport.protocolVersion).toMatch(/^2025-/);
  return { client, transport };
}

async function modernClient(key: string, fetch = fixtureFetch) {
  const transport = new StreamableHTTPClientTransport(new URL("http://ledger.test/mcp"), { requestInit: { headers: { Authorization: `Bearer ${key}` } }, fetch });
  const client = new Client({ name: "vitest-modern", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(transport);
  expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
  return client;
}

async function refusal(res: Response) {
  expect(res.status).toBe(503);
  const body = (await res.json()) as { error: { code: string; message: string; hint: string; retryable: boolean } };
  expect(body.error).toMatchObject({ code: "misconfigured", retryable: false });
  expect(body.error.message).toContain("CONFORMANCE_FIXTURES");
  expect(body.error.hint).toContain("CONFORMANCE_FIXTURES");
}

const initialize = (key: string): RequestInit => ({
  method: "POST",
  headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
});

describe("a Worker whose setting is on where it may not be", () => {
  it.each([
    ["from a public address", "203.0.113.9"],
    ["with no caller address", null],
  ])("refuses /healthz and /mcp with 503 misconfigured %s", async (_label, ip) => {
    const me = await seedIdentity("fixtures-refuse", "agent");
    await refusal(await fetchAs("1", ip, "http://ledger.test/healthz"));
    await refusal(await fetchAs("1", ip, "http://ledger.test/mcp", initialize(me.key)));
  });

  it("counts only a loopback address as this machine: IPv4, IPv6 and IPv4 mapped into IPv6", async () => {
    for (const ip of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"]) expect((await fetchAs("1", ip, "http://ledger.test/healthz")).status, ip).toBe(200);
    for (const ip of ["127.0.0.1.example.com", "::ffff:10.0.0.1", "1127.0.0.1", "localhost6"]) await refusal(await fetchAs("1", ip, "http://ledger.test/healthz"));
  });

  it("refuses a value other than 1 even from loopback", async () => {
    const me = await seedIdentity("fixtures-refuse", "agent");
    await refusal(await fetchAs("yes", LOOPBACK, "http://ledger.test/healthz"));
    await refusal(await fetchAs("yes", LOOPBACK, "http://ledger.test/mcp", initialize(me.key)));
  });

  it.each([
    ["unset", undefined],
    ["empty", ""],
    ["0", "0"],
  ])("answers as usual with the setting %s, from anywhere", async (_label, setting) => {
    for (const ip of ["203.0.113.9", LOOPBACK, null]) {
      const res = await fetchAs(setting, ip, "http://ledger.test/healthz");
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, service: "agent-ledger" });
    }
  });
});

describe("off by default", () => {
  it("a 2025 session sees no fixture tool, prompt or resource", async () => {
    const me = await seedIdentity("fixtures-off", "agent");
    const { client } = await connectClient(me.key);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("whoami");
    expect(names).not.toContain("test_simple_text");
    expect(names).not.toContain("json_schema_2020_12_tool");
    await expect(client.callTool({ name: "test_simple_text", arguments: {} })).rejects.toMatchObject({ code: -32602 });
    expect((await client.listPrompts()).prompts.map((p) => p.name)).not.toContain("test_simple_prompt");
    await expect(client.readResource({ uri: "test://static-text" })).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it("a loopback caller without the setting sees none either", async () => {
    const me = await seedIdentity("fixtures-off", "agent");
    const client = await modernClient(me.key, (input, init) => fetchAs(undefined, LOOPBACK, input, init));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("whoami");
    expect(names).not.toContain("test_simple_text");
    await expect(client.callTool({ name: "test_simple_text", arguments: {} })).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });
});

/** What both SDK clients offer that the fixture checks use. */
interface FixtureClient {
  listTools(): Promise<{ tools: { name: string; inputSchema: Structured }[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<Structured>;
  getPrompt(params: { name: string; arguments: Record<string, string> }): Promise<{ messages: { content: Structured }[] }>;
  readResource(params: { uri: string }): Promise<{ contents: Structured[] }>;
  close(): Promise<void>;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47];

describe.each([
  ["a 2025 session", async (key: string): Promise<FixtureClient> => (await sessionClient(key)).client],
  ["2026-07-28", async (key: string): Promise<FixtureClient> => modernClient(key)],
])("on, from loopback, over %s", (label, connect) => {
  const tenant = `fixtures-on-${label.replace(/\W+/g, "-")}`;

  it("lists the fixture tools beside the real ones, keeping the 2020-12 schema whole", async () => {
    const client = await connect((await seedIdentity(tenant, "agent")).key);
    const tools = (await client.listTools()).tools;
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["whoami", "test_simple_text", "test_image_content", "test_tool_with_progress", "json_schema_2020_12_tool"]));
    const schema = tools.find((t) => t.name === "json_schema_2020_12_tool")!.inputSchema;
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.$defs.address.$anchor).toBe("addressDef");
    expect(schema.properties.address.$ref).toBe("#/$defs/address");
    expect(schema.allOf).toEqual([{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }]);
    expect(schema.if).toEqual({ properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] });
    expect(schema.then).toEqual({ required: ["phone"] });
    expect(schema.else).toEqual({ required: ["email"] });
    expect(schema.additionalProperties).toBe(false);
    await client.close();
  });

  it("answers the content fixtures: text, a PNG image, an error", async () => {
    const client = await connect((await seedIdentity(tenant, "agent")).key);
    const simple = await client.callTool({ name: "test_simple_text", arguments: {} });
    expect(simple.isError).toBeFalsy();
    expect(simple.content).toEqual([{ type: "text", text: "This is a simple text response for testing." }]);
    const image = await client.callTool({ name: "test_image_content", arguments: {} });
    expect(image.content).toHaveLength(1);
    expect(image.content[0]).toMatchObject({ type: "image", mimeType: "image/png" });
    const bytes = Uint8Array.from(atob(image.content[0].data as string), (c) => c.charCodeAt(0));
    expect([...bytes.slice(0, 4)]).toEqual(PNG_SIGNATURE);
    const failed = await client.callTool({ name: "test_error_handling", arguments: {} });
    expect(failed.isError).toBe(true);
    expect(failed.content[0].text).toBe("This tool intentionally returns an error for testing");
    await client.close();
  });

  it("enforces the 2020-12 schema on calls, writing nothing", async () => {
    const client = await connect((await seedIdentity(tenant, "agent")).key);
    const good = await client.callTool({ name: "json_schema_2020_12_tool", arguments: { contactMethod: "phone", phone: "1" } });
    expect(good.isError).toBeFalsy();
    expect(good.content[0].text).toContain("JSON Schema 2020-12 tool called with");
    expect(good.content[0].text).toContain(`"phone":"1"`);
    const before = await tableRowCounts();
    for (const args of [
      { contactMethod: "phone", email: "a@b.c" },
      { name: "x", email: "a@b.c", extra: 1 },
    ]) {
      const bad = await client.callTool({ name: "json_schema_2020_12_tool", arguments: args });
      expect(bad.isError, JSON.stringify(args)).toBe(true);
      expect(bad.structuredContent.error).toMatchObject({ code: "invalid_input", retryable: false });
      expect(bad.structuredContent.error.hint).toContain("phone");
    }
    for (const ctx of contexts.splice(0)) await waitOnExecutionContext(ctx);
    expect(await tableRowCounts()).toEqual(before);
    await client.close();
  });

  it("serves the fixture prompts and resources", async () => {
    const client = await connect((await seedIdentity(tenant, "agent")).key);
    const prompt = await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "hello", arg2: "world" } });
    expect(prompt.messages.map((m) => m.content)).toEqual([{ type: "text", text: "Prompt with arguments: arg1='hello', arg2='world'" }]);
    const templated = await client.readResource({ uri: "test://template/123/data" });
    expect(templated.contents).toHaveLength(1);
    expect(templated.contents[0]).toMatchObject({ uri: "test://template/123/data", mimeType: "application/json" });
    expect(JSON.parse(templated.contents[0]!.text as string)).toMatchObject({ id: "123", templateTest: true });
    const text = await client.readResource({ uri: "test://static-text" });
    expect(text.contents[0]!.text).toBe("This is the content of the static text resource.");
    await client.close();
  });

  it("still serves the real tools beside the fixtures", async () => {
    const client = await connect((await seedIdentity(tenant, "fixture-agent")).key);
    const whoami = await client.callTool({ name: "whoami", arguments: {} });
    expect(whoami.isError).toBeFalsy();
    expect(whoami.structuredContent.actor.external_ref).toBe("fixture-agent");
    await client.close();
  });
});

describe("progress from a fixture tool", () => {
  it("streams three progress notifications on 2026-07-28, then the token as the result", async () => {
    const me = await seedIdentity("fixtures-progress", "agent");
    const res = await fixtureFetch(
      "http://ledger.test/mcp",
      modernRequest(me.key, "tools/call", { name: "test_tool_with_progress", arguments: {}, _meta: { progressToken: "p1" } }, { name: "test_tool_with_progress", capabilities: {} }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const frames = await framesOf(res);
    const progress = frames.filter((f) => f.method === "notifications/progress").map((f) => f.params!);
    expect(progress.map((p) => p.progress)).toEqual([0, 50, 100]);
    expect(progress.every((p) => p.progressToken === "p1" && p.total === 100)).toBe(true);
    expect(frames.at(-1)).toMatchObject({ id: 1, result: { content: [{ type: "text", text: "p1" }] } });
  });

  it("reports progress to a 2025 session that asked for it", async () => {
    const me = await seedIdentity("fixtures-progress", "agent");
    const { client } = await sessionClient(me.key);
    const seen: number[] = [];
    const result = await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, { onprogress: (p) => void seen.push(p.progress) });
    expect(seen).toEqual([0, 50, 100]);
    expect(result.content).toEqual([{ type: "text", text: expect.stringMatching(/^\d+$/) }]);
    await client.close();
  });
});

describe("fixtures that ask the client", () => {
  it("asks a 2025 session's client for a completion and a form on the call's stream, through the session", async () => {
    const me = await seedIdentity("fixtures-asks", "agent");
    const prompts: string[] = [];
    const forms: string[] = [];
    const { client } = await sessionClient(me.key, { sampling: {}, elicitation: { form: {} } }, (c) => {
      c.setRequestHandler(CreateMessageRequestSchema, async (request) => {
        prompts.push(JSON.stringify(request.params.messages[0]!.content));
        return { role: "assistant", model: "stand-in", content: { type: "text", text: "Paris" } };
      });
      c.setRequestHandler(ElicitRequestSchema, async (request) => {
        forms.push(request.params.message);
        return { action: "accept", content: { response: "yes please" } };
      });
    });
    const sampled = await client.callTool({ name: "test_sampling", arguments: { prompt: "Capital of France?" } });
    expect(sampled.content).toEqual([{ type: "text", text: "LLM response: Paris" }]);
    const elicited = await client.callTool({ name: "test_elicitation", arguments: { message: "Go ahead?" } });
    expect(elicited.content).toEqual([{ type: "text", text: 'User response: action=accept, content={"response":"yes please"}' }]);
    expect(prompts.map((p) => JSON.parse(p) as unknown)).toEqual([{ type: "text", text: "Capital of France?" }]);
    expect(forms).toEqual(["Go ahead?"]);
    await client.close();
  });

  it("says so, without asking, when the 2025 session's client declared neither capability", async () => {
    const me = await seedIdentity("fixtures-asks", "agent");
    const { client } = await sessionClient(me.key);
    const sampled = await client.callTool({ name: "test_sampling", arguments: { prompt: "Capital of France?" } });
    expect((sampled.content as Array<{ text: string }>)[0]!.text).toMatch(/^Sampling not supported or error: /);
    const elicited = await client.callTool({ name: "test_elicitation", arguments: { message: "Go ahead?" } });
    expect((elicited.content as Array<{ text: string }>)[0]!.text).toMatch(/^Elicitation not supported or error: /);
    await client.close();
  });

  it("runs a multi-round input_required on 2026-07-28 with state sealed by the server, and refuses tampered state", async () => {
    const me = await seedIdentity("fixtures-mrtr", "agent");
    const call = async (params: Record<string, unknown>) => {
      const name = "test_input_required_result_multi_round";
      const res = await fixtureFetch("http://ledger.test/mcp", modernRequest(me.key, "tools/call", { name, arguments: {}, ...params }, { name }));
      return (await res.json()) as { result?: Structured; error?: { code: number; message: string } };
    };
    const first = await call({});
    expect(first.result).toMatchObject({ resultType: "input_required", inputRequests: { step1: { method: "elicitation/create" } } });
    const state1 = first.result!.requestState as string;
    expect(state1).not.toContain("round");
    const second = await call({ requestState: state1, inputResponses: { step1: { action: "accept", content: { name: "Ada" } } } });
    expect(second.result).toMatchObject({ resultType: "input_required", inputRequests: { step2: { method: "elicitation/create" } } });
    const done = await call({ requestState: second.result!.requestState, inputResponses: { step2: { action: "accept", content: { color: "green" } } } });
    expect(done.result).toMatchObject({ content: [{ type: "text", text: "Multi-round complete for Ada who likes green" }] });
    const tampered = await call({ requestState: `${state1}x`, inputResponses: { step1: { action: "accept", content: { name: "Eve" } } } });
    expect(tampered.result).toBeUndefined();
    expect(tampered.error?.code).toBe(-32602);
  });
});
