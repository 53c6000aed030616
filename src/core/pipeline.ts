/**
 * The composite-tool engine (seed 003's "Code Mode"): a read pipeline whose steps may refer to
 * the previous step's result with `$prev`, a write batch that stops at the first failure unless
 * told otherwise, and one-op dispatch for sessions. It knows nothing of what an op does: the
 * document store's ops and (later) every registry tool plug in through `PipelineOp`, so there is
 * one engine, not one per surface.
 */
import type { Ctx } from "./context";
import { excerpt, type ErrorBody, toErrorBody, ToolError } from "./errors";

export type OpKind = "query" | "execute" | "session";

export type StepOutcome = { ok: true; data: Record<string, unknown> } | { ok: false; error: ErrorBody };

export interface PipelineOp {
  name: string;
  kind: OpKind;
  /**
   * Runs the op on already-resolved params. Never throws: failures are outcomes. `stepIndex` is
   * the op's place in its call, so a write can tell itself apart from an identical one beside it.
   */
  invoke(ctx: Ctx, params: Record<string, unknown>, stepIndex: number): Promise<StepOutcome>;
  /** Rate-limit units one call of the op costs, from its params (src/core/meter.ts); absent: 1. */
  units?(params: Record<string, unknown>): number;
  /**
   * Runs consecutive steps of this op in one go (a write batch's run of adds), with the same
   * effects and outcomes as invoking them one after another. The engine hands it only steps
   * without `$prev` references, each costing one unit. One outcome per step run, in order; with
   * `stopAtFailure` the outcomes end at the first failure and nothing after it was applied.
   */
  invokeRun?(ctx: Ctx, steps: { params: Record<string, unknown>; stepIndex: number }[], stopAtFailure: boolean): Promise<StepOutcome[]>;
}

/** How the engine names things back to the caller: the tools of this surface and their ops. */
export interface PipelineSurface {
  queryTool: string;
  executeTool: string;
  /** The op a step names; `kind` is the tool asking, so a surface can explain a name that is another tool's. */
  find(name: string, kind?: OpKind): PipelineOp | undefined;
  /** Op names per kind, in the order `describe` lists them. */
  names(kind: OpKind): readonly string[];
  /**
   * "null": a `$prev` reference that resolves to nothing gives the param null, seed 003's rule (the
   * document store). Absent: the key is left out, as compact mode needs: there null clears a field
   * (an assignee in task_update's patch), and a reference that missed must not clear anything.
   */
  unresolved?: "null";
  /**
   * A write's result item also carries its op's scalar fields, where seed 003's example has them
   * ({op: "add", success: true, hash}), beside the whole result in `data`.
   */
  headlineFields?: true;
}

export interface RawStep {
  op?: unknown;
  params?: unknown;
  [extra: string]: unknown;
}

/** Runs `fn`, turning anything it throws into a failed outcome. */
export async function outcome(fn: () => Promise<Record<string, unknown>>): Promise<StepOutcome> {
  try {
    return { ok: true, data: await fn() };
  } catch (err) {
    return failed(err);
  }
}

/** What a step that threw `err` answers. */
export function failed(err: unknown): StepOutcome {
  const error = toErrorBody(err);
  if (error.code === "internal_error") console.error("pipeline op failed", err);
  return { ok: false, error };
}

const PREV = /^\$prev((?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d{1,6}\])*)$/;
const SEGMENT = /\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d{1,6})\]/g;

/**
 * The value a `$prev…` reference names in the previous step's result, or null when a field is
 * missing or an index is out of range (the seed's rule). Anything that is not a well-formed
 * reference is not one, and stays the string it is.
 */
export function resolveReference(ref: string, prev: unknown): { matched: boolean; value: unknown } {
  const m = PREV.exec(ref);
  if (!m) return { matched: false, value: ref };
  let at: unknown = prev;
  for (const seg of m[1]!.matchAll(SEGMENT)) {
    if (at === null || typeof at !== "object") return { matched: true, value: null };
    if (seg[1] !== undefined) {
      at = Array.isArray(at) || !Object.prototype.hasOwnProperty.call(at, seg[1]) ? undefined : (at as Record<string, unknown>)[seg[1]];
    } else {
      at = Array.isArray(at) ? at[Number(seg[2])] : undefined;
    }
    if (at === undefined) return { matched: true, value: null };
  }
  return { matched: true, value: at === undefined ? null : at };
}

/**
 * Replaces top-level string params that are `$prev` references (only those, as the seed says:
 * nested values and other strings are left alone); one that resolves to nothing gives null, or
 * is left out (see PipelineSurface.unresolved). Returns the references that came out null, so an
 * op that then fails can say why.
 */
export function resolvePrev(params: Record<string, unknown>, prev: unknown, unresolved?: "null"): { params: Record<string, unknown>; nulls: string[] } {
  const out: Record<string, unknown> = {};
  const nulls: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (typeof v === "string" && v.startsWith("$prev")) {
      const r = resolveReference(v, prev);
      if (r.matched && r.value === null) {
        nulls.push(`${k}: ${v}`);
        if (unresolved !== "null") continue;
      }
      out[k] = r.value;
    } else {
      out[k] = v;
    }
  }
  return { params: out, nulls };
}

/** A step's params: `params` plus fields given at the step's top level that params lacks. */
function stepParams(step: RawStep): Record<string, unknown> {
  const given = step.params;
  const params: Record<string, unknown> = given && typeof given === "object" && !Array.isArray(given) ? { ...(given as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(step)) {
    if (k === "op" || k === "params") continue;
    if (!Object.prototype.hasOwnProperty.call(params, k)) params[k] = v;
  }
  return params;
}

const list = (names: readonly string[]) => names.join(", ");

/** Refuses the whole call before anything runs when a step names an op this tool does not run. */
function precheck(surface: PipelineSurface, steps: readonly RawStep[], kind: "query" | "execute"): PipelineOp[] {
  return steps.map((step, i) => {
    if (typeof step.op !== "string" || step.op === "") {
      throw new ToolError("invalid_input", `Step ${i} has no 'op'.`, {
        hint: `Every step is {"op": "<name>", "params": {…}}; ops here: ${list(surface.names(kind))}.`,
      });
    }
    const op = surface.find(step.op, kind);
    if (!op || op.kind !== kind) {
      const name = excerpt(step.op, 60);
      throw kind === "query"
        ? new ToolError("invalid_input", `'${name}' is not a read operation. Use the '${surface.executeTool}' tool for write operations (${list(surface.names("execute"))}).`, {
            hint: `Read operations: ${list(surface.names("query"))}. Describe any op with {"op": "describe", "params": {"target": "<op>"}}.`,
          })
        : new ToolError("invalid_input", `'${name}' is not a write operation. Use the '${surface.queryTool}' tool for read operations (${list(surface.names("query"))}).`, {
            hint: `Write operations: ${list(surface.names("execute"))}.`,
          });
    }
    return op;
  });
}

/**
 * Charges a composite call's ops before any runs (docs/limits.md: Rate limits): each op's units (one, or
 * more for a batch op), less what the call itself already paid. Returns each step's share.
 */
async function prepay(ctx: Ctx, ops: readonly PipelineOp[], steps: readonly RawStep[], tool: string): Promise<number[]> {
  const shares = ops.map((op, i) => op.units?.(stepParams(steps[i]!)) ?? 1);
  const total = shares.reduce((a, b) => a + b, 0);
  const paid = ctx.paid ?? 1;
  if (total > paid) await ctx.meter?.charge(total - paid, { what: `${tool} (${steps.length} op${steps.length === 1 ? "" : "s"})`, units: total });
  return shares;
}

async function runStep(ctx: Ctx, surface: PipelineSurface, op: PipelineOp, params: Record<string, unknown>, prev: unknown, stepIndex: number, share: number): Promise<StepOutcome> {
  const { params: resolved, nulls } = resolvePrev(params, prev, surface.unresolved);
  // A $prev reference can bring in a longer batch than the step's share paid for: the rest first.
  const units = op.units?.(resolved) ?? 1;
  if (units > share) {
    const topUp = await outcome(async () => {
      await ctx.meter?.charge(units - share, { what: `${op.name} (its $prev batch)`, units });
      return {};
    });
    if (!topUp.ok) return topUp;
  }
  const result = await op.invoke({ ...ctx, paid: Math.max(units, share) }, resolved, stepIndex);
  if (result.ok || nulls.length === 0) return result;
  const note = `These $prev references resolved to null (a missing field or index)${surface.unresolved === "null" ? "" : " and were left out"}: ${nulls.map((n) => excerpt(n, 80)).join("; ")}.`;
  return { ok: false, error: { ...result.error, hint: `${note} ${result.error.hint}`.trim() } };
}

export interface QueryStepResult {
  stepIndex: number;
  op: string;
  result: Record<string, unknown>;
  isError: boolean;
}

export type PipelineAnswer =
  { kind: "single"; op: string; outcome: StepOutcome } | { kind: "steps"; steps: QueryStepResult[]; totalSteps: number; completedSteps: number; failedSteps: number; firstError: ErrorBody | null };

/**
 * The read pipeline. Each step sees the previous step's result as `$prev` (`{}` for the first);
 * a failing step is recorded and the pipeline goes on.
 */
export async function runQuery(ctx: Ctx, surface: PipelineSurface, steps: readonly RawStep[]): Promise<PipelineAnswer> {
  const ops = precheck(surface, steps, "query");
  const shares = await prepay(ctx, ops, steps, surface.queryTool);
  if (steps.length === 1) return { kind: "single", op: ops[0]!.name, outcome: await runStep(ctx, surface, ops[0]!, stepParams(steps[0]!), {}, 0, shares[0]!) };
  const out: QueryStepResult[] = [];
  let prev: unknown = {};
  let firstError: ErrorBody | null = null;
  for (let i = 0; i < steps.length; i++) {
    const o = await runStep(ctx, surface, ops[i]!, stepParams(steps[i]!), prev, i, shares[i]!);
    const result = o.ok ? o.data : { error: o.error };
    if (!o.ok) firstError ??= o.error;
    out.push({ stepIndex: i, op: ops[i]!.name, result, isError: !o.ok });
    prev = result;
  }
  const failed = out.filter((s) => s.isError).length;
  return { kind: "steps", steps: out, totalSteps: steps.length, completedSteps: steps.length - failed, failedSteps: failed, firstError };
}

export interface ExecuteOpResult {
  stepIndex: number;
  op: string;
  success: boolean;
  data?: Record<string, unknown>;
  error?: ErrorBody;
  /** With PipelineSurface.headlineFields: the op's scalar fields. */
  [field: string]: unknown;
}

const ITEM_KEYS = new Set(["stepIndex", "op", "success", "data", "error"]);

/** An op result's scalar fields (hash, matched, count, …): small, and what a batch's reader looks for first. */
function headline(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([k, v]) => !ITEM_KEYS.has(k) && (v === null || typeof v !== "object")));
}

export interface ExecuteAnswer {
  results: ExecuteOpResult[];
  totalOps: number;
  succeeded: number;
  failed: number;
  /** Ops not run because an earlier one failed (without continueOnError). */
  skipped: number;
  firstError: ErrorBody | null;
}

/** The write batch: ops in order, `$prev` as in the pipeline, stopping at the first failure unless continueOnError. */
export async function runExecute(ctx: Ctx, surface: PipelineSurface, operations: readonly RawStep[], continueOnError: boolean): Promise<ExecuteAnswer> {
  const ops = precheck(surface, operations, "execute");
  const shares = await prepay(ctx, ops, operations, surface.executeTool);
  const results: ExecuteOpResult[] = [];
  let prev: unknown = {};
  let firstError: ErrorBody | null = null;
  const record = (i: number, o: StepOutcome): boolean => {
    results.push(
      o.ok ? { stepIndex: i, op: ops[i]!.name, success: true, ...(surface.headlineFields ? headline(o.data) : {}), data: o.data } : { stepIndex: i, op: ops[i]!.name, success: false, error: o.error },
    );
    prev = o.ok ? o.data : { error: o.error };
    if (o.ok) return true;
    firstError ??= o.error;
    return continueOnError;
  };
  for (let i = 0; i < operations.length;) {
    const end = runEnd(ops, operations, shares, i);
    if (end > i + 1) {
      const steps = operations.slice(i, end).map((step, k) => ({ params: stepParams(step), stepIndex: i + k }));
      const outcomes = await ops[i]!.invokeRun!({ ...ctx, paid: 1 }, steps, !continueOnError);
      let go = true;
      for (let k = 0; k < outcomes.length && go; k++) go = record(i + k, outcomes[k]!);
      if (!go) break;
      i = end;
      continue;
    }
    if (!record(i, await runStep(ctx, surface, ops[i]!, stepParams(operations[i]!), prev, i, shares[i]!))) break;
    i++;
  }
  const failed = results.filter((r) => !r.success).length;
  return { results, totalOps: operations.length, succeeded: results.length - failed, failed, skipped: operations.length - results.length, firstError };
}

/** Where the run of steps from `start` that its op may take in one go (invokeRun) ends: same op, no `$prev`, one unit each. */
function runEnd(ops: readonly PipelineOp[], steps: readonly RawStep[], shares: readonly number[], start: number): number {
  const op = ops[start]!;
  if (!op.invokeRun) return start + 1;
  const plain = (i: number) => shares[i] === 1 && !Object.values(stepParams(steps[i]!)).some((v) => typeof v === "string" && v.startsWith("$prev"));
  let end = start;
  while (end < steps.length && ops[end] === op && plain(end)) end++;
  return Math.max(end, start + 1);
}

/** The seed's one-line summaries, put before the JSON in the text content. */
export function pipelineSummary(a: PipelineAnswer): string {
  if (a.kind === "single") return `Pipeline: ${a.outcome.ok ? 1 : 0}/1 steps`;
  const head = `Pipeline: ${a.completedSteps} succeeded, ${a.failedSteps} failed out of ${a.totalSteps} operations`;
  return a.firstError ? `${head} | ${a.firstError.message}` : head;
}

export function executeSummary(a: ExecuteAnswer): string {
  const head = `Execute: ${a.succeeded} succeeded, ${a.failed} failed out of ${a.totalOps} operations`;
  return a.firstError ? `${head} | ${a.firstError.message}` : head;
}

/** The seed's summary line, rebuilt from what the call answered (one step: its result; several: the steps). */
export function queryText(payload: Record<string, unknown>, stepCount: number): string {
  const steps = payload.steps as QueryStepResult[] | undefined;
  const answer: PipelineAnswer =
    stepCount === 1 || !steps
      ? { kind: "single", op: "", outcome: { ok: true, data: payload } }
      : {
          kind: "steps",
          steps,
          totalSteps: steps.length,
          completedSteps: steps.filter((s) => !s.isError).length,
          failedSteps: steps.filter((s) => s.isError).length,
          firstError: (steps.find((s) => s.isError)?.result.error as ErrorBody | undefined) ?? null,
        };
  return `${pipelineSummary(answer)}\n${JSON.stringify({ ok: true, ...payload })}`;
}
