/**
 * Cursor's agent hook events, relayed by `agent-ledger hook cursor` (Cursor runs command hooks;
 * docs/hooks.md has the `.cursor/hooks.json` to paste), answered in Cursor's documented output:
 * - sessionStart: the digest as `additional_context`.
 * - afterFileEdit (`file_path`, absolute, under one of `workspace_roots`): the edit noted for the
 *   conversation (and logged, with log_changes=1); the event has no output.
 * - stop: once per conversation turn (`loop_count` 0, status `completed`) while edits are
 *   unlogged, a `followup_message` asking the agent to log them, which Cursor sends on as the next
 *   user message; preCompact: the same reminder as `user_message`.
 * No edit is gated before it happens: Cursor's reference does not document the input of its
 * Write tool to `preToolUse`, and this adapter reads only documented fields.
 * Anything else answers `{}`.
 */
import type { Ctx } from "../../core/context";
import { digestText, noteEdits, repoRelativePath, str, unloggedReminder, type HookAnswer, type HookOptions, type Json } from "./findings";

/** Workspace roots looked at for one file: a multi-root workspace has a handful. */
const MAX_ROOTS = 10;

export async function answerCursor(ctx: Ctx, event: Json, options: HookOptions): Promise<HookAnswer> {
  const name = str(event.hook_event_name, 100);
  if (name === "sessionStart") {
    const text = await digestText(ctx);
    return text ? { additional_context: text } : {};
  }
  if (name === "afterFileEdit") {
    const path = editedPath(event);
    if (path) await noteEdits(ctx, conversationOf(event), [{ path, tool: "afterFileEdit", changeType: "modify" }], options);
    return {};
  }
  if (name === "stop") {
    if (event.loop_count !== 0 || str(event.status, 20) !== "completed" || !options.holdAtStop) return {};
    const reminder = await unloggedReminder(ctx, conversationOf(event));
    return reminder ? { followup_message: reminder } : {};
  }
  if (name === "preCompact") {
    const reminder = await unloggedReminder(ctx, conversationOf(event));
    return reminder ? { user_message: reminder } : {};
  }
  return {};
}

/** The conversation: stable across its turns, the same value sessionStart calls `session_id`. */
export const conversationOf = (event: Json): string => str(event.conversation_id, 200);

function editedPath(event: Json): string | null {
  const file = str(event.file_path);
  const roots = Array.isArray(event.workspace_roots) ? event.workspace_roots.slice(0, MAX_ROOTS) : [];
  for (const root of roots) {
    const path = repoRelativePath(file, str(root));
    if (path) return path;
  }
  return null;
}
