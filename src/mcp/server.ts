import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema, ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema, McpError, ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { getPrompt, listPrompts } from "../docs/prompts";
import { GUIDE_INDEX, GUIDE_TOPICS, findTopic, renderTopic } from "../guide/topics";
import { projectBriefTool } from "../work/projects";
import { listPresetsTool } from "../git/presets";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { Ctx } from "./context";
import type { AnyToolDef } from "./define-tool";
import { excerpt } from "./errors";
import { callTool, listedTool, type SchemaListing } from "./registry";

export const SERVER_INFO = { name: "agent-ledger", version: "0.1.0" } as const;

const INSTRUCTIONS = `agent-ledger is the team's shared memory and coordination point.
Call whoami first in every run: it returns you, your open tasks, your inbox and what changed since you were last seen.
Work ledger: project_brief orients you on a project; task_claim takes work under a lease; task_update moves it (done is gated);
handoffs and the inbox carry questions and reviews between actors (ack after act); decision_log records decisions.
Memory: knowledge_search before you redo research, knowledge_write what you learn; search finds any object by keyword. guide explains more.
When this server gets in your way, file it with feature_request_create (toolset feedback; never include secrets).
Change ledger: before editing an entity, call prior_attempts (and blame) on it; after every meaningful change,
call log_change with the entity_path, change_type, diff and your reasoning (why, not what), using one changeset_id
per feature or task. Never re-apply a change that prior_attempts shows was reverted without logging a supersede.
Results use the envelope { ok: true, … } or { ok: false, error: { code, message, hint, retryable } }; follow the hint.`;

/**
 * A fresh low-level MCP server for one request. The SDK forbids reusing servers across
 * requests; building one is cheap because tool listings are compiled once per isolate.
 * The low-level Server is used (not McpServer) so argument validation, aliases and the error
 * envelope stay ours rather than the SDK's generic "Input validation error".
 */
export function buildServer(ctx: Ctx, tools: readonly AnyToolDef[], listing: SchemaListing = "lean"): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false } },
    instructions: INSTRUCTIONS,
    // The SDK's default validator (Ajv) generates code, which production Workers forbid.
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => listedTool(t, listing)) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const def = tools.find((t) => t.name === request.params.name);
    if (!def) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool '${excerpt(request.params.name)}' on this surface. Call tools/list for the available tools, or add its toolset with ?toolsets=… .`,
      );
    }
    return callTool(def, { ...ctx, requestId: extra.requestId }, request.params.arguments);
  });
  registerResources(server, ctx);
  registerPrompts(server, ctx);
  return server;
}

/** Built-in prompts and the tenant's PROMPT-*.md documents (src/docs/prompts.ts), on every surface: they are not tools. */
function registerPrompts(server: Server, ctx: Ctx): void {
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: await listPrompts(ctx) }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => getPrompt(ctx, request.params.name, request.params.arguments ?? {}));
}

const MARKDOWN = "text/markdown";

/** ledger://guide, ledger://guide/{topic} (the guide tool's text) and ledger://project/{key}/brief (the caller's view). */
function registerResources(server: Server, ctx: Ctx): void {
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [
      { uri: "ledger://guide", name: "guide", title: "agent-ledger guide", mimeType: MARKDOWN },
      ...GUIDE_TOPICS.map((t) => ({ uri: `ledger://guide/${t.id}`, name: `guide/${t.id}`, title: t.title, mimeType: MARKDOWN })),
    ],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      { uriTemplate: "ledger://guide/{topic}", name: "guide topic", mimeType: MARKDOWN },
      { uriTemplate: "ledger://project/{key}/brief", name: "project brief", description: "A project's brief, as project_brief returns it to you.", mimeType: "application/json" },
      { uriTemplate: "ledger://repos/{owner}/{name}/presets", name: "git presets", description: "The git presets for a repository on GitHub: the tenant's stored presets and its .rethunk/git-mcp-presets.json, as list_presets returns them.", mimeType: "application/json" },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    if (uri === "ledger://guide") return { contents: [{ uri, mimeType: MARKDOWN, text: GUIDE_INDEX }] };
    const topic = /^ledger:\/\/guide\/([a-z-]+)$/.exec(uri);
    if (topic) {
      const t = findTopic(topic[1]!);
      if (t) return { contents: [{ uri, mimeType: MARKDOWN, text: renderTopic(t) }] };
    }
    const brief = /^ledger:\/\/project\/([^/]+)\/brief$/.exec(uri);
    if (brief) {
      // Through the registry, so the brief is exactly what this caller may see.
      const result = await callTool(projectBriefTool, ctx, { project: decodeURIComponent(brief[1]!) });
      if (!result.isError) return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(result.structuredContent) }] };
    }
    const presets = /^ledger:\/\/repos\/([^/]+)\/([^/]+)\/presets$/.exec(uri);
    if (presets) {
      const repo = `${decodeURIComponent(presets[1]!)}/${decodeURIComponent(presets[2]!)}`;
      const result = await callTool(listPresetsTool, ctx, { repo, format: "json" });
      // Errors (github_not_configured, repo_not_found) are data here too: the reader gets the envelope.
      return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(result.structuredContent) }] };
    }
    throw new McpError(-32002, `Resource not found: ${excerpt(uri)}`);
  });
}
