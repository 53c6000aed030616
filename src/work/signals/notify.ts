/**
 * GitHub's news for whoever holds the work (src/work/signals/model.ts finds them): a failed check,
 * a review, a review comment, a push to a task's branch. The webhook router reads the payload's
 * fields; everything here treats them as untrusted text: ids and SHAs are checked, names and
 * logins flattened to one bounded line, URLs kept only when they are plain http(s) links, and
 * nothing is fetched. Each recipient hears of an event once (a dedupe key per event and subject),
 * so a webhook processed twice tells nobody twice.
 */
import { clip } from "../../core/text";
import { FULL_COMMIT_SHA } from "../../core/sha";
import { deliverNotices, type Notice } from "../collab/inbox";
import { branchName, holdersOf, recordedCommit, type Holder, type SignalCtx, type SignalRepository, type WorkSubject } from "./model";

export const FAILING_CONCLUSIONS: readonly string[] = ["failure", "timed_out", "cancelled", "action_required", "startup_failure"];
export const REVIEW_STATES: readonly string[] = ["approved", "changes_requested", "commented"];
const MAX_URL = 200;

/** A completed check run, check suite or workflow run. */
export interface CheckSignal {
  event: "check_run" | "check_suite" | "workflow_run";
  id: number;
  /** Tells one completion of the same run from another: a workflow's attempt, a suite's update time. */
  attempt: string;
  name: string;
  conclusion: string;
  url: string;
  headSha: string;
  branch: string;
  prNumbers: readonly number[];
}

/** A submitted review (state set) or a review comment (path set) on a pull request. */
export interface ReviewSignal {
  id: number;
  state: string;
  reviewer: string;
  prNumber: number;
  headSha: string;
  branch: string;
  url: string;
  path?: string;
  line?: number | null;
}

/** A push to a branch. */
export interface PushSignal {
  branch: string;
  after: string;
  shas: readonly string[];
  pusher: string;
}

/** Payload text as one line of at most `max` characters: control, line and direction characters become spaces. */
export function oneLine(raw: string, max: number): string {
  let out = "";
  for (const ch of raw.slice(0, max * 4)) {
    const c = ch.codePointAt(0)!;
    const blank = c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || /\s/.test(ch);
    if (!blank) out += ch;
    else if (out !== "" && !out.endsWith(" ")) out += " ";
  }
  return clip(out.trimEnd(), max);
}

/** A payload URL worth showing: http(s), no credentials, short; otherwise "". Never fetched. */
export function shownUrl(raw: string): string {
  if (raw.length > MAX_URL * 2) return "";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "";
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password) return "";
  return url.href.length <= MAX_URL ? url.href : "";
}

const validId = (n: number) => Number.isSafeInteger(n) && n > 0;
const sha7 = (sha: string) => sha.slice(0, 7);

/** How the notice names the recipient's stake: its task (and how many more it holds), or its reservation. */
function stake(h: Holder, more: number): string {
  if (h.task) return `your task ${h.task.ref}${more > 0 ? ` and ${more} more` : ""}`;
  return `your reservation ${oneLine(h.pattern ?? "", 80)}`;
}

/** One notice per recipient: the first thing it holds names the notice's object (a task, else the repository). */
function noticesFor(ctx: SignalCtx, repo: SignalRepository, holders: readonly Holder[], kind: string, dedupeKey: string, summary: (stake: string) => string): Notice[] {
  const byActor = new Map<string, Holder[]>();
  for (const h of holders) {
    const held = byActor.get(h.actorId) ?? [];
    held.push(h);
    byActor.set(h.actorId, held);
  }
  return [...byActor.entries()].map(([actorId, held]) => {
    const first = held.find((h) => h.task) ?? held[0]!;
    const tasks = new Set(held.flatMap((h) => (h.task ? [h.task.id] : [])));
    return {
      actorId,
      kind,
      objectType: first.task ? "task" : "repository",
      objectId: first.task?.id ?? repo.id,
      summary: summary(stake(first, Math.max(0, tasks.size - 1))),
      fromActorId: ctx.actorId,
      dedupeKey,
    };
  });
}

const LABELS: Record<CheckSignal["event"], string> = { check_run: "Check", check_suite: "Check suite", workflow_run: "Workflow" };

/**
 * A failed check tells the holders of the work on its commit: tasks on its branch, commit or pull
 * requests, and reservations covering the files the commit touched (known when an earlier push
 * recorded it). Returns how many were told (a repeat tells nobody), or null when the check did not fail.
 */
export async function notifyCheckFailure(ctx: SignalCtx, repo: SignalRepository, s: CheckSignal): Promise<number | null> {
  if (!FAILING_CONCLUSIONS.includes(s.conclusion) || !validId(s.id)) return null;
  const sha = FULL_COMMIT_SHA.test(s.headSha) ? s.headSha : "";
  const recorded = sha ? await recordedCommit(ctx, repo.id, sha) : null;
  const branch = branchName(s.branch) || recorded?.branch || "";
  const subject: WorkSubject = { shas: sha ? [sha] : [], branches: branch ? [branch] : [], prNumbers: s.prNumbers, files: recorded?.files ?? [] };
  const holders = await holdersOf(ctx, repo, subject);
  // A check suite's payload has no page of its own: its commit's checks page, built from the registered remote.
  const url = s.event === "check_suite" ? (sha ? shownUrl(`${repo.remote_url}/commit/${sha}/checks`) : "") : shownUrl(s.url);
  const where = `${oneLine(repo.slug, 80)}${branch ? `@${clip(branch, 60)}` : ""}${sha ? ` (${sha7(sha)})` : ""}`;
  const name = oneLine(s.name, 80) || "(unnamed)";
  const attempt = oneLine(s.attempt, 40);
  const key = `${s.event === "check_run" ? "check" : s.event === "check_suite" ? "suite" : "workflow"}:${s.id}:${attempt ? `${attempt}:` : ""}${s.conclusion}`;
  const notices = noticesFor(ctx, repo, holders, "check.failed", key, (whose) => `${LABELS[s.event]} "${name}" ${s.conclusion} on ${where}, ${whose}${url ? `: ${url}` : ""}`);
  return deliverNotices(ctx, notices);
}

const REVIEW_WORDS: Record<string, string> = { approved: "approved", changes_requested: "requested changes on", commented: "commented on" };

/** The holders of the work on a pull request: tasks linked to it, on its head branch or head commit. */
const prHolders = (ctx: SignalCtx, repo: SignalRepository, s: ReviewSignal) =>
  holdersOf(ctx, repo, { prNumbers: [s.prNumber], branches: branchName(s.branch) ? [branchName(s.branch)] : [], shas: FULL_COMMIT_SHA.test(s.headSha) ? [s.headSha] : [] });

/** A submitted review tells the holders of the PR's work. Returns how many were told, or null for a state that tells nobody. */
export async function notifyReview(ctx: SignalCtx, repo: SignalRepository, s: ReviewSignal): Promise<number | null> {
  if (!REVIEW_STATES.includes(s.state) || !validId(s.id) || !validId(s.prNumber)) return null;
  const url = shownUrl(s.url) || `${repo.remote_url}/pull/${s.prNumber}`;
  const reviewer = oneLine(s.reviewer, 60) || "someone";
  const notices = noticesFor(
    ctx,
    repo,
    await prHolders(ctx, repo, s),
    "review.submitted",
    `review:${s.id}:${s.state}`,
    (whose) => `${reviewer} ${REVIEW_WORDS[s.state]} ${oneLine(repo.slug, 80)}#${s.prNumber} (review ${s.state}), ${whose}: ${url}`,
  );
  return deliverNotices(ctx, notices);
}

/** A review comment tells the holders of the PR's work. Returns how many were told, or null for a comment without an id. */
export async function notifyReviewComment(ctx: SignalCtx, repo: SignalRepository, s: ReviewSignal): Promise<number | null> {
  if (!validId(s.id) || !validId(s.prNumber)) return null;
  const url = shownUrl(s.url) || `${repo.remote_url}/pull/${s.prNumber}`;
  const reviewer = oneLine(s.reviewer, 60) || "someone";
  const path = oneLine(s.path ?? "", 120);
  const at = path ? ` at ${path}${s.line && validId(s.line) ? `:${s.line}` : ""}` : "";
  const notices = noticesFor(
    ctx,
    repo,
    await prHolders(ctx, repo, s),
    "review.comment",
    `review-comment:${s.id}`,
    (whose) => `${reviewer} commented on ${oneLine(repo.slug, 80)}#${s.prNumber}${at}, ${whose}: ${url}`,
  );
  return deliverNotices(ctx, notices);
}

/**
 * A push to a branch or commits a task's code refs name tells the task's holder. Reserved paths are
 * left to the reservations' own push notice (paths.pushed), so nobody hears of one push twice for them.
 */
export async function notifyTaskPush(ctx: SignalCtx, repo: SignalRepository, s: PushSignal): Promise<number> {
  const branch = branchName(s.branch);
  // A deleted branch "moves" to the zero commit: nothing was pushed.
  if (!branch || !FULL_COMMIT_SHA.test(s.after) || /^0+$/.test(s.after)) return 0;
  const shas = s.shas.filter((sha) => FULL_COMMIT_SHA.test(sha));
  const holders = (await holdersOf(ctx, repo, { branches: [branch], shas: [...shas, s.after] })).filter((h) => h.task);
  const pusher = oneLine(s.pusher, 60) || "someone";
  const commits = shas.length === 0 ? "" : shas.length === 1 ? " 1 commit" : ` ${shas.length} commits`;
  const notices = noticesFor(
    ctx,
    repo,
    holders,
    "task.code_pushed",
    `task-push:${clip(branch, 100)}:${s.after}`,
    (whose) => `${pusher} pushed${commits} to ${oneLine(repo.slug, 80)}@${clip(branch, 60)} (${sha7(s.after)}), ${whose}: ${repo.remote_url}/commit/${s.after}`,
  );
  return deliverNotices(ctx, notices);
}
