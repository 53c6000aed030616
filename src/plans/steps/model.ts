/**
 * The steps' rows as the step tools read and move them. A step's move is a compare-and-swap on its
 * row (rev), so two agents cannot both start one step; a batch of moves lands whole or not at all.
 */
import { iso } from "../../core/time";
import type { Ctx } from "../../core/context";
import { ToolError } from "../../core/errors";
import { readStepRows, stepStates, type StepRow, type StepState, type StoredStepStatus } from "../progress/engine";
import type { Plan } from "../document/schema";
import { getPlan, planActivity, readVersion, type PlanMeta } from "../store/model";

export interface Loaded {
  meta: PlanMeta;
  plan: Plan;
  rows: Map<number, StepRow>;
  states: StepState[];
}

export async function load(ctx: Ctx, planId: string): Promise<Loaded> {
  const meta = await getPlan(ctx, planId);
  const [plan, rows] = await Promise.all([readVersion(ctx, meta.id, meta.version), readStepRows(ctx, meta.id)]);
  return { meta, plan, rows, states: stepStates(plan, rows) };
}

export function stepOf(l: Loaded, n: number): StepState {
  const s = l.states.find((x) => x.step_number === n);
  if (!s) {
    const numbers = l.plan.steps.map((x) => x.step_number);
    throw new ToolError("not_found", `Step ${n} not found in plan ${l.meta.id}`, {
      hint: numbers.length > 0 ? `The plan's steps are ${numbers.slice(0, 30).join(", ")}${numbers.length > 30 ? ", …" : ""}.` : "The plan has no steps: save a version with steps first.",
    });
  }
  return s;
}

const lostRace = (n: number) =>
  new ToolError("conflict", `Step ${n} changed while this call ran; no move of this call was stored.`, {
    hint: "view_progress shows where it stands now; decide again from there.",
    retryable: true,
  });

export interface Move {
  status: StoredStepStatus;
  retries?: number;
  started?: boolean;
  finished?: boolean;
  notes?: string;
  error?: string;
  files_modified?: string[];
}

/**
 * One step's move as a statement: inserted when the step never moved, else updated only if its
 * row is still at the rev the caller read (a racing move makes this change nothing).
 */
function moveStatement(ctx: Ctx, planId: string, n: number, seen: StepRow["state"], m: Move): D1PreparedStatement {
  const now = iso(ctx.clock.now());
  const started = m.started ? now : (seen?.started_at ?? null);
  const startedBy = m.started ? ctx.actorId : (seen?.started_by ?? null);
  const finished = m.finished ? now : null;
  const finishedBy = m.finished ? ctx.actorId : null;
  const notes = m.notes ?? seen?.notes ?? "";
  const error = m.error ?? seen?.error ?? "";
  const files = JSON.stringify(m.files_modified ?? (seen ? (JSON.parse(seen.files_modified) as string[]) : []));
  const retries = m.retries ?? seen?.retries ?? 0;
  // Hand SQL: the race tests interleave on this statement's text (INSERT INTO plan_steps), which drizzle would lowercase and quote.
  return ctx.d1
    .prepare(
      `INSERT INTO plan_steps (tenant_id, plan_id, step_number, status, retries, started_at, started_by, finished_at, finished_by, notes, error, files_modified, rev, updated_at)
              VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 1, ?13)
              ON CONFLICT (tenant_id, plan_id, step_number) DO UPDATE SET status = ?4, retries = ?5, started_at = ?6, started_by = ?7, finished_at = ?8,
                finished_by = ?9, notes = ?10, error = ?11, files_modified = ?12, rev = plan_steps.rev + 1, updated_at = ?13
              WHERE plan_steps.rev IS ?14
              RETURNING step_number`,
    )
    .bind(ctx.tenantId, planId, n, m.status, retries, started, startedBy, finished, finishedBy, notes, error, files, now, seen?.rev ?? null);
}

/**
 * Fails the batch when the move before it changed nothing (its compare-and-swap lost), so a batch
 * of moves lands whole or not at all. SQLite has no RAISE outside triggers; json() of text that is
 * not JSON is an error, and D1 rolls back a batch on any error.
 */
// Hand SQL: the guard reads changes(), which drizzle cannot say.
const abortIfUnchanged = (ctx: Ctx, n: number) => ctx.d1.prepare(`SELECT CASE WHEN changes() = 0 THEN json(?) END`).bind(`${LOST_MOVE} ${n}`);
const LOST_MOVE = "lost step move";

/** Applies moves atomically; a lost compare-and-swap on any of them stores none, reported as conflict. */
export async function applyMoves(ctx: Ctx, l: Loaded, moves: ReadonlyArray<{ n: number; move: Move }>): Promise<void> {
  if (moves.length === 0) return;
  try {
    await ctx.d1.batch(
      moves.flatMap(({ n, move }) => [
        moveStatement(ctx, l.meta.id, n, l.rows.get(n)?.state ?? null, move),
        abortIfUnchanged(ctx, n),
        planActivity(ctx, l.meta.id, `plan.step_${move.status}`, `plan ${l.meta.name}: step ${n} ${move.status}${move.error ? `: ${move.error}` : ""}`),
      ]),
    );
  } catch (err) {
    if (!/malformed JSON/i.test(String(err))) throw err;
    // Which move lost is not in the error; the first one that no longer matches what was read is.
    const now = await load(ctx, l.meta.id);
    const lost = moves.find(({ n }) => now.rows.get(n)?.state?.rev !== l.rows.get(n)?.state?.rev) ?? moves[0]!;
    throw lostRace(lost.n);
  }
}
