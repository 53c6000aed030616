/**
 * The conformance suite's multi-round-trip fixtures (2026-07-28, SEP-2322) and its stateless
 * diagnostics (SEP-2575): tools and a prompt that answer `input_required` until the client has
 * given what they ask, with request state sealed by this server's own codec (so tampered state is
 * refused before a fixture sees it), and client capabilities read from the request's envelope.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type GetPromptResult,
  type InputRequest,
  inputRequired,
  type InputRequiredResult,
  inputResponse,
  LOG_LEVEL_META_KEY,
  MissingRequiredClientCapabilityError,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { type FixtureCall, type FixtureState, type FixtureTool, NO_ARGS, text as textItem } from "./fixture";

const text = (t: string) => ({ content: [textItem(t)] });

export const ask = (message: string, field: string, type: "string" | "boolean" = "string"): InputRequest =>
  inputRequired.elicit({ message, requestedSchema: { type: "object", properties: { [field]: type === "string" ? { type: "string" as const } : { type: "boolean" as const } }, required: [field] } });

const sample = (prompt: string, maxTokens: number): InputRequest => inputRequired.createMessage({ messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens });

/** The accepted answer's field, or undefined when the response is missing, declined or not a form answer. */
export function answered(call: Pick<FixtureCall, "sctx">, key: string, field: string): unknown {
  const view = inputResponse(call.sctx.mcpReq.inputResponses, key);
  return view.kind === "elicit" && view.action === "accept" ? view.content?.[field] : undefined;
}

function sampledText(call: Pick<FixtureCall, "sctx">, key: string): string | undefined {
  const view = inputResponse(call.sctx.mcpReq.inputResponses, key);
  if (view.kind !== "sampling") return undefined;
  const content = view.result.content;
  const first = Array.isArray(content) ? content[0] : content;
  return first?.type === "text" ? first.text : undefined;
}

function rootsCount(call: Pick<FixtureCall, "sctx">, key: string): number | undefined {
  const view = inputResponse(call.sctx.mcpReq.inputResponses, key);
  return view.kind === "roots" ? view.roots.length : undefined;
}

/** This fixture's own sealed state, or undefined (none, or another fixture's). */
function stateOf(call: FixtureCall, tool: string): FixtureState | undefined {
  const state = call.sctx.mcpReq.requestState<FixtureState>();
  return state && typeof state === "object" && state.tool === tool ? state : undefined;
}

function capabilitiesOf(sctx: ServerContext): { elicitation?: unknown; sampling?: unknown } {
  return (sctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY as keyof typeof sctx.mcpReq.envelope] as { elicitation?: unknown; sampling?: unknown } | undefined) ?? {};
}

const tool = (name: string, description: string, call: (c: FixtureCall) => Promise<ReturnType<typeof text> | InputRequiredResult>): FixtureTool => ({
  tool: { name, description, inputSchema: NO_ARGS },
  call,
});

const ELICITATION = "test_input_required_result_elicitation";
const REQUEST_STATE = "test_input_required_result_request_state";
const MULTIPLE = "test_input_required_result_multiple_inputs";
const MULTI_ROUND = "test_input_required_result_multi_round";
const TAMPERED = "test_input_required_result_tampered_state";

const firstRound = async (call: FixtureCall) =>
  inputRequired({ inputRequests: { step1: ask("Step 1: What is your name?", "name") }, requestState: await call.mint({ tool: MULTI_ROUND, kind: "multi-round", round: 1 }) });

export const INPUT_REQUIRED_TOOLS: FixtureTool[] = [
  tool("test_missing_capability", "Test tool requiring sampling", async ({ sctx }) => {
    if (!capabilitiesOf(sctx).sampling) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { sampling: {} } }, "This tool needs the client's sampling capability.");
    return text("Success");
  }),
  // An answer that is missing, declined or malformed is asked for again.
  tool(ELICITATION, "MRTR: returns InputRequiredResult with elicitation request", async (call) => {
    const name = answered(call, "user_name", "name");
    return typeof name === "string" ? text(`Hello, ${name}!`) : inputRequired({ inputRequests: { user_name: ask("What is your name?", "name") } });
  }),
  tool("test_input_required_result_sampling", "MRTR: returns InputRequiredResult with sampling request", async (call) => {
    const answer = sampledText(call, "sample_request");
    return answer !== undefined ? text(`Sampling result: ${answer}`) : inputRequired({ inputRequests: { sample_request: sample("What is the capital of France?", 100) } });
  }),
  tool("test_input_required_result_list_roots", "MRTR: returns InputRequiredResult with roots/list request", async (call) => {
    const n = rootsCount(call, "roots_request");
    return n !== undefined ? text(`Found ${n} root(s)`) : inputRequired({ inputRequests: { roots_request: inputRequired.listRoots() } });
  }),
  tool(REQUEST_STATE, "MRTR: returns InputRequiredResult with requestState", async (call) => {
    if (stateOf(call, REQUEST_STATE) && answered(call, "confirm", "ok") === true) return text("state-ok: requestState validated");
    return inputRequired({ inputRequests: { confirm: ask("Please confirm", "ok", "boolean") }, requestState: await call.mint({ tool: REQUEST_STATE, kind: "request-state" }) });
  }),
  tool(MULTIPLE, "MRTR: returns InputRequiredResult with multiple input requests", async (call) => {
    const name = answered(call, "user_name", "name");
    const greeting = sampledText(call, "greeting");
    const roots = rootsCount(call, "client_roots");
    if (stateOf(call, MULTIPLE) && typeof name === "string" && greeting !== undefined && roots !== undefined) return text(`Name: ${name}; Greeting: ${greeting}; Roots: ${roots}`);
    return inputRequired({
      inputRequests: { user_name: ask("What is your name?", "name"), greeting: sample("Generate a greeting", 50), client_roots: inputRequired.listRoots() },
      requestState: await call.mint({ tool: MULTIPLE, kind: "multiple-inputs" }),
    });
  }),
  tool(MULTI_ROUND, "MRTR: multi-round InputRequiredResult workflow", async (call) => {
    const state = stateOf(call, MULTI_ROUND);
    if (state?.round === 1) {
      const name = answered(call, "step1", "name");
      if (typeof name !== "string") return firstRound(call);
      return inputRequired({
        inputRequests: { step2: ask("Step 2: What is your favorite color?", "color") },
        requestState: await call.mint({ tool: MULTI_ROUND, kind: "multi-round", round: 2, name }),
      });
    }
    const color = answered(call, "step2", "color");
    if (state?.round === 2 && typeof color === "string") return text(`Multi-round complete for ${state.name ?? "friend"} who likes ${color}`);
    return firstRound(call);
  }),
  tool(TAMPERED, "MRTR: integrity-protected requestState", async (call) => {
    if (stateOf(call, TAMPERED) && answered(call, "confirm", "ok") !== undefined) return text("integrity-ok: state verified");
    return inputRequired({ inputRequests: { confirm: ask("Please confirm", "ok", "boolean") }, requestState: await call.mint({ tool: TAMPERED, kind: "tamper-test" }) });
  }),
  tool("test_input_required_result_capabilities", "MRTR: respects client capabilities in inputRequests", async (call) => {
    const given = Object.keys(call.sctx.mcpReq.inputResponses ?? {});
    if (given.length > 0) return text(`capabilities-ok: received ${given.join(",")}`);
    const caps = capabilitiesOf(call.sctx);
    const requests: Record<string, InputRequest> = {
      ...(caps.elicitation ? { elicit_input: ask("Elicitation input", "value") } : {}),
      ...(caps.sampling ? { sample_input: sample("Sample request", 50) } : {}),
    };
    if (Object.keys(requests).length === 0) return text("No supported capabilities declared");
    return inputRequired({ inputRequests: requests, requestState: await call.mint({ tool: "test_input_required_result_capabilities", kind: "capabilities-test" }) });
  }),
  tool("test_streaming_elicitation", "Diagnostic tool validating response progress streams", async ({ sctx }) => {
    if (!capabilitiesOf(sctx).elicitation) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { elicitation: {} } }, "This tool needs the client's elicitation capability.");
    const token = sctx.mcpReq._meta?.progressToken;
    if (token !== undefined) await sctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: 50, total: 100 } });
    return text("Streaming complete");
  }),
  // Logs only when the request's envelope set a level, as every request on 2026-07-28 must.
  tool("test_logging_tool", "Diagnostic logging validator tool", async ({ sctx }) => {
    if (sctx.mcpReq.envelope?.[LOG_LEVEL_META_KEY as keyof typeof sctx.mcpReq.envelope]) {
      await sctx.mcpReq.notify({ method: "notifications/message", params: { level: "info", logger: "conformance", data: "Diagnostic trace logging activated" } });
    }
    return text("Logging evaluated");
  }),
];

/** test_input_required_result_prompt: a prompt that asks for its context before it answers. */
export const INPUT_REQUIRED_PROMPT = { name: "test_input_required_result_prompt", description: "MRTR: prompt that requires elicitation input" };

export function getInputRequiredPrompt(sctx: ServerContext): GetPromptResult | InputRequiredResult {
  const context = answered({ sctx }, "user_context", "context");
  if (typeof context === "string") return { messages: [{ role: "user", content: { type: "text", text: `Prompt with context: ${context}` } }] };
  return inputRequired({ inputRequests: { user_context: ask("What context should the prompt use?", "context") } });
}
