import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { invalidInput } from "../../core/errors";
import { actorRefField, cursorField, decodeKeyset, EMBEDDED_LIST_MAX, embeddedList, keysetPage, limitField, listsSchema, resolveActor } from "../shared";
import { findRun, listRuns, RUN_KINDS, RUN_SERIES_KEY, RUN_STATUSES, type RunFilter, runSchema, runSubtreeStatements, toRun, type RunRow } from "./model";
import { runRefField } from "./model";

export const runQueryTool = defineTool({
  name: "run_query",
  title: "Find runs",
  toolset: "runs",
  description: 'List runs, newest first: yours (actor_id "me"), by status, kind, run tree (root_run_id) or recurring series (run_series_key) — how you see what a workflow or a cron series did.',
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
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const actorId = input.actor_id ? await resolveActor(ctx, input.actor_id) : undefined;
    const rootRunId = input.root_run_id ? (await findRun(ctx, input.root_run_id)).root_run_id : undefined;
    const after = decodeKeyset(input.cursor, 1);
    const filter: RunFilter = {
      actorId,
      statuses: input.status,
      kind: input.kind,
      rootRunId,
      runSeriesKey: input.run_series_key,
      beforeSeq: after ? after[0] : undefined,
    };
    const rows = await listRuns(ctx, filter, input.limit + 1);
    const { page, cursor } = keysetPage(rows, input.limit, (last) => [last.seq]);
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
    children: z
      .array(runSchema.extend({ depth: z.number().int().describe("1 for a direct child, 2 for a grandchild, …") }))
      .optional()
      .describe(`With include_children: runs below the run, parents before their children (up to ${EMBEDDED_LIST_MAX}).`),
    children_truncated: z.boolean().optional().describe("With include_children: true when the subtree has more runs after these (lists.children pages them)."),
    lists: listsSchema({ children: "The subtree below the run (run_get with the cursor continues it)." })
      .optional()
      .describe("With include_children: how many runs the subtree holds and how to page the rest."),
  }),
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    if ((input.run_key === undefined) === (input.run_id === undefined)) throw invalidInput("Pass exactly one of run_key and run_id.", "Name the run by its key (run-…) or by its id.");
    if (input.cursor !== undefined && !input.include_children)
      throw invalidInput("cursor pages the subtree: it goes with include_children: true.", "Pass include_children: true with the cursor, or drop the cursor.");
    const run = await findRun(ctx, (input.run_key ?? input.run_id)!);
    if (!input.include_children) return { run: toRun(run) };
    const after = decodeKeyset(input.cursor, 2);
    const [rows, total] = await ctx.d1.batch<RunRow & { depth: number; n: number }>([...runSubtreeStatements(ctx, run.id, SUBTREE_DEPTH_MAX, after, EMBEDDED_LIST_MAX + 1)]);
    const page = embeddedList(rows!.results, total!.results[0]?.n ?? 0, {
      tool: "run_get",
      arguments: { run_id: run.id, include_children: true },
      cursorOf: (last) => [last.depth, last.seq],
    });
    const children = page.items.map(({ depth, n: _n, ...r }) => ({ ...toRun(r), depth }));
    return { run: toRun(run), children, children_truncated: page.info.more !== undefined, lists: { children: page.info } };
  },
  summarize: (r) => `${r.run.run_key} (${r.run.status})${r.children ? `, ${r.children.length} run(s) below` : ""}.`,
});
