/**
 * The conformance suite's content fixtures: tools answering each kind of content (text, image,
 * audio, embedded resource, a mix, an error, progress, log messages, a JSON Schema 2020-12 input),
 * its prompts and its resources. Each answers from its arguments alone.
 */
import { type CallToolResult, type GetPromptResult, type McpServer, type Prompt, ResourceTemplate, type ServerContext, type Tool } from "@modelcontextprotocol/server";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/server/validators/cf-worker";
import { failureResult } from "../../core/call";
import { invalidInput } from "../../core/errors";
import { type FixtureTool, NO_ARGS, text } from "./fixture";

/** A 1x1 PNG and a 1 ms WAV: the smallest valid media of each kind. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const WAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAoIBggKCAYA==";

const simple = (name: string, description: string, content: CallToolResult["content"]): FixtureTool => ({
  tool: { name, description, inputSchema: NO_ARGS },
  call: async () => ({ content }),
});

/** The schema the json-schema-2020-12 scenario looks for, kept whole in the listing and enforced on calls. */
const SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: { $anchor: "addressDef", type: "object", properties: { street: { type: "string" }, city: { type: "string" } } },
  },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
} as const;

const validate2020 = new CfWorkerJsonSchemaValidator().getValidator<Record<string, unknown>>(SCHEMA_2020_12 as unknown as Parameters<CfWorkerJsonSchemaValidator["getValidator"]>[0]);

/** Notifications a fixture sends mid-call, with a pause between them as a real tool's would have. */
async function paced(sctx: ServerContext, notes: ReadonlyArray<Parameters<ServerContext["mcpReq"]["notify"]>[0]>): Promise<void> {
  for (const [i, note] of notes.entries()) {
    if (i > 0) await new Promise((r) => setTimeout(r, 20));
    await sctx.mcpReq.notify(note);
  }
}

export const CONTENT_TOOLS: FixtureTool[] = [
  simple("test_simple_text", "Tests simple text content response", [text("This is a simple text response for testing.")]),
  simple("test_image_content", "Tests image content response", [{ type: "image", data: PNG, mimeType: "image/png" }]),
  simple("test_audio_content", "Tests audio content response", [{ type: "audio", data: WAV, mimeType: "audio/wav" }]),
  simple("test_embedded_resource", "Tests embedded resource content response", [
    { type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } },
  ]),
  simple("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)", [
    text("Multiple content types test:"),
    { type: "image", data: PNG, mimeType: "image/png" },
    { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: JSON.stringify({ test: "data", value: 123 }) } },
  ]),
  {
    tool: { name: "test_tool_with_logging", description: "Tests tool that emits log messages during execution", inputSchema: NO_ARGS },
    streams: true,
    call: async ({ sctx }) => {
      await paced(
        sctx,
        ["Tool execution started", "Tool processing data", "Tool execution completed"].map((data) => ({ method: "notifications/message" as const, params: { level: "info" as const, data } })),
      );
      return { content: [text("Tool with logging executed successfully")] };
    },
  },
  {
    tool: { name: "test_tool_with_progress", description: "Tests tool that reports progress notifications", inputSchema: NO_ARGS },
    call: async ({ sctx }) => {
      const token = sctx.mcpReq._meta?.progressToken;
      if (token !== undefined) {
        await paced(
          sctx,
          [0, 50, 100].map((progress) => ({ method: "notifications/progress" as const, params: { progressToken: token, progress, total: 100, message: `Completed step ${progress} of 100` } })),
        );
      }
      return { content: [text(String(token ?? "no progress token"))] };
    },
  },
  {
    tool: { name: "test_error_handling", description: "Tests error response handling", inputSchema: NO_ARGS },
    call: async () => ({ isError: true, content: [text("This tool intentionally returns an error for testing")] }),
  },
  {
    tool: {
      name: "json_schema_2020_12_tool",
      description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
      inputSchema: SCHEMA_2020_12 as unknown as Tool["inputSchema"],
    },
    call: async ({ args }) => {
      const checked = validate2020(args);
      if (!checked.valid) return failureResult(invalidInput(`The arguments do not match the tool's schema: ${checked.errorMessage}`, "Pass phone or email, and phone when contactMethod is phone."));
      return { content: [text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`)] };
    },
  },
];

export interface FixturePrompt {
  prompt: Prompt;
  get(args: Record<string, string>): GetPromptResult;
}

export const CONTENT_PROMPTS: FixturePrompt[] = [
  {
    prompt: { name: "test_simple_prompt", description: "A simple prompt without arguments" },
    get: () => ({ messages: [{ role: "user", content: text("This is a simple prompt for testing.") }] }),
  },
  {
    prompt: {
      name: "test_prompt_with_arguments",
      description: "A prompt with required arguments",
      arguments: [
        { name: "arg1", description: "First test argument", required: true },
        { name: "arg2", description: "Second test argument", required: true },
      ],
    },
    get: (a) => ({ messages: [{ role: "user", content: text(`Prompt with arguments: arg1='${a.arg1 ?? ""}', arg2='${a.arg2 ?? ""}'`) }] }),
  },
  {
    prompt: {
      name: "test_prompt_with_embedded_resource",
      description: "A prompt that includes an embedded resource",
      arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
    },
    get: (a) => ({
      messages: [
        { role: "user", content: { type: "resource", resource: { uri: a.resourceUri ?? "test://example-resource", mimeType: "text/plain", text: "Embedded resource content for testing." } } },
        { role: "user", content: text("Please process the embedded resource above.") },
      ],
    }),
  },
  {
    prompt: { name: "test_prompt_with_image", description: "A prompt that includes image content" },
    get: () => ({
      messages: [
        { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
        { role: "user", content: text("Please analyze the image above.") },
      ],
    }),
  },
];

/** test://watched-resource can be subscribed to; it never changes here. */
export const WATCHED_URI = "test://watched-resource";

const FIXTURE_TEMPLATE = new ResourceTemplate("test://template/{id}/data", { list: undefined });

/** The suite's static, binary, template and watched resources. */
export function registerFixtureResources(mcp: McpServer): void {
  mcp.registerResource("static-text", "test://static-text", { title: "Static Text Resource", description: "A static text resource for testing", mimeType: "text/plain" }, () => ({
    contents: [{ uri: "test://static-text", mimeType: "text/plain", text: "This is the content of the static text resource." }],
  }));
  mcp.registerResource("static-binary", "test://static-binary", { title: "Static Binary Resource", description: "A static binary resource (image) for testing", mimeType: "image/png" }, () => ({
    contents: [{ uri: "test://static-binary", mimeType: "image/png", blob: PNG }],
  }));
  mcp.registerResource("template", FIXTURE_TEMPLATE, { title: "Resource Template", description: "A resource template with parameter substitution", mimeType: "application/json" }, (uri, vars) => ({
    contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id: vars.id, templateTest: true, data: `Data for ID: ${String(vars.id)}` }) }],
  }));
  mcp.registerResource("watched-resource", WATCHED_URI, { title: "Watched Resource", description: "A resource clients may subscribe to", mimeType: "text/plain" }, () => ({
    contents: [{ uri: WATCHED_URI, mimeType: "text/plain", text: "Watched resource content" }],
  }));
}
