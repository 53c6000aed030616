import {
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  isInputRequiredResult,
  LOG_LEVEL_META_KEY,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type CallToolResult,
  type LoggingLevel,
  type RequestStateCodec,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/server/validators/cf-worker";
import { GUIDE_INDEX, GUIDE_TOPICS, findTopic, renderTopic } from "../guide/topics";
import { projectBriefTool } from "../work/projects/brief";
import { listPresetsTool } from "../git/presets";
import type { Ctx } from "../core/context";
import { answerOfForm, CANNOT_ASK, CONFIRM_WAIT_MS, confirmationForm, InputNeeded } from "../core/confirm";
import type { ConfirmationAnswer, Confirmer } from "../core/confirmer";
import type { AnyToolDef } from "../core/define-tool";
import { excerpt, ToolError } from "../core/errors";
import { serverIcons, toolIcons } from "./icons";
import { complete } from "./completions";
import { getAnyPrompt, listAllPrompts } from "./prompts";
import { surfaceNaming } from "./registry";
import { callTool, failureResult } from "../core/call";
import { listedTool, type SchemaListing } from "../core/listing";
import { instructionsFor, offSurfaceError, type SurfaceView } from "./surface-help";
import { attachSkills } from "./skills";
import { INBOX_URI, registerInboxResource } from "./inbox-resource";
import { findFixtureTool, fixturePrompts, fixtureToolListing, getFixturePrompt, registerFixtureResources, WATCHED_URI } from "./conformance/fixtures";
import type { FixtureCall, FixtureState, FixtureTool } from "./conformance/fixture";
import { registerTasks } from "./tasks/methods";
import { taskDrivers } from "./tasks/drivers";
import { startTask, startToolTask } from "./tasks/start";
import { startBackgroundTask } from "./tasks/background";
import { declaresTasks, TASKS_EXTENSION, tasksCapabilityMissing } from "./tasks/wire";

export const SERVER_INFO = { name: "agent-ledger", title: "agent-ledger", version: "0.1.0" } as const;

/** The protocol family a request belongs to: 2026-07-28 (per-request envelope) or the 2025 revisions. */
export type Era = "modern" | "legacy";

/** What one request's server needs beyond the caller's Ctx. */
export interface ServeOptions {
  era: Era;
  listing: SchemaListing;
  /** The surface the client asked for: the instructions and off-surface refusals describe it. */
  surface: SurfaceView;
  /** The origin the client reached (icons are served from it). */
  origin: string;
  /** A 2025-era session's chosen log level, if it set one (logging/setLevel). */
  logLevel?: LoggingLevel | null;
  /** Persists a 2025-era session's log level; absent outside a session. */
  saveLogLevel?: (level: LoggingLevel) => Promise<void>;
  /** Records a 2025-era session's resource subscription (on) or its end (off); absent outside a session. */
  saveSubscription?: (uri: string, on: boolean) => Promise<void>;
  /** The key that seals input_required request state (see requestStateKey). */
  stateKey: string;
  /**
   * A 2025-era session whose client declared elicitation at initialize: confirmations are asked
   * with elicitation/create on the call's stream (the server must know the client's capabilities).
   */
  sessionElicits?: boolean;
  /** A 2025-era session whose client declared sampling, on a fixtures-serving server. */
  sessionSamples?: boolean;
  /** The conformance suite's reference tools, prompts and resources are served too (src/server/conformance). */
  fixtures?: boolean;
}

/** Lists change only with the surface (the URL) or a deploy; prompts also with the tenant's documents. */
const CACHE_HINTS = {
  "tools/list": { ttlMs: 60 * 60 * 1000, cacheScope: "private" },
  "resources/list": { ttlMs: 60 * 60 * 1000, cacheScope: "private" },
  "resources/templates/list": { ttlMs: 60 * 60 * 1000, cacheScope: "private" },
  "prompts/list": { ttlMs: 60 * 1000, cacheScope: "private" },
  "server/discover": { ttlMs: 60 * 60 * 1000, cacheScope: "private" },
} as const;

const LOG_SEVERITY: Record<LoggingLevel, number> = { debug: 0, info: 1, notice: 2, warning: 3, error: 4, critical: 5, alert: 6, emergency: 7 };

/** What sealed request state carries: the question's tool and arguments, so an answer cannot be moved to another call. */
interface PendingConfirmation {
  tool: string;
  args: string;
  key: string;
}

/** What this server seals: a confirmation's question, or a conformance fixture's own state. */
type SealedState = PendingConfirmation | FixtureState;

const codecs = new Map<string, RequestStateCodec<SealedState>>();

function stateCodec(key: string, ctx: Ctx): RequestStateCodec<SealedState> {
  const id = `${key}\u0000${ctx.tenantId}\u0000${ctx.actorId}`;
  let codec = codecs.get(id);
  if (!codec) {
    // Bound to the caller: state minted for one actor is refused for any other.
    codec = createRequestStateCodec<SealedState>({ key, ttlSeconds: 600, bind: () => `${ctx.tenantId}\u0000${ctx.actorId}` });
    if (codecs.size > 1000) codecs.clear();
    codecs.set(id, codec);
  }
  return codec;
}

function canElicit(sctx: ServerContext): boolean {
  const caps = sctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY as keyof typeof sctx.mcpReq.envelope] as { elicitation?: { form?: unknown } } | undefined;
  const elicitation = caps?.elicitation;
  // An empty elicitation object means form mode (the capability's original meaning).
  return elicitation !== undefined && (elicitation.form !== undefined || Object.keys(elicitation).length === 0);
}

/**
 * A fresh MCP server for one request. The SDK forbids reusing servers across requests; building
 * one is cheap because tool listings are compiled once per isolate. Resources and the guide's
 * skills go through McpServer's registry (the skills extension needs it); tools, prompts and
 * completions are handlers on its low-level server, so argument validation, aliases and the
 * error envelope stay ours rather than the SDK's generic "Input validation error".
 */
export async function buildServer(ctx: Ctx, tools: readonly AnyToolDef[], options: ServeOptions): Promise<McpServer> {
  const codec = stateCodec(options.stateKey, ctx);
  const mcp = new McpServer(
    { ...SERVER_INFO, icons: serverIcons(options.origin) },
    {
      capabilities: {
        tools: { listChanged: false },
        resources: { listChanged: false, subscribe: true },
        prompts: { listChanged: false },
        completions: {},
        logging: {},
        // Tasks (SEP-2663) are an extension of the 2026-07-28 wire; 2025 sessions keep their job ids.
        ...(options.era === "modern" ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
      },
      instructions: instructionsFor(options.surface),
      // The SDK's default validator on Node (Ajv) generates code, which production Workers forbid.
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      cacheHints: CACHE_HINTS,
      requestState: { verify: (state, sctx) => codec.verify(state, sctx) },
    },
  );
  registerResources(mcp, ctx);
  if (options.fixtures) registerFixtureResources(mcp);
  await attachSkills(mcp, ctx);
  const server = mcp.server;
  const naming = surfaceNaming(tools);
  server.setRequestHandler("tools/list", async () => ({
    tools: [
      ...tools.map((t) => {
        const listed = options.listing === "full" ? { ...listedTool(t, "full"), icons: toolIcons(options.origin, t.toolset) } : listedTool(t, options.listing);
        const name = naming.listedName(t);
        return name === listed.name ? listed : { ...listed, name };
      }),
      ...(options.fixtures ? fixtureToolListing() : []),
    ],
  }));
  server.setRequestHandler("tools/call", async (request, sctx) => {
    const fixture = options.fixtures ? findFixtureTool(request.params.name) : undefined;
    if (fixture) {
      const asks = { elicitation: options.sessionElicits === true, sampling: options.sessionSamples === true };
      return callFixture(ctx, fixture, { args: request.params.arguments ?? {}, sctx, mint: (state) => codec.mint(state, sctx), asks }, options.era);
    }
    const def = naming.resolve(request.params.name);
    if (!def) {
      // A tool elsewhere in the registry gets the envelope saying how to reach it; an unknown name, the protocol's error.
      const elsewhere = offSurfaceError(request.params.name, options.surface);
      if (elsewhere) return failureResult(elsewhere);
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool '${excerpt(request.params.name)}' on this surface. Call tools/list for the available tools, or add its toolset with ?toolsets=… .`,
      );
    }
    const args = request.params.arguments ?? {};
    const argsText = JSON.stringify(args);
    const pending = sctx.mcpReq.requestState<PendingConfirmation>();
    if (pending !== undefined && (typeof pending !== "object" || pending.tool !== def.name || pending.args !== argsText)) {
      // Sealed state from another call: an answer given for one operation never approves another.
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid or expired requestState: it was issued for a different call.");
    }
    const callCtx: Ctx = {
      ...ctx,
      surface: { toolsets: options.surface.toolsets, readonly: options.surface.readonly },
      confirmer: confirmerFor(sctx, options, pending),
      ...progressReporter(sctx),
    };
    const task = def.task && options.era === "modern" && declaresTasks(sctx) ? def.task : undefined;
    if (task && "background" in task && (task.when?.(args) ?? true)) return startBackgroundTask(callCtx, def, args, canElicit(sctx), task.pollMs);
    let result: CallToolResult;
    try {
      result = await callTool(def, callCtx, args);
    } catch (err) {
      if (!(err instanceof InputNeeded)) throw err;
      const { key, message } = err.confirmation;
      return inputRequired({
        inputRequests: {
          [key]: inputRequired.elicit({
            message,
            requestedSchema: confirmationForm(message),
          }),
        },
        requestState: await codec.mint({ tool: def.name, args: argsText, key }, sctx),
      });
    }
    await logWarnings(sctx, options, def.name, result);
    // Long work the call started becomes a task the client polls, where it declared the extension.
    if (task && "driver" in task && !result.isError) return startToolTask(callCtx, def, task, result);
    return result;
  });
  registerLogging(server, options);
  registerSubscriptions(server, options);
  registerPrompts(server, ctx, options.fixtures === true);
  if (options.era === "modern") registerTasks(mcp, ctx, taskDrivers(options.fixtures === true));
  return mcp;
}

/** A conformance fixture's call: as a task where it runs as one and the client declared the extension. */
async function callFixture(ctx: Ctx, fixture: FixtureTool, call: FixtureCall, era: Era) {
  const task = era === "modern" ? fixture.task : undefined;
  if (!task) return fixture.call(call);
  if (!declaresTasks(call.sctx)) {
    if (task.support === "required") throw tasksCapabilityMissing(`The tool '${fixture.tool.name}'`);
    return fixture.call(call);
  }
  const plan = await task.plan(call);
  return isInputRequiredResult(plan) ? plan : startTask(ctx, fixture.tool.name, plan);
}

/** How this call's confirmations reach the person: a round trip, a question on the session's stream, or nobody. */
function confirmerFor(sctx: ServerContext, options: ServeOptions, pending: PendingConfirmation | undefined): Confirmer {
  if (options.era === "modern") return canElicit(sctx) ? { answer: (key) => answerOf(sctx, pending, key) } : CANNOT_ASK;
  return options.sessionElicits ? askOnStream(sctx) : CANNOT_ASK;
}

function answerOf(sctx: ServerContext, pending: PendingConfirmation | undefined, key: string): ConfirmationAnswer {
  if (!pending || pending.key !== key) return "unanswered";
  const view = inputResponse(sctx.mcpReq.inputResponses, key);
  if (view.kind !== "elicit") return "unanswered";
  return answerOfForm(view.action, view.content);
}

/**
 * 2025 revisions: the question goes out as elicitation/create on this call's SSE stream and the
 * call waits for the answer, which the client posts on its session (any isolate may receive it;
 * src/http/mcp.ts carries it back here). A yes holds for the rest of the call, so a tool that runs
 * another (execute_plan's batch_commit) does not ask twice.
 */
function askOnStream(sctx: ServerContext): Confirmer {
  const accepted = new Set<string>();
  return {
    answer: (key) => (accepted.has(key) ? "accepted" : "unanswered"),
    ask: async ({ key, message }) => {
      let result;
      try {
        result = await sctx.mcpReq.elicitInput({ mode: "form", message, requestedSchema: confirmationForm(message) }, { relatedRequestId: sctx.mcpReq.id, timeout: CONFIRM_WAIT_MS });
      } catch (err) {
        console.warn("a confirmation got no answer", err);
        throw new ToolError("confirmation_unanswered", `Not done: the confirmation got no answer (${message})`, {
          hint: `Nothing was changed. Call again and answer the question when the client shows it (it waits ${CONFIRM_WAIT_MS / 60_000} minutes).`,
          retryable: true,
        });
      }
      const answer = answerOfForm(result.action, result.content);
      if (answer === "accepted") accepted.add(key);
      return answer;
    },
  };
}

function progressReporter(sctx: ServerContext): Pick<Ctx, "progress"> {
  const token = sctx.mcpReq._meta?.progressToken;
  if (token === undefined) return {};
  return {
    progress: async (done, total, message) => {
      try {
        await sctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: done, ...(total !== undefined ? { total } : {}), ...(message ? { message } : {}) } });
      } catch (err) {
        console.warn("could not send a progress notification", err);
      }
    },
  };
}

/** The level the client asked for: per request on 2026-07-28, per session before it. */
function levelOf(sctx: ServerContext, options: ServeOptions): LoggingLevel | null {
  if (options.era === "modern") {
    const level = sctx.mcpReq.envelope?.[LOG_LEVEL_META_KEY as keyof typeof sctx.mcpReq.envelope] as LoggingLevel | undefined;
    return level && level in LOG_SEVERITY ? level : null;
  }
  return options.logLevel ?? null;
}

/** A tool's warnings (masked secrets, capped input, …) also go out as log messages to a client that asked for them. */
async function logWarnings(sctx: ServerContext, options: ServeOptions, tool: string, result: CallToolResult): Promise<void> {
  const level = levelOf(sctx, options);
  if (!level || LOG_SEVERITY[level] > LOG_SEVERITY.warning) return;
  const warnings = (result.structuredContent as { warnings?: unknown } | undefined)?.warnings;
  if (!Array.isArray(warnings)) return;
  for (const warning of warnings.slice(0, 10)) {
    await sctx.mcpReq.notify({ method: "notifications/message", params: { level: "warning", logger: "agent-ledger", data: { tool, warning } } });
  }
}

/**
 * resources/subscribe for 2025 sessions: only ledger://inbox changes under a client, and the
 * updates ride the session's GET stream. A 2026-07-28 client subscribes with subscriptions/listen.
 */
function registerSubscriptions(server: McpServer["server"], options: ServeOptions): void {
  const handle = async (uri: string, on: boolean) => {
    // The fixture never changes, so there is nothing to record or send.
    if (options.fixtures && uri === WATCHED_URI) return {};
    if (uri !== INBOX_URI) throw new ResourceNotFoundError(uri, `Resource not found: ${excerpt(uri)} cannot be subscribed to; ${INBOX_URI} can.`);
    if (!options.saveSubscription) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        "resources/subscribe needs a session: initialize one first (its updates ride the session's GET stream), or on 2026-07-28 use subscriptions/listen.",
      );
    }
    await options.saveSubscription(uri, on);
    return {};
  };
  server.setRequestHandler("resources/subscribe", (request) => handle(request.params.uri, true));
  server.setRequestHandler("resources/unsubscribe", (request) => handle(request.params.uri, false));
}

function registerLogging(server: McpServer["server"], options: ServeOptions): void {
  server.setRequestHandler("logging/setLevel", async (request) => {
    await options.saveLogLevel?.(request.params.level);
    return {};
  });
}

/** The workflow prompts and the document store's (src/server/prompts.ts), on every surface: they are not tools. */
function registerPrompts(server: McpServer["server"], ctx: Ctx, fixtures: boolean): void {
  server.setRequestHandler("prompts/list", async () => ({ prompts: [...(await listAllPrompts(ctx)), ...(fixtures ? fixturePrompts() : [])] }));
  server.setRequestHandler("prompts/get", async (request, sctx) => {
    const args = request.params.arguments ?? {};
    return (fixtures ? getFixturePrompt(request.params.name, args, sctx) : undefined) ?? getAnyPrompt(ctx, request.params.name, args);
  });
  server.setRequestHandler("completion/complete", async (request) => {
    const { ref, argument, context } = request.params;
    const completion = await complete(ctx, ref.type === "ref/prompt" ? { type: "ref/prompt", name: ref.name } : { type: "ref/resource", uri: ref.uri }, argument.name, argument.value, context);
    return { completion: { ...completion } };
  });
}

const MARKDOWN = "text/markdown";

const JSON_TYPE = "application/json";

// The templates hold nothing of a caller, and parsing one costs CPU every request would pay.
const GUIDE_TOPIC = new ResourceTemplate("ledger://guide/{topic}", {
  list: () => ({ resources: GUIDE_TOPICS.map((t) => ({ uri: `ledger://guide/${t.id}`, name: `guide/${t.id}`, title: t.title, mimeType: MARKDOWN })) }),
});
const PROJECT_BRIEF = new ResourceTemplate("ledger://project/{key}/brief", { list: undefined });
const GIT_PRESETS = new ResourceTemplate("ledger://repos/{owner}/{name}/presets", { list: undefined });

/** ledger://guide, ledger://guide/{topic} (the guide tool's text), a project's brief and a repository's git presets (the caller's view). */
function registerResources(mcp: McpServer, ctx: Ctx): void {
  registerInboxResource(mcp, ctx);
  const notFound = (uri: URL) => new ResourceNotFoundError(uri.href, `Resource not found: ${excerpt(uri.href)}`);
  mcp.registerResource("guide", "ledger://guide", { title: "agent-ledger guide", mimeType: MARKDOWN }, (uri) => ({ contents: [{ uri: uri.href, mimeType: MARKDOWN, text: GUIDE_INDEX }] }));
  mcp.registerResource("guide topic", GUIDE_TOPIC, { mimeType: MARKDOWN }, (uri, vars) => {
    const t = findTopic(String(vars.topic));
    if (!t) throw notFound(uri);
    return { contents: [{ uri: uri.href, mimeType: MARKDOWN, text: renderTopic(t) }] };
  });
  mcp.registerResource("project brief", PROJECT_BRIEF, { description: "A project's brief, as project_brief returns it to you.", mimeType: JSON_TYPE }, async (uri, vars) => {
    // Through the registry, so the brief is exactly what this caller may see.
    const result = await callTool(projectBriefTool, ctx, { project: decodeURIComponent(String(vars.key)) });
    if (result.isError) throw notFound(uri);
    return { contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify(result.structuredContent) }] };
  });
  mcp.registerResource(
    "git presets",
    GIT_PRESETS,
    { description: "The git presets for a repository on GitHub: the tenant's stored presets and its .rethunk/git-mcp-presets.json, as list_presets returns them.", mimeType: JSON_TYPE },
    async (uri, vars) => {
      const repo = `${decodeURIComponent(String(vars.owner))}/${decodeURIComponent(String(vars.name))}`;
      const result = await callTool(listPresetsTool, ctx, { repo, format: "json" });
      // Errors (github_not_configured, repo_not_found) are data here too: the reader gets the envelope.
      return { contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: JSON.stringify(result.structuredContent) }] };
    },
  );
}
