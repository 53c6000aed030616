/** How a tool call reaches the person behind the client: the types the context carries (src/core/confirm.ts asks). */

export interface Confirmation {
  /** Stable for the question, so the answer is found on the retry. */
  key: string;
  /** What will happen, in a sentence the person can say yes or no to. */
  message: string;
}

/**
 * What the client answered for a question, as the server saw it on this round; `unavailable`
 * when the client has no way to be asked.
 */
export type ConfirmationAnswer = "accepted" | "declined" | "unanswered" | "unavailable";

/** How a tool call reaches the client's answers; set by the server for every MCP tool call. */
export interface Confirmer {
  /** The answer this round already carries (2026-07-28 round trips), or why there is none. */
  answer(key: string): ConfirmationAnswer;
  /** Asks now and waits for the answer (2025 sessions with elicitation); absent where asking is a round trip. */
  ask?(confirmation: Confirmation): Promise<"accepted" | "declined">;
}
