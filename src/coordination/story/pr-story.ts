/**
 * The pull request carries its own story (docs/work.md). When a pull request of a repository that
 * opted in (review_settings pr_story) is opened, reopened or pushed to, the server writes one
 * comment on it, and edits that comment on every later event: the task it delivers, the
 * decisions and change events on its files, the attempts on those files that were tried before
 * and undone, the reservations and claims involved, and whether the ledger entries it cites
 * still match the tamper-evident hash chain. No model writes it: the same ledgers give the same
 * Markdown, within GitHub's 65,536 characters (long sections end in "… and N more").
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Ctx } from "../../core/context";
import { ToolError } from "../../core/errors";
import { FULL_COMMIT_SHA } from "../../core/sha";
import { iso } from "../../core/time";
import { clip } from "../../core/text";
import { dbOf, jsonValues } from "../../db/client";
import { actors } from "../../db/schema";
import { repoKey } from "../../code/store";
import { d1Reader, verifyRows, type RowsCheck } from "../../changes/chain";
import { inferOutcomes, type PriorAttempt } from "../../changes/prior-attempts";
import { GitHubError } from "../../git/client";
import { githubFor, tenantTokenSource } from "../../git/credentials";
import { isSafeRepoPath, parseOwnerName } from "../../git/tokens";
import { pullRequestFiles } from "../../review/reactive-sessions/runner";
import { reviewSettingsFor } from "../../review/settings/model";
import { normalizeRemote, repositoryByRemote } from "../../work/repos/model";
import { liveReservations, type Reservation } from "../../work/reservations/model";
import { patternMatches } from "../../work/reservations/globs";
import { STORY_MARKER, writeStory } from "./comment";
import { eventsOnFiles, MAX_LIMIT, oneLine, provenance, type LedgerEvent, type ProvenanceEntry, type StoryTask } from "./provenance";

/** GitHub caps a comment at 65,536 characters; the story stays a little under. */
export const MAX_STORY_CHARS = 65_000;
/** Files of the pull request read (100 a page). */
const MAX_FILE_PAGES = 3;
/** Change events on the files read, newest first: enough for the story and the outcome of earlier attempts. */
const MAX_FILE_EVENTS = 1000;
/** Lines a section starts with before the story is made to fit. */
const SECTION_LINES = 50;
const LINE_CHARS = 500;
/** prior_attempts' own default: an add undone within a week is proximity_high. */
const PRIOR_WINDOW_MINUTES = 10_080;

export interface StoryPr {
  repositoryId: string;
  slug: string;
  number: number;
  headSha: string;
  files: string[];
  /** The pull request has more files than were read. */
  filesCut: boolean;
}

export interface StoryData {
  tasks: StoryTask[];
  decisions: ProvenanceEntry[];
  claims: ProvenanceEntry[];
  events: LedgerEvent[];
  undone: PriorAttempt[];
  reservations: Reservation[];
  chain: RowsCheck;
  names: Map<string, string>;
  /** Some read was cut at its bound. */
  truncated: boolean;
}

/** Reads everything the story tells from the ledgers. */
export async function gatherStory(ctx: Ctx, pr: StoryPr): Promise<StoryData> {
  const chain = await provenance(ctx, { kind: "pr", repositoryId: pr.repositoryId, number: pr.number }, MAX_LIMIT);
  const onFiles = await eventsOnFiles(ctx, pr.files, MAX_FILE_EVENTS);
  // Earlier attempts on the files, as prior_attempts infers them: each path's timeline, oldest first.
  const timelines = new Map<string, LedgerEvent[]>();
  for (const ev of [...onFiles.events].reverse()) timelines.set(ev.entity_path, [...(timelines.get(ev.entity_path) ?? []), ev]);
  const byId = new Map(onFiles.events.map((ev) => [ev.id, ev]));
  const undone = [...timelines.values()]
    .flatMap((timeline) => inferOutcomes(timeline, byId, PRIOR_WINDOW_MINUTES, "exact"))
    .filter((a) => (a.outcome === "reverted" || a.outcome === "rejected") && a.confidence !== "proximity_low")
    .sort((a, b) => b.seq - a.seq)
    .map(({ seq: _seq, ...a }) => a);
  const taskIds = new Set(chain.tasks.map((t) => t.id));
  const reservations = (await liveReservations(ctx.d1, ctx.tenantId, pr.repositoryId, iso(ctx.clock.now()))).filter(
    (r) => (r.task_id !== null && taskIds.has(r.task_id)) || pr.files.some((f) => patternMatches(r.pattern, f)),
  );
  const decisions = chain.entries.filter((x) => x.kind === "decision");
  const check = await verifyRows(d1Reader(ctx.d1), ctx.tenantId, [
    ...onFiles.events.map((ev) => ({ kind: "event" as const, id: ev.id })),
    ...decisions.map((d) => ({ kind: "decision" as const, id: d.decision_id! })),
  ]);
  const ids = [...new Set([...chain.tasks.map((t) => t.assignee_actor_id), ...reservations.map((r) => r.actor_id)].filter((id): id is string => id !== null))];
  const names = new Map(
    ids.length === 0
      ? []
      : (
          await dbOf(ctx)
            .select({ id: actors.id, name: actors.name })
            .from(actors)
            .where(and(eq(actors.tenantId, ctx.tenantId), inArray(actors.id, jsonValues(ids))))
            .all()
        ).map((a) => [a.id, a.name]),
  );
  return {
    tasks: chain.tasks,
    decisions,
    claims: chain.entries.filter((x) => x.kind === "claim"),
    events: onFiles.events,
    undone,
    reservations,
    chain: check,
    names,
    truncated: chain.truncated || onFiles.cut,
  };
}

// ---------------------------------------------------------------------------------------------
// Markdown

/**
 * Free text from the ledgers (agents and people wrote it) as inert Markdown on one line: no HTML,
 * no links or emphasis of its own, and no @mention that would ping someone on GitHub.
 */
const md = (text: string, max = 300): string =>
  oneLine(text, max)
    .replace(/[\\`*_[\]|~]/g, "\\$&")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/@(?=[A-Za-z0-9])/g, "@\u200b");
/** A path, key or id in a code span, where Markdown does nothing. */
const code = (text: string, max = 300): string => `\`${oneLine(text, max).replace(/`/g, "'")}\``;
const who = (name: string) => (name ? md(name, 100) : "someone");
/** A commit a ledger names: plain (GitHub links it) when it is hex, else quoted. */
const commitText = (sha: string) => (/^[0-9a-f]{7,64}$/i.test(sha) ? sha.slice(0, 12) : code(sha, 64));

interface Section {
  title: string;
  lines: string[];
  /** Said when there is nothing to list. */
  none: string;
}

function sections(pr: StoryPr, d: StoryData): Section[] {
  const name = (id: string | null) => (id ? who(d.names.get(id) ?? "") : "nobody");
  const keyOf = new Map(d.tasks.map((t) => [t.id, t.key]));
  const delivers = d.tasks.map((t) => `- **${md(t.key, 40)}** ${md(t.title, 200)} — ${t.status}${t.assignee_actor_id ? `, assigned to ${name(t.assignee_actor_id)}` : ""}`);
  const decisions = [...d.decisions].reverse().map((x) => `- ${x.at} ${md(x.summary, 400)} — ${who(x.actor.name)} (${code(x.decision_id ?? "", 64)})`);
  const events = d.events.map(
    (ev) =>
      `- ${ev.timestamp} ${code(ev.entity_path)} ${md(ev.change_type, 20)} by ${who(ev.actor || ev.agent)}${ev.reasoning ? `: ${md(ev.reasoning, 240)}` : ""}${ev.git_commit ? ` (${commitText(ev.git_commit)})` : ""}`,
  );
  const undone = d.undone.map(
    (a) =>
      `- ${code(a.entity_path)} ${md(a.change_type, 20)} by ${who(a.actor || a.agent)} at ${a.timestamp} — **${a.outcome}** (${a.confidence})${a.outcome_reasoning ? `: ${md(a.outcome_reasoning, 240)}` : ""}`,
  );
  const held = d.reservations.map(
    (r) =>
      `- ${code(r.pattern)} held ${r.exclusive ? "exclusively" : "shared"} by ${name(r.actor_id)} until ${r.expires_at}${r.task_id ? ` for ${md(keyOf.get(r.task_id) ?? "another task", 40)}` : ""}${r.reason ? ` — ${md(r.reason, 200)}` : ""}`,
  );
  const holding = d.tasks
    .filter((t) => t.status === "in_progress" && t.assignee_actor_id)
    .map((t) => `- **${md(t.key, 40)}** is held by ${name(t.assignee_actor_id)}${t.lease_expires_at ? ` under a lease until ${t.lease_expires_at}` : ""}`);
  const claimed = [...d.claims].reverse().map((c) => `- ${md(c.task_key ?? "a task", 40)} claimed by ${who(c.actor.name)} at ${c.at}`);
  return [
    { title: "Delivers", lines: delivers, none: "_No task is linked. Name a task key (such as PROJ-12) in the pull request's title or body to link it._" },
    { title: "Decisions", lines: decisions, none: "_No decision is linked to this pull request or logged by its tasks' claimers while they held them._" },
    { title: "Change events on its files", lines: events, none: "_The change ledger has no event on these files._" },
    { title: "Tried before and undone", lines: undone, none: "_Nothing on these files was tried before and reverted._" },
    { title: "Reservations and claims", lines: [...held, ...holding, ...claimed], none: "_No live reservation covers these files, and its tasks have no claims._" },
  ];
}

function integrity(c: RowsCheck): string {
  const legacy =
    c.unchained_legacy > 0
      ? ` ${c.unchained_legacy} older entr${c.unchained_legacy === 1 ? "y was" : "ies were"} written before the chain began and ${c.unchained_legacy === 1 ? "is" : "are"} not chained yet.`
      : "";
  if (c.first_break) return `⚠️ **The hash chain does not verify**: ${md(c.first_break.message, 300)}. Run change_verify for the whole chain.${legacy}`;
  if (c.checked === 0) return `No ledger entry is cited here, so there is nothing to check against the hash chain.${legacy}`;
  return `✅ The ${c.checked} ledger entr${c.checked === 1 ? "y" : "ies"} cited here match the tamper-evident hash chain.${legacy}`;
}

function render(pr: StoryPr, d: StoryData, parts: Section[], caps: number[]): string {
  const out = [STORY_MARKER, "### The story of this pull request", ""];
  parts.forEach((s, i) => {
    const shown = s.lines.slice(0, caps[i]).map((l) => clip(l, LINE_CHARS));
    const more = s.lines.length - shown.length;
    out.push(`#### ${s.title}${s.lines.length > 0 ? ` (${s.lines.length})` : ""}`, "", ...(s.lines.length === 0 ? [s.none] : [...shown, ...(more > 0 ? [`- … and ${more} more`] : [])]), "");
  });
  out.push("#### Ledger integrity", "", integrity(d.chain), "");
  const notes = [
    `PR #${pr.number} at ${FULL_COMMIT_SHA.test(pr.headSha) ? pr.headSha.slice(0, 12) : "an unknown head"}`,
    `${pr.files.length} file(s)${pr.filesCut ? " read (the pull request has more)" : ""}`,
    ...(d.truncated ? ["some ledger reads were cut at their bounds"] : []),
  ];
  out.push(`<sub>Written by agent-ledger from its ledgers, without a model, and edited in place on each push · ${notes.join(" · ")}</sub>`);
  return out.join("\n");
}

/**
 * The story as Markdown, within MAX_STORY_CHARS: while it is too long, the longest listed section
 * is halved (its tail becomes "… and N more"), so the same ledgers always give the same text.
 */
export function renderStory(pr: StoryPr, d: StoryData): string {
  const parts = sections(pr, d);
  const caps = parts.map((s) => Math.min(s.lines.length, SECTION_LINES));
  for (;;) {
    const body = render(pr, d, parts, caps);
    if (body.length <= MAX_STORY_CHARS) return body;
    const widest = caps.reduce((best, n, i) => (n > caps[best]! ? i : best), 0);
    if (caps[widest] === 0) return clip(body, MAX_STORY_CHARS);
    caps[widest] = Math.floor(caps[widest]! / 2);
  }
}

// ---------------------------------------------------------------------------------------------
// pull_request webhooks

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === "string" ? v : "");

const STORY_ACTIONS = new Set(["opened", "reopened", "synchronize"]);

const isNotConfigured = (err: unknown) => err instanceof ToolError && err.code === "github_not_configured";

/**
 * A pull_request delivery (opened, reopened, synchronize) for a repository whose settings opt in to
 * pr_story writes or edits the pull request's story comment. Returns a note for the delivery's
 * outcome, or null when the story does not apply. GitHub not configured, or refusing, is a note:
 * the delivery's other work stands, and the next event tries again.
 */
export async function storyPullRequestEvent(ctx: Ctx, payload: Json): Promise<string | null> {
  if (!STORY_ACTIONS.has(str(payload.action))) return null;
  const named = parseOwnerName(str(obj(payload.repository).full_name));
  if (!named) return null;
  if (!(await reviewSettingsFor(ctx, repoKey(named.owner, named.name))).prStory) return null;
  const pr = obj(payload.pull_request);
  const number = Number(payload.number ?? pr.number);
  if (!Number.isSafeInteger(number) || number < 1) return "PR story: the delivery names no pull request number";
  // html_url is only a lookup key (normalized, compared with registered remotes), never fetched.
  const remote = normalizeRemote(str(obj(payload.repository).html_url));
  const repo = remote && (await repositoryByRemote(ctx, remote));
  if (!repo) return `PR story: ${named.owner}/${named.name} is not registered (repo_register), so it has no story to tell`;
  try {
    await tenantTokenSource(ctx.env, ctx.tenantId)();
  } catch (err) {
    if (isNotConfigured(err)) return "PR story: GitHub is not configured for this tenant; no comment written";
    throw err;
  }
  const gh = githubFor(ctx.env, ctx.tenantId);
  const head = str(obj(pr.head).sha).toLowerCase();
  try {
    const listed = await pullRequestFiles(gh, { owner: repo.owner, repo: repo.name }, number, { maxPages: MAX_FILE_PAGES });
    const files = [...new Set(listed.map((f) => f.filename).filter(isSafeRepoPath))].sort();
    const story: StoryPr = { repositoryId: repo.id, slug: repo.slug, number, headSha: head, files, filesCut: listed.length >= MAX_FILE_PAGES * 100 };
    const body = renderStory(story, await gatherStory(ctx, story));
    const out = await writeStory(ctx, gh, { repositoryId: repo.id, owner: repo.owner, name: repo.name, number, headSha: head }, body);
    if (out.action === "busy") return `PR story: another delivery is writing PR #${number}'s story right now; the next event brings it up to date`;
    return `PR story: comment ${out.id} ${out.action === "unchanged" ? "already tells it (unchanged)" : out.action} on PR #${number}`;
  } catch (err) {
    if (isNotConfigured(err)) return "PR story: GitHub is not configured for this tenant; no comment written";
    if (err instanceof GitHubError) return `PR story: not written, GitHub answered ${err.status} (${clip(err.message, 200)}); the next event tries again`;
    throw err;
  }
}
