import {
  createMcpHandler,
  isLegacyRequest,
  ProtocolErrorCode as ErrorCode,
  WebStandardStreamableHTTPServerTransport,
  type JSONRPCMessage,
  type LoggingLevel,
  type ServerEventBus,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import { Hono, type Context } from "hono";
import { accessOfRequest, type Caller, callerOf } from "../auth/caller";
import { bearerChallenge } from "../auth/oauth";
import { systemClock } from "../core/time";
import { addTiming, sinceStart, timed } from "../core/timing";
import { sessionStub, type SessionRecord } from "../durable/session";
import type { Env } from "../env";
import type { Ctx, Surface } from "../core/context";
import { excerpt, failureText, ToolError, type ErrorBody } from "../core/errors";
import { compactSurface, isCompactMode } from "../server/compact";
import { findTool, selectTools, surfaceNaming } from "../server/registry";
import { paramHeaderMismatch, paramHeadersOf } from "../core/param-headers";
import type { AnyToolDef } from "../core/define-tool";
import { type SchemaListing, toolListing } from "../core/listing";
import { buildServer, type ServeOptions } from "../server/server";
import { inboxBus, inboxSessionStream } from "../server/inbox-resource";
import type { SurfaceView } from "../server/surface-help";
import { replayInitialize } from "../server/handshake";
import { requestStateKey } from "../server/request-state-key";
import { fixturesServed } from "../server/conformance/setting";
import { findFixtureTool } from "../server/conformance/fixtures";
import { bindSessionRun, RUN_SERIES_KEY } from "../work/runs/model";
import { clientSessionOf, rememberClientSession } from "../work/runs/client-sessions";
import { declaredTooLarge, MAX_MCP_BODY_BYTES, mebibytes, readCapped } from "./body";
import { callerBuckets, charge, requestMeter, type Throttle, throttleError } from "./rate-limit";
import { declaresFormElicitation, declaresSampling, deliverAnswers, isAnswerBody, relayQuestions } from "./session-questions";
import type { Meter } from "../core/meter";
import { coalescingReads } from "../db/coalesce";

type AppEnv = { Bindings: Env };

type RpcId = string | number | null;

const jsonRpcError = (code: number, message: string, id: RpcId = null) => ({ jsonrpc: "2.0", error: { code, message }, id });

/** The id of the request a body carries, so an error about it names it (null when there is none). */
function idOf(body: unknown): RpcId {
  const first = Array.isArray(body) ? body[0] : body;
  const id = isObject(first) ? first.id : undefined;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/**
 * A refusal made here rather than by a tool: a JSON-RPC error whose `data` is the envelope, so a
 * client that shows only `message` and one that reads `data` both learn the code and the hint.
 */
function refusal(c: Context<AppEnv>, status: 400 | 413 | 429 | 503, rpcCode: number, error: ErrorBody, id: RpcId = null) {
  return c.json({ jsonrpc: "2.0", error: { code: rpcCode, message: error.message, data: { ok: false, error } }, id }, status);
}

// -32000, as the SDK's own transport answers an oversized body.
const tooLarge = (c: Context<AppEnv>) =>
  refusal(c, 413, -32000, {
    code: "payload_too_large",
    message: `Payload Too Large: /mcp request bodies are limited to ${MAX_MCP_BODY_BYTES} bytes (${mebibytes(MAX_MCP_BODY_BYTES)}).`,
    hint: "Send less in one call: split the work over several calls, or store large content as an attachment or document and pass its id.",
    retryable: false,
  });

function unauthorized(c: Context<AppEnv>, description: string) {
  c.header("WWW-Authenticate", bearerChallenge(c.req.url, description));
  return c.json(jsonRpcError(-32001, `Unauthorized: ${description}`), 401);
}

function surfaceOf(c: Context<AppEnv>): Surface {
  const raw = c.req.query("toolsets") ?? c.req.header("X-MCP-Toolsets") ?? "";
  const readonly = c.req.query("readonly") ?? c.req.header("X-MCP-Readonly") ?? "";
  return {
    toolsets: raw
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    // A read-only credential (an OAuth token without ledger:write) gets the read-only surface whatever the URL asks.
    readonly: readonly === "1" || readonly.toLowerCase() === "true" || accessOfRequest(c) === "readonly",
  };
}

/**
 * `?schemas=full` lists every schema whole; the default `lean` listing is what an agent's context
 * can afford. `output_schemas` is the parameter's earlier name, still accepted.
 */
function schemaListing(c: Context<AppEnv>): SchemaListing {
  const raw = c.req.query("schemas") ?? c.req.query("output_schemas") ?? c.req.header("X-MCP-Schemas") ?? c.req.header("X-MCP-Output-Schemas");
  const v = (raw ?? "").trim().toLowerCase();
  if (v === "" || v === "lean" || v === "small") return "lean";
  if (v === "full") return "full";
  throw new ToolError("invalid_input", `Unknown schemas '${excerpt(v, 40)}'.`, { hint: "Use schemas=full (every schema whole) or lean (the default: small output schemas, no size bounds)." });
}

const MAX_RPC_ERROR_MESSAGE = 1000;
const MAX_RPC_ERROR_DATA = 4000;

/**
 * Every JSON-RPC error the server answers leaves through send(), so bounding it here covers
 * messages built anywhere (the SDK's validation, a handler) that might quote a large request.
 */
class BoundedTransport extends WebStandardStreamableHTTPServerTransport {
  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (!("error" in message)) return super.send(message, options);
    const { message: text, data, ...rest } = message.error;
    const bounded = {
      ...rest,
      // An SDK handler's exception becomes the error's message: internal text must not travel that way.
      message: excerpt(failureText(text, "json-rpc error"), MAX_RPC_ERROR_MESSAGE),
      ...(data !== undefined && JSON.stringify(data).length <= MAX_RPC_ERROR_DATA ? { data } : {}),
    };
    return super.send({ ...message, error: bounded }, options);
  }
}

const isInitialize = (body: unknown): boolean => (Array.isArray(body) ? body : [body]).some((m) => m && typeof m === "object" && (m as { method?: unknown }).method === "initialize");

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const kindOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`);

/** MCP dropped JSON-RPC batching in this revision; earlier clients may still send arrays. */
const NO_BATCHES_FROM = "2025-06-18";
/** What the transport spec says to assume when a request names no revision. */
const UNNAMED_REVISION = "2025-03-26";

/**
 * The protocol revision a request speaks: its MCP-Protocol-Version header; for an initialize,
 * the revision it asks for; otherwise the one its session negotiated.
 */
function revisionOf(c: Context<AppEnv>, body: unknown, session: SessionRecord | null): string {
  const header = c.req.header("MCP-Protocol-Version");
  if (header) return header;
  const init = (Array.isArray(body) ? body : [body]).find((m) => isObject(m) && m.method === "initialize") as { params?: { protocolVersion?: unknown } } | undefined;
  if (typeof init?.params?.protocolVersion === "string") return init.params.protocolVersion;
  return session?.protocolVersion || UNNAMED_REVISION;
}

/** Refuses a batch where the revision has none (and an empty batch anywhere), before any message runs. */
function refuseBatch(c: Context<AppEnv>, body: unknown, session: SessionRecord | null): Response | null {
  if (!Array.isArray(body)) return null;
  const hint = "Send one JSON-RPC message per POST; independent requests can go in parallel POSTs.";
  if (body.length === 0) return refusal(c, 400, -32600, { code: "invalid_request", message: "Invalid Request: the JSON-RPC batch is empty.", hint, retryable: false });
  const revision = revisionOf(c, body, session);
  if (revision < NO_BATCHES_FROM) return null;
  return refusal(
    c,
    400,
    -32600,
    {
      code: "batch_not_supported",
      message: `Invalid Request: JSON-RPC batches are not part of MCP protocol revision ${excerpt(revision, 20)} (batching was removed in ${NO_BATCHES_FROM}).`,
      hint,
      retryable: false,
    },
    idOf(body),
  );
}

/**
 * tools/call params the SDK would only reject with a generic internal error (-32603): they are the
 * caller's mistake, so they get -32602 naming the field. Null when the call is well-formed.
 */
function invalidToolCall(message: JSONRPCMessage): string | null {
  if (!("method" in message) || message.method !== "tools/call" || !("id" in message)) return null;
  const params: unknown = message.params;
  if (!isObject(params)) return "Invalid params: tools/call needs params { name, arguments }.";
  if (typeof params.name !== "string") return `Invalid params: tools/call \`name\` must be a string naming the tool, not ${kindOf(params.name)}.`;
  if (params.arguments !== undefined && !isObject(params.arguments)) {
    return `Invalid params: tools/call \`arguments\` must be a JSON object mapping parameter names to values, not ${kindOf(params.arguments)}.`;
  }
  return null;
}

/**
 * Answers malformed tool calls before the server sees them. Per message, so one bad call in an
 * (older revision's) batch does not sink the others.
 */
function guardToolCalls(transport: BoundedTransport): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  transport.onmessage = (message, extra) => {
    const problem = invalidToolCall(message);
    if (!problem || !("id" in message)) return deliver(message, extra);
    const error: ErrorBody = {
      code: "invalid_input",
      message: problem,
      hint: 'Pass the tool\'s parameters as an object, e.g. {"name": "blame", "arguments": {"entity_path": "users.email"}}; tools/list shows each tool\'s inputSchema.',
      retryable: false,
    };
    void transport
      .send({ jsonrpc: "2.0", id: message.id, error: { code: ErrorCode.InvalidParams, message: problem, data: { ok: false, error } } })
      .catch((err) => console.error("could not answer an invalid tools/call", err));
  };
}

/**
 * The recurring series a session's run belongs to (a cron job names it on every request, as a
 * local agent would through its environment), or null; undefined when the value is malformed.
 */
function runSeriesOf(c: Context<AppEnv>): string | null | undefined {
  const raw = (c.req.query("run_series_key") ?? c.req.header("X-Run-Series-Key") ?? "").trim();
  if (!raw) return null;
  return RUN_SERIES_KEY.test(raw) ? raw : undefined;
}

/**
 * Resolves the caller, counts the request against its rate limits, and, when the request names
 * one, finds its session. The session lookup does not depend on the key, and the limit check only
 * on the key's identity (usually cached), so the two Durable Object round trips run side by side.
 * This comes before the body is read: a throttled caller costs no parsing.
 */
async function resolveCaller(c: Context<AppEnv>, sessionId: string): Promise<{ ok: true; identity: Caller; session: SessionRecord | null; meter: Meter } | { ok: false; response: Response }> {
  // The OAuth provider has already checked the credential (token or API key); an OAuth grant's revocation is checked here.
  const lookup = timed("caller", () => callerOf(c));
  const [identity, session, counted] = await Promise.all([
    lookup,
    sessionId ? timed("session", () => sessionStub(c.env, sessionId).touch()) : Promise.resolve(null),
    // The request's own unit fails open: an unreachable counter must not take the API down.
    lookup.then(async (id) => {
      if (!id) return null;
      const buckets = callerBuckets(c.env, id);
      return { buckets, edge: await timed("limit", () => charge(c.env, buckets)) };
    }),
  ]);
  if (!identity || !counted) return { ok: false, response: unauthorized(c, "this access grant was revoked; sign in again") };
  if (counted.edge.throttle) return { ok: false, response: throttledResponse(c, counted.edge.throttle) };
  // A session belongs to the key's tenant and actor; anyone else's id is simply unknown.
  if (sessionId && (!session || session.tenantId !== identity.tenantId || session.actorId !== identity.actorId)) {
    return { ok: false, response: c.json(jsonRpcError(-32001, "Session not found: it ended or never existed. Initialize a new session."), 404) };
  }
  return { ok: true, identity, session, meter: requestMeter(c.env, counted.buckets, counted.edge) };
}

function throttledResponse(c: Context<AppEnv>, throttle: Throttle, id: RpcId = null): Response {
  c.header("Retry-After", String(throttle.retryAfterSeconds));
  // -32000 like the transport's other HTTP-level refusals; the envelope in `data` carries rate_limited.
  return refusal(c, 429, -32000, throttleError(throttle), id);
}

/**
 * A 2025-03-26 JSON-RPC batch is one request carrying several tool calls: each call after the
 * first counts a unit, charged before any runs; refused whole, like any call over its budget.
 */
async function chargeBatch(c: Context<AppEnv>, body: unknown, meter: Meter): Promise<Response | null> {
  if (!Array.isArray(body)) return null;
  const calls = body.filter((m) => isObject(m) && m.method === "tools/call").length;
  try {
    await meter.charge(calls - 1, { what: `a JSON-RPC batch of ${calls} tool calls`, units: calls });
    return null;
  } catch (err) {
    const e = err as ToolError;
    return refusal(c, e.code === "rate_limited" ? 429 : 503, -32000, { code: e.code, message: e.message, hint: e.hint, retryable: e.retryable }, idOf(body));
  }
}

export const mcpRoutes = new Hono<AppEnv>();

mcpRoutes.post("/", async (c) => {
  addTiming("edge", sinceStart());
  // A declared size needs no reading and no lookup to refuse.
  if (declaredTooLarge(c.req.raw, MAX_MCP_BODY_BYTES)) return tooLarge(c);
  const sessionId = c.req.header("Mcp-Session-Id") ?? "";
  const caller = await resolveCaller(c, sessionId);
  if (!caller.ok) return caller.response;

  const parseStart = performance.now();
  const raw = await readCapped(c.req.raw, MAX_MCP_BODY_BYTES);
  if (raw === null) return tooLarge(c);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(raw));
  } catch {
    return c.json(jsonRpcError(-32700, "Parse error: the body must be a JSON-RPC message"), 400);
  }
  addTiming("parse", performance.now() - parseStart);
  const id = idOf(body);
  if (caller.session && isAnswerBody(body)) {
    // The client answering a question a call of this session asked (a confirmation).
    if (await deliverAnswers(c.env, sessionId, body)) return c.body(null, 202);
    return c.json(jsonRpcError(-32600, "Invalid Request: no question with this id is waiting for an answer (it was answered, timed out, or never asked)."), 400);
  }

  let tools;
  let listing: SchemaListing;
  let surface: SurfaceView;
  try {
    listing = schemaListing(c);
    surface = { ...surfaceOf(c), compact: isCompactMode(c.req.query("mode"), c.req.header("X-MCP-Mode")) };
    tools = surface.compact ? compactSurface(surface).tools : selectTools(surface);
  } catch (err) {
    const e = err as ToolError;
    return c.json(jsonRpcError(-32602, `${excerpt(e.message, 300)} ${e.hint}`, id), 400);
  }

  const stepUp = writeWithReadOnlyGrant(c, body);
  if (stepUp) {
    // Step-up (MCP authorization): the client can re-authorize for write access and retry.
    c.header("WWW-Authenticate", bearerChallenge(c.req.url, stepUp, "insufficient_scope"));
    return c.json(jsonRpcError(-32001, `Forbidden: ${stepUp}`, id), 403);
  }

  const runSeriesKey = runSeriesOf(c);
  if (runSeriesKey === undefined) {
    return c.json(jsonRpcError(-32602, "X-Run-Series-Key must be letters, digits and . _ : / - (up to 100, starting with a letter or digit).", id), 400);
  }

  const overlong = overlongResourceUri(body);
  if (overlong) return c.json({ jsonrpc: "2.0", error: { code: -32602, message: overlong, data: { reason: "uri_too_long" } }, id }, 200);
  const batchRefused = refuseBatch(c, body, caller.session) ?? (await chargeBatch(c, body, caller.meter));
  if (batchRefused) return batchRefused;
  const legacy = await isLegacyRequest(c.req.raw, body, { maxRequestBodySize: MAX_MCP_BODY_BYTES });
  // The 2025 transport refuses an unknown revision by quoting the header whole: a malformed one is
  // refused here, briefly. A 2026-07-28 request's own answer (-32022 naming the revisions served)
  // comes from the SDK, for any header short enough to echo.
  const revisionHeader = c.req.header("MCP-Protocol-Version");
  if (revisionHeader !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(revisionHeader) && (legacy || revisionHeader.length > 40)) {
    return c.json(jsonRpcError(-32000, `Bad Request: unsupported MCP-Protocol-Version '${excerpt(revisionHeader, 20)}' (a revision date such as 2025-06-18).`, id), 400);
  }
  const initializing = legacy && isInitialize(body);
  const newSessionId = initializing ? crypto.randomUUID() : "";
  const ctx: Ctx = {
    env: c.env,
    // Reads a tool makes side by side reach D1 in one batch.
    d1: coalescingReads(c.env.DB),
    tenantId: caller.identity.tenantId,
    actorId: caller.identity.actorId,
    actorName: caller.identity.actorName,
    operator: caller.identity.operator,
    sessionId: newSessionId || (legacy ? sessionId : ""),
    clock: systemClock,
    meter: caller.meter,
    waitUntil: (p) => c.executionCtx.waitUntil(p),
  };
  const options: ServeOptions = {
    era: legacy ? "legacy" : "modern",
    listing,
    surface,
    origin: new URL(c.req.url).origin,
    stateKey: await requestStateKey(c.env),
    fixtures: fixturesServed(c.env, c.req.raw),
  };
  if (!legacy) {
    const mismatch = paramHeadersRefused(c, body, tools);
    if (mismatch) return c.json(jsonRpcError(-32020, `Header mismatch: ${mismatch}`, id), 400);
  }
  if (!legacy) return timed("dispatch", () => serveModern(c, body, () => timed("build", () => buildServer(ctx, tools, options)), inboxBus(c.env, ctx.tenantId, ctx.actorId)));

  // The client's own session id, so its hook events find this session (a stateless request has none to map to).
  const clientSession = clientSessionOf((name) => c.req.header(name));
  // Only an established session has a run; an initialize request or a session-less call has none.
  if (caller.session) {
    if (clientSession && caller.session.clientSessionId !== clientSession) await rememberClientSession(ctx, clientSession);
    Object.assign(ctx, bindSessionRun(ctx, caller.session, runSeriesKey));
    options.logLevel = (caller.session.logLevel ?? null) as LoggingLevel | null;
    options.saveLogLevel = (level) => sessionStub(c.env, sessionId).setLogLevel(level);
    options.saveSubscription = async (uri, on) => void (await sessionStub(c.env, sessionId).subscribe(uri, on));
    options.sessionElicits = caller.session.elicits === true && isToolCall(body);
    // No real tool samples: only the conformance fixtures ask a session's client for a completion.
    options.sessionSamples = options.fixtures === true && caller.session.samples === true && isToolCall(body);
  }

  const server = await timed("build", () => buildServer(ctx, tools, options));
  const asks = options.sessionElicits || options.sessionSamples;
  if (asks) {
    await replayInitialize(server, caller.session!.protocolVersion, { ...(options.sessionElicits ? { elicitation: { form: {} } } : {}), ...(options.sessionSamples ? { sampling: {} } : {}) });
  }
  // Notifications (progress, log messages) and questions ride an SSE response; a plain call keeps plain JSON.
  const transport = new BoundedTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsStream(body, options) });
  if (asks) relayQuestions(transport, c.env, sessionId);
  await server.connect(transport);
  guardToolCalls(transport);
  const response = await timed("dispatch", () => transport.handleRequest(c.req.raw, { parsedBody: body }));
  if (!initializing || !response.ok) return response;

  const params = (
    (Array.isArray(body) ? body : [body]).find((m) => m?.method === "initialize") as {
      params?: { protocolVersion?: string; clientInfo?: { name?: string; version?: string }; capabilities?: unknown };
    }
  ).params;
  await sessionStub(c.env, newSessionId).open({
    tenantId: caller.identity.tenantId,
    actorId: caller.identity.actorId,
    createdAt: new Date().toISOString(),
    protocolVersion: params?.protocolVersion ?? "",
    clientName: params?.clientInfo?.name ?? "",
    clientVersion: params?.clientInfo?.version ?? "",
    elicits: declaresFormElicitation(params?.capabilities),
    samples: declaresSampling(params?.capabilities),
  });
  if (clientSession) await rememberClientSession(ctx, clientSession);
  const withSession = new Response(response.body, response);
  withSession.headers.set("Mcp-Session-Id", newSessionId);
  return withSession;
});

/** Why a read-only credential may not make this call (a write tool), or null. */
function writeWithReadOnlyGrant(c: Context<AppEnv>, body: unknown): string | null {
  if (!isObject(body) || body.method !== "tools/call" || !isObject(body.params) || typeof body.params.name !== "string") return null;
  const def = findTool(body.params.name);
  if (!def || def.annotations.readOnly || accessOfRequest(c) !== "readonly") return null;
  return `${def.name} writes, and this access was granted read-only; sign in again and allow write access (scope ledger:write).`;
}

/** Why a 2026-07-28 tools/call's Mcp-Param-* headers do not match its arguments (SEP-2243), or null. */
function paramHeadersRefused(c: Context<AppEnv>, body: unknown, tools: readonly AnyToolDef[]): string | null {
  if (!isObject(body) || body.method !== "tools/call" || !isObject(body.params) || typeof body.params.name !== "string") return null;
  const def = surfaceNaming(tools).resolve(body.params.name);
  if (!def) return null;
  const bound = paramHeadersOf(toolListing(def).inputSchema);
  if (bound.length === 0) return null;
  return paramHeaderMismatch(bound, isObject(body.params.arguments) ? body.params.arguments : {}, (name) => c.req.header(name) ?? null);
}

/** No resource URI of this server comes near it; longer ones are refused before any lookup quotes them. */
const MAX_RESOURCE_URI = 1024;

/** The not-found answer for a resources/read whose URI is too long to be one of ours, or null. */
function overlongResourceUri(body: unknown): string | null {
  if (!isObject(body) || body.method !== "resources/read" || !isObject(body.params)) return null;
  const uri = body.params.uri;
  if (typeof uri !== "string" || uri.length <= MAX_RESOURCE_URI) return null;
  return `Resource not found: '${excerpt(uri, 100)}' is ${uri.length} characters; no resource URI here is longer than ${MAX_RESOURCE_URI}.`;
}

const isToolCall = (body: unknown): boolean => (Array.isArray(body) ? body : [body]).some((m) => isObject(m) && m.method === "tools/call");

/** A 2025-era request that may produce notifications or questions: it asked for progress, its session for log messages or answers questions. */
function wantsStream(body: unknown, options: ServeOptions): boolean {
  if (options.sessionElicits || options.sessionSamples) return true;
  if (options.fixtures && (Array.isArray(body) ? body : [body]).some((m) => isObject(m) && m.method === "tools/call" && isObject(m.params) && findFixtureTool(String(m.params.name))?.streams))
    return true;
  const progress = (Array.isArray(body) ? body : [body]).some((m) => isObject(m) && isObject(m.params) && isObject(m.params._meta) && m.params._meta.progressToken !== undefined);
  return progress || (options.logLevel != null && (Array.isArray(body) ? body : [body]).some((m) => isObject(m) && m.method === "tools/call"));
}

/**
 * 2026-07-28 requests: stateless, one server per request, answered by the SDK's own handler
 * (server/discover, the per-request envelope, Mcp-Method/Mcp-Name header checks, caching hints,
 * input_required). Legacy requests never reach it, so it refuses them rather than serving twice.
 */
async function serveModern(c: Context<AppEnv>, body: unknown, factory: () => ReturnType<typeof buildServer>, bus: ServerEventBus): Promise<Response> {
  const handler = createMcpHandler(factory, {
    // subscriptions/listen streams hear the caller's inbox bell (src/server/inbox-resource.ts).
    bus,
    legacy: "reject",
    maxRequestBodySize: MAX_MCP_BODY_BYTES,
    onerror: (err) => console.warn("mcp request refused", err.message),
  });
  return handler.fetch(c.req.raw, { parsedBody: body });
}

mcpRoutes.delete("/", async (c) => {
  const sessionId = c.req.header("Mcp-Session-Id") ?? "";
  if (!sessionId) return c.json(jsonRpcError(-32000, "Bad Request: Mcp-Session-Id header is required"), 400);
  const caller = await resolveCaller(c, sessionId);
  if (!caller.ok) return caller.response;
  await sessionStub(c.env, sessionId).end();
  return c.body(null, 204);
});

/**
 * A 2025 session's server-to-client stream: updates of the resources it subscribed to (only
 * ledger://inbox can change under a client) as notifications/resources/updated, plus keep-alives.
 * Without a session there is nothing to stream.
 */
mcpRoutes.get("/", async (c) => {
  const sessionId = c.req.header("Mcp-Session-Id") ?? "";
  if (!sessionId) {
    c.header("Allow", "POST, DELETE");
    return c.json(jsonRpcError(-32000, "Method Not Allowed: the server-to-client stream belongs to a session; initialize one (2025 revisions), or use subscriptions/listen (2026-07-28)."), 405);
  }
  const caller = await resolveCaller(c, sessionId);
  if (!caller.ok) return caller.response;
  return inboxSessionStream(c.env, sessionId, caller.identity.tenantId, caller.identity.actorId, c.req.raw.signal);
});
