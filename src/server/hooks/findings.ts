/**
 * What the ledger has to say on an agent's hook event, whichever client sent it: each client's
 * adapter (src/server/hooks/<client>.ts) reads its own event JSON into the few neutral questions
 * below and writes the answers back in its own documented output.
 * - Before an edit: denied when someone else holds a live exclusive reservation covering a file,
 *   or has claimed a task whose code refs' linked paths cover it; otherwise the prior attempts on
 *   the files that were reverted or rejected.
 * - At session start (and after compaction): the caller's digest (overseer messages first,
 *   claims and their leases, inbox, unread notices).
 * - After an edit: the files are noted for the hook's session (and, where the team turns it on,
 *   logged as change events).
 * - Before compaction and at stop: the files edited in this session that no change event of the
 *   caller's has covered since.
 *
 * Every event is the client's JSON and is untrusted: adapters read fields through obj/str, which
 * bound what they take.
 */
import type { Ctx } from "../../core/context";
import { callTool } from "../../core/call";
import { clip } from "../../core/text";
import { iso } from "../../core/time";
import { undoneAttempts } from "../../changes/prior-attempts";
import type { ChangeType } from "../../changes/vocab";
import { normalizePath, patternMatches } from "../../work/reservations/globs";
import { writeConflicts } from "../../work/reservations/model";
import { findRepositoryId } from "../../work/repos/model";
import { ToolError } from "../../core/errors";
import { findTool } from "../registry";

export type Json = Record<string, unknown>;
export const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
export const str = (v: unknown, max = 4096): string => (typeof v === "string" ? v.slice(0, max) : "");

/** The client's session id (`session_id`, bounded); edits without one are not tracked. */
export const sessionIdOf = (event: Json): string => str(event.session_id, 200);

/** Prior attempts named in one answer. */
const MAX_ATTEMPTS = 5;
/** Files one event may name (a multi-file patch): judged and noted, the rest ignored. */
export const MAX_EDIT_PATHS = 20;

export interface HookOptions {
  /** The registered repository the agent works in (the hook URL's `repository`), or "". */
  repository: string;
  /** What a reserved path gets: a denial (default), or a question to the person where the client can ask. */
  onReserved: "deny" | "ask";
  /** Log each edit as a change event (the hook URL's `log_changes=1`). */
  logChanges: boolean;
  /** At stop, hold the agent once so it logs its edits (default), or only tell (`stop=tell`). */
  holdAtStop: boolean;
}

/** A hook's answer in the client's own output format; `{}` lets the agent go on as usual. */
export type HookAnswer = Json;

/** After an edit: the prior attempts on the files (when the repository is known) and what was logged, as context. */
export async function afterEditAnswer(ctx: Ctx, name: string, paths: readonly string[], logged: string | null, options: HookOptions): Promise<HookAnswer> {
  const history = options.repository ? await priorAttempts(ctx, paths) : null;
  return contextAnswer(name, [history, logged].filter(Boolean).join("\n"));
}

/**
 * At a turn's end or before compaction: the reminder of unlogged edits, holding the agent once
 * (`hold`, with the client's own word for it) or only telling it; a hook already re-run after a hold says nothing.
 */
export async function reminderAnswer(ctx: Ctx, event: Json, hold: boolean, holdWord: "block" | "deny"): Promise<HookAnswer> {
  if (event.stop_hook_active === true) return {};
  const reminder = await unloggedReminder(ctx, sessionIdOf(event));
  if (!reminder) return {};
  return hold ? { decision: holdWord, reason: reminder } : { systemMessage: reminder };
}

/** Context for the model in the shape Claude Code, Codex and Gemini CLI share; nothing to say is `{}`. */
export const contextAnswer = (hookEventName: string, text: string | null | undefined): HookAnswer => (text ? { hookSpecificOutput: { hookEventName, additionalContext: text } } : {});

/** One client's adapter: its event in, its documented output back. */
export type HookAdapter = (ctx: Ctx, event: Json, options: HookOptions) => Promise<HookAnswer>;

/**
 * The edited file as a path from the repository root: clients send absolute paths (or paths
 * relative to their working directory) and the working directory, which is the project's root
 * where the hook settings live.
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

/** A path as the client wrote it, made absolute against its working directory when it is relative. */
export function againstCwd(filePath: string, cwd: string): string {
  const drive = /[A-Za-z]/.test(filePath.charAt(0)) && filePath.charAt(1) === ":";
  if (!filePath || filePath.startsWith("/") || filePath.startsWith("\\") || drive) return filePath;
  return `${cwd}/${filePath}`;
}

/** The verdict before an edit: held by someone else (the reason says who and why), context to read first, or nothing. */
export type EditVerdict = { held: string } | { context: string } | null;

/**
 * Judges an edit of `paths` (repository-relative). `withHistory: false` skips the prior attempts,
 * for clients that cannot add context before a tool runs (their adapters give it after the edit).
 */
export async function judgeEdit(ctx: Ctx, paths: readonly string[], options: HookOptions, withHistory = true): Promise<EditVerdict> {
  const files = paths.slice(0, MAX_EDIT_PATHS);
  if (!options.repository || files.length === 0) return null;
  let repositoryId: string;
  try {
    repositoryId = await findRepositoryId(ctx, options.repository);
  } catch (err) {
    if (err instanceof ToolError && err.code === "not_found") return null;
    throw err;
  }
  const held = await writeConflicts(ctx.d1, ctx.tenantId, repositoryId, ctx.actorId, files, iso(ctx.clock.now()));
  if (held.length > 0) {
    const { path, held: h } = held[0]!;
    const holder = await actorName(ctx, h.actor_id);
    return {
      held:
        `${path} is reserved by ${holder} (${h.pattern}, until ${h.expires_at})${h.reason ? `: ${clip(h.reason, 200)}` : ""}. ` +
        "Edit something else, ask them to release it (handoff_create), or wait for the lease to run out; path_reservations lists who holds what.",
    };
  }
  const claims = await claimsInFlight(ctx, repositoryId);
  for (const path of files) {
    const claimed = claims.find((r) => patternMatches(r.pattern, path));
    if (!claimed) continue;
    const holder = await actorName(ctx, claimed.actor_id);
    return {
      held:
        `${path} belongs to ${claimed.ref} (${clip(claimed.title, 120)}), claimed by ${holder} until ${claimed.lease_expires_at} (its code covers ${claimed.pattern}). ` +
        "Work elsewhere, or ask them (handoff_create, or comment_add on the task) before you change it.",
    };
  }
  if (!withHistory) return null;
  const context = await priorAttempts(ctx, files);
  return context ? { context } : null;
}

/** The changes to these files that were reverted or rejected, as a note for the agent, or null. */
export async function priorAttempts(ctx: Ctx, paths: readonly string[]): Promise<string | null> {
  const files = paths.slice(0, MAX_EDIT_PATHS);
  if (files.length === 0) return null;
  const attempts = await undoneAttempts(ctx, files, MAX_ATTEMPTS);
  if (attempts.length === 0) return null;
  const lines = attempts.map(
    (a) => `- ${a.timestamp} ${a.agent || "someone"} ${a.change_type} (${a.outcome}): ${clip(a.reasoning, 200)}${a.outcome_reasoning ? ` — ${clip(a.outcome_reasoning, 200)}` : ""}`,
  );
  return `agent-ledger: earlier changes to ${files.join(", ")} were undone; read why before you repeat them (prior_attempts has the detail):\n${lines.join("\n")}`;
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
export async function digestText(ctx: Ctx): Promise<string | null> {
  const result = await callTool(findTool("whoami")!, ctx, {});
  if (result.isError) return null;
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
  return lines.join("\n");
}

/** One file an edit touched, with the client's tool and the change it amounts to. */
export interface EditedFile {
  path: string;
  tool: string;
  changeType: ChangeType;
}

/**
 * Notes the edited files for the hook's session (`session` bounded by the adapter; edits without
 * one are not tracked) and, with `logChanges`, logs each as a change event. Answers the note for
 * the agent when something was logged, else null.
 */
export async function noteEdits(ctx: Ctx, session: string, edits: readonly EditedFile[], options: HookOptions): Promise<string | null> {
  const files = edits.slice(0, MAX_EDIT_PATHS);
  if (!session || files.length === 0) return null;
  const now = iso(ctx.clock.now());
  await ctx.d1.batch(
    files.map((e) =>
      ctx.d1
        .prepare(
          `INSERT INTO hook_edits (tenant_id, actor_id, session_id, path, tool, edited_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (tenant_id, actor_id, session_id, path) DO UPDATE SET tool = excluded.tool, edited_at = excluded.edited_at`,
        )
        .bind(ctx.tenantId, ctx.actorId, session, e.path, e.tool.slice(0, 100), now),
    ),
  );
  if (!options.logChanges) return null;
  const logged: string[] = [];
  for (const e of files) {
    const result = await callTool(findTool("log_change")!, ctx, {
      entity_path: e.path,
      change_type: e.changeType,
      reasoning: `${e.tool} of ${e.path}, recorded by the after-edit hook (say why with log_change when it matters).`,
      ...(options.repository ? { project: options.repository } : {}),
      // Outside an MCP session the client's own session id still ties the change to the session's edits.
      ...(ctx.sessionId ? {} : { session_id: session }),
    });
    if (!result.isError) logged.push(e.path);
  }
  if (logged.length === 0) return null;
  return `agent-ledger logged this edit of ${logged.join(", ")} as ${logged.length === 1 ? "a change event" : "change events"}.`;
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

/** The reminder to log this session's unlogged edits, or null when nothing is owed. */
export async function unloggedReminder(ctx: Ctx, session: string): Promise<string | null> {
  if (!session) return null;
  const paths = await unloggedEdits(ctx, session);
  if (paths.length === 0) return null;
  const shown = paths.slice(0, 50).join(", ") + (paths.length > 50 ? " and more" : "");
  return `agent-ledger: you edited ${shown} in this session and logged no change for ${paths.length === 1 ? "it" : "them"}. Record what changed and why with log_change (one call per file, or a changeset_id to group them) before the context is lost.`;
}

/** Claimed tasks' linked paths looked at per edit: a repository's claims in flight, not its history. */
const MAX_CLAIMED_LINKS = 500;

/** The linked paths of tasks someone else holds (in progress, lease live) in this repository. */
async function claimsInFlight(ctx: Ctx, repositoryId: string): Promise<{ ref: string; title: string; actor_id: string; lease_expires_at: string; pattern: string }[]> {
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
  return rows.results;
}
