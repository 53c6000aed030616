/**
 * execute_plan's service: which steps run (single_step, all_ready, full_plan), each step's files
 * read from GitHub, the model asked for the step's changes, and, with apply_changes, every
 * step's changes committed (one commit per step) on the plan's branch through batch_commit's own
 * tool, then recorded on a saved plan's steps. Preview writes nothing anywhere.
 *
 * Steps run one after another, each seeing the changes earlier steps of the same call made, so a
 * full_plan run builds on itself. Commits happen after the last step, in one batch_commit call:
 * the branch moves once, and a failure halfway leaves it where it was.
 */
import { sha256Hex } from "../../db/ids";
import { iso } from "../../core/time";
import { batchCommit } from "../../git/batch-commit";
import { readRepoFile } from "../../git/contents";
import { githubFor } from "../../git/credentials";
import { resolveRepo } from "../../git/repo";
import { assertSafeRef, isSafeRef, type RepoName } from "../../git/tokens";
import { confirmBranchWrite, GitWriter, mappingGitHubErrors } from "../../git/writer";
import { requireModel } from "../../llm";
import type { CompletionModel } from "../../llm/types";
import type { Ctx } from "../../core/context";
import type { AnyToolDef } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { runTool } from "../../core/call";
import { parsePlan, WITHOUT_A_MODEL } from "../document/params";
import { followSteps, type Progress, readStepRows, recordCommitStatement, type StepRow, type StepState, stepStates, summarize } from "../progress/engine";
import { canonicalJson, completePlan, type Plan, planContent, type PlanInput, type PlanStep } from "../document/schema";
import { type CurrentFile, type GeneratedChange, MAX_GENERATED_BYTES, MAX_SHOWN_FILE_BYTES, readStepAnswer, STEP_SYSTEM_PROMPT, StepFailure, stepFiles, stepPrompt } from "./step-changes";
import { findPlan, getPlan, type PlanMeta, readVersion } from "../store/model";

export const EXECUTION_MODES = ["single_step", "all_ready", "full_plan"] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];
export const MAX_EXECUTE_STEPS = 20;
/** Tokens a step's answer may take: whole files come back, so well above a review's. */
const STEP_MAX_TOKENS = 8192;
const STEP_TIMEOUT_MS = 120_000;

export interface ExecuteRequest {
  plan?: string | Record<string, unknown>;
  plan_id?: string;
  mode: ExecutionMode;
  step_number?: number;
  apply_changes: boolean;
  max_steps: number;
  stop_on_failure: boolean;
  additional_context?: string;
  repo?: string;
  branch?: string;
  base?: string;
}

export interface StepError {
  code: string;
  message: string;
  hint: string;
  retryable: boolean;
}

export interface StepResult {
  step_number: number;
  title: string;
  success: boolean;
  generated_code: GeneratedChange[];
  reasoning: string;
  error?: StepError;
  duration_ms: number;
  commit?: { sha: string };
  warnings: string[];
}

export interface GitHubOutcome {
  repo: string;
  branch: string;
  base: string;
  start_sha: string;
  branch_existed: boolean;
  branch_created: boolean;
  head_sha: string | null;
  commits: { step_number: number; sha: string }[];
}

export interface ExecutionResult {
  success: boolean;
  plan_id: string | null;
  saved_plan: boolean;
  mode: ExecutionMode;
  apply_changes: boolean;
  step_results: StepResult[];
  next_ready_steps: number[];
  progress: Progress;
  error?: string;
  duration_ms: number;
  model: string;
  github: GitHubOutcome | null;
  recorded_steps: number[];
  plan_status: string | null;
  warnings: string[];
}

// ---------------------------------------------------------------------------------------------
// The plan, saved or sent

interface Target {
  plan: Plan;
  /** The saved plan whose steps' state is used and recorded, or null for a plan sent as JSON only. */
  meta: PlanMeta | null;
  /** Names the plan in commit messages and the default branch. */
  label: string;
  /** The plan's id as the caller knows it: null for a plan sent without one. */
  id: string | null;
}

async function resolvePlan(ctx: Ctx, req: ExecuteRequest, sent: PlanInput | undefined, warnings: string[]): Promise<Target> {
  if (req.plan_id !== undefined) {
    const meta = await getPlan(ctx, req.plan_id);
    return { plan: await readVersion(ctx, meta.id, meta.version), meta, label: meta.id, id: meta.id };
  }
  // checkRequest has made sure exactly one of plan and plan_id came: without plan_id, the plan was sent.
  const doc = sent!;
  const now = iso(ctx.clock.now());
  const label = doc.id ?? `plan-${(await sha256Hex(canonicalJson(doc))).slice(0, 12)}`;
  const plan = completePlan(doc, { id: label, version: 1, created_at: now, updated_at: now });
  if (doc.id === undefined) return { plan, meta: null, label, id: null };
  const meta = await findPlan(ctx, doc.id);
  if (!meta) return { plan, meta: null, label, id: doc.id };
  // The sent plan is the saved one only when it says the same: step numbers must mean the same steps.
  const stored = await readVersion(ctx, meta.id, meta.version);
  if (planContent({ ...plan, created_at: stored.created_at }) === planContent(stored)) return { plan: stored, meta, label, id: meta.id };
  warnings.push(
    `Plan ${meta.id} is saved, but the plan sent differs from its current version (v${meta.version}): it ran as sent, and its steps were not recorded. Pass plan_id to execute the saved version.`,
  );
  return { plan, meta: null, label, id: doc.id };
}

// ---------------------------------------------------------------------------------------------
// Which steps

/**
 * single_step runs a step whose dependencies are done: one not started, one started by hand
 * (start_step, then execute_plan to write it), or one that failed and is tried again.
 */
const SINGLE_EXECUTABLE = new Set(["ready", "in_progress", "failed"]);

function checkSingleStep(target: Target, states: Map<number, StepState>, req: ExecuteRequest, warnings: string[]): PlanStep {
  const n = req.step_number!;
  const step = target.plan.steps.find((s) => s.step_number === n);
  if (!step) {
    throw invalidInput(
      `Step ${n} is not in plan ${target.label}.`,
      `The plan's steps are ${
        target.plan.steps
          .map((s) => s.step_number)
          .slice(0, 30)
          .join(", ") || "none"
      }.`,
    );
  }
  const status = states.get(n)!.status;
  if (target.meta && !SINGLE_EXECUTABLE.has(status)) {
    const why = status === "pending" || status === "blocked" ? `waits on steps ${step.depends_on.join(", ")} (it is ${status})` : `is ${status}`;
    if (req.apply_changes) {
      throw new ToolError("step_not_ready", `Step ${n} of plan ${target.label} ${why}; with apply_changes a step runs once the steps it depends on are done, and only once.`, {
        hint: "view_progress shows which steps are ready; finish or skip the steps it waits on first, or preview it without apply_changes.",
      });
    }
    warnings.push(`Step ${n} ${why}: this preview assumes the steps it waits on are done.`);
  }
  return step;
}

/** The steps a mode starts with; full_plan takes more as the run goes (see `eligible`). */
function firstSteps(plan: Plan, states: Map<number, StepState>, req: ExecuteRequest, single: PlanStep | null): PlanStep[] {
  const byNumber = new Map(plan.steps.map((s) => [s.step_number, s]));
  const ordered = plan.dependency_graph.execution_order.map((n) => byNumber.get(n)!);
  if (single) return [single];
  // A step execute_plan already committed, whose task is not done yet, is not generated again.
  const fresh = ordered.filter((s) => states.get(s.step_number)!.commit === null);
  if (req.mode === "all_ready") return fresh.filter((s) => states.get(s.step_number)!.status === "ready");
  return fresh;
}

// ---------------------------------------------------------------------------------------------
// The repository and the files

interface Repo {
  name: RepoName;
  full: string;
  writer: GitWriter;
  branch: string;
  base: string;
  startSha: string;
  branchExists: boolean;
}

/** `plan/<id>`: the plan's own branch, so one plan's steps stack up on it call after call. */
export function planBranch(label: string): string {
  const slug = label
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/\.{2,}/g, ".")
    .replace(/^[-.]+|[-.]+$/g, "")
    .slice(0, 100)
    .replace(/\.lock$/, "");
  const branch = `plan/${slug || "unnamed"}`;
  return isSafeRef(branch) ? branch : "plan/unnamed";
}

async function openRepo(ctx: Ctx, req: ExecuteRequest, label: string, warnings: string[]): Promise<Repo> {
  const name = await resolveRepo(ctx, req.repo!);
  const writer = new GitWriter(githubFor(ctx.env, ctx.tenantId), name);
  const full = `${name.owner}/${name.name}`;
  const defaultBranch = await writer.defaultBranch();
  const base = req.base ?? defaultBranch;
  const branch = req.branch ?? planBranch(label);
  // Asked before the model runs, so an answer never costs a second round of generation.
  if (req.apply_changes) await confirmBranchWrite(ctx, writer, branch, `Commit plan ${label}'s generated changes`);
  const head = await writer.branchHead(branch);
  if (head && req.base !== undefined && req.base !== branch) warnings.push(`Branch '${branch}' exists: the steps start from its head, and base '${req.base}' is not used.`);
  const startSha = head ?? (await writer.branchHead(base)) ?? (await writer.resolveCommit(base));
  if (!startSha) {
    throw new ToolError("base_not_found", `base '${base}' is neither a branch nor a commit of ${full}.`, {
      hint: "Pass an existing branch or commit SHA as base, or leave it out for the default branch.",
    });
  }
  return { name, full, writer, branch, base, startSha, branchExists: head !== null };
}

/** The files as the steps see them: read once from GitHub at the start commit, then as earlier steps of this call left them. */
class Workspace {
  private readonly files = new Map<string, CurrentFile>();

  constructor(private readonly repo: Repo | null) {}

  async read(paths: string[]): Promise<Map<string, CurrentFile>> {
    const files = await Promise.all(paths.map(async (p) => this.files.get(p) ?? (await this.fetch(p))));
    return new Map(paths.map((p, i) => [p, files[i]!]));
  }

  private async fetch(path: string): Promise<CurrentFile> {
    if (!this.repo) return { kind: "unknown" };
    const f = await readRepoFile(this.repo.writer.gh, this.repo.name, path, this.repo.startSha, MAX_SHOWN_FILE_BYTES);
    const file: CurrentFile =
      f.kind === "file"
        ? { kind: "file", text: f.text }
        : f.kind === "missing"
          ? { kind: "missing" }
          : f.kind === "too_large"
            ? { kind: "unreadable", reason: `it is ${f.size} bytes, more than the ${MAX_SHOWN_FILE_BYTES} a model rewrites whole` }
            : f.kind === "binary"
              ? { kind: "unreadable", reason: "it is a binary file" }
              : { kind: "unreadable", reason: `it is a ${f.type}, not a file` };
    this.files.set(path, file);
    return file;
  }

  apply(changes: GeneratedChange[]): void {
    for (const c of changes) this.files.set(c.path, c.change_type === "delete" ? { kind: "missing" } : { kind: "file", text: c.content! });
  }
}

// ---------------------------------------------------------------------------------------------
// One step

const stepError = (code: string, message: string, hint: string, retryable: boolean): StepError => ({ code, message, hint, retryable });

async function runStep(plan: Plan, step: PlanStep, model: CompletionModel, ws: Workspace, additionalContext: string, room: number): Promise<StepResult> {
  const started = Date.now();
  const base = { step_number: step.step_number, title: step.title, generated_code: [], reasoning: "", warnings: [] as string[] };
  try {
    const files = stepFiles(step);
    const current = await ws.read(files.all);
    const { prompt, masked } = stepPrompt({ plan, step, files, current, additionalContext });
    if (masked.length > 0) base.warnings.push(`Secret-shaped text was masked before the model saw it: ${masked.join(", ")}.`);
    const answer = await model.complete({
      messages: [
        { role: "system", content: STEP_SYSTEM_PROMPT },
        { role: "user", content: prompt },
      ],
      json: true,
      temperature: 0,
      maxTokens: STEP_MAX_TOKENS,
      timeoutMs: STEP_TIMEOUT_MS,
    });
    const read = readStepAnswer(answer.text, model.provider, step, files, current, room);
    if (read.unchanged.length > 0) base.warnings.push(`Left as they are (the answer repeats their content): ${read.unchanged.join(", ")}.`);
    ws.apply(read.changes);
    return { ...base, success: true, generated_code: read.changes, reasoning: read.reasoning, duration_ms: Date.now() - started };
  } catch (err) {
    // A step's own failure, or the model's; anything else (GitHub, the store) ends the call.
    if (err instanceof StepFailure) return { ...base, success: false, error: stepError(err.code, err.message, err.hint, err.retryable), duration_ms: Date.now() - started };
    if (err instanceof ToolError && err.code.startsWith("llm_")) {
      return { ...base, success: false, error: stepError(err.code, err.message, err.hint, err.retryable), duration_ms: Date.now() - started };
    }
    throw err;
  }
}

const generatedBytes = (r: StepResult) => r.generated_code.reduce((n, c) => n + (c.content === undefined ? 0 : new TextEncoder().encode(c.content).length), 0);

// ---------------------------------------------------------------------------------------------
// Committing and recording

interface BatchCommitAnswer {
  branch: string;
  created?: boolean;
  headSha?: string;
  results: { index: number; ok: boolean; sha?: string; error?: string; detail?: string }[];
}

const commitMessage = (label: string, step: StepResult, model: string) => `plan ${label} step ${step.step_number}: ${step.title.replace(/\s+/g, " ").trim()}\n\nGenerated by execute_plan (${model}).`;

function commitSteps(ctx: Ctx, repo: Repo, label: string, steps: StepResult[], model: string): Promise<BatchCommitAnswer> {
  return runTool<BatchCommitAnswer>(batchCommit as AnyToolDef, ctx, {
    repo: repo.full,
    branch: repo.branch,
    base: repo.base,
    commits: steps.map((s) => ({
      message: commitMessage(label, s, model),
      files: s.generated_code.map((c) => (c.change_type === "delete" ? { path: c.path, delete: true } : { path: c.path, content: c.content })),
    })),
    format: "json",
  });
}

/** A stored-looking row for a step this call committed on a plan that is not saved: progress then reads as for a saved one. */
const committedRow = (n: number): StepRow => ({
  step_number: n,
  state: {
    status: "completed",
    retries: 0,
    rev: 1,
    started_at: null,
    started_by: null,
    finished_at: null,
    finished_by: null,
    notes: "",
    error: "",
    files_modified: "[]",
    repo: null,
    branch: null,
    commit_sha: null,
    updated_at: "",
  },
  task: null,
});

// ---------------------------------------------------------------------------------------------

/** Refusals that need nothing read: bad input changes nothing and costs nothing. */
function checkRequest(req: ExecuteRequest): void {
  if ((req.plan === undefined) === (req.plan_id === undefined)) {
    throw invalidInput("Pass either plan or plan_id, exactly one.", "plan is the plan itself (JSON); plan_id names a saved plan (list_plans shows them).");
  }
  if (req.mode === "single_step" && req.step_number === undefined) {
    throw invalidInput('step_number is required when mode is "single_step"', "Pass step_number, or mode all_ready (every ready step) or full_plan (in dependency order).");
  }
  if (req.mode !== "single_step" && req.step_number !== undefined) {
    throw invalidInput(`step_number is only for mode single_step (mode is ${req.mode}).`, "Leave step_number out, or pass mode: single_step.");
  }
  if (req.apply_changes && req.repo === undefined) {
    throw invalidInput("repo is required when apply_changes is true", "Pass repo (owner/name): the changes are committed there, on a new branch plan/<plan id> unless you name one.");
  }
  if (req.repo === undefined && (req.branch !== undefined || req.base !== undefined)) {
    throw invalidInput("branch and base need repo.", "Pass repo (owner/name) with them, or leave them out.");
  }
  assertSafeRef("branch", req.branch);
  assertSafeRef("base", req.base);
}

interface Run {
  plan: Plan;
  states: Map<number, StepState>;
  req: ExecuteRequest;
  model: CompletionModel;
  ws: Workspace;
  warnings: string[];
}

/** The steps, one after another, as the mode picks them. */
async function runSteps(ctx: Ctx, run: Run, single: PlanStep | null): Promise<StepResult[]> {
  const { plan, states, req, warnings } = run;
  const done = new Set([...states.values()].filter((s) => s.status === "completed" || s.status === "skipped").map((s) => s.step_number));
  const succeeded = new Set<number>();
  // full_plan: a step not yet started runs once everything it depends on is done, before this call or in it.
  const eligible = (s: PlanStep) => {
    const status = states.get(s.step_number)!.status;
    return (status === "ready" || status === "pending") && s.depends_on.every((d) => done.has(d) || succeeded.has(d));
  };
  const candidates = firstSteps(plan, states, req, single);
  const results: StepResult[] = [];
  let room = MAX_GENERATED_BYTES;
  for (const [i, step] of candidates.entries()) {
    if (results.length >= req.max_steps) {
      if (req.mode === "all_ready" || candidates.slice(i).some(eligible)) warnings.push(`max_steps (${req.max_steps}) reached; run again for the remaining steps.`);
      break;
    }
    if (req.mode === "full_plan" && !eligible(step)) continue;
    const r = await runStep(plan, step, run.model, run.ws, req.additional_context ?? "", room);
    results.push(r);
    await ctx.progress?.(results.length, Math.min(req.max_steps, candidates.length), `step ${step.step_number} ${r.success ? "generated" : "failed"}`);
    if (r.success) {
      succeeded.add(step.step_number);
      room -= generatedBytes(r);
    } else if (req.stop_on_failure) break;
  }
  if (results.length === 0) warnings.push(`No steps to execute: ${req.mode === "all_ready" ? "no step is ready" : "every step is done, in progress, failed or waiting on one that is"}.`);
  return results;
}

/**
 * Commits the generated steps, one commit each, through batch_commit; a step whose commit did not
 * land becomes a failed step (batch_commit stops at its first failure, keeping what came before).
 */
async function applySteps(ctx: Ctx, repo: Repo, label: string, results: StepResult[], model: string): Promise<Partial<GitHubOutcome>> {
  const generated = results.filter((r) => r.success);
  if (generated.length === 0) return {};
  const answer = await commitSteps(ctx, repo, label, generated, model);
  const commits: GitHubOutcome["commits"] = [];
  generated.forEach((r, i) => {
    const entry = answer.results.find((x) => x.index === i);
    if (entry?.ok && entry.sha) {
      r.commit = { sha: entry.sha };
      commits.push({ step_number: r.step_number, sha: entry.sha });
      return;
    }
    r.success = false;
    r.error = entry
      ? stepError(
          entry.error ?? "commit_failed",
          `The step's commit failed: ${entry.detail ?? entry.error ?? "unknown"}`,
          "Nothing of this step or the ones after it landed; retry the call (earlier steps stay committed on the branch).",
          true,
        )
      : stepError("not_committed", "Not committed: an earlier step's commit in this call failed.", "Retry the call; the steps committed before the failure stay on the branch.", true);
  });
  return { branch: answer.branch, branch_created: answer.created === true, head_sha: answer.headSha ?? null, commits };
}

/**
 * Records a saved plan's committed steps (completed, with their commit), then moves the plan's
 * status as its steps imply. A step plan_to_tasks linked to a task keeps the task's state: the
 * commit is recorded on it, and the task moves through the task tools.
 */
async function recordSteps(
  ctx: Ctx,
  meta: PlanMeta,
  plan: Plan,
  github: GitHubOutcome,
  results: StepResult[],
  warnings: string[],
): Promise<{ rows: Map<number, StepRow> | null; status: string; recorded: number[] }> {
  const fresh = await findPlan(ctx, meta.id);
  if (!fresh) {
    warnings.push(`Plan ${meta.id} was deleted while this call ran: the commits landed, but no step was recorded.`);
    return { rows: null, status: meta.status, recorded: [] };
  }
  await ctx.d1.batch(
    github.commits.map((c) => {
      const r = results.find((x) => x.step_number === c.step_number)!;
      return recordCommitStatement(ctx, meta.id, c.step_number, {
        repo: github.repo,
        branch: github.branch,
        sha: c.sha,
        files: r.generated_code.map((g) => g.path),
        notes: `Committed by execute_plan${r.reasoning ? `: ${r.reasoning.slice(0, 500)}` : "."}`,
      });
    }),
  );
  const rows = await readStepRows(ctx, meta.id);
  const recorded = github.commits.map((c) => c.step_number);
  const linked = recorded.filter((n) => rows.get(n)?.task);
  if (linked.length > 0) {
    warnings.push(`Steps ${linked.join(", ")} are tracked by tasks (plan_to_tasks): their commits are recorded, and each stays as its task is until the task is moved on (task_update).`);
  }
  if (fresh.version !== meta.version) {
    warnings.push(`Plan ${meta.id} moved to v${fresh.version} while this call ran (it executed v${meta.version}); its status was left as it is.`);
    return { rows, status: fresh.status, recorded };
  }
  return { rows, status: (await followSteps(ctx, fresh, stepStates(plan, rows))).status, recorded };
}

export async function executePlan(ctx: Ctx, req: ExecuteRequest): Promise<ExecutionResult> {
  const started = Date.now();
  const warnings: string[] = [];
  // The plan first: a bad plan is the call's first problem, named as such.
  const doc = req.plan !== undefined ? parsePlan(req.plan, "execute_plan") : undefined;
  checkRequest(req);
  const target = await resolvePlan(ctx, req, doc, warnings);
  const { plan, meta, label } = target;
  const stored = meta ? await readStepRows(ctx, meta.id) : new Map<number, StepRow>();
  const states = new Map(stepStates(plan, stored).map((s) => [s.step_number, s]));
  const single = req.mode === "single_step" ? checkSingleStep(target, states, req, warnings) : null;
  const model = requireModel(ctx.env, "execute_plan", WITHOUT_A_MODEL);
  const modelName = `${model.provider}:${model.model}`;

  return mappingGitHubErrors(async () => {
    const repo = req.repo !== undefined ? await openRepo(ctx, req, label, warnings) : null;
    if (!repo) warnings.push("No repo given: the model saw none of the files' current content, so changes to existing files are guesses. Pass repo for a real preview.");
    const results = await runSteps(ctx, { plan, states, req, model, ws: new Workspace(repo), warnings }, single);

    const github: GitHubOutcome | null = repo && {
      repo: repo.full,
      branch: repo.branch,
      base: repo.base,
      start_sha: repo.startSha,
      branch_existed: repo.branchExists,
      branch_created: false,
      head_sha: null,
      commits: [],
      ...(req.apply_changes ? await applySteps(ctx, repo, label, results, modelName) : {}),
    };
    const failedFirst = results.find((r) => !r.success);
    if (failedFirst && !results.some((r) => r.success)) {
      // Nothing was generated (or nothing landed): the call failed, as the first step did; the step results go with it.
      const e = failedFirst.error!;
      throw new ToolError(e.code, `Step ${failedFirst.step_number} failed: ${e.message}`, { hint: e.hint, retryable: e.retryable, data: { step_results: results } });
    }

    const committed = github?.commits ?? [];
    let rows = stored;
    let status: string | null = meta?.status ?? null;
    let recorded: number[] = [];
    if (meta && committed.length > 0) {
      const r = await recordSteps(ctx, meta, plan, github!, results, warnings);
      ({ status, recorded } = r);
      rows = r.rows ?? stored;
    } else if (committed.length > 0) {
      // A plan that is not saved has no stored state: what this call committed is all it has done.
      rows = new Map(committed.map((c) => [c.step_number, committedRow(c.step_number)]));
    }

    const after = stepStates(plan, rows);
    return {
      success: results.every((r) => r.success),
      plan_id: target.id,
      saved_plan: meta !== null,
      mode: req.mode,
      apply_changes: req.apply_changes,
      step_results: results,
      next_ready_steps: after.filter((s) => s.status === "ready").map((s) => s.step_number),
      progress: summarize(after),
      ...(failedFirst ? { error: `Step ${failedFirst.step_number} failed: ${failedFirst.error!.message}` } : {}),
      duration_ms: Date.now() - started,
      model: modelName,
      github,
      recorded_steps: recorded,
      plan_status: status,
      warnings,
    };
  });
}
