/**
 * Asking the person behind a client before a destructive or wide operation (MCP 2026-07-28
 * multi round-trip requests): a tool calls `confirmFirst` at the point where it would start to
 * act; the first round ends there with an `input_required` result carrying the question, and the
 * client's retry (with the answer and the sealed request state) runs the tool again from the top.
 *
 * Only a client that declared form elicitation can be asked. For any other caller (2025-era
 * clients, nested compact steps, cron) the call itself is the confirmation, as before.
 */
import type { Ctx } from "./context";
import { ToolError } from "./errors";

export interface Confirmation {
  /** Stable for the question, so the answer is found on the retry. */
  key: string;
  /** What will happen, in a sentence the person can say yes or no to. */
  message: string;
}

/** What the client answered for a question, as the server saw it on this round. */
export type ConfirmationAnswer = "accepted" | "declined" | "unanswered";

/** How a tool call reaches the client's answers; set by the server only where asking is possible. */
export interface Confirmer {
  answer(key: string): ConfirmationAnswer;
}

/** Thrown through the registry (never enveloped) so the server can answer `input_required`. */
export class InputNeeded extends Error {
  constructor(readonly confirmation: Confirmation) {
    super(`input required: ${confirmation.key}`);
  }
}

/**
 * Returns when the operation may go ahead; throws InputNeeded to ask, or `confirmation_declined`
 * when the person said no. Call it before the first write of the operation.
 */
export function confirmFirst(ctx: Ctx, confirmation: Confirmation): void {
  if (!ctx.confirmer) return;
  const answer = ctx.confirmer.answer(confirmation.key);
  if (answer === "accepted") return;
  if (answer === "declined") {
    throw new ToolError("confirmation_declined", `Not done: the confirmation was declined (${confirmation.message})`, {
      hint: "Nothing was changed. Call again if the person changes their mind, or choose a different target.",
    });
  }
  throw new InputNeeded(confirmation);
}
