/**
 * The agent clients whose hook events the server answers, by the name in
 * `POST /mcp/hooks/<client>` and in `agent-ledger hook <client>`. A client is here only when its
 * hook mechanism and formats are documented (docs/hooks.md).
 */
import { answerClaudeCode } from "./claude-code";
import { answerCodex } from "./codex";
import { answerCursor } from "./cursor";
import type { HookAdapter } from "./findings";
import { answerGemini } from "./gemini";

export type { HookAnswer } from "./findings";

export const HOOK_CLIENTS: Readonly<Record<string, HookAdapter>> = {
  "claude-code": answerClaudeCode,
  codex: answerCodex,
  cursor: answerCursor,
  gemini: answerGemini,
};

/** The adapter for a client name from a URL, or null for a name that is not one of ours. */
export function hookAdapter(client: string): HookAdapter | null {
  return Object.hasOwn(HOOK_CLIENTS, client) ? HOOK_CLIENTS[client]! : null;
}
