/**
 * Runs as stored and as returned, and what the rest of the server needs of them: resolving a
 * run reference, the session's lazily minted run, the run context code refs default from, and
 * the reaper. The run tools live beside it, one file per verb; the guards they share are here.
 */
import { z } from "zod";
import { and, asc, count, desc, eq, inArray, lt, or, sql } from "drizzle-orm";
import { dbOf, fromColumnNames, jsonValues, statementOf } from "../../db/client";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import { activity, actors, runs } from "../../db/schema";
import { uuidv7 } from "../../db/ids";
import { iso, parseOffset } from "../../core/time";
import { sessionStub, type SessionRecord, type SessionRun } from "../../durable/session";
import type { Env } from "../../env";
import type { Ctx } from "../../core/context";
import { notFound, ToolError } from "../../core/errors";
import { boundedJson } from "../../core/bounds";

export const RUN_KINDS = ["session", "subagent"] as const;
export const RUN_STATUSES = ["running", "succeeded", "failed", "cancelled", "abandoned"] as const;
export const END_STATUSES = ["succeeded", "failed", "cancelled"] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/** `run-` and eight Crockford base32 characters (no i, l, o, u), so a key reads aloud and types cleanly. */
export const RUN_KEY = /^run-[0-9a-hjkmnp-tv-z]{8}$/;
const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";
/** What a recurring job names its series with (X-Run-Series-Key). */
export const RUN_SERIES_KEY = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$/;

/**
 * A run's key is derived from its id (the last 40 random bits), so every request racing to mint
 * one session's run writes the identical row. Two runs of a tenant sharing a key is a 1 in 2^40
 * event per pair; the unique index catches it and the mint retries with a new id.
 */
export function runKeyFor(id: string): string {
  let n = Number.parseInt(id.replace(/-/g, "").slice(-10), 16);
  let key = "";
  for (let i = 0; i < 8; i++) {
    key = CROCKFORD[n % 32]! + key;
    n = Math.floor(n / 32);
  }
  return `run-${key}`;
}

export const runSchema = z.object({
  id: z.string().describe("Run id (UUIDv7)."),
  run_key: z.string().describe("Short stable handle, e.g. run-7k3m9q2x; the run tools take it wherever they take a run."),
  actor_id: z.string().describe("The actor whose run it is."),
  parent_run_id: z.string().nullable().describe("The run it was forked from, or null for a root run."),
  root_run_id: z.string().describe("The root of its run tree (its own id for a root run)."),
  kind: z.enum(RUN_KINDS).describe("session (minted by a session's first write) or subagent (run_fork)."),
  status: z.enum(RUN_STATUSES).describe("running, succeeded, failed, cancelled, or abandoned (no heartbeat within the reaper's window)."),
  label: z.string().describe("Short label."),
  goal: z.string().describe("What the run is for."),
  agent_role: z.string().describe('The role the agent plays in it (e.g. reviewer), or "".'),
  run_series_key: z.string().nullable().describe("The recurring series it belongs to, or null."),
  session_id: z.string().describe('The MCP session it was started in, or "".'),
  head_sha: z.string().nullable().describe("Last reported HEAD commit, or null."),
  branch: z.string().nullable().describe("Last reported branch, or null."),
  dirty: z.boolean().nullable().describe("Whether the working tree had uncommitted changes at the last heartbeat, or null if never reported."),
  repository_id: z.string().nullable().describe("The repository it works in, or null."),
  counts: z.record(z.string(), z.number()).describe("Counters the run reported with run_heartbeat and run_end."),
  started_at: z.string().describe("When it started."),
  last_heartbeat_at: z.string().describe("Its last sign of life."),
  ended_at: z.string().nullable().describe("When it ended (for abandoned: its last heartbeat), or null while running."),
});
export type Run = z.infer<typeof runSchema>;
export type RunRow = Omit<Run, "dirty" | "counts"> & { dirty: number | null; counts: string; seq: number };

/** A run row's fields, keyed by SQL column name so rows keep the shape the tools return. */
const runFields = {
  seq: runs.seq,
  id: runs.id,
  run_key: runs.runKey,
  actor_id: runs.actorId,
  parent_run_id: runs.parentRunId,
  root_run_id: runs.rootRunId,
  kind: runs.kind,
  status: runs.status,
  label: runs.label,
  goal: runs.goal,
  agent_role: runs.agentRole,
  run_series_key: runs.runSeriesKey,
  session_id: runs.sessionId,
  head_sha: runs.headSha,
  branch: runs.branch,
  dirty: runs.dirty,
  repository_id: runs.repositoryId,
  counts: runs.counts,
  started_at: runs.startedAt,
  last_heartbeat_at: runs.lastHeartbeatAt,
  ended_at: runs.endedAt,
};
/** The same columns as SQL text, for the statements that stay hand SQL. */
const RUN_COLUMNS = Object.keys(runFields).join(", ");

/** A running run: written as the literal the reaper's partial index (runs_running_heartbeat_idx) declares. */
const isRunning = sql`${runs.status} = 'running'`;

export function toRun({ seq: _seq, ...r }: RunRow): Run {
  let counts: Record<string, number> = {};
  try {
    const parsed: unknown = JSON.parse(r.counts);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) counts = parsed as Record<string, number>;
  } catch {
    /* damaged counts read as {} */
  }
  return { ...r, dirty: r.dirty === null ? null : r.dirty !== 0, counts };
}

/** A run of the caller's tenant, by run_key or id. Another tenant's run is simply not found. */
export async function findRun(ctx: Ctx, ref: string): Promise<RunRow> {
  const value = ref.trim();
  const byKey = RUN_KEY.test(value.toLowerCase());
  const row = (await dbOf(ctx)
    .select(runFields)
    .from(runs)
    .where(and(eq(runs.tenantId, ctx.tenantId), byKey ? eq(runs.runKey, value.toLowerCase()) : eq(runs.id, value)))
    .get()) as RunRow | undefined;
  if (!row) throw notFound("run", value, "run_query lists your tenant's runs; pass a run_key (run-…) or a run id.");
  return row;
}

/** A run filter value as stored in activity and code refs: a known run's id, else the text as given. */
export async function runFilterValue(ctx: Ctx, ref: string): Promise<string> {
  const value = ref.trim();
  const row = await dbOf(ctx)
    .select({ id: runs.id })
    .from(runs)
    .where(and(eq(runs.tenantId, ctx.tenantId), or(eq(runs.id, value), eq(runs.runKey, value.toLowerCase()))))
    .get();
  return row?.id ?? value;
}

export const noCurrentRun = () =>
  new ToolError("no_current_run", "There is no current run to default to.", {
    hint: "Pass a run_key (run_query lists runs). Inside an MCP session the first write mints the session's run; calls without an Mcp-Session-Id have none.",
  });

/**
 * The run a call means when it names none: the run this write is attributed to, or for a read
 * the session's run if one was minted. Never mints.
 */
export async function currentRunId(ctx: Ctx): Promise<string | null> {
  return ctx.runId ?? (await ctx.currentRun?.()) ?? null;
}

export interface NewRun {
  id: string;
  kind: RunKind;
  parentRunId: string | null;
  rootRunId: string;
  label: string;
  goal: string;
  agentRole: string;
  runSeriesKey: string | null;
  startedAt: string;
  repo?: { repositoryId: string | null; branch: string | null; headSha: string | null; dirty: number | null };
}

/** Inserts a run unless its id or key is taken; the caller checks which happened. */
function insertRunStatement(ctx: Ctx, r: NewRun): D1PreparedStatement {
  return statementOf(
    ctx.d1,
    dbOf(ctx)
      .insert(runs)
      .values({
        id: r.id,
        tenantId: ctx.tenantId,
        runKey: runKeyFor(r.id),
        actorId: ctx.actorId,
        parentRunId: r.parentRunId,
        rootRunId: r.rootRunId,
        kind: r.kind,
        status: "running",
        label: r.label,
        goal: r.goal,
        agentRole: r.agentRole,
        runSeriesKey: r.runSeriesKey,
        sessionId: ctx.sessionId,
        headSha: r.repo?.headSha ?? null,
        branch: r.repo?.branch ?? null,
        dirty: r.repo?.dirty ?? null,
        repositoryId: r.repo?.repositoryId ?? null,
        counts: "{}",
        startedAt: r.startedAt,
        lastHeartbeatAt: r.startedAt,
      })
      .onConflictDoNothing(),
  );
}

/**
 * Inserts a run (with `extra` statements in the same atomic batch when it lands) and returns it,
 * or null when its key collided with another run of the tenant. An id that already exists (a
 * racing request inserted the same session run) counts as landed.
 */
export async function insertRun(ctx: Ctx, r: NewRun, extra: (run: NewRun) => D1PreparedStatement[] = () => []): Promise<RunRow | null> {
  const landed = statementOf(
    ctx.d1,
    dbOf(ctx)
      .select(runFields)
      .from(runs)
      .where(and(eq(runs.tenantId, ctx.tenantId), eq(runs.id, r.id))),
  );
  const results = await ctx.d1.batch<RunRow>([insertRunStatement(ctx, r), ...extra(r), landed]);
  return results[results.length - 1]!.results[0] ?? null;
}

/** How often a session's writes refresh its run's heartbeat; the reaper's window is far longer. */
export const SESSION_HEARTBEAT_MS = 60_000;
const MINT_ATTEMPTS = 3;

/**
 * The session's (ctx.sessionId's) run `run`, its heartbeat refreshed when due; null once it has
 * ended or been abandoned (the session then forgets it, so its next write mints a fresh one).
 */
export async function refreshSessionRun(ctx: Ctx, run: SessionRun): Promise<string | null> {
  const now = ctx.clock.now();
  if (now.getTime() - Date.parse(run.heartbeatAt) < SESSION_HEARTBEAT_MS) return run.id;
  const stub = sessionStub(ctx.env, ctx.sessionId);
  const alive = await dbOf(ctx)
    .update(runs)
    .set({ lastHeartbeatAt: iso(now) })
    .where(and(eq(runs.tenantId, ctx.tenantId), eq(runs.id, run.id), isRunning))
    .returning({ id: runs.id })
    .get();
  if (alive) {
    await stub.markRunHeartbeat({ id: run.id, heartbeatAt: iso(now) });
    return run.id;
  }
  await stub.releaseRun(run.id);
  return null;
}

/**
 * Binds a session's run to one request's Ctx. The session Durable Object holds which run is
 * current (so any isolate sees the same one); the run's row is inserted by the first write that
 * needs it. `ensureRun` is memoized for the request; `currentRun` costs nothing (the session
 * record was read when the request arrived).
 */
export function bindSessionRun(ctx: Ctx, session: SessionRecord, runSeriesKey: string | null): Pick<Ctx, "ensureRun" | "currentRun"> {
  const stub = sessionStub(ctx.env, ctx.sessionId);
  let held: SessionRun | undefined = session.run;
  let pending: Promise<string> | undefined;
  const refresh = (run: SessionRun) => refreshSessionRun(ctx, run);

  const mint = async (): Promise<string> => {
    for (let attempt = 0; attempt < MINT_ATTEMPTS; attempt++) {
      const now = ctx.clock.now();
      const run = await stub.claimRun({ id: uuidv7(now.getTime()), heartbeatAt: iso(now) });
      if (!run) throw new ToolError("session_ended", "This MCP session ended while the call ran.", { hint: "Initialize a new session and retry." });
      const row = await insertRun(ctx, {
        id: run.id,
        kind: "session",
        parentRunId: null,
        rootRunId: run.id,
        label: session.clientName || ctx.actorName,
        goal: "",
        agentRole: "",
        runSeriesKey,
        startedAt: run.heartbeatAt,
      });
      if (row) {
        held = run;
        return run.id;
      }
      await stub.releaseRun(run.id);
    }
    throw new ToolError("conflict", "Could not mint a run key for this session.", { hint: "Retry the call.", retryable: true });
  };

  return {
    ensureRun: () => {
      pending ??= (async () => (held ? await refresh(held) : null) ?? (await mint()))().catch((err: unknown) => {
        pending = undefined;
        throw err;
      });
      return pending;
    },
    currentRun: async () => held?.id ?? null,
  };
}

/** Forgets a session's run in its Durable Object, so that session's next write mints a fresh run. */
export async function releaseSessionRun(env: Env, run: Pick<Run, "id" | "kind" | "session_id">): Promise<boolean> {
  if (run.kind !== "session" || !run.session_id) return false;
  return sessionStub(env, run.session_id).releaseRun(run.id);
}

/** What code refs recorded in a run default from: the repository and HEAD it last reported. */
export interface RunRepoContext {
  runId: string;
  repositoryId: string | null;
  branch: string | null;
  headSha: string | null;
}

export async function runRepoContext(ctx: Ctx, ref: string | undefined): Promise<RunRepoContext | null> {
  const id = ref ?? (await currentRunId(ctx));
  if (!id) return null;
  const run = await findRun(ctx, id);
  return { runId: run.id, repositoryId: run.repository_id, branch: run.branch, headSha: run.head_sha };
}

export const DEFAULT_RUN_ABANDON_AFTER = "2h";
const MIN_ABANDON_MS = 5 * 60_000;

/** RUN_ABANDON_AFTER as milliseconds; a window shorter than a few session heartbeats is refused. */
export function runAbandonAfterMs(env: Env): number {
  const raw = env.RUN_ABANDON_AFTER?.trim() || DEFAULT_RUN_ABANDON_AFTER;
  const ms = parseOffset(raw);
  if (ms === null || ms < MIN_ABANDON_MS) throw new Error(`RUN_ABANDON_AFTER '${raw}' is not a window of at least 5m (e.g. 2h).`);
  return ms;
}

/**
 * Marks running runs silent for longer than `afterMs` as abandoned, oldest first, at most `limit`
 * per call. ended_at is the last heartbeat: the last moment the run is known to have been alive.
 */
export async function reapSilentRuns(d1: D1Database, now: Date, afterMs: number, limit = 500): Promise<number> {
  const cutoff = iso(new Date(now.getTime() - afterMs));
  const db = dbOf({ d1 });
  const oldestSilent = db
    .select({ seq: runs.seq })
    .from(runs)
    .where(and(isRunning, lt(runs.lastHeartbeatAt, cutoff)))
    .orderBy(asc(runs.lastHeartbeatAt))
    .limit(limit);
  const res = await db
    .update(runs)
    .set({ status: "abandoned", endedAt: sql`${runs.lastHeartbeatAt}` })
    .where(inArray(runs.seq, oldestSilent))
    .run();
  return res.meta.changes ?? 0;
}

export const runRefField = (description: string) => z.string().min(1).max(100).describe(`${description} A run_key (run-…) or a run id.`);

export const countsField = boundedJson(
  z
    .record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "count names are snake_case, e.g. tests_passed"), z.number().int().min(0).max(1e12))
    .refine((c) => Object.keys(c).length <= 50, "at most 50 counts"),
  { maxBytes: 4096, maxDepth: 1 },
).describe('Counters to record, e.g. {"tasks_completed": 3}; merged into the run\'s counts (a name given again is overwritten).');

/** The run a call names, or the current run when it names none. */
export async function targetRun(ctx: Ctx, ref: string | undefined): Promise<RunRow> {
  if (ref) return findRun(ctx, ref);
  const current = await currentRunId(ctx);
  if (!current) throw noCurrentRun();
  return findRun(ctx, current);
}

const runEnded = (run: RunRow) =>
  new ToolError("run_ended", `Run ${run.run_key} has ended (${run.status}); ended runs cannot be changed.`, {
    hint: "Heartbeat or end a running run instead. When it was your session's run, your next write starts a fresh one.",
  });

/**
 * Another actor's run is visible to the whole tenant (run_query lists it), so refusing a write to
 * it names the owner instead of pretending it does not exist; other tenants' runs stay not_found.
 */
async function notRunOwner(ctx: Ctx, run: RunRow): Promise<ToolError> {
  const owner = await dbOf(ctx)
    .select({ name: actors.name })
    .from(actors)
    .where(and(eq(actors.tenantId, ctx.tenantId), eq(actors.id, run.actor_id)))
    .get();
  return new ToolError("not_run_owner", `Run ${run.run_key} belongs to ${owner?.name ?? "another actor"} (${run.actor_id}); only that actor or an operator key may heartbeat or end it.`, {
    hint: `Ask ${owner?.name ?? "its owner"} to heartbeat or end it (a comment or handoff reaches them), or use an operator key. For work of your own, run_fork starts a child run under your current run.`,
  });
}

/** Refuses early, before any other work, what the compare-and-swap below would refuse anyway. */
export async function assertRunWritable(ctx: Ctx, run: RunRow): Promise<void> {
  if (run.status !== "running") throw runEnded(run);
  if (run.actor_id !== ctx.actorId && !ctx.operator) throw await notRunOwner(ctx, run);
}

/**
 * Changes a running run in one compare-and-swap (it must still be running, and be the caller's
 * own unless the key is an operator's), with `after` statements in the same batch, and returns
 * it as it is now.
 */
export async function updateRunningRun(ctx: Ctx, run: RunRow, sets: Record<string, unknown>, after: D1PreparedStatement[] = []): Promise<RunRow> {
  await assertRunWritable(ctx, run);
  // Reported counts merge into the stored ones rather than replace them.
  const set: SQLiteUpdateSetSource<typeof runs> = { ...fromColumnNames(runs, sets), ...("counts" in sets ? { counts: sql`json_patch(${runs.counts}, ${sets.counts})` } : {}) };
  const [updated] = await ctx.d1.batch<RunRow>([
    statementOf(
      ctx.d1,
      dbOf(ctx)
        .update(runs)
        .set(set)
        .where(and(eq(runs.tenantId, ctx.tenantId), eq(runs.id, run.id), isRunning, or(eq(runs.actorId, ctx.actorId), sql`${ctx.operator ? 1 : 0}`)))
        .returning(runFields),
    ),
    ...after,
  ]);
  const row = updated!.results[0];
  if (!row) {
    const now = await findRun(ctx, run.id);
    throw now.status !== "running" ? runEnded(now) : await notRunOwner(ctx, now);
  }
  return row;
}

/** What an operator's change to another actor's run adds to its activity row. */
export const onBehalfOf = (ctx: Ctx, run: RunRow): Record<string, unknown> => (run.actor_id === ctx.actorId ? {} : { run_owner_actor_id: run.actor_id, operator_override: true });

/**
 * A run's rollup as one batch: its activity counted per rollup name (each name counts the verbs listed for it,
 * plus activity_total), then how many runs were forked directly from it (row `n`).
 */
export function runRollupStatements(ctx: Ctx, runId: string, rollup: Record<string, readonly string[]>): D1PreparedStatement[] {
  const db = dbOf(ctx);
  const counted = Object.fromEntries(Object.entries(rollup).map(([name, verbs]) => [name, sql<number>`COALESCE(SUM(${activity.verb} IN ${jsonValues(verbs)}), 0)`.as(name)]));
  return [
    statementOf(
      ctx.d1,
      db
        .select({ activity_total: count().as("activity_total"), ...counted })
        .from(activity)
        .where(and(eq(activity.tenantId, ctx.tenantId), eq(activity.runId, runId))),
    ),
    statementOf(
      ctx.d1,
      db
        .select({ n: count().as("n") })
        .from(runs)
        .where(and(eq(runs.tenantId, ctx.tenantId), eq(runs.parentRunId, runId))),
    ),
  ];
}

/** run_query's filter: whose runs, which, and where the page resumes. */
export interface RunFilter {
  actorId?: string;
  statuses?: readonly string[];
  kind?: string;
  rootRunId?: string;
  runSeriesKey?: string;
  /** The cursor's position: only runs before this seq. */
  beforeSeq?: string | number | null;
}

/** A page of runs that pass the filter, newest first. */
export async function listRuns(ctx: Ctx, f: RunFilter, limit: number): Promise<RunRow[]> {
  const where = and(
    eq(runs.tenantId, ctx.tenantId),
    f.actorId !== undefined ? eq(runs.actorId, f.actorId) : undefined,
    f.statuses !== undefined ? inArray(runs.status, jsonValues(f.statuses)) : undefined,
    f.kind !== undefined ? eq(runs.kind, f.kind) : undefined,
    f.rootRunId !== undefined ? eq(runs.rootRunId, f.rootRunId) : undefined,
    f.runSeriesKey !== undefined ? eq(runs.runSeriesKey, f.runSeriesKey) : undefined,
    f.beforeSeq !== undefined ? lt(runs.seq, f.beforeSeq as number) : undefined,
  );
  return (await dbOf(ctx).select(runFields).from(runs).where(where).orderBy(desc(runs.seq)).limit(limit).all()) as RunRow[];
}

/**
 * A run's subtree (below it, at most `maxDepth` deep) as one batch: up to `limit` runs by depth then seq, after
 * the (depth, seq) keyset `after` when given, then how many the subtree holds (row `n`).
 */
export function runSubtreeStatements(ctx: Ctx, runId: string, maxDepth: number, after: Array<string | number | null> | null, limit: number): D1PreparedStatement[] {
  // Hand SQL: drizzle cannot say a recursive CTE.
  const tree = `WITH RECURSIVE tree (id, depth) AS (
           SELECT id, 0 FROM runs WHERE tenant_id = ? AND id = ?
           UNION ALL
           SELECT r.id, tree.depth + 1 FROM runs r JOIN tree ON r.tenant_id = ? AND r.parent_run_id = tree.id WHERE tree.depth < ?
         )`;
  const treeParams = [ctx.tenantId, runId, ctx.tenantId, maxDepth];
  return [
    ctx.d1
      .prepare(
        `${tree} SELECT ${RUN_COLUMNS.split(", ")
          .map((c) => `r.${c}`)
          .join(", ")}, tree.depth FROM tree JOIN runs r ON r.id = tree.id
           WHERE tree.depth > 0 ${after ? "AND (tree.depth > ? OR (tree.depth = ? AND r.seq > ?))" : ""} ORDER BY tree.depth, r.seq LIMIT ?`,
      )
      .bind(...treeParams, ...(after ? [after[0], after[0], after[1]] : []), limit),
    ctx.d1.prepare(`${tree} SELECT COUNT(*) AS n FROM tree WHERE depth > 0`).bind(...treeParams),
  ];
}
