import { isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage, type JSONRPCResponse, type Transport } from "@modelcontextprotocol/server";
import { sessionStub } from "../durable/session";
import type { Env } from "../env";
import { CONFIRM_WAIT_MS } from "../core/confirm";

/**
 * Questions a 2025-era server asks its client (elicitation/create before a destructive call) and
 * the answers that come back. The question rides the asking call's SSE stream; the client posts
 * its answer as a new request on the session, which any isolate may receive, so the answer goes
 * through the session's Durable Object to the call that waits for it.
 */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether an initialize's capabilities declare form elicitation (an empty object is form, the capability's first meaning). */
export function declaresFormElicitation(capabilities: unknown): boolean {
  const elicitation = isObject(capabilities) ? capabilities.elicitation : undefined;
  return isObject(elicitation) && (elicitation.form !== undefined || Object.keys(elicitation).length === 0);
}

/** Whether an initialize's capabilities declare sampling (sampling/createMessage). */
export const declaresSampling = (capabilities: unknown): boolean => isObject(capabilities) && isObject(capabilities.sampling);

// A message with a method is a request or notification: answering that first spares every call the
// SDK's schema checks, which build a whole validation error for each message they reject.
const isResponse = (m: unknown): m is JSONRPCResponse => isObject(m) && !("method" in m) && (isJSONRPCResultResponse(m as JSONRPCMessage) || isJSONRPCErrorResponse(m as JSONRPCMessage));

/** A body made only of JSON-RPC responses: a client answering the server's questions. */
export const isAnswerBody = (body: unknown): body is JSONRPCResponse | JSONRPCResponse[] => (Array.isArray(body) ? body.length > 0 && body.every(isResponse) : isResponse(body));

/** Hands each answer to the call waiting for it; false when one matched no open question. */
export async function deliverAnswers(env: Env, sessionId: string, body: JSONRPCResponse | JSONRPCResponse[]): Promise<boolean> {
  const stub = sessionStub(env, sessionId);
  const delivered = await Promise.all((Array.isArray(body) ? body : [body]).map((answer) => stub.deliverAnswer(String(answer.id), JSON.stringify(answer))));
  return delivered.every(Boolean);
}

/**
 * Sends this call's server-to-client requests under ids unique to the session (each per-request
 * server numbers its own from 0, so two calls of one session would collide) and feeds each answer
 * back to the SDK under the id it used. A question nobody answers in time, or whose wait is lost,
 * comes back as an error, so the asking call ends rather than hangs.
 */
export function relayQuestions(transport: Transport, env: Env, sessionId: string): void {
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    if (!isJSONRPCRequest(message)) return send(message, options);
    const stub = sessionStub(env, sessionId);
    const wireId = `question-${crypto.randomUUID()}`;
    if (!(await stub.expectAnswer(wireId, CONFIRM_WAIT_MS))) throw new Error("too many questions are waiting on this session");
    const settle = (text: string | null) => {
      const answer: unknown = text === null ? null : JSON.parse(text);
      const reply: JSONRPCMessage = isResponse(answer)
        ? ({ ...answer, id: message.id } as JSONRPCMessage)
        : { jsonrpc: "2.0", id: message.id, error: { code: -32001, message: "No answer came back for the question." } };
      transport.onmessage?.(reply);
    };
    stub.awaitAnswer(wireId).then(settle, (err: unknown) => {
      console.warn("lost the wait for an answer", err);
      settle(null);
    });
    await send({ ...message, id: wireId }, options);
  };
}
