/**
 * The agent clients whose hook events the server answers, by the name in
 * `POST /mcp/hooks/<client>` and in `agent-ledger hook <client>`. A client is here only when its
 * hook mechanism and formats are documented (docs/hooks.md).
 */
import { answerClaudeCode } from "./claude-code";
import { answerCodex } from "./codex";
import { answerCursor, conversationOf } from "./cursor";
import { sessionIdOf, str, type HookAdapter, type Json } from "./findings";
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

/** How each client's events name the agent's session (Cursor's conversation outlives a turn's session). */
const SESSION_OF: Readonly<Record<string, (event: Json) => string>> = {
  "claude-code": sessionIdOf,
  codex: sessionIdOf,
  cursor: conversationOf,
  gemini: sessionIdOf,
};

/** The client's session id an event names (bounded), or "". */
export const hookSessionOf = (client: string, event: Json): string => (Object.hasOwn(SESSION_OF, client) ? SESSION_OF[client]!(event) : "");

/** The events by which the clients end a turn or compact their context, each in its own spelling. */
const TURN_ENDS = new Set(["Stop", "PreCompact", "AfterAgent", "PreCompress", "stop", "preCompact"]);

/** The event ends a turn or precedes a compaction: a moment to show the session's run is alive. */
export const endsTurn = (event: Json): boolean => TURN_ENDS.has(str(event.hook_event_name, 100));
