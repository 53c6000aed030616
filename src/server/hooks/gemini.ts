/**
 * Gemini CLI's hook events, relayed by `agent-ledger hook gemini` (Gemini CLI runs command hooks
 * only; docs/hooks.md has the `.gemini/settings.json` to paste), answered in its documented output:
 * - BeforeTool on `write_file` and `replace` (`tool_input.file_path`, absolute or relative to the
 *   cwd): a file someone else holds is denied (`decision: "deny"`, whose `reason` the agent reads
 *   as the tool's error). BeforeTool documents no context and no "ask", so a held file is always
 *   denied and the prior attempts come after the edit instead.
 * - AfterTool on the same tools: the edit noted (and logged, with log_changes=1), and the file's
 *   prior attempts, as `hookSpecificOutput.additionalContext`.
 * - SessionStart: the digest as `hookSpecificOutput.additionalContext`.
 * - AfterAgent (the end of a turn): held once (`decision: "deny"`, whose reason becomes the next
 *   prompt) while edits are unlogged; PreCompress: a `systemMessage`.
 * Anything else answers `{}`.
 */
import type { Ctx } from "../../core/context";
import {
  againstCwd,
  digestText,
  judgeEdit,
  noteEdits,
  obj,
  afterEditAnswer,
  repoRelativePath,
  sessionIdOf,
  str,
  reminderAnswer,
  type HookAnswer,
  type HookOptions,
  type Json,
  contextAnswer,
} from "./findings";

/** Gemini CLI's built-in tools that write a file named by `file_path`. */
const EDIT_TOOLS = new Set(["write_file", "replace"]);

export async function answerGemini(ctx: Ctx, event: Json, options: HookOptions): Promise<HookAnswer> {
  const name = str(event.hook_event_name, 100);
  if (name === "BeforeTool") {
    const path = editedPath(event);
    if (!path) return {};
    const verdict = await judgeEdit(ctx, [path], options, false);
    return verdict && "held" in verdict ? { decision: "deny", reason: verdict.held } : {};
  }
  if (name === "AfterTool") {
    const path = editedPath(event);
    if (!path) return {};
    const tool = str(event.tool_name, 100);
    const logged = await noteEdits(ctx, sessionIdOf(event), [{ path, tool, changeType: tool === "write_file" ? "add" : "modify" }], options);
    return afterEditAnswer(ctx, name, [path], logged, options);
  }
  if (name === "SessionStart") {
    const text = await digestText(ctx);
    return contextAnswer(name, text);
  }
  // An AfterAgent already running as part of a retry does not hold the agent again.
  if (name === "AfterAgent" || name === "PreCompress") return reminderAnswer(ctx, event, name === "AfterAgent" && options.holdAtStop, "deny");
  return {};
}

function editedPath(event: Json): string | null {
  if (!EDIT_TOOLS.has(str(event.tool_name, 100))) return null;
  const cwd = str(event.cwd);
  return repoRelativePath(againstCwd(str(obj(event.tool_input).file_path), cwd), cwd);
}
