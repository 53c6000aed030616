/**
 * Claude Code's hook events (an `http` hook POSTs the event's JSON here, or the command line's
 * `agent-ledger hook claude-code` relays it; docs/hooks.md has the settings), answered in Claude
 * Code's documented hook output:
 * - PreToolUse on Edit, Write, MultiEdit, NotebookEdit: `permissionDecision` deny (or ask) with a
 *   reason when the file is held; else the prior attempts as `additionalContext`.
 * - SessionStart and PostCompact: the digest as `additionalContext`.
 * - PostToolUse on the same tools: the edit noted (and logged, with log_changes=1).
 * - Stop: held once (`decision: "block"`) while edits are unlogged; PreCompact: a `systemMessage`.
 * Anything else answers `{}`.
 */
import type { Ctx } from "../../core/context";
import { digestText, judgeEdit, noteEdits, obj, repoRelativePath, sessionIdOf, str, reminderAnswer, type HookAnswer, type HookOptions, type Json, contextAnswer } from "./findings";

/** The tools whose input names a file they write. */
const EDIT_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);

export async function answerClaudeCode(ctx: Ctx, event: Json, options: HookOptions): Promise<HookAnswer> {
  const name = str(event.hook_event_name, 100);
  if (name === "PreToolUse") {
    const path = editedPath(event);
    if (!path) return {};
    const verdict = await judgeEdit(ctx, [path], options);
    if (!verdict) return {};
    if ("held" in verdict) return { hookSpecificOutput: { hookEventName: name, permissionDecision: options.onReserved, permissionDecisionReason: verdict.held } };
    return contextAnswer(name, verdict.context);
  }
  if (name === "SessionStart" || name === "PostCompact") {
    const text = await digestText(ctx);
    return contextAnswer(name, text);
  }
  if (name === "PostToolUse") {
    const path = editedPath(event);
    if (!path) return {};
    const tool = str(event.tool_name, 100);
    const logged = await noteEdits(ctx, sessionIdOf(event), [{ path, tool, changeType: tool === "Write" ? "add" : "modify" }], options);
    return contextAnswer(name, logged);
  }
  // Stop can be held once so the agent logs; compaction is only told (it cannot be held).
  if (name === "PreCompact" || name === "Stop") return reminderAnswer(ctx, event, name === "Stop" && options.holdAtStop, "block");
  return {};
}

/** The project-relative file an edit event names, or null (another tool, a file outside the project). */
function editedPath(event: Json): string | null {
  if (!EDIT_TOOLS.has(str(event.tool_name, 100))) return null;
  const input = obj(event.tool_input);
  return repoRelativePath(str(input.file_path) || str(input.notebook_path), str(event.cwd));
}
