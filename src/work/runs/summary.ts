import { z } from "zod";
import { defineTool, READ_ONLY } from "../../core/define-tool";
import { runSchema, toRun } from "./model";
import { runRefField, runRollupStatements, targetRun } from "./model";

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
  description:
    "One-call rollup of what a run produced, from the activity attributed to it: tasks created and completed, decisions logged, knowledge written, handoffs created, code refs added, and all activity. The standup view of a run; defaults to your current run.",
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
  annotations: READ_ONLY,
  run: async (ctx, input) => {
    const run = await targetRun(ctx, input.run_id);
    const [counts, children] = await ctx.d1.batch<Record<string, number>>(runRollupStatements(ctx, run.id, ROLLUP));
    const c = counts!.results[0]!;
    return {
      run: toRun(run),
      tasks_created: c.tasks_created!,
      tasks_completed: c.tasks_completed!,
      decisions_logged: c.decisions_logged!,
      knowledge_written: c.knowledge_written!,
      handoffs_created: c.handoffs_created!,
      code_refs_added: c.code_refs_added!,
      activity_total: c.activity_total!,
      child_runs: children!.results[0]!.n!,
    };
  },
  summarize: (r) => `${r.run.run_key}: ${r.activity_total} activity, ${r.tasks_created} task(s) created, ${r.tasks_completed} done, ${r.decisions_logged} decision(s).`,
});
