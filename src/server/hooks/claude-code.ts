/**
 * Claude Code's hook events, answered by the server itself (an `http` hook POSTs the event's JSON
 * here; docs/hooks.md has the settings). Each answer is Claude Code's documented hook output:
 * - PreToolUse on a file edit: denied (or asked, where the team sets it so) when someone else holds
 *   a live exclusive reservation covering the file, or has claimed a task whose code refs' linked
 *   paths cover it; otherwise the prior attempts on the file that were reverted or rejected, as
 *   context for the agent.
 * - SessionStart and PostCompact: the caller's digest (overseer messages first, claims and their
 *   leases, inbox, unread notices) as context.
 * - PostToolUse on a file edit: the edit is noted for the hook's session (and, where the team turns
 *   it on, logged as a change event); PreCompact and Stop remind the agent of the files it edited in
 *   this session that no change event of its own has covered since.
 * Any other event, or an edit outside the registered repository, answers `{}`: go on as usual.
 *
 * The event is the client's JSON and is untrusted: every field is read defensively and bounded.
 */
import type { Ctx } from "../../core/context";
import { callTool } from "../../core/call";
import { clip } from "../../core/text";
import { iso } from "../../core/time";
import { undoneAttempts } from "../../changes/prior-attempts";
import { normalizePath, patternMatches } from "../../work/reservations/globs";
import { writeConflicts } from "../../work/reservations/model";
import { findRepositoryId } from "../../work/repos/model";
import { ToolError } from "../../core/errors";
import { findTool } from "../registry";

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown, max = 4096): string => (typeof v === "string" ? v.slice(0, max) : "");

/** The tools whose input names a file they write. */
const EDIT_TOOLS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);
/** Prior attempts named in one answer. */
const MAX_ATTEMPTS = 5;

export interface HookOptions {
  /** The registered repository the agent works in (the hook URL's `repository`), or "". */
  repository: string;
  /** What a reserved path gets: a denial (default), or a question to the person. */
  onReserved: "deny" | "ask";
  /** Log each edit as a change event (the hook URL's `log_changes=1`). */
  logChanges: boolean;
  /** At Stop, hold the agent once so it logs its edits (default), or only tell (`stop=tell`). */
  holdAtStop: boolean;
}

/** A hook's answer: Claude Code's JSON output; `{}` lets the agent go on as usual. */
export type HookAnswer = Json;

export async function answerHook(ctx: Ctx, event: Json, options: HookOptions): Promise<HookAnswer> {
  const name = str(event.hook_event_name, 100);
  if (name === "PreToolUse") return beforeEdit(ctx, event, options);
  if (name === "SessionStart" || name === "PostCompact") return digest(ctx, name);
  if (name === "PostToolUse") return afterEdit(ctx, event, options);
  if (name === "PreCompact" || name === "Stop") return unloggedReminder(ctx, event, name === "Stop" && options.holdAtStop);
  return {};
}

/**
 * The edited file as a path from the repository root: the client sends absolute paths and its
 * working directory, which is the project's root where the hook settings live.
 */
export function repoRelativePath(filePath: string, cwd: string): string | null {
  if (!filePath || !cwd) return null;
  // A loop, not /[\\/]+$/: that pattern retries from every slash of a long run (quadratic on caller text).
  let end = cwd.length;
  while (end > 0 && (cwd[end - 1] === "/" || cwd[end - 1] === "\\")) end--;
  const file = filePath.replaceAll("\\", "/");
  const root = cwd.slice(0, end).replaceAll("\\", "/");
  if (!file.startsWith(`${root}/`)) return null;
  const rel = file.slice(root.length + 1);
  if (rel === "" || rel.split("/").some((part) => part === ".." || part === "." || part === "")) return null;
  try {
    return normalizePath(rel);
  } catch {
    return null;
  }
}

/** The project-relative file an edit event names, or null (another tool, a file outside the project). */
function editedPath(event: Json): string | null {
  if (!EDIT_TOOLS.has(str(event.tool_name, 100))) return null;
  const input = obj(event.tool_input);
  return repoRelativePath(str(input.file_path) || str(input.notebook_path), str(event.cwd));
}

async function beforeEdit(ctx: Ctx, event: Json, options: HookOptions): Promise<HookAnswer> {
  if (!options.repository) return {};
  const path = editedPath(event);
  if (!path) return {};
  let repositoryId: string;
  try {
    repositoryId = await findRepositoryId(ctx, options.repository);
  } catch (err) {
    if (err instanceof ToolError && err.code === "not_found") return {};
    throw err;
  }
  const held = await writeConflicts(ctx.d1, ctx.tenantId, repositoryId, ctx.actorId, [path], iso(ctx.clock.now()));
  if (held.length > 0) {
    const h = held[0]!.held;
    const holder = await actorName(ctx, h.actor_id);
    const reason =
      `${path} is reserved by ${holder} (${h.pattern}, until ${h.expires_at})${h.reason ? `: ${clip(h.reason, 200)}` : ""}. ` +
      "Edit something else, ask them to release it (handoff_create), or wait for the lease to run out; path_reservations lists who holds what.";
    return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: options.onReserved, permissionDecisionReason: reason } };
  }
  const claimed = await claimCovering(ctx, repositoryId, path);
  if (claimed) {
    const holder = await actorName(ctx, claimed.actor_id);
    const reason =
      `${path} belongs to ${claimed.ref} (${clip(claimed.title, 120)}), claimed by ${holder} until ${claimed.lease_expires_at} (its code covers ${claimed.pattern}). ` +
      "Work elsewhere, or ask them (handoff_create, or comment_add on the task) before you change it.";
    return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: options.onReserved, permissionDecisionReason: reason } };
  }
  const attempts = await undoneAttempts(ctx, [path], MAX_ATTEMPTS);
  if (attempts.length === 0) return {};
  const lines = attempts.map(
    (a) => `- ${a.timestamp} ${a.agent || "someone"} ${a.change_type} (${a.outcome}): ${clip(a.reasoning, 200)}${a.outcome_reasoning ? ` — ${clip(a.outcome_reasoning, 200)}` : ""}`,
  );
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      additionalContext: `agent-ledger: earlier changes to ${path} were undone; read why before you repeat them (prior_attempts has the detail):\n${lines.join("\n")}`,
    },
  };
}

async function actorName(ctx: Ctx, actorId: string): Promise<string> {
  const row = await ctx.d1.prepare("SELECT name FROM actors WHERE tenant_id = ? AND id = ?").bind(ctx.tenantId, actorId).first<{ name: string }>();
  return row?.name ?? actorId;
}

interface Digest {
  actor?: { name?: string };
  open_tasks?: { ref: string; title: string; status: string; lease_expires_at: string | null }[];
  inbox?: { count: number };
  handoffs_waiting?: { count: number };
  notifications?: { unread_count: number; items: { kind: string; summary: string }[] };
}

/** The caller's whoami, as a few lines of context: what a person interrupting them said comes first. */
async function digest(ctx: Ctx, hookEventName: string): Promise<HookAnswer> {
  const result = await callTool(findTool("whoami")!, ctx, {});
  if (result.isError) return {};
  const d = result.structuredContent as Digest;
  const notices = d.notifications?.items ?? [];
  const overseer = notices.filter((n) => n.kind === "overseer");
  const lines: string[] = [];
  for (const n of overseer) lines.push(`OVERSEER (read this first): ${clip(n.summary, 500)}`);
  lines.push(`agent-ledger: you are ${d.actor?.name ?? ctx.actorName}.`);
  const tasks = d.open_tasks ?? [];
  if (tasks.length > 0) {
    lines.push("Your open tasks:");
    for (const t of tasks.slice(0, 10)) lines.push(`- ${t.ref} ${clip(t.title, 120)} (${t.status}${t.lease_expires_at ? `, lease until ${t.lease_expires_at}` : ""})`);
  }
  const inbox = d.inbox?.count ?? 0;
  const waiting = d.handoffs_waiting?.count ?? 0;
  if (inbox > 0 || waiting > 0) lines.push(`Inbox: ${inbox} handoff(s), ${waiting} waiting on you (inbox reads them).`);
  const others = notices.filter((n) => n.kind !== "overseer");
  if (others.length > 0) {
    lines.push(`Unread notifications (${d.notifications?.unread_count ?? others.length}):`);
    for (const n of others.slice(0, 5)) lines.push(`- ${n.kind}: ${clip(n.summary, 200)}`);
  }
  return { hookSpecificOutput: { hookEventName, additionalContext: lines.join("\n") } };
}

/** The client's session id, bounded; edits without one are not tracked. */
const sessionOf = (event: Json): string => str(event.session_id, 200);

async function afterEdit(ctx: Ctx, event: Json, options: HookOptions): Promise<HookAnswer> {
  const path = editedPath(event);
  const session = sessionOf(event);
  if (!path || !session) return {};
  const tool = str(event.tool_name, 100);
  await ctx.d1
    .prepare(
      `INSERT INTO hook_edits (tenant_id, actor_id, session_id, path, tool, edited_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, actor_id, session_id, path) DO UPDATE SET tool = excluded.tool, edited_at = excluded.edited_at`,
    )
    .bind(ctx.tenantId, ctx.actorId, session, path, tool, iso(ctx.clock.now()))
    .run();
  if (!options.logChanges) return {};
  const logged = await callTool(findTool("log_change")!, ctx, {
    entity_path: path,
    change_type: tool === "Write" ? "add" : "modify",
    reasoning: `${tool} of ${path}, recorded by the PostToolUse hook (say why with log_change when it matters).`,
    ...(options.repository ? { project: options.repository } : {}),
  });
  return logged.isError ? {} : { hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: `agent-ledger logged this edit of ${path} as a change event.` } };
}

/** Files edited in this hook session with no change event of the caller's on them since. */
async function unloggedEdits(ctx: Ctx, session: string): Promise<string[]> {
  // Hand SQL: an anti-join on the change ledger by path and time.
  const rows = await ctx.d1
    .prepare(
      `SELECT h.path FROM hook_edits h
       WHERE h.tenant_id = ? AND h.actor_id = ? AND h.session_id = ?
         AND NOT EXISTS (SELECT 1 FROM events e WHERE e.tenant_id = h.tenant_id AND e.actor_id = h.actor_id AND e.entity_path = h.path AND e.timestamp >= h.edited_at)
       ORDER BY h.edited_at LIMIT 51`,
    )
    .bind(ctx.tenantId, ctx.actorId, session)
    .all<{ path: string }>();
  return rows.results.map((r) => r.path);
}

async function unloggedReminder(ctx: Ctx, event: Json, hold: boolean): Promise<HookAnswer> {
  const session = sessionOf(event);
  // A Stop hook that already made the agent go on once does not hold it again.
  if (!session || event.stop_hook_active === true) return {};
  const paths = await unloggedEdits(ctx, session);
  if (paths.length === 0) return {};
  const shown = paths.slice(0, 50).join(", ") + (paths.length > 50 ? " and more" : "");
  const reminder = `agent-ledger: you edited ${shown} in this session and logged no change for ${paths.length === 1 ? "it" : "them"}. Record what changed and why with log_change (one call per file, or a changeset_id to group them) before the context is lost.`;
  // Stop can be held once so the agent logs; compaction is only told (it cannot be held).
  return hold ? { decision: "block", reason: reminder } : { systemMessage: reminder };
}

/** Claimed tasks' linked paths looked at per edit: a repository's claims in flight, not its history. */
const MAX_CLAIMED_LINKS = 500;

/**
 * A task someone else holds (in progress, lease live) whose code refs' linked paths in this
 * repository cover the file, or null.
 */
async function claimCovering(ctx: Ctx, repositoryId: string, path: string): Promise<{ ref: string; title: string; actor_id: string; lease_expires_at: string; pattern: string } | null> {
  // Hand SQL: a join over links, code refs, tasks and projects the memory and claims rooms share.
  const rows = await ctx.d1
    .prepare(
      `SELECT p.key || '-' || t.seq AS ref, t.title, t.assignee_actor_id AS actor_id, t.lease_expires_at, mp.pattern
       FROM memory_paths mp
       JOIN code_refs cr ON cr.tenant_id = mp.tenant_id AND cr.id = mp.object_id AND cr.object_type = 'task' AND cr.deleted_at IS NULL
       JOIN tasks t ON t.tenant_id = cr.tenant_id AND t.id = cr.object_id
       JOIN projects p ON p.tenant_id = t.tenant_id AND p.id = t.project_id
       WHERE mp.tenant_id = ? AND mp.object_type = 'code_ref' AND mp.repository_id = ?
         AND t.status = 'in_progress' AND t.assignee_actor_id IS NOT NULL AND t.assignee_actor_id <> ? AND t.lease_expires_at > ?
       LIMIT ?`,
    )
    .bind(ctx.tenantId, repositoryId, ctx.actorId, iso(ctx.clock.now()), MAX_CLAIMED_LINKS)
    .all<{ ref: string; title: string; actor_id: string; lease_expires_at: string; pattern: string }>();
  return rows.results.find((r) => patternMatches(r.pattern, path)) ?? null;
}
