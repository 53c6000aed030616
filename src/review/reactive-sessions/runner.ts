/**
 * Reactive pull-request review (seed 004 "Reactive Review Tools"): a session per pull request
 * (or commit range) that reviews the change in steps. The plan and the alarm that drives it live
 * in the session's Durable Object (src/durable/review-sessions.ts), one step per alarm so each
 * fits a Worker invocation's CPU and subrequest limits; this module holds what the steps do, the
 * D1 record every session keeps (migrations/0032), and the operations the tools and the
 * pull_request webhook call.
 *
 * What reviewing a batch means is not decided here: a BatchReviewer (src/review/reactive-sessions/batch-reviewer.ts)
 * is called with the batch's diff, so this module never depends on how a review is done.
 */
import { repoKey } from "../../code/store";
import { uuidv7 } from "../../db/ids";
import { iso, systemClock } from "../../core/time";
import type { Env } from "../../env";
import { GitHubClient, GitHubError } from "../../git/client";
import { apiBase, githubFor, githubToolError, tenantTokenSource } from "../../git/credentials";
import { isSafeRef, isSafeRepoPath, parseOwnerName, type RepoName } from "../../git/tokens";
import type { Ctx } from "../../core/context";
import { failureText, invalidInput, ToolError } from "../../core/errors";
import { FULL_COMMIT_SHA } from "../../core/sha";
import { commentableLines, publishReview } from "./publish";
import {
  type BatchFinding,
  type BatchResult,
  DEFAULT_WORKERS,
  MAX_CHANGED_FILES,
  MAX_WORKERS,
  mergeBatches,
  parseChangedFiles,
  planSteps,
  type PlannedStep,
  type ReviewResult,
  type SessionSpec,
  type SessionState,
  type StepOutcome,
} from "./plan";
import { reviewSettingsFor } from "../settings/model";
import { activeSessionIds, findSessionRow, insertSessionRow, sessionOfHead, syncRow } from "../reactive/model";
import type { ChangeType, Finding } from "../pipeline/types";

/** What one batch's review returns: review_diff's result, as much of it as a session keeps. */
export interface BatchReview {
  findings: Finding[];
  risk_score: number;
  classification: ChangeType;
  summary: string;
}

/** Reviews one batch of a session: its unified diff, the paths in it, where it comes from. */
export type BatchReviewer = (ctx: Ctx, input: { diff: string; changedFiles: string[]; repo: RepoName; headSha: string }) => Promise<BatchReview>;

/**
 * The session's object: named by tenant and session, so no id reaches another tenant's object. Its
 * type comes from the binding (env.REVIEWS), so review code never imports the object that runs it.
 */
export const reviewSessionStub = (env: Env, tenantId: string, sessionId: string) => env.REVIEWS.get(env.REVIEWS.idFromName(`${tenantId}:${sessionId}`));

/** REVIEW_STEP_GAP_MS: the least time between a session's steps (default 0; at most an hour). */
export function stepGapMs(env: Env): number {
  const n = Number(env.REVIEW_STEP_GAP_MS ?? "0");
  return Number.isFinite(n) && n > 0 ? Math.min(Math.floor(n), 3_600_000) : 0;
}

export const sessionNotFound = (id: string) =>
  new ToolError("session_not_found", `Session not found: ${id.slice(0, 100)}`, {
    hint: "Pass a session_id that reactive_review_pr returned to your tenant; get_review_status shows what a session is doing.",
  });

// ---------------------------------------------------------------------------------------------
// Steps

/** What a step may keep in the session's object beside the state (a batch's findings, the merged result). */
export interface StepStore {
  get<T>(key: string): Promise<T | undefined>;
  put<T>(key: string, value: T): Promise<void>;
  list<T>(options: { prefix: string }): Promise<Map<string, T>>;
}

export interface StepEnv {
  env: Env;
  store: StepStore;
  reviewer: BatchReviewer | null;
  waitUntil(p: Promise<unknown>): void;
}

/**
 * The session's GitHub client makes no waits of its own (maxWaitMs 0): a server error or rate
 * limit ends the step, and the session retries it from a later alarm with its own backoff,
 * rather than holding an invocation open while it sleeps.
 */
export const sessionGitHub = (env: Env, tenantId: string) => new GitHubClient({ apiBase: apiBase(env), token: tenantTokenSource(env, tenantId), maxWaitMs: 0 });

export interface ApiFile {
  filename: string;
  status: string;
  patch?: string;
  previous_filename?: string;
}

/** Pull request files come 100 a page, up to GitHub's 3000. */
const MAX_FILE_PAGES = 30;

/**
 * A pull request's files as GitHub lists them, 100 a page, at most `maxPages` pages. With
 * `wanted`, paging stops once all of them have been seen. The pull request story reads them too.
 */
export async function pullRequestFiles(
  gh: Pick<GitHubClient, "request">,
  repo: { owner: string; repo: string },
  pullNumber: number,
  opts: { maxPages?: number; wanted?: ReadonlySet<string> } = {},
): Promise<ApiFile[]> {
  const out: ApiFile[] = [];
  for (let page = 1; page <= (opts.maxPages ?? MAX_FILE_PAGES); page++) {
    const batch = (await gh.request<ApiFile[]>("GET /repos/{owner}/{repo}/pulls/{pull_number}/files", { ...repo, pull_number: pullNumber, per_page: 100, page })).data;
    out.push(...batch);
    if (batch.length < 100) break;
    const wanted = opts.wanted;
    if (wanted && [...wanted].every((w) => out.some((f) => f.filename === w))) break;
  }
  return out;
}

/**
 * The change's files as GitHub lists them: the pull request's files, or the comparison of the
 * base with the commit (GitHub lists at most 300 files of a comparison). With `wanted`, paging
 * stops once all of them have been seen.
 */
async function changeFiles(gh: Pick<GitHubClient, "request">, spec: SessionSpec, wanted?: ReadonlySet<string>): Promise<ApiFile[]> {
  const repo = { owner: spec.owner, repo: spec.name };
  if (spec.pullNumber === null) {
    const res = await gh.request<{ files?: ApiFile[] }>("GET /repos/{owner}/{repo}/compare/{basehead}", { ...repo, basehead: `${spec.baseRef}...${spec.commitHash}`, per_page: 1 });
    return res.data.files ?? [];
  }
  return pullRequestFiles(gh, repo, spec.pullNumber, { wanted });
}

/** A file's part of a unified diff, from GitHub's patch (which starts at the first hunk). */
function fileDiff(f: ApiFile & { patch: string }): string {
  const old = f.previous_filename ?? f.filename;
  const head = [`diff --git a/${old} b/${f.filename}`];
  if (f.status === "renamed") head.push(`rename from ${old}`, `rename to ${f.filename}`);
  head.push(`--- ${f.status === "added" ? "/dev/null" : `a/${old}`}`, `+++ ${f.status === "removed" ? "/dev/null" : `b/${f.filename}`}`);
  return `${head.join("\n")}\n${f.patch}${f.patch.endsWith("\n") ? "" : "\n"}`;
}

function stepCtx(x: StepEnv, spec: SessionSpec): Ctx {
  return {
    env: x.env,
    d1: x.env.DB,
    tenantId: spec.tenantId,
    actorId: spec.actorId,
    actorName: spec.actorName,
    operator: false,
    sessionId: "",
    clock: systemClock,
    waitUntil: x.waitUntil,
  };
}

const batchKey = (n: number) => `batch:${String(n).padStart(5, "0")}`;
export const RESULT_KEY = "result";

async function listFiles(x: StepEnv, gh: Pick<GitHubClient, "request">, spec: SessionSpec): Promise<StepOutcome> {
  const files = (await changeFiles(gh, spec)).map((f) => f.filename).filter(isSafeRepoPath);
  const kept = [...new Set(files)].slice(0, MAX_CHANGED_FILES);
  return { ok: true, listed: kept, note: `${kept.length} file(s) listed from pull request #${spec.pullNumber}` };
}

async function reviewBatch(x: StepEnv, gh: Pick<GitHubClient, "request">, spec: SessionSpec, step: PlannedStep): Promise<StepOutcome> {
  if (!x.reviewer) {
    return { ok: false, retryable: false, error: "review_unavailable: this server has no batch reviewer wired in (the review_diff pipeline), so the batch cannot be reviewed" };
  }
  const wanted = new Set(step.files);
  const listed = new Map((await changeFiles(gh, spec, wanted)).map((f) => [f.filename, f]));
  const withPatch: (ApiFile & { patch: string })[] = [];
  const warnings: string[] = [];
  for (const path of step.files) {
    const f = listed.get(path);
    if (!f) warnings.push(`${path}: not among the files GitHub lists for this change; not reviewed`);
    else if (f.patch === undefined) warnings.push(`${path}: GitHub gives no patch for it (binary, or too large); not reviewed`);
    else withPatch.push({ ...f, patch: f.patch });
  }
  if (withPatch.length === 0) {
    await x.store.put<BatchResult | null>(batchKey(step.number), null);
    return { ok: true, findings: 0, warnings, note: "no file of this batch has a patch to review" };
  }
  const review = await x.reviewer(stepCtx(x, spec), {
    diff: withPatch.map(fileDiff).join(""),
    changedFiles: withPatch.map((f) => f.filename),
    repo: { owner: spec.owner, name: spec.name },
    headSha: spec.commitHash,
  });
  const lines = new Map(withPatch.map((f) => [f.filename, commentableLines(f.patch)]));
  const findings: BatchFinding[] = review.findings.map((f) => ({ ...f, inline: lines.get(f.location.file)?.has(f.location.startLine) ?? false }));
  await x.store.put<BatchResult>(batchKey(step.number), {
    files: withPatch.map((f) => f.filename),
    findings,
    risk_score: review.risk_score,
    classification: review.classification,
    summary: review.summary,
  });
  return { ok: true, findings: findings.length, warnings, ...(warnings.length ? { note: `${warnings.length} file(s) without a patch` } : {}) };
}

async function merge(x: StepEnv, state: SessionState): Promise<StepOutcome> {
  const stored = await x.store.list<BatchResult | null>({ prefix: "batch:" });
  const results = [...stored.values()].filter((r): r is BatchResult => r !== null);
  const result = mergeBatches(results, state.spec.commitHash, state.warnings);
  await x.store.put<ReviewResult>(RESULT_KEY, result);
  return { ok: true, findings: result.findings_total, note: result.summary };
}

async function publish(x: StepEnv, gh: Pick<GitHubClient, "request">, spec: SessionSpec): Promise<StepOutcome> {
  const settings = await reviewSettingsFor({ d1: x.env.DB, tenantId: spec.tenantId }, repoKey(spec.owner, spec.name));
  if (!settings.publish) return { ok: true, skipped: true, note: "publishing is off for this repository (review settings)" };
  const result = await x.store.get<ReviewResult>(RESULT_KEY);
  if (!result) return { ok: false, retryable: false, error: "there is no merged result to publish" };
  const out = await publishReview(gh, { owner: spec.owner, name: spec.name, pullNumber: spec.pullNumber!, commit: spec.commitHash }, result, spec.sessionId);
  if (!out.posted) return { ok: true, skipped: true, note: out.warning, warnings: [out.warning] };
  return {
    ok: true,
    review: { id: out.id, url: out.url },
    note: out.reused ? `already published as review ${out.id} by an earlier attempt; not posted again` : `published as review ${out.id} with ${out.inline} inline comment(s)`,
    ...(out.warning ? { warnings: [out.warning] } : {}),
  };
}

/** Runs one step; nothing it meets escapes, so a step always ends in an outcome the session records. */
export async function runStep(x: StepEnv, state: SessionState, step: PlannedStep): Promise<StepOutcome> {
  const gh = sessionGitHub(x.env, state.spec.tenantId);
  try {
    switch (step.kind) {
      case "list_files":
        return await listFiles(x, gh, state.spec);
      case "review_batch":
        return await reviewBatch(x, gh, state.spec, step);
      case "merge":
        return await merge(x, state);
      case "publish":
        return await publish(x, gh, state.spec);
    }
  } catch (err) {
    if (err instanceof GitHubError) return { ok: false, retryable: err.retryable, error: `${err.code}: ${err.message}`, ...(err.resetAt ? { retryAt: Date.parse(err.resetAt) } : {}) };
    if (err instanceof ToolError) return { ok: false, retryable: err.retryable, error: `${err.code}: ${err.message}` };
    return { ok: false, retryable: false, error: failureText(err, "reactive review step") };
  }
}

// ---------------------------------------------------------------------------------------------
// Starting a session

export function initialState(spec: SessionSpec): SessionState {
  return {
    spec,
    status: "executing",
    error: null,
    steps: planSteps(spec),
    warnings: [],
    updatedAt: spec.createdAt,
    lastActivityAt: spec.createdAt,
    finishedAt: null,
    review: null,
    findingsCount: 0,
  };
}

type StartCtx = Pick<Ctx, "env" | "d1" | "tenantId" | "actorId" | "actorName" | "clock">;

/** Ends the pull request's running or paused sessions: a new head makes their review stale. */
async function supersede(ctx: StartCtx, repo: string, pullNumber: number, by: string, commit: string): Promise<string[]> {
  const active = await activeSessionIds(ctx.d1, ctx.tenantId, repo, pullNumber, by);
  for (const id of active) {
    await reviewSessionStub(ctx.env, ctx.tenantId, id).cancel(`Superseded by session ${by} (head ${commit.slice(0, 12)})`);
  }
  return active;
}

export interface Started {
  state: SessionState;
  replaced: string[];
}

/** Records the session, ends what it replaces, and hands it to its object, whose first alarm starts the work. */
export async function startSession(ctx: StartCtx, input: Omit<SessionSpec, "sessionId" | "tenantId" | "actorId" | "actorName" | "createdAt">): Promise<Started> {
  const now = ctx.clock.now();
  const spec: SessionSpec = { ...input, sessionId: uuidv7(now.getTime()), tenantId: ctx.tenantId, actorId: ctx.actorId, actorName: ctx.actorName, createdAt: iso(now) };
  const state = initialState(spec);
  const key = repoKey(spec.owner, spec.name);
  await insertSessionRow(ctx.d1, state, key);
  const replaced = spec.pullNumber === null ? [] : await supersede(ctx, key, spec.pullNumber, spec.sessionId, spec.commitHash);
  try {
    await reviewSessionStub(ctx.env, ctx.tenantId, spec.sessionId).start(state);
  } catch (err) {
    const failed: SessionState = { ...state, status: "failed", error: "the session could not be handed to its Durable Object", finishedAt: spec.createdAt };
    await syncRow(ctx.d1, failed, null);
    throw err;
  }
  return { state, replaced };
}

export interface StartInput {
  repo: RepoName;
  commit_hash: string;
  base_ref: string;
  changed_files: string;
  title?: string;
  author?: string;
  additions?: number;
  deletions?: number;
  parallel: boolean;
  max_workers?: number;
  pull_number?: number;
}

/**
 * reactive_review_pr. The commit (and the pull request) are checked on GitHub before anything is
 * recorded, so a wrong sha or a missing credential is answered now rather than by a session that
 * fails a minute later; the short sha a caller may pass becomes the full one.
 */
export async function startReview(ctx: Ctx, input: StartInput): Promise<Started & { warnings: string[] }> {
  const files = parseChangedFiles(input.changed_files, isSafeRepoPath);
  if (typeof files === "string") throw invalidInput(files, "Pass changed_files as a JSON array string of repository paths, or comma-separated paths.");
  if (!isSafeRef(input.base_ref)) {
    throw new ToolError("unsafe_ref_token", `base_ref '${input.base_ref.slice(0, 100)}' contains characters outside the safe ref token set.`, {
      hint: "Use a branch, tag or SHA of [A-Za-z0-9_./+-] (1–256), without .., @{, //, a leading - or a trailing /, . or .lock.",
    });
  }
  const commit = input.commit_hash.toLowerCase();
  const gh = githubFor(ctx.env, ctx.tenantId);
  const repo = { owner: input.repo.owner, repo: input.repo.name };
  let head: string;
  try {
    if (input.pull_number !== undefined) {
      const pr = (await gh.request<{ head: { sha: string } }>("GET /repos/{owner}/{repo}/pulls/{pull_number}", { ...repo, pull_number: input.pull_number })).data;
      head = pr.head.sha.toLowerCase();
      if (!head.startsWith(commit)) {
        throw new ToolError("commit_not_pr_head", `commit_hash ${commit.slice(0, 12)} is not the head of pull request #${input.pull_number} (its head is ${head.slice(0, 12)}).`, {
          hint: "Pass the pull request's current head sha, or leave pull_number out to review the commit against base_ref without publishing.",
        });
      }
    } else {
      head = (await gh.request<{ sha: string }>("GET /repos/{owner}/{repo}/commits/{ref}", { ...repo, ref: commit, per_page: 1 })).data.sha.toLowerCase();
    }
  } catch (err) {
    throw githubToolError(err);
  }
  const warnings: string[] = [];
  let workers = 1;
  if (input.parallel) {
    const asked = input.max_workers ?? DEFAULT_WORKERS;
    workers = Math.min(asked, MAX_WORKERS);
    if (asked > MAX_WORKERS) warnings.push(`max_workers ${asked} was lowered to ${MAX_WORKERS}: one alarm runs at most ${MAX_WORKERS} review steps side by side.`);
  } else if (input.max_workers !== undefined && input.max_workers > 1) {
    warnings.push("max_workers applies only with parallel: true; the batches are reviewed one at a time.");
  }
  const started = await startSession(ctx, {
    owner: input.repo.owner,
    name: input.repo.name,
    pullNumber: input.pull_number ?? null,
    commitHash: head,
    baseRef: input.base_ref,
    title: input.title ?? "",
    author: input.author ?? "",
    additions: input.additions ?? null,
    deletions: input.deletions ?? null,
    changedFiles: files,
    workers,
    source: "tool",
  });
  return { ...started, warnings };
}

// ---------------------------------------------------------------------------------------------
// Reading and steering a session

export interface Snapshot {
  state: SessionState;
  result: ReviewResult | null;
}

/** The session as its object holds it; once the object has dropped an ended session, as its row kept it. */
export async function snapshot(ctx: Pick<Ctx, "env" | "d1" | "tenantId">, id: string): Promise<Snapshot> {
  const row = await findSessionRow(ctx.d1, ctx.tenantId, id);
  if (!row) throw sessionNotFound(id);
  const live = await reviewSessionStub(ctx.env, ctx.tenantId, id).snapshot();
  if (live) return live;
  if (!row.state) throw new ToolError("session_state_lost", `Session ${id} has no state left to read.`, { hint: "Start a new review with reactive_review_pr." });
  return { state: JSON.parse(row.state) as SessionState, result: row.result ? (JSON.parse(row.result) as ReviewResult) : null };
}

export type SteerOutcome = { changed: boolean; state: SessionState };

async function steer(ctx: Ctx, id: string, action: "pause" | "resume"): Promise<SteerOutcome> {
  if (!(await findSessionRow(ctx.d1, ctx.tenantId, id))) throw sessionNotFound(id);
  const stub = reviewSessionStub(ctx.env, ctx.tenantId, id);
  const out = action === "pause" ? await stub.pause() : await stub.resume();
  if (!out) throw new ToolError("session_state_lost", `Session ${id} has ended and its live state was dropped; it cannot be ${action}d.`, { hint: "get_review_status shows how it ended." });
  return out;
}

/** pause_review: the alarm is cleared; a step already running finishes and is kept. */
export async function pauseReview(ctx: Ctx, id: string): Promise<SteerOutcome> {
  const out = await steer(ctx, id, "pause");
  if (!out.changed && out.state.status !== "paused") {
    throw new ToolError("session_not_executing", `Session is not executing (current status: ${out.state.status})`, {
      hint: "Only an executing session can be paused; get_review_status shows where it stands.",
    });
  }
  return out;
}

/** resume_review: the alarm is set again and the next step runs. */
export async function resumeReview(ctx: Ctx, id: string): Promise<SteerOutcome> {
  const out = await steer(ctx, id, "resume");
  if (!out.changed && out.state.status !== "executing") {
    throw new ToolError("session_not_paused", `Session is not paused (current status: ${out.state.status})`, {
      hint: "Only a paused session can be resumed; a finished one stays as it ended (start a new one with reactive_review_pr).",
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// pull_request webhooks

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === "string" ? v : "");

const REVIEW_ACTIONS = new Set(["opened", "synchronize", "reopened", "ready_for_review"]);

/**
 * A pull_request delivery for a repository whose review settings opt in to reactive review
 * starts a session for the pull request's head, replacing one running for an older head. A
 * draft waits for ready_for_review; a head already reviewed (or being reviewed) is not reviewed
 * twice. Returns a note for the delivery's outcome, or null when reactive review does not apply.
 */
export async function reviewPullRequestEvent(ctx: Ctx, payload: Json): Promise<string | null> {
  const action = str(payload.action);
  if (!REVIEW_ACTIONS.has(action)) return null;
  const repo = parseOwnerName(str(obj(payload.repository).full_name));
  if (!repo) return null;
  if (!(await reviewSettingsFor(ctx, repoKey(repo.owner, repo.name))).reactive) return null;
  const pr = obj(payload.pull_request);
  const number = Number(payload.number ?? pr.number);
  if (!Number.isSafeInteger(number) || number < 1) return "reactive review: the delivery names no pull request number";
  if (pr.draft === true) return `reactive review: PR #${number} is a draft, not reviewed until it is ready`;
  const head = str(obj(pr.head).sha).toLowerCase();
  const base = str(obj(pr.base).ref);
  if (!FULL_COMMIT_SHA.test(head) || !isSafeRef(base)) return `reactive review: PR #${number} has no usable head sha or base ref`;
  const prior = await sessionOfHead(ctx.d1, ctx.tenantId, repoKey(repo.owner, repo.name), number, head);
  if (prior) return `reactive review: PR #${number} at ${head.slice(0, 12)} already has session ${prior.id} (${prior.status})`;
  const started = await startSession(ctx, {
    owner: repo.owner,
    name: repo.name,
    pullNumber: number,
    commitHash: head,
    baseRef: base,
    title: str(pr.title).slice(0, 1000),
    author: str(obj(pr.user).login).slice(0, 200),
    additions: numberOrNull(pr.additions),
    deletions: numberOrNull(pr.deletions),
    changedFiles: null,
    workers: 1,
    source: "webhook",
  });
  const replaced = started.replaced.length ? `, replacing ${started.replaced.join(", ")}` : "";
  return `reactive review session ${started.state.spec.sessionId} started for PR #${number} at ${head.slice(0, 12)}${replaced}`;
}

const numberOrNull = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : null);
