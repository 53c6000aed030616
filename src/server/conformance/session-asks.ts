/**
 * The conformance suite's 2025-revision fixtures that ask the client mid-call: a completion
 * (sampling/createMessage) and form elicitations, sent on the call's stream of a session whose
 * client declared the capability, and answered through the session's object
 * (src/http/session-questions.ts), as this server's own confirmations are.
 */
import type { ElicitRequestFormParams, ServerContext } from "@modelcontextprotocol/server";
import { type FixtureTool, NO_ARGS, text } from "./fixture";

const WAIT_MS = 60_000;

const answer = (t: string) => ({ content: [text(t)] });

/** What the client answered, or why it could not be asked (no capability declared, no answer). */
async function asked(what: string, may: boolean, ask: () => Promise<string>): Promise<ReturnType<typeof answer>> {
  if (!may) return answer(`${what} not supported or error: the client did not declare it at initialize, or this request has no session to ask on.`);
  try {
    return answer(await ask());
  } catch (err) {
    return answer(`${what} not supported or error: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const elicit = (sctx: ServerContext, params: Omit<ElicitRequestFormParams, "mode">) => sctx.mcpReq.elicitInput({ mode: "form", ...params }, { relatedRequestId: sctx.mcpReq.id, timeout: WAIT_MS });

/** A fixture that asks one form (built from its arguments) and reports what came back after `prefix`. */
const elicitation = (tool: FixtureTool["tool"], prefix: string, form: (args: Record<string, unknown>) => Omit<ElicitRequestFormParams, "mode">): FixtureTool => ({
  tool,
  call: ({ args, sctx, asks }) =>
    asked("Elicitation", asks.elicitation, async () => {
      const r = await elicit(sctx, form(args));
      return `${prefix}: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`;
    }),
});

export const SESSION_ASK_TOOLS: FixtureTool[] = [
  {
    tool: {
      name: "test_sampling",
      description: "Tests server-initiated sampling (LLM completion request)",
      inputSchema: { type: "object", properties: { prompt: { type: "string", description: "The prompt to send to the LLM" } }, required: ["prompt"] },
    },
    call: ({ args, sctx, asks }) =>
      asked("Sampling", asks.sampling, async () => {
        const r = await sctx.mcpReq.requestSampling(
          { messages: [{ role: "user", content: { type: "text", text: String(args.prompt ?? "") } }], maxTokens: 100 },
          { relatedRequestId: sctx.mcpReq.id, timeout: WAIT_MS },
        );
        const first = Array.isArray(r.content) ? r.content[0] : r.content;
        return `LLM response: ${first?.type === "text" ? first.text : "No response"}`;
      }),
  },
  elicitation(
    {
      name: "test_elicitation",
      description: "Tests server-initiated elicitation (user input request)",
      inputSchema: { type: "object", properties: { message: { type: "string", description: "The message to show the user" } }, required: ["message"] },
    },
    "User response",
    (args) => ({
      message: String(args.message ?? ""),
      requestedSchema: { type: "object", properties: { response: { type: "string", description: "User's response" } }, required: ["response"] },
    }),
  ),
  elicitation({ name: "test_elicitation_sep1034_defaults", description: "Tests elicitation with default values per SEP-1034", inputSchema: NO_ARGS }, "Elicitation completed", () => ({
    message: "Please review and update the form fields with defaults",
    requestedSchema: {
      type: "object",
      properties: {
        name: { type: "string", description: "User name", default: "John Doe" },
        age: { type: "integer", description: "User age", default: 30 },
        score: { type: "number", description: "User score", default: 95.5 },
        status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
        verified: { type: "boolean", description: "Verification status", default: true },
      },
      required: [],
    },
  })),
  elicitation({ name: "test_elicitation_sep1330_enums", description: "Tests elicitation with enum schema improvements per SEP-1330", inputSchema: NO_ARGS }, "Elicitation completed", () => ({
    message: "Please select options from the enum fields",
    requestedSchema: {
      type: "object",
      properties: {
        untitledSingle: { type: "string", description: "Select one option", enum: ["option1", "option2", "option3"] },
        titledSingle: {
          type: "string",
          description: "Select one option with titles",
          oneOf: [
            { const: "value1", title: "First Option" },
            { const: "value2", title: "Second Option" },
            { const: "value3", title: "Third Option" },
          ],
        },
        legacyEnum: { type: "string", description: "Select one option (legacy)", enum: ["opt1", "opt2", "opt3"], enumNames: ["Option One", "Option Two", "Option Three"] },
        untitledMulti: { type: "array", description: "Select multiple options", minItems: 1, maxItems: 3, items: { type: "string", enum: ["option1", "option2", "option3"] } },
        titledMulti: {
          type: "array",
          description: "Select multiple options with titles",
          minItems: 1,
          maxItems: 3,
          items: {
            anyOf: [
              { const: "value1", title: "First Choice" },
              { const: "value2", title: "Second Choice" },
              { const: "value3", title: "Third Choice" },
            ],
          },
        },
      },
      required: [],
    },
  })),
];
