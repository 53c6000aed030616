import { z } from "zod";
import { iso } from "../../core/time";
import { defineTool } from "../../core/define-tool";
import { activityStatement } from "../shared";
import { END_STATUSES, releaseSessionRun, runSchema, toRun } from "./model";
import { countsField, onBehalfOf, runRefField, targetRun, updateRunningRun } from "./model";

export const runEndTool = defineTool({
  name: "run_end",
  title: "End a run",
  toolset: "runs",
  description:
    "Close a run with a verdict: succeeded, failed or cancelled, optionally with final counters. Defaults to your current run; ending your session's run means your next write starts a fresh run. An ended run is refused with run_ended, another actor's run with not_run_owner (only its owner or an operator key may end it).",
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
