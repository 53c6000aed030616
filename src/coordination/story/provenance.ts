/**
 * Provenance: from one starting point (a task, a path, a commit or a pull request) the chain of
 * what led to it and what came of it, read from the ledgers this server already keeps:
 *
 *   claim (task activity) → decisions → change events → commits → review verdicts → CI results
 *
 * How the pieces are linked (docs/coordination.md: Provenance):
 * - tasks ↔ code: the code refs of a task (commits, branches, pull requests; the pull_request
 *   webhook links a PR to the tasks whose keys its title or body names);
 * - a pull request ↔ its commits: the heads its pull_request deliveries carried, the commits pushed
 *   to its head branch, and the heads its reactive reviews looked at;
 * - change events: the commit they name (git_commit, back-filled by the push webhook), a changeset
 *   named after the task key, or logged by one of the task's claimers in the task's project while
 *   the task was claimed (first claim until done);
 * - decisions: a code ref to one of the chain's commits or pull requests, or logged by a claimer in
 *   the task's project while the task was claimed;
 * - review verdicts: the task's review handoffs that were answered, and reactive review sessions
 *   that ended on one of the commits or pull requests;
 * - CI: check_run, check_suite and workflow_run deliveries stored in webhook_deliveries whose
 *   head_sha is one of the chain's commits (nothing new is recorded for CI; a payload that was too
 *   large to keep, or older than the deliveries' retention, is not there to read).
 *
 * A task or pull request start takes in everything of its tasks; a commit or path start keeps to
 * that commit or path (its events, its commits, their reviews and checks) plus its tasks' claims,
 * decisions and review verdicts. Every read is bounded; `truncated` says when something was cut.
 */
import { and, asc, desc, eq, gte, inArray, isNotNull, isNull, lt, lte, or, sql, type SQL } from "drizzle-orm";
import type { Ctx } from "../../core/context";
import { iso } from "../../core/time";
import { clip } from "../../core/text";
import { dbOf, jsonValues } from "../../db/client";
import { activity, actors, codeRefs, decisions, gitCommits, handoffs, projects, repositories, reviewSessions, tasks, webhookDeliveries } from "../../db/schema";
import { e, eventFields, toEvent, type EventRowRaw, type EventWithSeq } from "../../changes/events";
import { cleanText } from "../../git/untrusted";
import { codeRefFields, type CodeRef } from "../../work/repos/model";

export const ENTRY_KINDS = ["claim", "decision", "change", "commit", "pr", "review", "ci"] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

export interface ProvenanceEntry {
  kind: EntryKind;
  at: string;
  actor: { id: string | null; name: string };
  summary: string;
  task_id: string | null;
  task_key: string | null;
  decision_id: string | null;
  decision_title: string | null;
  event_id: string | null;
  entity_path: string | null;
  change_type: string | null;
  sha: string | null;
  repository: string | null;
  pr_number: number | null;
  verdict: string | null;
  check_name: string | null;
  conclusion: string | null;
  url: string | null;
}

export type ProvenanceStart =
  | { kind: "task"; ref: string }
  | { kind: "path"; repositoryId: string; path: string }
  | { kind: "commit"; sha: string; repositoryId: string | null }
  | { kind: "pr"; repositoryId: string; number: number };

export interface StoryTask {
  id: string;
  key: string;
  project_id: string;
  project_key: string;
  title: string;
  status: string;
  assignee_actor_id: string | null;
  lease_expires_at: string | null;
  done_at: string | null;
}

export interface Provenance {
  entries: ProvenanceEntry[];
  /** Entries found per kind (before `limit`). */
  counts: Record<EntryKind, number>;
  /** Some read hit its bound, or there were more entries than `limit`. */
  truncated: boolean;
  tasks: StoryTask[];
  /** The change events found, for callers that need more than an entry says (the PR story). */
  events: LedgerEvent[];
}

export const MAX_LIMIT = 500;
/** Rows one read takes at most (one more tells whether it was cut). */
const MAX_ROWS = 500;
const MAX_TASKS = 50;
const MAX_COMMITS = 200;
const MAX_PRS = 50;
/** Branches whose pushed commits are read (one query each). */
const MAX_BRANCHES = 20;
/** Stored deliveries looked through per read (newest first): the JSON payloads are read, so the scan is bounded. */
const MAX_DELIVERIES = 1000;
/** git_commits looked through for the commits that touched a path. */
const MAX_COMMITS_SCANNED = 2000;
/** Short SHAs matched against recorded commits per statement (two bound parameters each, under D1's 100). */
const SHORT_SHA_CHUNK = 40;
/** Lengths a commit may be named by: an abbreviation of 7 up to a full SHA-1 or SHA-256. */
const SHA_LENGTHS = Array.from({ length: 58 }, (_, i) => i + 7);
const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

const EMPTY: Omit<ProvenanceEntry, "kind" | "at" | "actor" | "summary"> = {
  task_id: null,
  task_key: null,
  decision_id: null,
  decision_title: null,
  event_id: null,
  entity_path: null,
  change_type: null,
  sha: null,
  repository: null,
  pr_number: null,
  verdict: null,
  check_name: null,
  conclusion: null,
  url: null,
};

/** Text read from a row or a payload, made safe to show: cleaned, on one line, clipped. */
export const oneLine = (text: unknown, max: number): string =>
  clip(
    cleanText(typeof text === "string" ? text : "")
      .replace(/\s+/g, " ")
      .trim(),
    max,
  );

const prKey = (repositoryId: string, n: number) => `${repositoryId}#${n}`;
const isFull = (sha: string) => FULL_SHA.test(sha);

interface Repo {
  id: string;
  slug: string;
  default_branch: string;
}

interface Pr {
  repositoryId: string;
  number: number;
}

/** What the walk has found so far; entries are made from it at the end. */
class Walk {
  readonly tasks = new Map<string, StoryTask>();
  readonly repos = new Map<string, Repo>();
  /** Commits by SHA (lower case, full or abbreviated), with the repository when known. */
  readonly commits = new Map<string, string | null>();
  readonly prs = new Map<string, Pr>();
  readonly branches = new Map<string, { repositoryId: string; branch: string }>();
  readonly entries: ProvenanceEntry[] = [];
  readonly events = new Map<string, LedgerEvent>();
  readonly actorIds = new Set<string>();
  truncated = false;

  constructor(
    readonly ctx: Ctx,
    /** Whether the tasks' own commits, pull requests and events are in scope (a task or pull request start). */
    readonly wide: boolean,
  ) {}

  /** Rows of a bounded read: one more than MAX_ROWS was asked for, to know whether it was cut. */
  bounded<T>(rows: T[], max = MAX_ROWS): T[] {
    if (rows.length > max) this.truncated = true;
    return rows.slice(0, max);
  }

  addCommit(sha: string, repositoryId: string | null): void {
    const key = sha.toLowerCase();
    if (this.commits.has(key)) {
      if (repositoryId && !this.commits.get(key)) this.commits.set(key, repositoryId);
      return;
    }
    if (this.commits.size >= MAX_COMMITS) {
      this.truncated = true;
      return;
    }
    this.commits.set(key, repositoryId);
  }

  addPr(repositoryId: string, number: number): void {
    if (this.prs.has(prKey(repositoryId, number))) return;
    if (this.prs.size >= MAX_PRS) {
      this.truncated = true;
      return;
    }
    this.prs.set(prKey(repositoryId, number), { repositoryId, number });
  }

  push(kind: EntryKind, at: string, actor: { id: string | null; name?: string }, summary: string, fields: Partial<ProvenanceEntry>): void {
    if (actor.id) this.actorIds.add(actor.id);
    this.entries.push({ ...EMPTY, ...fields, kind, at, actor: { id: actor.id, name: actor.name ?? "" }, summary });
  }

  taskKey(id: string | null): string | null {
    return id ? (this.tasks.get(id)?.key ?? null) : null;
  }

  slug(repositoryId: string | null): string | null {
    return repositoryId ? (this.repos.get(repositoryId)?.slug ?? null) : null;
  }
}

/** The SQL set of every abbreviation (7 characters up) of the given SHAs, for an indexed IN. */
const shaPrefixes = (shas: readonly string[]): SQL =>
  sql`(SELECT DISTINCT substr(s.value, 1, n.value) FROM json_each(${JSON.stringify(shas)}) s, json_each(${JSON.stringify(SHA_LENGTHS)}) n WHERE n.value <= length(s.value))`;

// ---------------------------------------------------------------------------------------------
// Reads

async function loadTasks(w: Walk, ids: readonly string[]): Promise<void> {
  const fresh = [...new Set(ids)].filter((id) => !w.tasks.has(id));
  if (fresh.length === 0) return;
  const room = MAX_TASKS - w.tasks.size;
  if (fresh.length > room) w.truncated = true;
  if (room <= 0) return;
  const rows = await dbOf(w.ctx)
    .select({
      id: tasks.id,
      seq: tasks.seq,
      project_id: tasks.projectId,
      project_key: projects.key,
      title: tasks.title,
      status: tasks.status,
      assignee_actor_id: tasks.assigneeActorId,
      lease_expires_at: tasks.leaseExpiresAt,
      done_at: tasks.doneAt,
    })
    .from(tasks)
    .innerJoin(projects, and(eq(projects.tenantId, tasks.tenantId), eq(projects.id, tasks.projectId)))
    .where(and(eq(tasks.tenantId, w.ctx.tenantId), inArray(tasks.id, jsonValues(fresh.slice(0, room)))))
    .orderBy(asc(tasks.id))
    .all();
  for (const r of rows) w.tasks.set(r.id, { ...r, key: `${r.project_key}-${r.seq}` });
}

async function loadRepos(w: Walk, ids: readonly (string | null)[]): Promise<void> {
  const fresh = [...new Set(ids.filter((id): id is string => !!id && !w.repos.has(id)))];
  if (fresh.length === 0) return;
  const rows = await dbOf(w.ctx)
    .select({ id: repositories.id, slug: repositories.slug, default_branch: repositories.defaultBranch })
    .from(repositories)
    .where(and(eq(repositories.tenantId, w.ctx.tenantId), inArray(repositories.id, jsonValues(fresh))))
    .all();
  for (const r of rows) w.repos.set(r.id, r);
}

type RefRow = CodeRef;

/** Code refs of an object type matching commits (any abbreviation) or pull requests of the walk. */
async function refsTo(w: Walk, objectType: "task" | "decision", shas: readonly string[], prs: readonly Pr[]): Promise<RefRow[]> {
  if (shas.length === 0 && prs.length === 0) return [];
  const rows = await dbOf(w.ctx)
    .select(codeRefFields)
    .from(codeRefs)
    .where(
      and(
        eq(codeRefs.tenantId, w.ctx.tenantId),
        eq(codeRefs.objectType, objectType),
        isNull(codeRefs.deletedAt),
        or(
          shas.length > 0 ? inArray(codeRefs.sha, shaPrefixes(shas)) : undefined,
          prs.length > 0
            ? and(eq(codeRefs.refType, "pr"), inArray(sql`${codeRefs.repositoryId} || '#' || ${codeRefs.prNumber}`, jsonValues(prs.map((p) => prKey(p.repositoryId, p.number)))))
            : undefined,
        ),
      ),
    )
    .orderBy(asc(codeRefs.createdAt), asc(codeRefs.id))
    .limit(MAX_ROWS + 1)
    .all();
  return w.bounded(rows as RefRow[]);
}

/** A task's own code refs: its commits, branches and pull requests. */
async function taskRefs(w: Walk): Promise<RefRow[]> {
  if (w.tasks.size === 0) return [];
  const rows = await dbOf(w.ctx)
    .select(codeRefFields)
    .from(codeRefs)
    .where(and(eq(codeRefs.tenantId, w.ctx.tenantId), eq(codeRefs.objectType, "task"), inArray(codeRefs.objectId, jsonValues([...w.tasks.keys()])), isNull(codeRefs.deletedAt)))
    .orderBy(asc(codeRefs.createdAt), asc(codeRefs.id))
    .limit(MAX_ROWS + 1)
    .all();
  return w.bounded(rows as RefRow[]);
}

const wd = webhookDeliveries;

/**
 * The newest stored deliveries of some events, payloads that parse only: a bounded subquery, so
 * the JSON of at most MAX_DELIVERIES payloads is read whatever the filter outside it.
 */
function recentDeliveries(w: Walk, events: readonly string[], repository: string | null) {
  return dbOf(w.ctx)
    .select({ id: wd.deliveryId, event: wd.event, at: wd.receivedAt, payload: wd.payload })
    .from(wd)
    .where(and(eq(wd.tenantId, w.ctx.tenantId), inArray(wd.event, [...events]), repository ? sql`${wd.repository} = ${repository} COLLATE NOCASE` : undefined, sql`json_valid(${wd.payload})`))
    .orderBy(desc(wd.receivedAt))
    .limit(MAX_DELIVERIES)
    .as("d");
}

interface PullDelivery {
  number: number;
  head_sha: string | null;
  head_ref: string | null;
  repository: string | null;
  at: string;
  sender: string | null;
}

/** What the stored pull_request deliveries of a repository (or all, by head) say about its pull requests. */
async function pullDeliveries(w: Walk, repository: string | null, match: { numbers?: number[]; heads?: string[] }): Promise<PullDelivery[]> {
  const d = recentDeliveries(w, ["pull_request"], repository);
  const j = (path: string) => sql`json_extract(${d.payload}, ${path})`;
  const rows = await dbOf(w.ctx)
    .select({
      number: sql<number>`coalesce(${j("$.number")}, ${j("$.pull_request.number")})`,
      head_sha: sql<string | null>`${j("$.pull_request.head.sha")}`,
      head_ref: sql<string | null>`${j("$.pull_request.head.ref")}`,
      repository: sql<string | null>`${j("$.repository.full_name")}`,
      at: d.at,
      sender: sql<string | null>`${j("$.sender.login")}`,
    })
    .from(d)
    .where(
      or(
        match.numbers?.length ? inArray(sql`coalesce(${j("$.number")}, ${j("$.pull_request.number")})`, jsonValues(match.numbers)) : undefined,
        match.heads?.length ? inArray(sql`lower(${j("$.pull_request.head.sha")})`, jsonValues(match.heads)) : undefined,
      ),
    )
    .orderBy(asc(d.at))
    .limit(MAX_ROWS + 1)
    .all();
  return w.bounded(rows).map((r) => ({
    number: Number(r.number),
    head_sha: typeof r.head_sha === "string" && isFull(r.head_sha.toLowerCase()) ? r.head_sha.toLowerCase() : null,
    head_ref: typeof r.head_ref === "string" && r.head_ref.length <= 255 ? r.head_ref : null,
    at: r.at,
    sender: typeof r.sender === "string" ? oneLine(r.sender, 100) : null,
    repository: typeof r.repository === "string" ? r.repository.slice(0, 200) : null,
  }));
}

interface CommitRow {
  repository_id: string;
  sha: string;
  ref: string;
  message: string;
  author_name: string;
  committed_at: string;
  files: string;
}

const commitFields = {
  repository_id: gitCommits.repositoryId,
  sha: gitCommits.sha,
  ref: gitCommits.ref,
  message: gitCommits.message,
  author_name: gitCommits.authorName,
  committed_at: gitCommits.committedAt,
  files: gitCommits.files,
};

/** The recorded (pushed) commits among the walk's SHAs, abbreviations resolved by range. */
async function recordedCommits(w: Walk): Promise<CommitRow[]> {
  const shas = [...w.commits.keys()];
  const full = shas.filter(isFull);
  const short = shas.filter((s) => !isFull(s));
  const db = dbOf(w.ctx);
  const out: CommitRow[] = [];
  if (full.length > 0) {
    out.push(
      ...(await db
        .select(commitFields)
        .from(gitCommits)
        .where(and(eq(gitCommits.tenantId, w.ctx.tenantId), inArray(gitCommits.sha, jsonValues(full))))
        .all()),
    );
  }
  for (let i = 0; i < short.length; i += SHORT_SHA_CHUNK) {
    const chunk = short.slice(i, i + SHORT_SHA_CHUNK);
    out.push(
      ...(await db
        .select(commitFields)
        .from(gitCommits)
        .where(and(eq(gitCommits.tenantId, w.ctx.tenantId), or(...chunk.map((s) => and(gte(gitCommits.sha, s), lt(gitCommits.sha, `${s}g`))))))
        .limit(MAX_ROWS)
        .all()),
    );
  }
  return out;
}

/** Commits pushed to a branch of a repository, newest first. */
async function branchCommits(w: Walk, repositoryId: string, branch: string): Promise<CommitRow[]> {
  const rows = await dbOf(w.ctx)
    .select(commitFields)
    .from(gitCommits)
    .where(and(eq(gitCommits.tenantId, w.ctx.tenantId), eq(gitCommits.repositoryId, repositoryId), eq(gitCommits.ref, `refs/heads/${branch}`)))
    .orderBy(desc(gitCommits.committedAt))
    .limit(MAX_COMMITS + 1)
    .all();
  return w.bounded(rows, MAX_COMMITS);
}

/** Recorded commits of a repository that touched a file, among its newest MAX_COMMITS_SCANNED. */
async function commitsTouching(w: Walk, repositoryId: string, path: string): Promise<CommitRow[]> {
  const db = dbOf(w.ctx);
  const recent = db
    .select({ sha: gitCommits.sha })
    .from(gitCommits)
    .where(and(eq(gitCommits.tenantId, w.ctx.tenantId), eq(gitCommits.repositoryId, repositoryId)))
    .orderBy(desc(gitCommits.committedAt))
    .limit(MAX_COMMITS_SCANNED);
  const rows = await db
    .select(commitFields)
    .from(gitCommits)
    .where(
      and(
        eq(gitCommits.tenantId, w.ctx.tenantId),
        eq(gitCommits.repositoryId, repositoryId),
        inArray(gitCommits.sha, recent),
        sql`CASE WHEN json_valid(${gitCommits.files}) THEN EXISTS (SELECT 1 FROM json_each(${gitCommits.files}) f WHERE f.value = ${path}) ELSE 0 END`,
      ),
    )
    .orderBy(desc(gitCommits.committedAt))
    .limit(MAX_COMMITS + 1)
    .all();
  return w.bounded(rows, MAX_COMMITS);
}

/** Files per statement in eventsOnFiles: three bound parameters each, under D1's 100. */
const FILE_CHUNK = 30;

/** A change event as the walk keeps it: with the id of the actor whose key logged it. */
export type LedgerEvent = EventWithSeq & { actor_id: string };

const ledgerEventFields = { ...eventFields, actor_id: e.actorId };
const toLedgerEvent = (r: EventRowRaw & { actor_id: string }): LedgerEvent => ({ ...toEvent(r), actor_id: r.actor_id });

/**
 * Change events on files (exactly, or a `file::symbol` in them), newest first, at most `max`.
 * Each file is an index seek: the exact path, and the range of its `::` symbols.
 */
export async function eventsOnFiles(ctx: Ctx, files: readonly string[], max: number): Promise<{ events: LedgerEvent[]; cut: boolean }> {
  const distinct = [...new Set(files)];
  if (distinct.length === 0) return { events: [], cut: false };
  const db = dbOf(ctx);
  const statements = [];
  for (let i = 0; i < distinct.length; i += FILE_CHUNK) {
    const chunk = distinct.slice(i, i + FILE_CHUNK);
    statements.push(
      db
        .select(ledgerEventFields)
        .from(e)
        .where(and(eq(e.tenantId, ctx.tenantId), or(...chunk.map((f) => or(eq(e.entityPath, f), and(gte(e.entityPath, `${f}::`), lt(e.entityPath, `${f}:;`)))))))
        .orderBy(desc(e.seq))
        .limit(max + 1),
    );
  }
  const [first, ...rest] = statements;
  const results = await db.batch([first!, ...rest]);
  const rows = (results as unknown as Array<Array<EventRowRaw & { actor_id: string }>>).flat().sort((a, b) => b.seq - a.seq);
  return { events: rows.slice(0, max).map(toLedgerEvent), cut: rows.length > max };
}

/** Who claimed each task and when, oldest first: the claim entries, and the windows events and decisions are read in. */
async function claims(w: Walk): Promise<Array<{ id: string; task_id: string; actor_id: string; at: string; summary: string }>> {
  if (w.tasks.size === 0) return [];
  const rows = await dbOf(w.ctx)
    .select({ id: activity.id, task_id: activity.objectId, actor_id: activity.actorId, at: activity.at, summary: activity.summary })
    .from(activity)
    .where(and(eq(activity.tenantId, w.ctx.tenantId), eq(activity.objectType, "task"), inArray(activity.objectId, jsonValues([...w.tasks.keys()])), eq(activity.verb, "task.claimed")))
    .orderBy(asc(activity.seq))
    .limit(MAX_ROWS + 1)
    .all();
  return w.bounded(rows);
}

interface Window {
  task: StoryTask;
  claimers: string[];
  from: string;
  to: string;
}

/** A task's claim window: from its first claim until it was done (or now), and who held it in between. */
function claimWindows(w: Walk, claimRows: Awaited<ReturnType<typeof claims>>): Window[] {
  const now = iso(w.ctx.clock.now());
  const out: Window[] = [];
  for (const task of w.tasks.values()) {
    const mine = claimRows.filter((c) => c.task_id === task.id);
    if (mine.length === 0) continue;
    out.push({ task, claimers: [...new Set(mine.map((c) => c.actor_id))], from: mine[0]!.at, to: task.done_at ?? now });
  }
  return out;
}

async function readEvents(w: Walk, windows: Window[], start: ProvenanceStart): Promise<void> {
  const db = dbOf(w.ctx);
  const where: SQL[] = [];
  // A path start keeps to the path: the other files of the commits that touched it are not its story.
  const shas = start.kind === "path" ? [] : [...w.commits.keys()];
  // `<> ''` stays a literal: the commit index is partial on it.
  if (shas.length > 0) where.push(and(sql`${e.gitCommit} <> ''`, inArray(e.gitCommit, shaPrefixes(shas)))!);
  if (w.wide) {
    const keys = [...w.tasks.values()].flatMap((t) => [t.key, t.key.toLowerCase()]);
    if (keys.length > 0) where.push(inArray(e.changesetId, [...new Set(keys)]));
    for (const win of windows) {
      where.push(
        and(inArray(e.project, [...new Set([win.task.project_key, win.task.project_key.toLowerCase()])]), inArray(e.actorId, win.claimers), gte(e.timestamp, win.from), lte(e.timestamp, win.to))!,
      );
    }
  }
  const found: LedgerEvent[] = [];
  if (where.length > 0) {
    const rows = await db
      .select(ledgerEventFields)
      .from(e)
      .where(and(eq(e.tenantId, w.ctx.tenantId), or(...where)))
      .orderBy(desc(e.seq))
      .limit(MAX_ROWS + 1)
      .all();
    found.push(...w.bounded(rows as Array<EventRowRaw & { actor_id: string }>).map(toLedgerEvent));
  }
  if (start.kind === "path") {
    const onPath = await eventsOnFiles(w.ctx, [start.path], MAX_ROWS);
    if (onPath.cut) w.truncated = true;
    found.push(...onPath.events);
  }
  for (const ev of found) w.events.set(ev.id, ev);
}

async function readDecisions(w: Walk, windows: Window[]): Promise<void> {
  const linked = await refsTo(w, "decision", [...w.commits.keys()], [...w.prs.values()]);
  const ids = new Set(linked.map((r) => r.object_id));
  const where: SQL[] = [];
  if (ids.size > 0) where.push(inArray(decisions.id, jsonValues([...ids])));
  for (const win of windows) {
    where.push(and(eq(decisions.projectId, win.task.project_id), inArray(decisions.createdBy, win.claimers), gte(decisions.createdAt, win.from), lte(decisions.createdAt, win.to))!);
  }
  if (where.length === 0) return;
  const rows = await dbOf(w.ctx)
    .select({
      id: decisions.id,
      project_id: decisions.projectId,
      title: decisions.title,
      choice: decisions.choice,
      status: decisions.status,
      created_by: decisions.createdBy,
      created_at: decisions.createdAt,
    })
    .from(decisions)
    .where(and(eq(decisions.tenantId, w.ctx.tenantId), or(...where)))
    .orderBy(asc(decisions.seq))
    .limit(MAX_ROWS + 1)
    .all();
  for (const d of w.bounded(rows)) {
    const task = windows.find((win) => win.task.project_id === d.project_id && win.claimers.includes(d.created_by) && d.created_at >= win.from && d.created_at <= win.to)?.task;
    w.push("decision", d.created_at, { id: d.created_by }, `${oneLine(d.title, 200)}: ${oneLine(d.choice, 300)} (${d.status})`, {
      decision_id: d.id,
      decision_title: oneLine(d.title, 300),
      task_id: task?.id ?? null,
      task_key: task?.key ?? null,
    });
  }
}

async function readReviews(w: Walk): Promise<void> {
  if (w.tasks.size > 0) {
    const rows = await dbOf(w.ctx)
      .select({ id: handoffs.id, task_id: handoffs.relatedTaskId, verdict: handoffs.verdict, by: handoffs.respondedBy, at: handoffs.respondedAt, title: handoffs.title })
      .from(handoffs)
      .where(
        and(
          eq(handoffs.tenantId, w.ctx.tenantId),
          inArray(handoffs.relatedTaskId, jsonValues([...w.tasks.keys()])),
          eq(handoffs.kind, "review"),
          isNotNull(handoffs.verdict),
          isNotNull(handoffs.respondedAt),
        ),
      )
      .orderBy(asc(handoffs.respondedAt), asc(handoffs.id))
      .limit(MAX_ROWS + 1)
      .all();
    for (const h of w.bounded(rows)) {
      w.push("review", h.at!, { id: h.by }, `${h.verdict}: ${oneLine(h.title, 200)}`, { task_id: h.task_id, task_key: w.taskKey(h.task_id), verdict: h.verdict });
    }
  }
  const full = [...w.commits.keys()].filter(isFull);
  const prs = [...w.prs.values()].filter((p) => w.repos.has(p.repositoryId));
  if (full.length === 0 && prs.length === 0) return;
  const s = reviewSessions;
  const rows = await dbOf(w.ctx)
    .select({
      id: s.id,
      repo: s.repo,
      pull_number: s.pullNumber,
      commit: s.commitHash,
      status: s.status,
      findings: s.findingsCount,
      risk: sql<number | null>`CASE WHEN json_valid(${s.result}) THEN json_extract(${s.result}, '$.risk_score') END`,
      url: s.reviewUrl,
      by: s.createdBy,
      at: sql<string>`coalesce(${s.finishedAt}, ${s.updatedAt})`,
    })
    .from(s)
    .where(
      and(
        eq(s.tenantId, w.ctx.tenantId),
        inArray(s.status, ["completed", "failed"]),
        or(
          full.length > 0 ? inArray(s.commitHash, jsonValues(full)) : undefined,
          prs.length > 0 ? inArray(sql`${s.repo} || '#' || ${s.pullNumber}`, jsonValues(prs.map((p) => `${w.slug(p.repositoryId)!.toLowerCase()}#${p.number}`))) : undefined,
        ),
      ),
    )
    .orderBy(asc(s.createdAt), asc(s.id))
    .limit(MAX_ROWS + 1)
    .all();
  for (const r of w.bounded(rows)) {
    const verdict = r.status === "completed" ? `${r.findings} finding(s)${typeof r.risk === "number" ? `, risk ${r.risk}` : ""}` : r.status;
    w.push("review", r.at, { id: r.by }, `reactive review ${r.id} ${r.status}: ${verdict}`, {
      sha: r.commit,
      repository: r.repo,
      pr_number: r.pull_number,
      verdict,
      url: typeof r.url === "string" && r.url.startsWith("https://") ? clip(r.url, 500) : null,
    });
  }
}

/** CI results for the walk's commits, from the stored check_run, check_suite and workflow_run deliveries. */
async function readChecks(w: Walk): Promise<void> {
  const full = [...w.commits.keys()].filter(isFull);
  if (full.length === 0) return;
  const d = recentDeliveries(w, ["check_run", "check_suite", "workflow_run"], null);
  const j = (path: string) => sql`json_extract(${d.payload}, ${path})`;
  const pick = (field: string) => sql`coalesce(${j(`$.check_run.${field}`)}, ${j(`$.workflow_run.${field}`)}, ${j(`$.check_suite.${field}`)})`;
  const rows = await dbOf(w.ctx)
    .select({
      delivery: d.id,
      event: d.event,
      received: d.at,
      object_id: sql<unknown>`${pick("id")}`,
      head_sha: sql<unknown>`${pick("head_sha")}`,
      name: sql<unknown>`coalesce(${j("$.check_run.name")}, ${j("$.workflow_run.name")}, ${j("$.check_suite.app.name")})`,
      status: sql<unknown>`${pick("status")}`,
      conclusion: sql<unknown>`${pick("conclusion")}`,
      url: sql<unknown>`coalesce(${j("$.check_run.html_url")}, ${j("$.workflow_run.html_url")})`,
      finished: sql<unknown>`coalesce(${j("$.check_run.completed_at")}, ${j("$.workflow_run.updated_at")}, ${j("$.check_suite.updated_at")})`,
      sender: sql<unknown>`${j("$.sender.login")}`,
      repository: sql<unknown>`${j("$.repository.full_name")}`,
    })
    .from(d)
    .where(inArray(sql`lower(${pick("head_sha")})`, jsonValues(full)))
    .orderBy(asc(d.at), asc(d.id))
    .limit(MAX_ROWS + 1)
    .all();
  // A check is delivered as it is created, runs and completes: the latest delivery of each stands.
  const latest = new Map<string, (typeof rows)[number]>();
  for (const r of w.bounded(rows)) latest.set(`${r.event}:${String(r.object_id)}:${String(r.name)}:${String(r.head_sha).toLowerCase()}`, r);
  for (const r of latest.values()) {
    const name = oneLine(r.name, 200) || r.event;
    const conclusion = oneLine(r.conclusion, 40) || oneLine(r.status, 40) || "unknown";
    const url = typeof r.url === "string" && r.url.startsWith("https://") ? clip(r.url, 500) : null;
    const finished = typeof r.finished === "string" && !Number.isNaN(Date.parse(r.finished)) ? iso(new Date(r.finished)) : r.received;
    w.push("ci", finished, { id: null, name: oneLine(r.sender, 100) }, `${r.event} ${name}: ${conclusion}`, {
      sha: String(r.head_sha).toLowerCase(),
      repository: oneLine(r.repository, 200) || null,
      check_name: name,
      conclusion,
      url,
    });
  }
}

/** An abbreviated SHA as the one recorded commit it abbreviates, if exactly one; else as given. */
async function fullSha(w: Walk, sha: string): Promise<string> {
  const short = sha.toLowerCase();
  if (isFull(short)) return short;
  const rows = await dbOf(w.ctx)
    .selectDistinct({ sha: gitCommits.sha })
    .from(gitCommits)
    .where(and(eq(gitCommits.tenantId, w.ctx.tenantId), gte(gitCommits.sha, short), lt(gitCommits.sha, `${short}g`)))
    .limit(2)
    .all();
  return rows.length === 1 ? rows[0]!.sha : short;
}

// ---------------------------------------------------------------------------------------------
// The walk

const KIND_ORDER = new Map(ENTRY_KINDS.map((k, i) => [k, i]));
const entryId = (x: ProvenanceEntry) => x.event_id ?? x.decision_id ?? x.sha ?? x.url ?? x.summary;

/** Sorted by time, then by the chain's order of kinds, then by id: the same ledger gives the same list. */
export function byTime(a: ProvenanceEntry, b: ProvenanceEntry): number {
  return a.at.localeCompare(b.at) || KIND_ORDER.get(a.kind)! - KIND_ORDER.get(b.kind)! || entryId(a).localeCompare(entryId(b)) || a.summary.localeCompare(b.summary);
}

/**
 * The provenance of a starting point, oldest entry first, at most `limit` entries. The start must
 * exist in the caller's tenant (the caller resolved it); what it links to is read in the same tenant only.
 */
export async function provenance(ctx: Ctx, start: ProvenanceStart, limit: number): Promise<Provenance> {
  const w = new Walk(ctx, start.kind === "task" || start.kind === "pr");

  // 1. The start itself, and the tasks it leads to.
  if (start.kind === "task") {
    const row = await dbOf(ctx)
      .select({ id: tasks.id })
      .from(tasks)
      .where(and(eq(tasks.tenantId, ctx.tenantId), eq(tasks.id, start.ref)))
      .get();
    if (row) await loadTasks(w, [row.id]);
  } else if (start.kind === "pr") {
    w.addPr(start.repositoryId, start.number);
  } else if (start.kind === "commit") {
    w.addCommit(await fullSha(w, start.sha), start.repositoryId);
  } else {
    for (const c of await commitsTouching(w, start.repositoryId, start.path)) w.addCommit(c.sha, c.repository_id);
  }
  await loadRepos(w, [start.kind === "task" ? null : start.repositoryId]);

  if (start.kind === "commit") {
    // The pull requests whose head it was, wherever they are.
    const [sha] = [...w.commits.keys()];
    const heads = sha && isFull(sha) ? await pullDeliveries(w, null, { heads: [sha] }) : [];
    const slugs = [...new Set(heads.map((h) => h.repository?.toLowerCase()).filter((s): s is string => !!s))];
    for (const slug of slugs) {
      const repo = await dbOf(ctx)
        .select({ id: repositories.id, slug: repositories.slug, default_branch: repositories.defaultBranch })
        .from(repositories)
        .where(and(eq(repositories.tenantId, ctx.tenantId), sql`${repositories.slug} = ${slug} COLLATE NOCASE`))
        .get();
      if (!repo) continue;
      w.repos.set(repo.id, repo);
      for (const h of heads) if (h.repository?.toLowerCase() === slug) w.addPr(repo.id, h.number);
    }
  }
  if (start.kind === "path") {
    // Commits the change events on the path name are part of its story too.
    const onPath = await eventsOnFiles(ctx, [start.path], MAX_ROWS);
    for (const ev of onPath.events) if (ev.git_commit.length >= 7 && /^[0-9a-f]+$/i.test(ev.git_commit)) w.addCommit(ev.git_commit, null);
  }
  if (start.kind !== "task") {
    const linked = await refsTo(w, "task", [...w.commits.keys()], [...w.prs.values()]);
    await loadTasks(
      w,
      linked.map((r) => r.object_id),
    );
  }

  // 2. What the tasks bring: their pull requests, branches and commits (a task or PR start only).
  const refs = await taskRefs(w);
  if (w.wide) {
    for (const r of refs) {
      if (r.ref_type === "commit" && r.sha) w.addCommit(r.sha, r.repository_id);
      if (r.ref_type === "pr" && r.repository_id && r.pr_number) w.addPr(r.repository_id, r.pr_number);
      if (r.ref_type === "branch" && r.repository_id && r.branch) w.branches.set(`${r.repository_id}:${r.branch}`, { repositoryId: r.repository_id, branch: r.branch });
    }
  }
  await loadRepos(w, [...refs.map((r) => r.repository_id), ...[...w.prs.values()].map((p) => p.repositoryId), ...[...w.commits.values()]]);

  // 3. Pull requests: their heads and head branches (from the stored deliveries), and the refs that link them.
  const prFirstSeen = new Map<string, { at: string; actor: { id: string | null; name?: string }; title: string; task: string | null }>();
  for (const r of refs) {
    if (r.ref_type !== "pr" || !r.repository_id || !r.pr_number) continue;
    const key = prKey(r.repository_id, r.pr_number);
    if (!prFirstSeen.has(key)) prFirstSeen.set(key, { at: r.created_at, actor: { id: r.created_by }, title: r.title, task: r.object_id });
  }
  const byRepo = new Map<string, number[]>();
  for (const p of w.prs.values()) byRepo.set(p.repositoryId, [...(byRepo.get(p.repositoryId) ?? []), p.number]);
  for (const [repositoryId, numbers] of byRepo) {
    const slug = w.slug(repositoryId);
    if (!slug) continue;
    for (const d of await pullDeliveries(w, slug, { numbers })) {
      if (!numbers.includes(d.number)) continue;
      const key = prKey(repositoryId, d.number);
      if (!prFirstSeen.has(key)) prFirstSeen.set(key, { at: d.at, actor: { id: null, name: d.sender ?? "" }, title: "", task: null });
      if (w.wide && d.head_sha) w.addCommit(d.head_sha, repositoryId);
      if (w.wide && d.head_ref) w.branches.set(`${repositoryId}:${d.head_ref}`, { repositoryId, branch: d.head_ref });
    }
  }
  // A work branch's commits are the work's; the default branch's are everyone's.
  const branches = [...w.branches.values()].filter((b) => b.branch !== w.repos.get(b.repositoryId)?.default_branch);
  if (branches.length > MAX_BRANCHES) w.truncated = true;
  for (const b of branches.slice(0, MAX_BRANCHES)) for (const c of await branchCommits(w, b.repositoryId, b.branch)) w.addCommit(c.sha, c.repository_id);
  if (w.wide) {
    // The heads a reactive review looked at belong to the pull request too.
    const prs = [...w.prs.values()].filter((p) => w.repos.has(p.repositoryId));
    if (prs.length > 0) {
      const heads = await dbOf(ctx)
        .select({ commit: reviewSessions.commitHash, repo: reviewSessions.repo, pull: reviewSessions.pullNumber })
        .from(reviewSessions)
        .where(
          and(
            eq(reviewSessions.tenantId, ctx.tenantId),
            inArray(sql`${reviewSessions.repo} || '#' || ${reviewSessions.pullNumber}`, jsonValues(prs.map((p) => `${w.slug(p.repositoryId)!.toLowerCase()}#${p.number}`))),
          ),
        )
        .limit(MAX_ROWS)
        .all();
      for (const h of heads) {
        const pr = prs.find((p) => w.slug(p.repositoryId)!.toLowerCase() === h.repo && p.number === h.pull);
        w.addCommit(h.commit, pr?.repositoryId ?? null);
      }
    }
  }

  // 4. Entries: claims, pull requests, commits; then what hangs on them.
  const claimRows = await claims(w);
  for (const c of claimRows) w.push("claim", c.at, { id: c.actor_id }, oneLine(c.summary, 300), { task_id: c.task_id, task_key: w.taskKey(c.task_id) });
  const windows = claimWindows(w, claimRows);
  for (const [key, seen] of prFirstSeen) {
    const pr = w.prs.get(key);
    if (!pr) continue;
    w.push("pr", seen.at, seen.actor, `PR #${pr.number}${seen.title ? `: ${oneLine(seen.title, 200)}` : ""}`, {
      repository: w.slug(pr.repositoryId),
      pr_number: pr.number,
      task_id: seen.task,
      task_key: w.taskKey(seen.task),
    });
  }
  const recorded = await recordedCommits(w);
  await loadRepos(
    w,
    recorded.map((c) => c.repository_id),
  );
  const shown = new Set<string>();
  for (const c of recorded) {
    if (shown.has(c.sha)) continue;
    shown.add(c.sha);
    w.push("commit", c.committed_at, { id: null, name: oneLine(c.author_name, 100) }, `${c.sha.slice(0, 12)} ${oneLine(c.message.split("\n")[0], 200)}`, {
      sha: c.sha,
      repository: w.slug(c.repository_id),
    });
  }
  // A commit a task names that no push delivered: shown where the task named it.
  for (const r of refs) {
    if (r.ref_type !== "commit" || !r.sha || !w.commits.has(r.sha.toLowerCase())) continue;
    const sha = r.sha.toLowerCase();
    if ([...shown].some((s) => s.startsWith(sha))) continue;
    shown.add(sha);
    w.push("commit", r.created_at, { id: r.created_by }, `${sha.slice(0, 12)} (named by ${w.taskKey(r.object_id) ?? "a task"}; no push of it was recorded)`, {
      sha,
      repository: w.slug(r.repository_id),
      task_id: r.object_id,
      task_key: w.taskKey(r.object_id),
    });
  }
  await readEvents(w, windows, start);
  for (const ev of [...w.events.values()].sort((a, b) => a.seq - b.seq)) {
    const task =
      [...w.tasks.values()].find((t) => t.key.toLowerCase() === ev.changeset_id.toLowerCase()) ??
      windows.find((win) => win.claimers.includes(ev.actor_id) && ev.timestamp >= win.from && ev.timestamp <= win.to && ev.project.toLowerCase() === win.task.project_key.toLowerCase())?.task;
    w.push(
      "change",
      ev.timestamp,
      { id: ev.actor_id || null, name: ev.actor || ev.agent },
      `${ev.change_type} ${oneLine(ev.entity_path, 300)}${ev.reasoning ? `: ${oneLine(ev.reasoning, 200)}` : ""}`,
      {
        event_id: ev.id,
        entity_path: ev.entity_path,
        change_type: ev.change_type,
        sha: ev.git_commit || null,
        task_id: task?.id ?? null,
        task_key: task?.key ?? null,
      },
    );
  }
  await readDecisions(w, windows);
  await readReviews(w);
  await readChecks(w);

  // 5. Names, order, bound.
  if (w.actorIds.size > 0) {
    const names = new Map(
      (
        await dbOf(ctx)
          .select({ id: actors.id, name: actors.name })
          .from(actors)
          .where(and(eq(actors.tenantId, ctx.tenantId), inArray(actors.id, jsonValues([...w.actorIds]))))
          .all()
      ).map((a) => [a.id, a.name]),
    );
    for (const x of w.entries) if (x.actor.id) x.actor.name = names.get(x.actor.id) ?? x.actor.name;
  }
  const sorted = w.entries.sort(byTime);
  const counts = Object.fromEntries(ENTRY_KINDS.map((k) => [k, 0])) as Record<EntryKind, number>;
  for (const x of sorted) counts[x.kind]++;
  return {
    entries: sorted.slice(0, limit),
    counts,
    truncated: w.truncated || sorted.length > limit,
    tasks: [...w.tasks.values()].sort((a, b) => a.key.localeCompare(b.key)),
    events: [...w.events.values()].sort((a, b) => b.seq - a.seq),
  };
}
