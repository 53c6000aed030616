/**
 * Who holds the work a GitHub event is about. A check, a review or a push names a commit, a branch
 * or a pull request of a registered repository; the work on it is found three ways, most specific
 * first: a task whose code refs name that branch, commit or pull request (the claim's holder, its
 * assignee while it is in progress or in review, is told), then live path reservations covering the
 * files the commit touched (their holders). Every read is the tenant's own.
 */
import { and, eq, inArray, isNotNull, isNull, or, type SQL, sql } from "drizzle-orm";
import type { Ctx } from "../../core/context";
import { FULL_COMMIT_SHA } from "../../core/sha";
import { iso } from "../../core/time";
import { dbOf } from "../../db/client";
import { codeRefs, gitCommits, projects, tasks } from "../../db/schema";
import { patternMatches } from "../reservations/globs";
import { liveReservations } from "../reservations/model";

export type SignalCtx = Pick<Ctx, "d1" | "tenantId" | "actorId" | "clock"> & Partial<Pick<Ctx, "env" | "waitUntil">>;

/** The repository an event is about, as registered (its id, and the remote links are built from). */
export interface SignalRepository {
  id: string;
  slug: string;
  remote_url: string;
}

/** What an event names; each list is bounded here, whatever the caller passes. */
export interface WorkSubject {
  shas?: readonly string[];
  branches?: readonly string[];
  prNumbers?: readonly number[];
  /** Files the commit touched, for the reservation match. */
  files?: readonly string[];
}

export interface HeldTask {
  id: string;
  /** KEY-12 */
  ref: string;
  title: string;
}

export interface Holder {
  actorId: string;
  /** The task the work belongs to, or null for a reservation tied to no task. */
  task: HeldTask | null;
  via: "branch" | "commit" | "pr" | "paths";
  /** The reservation's pattern, for a match through reserved paths. */
  pattern?: string;
}

/** A task is held while it is being worked on or reviewed, by its assignee. */
export const HOLDING_STATUSES = ["in_progress", "in_review"] as const;
const MAX_SHAS = 30;
const MAX_BRANCHES = 5;
const MAX_PRS = 20;
const MAX_FILES = 1000;
const MAX_REFS = 200;
export const MAX_BRANCH_LENGTH = 250;
/** Shortest commit id a code ref keeps; the candidate refs are found by this prefix, then compared in full. */
const SHA_PREFIX = 7;

/** A branch as a code ref names it: `refs/heads/` dropped; anything that is no branch name is "". */
export function branchName(raw: string): string {
  const name = raw.startsWith("refs/heads/") ? raw.slice("refs/heads/".length) : raw;
  if (name === "" || name.startsWith("refs/") || name.length > MAX_BRANCH_LENGTH) return "";
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    // What git refuses in a ref name, and any space.
    if (c <= 0x20 || c === 0x7f || "~^:?*[\\".includes(name[i]!) || /\s/.test(name[i]!)) return "";
  }
  return name;
}

const distinct = <T>(list: readonly T[] | undefined, max: number, keep: (v: T) => boolean): T[] => [...new Set((list ?? []).slice(0, max * 4).filter(keep))].slice(0, max);

/** The tasks whose live code refs on the repository name one of the branches, commits or pull requests, with their holders. */
async function codeRefHolders(ctx: SignalCtx, repo: SignalRepository, shas: string[], branches: string[], prNumbers: number[]): Promise<Holder[]> {
  const c = codeRefs;
  const matches: SQL[] = [];
  // A ref written by hand may spell the branch in full.
  if (branches.length > 0) matches.push(and(eq(c.refType, "branch"), inArray(c.branch, [...branches, ...branches.map((b) => `refs/heads/${b}`)]))!);
  if (shas.length > 0) matches.push(and(eq(c.refType, "commit"), inArray(sql`substr(${c.sha}, 1, ${SHA_PREFIX})`, [...new Set(shas.map((s) => s.slice(0, SHA_PREFIX)))]))!);
  if (prNumbers.length > 0) {
    // A PR ref may carry only its URL; the URLs compared are built from the registered remote.
    const urls = prNumbers.map((n) => `${repo.remote_url}/pull/${n}`);
    matches.push(and(eq(c.refType, "pr"), or(inArray(c.prNumber, prNumbers), inArray(c.prUrl, urls)))!);
  }
  if (matches.length === 0) return [];
  const rows = await dbOf(ctx)
    .select({ task_id: tasks.id, seq: tasks.seq, title: tasks.title, key: projects.key, holder: tasks.assigneeActorId, ref_type: c.refType, sha: c.sha })
    .from(c)
    .innerJoin(tasks, and(eq(tasks.tenantId, c.tenantId), eq(tasks.id, c.objectId)))
    .innerJoin(projects, and(eq(projects.tenantId, tasks.tenantId), eq(projects.id, tasks.projectId)))
    .where(
      and(
        eq(c.tenantId, ctx.tenantId),
        eq(c.repositoryId, repo.id),
        eq(c.objectType, "task"),
        isNull(c.deletedAt),
        isNull(projects.deletedAt),
        inArray(tasks.status, [...HOLDING_STATUSES]),
        isNotNull(tasks.assigneeActorId),
        or(...matches),
      ),
    )
    .orderBy(c.createdAt, c.id)
    .limit(MAX_REFS)
    .all();
  // A commit ref may be abbreviated: it names the commit when the full id starts with it.
  return rows
    .filter((r) => r.ref_type !== "commit" || (r.sha !== null && shas.some((s) => s.startsWith(r.sha!))))
    .map((r) => ({ actorId: r.holder!, task: { id: r.task_id, ref: `${r.key}-${r.seq}`, title: r.title }, via: r.ref_type as Holder["via"] }));
}

/** The holders of live reservations covering any of the files, with the task a reservation is tied to. */
async function reservationHolders(ctx: SignalCtx, repo: SignalRepository, files: string[]): Promise<Holder[]> {
  if (files.length === 0) return [];
  const held = await liveReservations(ctx.d1, ctx.tenantId, repo.id, iso(ctx.clock.now()));
  const covering = held.filter((h) => files.some((f) => patternMatches(h.pattern, f)));
  if (covering.length === 0) return [];
  const taskIds = [...new Set(covering.flatMap((h) => (h.task_id ? [h.task_id] : [])))];
  const named = new Map<string, HeldTask>();
  if (taskIds.length > 0) {
    const rows = await dbOf(ctx)
      .select({ id: tasks.id, seq: tasks.seq, title: tasks.title, key: projects.key })
      .from(tasks)
      .innerJoin(projects, and(eq(projects.tenantId, tasks.tenantId), eq(projects.id, tasks.projectId)))
      .where(and(eq(tasks.tenantId, ctx.tenantId), inArray(tasks.id, taskIds.slice(0, 90))))
      .all();
    for (const r of rows) named.set(r.id, { id: r.id, ref: `${r.key}-${r.seq}`, title: r.title });
  }
  return covering.map((h) => ({ actorId: h.actor_id, task: (h.task_id && named.get(h.task_id)) || null, via: "paths" as const, pattern: h.pattern }));
}

/**
 * Who holds the work on what the event names, each (actor, task) once, code-ref matches first. An
 * actor may appear more than once when it holds several matching tasks; the notices say it once.
 */
export async function holdersOf(ctx: SignalCtx, repo: SignalRepository, subject: WorkSubject): Promise<Holder[]> {
  const shas = distinct(subject.shas, MAX_SHAS, (s) => FULL_COMMIT_SHA.test(s));
  const branches = distinct(subject.branches?.slice(0, MAX_BRANCHES * 4).map(branchName), MAX_BRANCHES, (b) => b !== "");
  const prNumbers = distinct(subject.prNumbers, MAX_PRS, (n) => Number.isSafeInteger(n) && n > 0);
  const files = distinct(subject.files, MAX_FILES, (f) => typeof f === "string" && f.length > 0 && f.length <= 1000);
  const found = [...(await codeRefHolders(ctx, repo, shas, branches, prNumbers)), ...(await reservationHolders(ctx, repo, files))];
  const seen = new Set<string>();
  return found.filter((h) => {
    const key = `${h.actorId}\u0000${h.task?.id ?? `paths:${h.pattern}`}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What the server knows of a commit from earlier pushes: its branch and the files it touched. */
export async function recordedCommit(ctx: SignalCtx, repositoryId: string, sha: string): Promise<{ branch: string; files: string[] } | null> {
  if (!FULL_COMMIT_SHA.test(sha)) return null;
  const row = await dbOf(ctx)
    .select({ ref: gitCommits.ref, files: gitCommits.files })
    .from(gitCommits)
    .where(and(eq(gitCommits.tenantId, ctx.tenantId), eq(gitCommits.repositoryId, repositoryId), eq(gitCommits.sha, sha)))
    .get();
  if (!row) return null;
  let files: unknown;
  try {
    files = JSON.parse(row.files);
  } catch {
    files = [];
  }
  return { branch: branchName(row.ref), files: Array.isArray(files) ? files.filter((f): f is string => typeof f === "string").slice(0, MAX_FILES) : [] };
}
