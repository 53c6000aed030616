/**
 * OpenAI Codex's hook events, relayed by `agent-ledger hook codex` (Codex runs command hooks only;
 * docs/hooks.md has the `.codex/hooks.json` to paste), answered in Codex's documented output:
 * - PreToolUse on `apply_patch` (Codex's file edits; the patch is `tool_input.command`): a file of
 *   the patch that someone else holds is denied (`permissionDecision: "deny"`). Codex does not
 *   honour "ask" or context before a tool, so a held file is always denied and the prior attempts
 *   come after the edit instead.
 * - PostToolUse on `apply_patch`: the patch's files noted (and logged, with log_changes=1), and
 *   their prior attempts, as `additionalContext`.
 * - SessionStart (every source, `compact` included): the digest as `additionalContext`.
 * - Stop: held once (`decision: "block"`, whose reason Codex sends on as the next prompt) while
 *   edits are unlogged; PreCompact: a `systemMessage`.
 * Anything else answers `{}`.
 */
import type { Ctx } from "../../core/context";
import {
  againstCwd,
  digestText,
  judgeEdit,
  MAX_EDIT_PATHS,
  noteEdits,
  obj,
  afterEditAnswer,
  repoRelativePath,
  sessionIdOf,
  str,
  reminderAnswer,
  type EditedFile,
  type HookAnswer,
  type HookOptions,
  type Json,
  contextAnswer,
} from "./findings";

/** A patch larger than this is read only this far (its file headers come first in practice). */
const MAX_PATCH_CHARS = 256 * 1024;

export async function answerCodex(ctx: Ctx, event: Json, options: HookOptions): Promise<HookAnswer> {
  const name = str(event.hook_event_name, 100);
  if (name === "PreToolUse") {
    const paths = patchedFiles(event).map((f) => f.path);
    const verdict = await judgeEdit(ctx, paths, options, false);
    if (!verdict || !("held" in verdict)) return {};
    return { hookSpecificOutput: { hookEventName: name, permissionDecision: "deny", permissionDecisionReason: verdict.held } };
  }
  if (name === "PostToolUse") {
    const files = patchedFiles(event);
    if (files.length === 0) return {};
    const logged = await noteEdits(ctx, sessionIdOf(event), files, options);
    return afterEditAnswer(
      ctx,
      name,
      files.map((f) => f.path),
      logged,
      options,
    );
  }
  if (name === "SessionStart") {
    const text = await digestText(ctx);
    return contextAnswer(name, text);
  }
  if (name === "Stop" || name === "PreCompact") return reminderAnswer(ctx, event, name === "Stop" && options.holdAtStop, "block");
  return {};
}

/**
 * The project-relative files an `apply_patch` call writes, read from the patch's file headers
 * (`*** Add File: `, `*** Update File: `, `*** Delete File: `, `*** Move to: `); paths in a patch
 * are relative to the session's cwd. Line by line with plain prefix tests: no regex on the patch.
 */
export function patchedFiles(event: Json): EditedFile[] {
  if (str(event.tool_name, 100) !== "apply_patch") return [];
  const patch = str(obj(event.tool_input).command, MAX_PATCH_CHARS);
  const cwd = str(event.cwd);
  const out: EditedFile[] = [];
  const seen = new Set<string>();
  const headers: [string, EditedFile["changeType"]][] = [
    ["*** Add File: ", "add"],
    ["*** Update File: ", "modify"],
    ["*** Delete File: ", "delete"],
    ["*** Move to: ", "add"],
  ];
  let start = 0;
  while (start < patch.length && out.length < MAX_EDIT_PATHS) {
    let end = patch.indexOf("\n", start);
    if (end < 0) end = patch.length;
    const line = patch.slice(start, end).trimEnd();
    start = end + 1;
    if (!line.startsWith("*** ")) continue;
    for (const [prefix, changeType] of headers) {
      if (!line.startsWith(prefix)) continue;
      const path = repoRelativePath(againstCwd(line.slice(prefix.length).trim(), cwd), cwd);
      if (path && !seen.has(path)) {
        seen.add(path);
        out.push({ path, tool: "apply_patch", changeType });
      }
      break;
    }
  }
  return out;
}
