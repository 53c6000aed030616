/**
 * What a GitHub webhook delivery does to a tenant's ledgers (docs/git.md: Webhooks). The HTTP route
 * (src/http/webhooks.ts) verifies, stores and acknowledges; this module processes a stored
 * delivery, either right after the response or from the webhook_retry job.
 *
 * A payload is untrusted data: fields are read defensively, nothing in it is executed or fetched,
 * and it can only touch the tenant the signature (or the App installation) belongs to.
 */
import { and, desc, eq, inArray, isNull, lt, ne, or, sql } from "drizzle-orm";
import { applyCodePush } from "../code/push";
import { dbOf, statementOf } from "../db/client";
import { actors, codeRefs, gitCommits, projectRepositories, projects, webhookDeliveries } from "../db/schema";
import { uuidv7 } from "../db/ids";
import { iso } from "../core/time";
import { applyDocWatches } from "../docs/github/watch";
import type { Env } from "../env";
import type { Ctx } from "../core/context";
import { ToolError } from "../core/errors";
import { FULL_COMMIT_SHA } from "../core/sha";
import { reviewPullRequestEvent } from "../review/reactive-sessions/runner";
import { storyPullRequestEvent } from "../coordination/story/pr-story";
import { findTask } from "../work/tasks/model";
import { notifyPushedPaths } from "../work/reservations/model";
import { notifyCheckFailure, notifyReview, notifyReviewComment, notifyTaskPush, type CheckSignal, type ReviewSignal } from "../work/signals/notify";
import { markPushedMemory } from "../work/memory/model";
import { addCodeRef, applyCodeRefChange, codeRefFields, normalizeRemote, registerRepository, repositoryByRemote, unregisterRepository, type CodeRef, type Repository } from "../work/repos/model";

/** D1 rows top out near 2 MB: a larger payload is processed once from memory but cannot be retried. */
export const KEEP_PAYLOAD_BYTES = 1_000_000;
export const MAX_ATTEMPTS = 5;
/** An attempt older than this that never finished was cut off (the isolate went away). */
const STALE_ATTEMPT_MS = 10 * 60_000;
const RETRY_BATCH = 20;
export const DELIVERY_RETENTION_MS = 30 * 24 * 60 * 60_000;
/** The back-fill only explains change-ledger events logged this shortly before the commit. */
export const BACKFILL_WINDOW_MS = 14 * 24 * 60 * 60_000;
const MAX_TASK_LINKS = 10;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export interface Outcome {
  status: "processed" | "ignored";
  note: string;
}
const ignored = (note: string): Outcome => ({ status: "ignored", note });

/** The columns that describe a delivery in webhook_deliveries, for inspection. */
export function describeDelivery(payload: Json): { action: string; repository: string } {
  return { action: str(payload.action).slice(0, 100), repository: str(obj(payload.repository).full_name).slice(0, 200) };
}

/**
 * Writes attributed to webhooks are made by the tenant's `github` service actor, so the timeline
 * says where a change came from.
 */
async function webhookCtx(env: Env, tenantId: string, now: Date, pending: Promise<unknown>[]): Promise<Ctx> {
  // The columns the migrations default are spelled out with those defaults; the no-op update makes RETURNING give the existing actor.
  const row = await dbOf({ d1: env.DB })
    .insert(actors)
    .values({
      id: uuidv7(now.getTime()),
      tenantId,
      name: "github",
      kind: "service",
      displayName: "GitHub webhooks",
      createdAt: iso(now),
      lastSeenAt: null,
      groupName: "",
      role: "",
      capabilities: "[]",
      updatedAt: null,
      lastSeenActivitySeq: 0,
    })
    .onConflictDoUpdate({ target: [actors.tenantId, actors.name], set: { name: sql`${actors.name}` } })
    .returning({ id: actors.id })
    .get();
  return {
    env,
    d1: env.DB,
    tenantId,
    actorId: row!.id,
    actorName: "github",
    operator: false,
    sessionId: "",
    clock: { now: () => new Date() },
    // Work handed off during processing (an inbox bell, outgoing webhooks) is awaited before the delivery is marked done.
    waitUntil: (p) => void pending.push(p),
  };
}

/** The registered repository a payload is about; unknown ones are ignored (and recorded as such). */
async function payloadRepository(ctx: Ctx, payload: Json): Promise<Repository | Outcome> {
  const repo = obj(payload.repository);
  // html_url is only a lookup key here (normalized, compared with registered remotes), never fetched.
  const parts = normalizeRemote(str(repo.html_url));
  const found = parts && (await repositoryByRemote(ctx, parts));
  return found || ignored(`repository ${str(repo.full_name) || "(none)"} is not registered`);
}
const isOutcome = (v: Repository | Outcome): v is Outcome => "status" in v;

// ---------------------------------------------------------------------------------------------
// push

interface PushedCommit {
  sha: string;
  message: string;
  authorName: string;
  authorEmail: string;
  at: string;
  files: string[];
}

function pushedCommits(payload: Json): PushedCommit[] {
  return arr(payload.commits)
    .map(obj)
    .flatMap((c) => {
      const sha = str(c.id).toLowerCase();
      const at = Date.parse(str(c.timestamp));
      if (!FULL_COMMIT_SHA.test(sha) || Number.isNaN(at)) return [];
      const files = [...new Set([...arr(c.added), ...arr(c.modified), ...arr(c.removed)].map(str).filter((f) => f && f.length <= 1000))].slice(0, 3000);
      const author = obj(c.author);
      return [{ sha, message: str(c.message).slice(0, 8000), authorName: str(author.name).slice(0, 200), authorEmail: str(author.email).slice(0, 200), at: iso(new Date(at)), files }];
    });
}

/**
 * Back-fill rule (docs/git.md: Webhooks): a commit pushed to the repository's default branch explains
 * a change-ledger event when the event has no commit yet, names as its project a project linked
 * to the repository (by key) or the repository itself (owner/name or name), its entity path is a
 * file the commit touched (or `file::symbol` in it), and it was logged before the commit, at most
 * BACKFILL_WINDOW_MS earlier. Commits are applied oldest first, so the earliest explaining commit
 * wins. Other branches are left alone: their commits may be rebased or squashed away.
 */
function backfillStatements(ctx: Ctx, repo: Repository, projectNames: string[], commits: PushedCommit[]): D1PreparedStatement[] {
  const names = JSON.stringify(projectNames.map((n) => n.toLowerCase()));
  return [...commits]
    .sort((a, b) => a.at.localeCompare(b.at))
    .filter((c) => c.files.length > 0)
    .map((c) => {
      const files = JSON.stringify(c.files);
      // Hand SQL: json_each walks over the project names and the files, and a `file::symbol` prefix test.
      return ctx.d1
        .prepare(
          `UPDATE events SET git_commit = ?1
       WHERE tenant_id = ?2 AND git_commit = '' AND timestamp <= ?3 AND timestamp >= ?4
         AND lower(project) IN (SELECT value FROM json_each(?5))
         AND (entity_path IN (SELECT value FROM json_each(?6))
              OR (instr(entity_path, '::') > 1 AND substr(entity_path, 1, instr(entity_path, '::') - 1) IN (SELECT value FROM json_each(?6))))`,
        )
        .bind(c.sha, ctx.tenantId, c.at, iso(new Date(Date.parse(c.at) - BACKFILL_WINDOW_MS)), names, files);
    });
}

async function onPush(ctx: Ctx, payload: Json, deliveryId: string): Promise<Outcome> {
  const repo = await payloadRepository(ctx, payload);
  if (isOutcome(repo)) return repo;
  const ref = str(payload.ref).slice(0, 300);
  const commits = pushedCommits(payload);
  const now = iso(ctx.clock.now());
  const db = dbOf(ctx);
  const inserts = commits.map((c) =>
    statementOf(
      ctx.d1,
      db
        .insert(gitCommits)
        .values({
          tenantId: ctx.tenantId,
          repositoryId: repo.id,
          sha: c.sha,
          ref,
          message: c.message,
          authorName: c.authorName,
          authorEmail: c.authorEmail,
          committedAt: c.at,
          files: JSON.stringify(c.files),
          deliveryId,
          recordedAt: now,
        })
        .onConflictDoNothing(),
    ),
  );
  let explained = 0;
  if (ref === `refs/heads/${repo.default_branch}`) {
    const linked = await db
      .select({ key: projects.key })
      .from(projectRepositories)
      .innerJoin(projects, and(eq(projects.tenantId, projectRepositories.tenantId), eq(projects.id, projectRepositories.projectId)))
      .where(and(eq(projectRepositories.tenantId, ctx.tenantId), eq(projectRepositories.repositoryId, repo.id), isNull(projects.deletedAt)))
      .all();
    const results = await batchAll(ctx, [...inserts, ...backfillStatements(ctx, repo, [...linked.map((r) => r.key), repo.slug, repo.name], commits)]);
    explained = results.slice(inserts.length).reduce((n, r) => n + (r.meta.changes ?? 0), 0);
  } else {
    await batchAll(ctx, inserts);
  }
  return { status: "processed", note: `${commits.length} commit(s) recorded on ${repo.slug}, ${explained} change event(s) linked to their commit` };
}

/**
 * A push also syncs the document store's watches on that repository and branch (src/docs/github/watch.ts)
 * and moves the code index of that branch (src/code/push.ts); neither needs a registered
 * repository, and their notes join the delivery's outcome.
 */
async function onPushWithDocWatches(ctx: Ctx, payload: Json, deliveryId: string): Promise<Outcome> {
  const recorded = await onPush(ctx, payload, deliveryId);
  const notes = [
    await applyDocWatches(ctx, payload),
    await applyCodePush(ctx, payload),
    await notifyReservedPush(ctx, payload),
    await notifyTaskPushed(ctx, payload),
    await markStaleMemory(ctx, payload),
  ].filter((n): n is string => n !== null);
  return notes.length === 0 ? recorded : { status: "processed", note: [recorded.note, ...notes].join("; ") };
}

/** A push that changed reserved paths tells their holders (src/work/reservations); a re-delivery tells nobody twice. */
async function notifyReservedPush(ctx: Ctx, payload: Json): Promise<string | null> {
  const repo = await payloadRepository(ctx, payload);
  if (isOutcome(repo)) return null;
  const files = [...new Set(pushedCommits(payload).flatMap((c) => c.files))];
  const told = await notifyPushedPaths(ctx, {
    repositoryId: repo.id,
    slug: repo.slug,
    branch: str(payload.ref).replace(/^refs\/heads\//, ""),
    after: str(payload.after).slice(0, 40),
    pusher: str(obj(payload.pusher).name).slice(0, 100),
    files,
  });
  return told > 0 ? `${told} reservation holder(s) told of the push` : null;
}

/** A push to a branch or commits a claimed task's code refs name tells the task's holder (src/work/signals). */
async function notifyTaskPushed(ctx: Ctx, payload: Json): Promise<string | null> {
  if (payload.deleted === true || !str(payload.ref).startsWith("refs/heads/")) return null;
  const repo = await payloadRepository(ctx, payload);
  if (isOutcome(repo)) return null;
  const told = await notifyTaskPush(ctx, repo, {
    branch: str(payload.ref).slice(0, SIGNAL_FIELD),
    after: str(payload.after).toLowerCase().slice(0, 64),
    shas: pushedCommits(payload).map((c) => c.sha),
    pusher: str(obj(payload.pusher).name).slice(0, SIGNAL_FIELD),
  });
  return told > 0 ? `${told} task holder(s) told of the push` : null;
}

/**
 * A push to the default branch marks the notes, decisions and code refs linked to the files it
 * changed, and the change-ledger decisions on them, as stale (src/work/memory). Other branches are
 * left alone, as the back-fill leaves them: their commits may never land.
 */
async function markStaleMemory(ctx: Ctx, payload: Json): Promise<string | null> {
  const repo = await payloadRepository(ctx, payload);
  if (isOutcome(repo) || str(payload.ref) !== `refs/heads/${repo.default_branch}`) return null;
  const marked = await markPushedMemory(ctx, { repositoryId: repo.id, slug: repo.slug, name: repo.name, commits: pushedCommits(payload) });
  return marked > 0 ? `${marked} note(s), decision(s) or code ref(s) marked stale` : null;
}

/** D1 batches are atomic; a large push is split so no batch grows without bound. */
async function batchAll(ctx: Ctx, statements: D1PreparedStatement[]): Promise<D1Result[]> {
  const results: D1Result[] = [];
  for (let i = 0; i < statements.length; i += 50) results.push(...(await ctx.d1.batch(statements.slice(i, i + 50))));
  return results;
}

// ---------------------------------------------------------------------------------------------
// pull_request

const TASK_KEY = /\b([A-Z][A-Z0-9]{1,15}-\d{1,9})\b/g;

function prState(action: string, pr: Json): "open" | "draft" | "merged" | "closed" | null {
  if (action === "opened") return pr.draft === true ? "draft" : "open";
  if (action === "reopened") return "open";
  if (action === "closed") return pr.merged === true ? "merged" : "closed";
  return null;
}

async function onPullRequest(ctx: Ctx, payload: Json): Promise<Outcome> {
  const pr = obj(payload.pull_request);
  const state = prState(str(payload.action), pr);
  if (!state) return ignored(`pull_request action '${str(payload.action)}' is not tracked`);
  const number = Number(payload.number ?? pr.number);
  if (!Number.isSafeInteger(number) || number < 1) return ignored("pull_request without a number");
  const repo = await payloadRepository(ctx, payload);
  if (isOutcome(repo)) return repo;

  const refs = (await dbOf(ctx)
    .select(codeRefFields)
    .from(codeRefs)
    .where(and(eq(codeRefs.tenantId, ctx.tenantId), eq(codeRefs.repositoryId, repo.id), eq(codeRefs.refType, "pr"), eq(codeRefs.prNumber, number), isNull(codeRefs.deletedAt)))
    .all()) as CodeRef[];
  let moved = 0;
  // A merged PR stays merged, as code_ref_update enforces.
  for (const ref of refs.filter((r) => r.pr_state !== "merged")) moved += (await applyCodeRefChange(ctx, ref, { pr_state: state })).changed.length > 0 ? 1 : 0;

  const title = str(pr.title).slice(0, 300);
  const keys = [...new Set(`${title}\n${str(pr.body).slice(0, 65_536)}`.match(TASK_KEY) ?? [])].slice(0, MAX_TASK_LINKS);
  let linked = 0;
  for (const key of keys) {
    let task;
    try {
      task = await findTask(ctx, key);
    } catch (err) {
      if (err instanceof ToolError && err.code === "not_found") continue;
      throw err;
    }
    if (refs.some((r) => r.object_type === "task" && r.object_id === task.id)) continue;
    // The link is built from the registered remote, not from URLs in the payload.
    await addCodeRef(ctx, "task", task.id, task.project_id, { ref_type: "pr", repository_id: repo.id, pr_number: number, pr_url: `${repo.remote_url}/pull/${number}`, pr_state: state, title });
    linked++;
  }
  return { status: "processed", note: `PR #${number} ${state}: ${moved} code ref(s) moved, ${linked} task(s) linked` };
}

/**
 * A pull request delivery also starts (or, for a new head, replaces) the pull request's reactive
 * review where the repository's review settings opt in (src/review/reactive-sessions/runner.ts),
 * and writes or edits its story comment where they opt in to pr_story (src/coordination/story);
 * their notes join the delivery's outcome.
 */
async function onPullRequestWithReview(ctx: Ctx, payload: Json): Promise<Outcome> {
  const tracked = await onPullRequest(ctx, payload);
  const notes = [await reviewPullRequestEvent(ctx, payload), await storyPullRequestEvent(ctx, payload)].filter((n): n is string => n !== null);
  return notes.length === 0 ? tracked : { status: "processed", note: [tracked.note, ...notes].join("; ") };
}

// ---------------------------------------------------------------------------------------------
// check_run, check_suite, workflow_run, pull_request_review, pull_request_review_comment: news for
// whoever holds the work (src/work/signals), which bounds and checks every field read here.

const SIGNAL_FIELD = 300;
const num = (v: unknown): number => (typeof v === "number" ? v : NaN);
/** The payload's repository is the same one `o.repo` names (or `o` names none). */
const sameRepository = (payload: Json, o: Json): boolean => obj(o.repo).id === undefined || obj(o.repo).id === obj(payload.repository).id;

/** Numbers of the pull requests into this repository: a PR of another base repository numbers another list. */
const prNumbersOf = (payload: Json, list: unknown): number[] =>
  arr(list)
    .slice(0, 50)
    .map(obj)
    .filter((pr) => sameRepository(payload, obj(pr.base)))
    .map((pr) => num(pr.number));

async function onCheck(ctx: Ctx, payload: Json, event: CheckSignal["event"]): Promise<Outcome> {
  const action = str(payload.action).slice(0, 50);
  if (action !== "completed") return ignored(`${event} action '${action}' tells nobody`);
  const repo = await payloadRepository(ctx, payload);
  if (isOutcome(repo)) return repo;
  const o = obj(payload[event]);
  const attempt = event === "workflow_run" ? String(num(o.run_attempt) || "") : event === "check_suite" ? str(o.updated_at) : "";
  const signal: CheckSignal = {
    event,
    id: num(o.id),
    attempt: attempt.slice(0, 50),
    name: str(event === "check_suite" ? obj(o.app).name : o.name).slice(0, SIGNAL_FIELD),
    conclusion: str(o.conclusion).slice(0, 50),
    url: (str(o.html_url) || str(o.details_url)).slice(0, 1000),
    headSha: str(o.head_sha).toLowerCase().slice(0, 64),
    branch: str(event === "check_run" ? obj(o.check_suite).head_branch : o.head_branch).slice(0, SIGNAL_FIELD),
    prNumbers: prNumbersOf(payload, o.pull_requests),
  };
  const told = await notifyCheckFailure(ctx, repo, signal);
  if (told === null) return ignored(`${event} concluded '${signal.conclusion}': nobody is told`);
  return { status: "processed", note: `${event} ${signal.conclusion}: ${told} holder(s) told` };
}

/** A review or review comment (`item`) on the payload's pull request; a fork's head branch names no branch here. */
function reviewSignal(payload: Json, item: Json): ReviewSignal {
  const pr = obj(payload.pull_request);
  const head = obj(pr.head);
  return {
    id: num(item.id),
    state: str(item.state).toLowerCase().slice(0, 50),
    reviewer: str(obj(item.user).login).slice(0, SIGNAL_FIELD),
    prNumber: num(pr.number),
    headSha: str(head.sha).toLowerCase().slice(0, 64),
    branch: sameRepository(payload, head) ? str(head.ref).slice(0, SIGNAL_FIELD) : "",
    url: str(item.html_url).slice(0, 1000),
    path: str(item.path).slice(0, 1000),
    line: num(item.line) || num(item.original_line) || null,
  };
}

async function onPullRequestReview(ctx: Ctx, payload: Json): Promise<Outcome> {
  const action = str(payload.action).slice(0, 50);
  if (action !== "submitted") return ignored(`pull_request_review action '${action}' tells nobody`);
  const repo = await payloadRepository(ctx, payload);
  if (isOutcome(repo)) return repo;
  const signal = reviewSignal(payload, obj(payload.review));
  const told = await notifyReview(ctx, repo, signal);
  if (told === null) return ignored(`review state '${signal.state}' tells nobody`);
  return { status: "processed", note: `review ${signal.state} on PR #${signal.prNumber}: ${told} holder(s) told` };
}

async function onPullRequestReviewComment(ctx: Ctx, payload: Json): Promise<Outcome> {
  const action = str(payload.action).slice(0, 50);
  if (action !== "created") return ignored(`pull_request_review_comment action '${action}' tells nobody`);
  const repo = await payloadRepository(ctx, payload);
  if (isOutcome(repo)) return repo;
  const signal = reviewSignal(payload, obj(payload.comment));
  const told = await notifyReviewComment(ctx, repo, signal);
  if (told === null) return ignored("a review comment without an id or pull request tells nobody");
  return { status: "processed", note: `review comment on PR #${signal.prNumber}: ${told} holder(s) told` };
}

// ---------------------------------------------------------------------------------------------
// installation, installation_repositories (GitHub App)

/** The git host of App repositories: github.com, or a GitHub Enterprise host from GITHUB_API_URL. */
function appHost(env: Env): string {
  try {
    const host = new URL(env.GITHUB_API_URL ?? "").hostname;
    return host && host !== "api.github.com" ? host : "github.com";
  } catch {
    return "github.com";
  }
}

async function syncRepositories(ctx: Ctx, add: unknown[], remove: unknown[]): Promise<Outcome> {
  const parse = (list: unknown[]) => list.map((r) => normalizeRemote(`https://${appHost(ctx.env)}/${str(obj(r).full_name)}`)).filter((p) => p !== null);
  let added = 0;
  let removed = 0;
  for (const parts of parse(add)) added += (await registerRepository(ctx, parts, "main")).created ? 1 : 0;
  for (const parts of parse(remove)) {
    const repo = await repositoryByRemote(ctx, parts);
    if (repo) {
      await unregisterRepository(ctx, repo);
      removed++;
    }
  }
  return { status: "processed", note: `${added} repository(ies) registered, ${removed} unregistered` };
}

async function onInstallation(ctx: Ctx, payload: Json): Promise<Outcome> {
  const action = str(payload.action);
  if (action === "created") return syncRepositories(ctx, arr(payload.repositories), []);
  if (action === "deleted") return syncRepositories(ctx, [], arr(payload.repositories));
  return ignored(`installation action '${action}' changes no repositories`);
}

async function onInstallationRepositories(ctx: Ctx, payload: Json): Promise<Outcome> {
  return syncRepositories(ctx, arr(payload.repositories_added), arr(payload.repositories_removed));
}

const HANDLERS: Record<string, (ctx: Ctx, payload: Json, deliveryId: string) => Promise<Outcome>> = {
  ping: async () => ({ status: "processed", note: "pong" }),
  push: onPushWithDocWatches,
  pull_request: onPullRequestWithReview,
  check_run: (ctx, payload) => onCheck(ctx, payload, "check_run"),
  check_suite: (ctx, payload) => onCheck(ctx, payload, "check_suite"),
  workflow_run: (ctx, payload) => onCheck(ctx, payload, "workflow_run"),
  pull_request_review: onPullRequestReview,
  pull_request_review_comment: onPullRequestReviewComment,
  installation: onInstallation,
  installation_repositories: onInstallationRepositories,
};

// ---------------------------------------------------------------------------------------------
// Delivery lifecycle

export interface NewDelivery {
  tenantId: string;
  deliveryId: string;
  event: string;
  payload: Json;
  rawPayload: string;
  /** SHA-256 (hex) of the raw body: the same body under another delivery id is a duplicate. */
  contentHash: string;
  /** Set when the delivery is recorded without being processed (e.g. no tenant claims the installation). */
  ignoredBecause?: string;
}

/** A new delivery, or a duplicate: of the same X-GitHub-Delivery id (duplicateOf null), or of the same body under another id. */
export type Recorded = { fresh: true } | { fresh: false; duplicateOf: string | null };

/**
 * Stores a delivery unless the tenant already has it, by delivery id or by body. A body seen
 * before under another id is recorded too, as status `duplicate` naming the first delivery, so an
 * operator can see it arrived; it is never processed (and keeps no payload to replay).
 */
export async function recordDelivery(env: Env, d: NewDelivery, now: Date): Promise<Recorded> {
  const { action, repository } = describeDelivery(d.payload);
  const keep = new TextEncoder().encode(d.rawPayload).byteLength <= KEEP_PAYLOAD_BYTES;
  const db = dbOf({ d1: env.DB });
  // The row both outcomes write; attempts (0) and duplicate_of ('') as the migrations default them.
  const row = (status: string, error: string, payload: string, processedAt: string | null, duplicateOf: string) => ({
    tenantId: d.tenantId,
    deliveryId: d.deliveryId,
    event: d.event.slice(0, 100),
    action,
    repository,
    status,
    error,
    attempts: 0,
    payload,
    receivedAt: iso(now),
    attemptedAt: null,
    processedAt,
    contentHash: d.contentHash,
    duplicateOf,
  });
  const written = await db
    .insert(webhookDeliveries)
    .values(row(d.ignoredBecause ? "ignored" : "pending", d.ignoredBecause ?? "", keep ? d.rawPayload : "", d.ignoredBecause ? iso(now) : null, ""))
    .onConflictDoNothing()
    .returning({ delivery_id: webhookDeliveries.deliveryId })
    .get();
  if (written) return { fresh: true };
  // Which rule refused it: the delivery id first (GitHub's own redelivery), else the body.
  const seen = await db
    .select({ delivery_id: webhookDeliveries.deliveryId })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.tenantId, d.tenantId),
        // duplicate_of = '' as a literal, as the partial unique index on the body declares it.
        or(eq(webhookDeliveries.deliveryId, d.deliveryId), and(eq(webhookDeliveries.contentHash, d.contentHash), sql`${webhookDeliveries.duplicateOf} = ''`)),
      ),
    )
    .orderBy(desc(sql`${webhookDeliveries.deliveryId} = ${d.deliveryId}`))
    .limit(1)
    .get();
  if (!seen || seen.delivery_id === d.deliveryId) return { fresh: false, duplicateOf: null };
  await db
    .insert(webhookDeliveries)
    .values(row("duplicate", `the same body as delivery ${seen.delivery_id}`, "", iso(now), seen.delivery_id))
    .onConflictDoNothing()
    .run();
  return { fresh: false, duplicateOf: seen.delivery_id };
}

/**
 * One attempt at a stored delivery. The claim is a compare-and-swap, so the response's
 * waitUntil and the retry job never work on the same delivery at once; `payload` spares a re-read
 * (and is the only copy when the payload was too large to keep).
 */
export async function processDelivery(env: Env, tenantId: string, deliveryId: string, now: Date = new Date(), payload?: Json): Promise<Outcome | { status: "failed"; note: string } | null> {
  // Hand SQL: the claim is a compare-and-swap on status, attempts and the stale attempt's age.
  const claimed = await env.DB.prepare(
    `UPDATE webhook_deliveries SET status = 'processing', attempts = attempts + 1, attempted_at = ?
     WHERE tenant_id = ? AND delivery_id = ? AND attempts < ?
       AND (status IN ('pending', 'failed') OR (status = 'processing' AND attempted_at < ?))
     RETURNING event, payload`,
  )
    .bind(iso(now), tenantId, deliveryId, MAX_ATTEMPTS, iso(new Date(now.getTime() - STALE_ATTEMPT_MS)))
    .first<{ event: string; payload: string }>();
  if (!claimed) return null;
  let result: Outcome | { status: "failed"; note: string };
  try {
    const body = payload ?? (claimed.payload ? obj(JSON.parse(claimed.payload)) : null);
    if (!body) throw new Error(`the payload was larger than ${KEEP_PAYLOAD_BYTES} bytes and was not kept; redeliver it from GitHub`);
    const handler = HANDLERS[claimed.event];
    const pending: Promise<unknown>[] = [];
    result = handler ? await handler(await webhookCtx(env, tenantId, now, pending), body, deliveryId) : ignored(`event '${claimed.event}' is not handled`);
    await Promise.allSettled(pending);
  } catch (err) {
    result = { status: "failed", note: (err instanceof Error ? err.message : String(err)).slice(0, 1000) };
  }
  await dbOf({ d1: env.DB })
    .update(webhookDeliveries)
    .set({ status: result.status, error: result.status === "processed" ? "" : result.note, processedAt: iso(new Date()) })
    .where(and(eq(webhookDeliveries.tenantId, tenantId), eq(webhookDeliveries.deliveryId, deliveryId)))
    .run();
  return result;
}

/** Cron: deliveries that failed, or whose attempt was cut off, get another attempt (bounded by MAX_ATTEMPTS). */
export async function retryDeliveries(env: Env, now: Date): Promise<string> {
  const w = webhookDeliveries;
  const due = await dbOf({ d1: env.DB })
    .select({ tenant_id: w.tenantId, delivery_id: w.deliveryId })
    .from(w)
    .where(
      and(
        lt(w.attempts, MAX_ATTEMPTS),
        ne(w.payload, ""),
        ne(w.tenantId, ""),
        or(eq(w.status, "failed"), and(inArray(w.status, ["pending", "processing"]), sql`coalesce(${w.attemptedAt}, ${w.receivedAt}) < ${iso(new Date(now.getTime() - STALE_ATTEMPT_MS))}`)),
      ),
    )
    .orderBy(w.receivedAt)
    .limit(RETRY_BATCH)
    .all();
  let succeeded = 0;
  for (const d of due) {
    const r = await processDelivery(env, d.tenant_id, d.delivery_id, now);
    if (r && r.status !== "failed") succeeded++;
  }
  return `${due.length} delivery(ies) retried, ${succeeded} succeeded`;
}

/** Cron: deliveries are kept for inspection and replay for DELIVERY_RETENTION_MS. */
export async function dropOldDeliveries(env: Env, now: Date): Promise<string> {
  const db = dbOf({ d1: env.DB });
  // rowid bounds the delete: SQLite's DELETE takes no LIMIT.
  const old = db
    .select({ rowid: sql`rowid` })
    .from(webhookDeliveries)
    .where(lt(webhookDeliveries.receivedAt, iso(new Date(now.getTime() - DELIVERY_RETENTION_MS))))
    .limit(5000);
  const res = await db
    .delete(webhookDeliveries)
    .where(inArray(sql`rowid`, old))
    .run();
  return `${res.meta.changes ?? 0} old delivery(ies) removed`;
}
