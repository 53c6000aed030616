import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { Ctx } from "./context";
import type { AnyToolDef } from "./define-tool";
import { callTool, toolListing } from "./registry";

export const SERVER_INFO = { name: "agent-ledger", version: "0.1.0" } as const;

const INSTRUCTIONS = `agent-ledger is the team's shared memory and coordination point.
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
export function buildServer(ctx: Ctx, tools: readonly AnyToolDef[]): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    // The SDK's default validator (Ajv) generates code, which production Workers forbid.
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map(toolListing) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const def = tools.find((t) => t.name === request.params.name);
    if (!def) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown tool '${request.params.name}' on this surface. Call tools/list for the available tools, or add its toolset with ?toolsets=… .`,
      );
    }
    return callTool(def, { ...ctx, requestId: extra.requestId }, request.params.arguments);
  });
  return server;
}
