/**
 * What a connection's surface holds and how to reach what it does not: the refusal for a call to
 * a tool that exists elsewhere, and the server instructions, which name only what the client can
 * call. Both come from the surface the request asked for (toolsets, readonly, compact mode).
 */
import type { AnyToolDef } from "../core/define-tool";
import { excerpt, ToolError } from "../core/errors";
import { findBySeedName, findTool, selectTools } from "./registry";
import type { Surface } from "../core/context";

export interface SurfaceView extends Surface {
  /** ?mode=compact: every tool is an op of query (reads) or execute (writes). */
  compact: boolean;
}

/** The toolsets a connection asked for, as it would write them in ?toolsets=. */
const askedToolsets = (view: SurfaceView) => (view.toolsets.length > 0 ? [...view.toolsets] : ["default"]);

/** How to add a toolset to this connection, in the two ways the route reads it. */
export function enableHint(view: SurfaceView, toolset: string): string {
  const list = [...askedToolsets(view), toolset].join(",");
  return `reconnect with ?toolsets=${list} in the server URL (or the header X-MCP-Toolsets: ${list}); ?toolsets=all adds every toolset`;
}

/**
 * The refusal for a tools/call naming a tool this server has but this surface does not list, or
 * null when the name is not a tool at all (the protocol's own error answers that).
 */
export function offSurfaceError(name: string, view: SurfaceView): ToolError | null {
  const bySeed = findBySeedName(name);
  const def = findTool(name) ?? bySeed;
  if (!def) return null;
  // A seed's name is answered under the tool it means (seed 003's `query` is docs_query).
  const quoted = excerpt(bySeed ? def.name : name, 64);
  const reasons: string[] = bySeed ? [`'${excerpt(name, 64)}' is the seed's name for ${def.name}`] : [];
  const fixes: string[] = [];
  const inToolsets = selectTools({ toolsets: view.toolsets, readonly: false }).includes(def);
  if (!inToolsets) {
    reasons.push(`'${quoted}' is in the ${def.toolset} toolset, which this connection did not ask for`);
    fixes.push(enableHint(view, def.toolset));
    if (bySeed) fixes.push(`?toolsets=${def.toolset} alone lists it as '${excerpt(name, 64)}', as the seed does`);
  }
  if (view.readonly && !def.annotations.readOnly) {
    reasons.push(`'${quoted}' writes, and this connection is read-only`);
    fixes.push("connect without ?readonly=1 (and without the header X-MCP-Readonly) to write");
  }
  if (view.compact) {
    reasons.push(`in compact mode '${quoted}' is an op, not a tool`);
    fixes.push(
      `call ${def.annotations.readOnly ? `query with {"steps":[{"op":"${quoted}","params":{…}}]}` : `execute with {"operations":[{"op":"${quoted}","params":{…}}]}`}, or connect without ?mode=compact`,
    );
  }
  return new ToolError("tool_not_on_surface", `${reasons.join("; ")}.`, { hint: `To use it, ${fixes.join("; ")}.` });
}

/** One part of the instructions, kept when every tool it names is on the surface. */
interface Part {
  needs: readonly string[];
  /** Left out when these are on the surface too: a fuller part says it. */
  unless?: readonly string[];
  text: string;
}

const PARTS: readonly Part[] = [
  { needs: [], text: "agent-ledger is the team's shared memory and coordination point." },
  { needs: ["whoami"], text: "Call whoami first in every run: it returns you, your open tasks, your inbox, your unread notifications and open mentions, and what changed since you were last seen." },
  { needs: ["project_brief"], text: "project_brief orients you on a project." },
  { needs: ["task_claim", "task_update"], text: "task_claim takes work under a lease; task_update moves it (done is gated)." },
  { needs: ["task_query"], text: "task_query lists tasks (state: ready finds work to take)." },
  { needs: ["handoff_create", "inbox"], text: "handoff_create carries questions and reviews between actors; inbox reads yours (ack after act)." },
  { needs: ["inbox"], unless: ["handoff_create"], text: "inbox reads the handoffs addressed to you (ack after act)." },
  { needs: ["decision_log"], text: "decision_log records decisions." },
  { needs: ["decision_query"], text: "decision_query finds what was decided." },
  { needs: ["knowledge_search"], text: "knowledge_search before you redo research." },
  { needs: ["knowledge_write"], text: "knowledge_write what you learn." },
  { needs: ["search"], text: "search finds any object by keyword." },
  { needs: ["notification_query", "comment_query"], text: "notification_query reads your notifications (mentions among them); comment_query reads a thread." },
  { needs: ["guide"], text: "guide explains more." },
  { needs: ["feature_request_create"], text: "When this server gets in your way, file it with feature_request_create (never include secrets)." },
  { needs: ["prior_attempts", "blame"], text: "Change ledger: before editing an entity, call prior_attempts (and blame) on it." },
  {
    needs: ["log_change"],
    text: "After every meaningful change, call log_change with the entity_path, change_type, diff and your reasoning (why, not what), using one changeset_id per feature or task.",
  },
  { needs: ["log_change", "prior_attempts"], text: "Never re-apply a change that prior_attempts shows was reverted without logging a supersede." },
  { needs: [], text: "Results use the envelope { ok: true, … } or { ok: false, error: { code, message, hint, retryable } }; follow the hint." },
];

/** Parts for what the surface leaves out: the toolset that has it and how to add it, by toolset rather than tool name. */
const ABSENT: readonly { toolset: string; needs: string; text: string }[] = [
  {
    toolset: "collab",
    needs: "notification_query",
    text: "Your notifications and mentions (notification_query, notification_mark_read) and comment threads (comment_query) are in the collab toolset",
  },
  { toolset: "feedback", needs: "feature_request_create", text: "When this server gets in your way, file it through the feedback toolset (never include secrets)" },
];

const built = new Map<string, string>();

/** The server instructions for a surface: only tools it can call, and how to add the rooms it lacks. */
export function instructionsFor(view: SurfaceView): string {
  const key = `${[...view.toolsets].sort().join(",")}|${view.readonly ? 1 : 0}|${view.compact ? 1 : 0}`;
  let text = built.get(key);
  if (text === undefined) {
    text = render(view, new Set(selectTools(view).map((t: AnyToolDef) => t.name)));
    built.set(key, text);
  }
  return text;
}

function render(view: SurfaceView, names: ReadonlySet<string>): string {
  const lines = PARTS.filter((p) => p.needs.every((n) => names.has(n)) && !(p.unless?.every((n) => names.has(n)) ?? false)).map((p) => p.text);
  for (const a of ABSENT) {
    // Absent because of the toolsets, not because the surface is read-only.
    if (names.has(a.needs) || (view.readonly && !findTool(a.needs)!.annotations.readOnly)) continue;
    lines.splice(lines.length - 1, 0, `${a.text}: to add it, ${enableHint(view, a.toolset)}.`);
  }
  if (view.compact) {
    lines.splice(1, 0, 'This is compact mode: each tool named here is an op; run reads through query and writes through execute ({"op": name, "params": {…}}); describe lists them all.');
  }
  return lines.join("\n");
}
