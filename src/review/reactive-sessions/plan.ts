/**
 * The pure half of a reactive review session: what a session is, how its steps are planned, how
 * a step's outcome moves it on, how batch results merge, and what get_review_status and
 * get_review_telemetry show of it. No I/O here, so the Durable Object and the tools agree on one
 * reading of a session, and every rule is testable without GitHub.
 */
import { type ChangeType, type Finding, SEVERITY_RANK } from "../pipeline/types";

/** The reference's statuses that apply here (it also has initializing and analyzing, for its planning pass; ours is synchronous). */
export const SESSION_STATUSES = ["executing", "paused", "completed", "failed", "cancelled"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export const TERMINAL: ReadonlySet<SessionStatus> = new Set(["completed", "failed", "cancelled"]);

export const STEP_KINDS = ["list_files", "review_batch", "merge", "publish"] as const;
export type StepKind = (typeof STEP_KINDS)[number];
export const STEP_STATUSES = ["pending", "running", "completed", "failed", "skipped"] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

/** Files per review step: the reference's default batch size. */
export const BATCH_SIZE = 5;
/** Attempts per step (the reference's max_retries 2, plus the first). */
export const MAX_STEP_ATTEMPTS = 3;
/** Review steps one alarm may run side by side when the session is parallel: a bound on one invocation's subrequests. */
export const MAX_WORKERS = 4;
export const DEFAULT_WORKERS = 3;
/** The reference marks an active session stalled after two minutes without activity. */
export const STALLED_AFTER_MS = 120_000;
/** GitHub lists at most 3000 files of a pull request, so more paths than that cannot all be reviewed. */
export const MAX_CHANGED_FILES = 3000;
export const MAX_PATH_LENGTH = 1024;
/** Findings kept in a session's result (most severe first); the count says how many there were. */
export const MAX_RESULT_FINDINGS = 200;

export interface StepAttempt {
  started_at: string;
  duration_ms: number;
  outcome: "ok" | "retry" | "failed";
  error?: string;
  /** How long the session waits before the next attempt (retry only). */
  retry_in_ms?: number;
}

export interface PlannedStep {
  number: number;
  kind: StepKind;
  /** The paths a review_batch step reviews ([] for the other kinds). */
  files: string[];
  status: StepStatus;
  attempts: StepAttempt[];
  findings: number | null;
  /** What the step found worth saying (a skipped publish's reason, files without a patch). */
  note: string | null;
}

/** What a session was started with; it never changes afterwards. */
export interface SessionSpec {
  sessionId: string;
  tenantId: string;
  /** The actor whose call (or whose webhook service actor) started it: steps run as them. */
  actorId: string;
  actorName: string;
  owner: string;
  name: string;
  pullNumber: number | null;
  /** The full head sha. */
  commitHash: string;
  baseRef: string;
  title: string;
  author: string;
  additions: number | null;
  deletions: number | null;
  /** null: the files are listed from the pull request by the first step (webhook sessions). */
  changedFiles: string[] | null;
  /** Review steps run side by side in one alarm (1 unless parallel). */
  workers: number;
  source: "tool" | "webhook";
  createdAt: string;
}

export interface SessionState {
  spec: SessionSpec;
  status: SessionStatus;
  error: string | null;
  steps: PlannedStep[];
  warnings: string[];
  updatedAt: string;
  lastActivityAt: string;
  finishedAt: string | null;
  review: { id: number; url: string } | null;
  findingsCount: number;
}

/** A finding as a review step keeps it: whether it sits on a line of the diff decides if it can be an inline comment. */
export type BatchFinding = Finding & { inline: boolean };

export interface BatchResult {
  files: string[];
  findings: BatchFinding[];
  risk_score: number;
  classification: ChangeType;
  summary: string;
}

export interface ReviewResult {
  reviewed_commit: string;
  risk_score: number;
  classification: ChangeType;
  summary: string;
  files_reviewed: number;
  batches: number;
  findings_total: number;
  findings: BatchFinding[];
  warnings: string[];
}

// ---------------------------------------------------------------------------------------------
// Input

/**
 * changed_files as the seed takes it: a JSON array string, or comma-separated. Returns the paths
 * or a reason the text is refused (for invalid_input), checked the way the reference checks it.
 */
export function parseChangedFiles(text: string, isSafePath: (p: string) => boolean): string[] | string {
  const trimmed = text.trim();
  let entries: unknown[];
  if (trimmed.startsWith("[")) {
    try {
      // Text that starts with "[" and parses is an array.
      entries = JSON.parse(trimmed) as unknown[];
    } catch {
      return "changed_files must be valid CSV or JSON array string";
    }
  } else {
    entries = trimmed.split(",");
  }
  if (entries.length > MAX_CHANGED_FILES) return `changed_files exceeds maximum entries (${MAX_CHANGED_FILES})`;
  const out: string[] = [];
  for (const [i, entry] of entries.entries()) {
    if (typeof entry !== "string") return `changed_files[${i}] must be a string path`;
    const path = entry.trim();
    if (!path) return `changed_files[${i}] must be a non-empty path`;
    if (path.length > MAX_PATH_LENGTH) return `changed_files[${i}] exceeds maximum length (${MAX_PATH_LENGTH})`;
    if (!isSafePath(path)) return `changed_files[${i}] is not a relative repository path (no leading /, no . or .. segments)`;
    if (!out.includes(path)) out.push(path);
  }
  if (out.length === 0) return "changed_files must include at least one file path";
  return out;
}

// ---------------------------------------------------------------------------------------------
// Planning

const step = (kind: StepKind, files: string[] = []): PlannedStep => ({ number: 0, kind, files, status: "pending", attempts: [], findings: null, note: null });
const numbered = (steps: PlannedStep[]) => steps.map((s, i) => ({ ...s, number: i + 1 }));

function batches(files: string[]): PlannedStep[] {
  const out: PlannedStep[] = [];
  for (let i = 0; i < files.length; i += BATCH_SIZE) out.push(step("review_batch", files.slice(i, i + BATCH_SIZE)));
  return out;
}

/** A new session's steps: list the files if none were given, a review per batch, the merge, and the publish for a pull request. */
export function planSteps(spec: Pick<SessionSpec, "changedFiles" | "pullNumber">): PlannedStep[] {
  const head = spec.changedFiles === null ? [step("list_files")] : batches(spec.changedFiles);
  return numbered([...head, step("merge"), ...(spec.pullNumber !== null ? [step("publish")] : [])]);
}

/** After list_files: its files' review steps go in right behind it. */
export function withListedFiles(steps: PlannedStep[], listStep: number, files: string[]): PlannedStep[] {
  const at = steps.findIndex((s) => s.number === listStep);
  return numbered([...steps.slice(0, at + 1), ...batches(files), ...steps.slice(at + 1)]);
}

/**
 * The steps the next alarm runs: the first pending step, and when it is a review and the session
 * is parallel, the review steps right after it, up to `workers` in all.
 */
export function nextSteps(state: SessionState): PlannedStep[] {
  const first = state.steps.findIndex((s) => s.status === "pending" || s.status === "running");
  if (first < 0) return [];
  const head = state.steps[first]!;
  if (head.kind !== "review_batch") return [head];
  const out = [head];
  for (const s of state.steps.slice(first + 1)) {
    if (out.length >= state.spec.workers || s.kind !== "review_batch" || (s.status !== "pending" && s.status !== "running")) break;
    out.push(s);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Step outcomes

export type StepOutcome =
  | { ok: true; findings?: number; note?: string; warnings?: string[]; listed?: string[]; skipped?: boolean; review?: { id: number; url: string } }
  | { ok: false; retryable: boolean; error: string; /** When GitHub says when to come back (a rate limit's reset). */ retryAt?: number };

/** Exponential backoff between attempts: 2 s, 4 s, … at most a minute; a rate limit waits for its reset (at most 15 minutes). */
export function retryDelayMs(failedAttempts: number, now: number, retryAt?: number): number {
  if (retryAt !== undefined) return Math.min(15 * 60_000, Math.max(1000, retryAt - now));
  return Math.min(60_000, 2000 * 2 ** (failedAttempts - 1));
}

const ERROR_TEXT_MAX = 1000;
const MAX_WARNINGS = 100;
export const addWarnings = (state: SessionState, more: string[]) => {
  state.warnings = [...state.warnings, ...more].slice(0, MAX_WARNINGS);
};

/**
 * Records what one run of a step did and moves the session on. Returns the wait before the next
 * attempt when the step is to be retried. A pause or cancel that arrived while the step ran keeps
 * its status; the step's own record is kept either way.
 */
export function applyOutcome(state: SessionState, number: number, startedAt: number, finishedAt: number, outcome: StepOutcome): { retryInMs: number | null } {
  const at = state.steps.findIndex((s) => s.number === number);
  const s = state.steps[at];
  if (!s) return { retryInMs: null };
  const attempt: StepAttempt = { started_at: new Date(startedAt).toISOString(), duration_ms: Math.max(0, finishedAt - startedAt), outcome: "ok" };
  state.lastActivityAt = new Date(finishedAt).toISOString();
  state.updatedAt = state.lastActivityAt;
  if (outcome.ok) {
    s.attempts.push(attempt);
    s.status = outcome.skipped ? "skipped" : "completed";
    if (outcome.findings !== undefined) s.findings = outcome.findings;
    if (outcome.note) s.note = outcome.note;
    if (outcome.warnings?.length) addWarnings(state, outcome.warnings);
    if (outcome.review) state.review = outcome.review;
    if (outcome.listed) state.steps = withListedFiles(state.steps, number, outcome.listed);
    state.findingsCount = findingsSoFar(state);
    return { retryInMs: null };
  }
  const error = outcome.error.slice(0, ERROR_TEXT_MAX);
  const failures = s.attempts.filter((a) => a.outcome !== "ok").length + 1;
  if (outcome.retryable && failures < MAX_STEP_ATTEMPTS) {
    const retryInMs = retryDelayMs(failures, finishedAt, outcome.retryAt);
    s.attempts.push({ ...attempt, outcome: "retry", error, retry_in_ms: retryInMs });
    s.status = "pending";
    return { retryInMs };
  }
  s.attempts.push({ ...attempt, outcome: "failed", error });
  s.status = "failed";
  if (state.status === "executing" || state.status === "paused") {
    state.status = "failed";
    state.error = `Step ${number} (${s.kind}) failed${failures > 1 ? ` after ${failures} attempts` : ""}: ${error}`.slice(0, ERROR_TEXT_MAX);
  }
  return { retryInMs: null };
}

/** The merged count once the merge has run (duplicates gone), else what the review steps found so far. */
function findingsSoFar(state: SessionState): number {
  const merged = state.steps.find((s) => s.kind === "merge" && s.status === "completed");
  return merged?.findings ?? state.steps.reduce((n, s) => n + (s.kind === "review_batch" ? (s.findings ?? 0) : 0), 0);
}

/** Marks an executing session completed once every step is done. */
export function settle(state: SessionState, now: number): void {
  if (state.status === "executing" && state.steps.every((s) => s.status === "completed" || s.status === "skipped")) state.status = "completed";
  if (TERMINAL.has(state.status) && !state.finishedAt) state.finishedAt = new Date(now).toISOString();
}

// ---------------------------------------------------------------------------------------------
// Merging

const bySeverity = (a: Finding, b: Finding) =>
  SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || a.location.file.localeCompare(b.location.file) || a.location.startLine - b.location.startLine || a.id.localeCompare(b.id);

/**
 * One review from the batches' reviews. A finding repeats across batches only when a rule fires
 * per batch at the same place, so findings are one per id and location. Risk is the highest any
 * batch saw; the classification is the one covering most files (first batch wins a tie).
 */
export function mergeBatches(results: BatchResult[], commit: string, warnings: string[]): ReviewResult {
  const seen = new Map<string, BatchFinding>();
  for (const r of results) {
    for (const f of r.findings) {
      const key = `${f.id}\u0000${f.location.file}\u0000${f.location.startLine}`;
      const prior = seen.get(key);
      if (!prior || SEVERITY_RANK[f.severity] > SEVERITY_RANK[prior.severity]) seen.set(key, f);
    }
  }
  const findings = [...seen.values()].sort(bySeverity);
  const weight = new Map<ChangeType, number>();
  for (const r of results) weight.set(r.classification, (weight.get(r.classification) ?? 0) + r.files.length);
  let classification: ChangeType = "refactor";
  let best = -1;
  for (const [c, w] of weight) if (w > best) [classification, best] = [c, w];
  const risk = results.reduce((m, r) => Math.max(m, r.risk_score), 1);
  const files = results.reduce((n, r) => n + r.files.length, 0);
  const counts = Object.entries(findings.reduce<Record<string, number>>((acc, f) => ({ ...acc, [f.severity]: (acc[f.severity] ?? 0) + 1 }), {})).map(([sev, n]) => `${n} ${sev}`);
  const summary =
    `Reviewed ${files} file(s) in ${results.length} batch(es) at ${commit.slice(0, 12)}. Classified as ${classification}. Risk ${risk}/5. ` +
    `${findings.length} finding(s)${counts.length ? ` (${counts.join(", ")})` : ""}.`;
  return {
    reviewed_commit: commit,
    risk_score: risk,
    classification,
    summary,
    files_reviewed: files,
    batches: results.length,
    findings_total: findings.length,
    findings: findings.slice(0, MAX_RESULT_FINDINGS),
    warnings,
  };
}

// ---------------------------------------------------------------------------------------------
// Views

const doneSteps = (state: SessionState) => state.steps.filter((s) => s.status === "completed" || s.status === "skipped").length;

/** Progress from the step counts, as the session's object holds them or as its D1 row keeps them. */
export const progressFrom = (completed: number, total: number) => ({
  completed_steps: completed,
  total_steps: total,
  percentage: total === 0 ? 0 : Math.round((completed / total) * 100),
});

export const progressOf = (state: SessionState) => progressFrom(doneSteps(state), state.steps.length);

function timing(state: SessionState, now: number) {
  const start = Date.parse(state.spec.createdAt);
  const end = state.finishedAt ? Date.parse(state.finishedAt) : now;
  const inactive = Math.max(0, now - Date.parse(state.lastActivityAt));
  return {
    start_time: state.spec.createdAt,
    elapsed_ms: Math.max(0, end - start),
    last_activity_ms: inactive,
    appears_stalled: state.status === "executing" && inactive > STALLED_AFTER_MS,
  };
}

/** get_review_status's answer (the reference's ReviewStatus, plus the result once there is one). */
export function statusView(state: SessionState, now: number, result: ReviewResult | null) {
  const current = state.steps.find((s) => s.status === "running" || s.status === "pending" || s.status === "failed");
  return {
    session: {
      session_id: state.spec.sessionId,
      status: state.status,
      repo: `${state.spec.owner}/${state.spec.name}`,
      pull_number: state.spec.pullNumber,
      commit_hash: state.spec.commitHash,
      base_ref: state.spec.baseRef,
      title: state.spec.title,
      author: state.spec.author,
      source: state.spec.source,
      created_at: state.spec.createdAt,
      updated_at: state.updatedAt,
      current_step: TERMINAL.has(state.status) && state.status !== "failed" ? null : (current?.number ?? null),
      total_steps: state.steps.length,
      error: state.error,
      review_url: state.review?.url ?? null,
    },
    progress: progressOf(state),
    telemetry: timing(state, now),
    findings_count: state.findingsCount,
    ...(result ? { result } : {}),
  };
}

/** get_review_telemetry's answer: the timing, and every step's attempts. */
export function telemetryView(state: SessionState, now: number, stepGapMs: number) {
  return {
    session_id: state.spec.sessionId,
    session_status: state.status,
    session_error: state.error,
    telemetry: {
      ...timing(state, now),
      retries: state.steps.reduce((n, s) => n + s.attempts.filter((a) => a.outcome === "retry").length, 0),
      steps: state.steps.map((s) => ({
        step_number: s.number,
        kind: s.kind,
        status: s.status,
        files: s.files.length,
        findings: s.findings,
        duration_ms: s.attempts.reduce((n, a) => n + a.duration_ms, 0),
        attempts: s.attempts,
        note: s.note,
      })),
      warnings: state.warnings,
    },
    reactive_config: { batch_size: BATCH_SIZE, workers: state.spec.workers, max_step_attempts: MAX_STEP_ATTEMPTS, step_gap_ms: stepGapMs },
  };
}
