/**
 * Runs (seed 001): every burst of work is a node in a tree of runs. A session's run is minted
 * by its first write (run-model.ts); these tools fork children, keep long runs alive, close them
 * with a verdict, and read what a run or a whole tree did.
 */
import { z } from "zod";
import { boundedJson } from "../../core/bounds";
import { uuidv7 } from "../../db/ids";
import { iso } from "../../db/time";
import type { Ctx } from "../../core/context";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { activityStatement, actorRefField, cursorField, decodeKeyset, EMBEDDED_LIST_MAX, embeddedList, keysetPage, limitField, listsSchema, resolveActor } from "../shared";
import { findRepository } from "../repos/model";
import {
  currentRunId, END_STATUSES, findRun, insertRun, noCurrentRun, releaseSessionRun, RUN_COLUMNS, RUN_KINDS, RUN_SERIES_KEY, RUN_STATUSES,
  runSchema, toRun, type RunRow,
} from "./model";

const runRefField = (description: string) =>
  z.string().min(1).max(100).describe(`${description} A run_key (run-…) or a run id.`);

const countsField = boundedJson(
  z
    .record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, "count names are snake_case, e.g. tests_passed"), z.number().int().min(0).max(1e12))
    .refine((c) => Object.keys(c).length <= 50, "at most 50 counts"),
  { maxBytes: 4096, maxDepth: 1 },
).describe("Counters to record, e.g. {\"tasks_completed\": 3}; merged into the run's counts (a name given again is overwritten).");

/** The run a call names, or the current run when it names none. */
async function targetRun(ctx: Ctx, ref: string | undefined): Promise<RunRow> {
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
  const owner = await ctx.d1.prepare(`SELECT name FROM actors WHERE tenant_id = ? AND id = ?`).bind(ctx.tenantId, run.actor_id).first<{ name: string }>();
  return new ToolError("not_run_owner", `Run ${run.run_key} belongs to ${owner?.name ?? "another actor"} (${run.actor_id}); only that actor or an operator key may heartbeat or end it.`, {
    hint: `Ask ${owner?.name ?? "its owner"} to heartbeat or end it (a comment or handoff reaches them), or use an operator key. For work of your own, run_fork starts a child run under your current run.`,
  });
}

/** Refuses early, before any other work, what the compare-and-swap below would refuse anyway. */
async function assertRunWritable(ctx: Ctx, run: RunRow): Promise<void> {
  if (run.status !== "running") throw runEnded(run);
  if (run.actor_id !== ctx.actorId && !ctx.operator) throw await notRunOwner(ctx, run);
}

/**
 * Changes a running run in one compare-and-swap (it must still be running, and be the caller's
 * own unless the key is an operator's), with `after` statements in the same batch, and returns
 * it as it is now.
 */
async function updateRunningRun(ctx: Ctx, run: RunRow, sets: Record<string, unknown>, after: D1PreparedStatement[] = []): Promise<RunRow> {
  await assertRunWritable(ctx, run);
  const columns = Object.keys(sets);
  const [updated] = await ctx.d1.batch<RunRow>([
    ctx.d1
      .prepare(`UPDATE runs SET ${columns.map((c) => (c === "counts" ? "counts = json_patch(counts, ?)" : `${c} = ?`)).join(", ")}
                WHERE tenant_id = ? AND id = ? AND status = 'running' AND (actor_id = ? OR ?) RETURNING ${RUN_COLUMNS}`)
      .bind(...columns.map((c) => sets[c]), ctx.tenantId, run.id, ctx.actorId, ctx.operator ? 1 : 0),
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
const onBehalfOf = (ctx: Ctx, run: RunRow): Record<string, unknown> =>
  run.actor_id === ctx.actorId ? {} : { run_owner_actor_id: run.actor_id, operator_override: true };

export const runForkTool = defineTool({
  name: "run_fork",
  title: "Fork a child run",
  toolset: "runs",
  description: "Register a child run (kind subagent) under your current run, recorded in the run tree; it starts from the parent's repository, branch and HEAD. The child is yours: hand its run_key to a subagent working under your key so it can heartbeat and end it (another actor's key is refused with not_run_owner unless it is an operator key). Over MCP your own later calls still attribute to your current run, not the child.",
  input: z.object({
    label: z.string().trim().min(1).max(200).describe("Short label, e.g. \"migrate billing tests\"."),
    goal: z.string().max(2000).optional().describe("What the child run is for."),
    agent_role: z.string().max(100).optional().describe("The role the subagent plays, e.g. reviewer or test-writer."),
  }),
  output: z.object({ run: runSchema.describe("The child run."), parent_run_key: z.string().describe("The run it was forked from (your current run).") }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    if (!ctx.runId) throw noCurrentRun();
    const parent = await findRun(ctx, ctx.runId);
    const startedAt = iso(ctx.clock.now());
    // A key collision (1 in 2^40) just means another id.
    for (let attempt = 0; attempt < 3; attempt++) {
      const child = await insertRun(ctx, {
        id: uuidv7(ctx.clock.now().getTime()), kind: "subagent", parentRunId: parent.id, rootRunId: parent.root_run_id, label: input.label,
        goal: input.goal ?? "", agentRole: input.agent_role ?? "", runSeriesKey: null, startedAt,
        repo: { repositoryId: parent.repository_id, branch: parent.branch, headSha: parent.head_sha, dirty: parent.dirty },
      }, (r) => [activityStatement(ctx, { verb: "run.forked", objectType: "run", objectId: r.id, summary: `forked: ${input.label}`, metadata: { parent_run_id: parent.id }, ifPreviousChanged: true })]);
      if (child) return { run: toRun(child), parent_run_key: parent.run_key };
    }
    throw new ToolError("conflict", "Could not mint a run key for the child run.", { hint: "Retry the call.", retryable: true });
  },
  summarize: (r) => `Forked ${r.run.run_key} under ${r.parent_run_key}.`,
});

export const runHeartbeatTool = defineTool({
  name: "run_heartbeat",
  title: "Heartbeat a run",
  toolset: "runs",
  description: "Keep a long-running run alive (the run reaper marks runs with no heartbeat for a while as abandoned) and track where it stands: HEAD, branch, dirty flag, repository, counters. Later code refs default their repository, branch and sha from this. Defaults to your current run; an ended run is refused with run_ended, another actor's run with not_run_owner (only its owner or an operator key may heartbeat it).",
  input: z.object({
    run_key: runRefField("The run; defaults to your current run.").optional(),
    head_sha: z.string().max(64).regex(/^[0-9a-fA-F]{7,64}$/, "head_sha must be 7–64 hex characters").optional().describe("The commit HEAD points at now."),
    branch: z.string().min(1).max(250).optional().describe("The branch checked out now."),
    dirty: z.boolean().optional().describe("Whether the working tree has uncommitted changes."),
    repository_id: z.string().min(1).max(200).optional().describe("The repository the run works in (id or owner/name, registered with repo_register)."),
    counts: countsField.optional(),
  }),
  output: z.object({ run: runSchema.describe("The run after the heartbeat.") }),
  // No derived key: a heartbeat is idempotent by nature, and an identical one a minute later must
  // still move last_heartbeat_at.
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const run = await targetRun(ctx, input.run_key);
    await assertRunWritable(ctx, run);
    const sets: Record<string, unknown> = { last_heartbeat_at: iso(ctx.clock.now()) };
    if (input.head_sha !== undefined) sets.head_sha = input.head_sha.toLowerCase();
    if (input.branch !== undefined) sets.branch = input.branch;
    if (input.dirty !== undefined) sets.dirty = input.dirty ? 1 : 0;
    if (input.repository_id !== undefined) sets.repository_id = (await findRepository(ctx, input.repository_id)).id;
    if (input.counts !== undefined) sets.counts = JSON.stringify(input.counts);
    return { run: toRun(await updateRunningRun(ctx, run, sets)) };
  },
  summarize: (r) => `${r.run.run_key} alive at ${r.run.last_heartbeat_at}.`,
});

export const runEndTool = defineTool({
  name: "run_end",
  title: "End a run",
  toolset: "runs",
  description: "Close a run with a verdict: succeeded, failed or cancelled, optionally with final counters. Defaults to your current run; ending your session's run means your next write starts a fresh run. An ended run is refused with run_ended, another actor's run with not_run_owner (only its owner or an operator key may end it).",
  input: z.object({
    run_key: runRefField("The run; defaults to your current run.").optional(),
    status: z.enum(END_STATUSES).describe("succeeded, failed or cancelled."),
    counts: countsField.optional(),
  }),
  output: z.object({
    run: runSchema.describe("The ended run."),
    session_run_released: z.boolean().describe("True when it was its session's current run: that session's next write mints a fresh run."),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    const run = await targetRun(ctx, input.run_key);
    const now = iso(ctx.clock.now());
    const ended = await updateRunningRun(ctx, run, { status: input.status, ended_at: now, last_heartbeat_at: now, ...(input.counts ? { counts: JSON.stringify(input.counts) } : {}) }, [
      activityStatement(ctx, { verb: `run.${input.status}`, objectType: "run", objectId: run.id, summary: `${run.run_key} ${input.status}`, metadata: onBehalfOf(ctx, run), ifPreviousChanged: true }),
    ]);
    return { run: toRun(ended), session_run_released: await releaseSessionRun(ctx.env, ended) };
  },
  summarize: (r) => `${r.run.run_key} ${r.run.status}.`,
});

export const runQueryTool = defineTool({
  name: "run_query",
  title: "Find runs",
  toolset: "runs",
  description: "List runs, newest first: yours (actor_id \"me\"), by status, kind, run tree (root_run_id) or recurring series (run_series_key) — how you see what a workflow or a cron series did.",
  input: z.object({
    actor_id: actorRefField("Only this actor's runs.").optional(),
    status: z.array(z.enum(RUN_STATUSES)).min(1).max(RUN_STATUSES.length).optional().describe("Only runs in these statuses (running, succeeded, failed, cancelled, abandoned)."),
    kind: z.enum(RUN_KINDS).optional().describe("session or subagent."),
    root_run_id: runRefField("Only runs of this run's tree: its root and every run below the root.").optional(),
    run_series_key: z.string().max(100).regex(RUN_SERIES_KEY, "a series key is letters, digits and . _ : / -").optional().describe("Only runs of this recurring series."),
    limit: limitField(50, 200),
    cursor: cursorField,
  }),
  output: z.object({ items: z.array(runSchema).describe("Runs, newest first."), next_cursor: z.string().optional().describe("Pass as cursor for the next page.") }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const where = ["tenant_id = ?"];
    const params: unknown[] = [ctx.tenantId];
    if (input.actor_id) { where.push("actor_id = ?"); params.push(await resolveActor(ctx, input.actor_id)); }
    if (input.status) { where.push("status IN (SELECT value FROM json_each(?))"); params.push(JSON.stringify(input.status)); }
    if (input.kind) { where.push("kind = ?"); params.push(input.kind); }
    if (input.root_run_id) { where.push("root_run_id = ?"); params.push((await findRun(ctx, input.root_run_id)).root_run_id); }
    if (input.run_series_key) { where.push("run_series_key = ?"); params.push(input.run_series_key); }
    const after = decodeKeyset(input.cursor, 1);
    if (after) { where.push("seq < ?"); params.push(after[0]); }
    const rows = await ctx.d1
      .prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ?`)
      .bind(...params, input.limit + 1)
      .all<RunRow>();
    const { page, cursor } = keysetPage(rows.results, input.limit, (last) => [last.seq]);
    return { items: page.map(toRun), ...cursor };
  },
  summarize: (r) => `${r.items.length} run(s).`,
});

const SUBTREE_DEPTH_MAX = 50;

export const runGetTool = defineTool({
  name: "run_get",
  title: "Read a run",
  toolset: "runs",
  description: `Read one run by run_key or run_id (exactly one). include_children: true adds the subtree under it (children, their children, …), parents before their children, ${EMBEDDED_LIST_MAX} runs at a time: lists.children says how many there are and gives the cursor for the next ${EMBEDDED_LIST_MAX}.`,
  input: z.object({
    run_key: z.string().min(1).max(100).optional().describe("The run's key (run-…)."),
    run_id: z.string().min(1).max(100).optional().describe("The run's id."),
    include_children: z.boolean().default(false).describe("Also return the runs below it in the tree."),
    cursor: cursorField.describe("With include_children: lists.children.next_cursor from the previous call, for the next runs of the subtree."),
  }),
  output: z.object({
    run: runSchema.describe("The run."),
    children: z.array(runSchema.extend({ depth: z.number().int().describe("1 for a direct child, 2 for a grandchild, …") }))
      .optional().describe(`With include_children: runs below the run, parents before their children (up to ${EMBEDDED_LIST_MAX}).`),
    children_truncated: z.boolean().optional().describe("With include_children: true when the subtree has more runs after these (lists.children pages them)."),
    lists: listsSchema({ children: "The subtree below the run (run_get with the cursor continues it)." }).optional().describe("With include_children: how many runs the subtree holds and how to page the rest."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    if ((input.run_key === undefined) === (input.run_id === undefined)) throw invalidInput("Pass exactly one of run_key and run_id.", "Name the run by its key (run-…) or by its id.");
    if (input.cursor !== undefined && !input.include_children) throw invalidInput("cursor pages the subtree: it goes with include_children: true.", "Pass include_children: true with the cursor, or drop the cursor.");
    const run = await findRun(ctx, (input.run_key ?? input.run_id)!);
    if (!input.include_children) return { run: toRun(run) };
    const after = decodeKeyset(input.cursor, 2);
    const tree = `WITH RECURSIVE tree (id, depth) AS (
           SELECT id, 0 FROM runs WHERE tenant_id = ? AND id = ?
           UNION ALL
           SELECT r.id, tree.depth + 1 FROM runs r JOIN tree ON r.tenant_id = ? AND r.parent_run_id = tree.id WHERE tree.depth < ?
         )`;
    const treeParams = [ctx.tenantId, run.id, ctx.tenantId, SUBTREE_DEPTH_MAX];
    const [rows, total] = await ctx.d1.batch<RunRow & { depth: number; n: number }>([
      ctx.d1
        .prepare(
          `${tree} SELECT ${RUN_COLUMNS.split(", ").map((c) => `r.${c}`).join(", ")}, tree.depth FROM tree JOIN runs r ON r.id = tree.id
           WHERE tree.depth > 0 ${after ? "AND (tree.depth > ? OR (tree.depth = ? AND r.seq > ?))" : ""} ORDER BY tree.depth, r.seq LIMIT ?`,
        )
        .bind(...treeParams, ...(after ? [after[0], after[0], after[1]] : []), EMBEDDED_LIST_MAX + 1),
      ctx.d1.prepare(`${tree} SELECT COUNT(*) AS n FROM tree WHERE depth > 0`).bind(...treeParams),
    ]);
    const page = embeddedList(rows!.results, total!.results[0]?.n ?? 0, {
      tool: "run_get", arguments: { run_id: run.id, include_children: true }, cursorOf: (last) => [last.depth, last.seq],
    });
    const children = page.items.map(({ depth, n: _n, ...r }) => ({ ...toRun(r), depth }));
    return { run: toRun(run), children, children_truncated: page.info.more !== undefined, lists: { children: page.info } };
  },
  summarize: (r) => `${r.run.run_key} (${r.run.status})${r.children ? `, ${r.children.length} run(s) below` : ""}.`,
});

/** The verbs each rollup counts, as the rooms that write them emit them. */
const ROLLUP: Record<string, readonly string[]> = {
  tasks_created: ["task.created"],
  tasks_completed: ["task.done"],
  decisions_logged: ["decision.logged", "decision.superseded"],
  knowledge_written: ["knowledge.written"],
  handoffs_created: ["handoff.created"],
  code_refs_added: ["code_ref.added"],
};
const rollupField = (what: string) => z.number().int().describe(`${what} attributed to the run.`);

export const runSummaryTool = defineTool({
  name: "run_summary",
  title: "Summarize a run",
  toolset: "runs",
  description: "One-call rollup of what a run produced, from the activity attributed to it: tasks created and completed, decisions logged, knowledge written, handoffs created, code refs added, and all activity. The standup view of a run; defaults to your current run.",
  input: z.object({ run_id: runRefField("The run; defaults to your current run.").optional() }),
  output: z.object({
    run: runSchema.describe("The run."),
    tasks_created: rollupField("Tasks created"),
    tasks_completed: rollupField("Tasks moved to done"),
    decisions_logged: rollupField("Decisions logged (superseding ones included)"),
    knowledge_written: rollupField("Knowledge notes written"),
    handoffs_created: rollupField("Handoffs created (review handoffs included)"),
    code_refs_added: rollupField("Code refs recorded"),
    activity_total: rollupField("Activity rows of every kind"),
    child_runs: z.number().int().describe("Runs forked directly from it."),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  run: async (ctx, input) => {
    const run = await targetRun(ctx, input.run_id);
    const names = Object.keys(ROLLUP);
    const [counts, children] = await ctx.d1.batch<Record<string, number>>([
      ctx.d1
        .prepare(`SELECT COUNT(*) AS activity_total, ${names.map((n) => `COALESCE(SUM(verb IN (SELECT value FROM json_each(?))), 0) AS ${n}`).join(", ")}
                  FROM activity WHERE tenant_id = ? AND run_id = ?`)
        .bind(...names.map((n) => JSON.stringify(ROLLUP[n])), ctx.tenantId, run.id),
      ctx.d1.prepare(`SELECT COUNT(*) AS n FROM runs WHERE tenant_id = ? AND parent_run_id = ?`).bind(ctx.tenantId, run.id),
    ]);
    const c = counts!.results[0]!;
    return {
      run: toRun(run),
      tasks_created: c.tasks_created!, tasks_completed: c.tasks_completed!, decisions_logged: c.decisions_logged!, knowledge_written: c.knowledge_written!,
      handoffs_created: c.handoffs_created!, code_refs_added: c.code_refs_added!, activity_total: c.activity_total!, child_runs: children!.results[0]!.n!,
    };
  },
  summarize: (r) => `${r.run.run_key}: ${r.activity_total} activity, ${r.tasks_created} task(s) created, ${r.tasks_completed} done, ${r.decisions_logged} decision(s).`,
});
