/**
 * Asking the person behind a client before a destructive or wide operation. A tool awaits
 * `confirmFirst` at the point where it would start to act; how the question travels depends on
 * the client:
 * - 2026-07-28 with form elicitation: the first round ends with an `input_required` result
 *   carrying the question, and the client's retry (with the answer and the sealed request state)
 *   runs the tool again from the top.
 * - a 2025 session whose client declared elicitation at initialize: an `elicitation/create`
 *   request on the call's SSE stream, answered by a later POST on the session (src/http/mcp.ts).
 * - any other MCP client (and every step of a compact batch): the person cannot be asked, so the
 *   call is refused unless it carries the documented `confirm: true`.
 * Callers that are not MCP clients (cron, a tool run by another tool) have no confirmer: their
 * call is the confirmation.
 */
import { z } from "zod";
import type { Ctx } from "./context";
import { ToolError } from "./errors";
import type { Confirmation, Confirmer } from "./confirmer";

/** How long a question asked on a 2025 session's stream waits for the person. */
export const CONFIRM_WAIT_MS = 5 * 60 * 1000;

/** For a client that declared no elicitation, and for the steps of a batch. */
export const CANNOT_ASK: Confirmer = { answer: () => "unavailable" };

/** The parameter a tool that asks takes (added by the registry): the confirmation for a client that cannot be asked. */
export const confirmField = z.boolean().optional().describe("true confirms this operation where the client cannot ask the person (no elicitation); a client that can ask is asked anyway.");

/** The one-question form every confirmation sends. */
export const confirmationForm = (message: string) => ({
  type: "object" as const,
  properties: { confirm: { type: "boolean" as const, title: "Go ahead", description: message } },
  required: ["confirm"],
});

/** Accepted only with an explicit yes; a decline, a cancel or a "no" in the form is a decline. */
export const answerOfForm = (action: string, content: Record<string, unknown> | undefined): "accepted" | "declined" => (action === "accept" && content?.confirm === true ? "accepted" : "declined");

/** Thrown through the registry (never enveloped) so the server can answer `input_required`. */
export class InputNeeded extends Error {
  constructor(readonly confirmation: Confirmation) {
    super(`input required: ${confirmation.key}`);
  }
}

/**
 * Whether confirmFirst could still stop this call: false for callers that are not MCP clients and
 * for a call already confirmed by `confirm: true` where nobody can be asked. Lets a tool skip the
 * work of deciding whether to ask (a GitHub request) when the answer cannot matter.
 */
export function mayAsk(ctx: Ctx): boolean {
  return ctx.confirmer !== undefined && !(ctx.confirmed && ctx.confirmer === CANNOT_ASK);
}

/**
 * Returns when the operation may go ahead; throws InputNeeded to ask in a later round,
 * `confirmation_declined` when the person said no, `confirmation_required` when nobody can be
 * asked and the call did not carry `confirm: true`. Await it before the first write.
 */
export async function confirmFirst(ctx: Ctx, confirmation: Confirmation): Promise<void> {
  const confirmer = ctx.confirmer;
  if (!confirmer) return;
  let answer = confirmer.answer(confirmation.key);
  if (answer === "unanswered" && confirmer.ask) answer = await confirmer.ask(confirmation);
  if (answer === "accepted") return;
  if (answer === "declined") {
    throw new ToolError("confirmation_declined", `Not done: the confirmation was declined (${confirmation.message})`, {
      hint: "Nothing was changed. Call again if the person changes their mind, or choose a different target.",
    });
  }
  if (answer === "unavailable") {
    if (ctx.confirmed) return;
    throw new ToolError("confirmation_required", `Not done: this needs a confirmation, and this client cannot ask the person (${confirmation.message})`, {
      hint: "Nothing was changed. Check with the person, then call again with confirm: true; or connect with a client that declares the elicitation capability, which is asked instead.",
    });
  }
  throw new InputNeeded(confirmation);
}
